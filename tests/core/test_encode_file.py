"""encode_file (the engine behind ``bpe-studio encode``) and encode_array: a whole file's ids,
in parallel, equal Tokenizer.encode of the whole text."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from core_helpers import EOT, SLICES, read_fixture, write_text
from hypothesis import given
from text_strategies import HYPO, TEXTS

from bpe_studio.core import CorpusError, Tokenizer
from bpe_studio.core.encode import encode_file as encode_file_module
from bpe_studio.core.encode.encode_file import encode_file

DOUBLE = EOT + EOT


def run(tok, path, tmp_path, workers=2):
    out = tmp_path / "ids.npy"
    calls = []
    stats = encode_file(tok, path, out, workers=workers, progress=lambda d, t: calls.append((d, t)))
    ids = np.load(out)
    assert stats.tokens == len(ids)
    return ids, calls


@pytest.fixture(scope="module")
def big_text():
    parts = [read_fixture(SLICES[k]) for k in ("tinystories", "english", "chinese", "mixed_web")]
    return "".join(parts) * 4


@pytest.mark.parametrize("specials", [[EOT], []])
def test_parallel_encode_equals_encode(tmp_path, gpt2_tokenizer, big_text, specials):
    tok = Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, specials)
    path = write_text(tmp_path / "big.txt", big_text)
    ids, calls = run(tok, path, tmp_path)
    assert ids.dtype == np.uint16
    assert ids.tolist() == tok.encode(big_text)
    # The workers' chunk files, written beside the output, are gone with their folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt", "ids.npy"]
    size = path.stat().st_size
    done = [d for d, _ in calls]
    assert len(calls) > 2 and done == sorted(done) and done[-1] == size
    assert all(t == size for _, t in calls)


def test_what_a_killed_encode_left_beside_its_output_is_removed_once_old(
    tmp_path, gpt2_tokenizer, big_text
):
    """A run killed with kill -9 (the OOM killer) left its hidden temporary ids file and its
    workers' chunks folder in the user's folder for good; the next run of the same output
    removes those an hour old, never a live run's."""
    path = write_text(tmp_path / "big.txt", big_text)
    left = {
        ".ids.npy.k3j5h2l1.tmp": "file",
        ".ids.npy.a8s7d6f5.chunks": "folder",
        ".ids.npy.q8w7e6r5.tmp": "file",
        ".ids.npy.z1x2c3v4.chunks": "folder",
    }
    for name, kind in left.items():
        if kind == "folder":
            (tmp_path / name).mkdir()
            (tmp_path / name / "0.npy").write_bytes(b"half a chunk")
        else:
            (tmp_path / name).write_bytes(b"half the ids")
    hours_ago = time.time() - 2 * 3600
    old = [".ids.npy.k3j5h2l1.tmp", ".ids.npy.a8s7d6f5.chunks"]
    for name in old:
        os.utime(tmp_path / name, (hours_ago, hours_ago))
    run(gpt2_tokenizer, path, tmp_path)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted(["big.txt", "ids.npy", *(set(left) - set(old))])


def test_serial_encode_equals_encode(tmp_path, gpt2_tokenizer):
    text = read_fixture(SLICES["code"])
    path = write_text(tmp_path / "code.txt", text)
    ids, _ = run(gpt2_tokenizer, path, tmp_path, workers=1)
    assert ids.tolist() == gpt2_tokenizer.encode(text)


@pytest.mark.parametrize("text", ["", "a", "Hello world" * 3000])
def test_the_ids_are_written_in_place_as_a_standard_npy(tmp_path, gpt2_tokenizer, text):
    """The ids go straight after a header of fixed size that is written again with their
    count: numpy reads the file (memory-mapped too, its data aligned as numpy aligns its
    own), whatever the count's digits, and nothing is left beside it."""
    path = write_text(tmp_path / "t.txt", text)
    out = tmp_path / "out" / "ids.npy"
    stats = encode_file(gpt2_tokenizer, path, out, workers=1)
    with open(out, "rb") as f:
        assert np.lib.format.read_magic(f) == (1, 0)
        shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        assert f.tell() % 64 == 0
    assert shape == (stats.tokens,) and dtype == np.uint16
    assert np.load(out, mmap_mode="r").tolist() == gpt2_tokenizer.encode(text)
    assert os.listdir(out.parent) == ["ids.npy"]


def test_large_ids_are_uint32(tmp_path, gpt2_tokenizer):
    vocab = dict(gpt2_tokenizer.vocab)
    vocab[70_000] = b"<|big|>"
    tok = Tokenizer(vocab, gpt2_tokenizer.merges, [EOT, "<|big|>"])
    text = "Hello <|big|> world" + EOT
    path = write_text(tmp_path / "t.txt", text)
    ids, _ = run(tok, path, tmp_path, workers=1)
    assert ids.dtype == np.uint32
    assert ids.tolist() == tok.encode(text)
    assert 70_000 in ids.tolist()


def test_parallel_encode_with_overlapping_special_tokens(tmp_path, gpt2_tokenizer, monkeypatch):
    """A double special token sits where a chunk would end: the cut must not split it in two
    single ones."""
    tok = Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, [EOT, DOUBLE])
    filler = read_fixture(SLICES["english"])
    target = encode_file_module.CHUNK_BYTES
    # Chunks of exactly `target` bytes, whatever the file size would choose.
    monkeypatch.setattr(encode_file_module, "MIN_CHUNK_BYTES", target)
    head = (filler * (target // len(filler) + 1))[: target - 5]  # ASCII: chars == bytes
    assert len(head.encode()) == target - 5
    text = head + DOUBLE + filler * 3 + DOUBLE + "end\n"
    path = write_text(tmp_path / "t.txt", text)
    expected = tok.encode(text)
    assert expected.count(tok.special_id(DOUBLE)) == 2
    ids, _ = run(tok, path, tmp_path)
    assert ids.tolist() == expected


def tokenizer_with(*tokens):
    """Bytes plus the given multi-byte tokens, each made by merging its last byte onto the
    token before it in the list (or onto its own first bytes)."""
    vocab = {i: bytes([i]) for i in range(256)}
    merges = []
    for tok in tokens:
        left, right = tok[:-1], tok[-1:]
        assert left in vocab.values()
        merges.append((left, right))
        vocab[len(vocab)] = tok
    return Tokenizer(vocab, merges)


@pytest.mark.parametrize(
    ("make_line", "tokens"),
    [
        # A line ending in U+00A0 before a word: "\xa0", "\n" are two pre-tokens in the whole
        # text, one "\xa0\n" at the end of a chunk cut after the line break.
        (lambda ln: ln + "\u00a0", [b"\xc2\xa0", b"\xc2\xa0\n"]),
        # A line indented with two U+3000: "\n\u3000", "\u3000" in the whole text, but
        # "\n" | "\u3000", "\u3000" when cut after the line break.
        (lambda ln: "\u3000\u3000" + ln, [b"\n\xe3", b"\n\xe3\x80", b"\n\xe3\x80\x80"]),
    ],
    ids=["no-break-space-line-end", "ideographic-space-indent"],
)
def test_parallel_encode_cut_next_to_non_ascii_space(tmp_path, make_line, tokens):
    tok = tokenizer_with(*tokens)
    lines = read_fixture(SLICES["mixed_web"]).replace(EOT, "").split("\n")
    text = "\n".join(make_line(ln.strip()) for ln in lines if ln.strip()) + "\n"
    text *= 4_500_000 // len(text.encode()) + 1
    path = write_text(tmp_path / "t.txt", text)
    ids, _ = run(tok, path, tmp_path)
    assert ids.tolist() == tok.encode(text)


def test_non_utf8_in_a_worker_chunk(tmp_path, gpt2_tokenizer, big_text):
    data = big_text.encode()
    cut = data.index(b"\n", int(len(data) * 0.8)) + 1
    path = tmp_path / "bad.txt"
    path.write_bytes(data[:cut] + b"\xc3(" + data[cut:])
    out = tmp_path / "ids.npy"
    with pytest.raises(CorpusError) as info:
        encode_file(gpt2_tokenizer, path, out, workers=2)
    assert str(path) in str(info.value) and str(cut) in str(info.value)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path], "no temporary files left behind"


@pytest.mark.parametrize("name", list(SLICES.values()))
@pytest.mark.parametrize("dtype", ["uint16", "uint32"])
def test_encode_array_equals_encode(gpt2_tokenizer, name, dtype):
    text = read_fixture(name)
    arr = gpt2_tokenizer.encode_array(text, dtype)
    assert arr.dtype == np.dtype(dtype)
    assert arr.tolist() == gpt2_tokenizer.encode(text)


@HYPO
@given(TEXTS)
def test_encode_array_of_generated_text(gpt2_tokenizer, text):
    assert gpt2_tokenizer.encode_array(text, "uint32").tolist() == gpt2_tokenizer.encode(text)


def forking(monkeypatch):
    """encode_file as in a plain process (the command line): the test process holds Qt's
    modules, so ``mp_context`` would choose a clean start; no thread runs here to make
    forking unsafe."""
    import multiprocessing
    import threading

    assert threading.active_count() == 1, [t.name for t in threading.enumerate()]
    monkeypatch.setattr(
        encode_file_module, "mp_context", lambda: multiprocessing.get_context("fork")
    )


def first_chunks_together(monkeypatch, note=lambda tok: None):
    """Make each worker's first chunk wait until a second worker has begun one too, however
    slowly either starts, so that two are seen encoding; ``note(tokenizer)`` is called in
    whichever process encodes each chunk."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    began, two_began = ctx.Value("i", 0), ctx.Event()
    waited: list[bool] = []
    original = Tokenizer.encode_array

    def encode_array(self, text, dtype="uint32"):
        note(self)
        if not waited:  # once per process: each forked worker has its own list
            waited.append(True)
            with began.get_lock():
                began.value += 1
                if began.value >= 2:
                    two_began.set()
            assert two_began.wait(120), "no second worker took a chunk"
        return original(self, text, dtype)

    monkeypatch.setattr(Tokenizer, "encode_array", encode_array)


def test_a_forked_workers_error_reaches_the_caller(tmp_path, gpt2_tokenizer, big_text, monkeypatch):
    """Every chunk a forked worker takes fails: its error (pickled back by the pool) is
    raised in the caller, and nothing is left behind."""
    forking(monkeypatch)
    parent = os.getpid()
    original = Tokenizer.encode_array

    def fail_in_children(self, text, dtype="uint32"):
        if os.getpid() != parent:
            raise CorpusError(f"refused in the child for {len(text)} characters")
        return original(self, text, dtype)

    monkeypatch.setattr(Tokenizer, "encode_array", fail_in_children)
    path = write_text(tmp_path / "big.txt", big_text)
    out = tmp_path / "ids.npy"
    with pytest.raises(CorpusError, match="refused in the child"):
        encode_file(gpt2_tokenizer, path, out, workers=2)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path], "no temporary files left behind"


@pytest.mark.parametrize("workers", [2, 3])
def test_forked_workers_share_the_chunks(tmp_path, gpt2_tokenizer, big_text, monkeypatch, workers):
    """Forked workers share the chunks; the ids are in file order and equal encode's."""
    import multiprocessing

    forking(monkeypatch)
    parent = os.getpid()
    seen = multiprocessing.get_context("fork").SimpleQueue()
    first_chunks_together(monkeypatch, lambda tok: seen.put(os.getpid()))
    path = write_text(tmp_path / "big.txt", big_text)
    ids, calls = run(gpt2_tokenizer, path, tmp_path, workers=workers)
    assert ids.tolist() == gpt2_tokenizer.encode(big_text)
    chunks = len(calls) - 1  # progress is told once before the first chunk
    pids = [seen.get() for _ in range(chunks)]
    assert parent not in pids and len(set(pids)) > 1


def drain(queue) -> list:
    """What is in a queue that no process writes to any more."""
    items = []
    while not queue.empty():
        items.append(queue.get())
    return items


def test_workers_forked_before_building_build_their_own(
    tmp_path, gpt2_tokenizer, big_text, monkeypatch
):
    """Given a function that builds the tokenizer, encode_file forks its workers (two here)
    and each builds a tokenizer of its own (this process builds none); they share the
    chunks, each with the tokenizer it built, and the ids equal encode's."""
    import multiprocessing

    forking(monkeypatch)
    parent = os.getpid()
    ctx = multiprocessing.get_context("fork")
    built, seen = ctx.SimpleQueue(), ctx.SimpleQueue()

    def build():
        built.put(os.getpid())
        tok = Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, [EOT])
        tok.built_in = os.getpid()
        return tok

    first_chunks_together(monkeypatch, lambda tok: seen.put((os.getpid(), tok.built_in)))
    path = write_text(tmp_path / "big.txt", big_text)
    out = tmp_path / "ids.npy"
    stats = encode_file(build, path, out, workers=2)
    assert np.load(out).tolist() == gpt2_tokenizer.encode(big_text)
    assert stats.load_seconds > 0
    # Every worker built before it took a chunk, and every chunk is done: each build is in the
    # queue.
    builders = drain(built)
    assert len(builders) == 2 and parent not in builders and len(set(builders)) == 2
    encoders = set(drain(seen))
    assert {pid for pid, _ in encoders} == set(builders)
    assert all(pid == built_in for pid, built_in in encoders), "each with the tokenizer it built"


def test_a_worker_that_cannot_build_raises_its_error(
    tmp_path, gpt2_tokenizer, big_text, monkeypatch
):
    """A forked worker whose tokenizer cannot be built (a file that cannot be read, no
    memory left): its error is raised in the caller as it was raised (the command line's
    one-line errors stay one line); nothing is written."""
    forking(monkeypatch)
    parent = os.getpid()

    def build():
        if os.getpid() != parent:
            raise MemoryError("no room for a second tokenizer")
        return gpt2_tokenizer

    path = write_text(tmp_path / "big.txt", big_text)
    out = tmp_path / "ids.npy"
    with pytest.raises(MemoryError, match="no room"):
        encode_file(build, path, out, workers=2)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path], "no temporary files left behind"


# --- files without line breaks -----------------------------------------------------------------


def one_line(text: str) -> str:
    """``text`` with its line breaks (and special tokens) dropped: a file cut only there is
    one chunk."""
    return text.replace("\r", "").replace("\n", "").replace(EOT, "")


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_a_file_without_line_breaks_is_cut_and_encoded_in_parallel(tmp_path, name, monkeypatch):
    """Cut at letter cuts (as worker pieces are): many chunks, progress per chunk, and the
    ids tiktoken gives the whole text (special tokens with letters in them stay whole)."""
    from reference_encoder import shipped_tiktoken

    parts = [one_line(read_fixture(SLICES[k])) for k in ("english", "chinese", "code")]
    text = EOT.join(parts) + "naïve" + EOT + "Straße"
    path = write_text(tmp_path / "one_line.txt", text)
    monkeypatch.setattr(encode_file_module, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(encode_file_module, "MIN_CHUNK_BYTES", 16 * 1024)
    monkeypatch.setattr(encode_file_module, "PARALLEL_MIN_BYTES", 64 * 1024)
    tok = Tokenizer.preset(name)
    ids, calls = run(tok, path, tmp_path)
    if name == "gpt2":
        expected = Tokenizer.preset("gpt2").encode(text)
    else:
        expected = shipped_tiktoken(name).encode(text, allowed_special="all")
    assert ids.tolist() == expected
    assert len(calls) > 10  # one call per chunk (the file is ~800 KB, chunks ~64 KB)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_counts_of_a_file_without_line_breaks_are_the_whole_texts(tmp_path, pattern, monkeypatch):
    from reference_encoder import published

    from bpe_studio.core import count_file
    from bpe_studio.core.corpus import counting as corpus_module
    from bpe_studio.core.pretokenization.boundaries import chunk_boundaries, cut_rules
    from bpe_studio.core.pretokenization.specials import Specials
    from bpe_studio.core.reference import pretoken_counts

    text = one_line(read_fixture(SLICES["english"]) + EOT + read_fixture(SLICES["chinese"]))
    path = write_text(tmp_path / "one_line.txt", text)
    bounds = chunk_boundaries(path, 32 * 1024, Specials.of([EOT]), cut_rules(pattern))
    assert len(bounds) > 10
    oracle = {"gpt2": "r50k_base", "cl100k": "cl100k_base", "o200k": "o200k_base"}[pattern]
    expected = pretoken_counts(text, [EOT], published(oracle)["pat_str"])
    monkeypatch.setattr(corpus_module, "IN_PROCESS_CHUNK", 32 * 1024)
    assert count_file(path, [EOT], workers=1, pattern=pattern) == expected


def test_no_cut_falls_inside_a_special_token_that_began_before_the_scan(tmp_path):
    """The scan for a cut may begin inside a special token: the letters in it ("endoftext")
    are never cut after."""
    from bpe_studio.core.pretokenization.boundaries import chunk_boundaries, cut_rules
    from bpe_studio.core.pretokenization.specials import Specials

    text = "a" * 100 + EOT + "1" * 200_000
    path = write_text(tmp_path / "t.txt", text)
    for target in range(95, 100 + len(EOT)):
        bounds = chunk_boundaries(path, target, Specials.of([EOT]), cut_rules("gpt2"))
        assert not any(100 < b < 100 + len(EOT) for b in bounds), (target, bounds)


@pytest.mark.parametrize("kernel", ["copies", "refuses", "absent"])
def test_appending_a_workers_ids(tmp_path, monkeypatch, kernel):
    # The parent appends each worker's file of ids in the kernel where it can, and through
    # Python's buffers where the system has no such copy or refuses it; the output is the
    # same, positioned for what comes next, and the worker's file is gone.
    if kernel == "copies" and not hasattr(os, "copy_file_range"):
        pytest.skip("this system has no os.copy_file_range")
    if kernel == "refuses":

        def refuse(*args):
            raise OSError(38, "Function not implemented")

        monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    if kernel == "absent":
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    parts = [bytes(range(256)) * 300, b"", b"\x00\x01" * 70_001]
    out = tmp_path / "out.bin"
    with open(out, "wb") as f:
        f.write(b"head")
        for i, data in enumerate(parts):
            spill = tmp_path / f"chunk{i}"
            spill.write_bytes(data)
            encode_file_module._append(f, str(spill))
            assert not spill.exists()
            assert f.tell() == 4 + sum(map(len, parts[: i + 1]))
        f.write(b"tail")
    assert out.read_bytes() == b"head" + b"".join(parts) + b"tail"
