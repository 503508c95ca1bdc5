"""tiktoken's rank files (``<base64 token> <rank>`` per line, plain or gzip) and the merges
behind them.

What it does: reads a rank file with errors naming the file and line; derives the merge list a
rank file implies (:func:`derive_merges`); writes a tokenizer as ``NAME.tiktoken`` plus
``NAME.tiktoken.json`` (pattern and special tokens). What it leaves out: encoding, and the presets'
choice of pattern and special tokens (``presets``).

Why derived merges reproduce tiktoken: tiktoken's encoder joins, again and again, the
adjacent pair whose concatenation has the lowest rank. When it forms a token ``t``, every join
inside ``t``'s bytes so far was the lowest-ranked one available there, so the two parts it
joins are exactly what BPE over ``t``'s own bytes ends with when only ranks below ``t``'s may
join. Listing that one pair per token, in rank order, gives a merge list under which
rank-by-merge BPE takes the same steps as tiktoken on every text; a token whose bytes do not
end in two parts that way is one this module refuses.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from itertools import repeat
from pathlib import Path

from ..io.atomic import atomic_write_bytes, output_dir
from ..io.gc_pause import gc_paused
from ..pretokenization.names import R50K_PATTERN, pattern_name, pattern_regex
from ..pretokenization.pretokenizer import pretokenizer
from . import rank_cache
from .data import TokenizerData
from .preset_table import preset_settings

SIDECAR_FORMAT = "bpe-studio tiktoken sidecar"
SIDECAR_VERSION = 1
# NAME.tiktoken's sidecar is NAME.tiktoken.json (see ``sidecar_name``).
SIDECAR_SUFFIX = ".tiktoken.json"
# A sidecar holds a pattern and a few special tokens: far less than this many bytes.
_SIDECAR_MAX = 1 << 20
# A whole well-formed rank file: checked in one C-level pass, so the fast parse below can
# take fields two by two without looking at lines.
_WELL_FORMED = re.compile(rb"(?:[A-Za-z0-9+/]+={0,2}+ (?:0|[1-9][0-9]*+)\n)*+")
# Shipped derived merges: the header names the rank file (sha256 of its uncompressed bytes);
# then one byte per multi-byte token, in rank order: the length of its left part.
_SPLITS_MAGIC = b"bpe-studio tiktoken splits 1"
_SPLITS_GLOB = "*.splits.gz"


def _read_raw(path: str | os.PathLike) -> bytes:
    name = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"{name}: cannot read ({e.strerror or e})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise ValueError(f"{name}: not a readable gzip file ({e})") from None
    return data


def _parse_slowly(data: bytes, name: str) -> tuple[list[bytes], list[int], list[int]]:
    """Line by line, for files the fast check refused: the first bad line raises."""
    tokens: list[bytes] = []
    ranks: list[int] = []
    linenos: list[int] = []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        fields = line.split()
        where = f"{name}: line {lineno}"
        if len(fields) != 2:
            shown = line[:60].decode("utf-8", "replace")
            raise ValueError(f"{where}: expected '<base64 token> <rank>', got {shown!r}")
        try:
            token = base64.b64decode(fields[0], validate=True)
        except binascii.Error as e:
            shown = fields[0][:60].decode("utf-8", "replace")
            raise ValueError(f"{where}: {shown!r} is not base64 ({e})") from None
        if not token:
            raise ValueError(f"{where}: the token is empty")
        if not fields[1].isdigit():
            shown = fields[1][:30].decode("utf-8", "replace")
            raise ValueError(f"{where}: rank {shown!r} is not a non-negative integer")
        tokens.append(token)
        ranks.append(int(fields[1]))
        linenos.append(lineno)
    return tokens, ranks, linenos


def _parse(data: bytes, name: str) -> tuple[list[bytes], list[int], list[int] | None]:
    """Tokens and ranks in file order, and their line numbers (None: entry i is on line i+1)."""
    if data.endswith(b"\n") and _WELL_FORMED.fullmatch(data):
        fields = data.split()
        try:
            # subtle: the C decoder straight away; the check above already allowed only
            # base64 characters and at most two "=" at the end of each token, which is what
            # b64decode(validate=True) checks besides (in a Python wrapper, per token).
            tokens = list(map(binascii.a2b_base64, fields[0::2]))
            if all(tokens):
                return tokens, list(map(int, fields[1::2])), None
        except binascii.Error:
            pass
    return _parse_slowly(data, name)


def _line_of(linenos: list[int] | None, index: int) -> int:
    return index + 1 if linenos is None else linenos[index]


def _check_entries(
    tokens: list[bytes], ranks: list[int], linenos: list[int] | None, name: str
) -> tuple[dict[int, bytes], dict[bytes, int]]:
    """rank -> token and token -> rank, refusing duplicates and missing single bytes."""
    vocab = dict(zip(ranks, tokens))
    inverse = dict(zip(tokens, ranks))
    if len(vocab) != len(ranks) or len(inverse) != len(tokens):
        seen_rank: dict[int, int] = {}
        seen_token: dict[bytes, int] = {}
        for i, (tok, rank) in enumerate(zip(tokens, ranks)):
            line = _line_of(linenos, i)
            if rank in seen_rank:
                raise ValueError(
                    f"{name}: line {line}: rank {rank} is already on line {seen_rank[rank]}"
                )
            if tok in seen_token:
                raise ValueError(
                    f"{name}: line {line}: token {tok!r} is already on line {seen_token[tok]}"
                )
            seen_rank[rank], seen_token[tok] = line, line
    missing = [b for b in range(256) if bytes([b]) not in inverse]
    if missing:
        raise ValueError(
            f"{name}: {len(missing)} of the 256 single bytes have no rank "
            f"(e.g. 0x{missing[0]:02x}); a byte-level rank file needs all of them"
        )
    return vocab, inverse


def read_ranks(path: str | os.PathLike) -> dict[int, bytes]:
    """Read a rank file: rank -> token bytes.

    Raises ValueError naming the file and line for a malformed line, bad base64, a rank that is
    not a non-negative integer, a rank or token given twice, or a missing single byte.
    """
    name = os.fspath(path)
    tokens, ranks, linenos = _parse(_read_raw(path), name)
    return _check_entries(tokens, ranks, linenos, name)[0]


def _split_point(token: bytes, rank: int, ranks: Mapping[bytes, int]) -> int:
    """BPE over ``token``'s bytes joining only pairs ranked below ``rank``, until two parts
    remain: the length of the left one, or 0 if it gets stuck at three or more parts."""
    parts = [token[i : i + 1] for i in range(len(token))]
    get = ranks.get
    while len(parts) > 2:
        best, at = rank, -1
        for i in range(len(parts) - 1):
            r = get(parts[i] + parts[i + 1])
            # subtle: strict "<" keeps the leftmost of equal ranks, as tiktoken does.
            if r is not None and r < best:
                best, at = r, i
        if at < 0:
            return 0
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return len(parts[0])


def derive_merges(
    ranks: Mapping[bytes, int], describe: Callable[[int], str] | None = None
) -> list[tuple[bytes, bytes]]:
    """The merge list a rank table implies: for each multi-byte token in rank order, the two
    parts tiktoken's encoder joins into it (see the module docstring).

    ``describe(rank)`` names a token in the error for one that cannot be built from lower
    ranks (default: ``"rank N"``).

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    >>> derive_merges(ranks)
    [(b'a', b'b'), (b'ab', b'c')]
    """
    merges: list[tuple[bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        k = _split_point(token, rank, ranks)
        if k == 0:
            what = describe(rank) if describe else f"rank {rank}"
            raise ValueError(
                f"{what}: token {token!r} cannot be built from lower-ranked tokens (BPE over its "
                "bytes with lower ranks stops at three or more parts)"
            )
        merges.append((token[:k], token[k:]))
    return merges


# ------------------------------------------------------------------ shipped derived merges
def encode_splits(raw: bytes, merges: list[tuple[bytes, bytes]]) -> bytes:
    """The gzip'd file shipping ``merges`` (derived from the rank file whose bytes are
    ``raw``): written by ``scripts/derive_tiktoken_splits.py``."""
    lengths = [len(a) for a, _ in merges]
    if any(n > 255 for n in lengths):
        raise ValueError("a left part longer than 255 bytes does not fit the splits format")
    sha = hashlib.sha256(raw).hexdigest()
    header = b"%s %s %d\n" % (_SPLITS_MAGIC, sha.encode(), len(lengths))
    return gzip.compress(header + bytes(lengths), mtime=0)


@cache
def _shipped_splits() -> dict[str, str]:
    """sha256 of a rank file -> the shipped splits resource for it (headers read once)."""
    found: dict[str, str] = {}
    folder = resources.files("bpe_studio.resources") / "tokenizers"
    if not folder.is_dir():
        return found  # installed without the tokenizer files: every rank file is derived
    for entry in folder.iterdir():
        if not entry.name.endswith(".splits.gz"):
            continue
        with entry.open("rb") as f, gzip.open(f) as g:
            fields = g.readline().split()
        if b" ".join(fields[:4]) == _SPLITS_MAGIC and len(fields) == 6:
            found[fields[4].decode()] = entry.name
    return found


def _merges_from_shipped(
    sha256: str, tokens: list[bytes], ranks: list[int], inverse: Mapping[bytes, int]
) -> tuple[list[tuple[bytes, bytes]], tuple[list[int], list[int], list[int]]] | None:
    """The shipped merges for this exact rank file (``sha256`` of its bytes; its ``tokens``
    and ``ranks`` in file order, ``inverse`` token -> rank), if there are any, and their ids
    (left, right, made)."""
    resource = _shipped_splits().get(sha256)
    if resource is None:
        return None
    blob = (resources.files("bpe_studio.resources") / "tokenizers" / resource).read_bytes()
    header, _, lengths = gzip.decompress(blob).partition(b"\n")
    if ranks != list(range(len(ranks))):  # the usual order makes sorting unnecessary
        tokens = [tok for _, tok in sorted(zip(ranks, tokens))]
    long_tokens = [tok for tok in tokens if len(tok) > 1]
    if int(header.split()[-1]) != len(long_tokens) or len(lengths) != len(long_tokens):
        raise ValueError(f"{resource}: holds a different number of merges than its rank file")
    # The header's sha256 ties the file to these exact ranks, and a test re-derives every
    # split from the rank file; here only the shape is checked, to keep loading fast.
    lefts = list(map(bytes.__getitem__, long_tokens, map(slice, repeat(None), lengths)))
    rights = list(map(bytes.__getitem__, long_tokens, map(slice, lengths, repeat(None))))
    get = inverse.__getitem__
    ids = (list(map(get, lefts)), list(map(get, rights)), list(map(get, long_tokens)))
    return list(zip(lefts, rights)), ids


# ------------------------------------------------------------------ reading
def _stem(rank_file: Path) -> str:
    """``NAME`` of ``NAME.tiktoken`` or ``NAME.tiktoken.gz``."""
    stem = rank_file.name
    for suffix in (".gz", ".tiktoken"):
        stem = stem.removesuffix(suffix)
    return stem


def sidecar_name(name: str) -> str:
    """The sidecar's file name for the rank file ``NAME.tiktoken``: ``NAME.tiktoken.json``.
    subtle: never plain ``NAME.json``, which for the default name would be
    ``tokenizer.json``, the name of a Hugging Face file."""
    return f"{name}{SIDECAR_SUFFIX}"


def sidecar_beside(rank_file: Path) -> Path | None:
    """The sidecar of ``rank_file`` if there is one: ``NAME.tiktoken.json``, or the
    ``NAME.json`` earlier versions wrote, when that file says it is a sidecar (a Hugging Face
    ``tokenizer.json`` beside ``tokenizer.tiktoken`` is not one)."""
    stem = _stem(rank_file)
    current = rank_file.with_name(sidecar_name(stem))
    if current.is_file():
        return current
    old = rank_file.with_name(f"{stem}.json")
    return old if old.is_file() and _is_sidecar(old) else None


def _is_sidecar(path: Path) -> bool:
    """Whether the JSON file ``path`` declares itself a sidecar (read only when it is small,
    as a sidecar is: a larger file is some other JSON, a tokenizer.json)."""
    try:
        if path.stat().st_size > _SIDECAR_MAX:
            return False
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(obj, dict) and obj.get("format") == SIDECAR_FORMAT


def _read_sidecar(path: Path) -> dict:
    name = os.fspath(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ValueError(f"{name}: cannot read ({e.strerror or e})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{name}: not a UTF-8 JSON file ({e})") from None
    if not isinstance(obj, dict) or obj.get("format") != SIDECAR_FORMAT:
        raise ValueError(f"{name}: not a {SIDECAR_FORMAT!r} file")
    if obj.get("version") != SIDECAR_VERSION:
        raise ValueError(f"{name}: version {obj.get('version')!r}, expected {SIDECAR_VERSION}")
    if not isinstance(obj.get("pat_str"), str) or not isinstance(obj.get("special_tokens"), dict):
        raise ValueError(f"{name}: needs a string 'pat_str' and an object 'special_tokens'")
    try:
        pretokenizer(obj["pat_str"])
    except ValueError as e:
        raise ValueError(f"{name}: pat_str: {e}") from None
    return obj


def _add_specials(
    vocab: dict[int, bytes],
    inverse: Mapping[bytes, int],
    special_tokens: Mapping[str, int],
    where: str,
) -> dict[str, int]:
    """Check the special tokens against the ranks and enter them in ``vocab``."""
    specials: dict[str, int] = {}
    taken: dict[int, str] = {}
    for s, idx in special_tokens.items():
        if not isinstance(s, str) or not s:
            raise ValueError(f"{where}: special token {s!r} must be a non-empty string")
        if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
            raise ValueError(f"{where}: special token {s!r}: id must be a non-negative integer")
        if idx in taken:
            raise ValueError(f"{where}: special tokens {taken[idx]!r} and {s!r} share id {idx}")
        sb = s.encode("utf-8")
        if idx in vocab:
            raise ValueError(
                f"{where}: special token {s!r}: id {idx} is the rank of {vocab[idx]!r}"
            )
        if sb in inverse:
            raise ValueError(
                f"{where}: special token {s!r} is also the token of rank {inverse[sb]}"
            )
        taken[idx] = s
        specials[s] = idx
    for s, idx in specials.items():
        vocab[idx] = s.encode("utf-8")
    return specials


def _derived(
    raw: bytes, sha256: str, name: str
) -> tuple[
    dict[int, bytes],
    dict[bytes, int],
    list[tuple[bytes, bytes]],
    tuple[list[int], list[int], list[int]] | None,
]:
    """rank -> token, token -> rank, the merges and (when known) their ids, of the rank file
    whose bytes are ``raw``: from the user's cache (``rank_cache``) when it holds them, else
    read, checked and derived (and then kept there)."""
    cached = rank_cache.load(sha256)
    if cached is not None:
        tokens, ranks, merges, merge_ids = cached
        order = range(len(tokens)) if ranks is None else ranks
        return dict(zip(order, tokens)), dict(zip(tokens, order)), merges, merge_ids
    tokens, rank_list, linenos = _parse(raw, name)
    vocab, inverse = _check_entries(tokens, rank_list, linenos, name)
    shipped = _merges_from_shipped(sha256, tokens, rank_list, inverse)
    if shipped is not None:
        merges, merge_ids = shipped
    else:
        line_of_rank = {rank: _line_of(linenos, i) for i, rank in enumerate(rank_list)}
        merges = derive_merges(inverse, lambda r: f"{name}: line {line_of_rank[r]}")
        merge_ids = None
    usual = rank_list == list(range(len(rank_list)))
    rank_cache.store(sha256, (tokens, None if usual else rank_list, merges, merge_ids))
    return vocab, inverse, merges, merge_ids


def read_tiktoken(
    path: str | os.PathLike,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> TokenizerData:
    """Read a tiktoken rank file (plain or gzip): ids are its ranks, merges are derived.

    A rank file holds neither pattern nor special tokens: pass them, or keep the
    ``NAME.tiktoken.json`` that :func:`write_tiktoken` writes beside ``NAME.tiktoken`` (what
    is passed wins; see :func:`sidecar_beside`). OpenAI's own rank files (cl100k_base,
    o200k_base) need neither: they are recognised by their bytes and get the pattern and
    special tokens tiktoken publishes for them. Raises ValueError naming the file and line
    (see :func:`read_ranks`, :func:`derive_merges`).
    """
    name = os.fspath(path)
    raw = _read_raw(path)
    sha256 = hashlib.sha256(raw).hexdigest()
    # subtle: reading makes hundreds of thousands of tuples and bytes and no reference
    # cycles; the cyclic collector, set off again and again by those allocations, would walk
    # them all (as in ``Tokenizer.__init__``).
    with gc_paused():
        vocab, inverse, merges, merge_ids = _derived(raw, sha256, name)
    if special_tokens is not None and not isinstance(special_tokens, Mapping):
        raise TypeError(
            "a rank file's special tokens map each token to its id, e.g. "
            f"{{'<|endoftext|>': 100257}}; got {special_tokens!r:.60}"
        )
    settings = None
    if pattern is None or special_tokens is None:
        settings = _settings_for(Path(path), sha256)
    if pattern is None:
        if settings is None:
            raise ValueError(
                f"{name}: a rank file holds no pre-tokenization pattern; pass one (gpt2, cl100k, "
                f"o200k or a regex) or keep {sidecar_name(_stem(Path(path)))} beside it"
            )
        pattern = settings["pat_str"]
    if special_tokens is None:
        special_tokens = settings["special_tokens"] if settings else {}
    specials = _add_specials(vocab, inverse, special_tokens, name)
    # subtle: OpenAI's own rank files are the presets' (same bytes), whose every token is
    # checked to merge into itself (tests/core/test_whole_tokens.py).
    whole = _openai_encoding(sha256) is not None
    return TokenizerData(vocab, merges, specials, pattern_name(pattern), merge_ids, whole)


def _openai_encoding(sha256: str) -> str | None:
    """The name of the OpenAI encoding ("cl100k_base", "o200k_base") whose rank file has
    this sha256, among those the package ships merges for; else None."""
    resource = _shipped_splits().get(sha256)
    return None if resource is None else resource.removesuffix(".splits.gz")


def openai_encoding_of(rank_file: str | os.PathLike) -> str | None:
    """The OpenAI encoding ("cl100k_base", "o200k_base") whose rank file ``rank_file`` is,
    recognised by its bytes whatever its name; None for any other file or one that cannot be
    read (reading it says why)."""
    try:
        raw = _read_raw(rank_file)
    except ValueError:
        return None
    return _openai_encoding(hashlib.sha256(raw).hexdigest())


def _settings_for(rank_file: Path, sha256: str) -> dict | None:
    """``pat_str`` and ``special_tokens`` for a rank file: its sidecar's, else for one of
    OpenAI's own rank files (recognised by its bytes, whatever its name) the ones tiktoken
    publishes for it, else None."""
    sidecar = sidecar_beside(rank_file)
    if sidecar is not None:
        return _read_sidecar(sidecar)
    encoding = _openai_encoding(sha256)
    if encoding is None:
        return None
    pattern, special_tokens = preset_settings(encoding)
    return {"pat_str": pattern, "special_tokens": special_tokens}


# ------------------------------------------------------------------ writing
def _ranks_for_tiktoken(data: TokenizerData) -> dict[bytes, int]:
    """token bytes -> rank for tiktoken: our ids, special tokens left out (tiktoken keeps them
    apart). Raises ValueError when tiktoken could not encode exactly as ``data`` does."""
    special_ids = set(data.special_tokens.values())
    for s, idx in data.special_tokens.items():
        if idx in data.vocab and data.vocab[idx] != s.encode("utf-8"):
            raise ValueError(f"special token {s!r}: id {idx} holds {data.vocab[idx]!r}")
    ranks: dict[bytes, int] = {}
    for idx, tok in sorted(data.vocab.items()):
        if idx in special_ids:
            continue
        if tok in ranks:
            raise ValueError(f"ids {ranks[tok]} and {idx} hold the same token {tok!r}")
        ranks[tok] = idx
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ValueError(f"no id for byte 0x{missing[0]:02x}: tiktoken needs all 256 bytes")
    derived = derive_merges(ranks, lambda r: f"id {r}")
    if derived != list(data.merges):
        at = next(
            (i for i, (a, b) in enumerate(zip(derived, data.merges)) if a != tuple(b)),
            min(len(derived), len(data.merges)),
        )
        ours = data.merges[at] if at < len(data.merges) else "nothing"
        theirs = derived[at] if at < len(derived) else "nothing"
        raise ValueError(
            f"tiktoken ranks tokens by id and joins parts by the rank of the result, which would "
            f"make merge {at} {theirs!r} where this tokenizer has {ours!r}: its ids must grow with "
            "merge order and every multi-byte token must come from exactly the merge tiktoken finds"
        )
    return ranks


def write_tiktoken(
    directory: str | os.PathLike, name: str, data: TokenizerData
) -> tuple[Path, Path]:
    """Write ``directory/NAME.tiktoken`` (ranks = ids, special tokens left out) and
    ``directory/NAME.tiktoken.json`` (``pat_str``, ``special_tokens``, format and version), each
    atomically. ``tiktoken.Encoding(name, pat_str=..., mergeable_ranks=<the file's ranks>,
    special_tokens=...)`` then gives this tokenizer's ids. Returns both paths.

    Raises ValueError when tiktoken cannot represent the tokenizer with the same ids (see
    ``_ranks_for_tiktoken``) or ``name`` is not a plain file name.
    """
    if not name or name != Path(name).name or name.startswith("."):
        raise ValueError(f"tiktoken name {name!r}: must be a plain file name")
    where = os.fspath(Path(directory) / f"{name}.tiktoken")
    try:
        ranks = _ranks_for_tiktoken(data)
    except ValueError as e:
        raise ValueError(f"{where}: cannot write this tokenizer for tiktoken: {e}") from None
    out = output_dir(directory)
    rank_path, sidecar_path = out / f"{name}.tiktoken", out / sidecar_name(name)
    lines = [
        b"%s %d\n" % (binascii.b2a_base64(tok, newline=False), rank)
        for tok, rank in sorted(ranks.items(), key=lambda item: item[1])
    ]
    name_of = pattern_name(data.pattern)
    sidecar = {
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "name": name,
        # tiktoken's own spelling of GPT-2's pattern (the same splits; see ``pattern``).
        "pat_str": R50K_PATTERN if name_of == "gpt2" else pattern_regex(data.pattern),
        "special_tokens": dict(sorted(data.special_tokens.items(), key=lambda item: item[1])),
    }
    atomic_write_bytes(rank_path, b"".join(lines))
    text = json.dumps(sidecar, ensure_ascii=False, indent=2) + "\n"
    atomic_write_bytes(sidecar_path, text.encode("utf-8"))
    return rank_path, sidecar_path


def splits_file_for(path: str | os.PathLike) -> bytes:
    """The shipped-splits file (gzip bytes) for the rank file at ``path``, derived from it."""
    name = os.fspath(path)
    raw = _read_raw(path)
    tokens, ranks, linenos = _parse(raw, name)
    vocab, inverse = _check_entries(tokens, ranks, linenos, name)
    return encode_splits(raw, derive_merges(inverse, lambda r: f"{name}: rank {r}"))
