"""What ``--tokenizer`` (and ``convert``'s SOURCE) names, and which special tokens apply.

What it does: :func:`load_tokenizer` reads every source the core reads (``Tokenizer.load``: a
preset name, a GPT-2 directory, a ``tokenizer.json``, a ``.tiktoken`` file), plus a GPT-2
vocabulary file named directly (``vocab.json`` or GPT-2's ``gpt2_vocab.json``, its merges file
beside it), with an optional ``--pattern`` for formats that carry none. It then applies the
user's special tokens: the source's own, plus any named, each of which must be in the
vocabulary (an id the files cannot decode is never invented), or none at all.
What it leaves out: the commands, and the file formats themselves (core).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..core import Tokenizer
from ..core.formats.data import TokenizerData
from ..core.gpt2_format import infer_special_tokens, load_files
from ..core.presets import PRESETS
from ..core.tokenizer_files import DEFAULT_NAME, GPT2_FILE_NAMES, load_data
from .output import CliError

SOURCE_HELP = (
    f"a preset ({', '.join(PRESETS)}), a directory holding vocab.json + merges.txt (as "
    "'train' writes them) or GPT-2's gpt2_vocab.json + gpt2_merges.txt, such a vocab.json "
    "itself (its merges file beside it), a Hugging Face tokenizer.json, or a .tiktoken rank "
    "file (plain or .gz; or the directory holding tokenizer.tiktoken)"
)
_VOCAB_SUFFIX = "vocab.json"


def _merges_beside(vocab_path: Path) -> Path:
    """The merges file that goes with a GPT-2 vocabulary file: ``X_vocab.json`` ->
    ``X_merges.txt`` (``vocab.json`` -> ``merges.txt``)."""
    return vocab_path.with_name(vocab_path.name[: -len(_VOCAB_SUFFIX)] + "merges.txt")


def _is_gpt2_vocab_file(path: Path) -> bool:
    # subtle: a Hugging Face file is "tokenizer.json"; "vocab.json" is never one, so a file
    # ending in vocab.json is read as GPT-2's vocabulary rather than handed to the HF reader.
    return path.is_file() and path.name.endswith(_VOCAB_SUFFIX)


def _gpt2_vocab_file(path: Path, pattern: str | None) -> TokenizerData:
    merges_path = _merges_beside(path)
    if not merges_path.is_file():
        raise CliError(
            f"{path}: a GPT-2 vocabulary needs its merges file beside it, "
            f"{merges_path.name}, which is not there"
        )
    vocab, merges = load_files(path, merges_path)
    inverse = {tok: idx for idx, tok in sorted(vocab.items(), reverse=True)}
    specials = {s: inverse[s.encode("utf-8")] for s in infer_special_tokens(vocab, merges)}
    return TokenizerData(vocab, merges, specials, pattern or "gpt2")


def vocabulary_file(source: str) -> str:
    """The file that holds ``source``'s vocabulary, for messages: a GPT-2 directory's
    ``vocab.json``, else ``source`` itself."""
    folder = Path(source)
    if folder.is_dir():
        for vocab_name, merges_name in GPT2_FILE_NAMES:
            if (folder / vocab_name).is_file() and (folder / merges_name).is_file():
                return os.fspath(folder / vocab_name)
    return source


def _tiktoken_in(folder: Path) -> Path | None:
    """``tokenizer.tiktoken`` (or ``.gz``) in a folder without GPT-2 files: its
    ``tokenizer.json`` beside it is then the rank file's pattern and special tokens (as
    ``convert --to tiktoken`` and ``train --format tiktoken`` write them), not a Hugging Face
    file."""
    if vocabulary_file(os.fspath(folder)) != os.fspath(folder):
        return None
    for suffix in (".tiktoken", ".tiktoken.gz"):
        rank_file = folder / f"{DEFAULT_NAME}{suffix}"
        if rank_file.is_file():
            return rank_file
    return None


def load_source(source: str, pattern: str | None = None) -> TokenizerData:
    """The tokenizer data ``source`` names (see :data:`SOURCE_HELP`); ``pattern`` for the
    formats without one of their own. One-line errors name the source."""
    path = Path(source)
    if _is_gpt2_vocab_file(path):
        return _gpt2_vocab_file(path, pattern)
    rank_file = _tiktoken_in(path) if path.is_dir() else None
    return load_data(rank_file or source, pattern)


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
    return Tokenizer(data.vocab, data.merges, specials, data.pattern)
