"""A corpus's use of a vocabulary (``explain.usage``) against independent computations: the
ids tiktoken (GPT-2, cl100k, o200k) and ``tokenizers`` (Llama-3- and Qwen-shaped files, a
SentencePiece-style one) give the text, counted; the under-trained split against a brute
force search of the text and the tokens emitted."""

from __future__ import annotations

import gzip
import json
import re
import threading
import tracemalloc
from collections import Counter

import numpy as np
import pytest
import tokenizers
from core_helpers import EOT, read_fixture, slice_head
from foreign_files import llama3_style, own_ids, qwen2_style, sentencepiece_bpe
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_formats_tiktoken import _cached

from bpe_studio.core import Tokenizer
from bpe_studio.core.corpus.sources import CorpusError, resolve_corpus
from bpe_studio.core.corpus.tasks import CountTask
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain.corpus_pass import count_task, scan_task, write_patterns
from bpe_studio.core.explain.undertrained import _by_automaton, _by_substrings, inside_emitted
from bpe_studio.core.explain.usage import corpus_usage
from bpe_studio.core.explain.vocabulary import token_table
from bpe_studio.core.explain.work import Cancelled


@pytest.fixture(scope="module")
def big_text() -> str:
    """English, Chinese, code and web text, over a megabyte: counted in worker processes."""
    parts = [read_fixture(n) for n in ("english_books_slice.txt", "chinese_slice.txt")]
    parts += [read_fixture(n) for n in ("code_slice.txt", "mixed_web_slice.txt")]
    return "".join(parts)


def _counts(ids: list[int], size: int) -> np.ndarray:
    return np.bincount(np.asarray(ids, dtype=np.int64), minlength=size)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
@pytest.mark.parametrize("workers", [1, 2])
def test_counts_equal_tiktokens(name, workers, big_text, tmp_path, tiktoken_gpt2):
    enc = tiktoken_gpt2 if name == "gpt2" else _cached(name).tiktoken
    path = tmp_path / "corpus.txt"
    path.write_bytes(big_text.encode("utf-8"))
    tok = open_tokenizer(name)
    usage = corpus_usage(tok, path, workers=workers, scan=False)
    ids = enc.encode(big_text, allowed_special="all")
    expected = _counts(ids, len(usage.counts))
    assert np.array_equal(usage.counts, expected)
    assert usage.tokens == len(ids) and usage.bytes == len(big_text.encode("utf-8"))
    table = token_table(tok)
    special = set(enc._special_tokens.values())
    used = {i for i in ids if i not in special}
    assert usage.used(table) == len(used)
    ranked_ids, ranked_counts = usage.ranked(table)
    assert set(ranked_ids.tolist()) == used
    assert list(ranked_counts) == sorted(ranked_counts, reverse=True)
    unused = usage.unused_by_category(table)
    assert sum(map(len, unused.values())) == table.makeup().ordinary_tokens - len(used)
    assert sorted(i for ids_ in unused.values() for i in ids_) == usage.unused_ids(table)
    assert usage.special_counts(table)[EOT] == ids.count(enc._special_tokens[EOT])


@pytest.mark.parametrize("shape", [llama3_style, qwen2_style, sentencepiece_bpe])
def test_counts_equal_tokenizers_own(shape, tmp_path):
    text = slice_head("english", 60_000) + slice_head("chinese", 30_000) + "Ünïcödé café\n"
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8", newline="")
    file = shape(tmp_path / "tok")
    tok = open_tokenizer(file)
    usage = corpus_usage(tok, path, workers=1)
    assert np.array_equal(usage.counts, _counts(own_ids(file, text), len(usage.counts)))


def _brute_force(tok, text: bytes, counts: np.ndarray, every: int) -> dict[int, str]:
    """Every ``every``-th unused ordinary token: whether its bytes are inside an emitted
    ordinary token, only across tokens, or nowhere in the text, by searching the bytes
    themselves. A special token is one id, never text: its bytes are neither."""
    vocab = tok.vocab
    special = {tok.special_id(s) for s in tok.special_tokens}
    emitted = [vocab[i] for i in np.flatnonzero(counts).tolist() if i not in special]
    spelled = sorted((s.encode() for s in tok.special_tokens), key=len, reverse=True)
    pieces = re.split(b"|".join(map(re.escape, spelled)), text) if spelled else [text]
    unused = [i for i in sorted(vocab) if i not in special and not counts[i]]
    where = {}
    for i in unused[::every]:
        token = vocab[i]
        if any(token in e for e in emitted):
            where[i] = "inside"
        elif any(token in piece for piece in pieces):
            where[i] = "across"
        else:
            where[i] = "absent"
    return where


@pytest.mark.parametrize("dfa", [False, True], ids=["nfa", "dfa"])
def test_undertrained_split_equals_a_brute_force_search(tmp_path, gpt2_tokenizer, monkeypatch, dfa):
    from bpe_studio.core.explain import corpus_pass

    if dfa:  # a corpus this small is otherwise searched with the NFA
        monkeypatch.setattr(corpus_pass, "DFA_BYTES_PER_PATTERN", 0)
    text = slice_head("english", 8_000) + slice_head("chinese", 3_000) + slice_head("code", 3_000)
    # An audit: the special token's bytes ('<', 'end', 'text', ...) were called inside used
    # tokens, and '>\n' across them.
    text = text.replace("\n\n", f"\n{EOT}\n", 40)
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8", newline="")
    usage = corpus_usage(gpt2_tokenizer, path, workers=1)
    assert corpus_pass._automaton is not None and corpus_pass._automaton[1] is dfa
    expected = _brute_force(gpt2_tokenizer, path.read_bytes(), usage.counts, every=3)
    for name in ("inside", "across", "absent"):
        got = {i for i in getattr(usage, name) if i in expected}
        assert got == {i for i, w in expected.items() if w == name}, name
    assert "across" in expected.values(), "the text should hold some token only across tokens"
    table = token_table(gpt2_tokenizer)
    assert len(usage.inside) + len(usage.across) + len(usage.absent) == len(usage.unused_ids(table))


def test_without_the_scan_no_masks_are_made_and_the_rest_is_the_same(tmp_path, gpt2_tokenizer):
    text = slice_head("english", 8_000) + slice_head("code", 3_000) + slice_head("chinese", 2_000)
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8", newline="")
    full = corpus_usage(gpt2_tokenizer, path, workers=1)
    bare = corpus_usage(gpt2_tokenizer, path, workers=1, scan=False)
    assert np.array_equal(bare.counts, full.counts)
    assert (bare.bytes, bare.tokens, bare.inside) == (full.bytes, full.tokens, full.inside)
    assert bare.across is None and bare.absent is None and full.across and full.absent
    (f,) = resolve_corpus(str(path))
    task = CountTask(f, 0, f.size, nbytes=f.size)
    with_masks, without = count_task(gpt2_tokenizer, task), count_task(gpt2_tokenizer, task, False)
    assert np.unpackbits(with_masks.pairs).sum() > 1000
    assert not np.unpackbits(without.pairs).any() and not np.unpackbits(without.singles).any()
    assert np.array_equal(with_masks.ids, without.ids)
    assert np.array_equal(with_masks.counts, without.counts)
    assert with_masks.text_bytes == without.text_bytes == len(text.encode("utf-8"))


def test_the_usage_is_heard_once_as_the_encoding_left_it_before_the_scan(tmp_path, gpt2_tokenizer):
    text = slice_head("english", 6_000) + slice_head("code", 2_000)
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8", newline="")
    heard: list = []
    full = corpus_usage(gpt2_tokenizer, path, workers=1, encoded=heard.append)
    (first,) = heard
    assert first.across is None and first.absent is None
    assert full.across is not None and full.absent is not None
    assert np.array_equal(first.counts, full.counts)
    assert (first.bytes, first.tokens, first.inside) == (full.bytes, full.tokens, full.inside)
    heard.clear()
    corpus_usage(gpt2_tokenizer, path, workers=1, scan=False, encoded=heard.append)
    assert heard == []  # nothing comes after it: the usage itself says it all


def _tiny() -> Tokenizer:
    """Bytes, then " b", "a b" (which pre-tokenization never lets "a b" become) and "qz"."""
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b" b", 257: b"a b", 258: b"qz"})
    return Tokenizer(vocab, [(b" ", b"b"), (b"a", b" b"), (b"q", b"z")])


def test_bytes_across_documents_do_not_occur(tmp_path):
    tok = _tiny()
    records = tmp_path / "docs.jsonl"
    records.write_text(
        "\n".join(json.dumps({"text": t}) for t in ["xq", "zx a b"]) + "\n", encoding="utf-8"
    )
    usage = corpus_usage(tok, records, workers=1)
    assert usage.count(258) == 0 and 258 in usage.absent  # "q" and "z" are two documents
    assert 257 in usage.across  # "a b" is in the text, as "a" " b"
    plain = tmp_path / "docs.txt"
    plain.write_text("xqzx a b", encoding="utf-8")
    assert corpus_usage(tok, plain, workers=1).count(258) == 1


def test_records_and_compressed_files_count_as_their_texts(tmp_path, gpt2_tokenizer):
    docs = [slice_head("english", 5_000), slice_head("chinese", 2_000), "tail " + EOT + " x"]
    jsonl = tmp_path / "docs.jsonl.gz"
    with gzip.open(jsonl, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"content": d}) + "\n" for d in docs)
    text = tmp_path / "all.txt.gz"
    with gzip.open(text, "wt", encoding="utf-8", newline="") as f:
        f.write("".join(docs))
    by_doc = corpus_usage(gpt2_tokenizer, [jsonl], text_field="content", workers=1)
    expected = sum(_counts(gpt2_tokenizer.encode(d), len(by_doc.counts)) for d in docs)
    assert np.array_equal(by_doc.counts, expected)
    whole = corpus_usage(gpt2_tokenizer, text, workers=1)
    expected = _counts(gpt2_tokenizer.encode("".join(docs)), len(whole.counts))
    assert np.array_equal(whole.counts, expected)
    assert whole.bytes == len("".join(docs).encode())


@pytest.mark.parametrize("dfa", [False, True], ids=["nfa", "dfa"])
def test_a_match_or_a_pair_across_two_ranges_is_seen(tmp_path, dfa):
    path = tmp_path / "seam.txt"
    path.write_bytes(b"xxxxABxxxx")
    (f,) = resolve_corpus(str(path))
    first, second = CountTask(f, 0, 5, nbytes=5), CountTask(f, 5, 10, nbytes=5)
    tok = _tiny()
    kept = str(tmp_path / "patterns")
    write_patterns([b"AB", b"BA"], kept)
    assert scan_task(tok, first, kept, dfa) == ([0], 5)
    assert scan_task(tok, second, kept, dfa) == ([], 5)
    pairs = np.unpackbits(count_task(tok, first).pairs).astype(bool)
    assert pairs[ord("A") << 8 | ord("B")]


@pytest.mark.parametrize("seed", range(6))
def test_the_scan_never_finds_bytes_inside_a_special_tokens_text_wherever_blocks_are_cut(
    tmp_path, monkeypatch, seed
):
    """The scan leaves out a special token's text (one id, no text a model sees) however the
    text is cut: into ranges at any place outside a special token, or, read as a stream, into
    blocks of any size, which may cut one in two. Oracle: the strings that occur in the text
    split at its special tokens."""
    import random

    from bpe_studio.core.explain import corpus_pass

    rng = random.Random(seed)
    special = "<|s|>"
    vocab = {i: bytes([i]) for i in range(256)} | {256: special.encode()}
    tok = Tokenizer(vocab, [], [special])
    parts = [rng.choice(["ab", "s|", "x<", "|>", "b<", "<|", "a", "\n"]) for _ in range(60)]
    text = "".join(p + (special if rng.random() < 0.3 else "") for p in parts).encode()
    strings = [b"<|", b"|s", b"s|", b"|>", b">a", b"b<", b"<|s|>", b"x<", b"ab", b"|>|", b"aa"]
    kept = str(tmp_path / "patterns")
    write_patterns(strings, kept)
    want = {i for i, b in enumerate(strings) if any(b in p for p in text.split(special.encode()))}
    plain = tmp_path / "t.txt"
    plain.write_bytes(text)
    (f,) = resolve_corpus(str(plain))
    # Ranges cut anywhere but inside the special token.
    inside = {i for k in range(len(text)) for i in range(k + 1, k + len(special))
              if text.startswith(special.encode(), k)}  # fmt: skip
    cuts = sorted(rng.sample([c for c in range(1, len(text)) if c not in inside], 8))
    found = set()
    for a, b in zip([0, *cuts], [*cuts, len(text)]):
        found |= set(scan_task(tok, CountTask(f, a, b, nbytes=b - a), kept)[0])
    assert found == want
    packed = tmp_path / "t.txt.gz"
    packed.write_bytes(gzip.compress(text))
    (g,) = resolve_corpus(str(packed))
    for block in (1, 2, 3, 5, 7, 11, 64):
        monkeypatch.setattr(corpus_pass, "BLOCK", block)
        assert set(scan_task(tok, CountTask(g, nbytes=g.size), kept)[0]) == want, block


def test_a_special_tokens_text_spelled_across_two_records_is_text_in_each(tmp_path):
    """A review: "hello <|end" and "oftext|> world", two records (each encoded on its own),
    read as one <|endoftext|>: neither half was found."""
    special = "<|endoftext|>"
    tok = Tokenizer({i: bytes([i]) for i in range(256)} | {256: special.encode()}, [], [special])
    records = tmp_path / "docs.jsonl"
    records.write_text(
        "".join(json.dumps({"text": t}) + "\n" for t in ["hello <|end", "oftext|> world"]),
        encoding="utf-8",
    )
    kept = str(tmp_path / "patterns")
    write_patterns([b"<|end", b"oftext|>", b"hello", b"<|endoftext|>"], kept)
    (f,) = resolve_corpus(str(records))
    assert scan_task(tok, CountTask(f, nbytes=f.size), kept)[0] == [0, 1, 2]


def test_errors_name_the_file(tmp_path, gpt2_tokenizer):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text\n\xff\xfe")
    with pytest.raises(CorpusError, match=r"bad\.txt: not valid UTF-8 at byte offset 10"):
        corpus_usage(gpt2_tokenizer, bad, workers=1)
    records = tmp_path / "r.jsonl"
    records.write_text('{"body": "x"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"r\.jsonl: line 1: no field 'text'"):
        corpus_usage(gpt2_tokenizer, records, workers=1)
    with pytest.raises(FileNotFoundError):
        corpus_usage(gpt2_tokenizer, tmp_path / "missing.txt", workers=1)


def test_progress_and_cancel(tmp_path, big_text, gpt2_tokenizer):
    path = tmp_path / "corpus.txt"
    path.write_text(big_text, encoding="utf-8", newline="")
    phases: dict[str, list[tuple[int, int]]] = {}
    corpus_usage(
        gpt2_tokenizer,
        path,
        workers=2,
        progress=lambda p, d, t: phases.setdefault(p, []).append((d, t)),
    )
    assert list(phases) == ["encoding", "scanning"]
    for seen in phases.values():
        assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] == path.stat().st_size
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        corpus_usage(gpt2_tokenizer, path, workers=2, cancel=stop)


def test_a_compressed_corpus_is_read_in_ranges_with_progress_and_cancel(
    tmp_path, big_text, gpt2_tokenizer, monkeypatch
):
    """An audit: a .txt.gz corpus was one task, read as one stream: progress stayed at 0 until
    its whole text was encoded, a cancel (and Ctrl-C) waited for that, and one worker did all
    the work. It is decompressed into a temporary file first (as encode does), then read in
    ranges; the copy goes however the usage ends."""
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    plain = tmp_path / "corpus.txt"
    plain.write_text(big_text, encoding="utf-8", newline="")
    packed = tmp_path / "corpus.txt.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    size = packed.stat().st_size
    phases: dict[str, list[tuple[int, int]]] = {}
    copies: list[int] = []  # the text decompressed into the temporary folder, as encoded

    def told(phase: str, done: int, total: int) -> None:
        phases.setdefault(phase, []).append((done, total))
        if phase == "encoding":
            copies.append(sum(f.stat().st_size for f in temp.glob("bpe-studio-*/*")))

    usage = corpus_usage(gpt2_tokenizer, packed, workers=2, progress=told)
    assert set(copies) == {plain.stat().st_size}
    expected = corpus_usage(gpt2_tokenizer, plain, workers=2)
    assert np.array_equal(usage.counts, expected.counts)
    assert (usage.bytes, usage.tokens) == (expected.bytes, expected.tokens)
    assert (usage.inside, usage.across, usage.absent) == (
        expected.inside, expected.across, expected.absent
    )  # fmt: skip
    assert usage.files == (str(packed),)
    assert list(phases) == ["decompressing", "encoding", "scanning"]
    for seen in phases.values():  # in bytes as stored, to the end
        assert seen[-1] == (size, size) and all(t == size for _, t in seen)
    assert len({d for d, _ in phases["encoding"]}) > 3  # a step for each range, not one
    assert not list(temp.glob("bpe-studio-*"))
    # Cancelled while decompressing, and while encoding: the copy goes too.
    for phase in ("decompressing", "encoding"):
        stop = threading.Event()

        def progress(p, d, t, phase=phase, stop=stop):
            if p == phase and d > 0:
                stop.set()

        with pytest.raises(Cancelled):
            corpus_usage(gpt2_tokenizer, packed, workers=2, cancel=stop, progress=progress)
        assert not list(temp.glob("bpe-studio-*"))
    # Its faults name it, with the offset in its text.
    bad = tmp_path / "bad.txt.gz"
    bad.write_bytes(gzip.compress(b"fine text\n\xff\xfe"))
    with pytest.raises(
        CorpusError, match=r"bad\.txt\.gz \(decompressed\): not valid UTF-8 at byte offset 10"
    ):
        corpus_usage(gpt2_tokenizer, bad, workers=1)
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(packed.read_bytes()[: size // 2])
    with pytest.raises(CorpusError, match=r"cut\.txt\.gz"):
        corpus_usage(gpt2_tokenizer, cut, workers=1)
    assert not list(temp.glob("bpe-studio-*"))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=5), min_size=1, max_size=30, unique=True),
    # Empty emitted tokens too: one listed first once hid the last pair of the others.
    st.lists(st.binary(max_size=12), min_size=1, max_size=30),
)
@example(unused=[b"ab"], emitted=[b"", b"ab"])
def test_both_ways_of_finding_tokens_inside_others_agree(unused, emitted):
    naive = {u for u in unused if any(u in e for e in emitted)}
    assert _by_substrings(unused, emitted) == naive
    assert _by_automaton(unused, emitted) == naive
    assert inside_emitted(unused, emitted) == naive


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=9), max_size=6), st.binary(max_size=1))
def test_a_tasks_byte_and_pair_masks_are_those_of_its_text(blocks, after):
    from bpe_studio.core.explain.corpus_pass import _Tally

    tally = _Tally(1)
    for i, block in enumerate(blocks):
        tally.text(block, after if i == len(blocks) - 1 else b"")
    text = b"".join(blocks) + (after if blocks else b"")
    result = tally.result(0)
    singles = np.flatnonzero(np.unpackbits(result.singles)).tolist()
    pairs = np.flatnonzero(np.unpackbits(result.pairs)).tolist()
    # The byte after the task (read where another task reads on) is in the corpus too: it
    # may be counted, as it is in the next task's.
    assert set(b"".join(blocks)) <= set(singles) <= set(text)
    assert pairs == sorted({text[i] << 8 | text[i + 1] for i in range(len(text) - 1)})
    assert result.text_bytes == sum(map(len, blocks))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=4), min_size=1, max_size=25),
    st.lists(st.booleans(), min_size=25, max_size=25),
    st.lists(st.booleans(), min_size=25, max_size=25),
    st.binary(max_size=30),
)
def test_the_unused_ids_split_as_a_brute_force_splits_them(tokens, used_flags, special, text):
    """Every unused ordinary id lands in exactly one of inside / maybe / absent, as a brute
    force over the used tokens and the text's bytes and byte pairs decides; tokens that share
    their bytes (listed twice) and empty ones included."""
    from types import SimpleNamespace

    from bpe_studio.core.explain.usage import _unused_split

    n = len(tokens)
    ids = np.arange(100, 100 + n, dtype=np.int64)
    special_rows = np.array(special[:n], dtype=bool)
    category = np.zeros(n, dtype=np.uint8)  # none byte fallback's (a test of its own)
    table = SimpleNamespace(ids=ids, tokens=tokens, special=special_rows, category=category)
    counts = np.zeros(100 + n, dtype=np.int64)
    counts[ids[np.array(used_flags[:n], dtype=bool)]] = 3
    singles = np.zeros(256, dtype=bool)
    singles[list(text)] = True
    pairs = np.zeros(1 << 16, dtype=bool)
    pairs[[text[i] << 8 | text[i + 1] for i in range(len(text) - 1)]] = True

    inside, maybe, absent = _unused_split(table, counts, (singles, pairs))
    assert _unused_split(table, counts, None) == (inside, {}, [])

    used = [t for t, u, s in zip(tokens, used_flags, special) if u and not s]  # no text
    want_inside, want_maybe, want_absent = [], {}, []
    for i, (t, u, s) in enumerate(zip(tokens, used_flags, special)):
        if u or s:
            continue
        if t and any(t in e for e in used):
            want_inside.append(100 + i)
        elif (
            t
            and all(singles[c] for c in t)
            and all(t[k : k + 2] in text for k in range(len(t) - 1))
        ):
            want_maybe.setdefault(t, []).append(100 + i)
        else:
            want_absent.append(100 + i)
    assert inside == sorted(want_inside)
    assert maybe == want_maybe
    assert absent == sorted(want_absent)


def test_unused_byte_fallback_tokens_are_no_undertrained_candidates(tmp_path):
    # Chinese beyond the small vocabulary falls back to bytes: some <0xNN> are used.
    text = slice_head("english", 20_000) + slice_head("chinese", 5_000)
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8", newline="")
    file = sentencepiece_bpe(tmp_path / "sp")
    tok = open_tokenizer(file)
    table = token_table(tok)
    usage = corpus_usage(tok, path, workers=1)
    # By tokenizers itself: the ids the text got, the byte tokens, the special tokens.
    got = set(own_ids(file, text))
    own = tokenizers.Tokenizer.from_file(str(file))
    vocab = own.get_vocab(with_added_tokens=True)
    specials = {i for i, t in own.get_added_tokens_decoder().items() if t.special}
    byte_ids = {i for t, i in vocab.items() if re.fullmatch(r"<0x[0-9A-F]{2}>", t)}
    unused = set(vocab.values()) - specials - got
    assert byte_ids & got and byte_ids - got, "some byte tokens used, some not"
    assert usage.unused_by_category(table)["byte fallback"] == sorted(byte_ids - got)
    candidates = [*usage.inside, *(usage.across or ()), *(usage.absent or ())]
    assert sorted(candidates) == sorted(unused - byte_ids)


def test_a_large_plain_file_encoded_whole_is_said_once_and_its_ids_are_tokenizers(
    tmp_path, monkeypatch
):
    from bpe_studio.core.explain import corpus_pass

    text = slice_head("english", 30_000)
    plain = tmp_path / "plain.txt"
    plain.write_text(text, encoding="utf-8", newline="")
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"text": text}) + "\n", encoding="utf-8")
    file = sentencepiece_bpe(tmp_path / "sp")
    tok = open_tokenizer(file)
    monkeypatch.setattr(corpus_pass, "WHOLE_TEXT_NOTE_BYTES", len(text.encode()))
    heard: list[str] = []
    usage = corpus_usage(tok, [plain, records], workers=2, status=heard.append)
    (note,) = heard
    assert note.startswith(f"{plain}: a {tok.kind} tokenizer encodes a plain-text file whole")
    assert "GB of memory" in note and "records (.jsonl" in note
    # Nothing cut: the counts are tokenizers' own of each whole text (the file, the record).
    expected = _counts(own_ids(file, text) * 2, len(usage.counts))
    assert np.array_equal(usage.counts, expected)
    # A byte-level tokenizer cuts the same file where its ids cannot change: nothing to say.
    heard.clear()
    corpus_usage(open_tokenizer(llama3_style(tmp_path / "l3")), plain, status=heard.append)
    assert not [h for h in heard if "whole" in h]


def test_a_long_record_is_counted_in_pieces_as_tiktoken_counts_it(
    tmp_path, gpt2_tokenizer, tiktoken_gpt2, monkeypatch, big_text
):
    """A record past ``LONG_RECORD`` characters is encoded through ``encode_iterable`` in
    blocks (whole, it cost about 20 bytes a character: ``inspect --corpus`` of a 50 MB record
    took 1.2 GB); the counts are tiktoken's, the short records' beside it too."""
    from bpe_studio.core.explain import corpus_pass

    monkeypatch.setattr(corpus_pass, "LONG_RECORD", 1 << 14, raising=False)
    monkeypatch.setattr(corpus_pass, "IDS_BLOCK", 1 << 12)
    monkeypatch.setattr(corpus_pass, "BLOCK", 1 << 16)  # the long record alone fills one

    def task(docs: list[str], name: str) -> CountTask:
        path = tmp_path / name
        path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
        (f,) = resolve_corpus(str(path))
        return CountTask(f, 0, f.size, nbytes=f.size)

    docs = ["Short one.", big_text, "  spaces   at the end   "]
    counted = count_task(gpt2_tokenizer, task(docs, "d.jsonl"), False)
    ids = [i for d in docs for i in tiktoken_gpt2.encode(d, allowed_special="all")]
    assert dict(zip(counted.ids.tolist(), counted.counts.tolist())) == Counter(ids)
    assert counted.tokens == len(ids)

    # What a record's length adds to the peak, the caches and tables built beforehand: the
    # record is held (its line, its text, its bytes: about 8 bytes a byte of this text);
    # encoded whole, its ids added 11 more.
    once, twice = task([big_text], "once.jsonl"), task([big_text * 2], "twice.jsonl")
    for each in (once, twice):
        count_task(gpt2_tokenizer, each, False)
    peaks = []
    for each in (once, twice):
        tracemalloc.start()
        try:
            count_task(gpt2_tokenizer, each, False)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    size = len(big_text.encode("utf-8"))
    assert peaks[1] - peaks[0] < 11 * size, f"peaks {peaks} for {size:,} bytes more"


def test_text_a_tokenizer_json_drops_is_said_and_left_out_of_the_ratio(tmp_path, big_text):
    """The patterns audit's follow-up: a custom regex's tokenizer.json (a Split that keeps
    its matches, as train --format hf writes it) drops what the regex does not match, as
    tokenizers does; the usage counted 8.68 bytes/token on Chinese text of which it kept
    12%. ``dropped`` is the text's bytes no match holds (counted here with the regex
    module), and the ratio is over the rest; any other tokenizer drops nothing."""
    import regex

    pattern = r"\p{Latin}+|\p{N}+|\s+|\p{P}|\p{S}"
    vocab = {i: bytes([i]) for i in range(256)} | {256: EOT.encode(), 257: b"th"}
    Tokenizer(vocab, [(b"t", b"h")], [EOT], pattern=pattern).save(tmp_path / "hf", format="hf")
    tok = open_tokenizer(tmp_path / "hf")
    path = tmp_path / "corpus.txt"
    path.write_bytes(big_text.encode("utf-8"))
    usage = corpus_usage(tok, path, workers=2, scan=False)
    kept = sum(
        len(m.encode()) for part in big_text.split(EOT) for m in regex.findall(pattern, part)
    ) + len(EOT.encode()) * big_text.count(EOT)
    assert usage.bytes == len(big_text.encode()) and usage.dropped == usage.bytes - kept > 0
    assert usage.bytes_per_token == kept / usage.tokens
    assert corpus_usage(open_tokenizer("gpt2"), path, workers=1, scan=False).dropped == 0
