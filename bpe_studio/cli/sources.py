"""Where ``--tokenizer`` points, and which special tokens apply.

What it does: finds the GPT-2-format pair in a directory (``vocab.json`` + ``merges.txt`` as
``bpe-studio train`` writes them, or GPT-2's own ``gpt2_vocab.json`` + ``gpt2_merges.txt``),
loads it with errors naming the file and line, and builds the :class:`Tokenizer` with the
special tokens the vocabulary holds plus any the user names, each of which must be in the
vocabulary (an id the saved files cannot decode is never invented).
What it leaves out: the commands (``encode``), the file format (``core.gpt2_format``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..core import Tokenizer, infer_special_tokens
from ..core.gpt2_format import load_files
from .output import CliError

# The file names a GPT-2-format directory may use, in the order they are looked for.
GPT2_NAMES = (("vocab.json", "merges.txt"), ("gpt2_vocab.json", "gpt2_merges.txt"))


def gpt2_pair(directory: str) -> tuple[Path, Path]:
    """The vocabulary and merges files in ``directory``; a one-line error if there are none."""
    d = Path(directory)
    if not d.exists():
        raise CliError(f"{directory}: not found (--tokenizer names a directory)")
    if not d.is_dir():
        raise CliError(
            f"{directory}: is a file; --tokenizer names the directory holding "
            "vocab.json and merges.txt"
        )
    for vocab_name, merges_name in GPT2_NAMES:
        if (d / vocab_name).is_file() and (d / merges_name).is_file():
            return d / vocab_name, d / merges_name
    names = " or ".join(f"{v} + {m}" for v, m in GPT2_NAMES)
    raise CliError(f"{directory}: holds neither {names} (as written by 'bpe-studio train')")


def load_tokenizer(
    directory: str, extra_specials: Sequence[str] | None, *, no_specials: bool = False
) -> Tokenizer:
    """The tokenizer in ``directory``. Its special tokens are those its vocabulary holds
    (entries neither a byte nor made by a merge), plus ``extra_specials``, which must be
    vocabulary entries too; ``no_specials`` treats every one as ordinary text."""
    vocab_path, merges_path = gpt2_pair(directory)
    vocab, merges = load_files(vocab_path, merges_path)
    specials: list[str] = [] if no_specials else infer_special_tokens(vocab, merges)
    held = set(vocab.values())
    for token in extra_specials or ():
        if token.encode("utf-8") not in held:
            raise CliError(
                f"special token {token!r} is not in {os.fspath(vocab_path)}: its id would "
                "be one the tokenizer's files cannot decode (train with --special-token to "
                "make room for it)"
            )
        if token not in specials:
            specials.append(token)
    return Tokenizer(vocab, merges, specials)
