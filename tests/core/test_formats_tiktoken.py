"""tiktoken rank files: reading, the derived merges, and writing.

Oracles: tiktoken itself, built offline from the rank files with the settings tiktoken_ext
publishes, against the slow reference encoder (``reference_encoder``) run on the merges this
module derives; and a derivation written here, independently, for every preset token.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re

import pytest
import tiktoken
from core_helpers import CS336_TEXTS, EOT, REPO_ROOT, SLICES, read_fixture
from hypothesis import given, settings
from reference_encoder import (
    ASSIGNED_TEXTS,
    ReferenceEncoder,
    published,
    read_rank_file,
    trained_data,
)
from text_strategies import HYPO

from bpe_studio.core import Tokenizer
from bpe_studio.core.formats import (
    PATTERNS,
    TokenizerData,
    derive_merges,
    read_ranks,
    read_tiktoken,
    write_tiktoken,
)
from bpe_studio.core.formats.presets import preset_data
from bpe_studio.core.pretokenization.names import GPT2_PATTERN, R50K_PATTERN, pattern_name

RESOURCES = REPO_ROOT / "resources" / "tokenizers"
ENCODINGS = {"cl100k_base": "cl100k", "o200k_base": "o200k"}
SLICE_CHARS = 15_000


class Loaded:
    """A preset as read by the code under test, tiktoken's encoding, and the reference."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.data = preset_data(name)
        self.ranks = read_rank_file(RESOURCES / f"{name}.tiktoken.gz")
        settings = published(name)
        self.tiktoken = tiktoken.Encoding(
            name,
            pat_str=settings["pat_str"],
            mergeable_ranks=self.ranks,
            special_tokens=settings["special_tokens"],
        )
        self.reference = ReferenceEncoder(
            self.data.vocab,
            self.data.merges,
            self.data.special_tokens,
            PATTERNS[self.data.pattern],
        )


_CACHE: dict[str, Loaded] = {}


def _cached(name: str) -> Loaded:
    if name not in _CACHE:
        _CACHE[name] = Loaded(name)
    return _CACHE[name]


@pytest.fixture(scope="module", params=list(ENCODINGS))
def loaded(request) -> Loaded:
    return _cached(request.param)


def test_patterns_are_the_ones_tiktoken_publishes():
    # GPT-2's is kept in its original spelling; tiktoken's r50k spelling is read as "gpt2"
    # (tests/core/test_patterns.py proves the two split alike).
    assert PATTERNS["gpt2"] == GPT2_PATTERN
    assert R50K_PATTERN == published("r50k_base")["pat_str"]
    assert pattern_name(R50K_PATTERN) == "gpt2"
    assert PATTERNS["cl100k"] == published("cl100k_base")["pat_str"]
    assert PATTERNS["o200k"] == published("o200k_base")["pat_str"]


def test_preset_ids_and_specials(loaded: Loaded):
    data = loaded.data
    assert data.pattern == ENCODINGS[loaded.name]
    assert data.special_tokens == published(loaded.name)["special_tokens"]
    expected = {rank: tok for tok, rank in loaded.ranks.items()}
    for s, idx in data.special_tokens.items():
        expected[idx] = s.encode()
    assert data.vocab == expected
    assert len(data.merges) == len(loaded.ranks) - 256


@pytest.mark.parametrize("corpus", [*SLICES.values(), *CS336_TEXTS])
def test_derived_merges_encode_as_tiktoken_on_fixtures(loaded: Loaded, corpus: str):
    text = read_fixture(corpus)[:SLICE_CHARS]
    text += f"{EOT} <|endofprompt|>x<|fim_prefix|>"
    expected = loaded.tiktoken.encode(text, allowed_special="all")
    assert loaded.reference.encode(text) == expected


@settings(HYPO, max_examples=100, derandomize=True)
@given(text=ASSIGNED_TEXTS)
def test_derived_merges_encode_as_tiktoken_on_generated_text(text: str):
    for name in ENCODINGS:
        case = _cached(name)
        assert case.reference.encode(text) == case.tiktoken.encode(text, allowed_special="all")


def _derive_here(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """For each multi-byte token, by rank: join the lowest-ranked adjacent pair of its bytes
    (the leftmost of equals), among pairs ranked below the token, until two parts are left."""
    merges = []
    get = ranks.get
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 3:
            if len(token) == 2:
                merges.append((token[:1], token[1:]))
            continue
        parts = [token[i : i + 1] for i in range(len(token))]
        while len(parts) > 2:
            best, at = rank, None
            for i in range(len(parts) - 1):
                r = get(parts[i] + parts[i + 1], rank)
                if r < best:
                    best, at = r, i
            assert at is not None, f"rank {rank} cannot be built"
            parts[at : at + 2] = [parts[at] + parts[at + 1]]
        merges.append((parts[0], parts[1]))
    return merges


def test_shipped_merges_are_the_rederived_ones(loaded: Loaded):
    assert loaded.data.merges == _derive_here(loaded.ranks)
    header = gzip.decompress((RESOURCES / f"{loaded.name}.splits.gz").read_bytes()).split(b"\n")[0]
    raw = gzip.decompress((RESOURCES / f"{loaded.name}.tiktoken.gz").read_bytes())
    assert hashlib.sha256(raw).hexdigest().encode() in header.split()


def _write_ranks(path, ranks: dict[bytes, int], compress: bool = False) -> None:
    lines = b"".join(
        base64.b64encode(tok) + b" %d\n" % rank
        for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1])
    )
    path.write_bytes(gzip.compress(lines) if compress else lines)


def test_unshipped_rank_file_derives_its_merges(tmp_path):
    """A truncated cl100k (not the shipped file, so no shipped merges apply) is derived."""
    case = _cached("cl100k_base")
    small = {tok: rank for tok, rank in case.ranks.items() if rank < 6000}
    _write_ranks(tmp_path / "small.tiktoken", small)
    _write_ranks(tmp_path / "small.tiktoken.gz", small, compress=True)
    data = read_tiktoken(tmp_path / "small.tiktoken", "cl100k", {EOT: 6000})
    assert data.merges == case.data.merges[: 6000 - 256]
    assert data.vocab == {rank: tok for tok, rank in small.items()} | {6000: EOT.encode()}
    assert read_tiktoken(tmp_path / "small.tiktoken.gz", "cl100k", {EOT: 6000}) == data
    enc = tiktoken.Encoding(
        "small", pat_str=PATTERNS["cl100k"], mergeable_ranks=small, special_tokens={EOT: 6000}
    )
    reference = ReferenceEncoder(data.vocab, data.merges, data.special_tokens, PATTERNS["cl100k"])
    text = read_fixture(SLICES["mixed_web"])[:SLICE_CHARS] + EOT + "tail"
    assert reference.encode(text) == enc.encode(text, allowed_special="all")


# ----------------------------------------------------------------- bad files
BYTES = [base64.b64encode(bytes([b])) + b" %d" % b for b in range(256)]


def _bad(tmp_path, lines: list[bytes]) -> str:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(ValueError) as info:
        read_tiktoken(path, "gpt2")
    message = str(info.value)
    assert message.startswith(str(path))
    return message


def test_bad_base64_names_the_line(tmp_path):
    message = _bad(tmp_path, [*BYTES[:2], b"YW*i 300", *BYTES[2:]])
    assert "line 3" in message and "base64" in message


def test_bad_rank_names_the_line(tmp_path):
    message = _bad(tmp_path, [*BYTES, base64.b64encode(b"ab") + b" -4"])
    assert "line 257" in message and "rank" in message


def test_malformed_line_names_the_line(tmp_path):
    message = _bad(tmp_path, [*BYTES[:5], b"YWI= 300 7", *BYTES[5:]])
    assert "line 6" in message


def test_duplicate_rank_names_both_lines(tmp_path):
    message = _bad(tmp_path, [*BYTES, base64.b64encode(b"ab") + b" 17"])
    assert "line 257" in message and "rank 17" in message and "line 18" in message


def test_duplicate_token_names_both_lines(tmp_path):
    ab = base64.b64encode(b"ab")
    message = _bad(tmp_path, [*BYTES, ab + b" 256", ab + b" 257"])
    assert "line 258" in message and "line 257" in message


def test_missing_byte_is_refused(tmp_path):
    message = _bad(tmp_path, BYTES[:200] + BYTES[201:])
    assert "0xc8" in message and "256" in message


def test_unreachable_token_names_its_line(tmp_path):
    # "abc" at rank 256 has no lower-ranked pair to start from
    message = _bad(tmp_path, [*BYTES, base64.b64encode(b"abc") + b" 256"])
    assert "line 257" in message and "b'abc'" in message


def test_reachable_only_through_lower_ranks(tmp_path):
    enc = [base64.b64encode(t) for t in (b"ab", b"abc", b"bc")]
    # "abc" (257) is built from "ab" (256) + "c"; "bc" (258) ranks too high to matter
    path = tmp_path / "ok.tiktoken"
    path.write_bytes(b"\n".join([*BYTES, enc[0] + b" 256", enc[1] + b" 257", enc[2] + b" 258"]))
    data = read_tiktoken(path, "gpt2")
    assert data.merges == [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c")]
    assert read_ranks(path)[257] == b"abc"


def test_special_token_clashing_with_a_rank_is_refused(tmp_path):
    path = tmp_path / "r.tiktoken"
    path.write_bytes(b"\n".join(BYTES) + b"\n")
    with pytest.raises(ValueError, match="id 65 is the rank of"):
        read_tiktoken(path, "gpt2", {EOT: 65})
    with pytest.raises(ValueError, match="also the token of rank 97"):
        read_tiktoken(path, "gpt2", {"a": 300})


def test_a_special_token_named_for_a_rank_file_is_said_to_need_its_id(tmp_path):
    """An audit: naming a special token for a rank file (special_tokens=[...], the command
    line's --special-token) said to "train with it as a special token to make room for it",
    where tiktoken keeps special tokens apart from its ranks, so no rank file holds one; its
    id, or the sidecar, is how one is given. The oracle: tiktoken given that special token."""
    path = tmp_path / "r.tiktoken"
    path.write_bytes(b"\n".join(BYTES) + b"\n")
    with pytest.raises(ValueError) as info:
        Tokenizer.load(path, pattern="gpt2", special_tokens=[EOT])
    message = str(info.value)
    assert f"special_tokens={{{EOT!r}: ID}}" in message and "r.tiktoken.json" not in message
    assert "sidecar NAME.tiktoken.json" in message and "train" not in message
    enc = tiktoken.Encoding(
        "r",
        pat_str=published("r50k_base")["pat_str"],
        mergeable_ranks=read_rank_file(path),
        special_tokens={EOT: 300},
    )
    text = f"a b{EOT}c"
    tok = Tokenizer.load(path, pattern="gpt2", special_tokens={EOT: 300})
    assert tok.encode(text) == enc.encode(text, allowed_special="all")


def test_missing_pattern_without_sidecar_is_refused(tmp_path):
    path = tmp_path / "r.tiktoken"
    path.write_bytes(b"\n".join(BYTES) + b"\n")
    with pytest.raises(ValueError, match=r"r\.tiktoken\.json"):
        read_tiktoken(path)


def test_derive_merges_names_the_token():
    ranks = {bytes([b]): b for b in range(256)} | {b"xyz": 256}
    with pytest.raises(ValueError, match="rank 256"):
        derive_merges(ranks)


# ----------------------------------------------------------------- writing
def _tiktoken_from_written(rank_path, sidecar_path) -> tiktoken.Encoding:
    sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    return tiktoken.Encoding(
        sidecar["name"],
        pat_str=sidecar["pat_str"],
        mergeable_ranks=read_rank_file(rank_path),
        special_tokens=sidecar["special_tokens"],
    )


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_written_trained_tokenizer_encodes_the_same_in_tiktoken(tmp_path, pattern):
    text = read_fixture("corpus.en")[:12_000]
    data = trained_data(text, PATTERNS[pattern], [EOT, "<|pad|>"], 150)
    data = TokenizerData(data.vocab, data.merges, data.special_tokens, pattern)
    rank_path, sidecar_path = write_tiktoken(tmp_path / "out", "mine", data)
    assert (rank_path.name, sidecar_path.name) == ("mine.tiktoken", "mine.tiktoken.json")
    enc = _tiktoken_from_written(rank_path, sidecar_path)
    reference = ReferenceEncoder(data.vocab, data.merges, data.special_tokens, PATTERNS[pattern])
    sample = read_fixture(SLICES["english"])[:SLICE_CHARS] + EOT + "<|pad|>" + text[:5000]
    assert reference.encode(sample) == enc.encode(sample, allowed_special="all")
    assert read_tiktoken(rank_path) == data  # pattern and specials from the sidecar


def test_written_preset_reproduces_its_rank_file(tmp_path):
    case = _cached("cl100k_base")
    rank_path, sidecar_path = write_tiktoken(tmp_path, "cl100k_base", case.data)
    original = gzip.decompress((RESOURCES / "cl100k_base.tiktoken.gz").read_bytes())
    assert rank_path.read_bytes() == original
    sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    assert sidecar["pat_str"] == published("cl100k_base")["pat_str"]
    assert sidecar["special_tokens"] == published("cl100k_base")["special_tokens"]


def test_gpt2_preset_written_for_tiktoken_encodes_as_gpt2(tmp_path):
    data = preset_data("gpt2")
    enc = _tiktoken_from_written(*write_tiktoken(tmp_path, "gpt2", data))
    gpt2 = tiktoken.Encoding(
        "gpt2_ref",
        pat_str=published("r50k_base")["pat_str"],
        mergeable_ranks={tok: i for i, tok in data.vocab.items() if i != 50256},
        special_tokens={EOT: 50256},
    )
    text = read_fixture(SLICES["code"])[:SLICE_CHARS] + EOT
    assert enc.encode(text, allowed_special="all") == gpt2.encode(text, allowed_special="all")


def test_ids_out_of_merge_order_are_refused(tmp_path):
    data = trained_data(read_fixture("corpus.en")[:5000], PATTERNS["gpt2"], [], 20)
    vocab = dict(data.vocab)
    vocab[256], vocab[257] = vocab[257], vocab[256]
    swapped = TokenizerData(vocab, data.merges, {}, "gpt2")
    with pytest.raises(ValueError, match="ids must grow with merge order") as info:
        write_tiktoken(tmp_path, "x", swapped)
    assert str(info.value).startswith(str(tmp_path / "x.tiktoken"))
    assert not (tmp_path / "x.tiktoken").exists()


def test_special_token_with_other_bytes_is_refused(tmp_path):
    data = trained_data("hello hello", PATTERNS["gpt2"], [EOT], 2)
    bad = TokenizerData(data.vocab, data.merges, {"<|other|>": 256}, "gpt2")
    with pytest.raises(ValueError, match="<\\|other\\|>"):
        write_tiktoken(tmp_path, "x", bad)


def test_special_token_beginning_another_is_refused(tmp_path):
    # Found by fuzzing: tiktoken tries special tokens in its hash map's order, so of "<|a|>"
    # and "<|a|><|b|>" it took the shorter; this tokenizer takes the longer.
    data = trained_data("hello hello", PATTERNS["gpt2"], ["<|a|>", "<|a|><|b|>"], 2)
    with pytest.raises(ValueError, match="'<\\|a\\|>' begins '<\\|a\\|><\\|b\\|>'"):
        write_tiktoken(tmp_path, "x", data)
    chained = trained_data("hello hello", PATTERNS["gpt2"], ["<|a|><|b|>", "|><|"], 2)
    write_tiktoken(tmp_path, "y", chained)  # overlapping, but never at the same start


def test_name_must_be_a_plain_file_name(tmp_path):
    data = trained_data("hello hello", PATTERNS["gpt2"], [], 2)
    with pytest.raises(ValueError, match="plain file name"):
        write_tiktoken(tmp_path, "../x", data)


def test_genuine_rank_file_elsewhere_reads_like_the_preset(tmp_path, loaded: Loaded):
    path = tmp_path / f"{loaded.name}.tiktoken"
    path.write_bytes(gzip.decompress((RESOURCES / f"{loaded.name}.tiktoken.gz").read_bytes()))
    data = read_tiktoken(path, PATTERNS[ENCODINGS[loaded.name]], loaded.data.special_tokens)
    assert data == loaded.data


def test_a_bad_regex_in_a_sidecar_names_the_sidecar(tmp_path):
    rank_path, sidecar_path = write_tiktoken(tmp_path, "t", preset_data("gpt2"))
    sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    sidecar_path.write_text(json.dumps(sidecar | {"pat_str": "(a"}), encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"t\.tiktoken\.json: pat_str: pattern '\(a' is not a valid"
    ):
        read_tiktoken(rank_path)


@pytest.mark.parametrize("bad", ["256", -1, 1.5])
def test_a_bad_special_token_id_in_a_sidecar_names_the_sidecar_and_the_value(tmp_path, bad):
    """An audit: the error named the rank file, not the sidecar it came from, nor the id."""
    rank_path, sidecar_path = write_tiktoken(tmp_path, "t", preset_data("gpt2"))
    sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    sidecar_path.write_text(
        json.dumps(sidecar | {"special_tokens": {"<|endoftext|>": bad}}), encoding="utf-8"
    )
    with pytest.raises(ValueError) as refused:
        read_tiktoken(rank_path)
    assert str(refused.value) == (
        f"{sidecar_path}: special token '<|endoftext|>': id must be a non-negative integer, "
        f"got {bad!r}"
    )
    # Passed in, they are the caller's: the rank file is named.
    with pytest.raises(ValueError, match=rf"^{re.escape(str(rank_path))}: special token"):
        read_tiktoken(rank_path, "gpt2", {"<|endoftext|>": bad})


def test_a_rank_files_special_tokens_are_a_mapping(tmp_path):
    rank_path, _ = write_tiktoken(tmp_path, "t", preset_data("gpt2"))
    with pytest.raises(TypeError, match=r"map each token to its id.*got '<\|endoftext\|>'"):
        read_tiktoken(rank_path, "gpt2", EOT)


def _cut(rank_path, lines: int) -> None:
    """Keep the first ``lines`` lines of a rank file, as a copy interrupted at a line's end."""
    kept = rank_path.read_bytes().splitlines(keepends=True)[:lines]
    rank_path.write_bytes(b"".join(kept))


def test_a_rank_file_cut_short_is_refused_by_its_sidecars_count(tmp_path):
    """The hostile-inputs audit: gpt2.tiktoken cut at a line's end (an interrupted copy) loaded
    without a word as a smaller tokenizer. The sidecar now says how many ranks were written."""
    rank_path, sidecar_path = write_tiktoken(tmp_path, "t", preset_data("gpt2"))
    sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    assert sidecar["rank_count"] == 50_256 == len(rank_path.read_bytes().splitlines())
    assert read_tiktoken(rank_path).notes == ()
    _cut(rank_path, 34_072)
    with pytest.raises(ValueError) as info:
        read_tiktoken(rank_path)
    assert str(info.value) == (
        f"{rank_path}: holds 34,072 ranks, where its sidecar {sidecar_path} says 50,256 were "
        "written: the rank file is cut short (an interrupted copy?) or is not the one the "
        "sidecar was written with; copy it again"
    )
    sidecar_path.write_text(json.dumps(sidecar | {"rank_count": "50256"}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"t\.tiktoken\.json: rank_count must be a non-negat"):
        read_tiktoken(rank_path)


def test_without_a_count_a_special_token_far_past_the_ranks_is_noted(tmp_path):
    """A sidecar written before the count (or none, the special tokens given) reads as
    before; a special token more than 1,024 ids past the last rank is noted, as a cut-short
    file leaves it."""
    rank_path, sidecar_path = write_tiktoken(tmp_path, "t", preset_data("gpt2"))
    sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    del sidecar["rank_count"]
    sidecar_path.write_text(json.dumps(sidecar), encoding="utf-8")
    assert read_tiktoken(rank_path).notes == ()
    _cut(rank_path, 50_256 - 1_024)  # the last rank 49,231: 1,024 ids before <|endoftext|>
    assert read_tiktoken(rank_path).notes == ()
    _cut(rank_path, 34_072)
    note = (
        f"{rank_path}: its last rank is 34,071, and special token '<|endoftext|>' is id "
        "50,256: the 16,184 ids between hold nothing (a rank file cut short by an "
        "interrupted copy? compare it with the original)"
    )
    assert read_tiktoken(rank_path).notes == (note,)
    sidecar_path.unlink()
    assert read_tiktoken(rank_path, "gpt2", {EOT: 50_256}).notes == (note,)


@pytest.mark.parametrize("name", list(ENCODINGS))
def test_openai_rank_files_leave_no_note(tmp_path, name):
    """OpenAI's own files leave a few ids between their last rank and their special tokens
    (1 in cl100k_base and o200k_base): no note."""
    path = tmp_path / f"{name}.tiktoken"
    path.write_bytes(gzip.decompress((RESOURCES / f"{name}.tiktoken.gz").read_bytes()))
    assert read_tiktoken(path).notes == ()


def test_long_tokens_split_by_the_heap_as_by_the_slow_way(monkeypatch):
    """The re-audit: splitting a token scanned every pair after each join, so a rank file (or
    a save as tiktoken) of a run's 64 KB token took minutes; past ``SCAN_MAX`` bytes a heap
    splits it. Every token of cl100k's first 30,000 ranks through the heap gives the slow
    way's merges."""
    from bpe_studio.core.formats.tiktoken import merges as merges_module

    case = _cached("cl100k_base")
    ranks = {tok: rank for tok, rank in case.ranks.items() if rank < 30_000}
    monkeypatch.setattr(merges_module, "SCAN_MAX", 2)
    assert merges_module.derive_merges(ranks) == _derive_here(ranks)


def test_a_rank_file_of_a_runs_long_tokens_loads_and_encodes_as_tiktoken(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    token = b"a"
    for _ in range(16):  # up to 64 KB of "a", as a run on one letter makes
        token += token
        ranks[token] = len(ranks)
    _write_ranks(tmp_path / "run.tiktoken", ranks)
    tok = Tokenizer.from_tiktoken(tmp_path / "run.tiktoken", pattern="gpt2")
    enc = tiktoken.Encoding("run", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})
    text = "a" * (len(token) + 3) + " aaa"
    assert tok.encode(text) == enc.encode(text)
