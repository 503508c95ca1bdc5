"""One way in and one way out for tokenizer files of every format this project reads.

What it does: :func:`load_data` tells what a source is (a preset name, a GPT-2 directory or
a GPT-2 ``vocab.json`` named directly, a ``tokenizer.json``, a ``.tiktoken`` rank file or the
directory holding ``tokenizer.tiktoken``) and reads it into a ``TokenizerData``;
:func:`save_data` writes one in a named format. ``Tokenizer.load`` / ``Tokenizer.save`` (and
through them the command line and the app) use these, so every caller accepts the same
sources and gives the same one-line errors. What it leaves out: the formats' details
(``gpt2_format``, ``formats``) and building the tokenizer (``tokenizer``).
"""

from __future__ import annotations

import os
from pathlib import Path

from . import gpt2_format
from .formats import read_hf, read_tiktoken, write_hf, write_tiktoken
from .formats.data import TokenizerData
from .pattern import pattern_name, pretokenizer
from .presets import PRESETS, preset_data

FORMATS: tuple[str, ...] = ("gpt2", "hf", "tiktoken")
DEFAULT_NAME = "tokenizer"
# File names of a GPT-2-format directory: ours (and Hugging Face's), then GPT-2's own.
GPT2_FILE_NAMES = (("vocab.json", "merges.txt"), ("gpt2_vocab.json", "gpt2_merges.txt"))
_TIKTOKEN_SUFFIXES = (".tiktoken", ".tiktoken.gz")


_VOCAB_SUFFIX = "vocab.json"


def _what_is_accepted() -> str:
    return (
        "a GPT-2 directory (vocab.json + merges.txt) or such a vocab.json, a tokenizer.json, "
        f"a .tiktoken file or a preset ({', '.join(PRESETS)})"
    )


def _gpt2_files(vocab_path: Path, merges_path: Path, pattern: str | None) -> TokenizerData:
    # load_files checks the pair agrees, naming the merges file and line if not.
    vocab, merges = gpt2_format.load_files(vocab_path, merges_path)
    inverse = {tok: idx for idx, tok in sorted(vocab.items(), reverse=True)}
    specials = {
        s: inverse[s.encode("utf-8")] for s in gpt2_format.infer_special_tokens(vocab, merges)
    }
    return TokenizerData(vocab, merges, specials, pattern or "gpt2")


def gpt2_dir_files(folder: Path) -> tuple[Path, Path] | None:
    """The GPT-2 vocabulary and merges files in ``folder`` (ours first, then GPT-2's own
    names), or None when it holds neither pair."""
    for vocab_name, merges_name in GPT2_FILE_NAMES:
        vocab_path, merges_path = folder / vocab_name, folder / merges_name
        if vocab_path.is_file() and merges_path.is_file():
            return vocab_path, merges_path
    return None


def _merges_beside(vocab_path: Path) -> Path:
    """The merges file that goes with a GPT-2 vocabulary file: ``X_vocab.json`` ->
    ``X_merges.txt`` (``vocab.json`` -> ``merges.txt``)."""
    return vocab_path.with_name(vocab_path.name[: -len(_VOCAB_SUFFIX)] + "merges.txt")


def _gpt2_vocab_file(path: Path, pattern: str | None) -> TokenizerData:
    merges_path = _merges_beside(path)
    if not merges_path.is_file():
        raise ValueError(
            f"{path}: a GPT-2 vocabulary needs its merges file beside it, "
            f"{merges_path.name}, which is not there"
        )
    return _gpt2_files(path, merges_path, pattern)


def _tiktoken_in(folder: Path) -> Path | None:
    """``tokenizer.tiktoken`` (or ``.gz``) in a folder: its ``tokenizer.json`` beside it is
    then the rank file's pattern and special tokens (as ``save(format="tiktoken")`` writes
    them), not a Hugging Face file."""
    for suffix in _TIKTOKEN_SUFFIXES:
        rank_file = folder / f"{DEFAULT_NAME}{suffix}"
        if rank_file.is_file():
            return rank_file
    return None


def _check_pattern_agrees(data: TokenizerData, pattern: str | None, source: str) -> None:
    """A file that names its own pattern keeps it; a different one asked for is an error."""
    if pattern is not None and pattern_name(pattern) != pattern_name(data.pattern):
        raise ValueError(
            f"{source}: the file gives its own pattern ({pattern_name(data.pattern)[:60]}); "
            f"a different one ({pattern[:60]}) cannot be applied"
        )


def load_data(source: str | os.PathLike[str], pattern: str | None = None) -> TokenizerData:
    """Read the tokenizer ``source`` names: a preset name, a GPT-2 directory (``vocab.json``
    + ``merges.txt``, or ``gpt2_vocab.json`` + ``gpt2_merges.txt``; special tokens are the
    entries no merge makes) or such a vocabulary file named directly (a name ending in
    ``vocab.json``, its merges file beside it), a ``tokenizer.json`` (or a directory holding
    one), or a ``.tiktoken``/``.tiktoken.gz`` file or a directory holding
    ``tokenizer.tiktoken`` (``pattern`` needed unless its ``NAME.json`` is beside it; in
    such a directory, ``tokenizer.json`` is that file, not a Hugging Face one). The kinds are
    tried in this order: GPT-2 files, the rank file, ``tokenizer.json``. ``pattern`` sets
    the pattern of GPT-2 files (default "gpt2") and rank files; for files that carry their
    own it must agree. Raises FileNotFoundError or ValueError with one line naming the
    source."""
    name = os.fspath(source)
    if pattern is not None:
        pretokenizer(pattern)  # a bad regex fails before any file is read
    path = Path(source)
    if not path.exists():
        if isinstance(source, str) and source in PRESETS:
            data = preset_data(source)
            _check_pattern_agrees(data, pattern, name)
            return data
        raise FileNotFoundError(f"tokenizer not found: {name} (expected {_what_is_accepted()})")
    if path.is_dir():
        gpt2 = gpt2_dir_files(path)
        if gpt2 is not None:
            return _gpt2_files(*gpt2, pattern)
        rank_file = _tiktoken_in(path)
        if rank_file is not None:
            path = rank_file
        elif (path / "tokenizer.json").is_file():
            path = path / "tokenizer.json"
        else:
            raise ValueError(
                f"{name}: a directory without vocab.json + merges.txt, gpt2_vocab.json + "
                f"gpt2_merges.txt, {DEFAULT_NAME}.tiktoken or tokenizer.json"
            )
    # subtle: a Hugging Face file is "tokenizer.json"; "vocab.json" is never one, so a file
    # ending in vocab.json is read as GPT-2's vocabulary rather than handed to the HF reader.
    if path.is_file() and path.name.endswith(_VOCAB_SUFFIX):
        return _gpt2_vocab_file(path, pattern)
    lower = path.name.lower()
    if lower.endswith(_TIKTOKEN_SUFFIXES):
        return read_tiktoken(path, pattern)
    if lower.endswith(".json"):
        data = read_hf(path)
        _check_pattern_agrees(data, pattern, name)
        return data
    raise ValueError(
        f"{name}: cannot tell the format from the name (expected {_what_is_accepted()})"
    )


def save_data(
    directory: str | os.PathLike[str],
    data: TokenizerData,
    format: str = "gpt2",
    name: str | None = None,
) -> list[Path]:
    """Write ``data`` into ``directory`` in ``format`` ("gpt2": ``vocab.json`` +
    ``merges.txt``; "hf": ``tokenizer.json``; "tiktoken": ``NAME.tiktoken`` + ``NAME.json``,
    ``name`` defaulting to "tokenizer"), each file atomically; returns the paths written.
    Only the tiktoken format has a ``name``; only gpt2 files lose the pattern and the special
    tokens' marks (they are what the loader infers again, and "gpt2" by default)."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; the formats are {', '.join(FORMATS)}")
    if name is not None and format != "tiktoken":
        raise ValueError(f"format {format!r} has fixed file names; name={name!r} is for tiktoken")
    if format == "gpt2":
        return list(gpt2_format.save_files(directory, data.vocab, data.merges))
    if format == "hf":
        return [write_hf(directory, data)]
    return list(write_tiktoken(directory, name or DEFAULT_NAME, data))
