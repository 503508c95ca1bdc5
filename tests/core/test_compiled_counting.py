"""Counting with the compiled scanners (``corpus.tally``, ``counting.COMPILED_COUNT_FROM``):
the same counts as the slow reference, the same merges as CS336's, on every path a corpus
takes (in-process chunks, worker processes, streams, records).

The corpus tests of ``test_parallel`` and ``test_corpus_sources`` run here a second time with
every corpus counted by the compiled kernels (their expectations are the reference's, never
the code under test's); the tests below add every pattern with a scanner, the tally on its
own (against ``Counter`` addition) and merges.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter

import pytest
from core_helpers import CS336_TEXTS, EOT, FIXTURES, SLICES, read_fixture, write_text
from hypothesis import given
from hypothesis import strategies as st
from reference_encoder import published
from text_strategies import HYPO

from bpe_studio.core import count_file, train_bpe
from bpe_studio.core.corpus import counting, tasks
from bpe_studio.core.corpus.tally import Tally
from bpe_studio.core.pretokenization.scan_patterns import LLAMA3_PATTERN, QWEN2_PATTERN
from bpe_studio.core.reference import GPT2_SPLIT_PATTERN, pretoken_counts
from bpe_studio.core.train.trainer import count_positions

pytest.importorskip("numba")

# The corpus tests of these modules, run again with compiled counting (the fixture below).
from test_corpus_sources import *  # noqa: E402, F403
from test_corpus_sources import small_pieces  # noqa: E402, F401
from test_parallel import *  # noqa: E402, F403
from test_parallel import big  # noqa: E402, F401


@pytest.fixture(autouse=True)
def compiled_counting(monkeypatch):
    """Every corpus, however small, counted by the compiled kernels; fail if one is not."""
    monkeypatch.setattr(counting, "COMPILED_COUNT_FROM", 0)
    used: list[bool] = []
    original = counting.prepare_counting

    def prepare(scanner, status):
        used.append(original(scanner, status))
        return used[-1]

    monkeypatch.setattr(counting, "prepare_counting", prepare)
    monkeypatch.setattr(tasks, "prepare_counting", prepare)
    yield
    assert all(used), "a corpus with a scanner was counted on the regex path"


# The oracle's spelling of each pattern (tiktoken's published one, the models' own).
ORACLE = {
    "gpt2": GPT2_SPLIT_PATTERN,
    "cl100k": published("cl100k_base")["pat_str"],
    "o200k": published("o200k_base")["pat_str"],
    LLAMA3_PATTERN: LLAMA3_PATTERN,
    QWEN2_PATTERN: QWEN2_PATTERN,
}
IDS = ["gpt2", "cl100k", "o200k", "llama3", "qwen2"]


def _corpus_text() -> str:
    return EOT.join(read_fixture(name) for name in [*SLICES.values(), *CS336_TEXTS])


@pytest.mark.parametrize("pattern", list(ORACLE), ids=IDS)
@pytest.mark.parametrize("workers", [1, 2])
def test_every_pattern_counts_as_the_reference(tmp_path, monkeypatch, pattern, workers):
    text = _corpus_text()
    path = write_text(tmp_path / "corpus.txt", text)
    # Many chunks, in worker processes with workers=2.
    monkeypatch.setattr(counting, "IN_PROCESS_LIMIT", 100_000)
    monkeypatch.setattr(counting, "CHUNK_BYTES", 200_000)
    got = count_file(path, [EOT], workers=workers, pattern=pattern)
    assert got == pretoken_counts(text, [EOT], ORACLE[pattern])


@pytest.mark.parametrize("pattern", list(ORACLE), ids=IDS)
def test_streams_and_records(tmp_path, monkeypatch, pattern):
    monkeypatch.setattr(tasks, "STREAM_BLOCK", 50_000)
    monkeypatch.setattr(counting, "WORKER_PIECE", 20_000)
    texts = [read_fixture(name) for name in SLICES.values()]
    gz = tmp_path / "all.txt.gz"
    gz.write_bytes(gzip.compress(EOT.join(texts).encode()))
    expected = pretoken_counts(EOT.join(texts), [EOT], ORACLE[pattern])
    assert count_file(gz, [EOT], workers=1, pattern=pattern) == expected
    docs = [p for text in texts for p in text.split("\n\n") if p]
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    expected = Counter()
    for doc in docs:
        expected += pretoken_counts(doc, [EOT], ORACLE[pattern])
    assert count_file(jsonl, [EOT], workers=1, pattern=pattern) == expected


def test_cs336_merges_with_compiled_counting(tmp_path):
    """CS336's reference merges on corpus.en, with the corpus counted by the kernels."""
    from gpt2_bytes import read_gpt2_merges

    _, merges = train_bpe(FIXTURES / "corpus.en", 500, [EOT], workers=2)
    assert merges == read_gpt2_merges(FIXTURES / "train-bpe-reference-merges.txt")


packed_counts = st.dictionaries(
    st.binary(min_size=1, max_size=6).filter(lambda b: b"\xff" not in b),
    st.integers(1, 1 << 40),
    max_size=40,
)


def _adds_up_as_counters_do(parts: list[dict[bytes, int]]) -> None:
    tally = Tally()
    for part in parts:
        tally.add(*counting.pack_counts(part))
    total: Counter[bytes] = Counter()
    for part in parts:
        total.update(part)
    assert tally.counter() == total
    assert len(tally) == len(total)
    assert tally.positions == count_positions(total)
    again = Tally()
    again.add(*tally.packed())
    assert again.counter() == total


@HYPO
@given(st.lists(packed_counts, max_size=6))
def test_tally_adds_up_as_counters_do(parts):
    _adds_up_as_counters_do(parts)


long_packed_counts = st.dictionaries(
    # Around the length the tally's index holds in its slots (15 bytes), NULs included.
    st.one_of(
        st.binary(max_size=40),
        st.builds(lambda n, b: b"\x00" * n + b, st.integers(0, 20), st.binary(max_size=2)),
    ).filter(lambda b: b"\xff" not in b),
    st.integers(1, 1 << 40),
    max_size=40,
)


@HYPO
@given(st.lists(long_packed_counts, max_size=6))
def test_tally_adds_up_strings_of_every_length(parts):
    _adds_up_as_counters_do(parts)


def test_tally_tells_apart_strings_that_share_their_first_fifteen_bytes():
    head = bytes(range(1, 16))
    part = {head: 1, head + b"a": 2, head + b"b": 3, head[:-1]: 4, head + b"ab" * 20: 5}
    tally = Tally()
    for _ in range(3):
        tally.add(*counting.pack_counts(part))
    assert tally.counter() == Counter({k: 3 * v for k, v in part.items()})
    assert list(tally.piece_counts()) == list(part)  # in order of first addition


def test_tally_grows_past_its_first_arrays():
    parts = [{f"{i}-{j}".encode(): i + 1 for i in range(3_000)} for j in range(4)]
    tally = Tally()
    for part in parts * 2:
        tally.add(*counting.pack_counts(part))
    assert tally.counter() == Counter({k: 2 * v for part in parts for k, v in part.items()})


def test_a_surrogate_in_a_document_is_replaced_then_counted(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"text": "a \\ud83d\\ude00 b \\ud800 c"}\n', encoding="utf-8")
    assert count_file(path, workers=1) == pretoken_counts("a \U0001f600 b \ufffd c")


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_counts_held_in_arrays_train_as_a_counter_does(tmp_path, engine):
    """What compiled counting hands the trainer (``PieceCounts``, arrays) reads as the
    ``Counter`` of the same counts, and both engines merge it identically."""
    from bpe_studio.core.corpus.tally import PieceCounts
    from bpe_studio.core.corpus.tasks import count_corpus
    from bpe_studio.core.train.trainer import BpeTrainer

    text = _corpus_text()[:200_000] + "a" + EOT  # a one-byte pre-token: not pairable
    path = write_text(tmp_path / "c.txt", text)
    held = count_corpus(path, [EOT], workers=1)
    assert isinstance(held, PieceCounts)
    expected = pretoken_counts(text, [EOT])
    assert held == expected and dict(held) == expected and len(held) == len(expected)
    assert held[b" the"] == expected[b" the"] and b"a" in held and b"\xff" not in held
    assert count_positions(held) == count_positions(expected)
    steps = []
    for counts in (held, expected):
        trainer = BpeTrainer(counts, 700, [EOT], engine=engine)
        steps.append([(s.left, s.right, s.count) for s in trainer])
    assert steps[0] == steps[1] and len(steps[0]) == 700 - 257


@pytest.mark.parametrize("how", ["missing", "broken"])
def test_without_numba_the_regex_path_counts(tmp_path, monkeypatch, how):
    """numba absent (no scanner is offered) or failing to load (the kernels raise): the
    corpus is counted on the regex path, with the same counts."""
    from bpe_studio.core.pretokenization import scan_load, scanner

    if how == "missing":
        monkeypatch.setitem(sys.modules, "numba", None)
        assert not scanner.kernels_available()
        assert scanner.compiled_scanner("gpt2") is None
    else:
        monkeypatch.setattr(scan_load.LOADER, "_ready", False)
        monkeypatch.setattr(scan_load.LOADER, "_module", None)
        monkeypatch.setattr(scan_load.LOADER, "_failure", "ImportError: a broken install")
    text = _corpus_text()[:100_000]
    path = write_text(tmp_path / "c.txt", text)
    monkeypatch.setattr(counting, "prepare_counting", _plain_prepare)  # no "compiled" check
    monkeypatch.setattr(tasks, "prepare_counting", _plain_prepare)
    assert count_file(path, [EOT], workers=1) == pretoken_counts(text, [EOT])


_plain_prepare = counting.prepare_counting


def test_a_small_corpus_trains_without_loading_numpy_or_numba():
    """Below COMPILED_COUNT_FROM the regex path counts and the Python engine merges: neither
    NumPy nor numba is imported (their memory stays out of a small run)."""
    import subprocess

    from core_helpers import REPO_ROOT

    code = (
        "import sys; from bpe_studio.core import train_bpe; "
        f"train_bpe({str(FIXTURES / 'corpus.en')!r}, 500, ['<|endoftext|>']); "
        "print(sorted(m for m in ('numpy', 'numba') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("english_books.txt", "gpt2"),
        ("code.txt", "cl100k"),
        ("chinese.txt", "o200k"),
        ("mixed_web.txt", "o200k"),
    ],
)
def test_shared_corpora_count_as_the_regex_path(name, pattern, monkeypatch):
    """Each whole shared corpus (skipped when absent): the compiled counts equal today's
    counting (the regex path) in worker processes."""
    from core_helpers import full_corpus

    path = full_corpus(name)
    compiled = count_file(path, [EOT], workers=2, pattern=pattern)
    # The regex path (the autouse fixture's check is for the first call).
    monkeypatch.setattr(tasks, "counting_scanner", lambda pattern, size: None)
    monkeypatch.setattr(tasks, "prepare_counting", _plain_prepare)
    assert count_file(path, [EOT], workers=2, pattern=pattern) == compiled


def test_warm_up_readies_the_tally_for_the_arrays_tally_add_passes():
    """A new user's first hour: warm_up called the tally with writable arrays, Tally.add
    passes read-only ones (np.frombuffer), a type numba compiles a kernel of its own for, so
    the first training with workers stalled on an unannounced compile. In a new process,
    warm_up's kernels are the only ones called."""
    import subprocess

    code = (
        "import numpy as np, numba\n"
        "from bpe_studio.core.pretokenization import scan_load\n"
        "scan_load.warm_up()\n"
        "data = np.frombuffer(b'ab', np.uint8)\n"
        "counts = np.frombuffer(np.ones(1, np.int64).tobytes(), np.int64)\n"
        "wanted = (numba.typeof(data), numba.typeof(counts))\n"
        "sigs = scan_load.counting_kernels().tally_add.signatures\n"
        "print(any(tuple(s[-2:]) == wanted for s in sigs))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"
