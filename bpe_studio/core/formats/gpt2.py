"""GPT-2's tokenizer exchange format: ``vocab.json`` and ``merges.txt``.

What it does: reading both files (tokens in GPT-2's byte-to-unicode alphabet:
``base.byte_chars``) with errors that name the file and line, writing them atomically,
telling which vocabulary entries are special tokens, and what that inference would get wrong
of a tokenizer saved so (:func:`misread`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io.atomic import atomic_write_all, output_folder
from ..pretokenization.specials import looks_special, validate_special_tokens
from ..text.display import cut_repr, quoted
from .base.byte_chars import TokenizerFileError as TokenizerFileError
from .base.byte_chars import bytes_to_unicode as bytes_to_unicode
from .base.byte_chars import decode_token as decode_token
from .base.byte_chars import encode_token as encode_token
from .base.byte_chars import unicode_to_bytes as unicode_to_bytes
from .base.data import check_id_range
from .base.json_errors import not_utf8, parse_json
from .base.json_writing import dumps_in_slices

MERGES_HEADER = "#version: 0.2"
# How much of a file's start tells a vocabulary from a tokenizer.json (its first entry).
_HEAD_BYTES = 1 << 16
# A JSON object's start: its first key (group 1) and its value's first character (group 2).
_FIRST_ENTRY = re.compile(r'\s*\{\s*"((?:[^"\\]|\\.)*)"\s*:\s*(\S)', re.DOTALL)
# What a tokenizer.json holds at its top (tokenizers writes "version" first, "model" last).
_TOKENIZER_JSON_KEYS = frozenset(
    {
        "version",
        "truncation",
        "padding",
        "added_tokens",
        "normalizer",
        "pre_tokenizer",
        "post_processor",
        "decoder",
        "model",
    }
)


def holds_vocabulary(path: str | os.PathLike) -> bool:
    """Whether the ``.json`` file at ``path`` is a vocabulary rather than a whole
    ``tokenizer.json`` (a file named ``my_vocab.json`` may hold either): told by its first
    entry, read from its start alone, so that a huge file is parsed once, by its reader. A
    vocabulary's first value is an id; a tokenizer.json's first key is one of its own
    (:data:`_TOKENIZER_JSON_KEYS`: "version", or "model" written by hand) and its value no
    number. A start that tells neither (no JSON object, a file that cannot be read) is a
    vocabulary, whose reader names what is wrong."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return True
    # A character cut at the end of the head is dropped; a BOM is no part of the JSON.
    match = _FIRST_ENTRY.match(head.decode("utf-8", errors="ignore").lstrip("\ufeff"))
    if match is None or match.group(2) in "-0123456789":
        return True
    return match.group(1) not in _TOKENIZER_JSON_KEYS


def load_vocab(path: str | os.PathLike) -> dict[int, bytes]:
    """Read ``vocab.json`` (token string -> id) into id -> token bytes: each of the 256
    bytes has a token, each token one id (a token given twice is refused, naming it)."""
    name = os.fspath(path)
    try:
        # A byte order mark (Windows editors write one) is no part of the JSON, as
        # holds_vocabulary reads it.
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise TokenizerFileError(not_utf8(name, e)) from None
    repeated: list[tuple[str, Any, Any]] = []
    try:
        raw = parse_json(text, name, object_pairs_hook=lambda pairs: _first_repeat(pairs, repeated))
    except ValueError as e:
        # The same words as a tokenizer.json's: a file cut short says so.
        raise TokenizerFileError(str(e)) from None
    if not isinstance(raw, dict):
        raise TokenizerFileError(
            f"{name}: expected a JSON object mapping token strings to ids, got {type(raw).__name__}"
        )
    if repeated:
        # subtle: json.loads keeps the last of a repeated key, silently: the first id is lost.
        token, first, last = repeated[0]
        raise TokenizerFileError(
            f"{name}: entry {quoted(token)} is given twice, with ids {first!r} and {last!r}: a "
            "vocabulary holds each token once (which id is meant?)"
        )
    vocab: dict[int, bytes] = {}
    for token, idx in raw.items():
        where = f"{name}: entry {quoted(token)}"
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise TokenizerFileError(f"{where}: id must be a non-negative integer, got {idx!r:.60}")
        if idx in vocab:
            raise TokenizerFileError(f"{where}: id {idx} is used twice")
        vocab[idx] = decode_token(token, where)
    held = set(vocab.values())
    missing = [b for b in range(256) if bytes([b]) not in held]
    if missing:
        others = len(missing) - 1
        more = f" nor for {others} other byte{'s' * (others > 1)}" if others else ""
        raise TokenizerFileError(
            f"{name}: no token for byte 0x{missing[0]:02x} (written "
            f"{encode_token(bytes([missing[0]]))!r}){more}: a byte-level vocabulary needs all 256"
        )
    check_id_range(vocab, name)
    return vocab


def _first_repeat(pairs: list[tuple[str, Any]], repeated: list[tuple[str, Any, Any]]) -> dict:
    """``pairs`` (one JSON object's) as a dict, the first key they repeat with another value
    entered in ``repeated`` with its first value and that other (json.loads'
    object_pairs_hook). A key repeated with its value changes nothing."""
    obj = dict(pairs)
    if len(obj) < len(pairs) and not repeated:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if seen.setdefault(key, value) != value:
                repeated.append((key, seen[key], value))
                break
    return obj


def _read_merges(path: str | os.PathLike) -> list[tuple[int, bytes, bytes]]:
    """``merges.txt`` as ``(line number, left, right)`` rows."""
    name = os.fspath(path)
    rows: list[tuple[int, bytes, bytes]] = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            where = f"{name}: line {lineno}"
            try:
                # utf-8-sig on line 1: a byte order mark is no part of the first merge
                # nor of the "#version" header.
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise TokenizerFileError(f"{where}: not UTF-8 ({e.reason})") from None
            if not line or (lineno == 1 and line.startswith("#version")):
                continue
            parts = line.split(" ")
            if len(parts) != 2 or not parts[0] or not parts[1]:
                raise TokenizerFileError(
                    f"{where}: expected two tokens separated by one space, got {quoted(line)}"
                )
            rows.append((lineno, decode_token(parts[0], where), decode_token(parts[1], where)))
    return rows


def load_merges(path: str | os.PathLike) -> list[tuple[bytes, bytes]]:
    """Read ``merges.txt``: an optional ``#version`` header, then ``left right`` per line."""
    return [(a, b) for _, a, b in _read_merges(path)]


def load_files(
    vocab_path: str | os.PathLike, merges_path: str | os.PathLike
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Read a ``vocab.json`` and ``merges.txt`` pair and check that they agree: each merge's
    two tokens and the token it makes must be in the vocabulary; the error names the merges
    file, the line and the token (as the files write it)."""
    vocab = load_vocab(vocab_path)
    rows = _read_merges(merges_path)
    held = set(vocab.values())
    first: dict[tuple[bytes, bytes], int] = {}
    for lineno, a, b in rows:
        # subtle: which copy of a repeated merge ranks is not agreed on (tokenizers' BPE keeps
        # the last, this project's encoder the first), so a file holding one is refused.
        if first.setdefault((a, b), lineno) != lineno:
            raise TokenizerFileError(
                f"{os.fspath(merges_path)}: line {lineno}: merge {encode_token(a)!r} + "
                f"{encode_token(b)!r} repeats line {first[(a, b)]}"
            )
        for token in (a, b, a + b):
            if token not in held:
                made = " (the token this merge makes)" if token == a + b else ""
                raise TokenizerFileError(
                    f"{os.fspath(merges_path)}: line {lineno}: merge "
                    f"{encode_token(a)!r} + {encode_token(b)!r}: token {encode_token(token)!r}"
                    f"{made} is not in {os.fspath(vocab_path)}"
                )
    return vocab, [(a, b) for _, a, b in rows]


def _why_twice(
    token: bytes, merges: Sequence[tuple[bytes, bytes]], elsewhere: str, apart: bool
) -> str:
    """Why a vocabulary holds ``token`` twice, and what to do about it (``elsewhere``: where
    else to save it, as advice ends; ``apart``: one of the two ids is a special or added
    token's)."""
    making = [i for i, (a, b) in enumerate(merges) if a + b == token]
    if len(making) > 1:
        return (
            f"the merges ranked {making[0]:,} and {making[1]:,} both make it: a merge list "
            "holds each token's merge once, and no format can save this one"
        )
    if not apart:
        # subtle: two ordinary entries, which tokenizer.json and tiktoken files refuse too
        # ("save as 'hf', which holds it" sent the user to a format that refused it).
        return "two ordinary entries of one token: no format can save this one"
    return f"a special or added token sharing an ordinary token's bytes: {elsewhere}"


def save_files(
    directory: str | os.PathLike,
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[bytes, bytes]],
    elsewhere: Callable[[], str] = lambda: "save as 'hf', which holds it",
    apart: Collection[int] = (),
) -> tuple[Path, Path]:
    """Write ``directory/vocab.json`` and ``directory/merges.txt`` (both written to temporary
    files, then renamed into place: both or, when one cannot be written, neither). Returns
    both paths. ``elsewhere`` says where else a tokenizer they cannot hold may be saved;
    ``apart``: the ids of its special and added tokens."""
    obj: dict[str, int] = {}
    for idx, tok in sorted(vocab.items()):
        text = encode_token(tok)
        if obj.setdefault(text, idx) != idx:
            # Checked before the folder is made: a refusal leaves nothing behind.
            raise ValueError(
                f"{os.fspath(Path(directory) / 'vocab.json')}: ids {obj[text]} and {idx} hold "
                f"the same bytes {tok!r}, which vocab.json (one id per token) cannot hold "
                f"({_why_twice(tok, merges, elsewhere(), not {obj[text], idx}.isdisjoint(apart))})"
            )
    vocab_text = dumps_in_slices(obj, indent=0) + "\n"  # json.dumps' text, in slices
    lines = [MERGES_HEADER] + [f"{encode_token(a)} {encode_token(b)}" for a, b in merges]
    merges_text = "\n".join(lines) + "\n"
    with output_folder(directory) as out:
        vocab_path, merges_path = out / "vocab.json", out / "merges.txt"
        atomic_write_all(
            [(vocab_path, vocab_text.encode("utf-8")), (merges_path, merges_text.encode("utf-8"))]
        )
    return vocab_path, merges_path


def _unmade(
    vocab: Mapping[int, bytes], merges: Iterable[tuple[bytes, bytes]]
) -> Iterator[tuple[int, bytes, str | None]]:
    """The entries GPT-2 files leave the loader to account for, in id order: those neither a
    single byte nor made by a merge, each with its text when it looks like a special token
    (``<...>`` or ``[...]``, ``specials.looks_special``), else None."""
    made = {a + b for a, b in merges}
    for idx, tok in sorted(vocab.items()):
        if len(tok) < 2 or tok in made:
            continue
        try:
            text = tok.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        yield idx, tok, text if looks_special(text) else None


def infer_special_tokens(
    vocab: Mapping[int, bytes],
    merges: Iterable[tuple[bytes, bytes]],
    also: Iterable[str] = (),
    files: tuple[str | os.PathLike, str | os.PathLike] = ("vocab.json", "merges.txt"),
) -> list[str]:
    """The special tokens of a GPT-2-format vocabulary: the entries that are neither a
    single byte nor made by a merge, in id order (GPT-2's files give ``["<|endoftext|>"]``),
    ``also`` (the special tokens the caller names) left out.

    Such an entry is taken for a special token only when it looks like one (``<...>`` or
    ``[...]``, ``specials.looks_special``) or is in ``also``. Any other means the merges do
    not explain the vocabulary (a merges file cut short, or one of another vocabulary):
    TokenizerFileError naming both ``files`` (vocabulary, merges), how many entries and the
    first few.
    """
    named = {s.encode("utf-8") for s in validate_special_tokens(also, ordered=False)}
    found: list[str] = []
    strangers: list[tuple[int, bytes]] = []
    for idx, tok, text in _unmade(vocab, merges):
        if tok in named:
            continue
        if text is not None:
            found.append(text)
        else:
            strangers.append((idx, tok))
    if strangers:
        vocab_name, merges_name = os.fspath(files[0]), os.fspath(files[1])
        shown = ", ".join(
            f"{cut_repr(tok, spell=encode_token)} (id {idx})" for idx, tok in strangers[:3]
        )
        raise TokenizerFileError(
            f"{vocab_name}: {len(strangers):,} token(s) are made by no merge in {merges_name} "
            "and do not look like special tokens (<...> or [...] with no whitespace nor bracket "
            "of the kind inside), "
            f"e.g. {shown}: the merges file is cut short or belongs to another vocabulary "
            "(special tokens of another form must be named: special_tokens=[...], or "
            "--special-token)"
        )
    return found


@dataclass(frozen=True)
class Misread:
    """What loading GPT-2 files of a tokenizer gets wrong when nothing is named, the special
    tokens being inferred (:func:`infer_special_tokens`); :func:`misread` finds it.

    - ``missed``: its special tokens the loader does not take for special ones (not written
      like ``<...>``, or made by a merge too); named on loading, they are.
    - ``taken``: entries the loader takes for special tokens that are not special here, with
      their ids (a tokenizer built without them, as CS336's ``Tokenizer(vocab, merges)``);
      naming cannot undo that.
    - ``unreadable``: ordinary entries no merge makes that do not look special, as
      ``(id, bytes)``: loading fails, and naming one makes it special.
    """

    missed: list[str]
    taken: dict[str, int]
    unreadable: list[tuple[int, bytes]]


def misread(
    vocab: Mapping[int, bytes],
    merges: Iterable[tuple[bytes, bytes]],
    special_tokens: Mapping[str, int],
    ordinary: Iterable[int] = (),
) -> Misread:
    """What the loader would infer of GPT-2 files holding ``vocab`` and ``merges``, compared
    with ``special_tokens`` (names and ids). ``ordinary``: ids the caller accounts for
    otherwise (a ``tokenizer.json``'s added tokens that are not special)."""
    skip = set(ordinary)
    specials = set(special_tokens.values())
    inferred: dict[str, int] = {}
    unreadable: list[tuple[int, bytes]] = []
    for idx, tok, text in _unmade(vocab, merges):
        if idx in skip:
            continue
        if text is not None:
            inferred.setdefault(text, idx)  # the loader gives a token its lowest id
        elif idx not in specials:
            unreadable.append((idx, tok))
    missed = [s for s, i in special_tokens.items() if inferred.get(s) != i]
    taken = {s: i for s, i in inferred.items() if special_tokens.get(s) != i}
    return Misread(missed, taken, unreadable)


def special_tokens_of(
    vocab: Mapping[int, bytes],
    merges: Iterable[tuple[bytes, bytes]],
    given: Iterable[str] | Mapping[str, int] | None,
    files: tuple[str | os.PathLike, str | os.PathLike],
) -> Iterable[str] | Mapping[str, int]:
    """The special tokens of GPT-2-format files: ``given`` (a list, or a dict of ids), or when
    None those :func:`infer_special_tokens` finds; either way the vocabulary is checked by it
    (an entry no merge makes, neither given nor looking special, is an error naming ``files``)."""
    named = list(given) if isinstance(given, Mapping) else given
    inferred = infer_special_tokens(vocab, merges, also=named or (), files=files)
    return inferred if given is None else given
