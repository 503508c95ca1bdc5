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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..core import Tokenizer
from ..core.formats.data import TokenizerData
from ..core.presets import PRESETS
from ..core.tokenizer_files import GPT2_FILE_NAMES, gpt2_dir_files, load_data
from .output import TIKTOKEN_SUFFIXES, CliError, tokenizer_files_in

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


def source_files(source: str) -> list[Path]:
    """The files that ``source`` reads (none for a preset), for the output rule (an output
    never replaces one): a folder's tokenizer files, or the file named with the files read
    beside it (a vocabulary's merges, a rank file's ``NAME.json``)."""
    path = Path(source)
    if not path.exists():
        return []
    if path.is_dir():
        named = [path / name for name in tokenizer_files_in(path)]
    else:
        named = [path]
    found: list[Path] = []
    for file in named:
        found.append(file)
        if file.name.endswith("vocab.json"):
            found += [file.with_name(merges) for _, merges in GPT2_FILE_NAMES]
        elif file.name.endswith(TIKTOKEN_SUFFIXES):
            stem = file.name.removesuffix(".gz").removesuffix(".tiktoken")
            found.append(file.with_name(f"{stem}.json"))
    return [f for f in found if f.is_file()]


def load_source(source: str, pattern: str | None = None) -> TokenizerData:
    """The tokenizer data ``source`` names (see :data:`SOURCE_HELP`, and
    ``core.tokenizer_files.load_data``, which reads every kind); ``pattern`` for the formats
    without one of their own. One-line errors name the source, or the file beside it that
    holds what is wrong (a ``.tiktoken`` file's ``NAME.json`` with a bad regex)."""
    with _named(source):
        return load_data(source, pattern)


@contextmanager
def _named(source: str) -> Iterator[None]:
    """A ``ValueError`` about ``source``'s contents that names no file names the one that
    holds the pattern and special tokens: a ``.json`` among its files, else ``source``."""
    try:
        yield
    except ValueError as e:
        message, files = str(e), source_files(source)
        if source in message or any(os.fspath(f) in message for f in files):
            raise
        json_files = [f for f in files if f.suffix == ".json"]
        raise CliError(f"{json_files[0] if json_files else source}: {message}") from None


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
    with _named(source):
        return Tokenizer.from_data(data, specials)
