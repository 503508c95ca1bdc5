"""What ``--tokenizer`` (and ``convert``'s SOURCE) names, and which special tokens apply.

What it does: :func:`load_tokenizer` reads every source the core reads (``Tokenizer.load``,
``tokenizer_files.load_data``: a preset name, a GPT-2 directory or ``vocab.json``, a
``tokenizer.json``, a ``.tiktoken`` file or its directory), with an optional ``--pattern``
for formats that carry none. It then applies the user's special tokens: the source's own,
plus any named, each of which must be in the vocabulary (an id the files cannot decode is
never invented), or none at all.
What it leaves out: the commands, and the file formats themselves (core).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..core import Tokenizer
from ..core.formats.data import TokenizerData
from ..core.presets import PRESETS
from ..core.tokenizer_files import gpt2_dir_files, load_data
from .output import CliError

SOURCE_HELP = (
    f"a preset ({', '.join(PRESETS)}), a directory holding vocab.json + merges.txt (as "
    "'train' writes them) or GPT-2's gpt2_vocab.json + gpt2_merges.txt, such a vocab.json "
    "itself (its merges file beside it), a Hugging Face tokenizer.json, or a .tiktoken rank "
    "file (plain or .gz; or the directory holding tokenizer.tiktoken)"
)


def vocabulary_file(source: str) -> str:
    """The file that holds ``source``'s vocabulary, for messages: a GPT-2 directory's
    ``vocab.json``, else ``source`` itself."""
    folder = Path(source)
    files = gpt2_dir_files(folder) if folder.is_dir() else None
    return os.fspath(files[0]) if files else source


def load_source(source: str, pattern: str | None = None) -> TokenizerData:
    """The tokenizer data ``source`` names (see :data:`SOURCE_HELP`, and
    ``core.tokenizer_files.load_data``, which reads every kind); ``pattern`` for the formats
    without one of their own. One-line errors name the source."""
    return load_data(source, pattern)


def load_tokenizer(
    source: str,
    extra_specials: Sequence[str] | None,
    *,
    no_specials: bool = False,
    pattern: str | None = None,
) -> Tokenizer:
    """The tokenizer ``source`` names. Its special tokens are its own (for GPT-2 files, the
    entries neither a byte nor made by a merge), plus ``extra_specials``, which must be
    vocabulary entries too; ``no_specials`` treats every one as ordinary text."""
    data = load_source(source, pattern)
    specials: dict[str, int] = {} if no_specials else dict(data.special_tokens)
    inverse = {tok: idx for idx, tok in sorted(data.vocab.items(), reverse=True)}
    for token in extra_specials or ():
        idx = inverse.get(token.encode("utf-8"))
        if idx is None:
            raise CliError(
                f"special token {token!r} is not in {vocabulary_file(source)}: its id would "
                "be one the tokenizer's files cannot decode (train with --special-token to "
                "make room for it)"
            )
        specials.setdefault(token, idx)
    return Tokenizer.from_data(data, specials)
