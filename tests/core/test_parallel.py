"""Parallel pre-token counting gives exactly the counts of the whole text; training with
workers gives exactly the serial result; progress is reported in order up to the file size.
(Where files are cut is tested rule by rule in test_boundaries.py.)"""

from __future__ import annotations

import pytest
from core_helpers import EOT, SLICES, read_fixture, write_text

from bpe_studio.core import count_file, count_text, train_bpe
from bpe_studio.core.corpus import counting as corpus
from bpe_studio.core.corpus.counting import IN_PROCESS_LIMIT


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A >4 MB corpus: all slices, each repeated, documents kept in order."""
    parts = [read_fixture(name) for name in SLICES.values()]
    text = "".join(p * 3 for p in parts)
    assert len(text.encode()) > IN_PROCESS_LIMIT + 200_000
    path = write_text(tmp_path_factory.mktemp("big") / "big.txt", text)
    return path, text


@pytest.mark.parametrize("specials", [[EOT], [], [EOT, "\n\n"]])
def test_parallel_count_equals_count_of_whole_text(big, specials):
    path, text = big
    calls = []
    counts = count_file(path, specials, workers=2, progress=lambda d, t: calls.append((d, t)))
    assert len(calls) > 3, "the file should have been read in several chunks"
    assert counts == count_text(text, specials)


def test_progress_is_monotonic_and_ends_at_the_size(big):
    path, _ = big
    size = path.stat().st_size
    calls = []
    count_file(path, [EOT], workers=2, progress=lambda d, t: calls.append((d, t)))
    assert all(t == size for _, t in calls)
    done = [d for d, _ in calls]
    assert done == sorted(done)
    assert done[0] >= 0 and done[-1] == size
    started = [d for d in done if d > 0]
    assert started == sorted(set(started)), "each report after the start moves forward"


def test_progress_small_file(tmp_path):
    path = write_text(tmp_path / "s.txt", "small text\n" * 10)
    calls = []
    train_bpe(path, 270, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1] == (path.stat().st_size, path.stat().st_size)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_train_workers_1_equals_workers_2(big):
    path, _ = big
    serial = train_bpe(path, 700, [EOT], workers=1)
    parallel = train_bpe(path, 700, [EOT], workers=2)
    assert parallel == serial
    assert len(serial[1]) == 700 - 257


def test_train_workers_without_special_tokens(big):
    path, _ = big
    assert train_bpe(path, 400, [], workers=2) == train_bpe(path, 400, [], workers=1)


@pytest.mark.parametrize("specials", [[EOT], [], [EOT, "\n\n"]])
def test_in_process_count_goes_chunk_by_chunk_and_equals_the_whole(tmp_path, specials):
    """A file under IN_PROCESS_LIMIT is counted in this process, in pieces of about
    IN_PROCESS_CHUNK (short GIL-holding calls), with the counts of the whole text."""
    text = "".join(read_fixture(name) for name in SLICES.values())
    path = write_text(tmp_path / "mid.txt", text)
    size = path.stat().st_size
    assert corpus.IN_PROCESS_CHUNK * 3 < size <= IN_PROCESS_LIMIT
    calls = []
    counts = count_file(path, specials, workers=2, progress=lambda d, t: calls.append(d))
    assert counts == count_text(text, specials)
    assert len(calls) > 3 and calls == sorted(calls) and calls[-1] == size


def _resolve_in_pool_worker(workers):
    try:
        return corpus.resolve_workers(workers)
    except ValueError as e:
        return str(e)


def test_a_pool_worker_counts_in_its_own_process():
    """Inside a multiprocessing pool's worker (a daemonic process, which may start none of
    its own), workers=None was every core and failed with a bare AssertionError."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_resolve_in_pool_worker, (None,)) == 1
        message = pool.apply(_resolve_in_pool_worker, (2,))
    assert "workers=2: this process is a worker of a multiprocessing pool" in message
    assert "pass workers=1" in message


_UNGUARDED = """
import concurrent.futures as cf
from bpe_studio.core import train_bpe
from bpe_studio.core.corpus import counting
counting.IN_PROCESS_LIMIT = 0  # counted by worker processes however small
with cf.ThreadPoolExecutor(1) as ex:
    ex.submit(train_bpe, {path!r}, 300, workers=2).result()
"""


def test_workers_started_from_a_thread_of_an_unguarded_script_say_what_to_do(tmp_path):
    """Off the main thread, workers are not forked (``mp_context``): each imports the script
    again, and one with no ``__main__`` guard breaks the pool. That said only "terminated
    abruptly"; it now says why and what to do."""
    import os
    import subprocess
    import sys

    from core_helpers import REPO_ROOT

    corpus_path = write_text(tmp_path / "c.txt", read_fixture(SLICES["english"])[:50_000])
    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED.format(path=str(corpus_path)))
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 1
    said = [line for line in done.stderr.splitlines() if line.startswith("RuntimeError: the")]
    assert len(said) == 1, done.stderr
    assert "RuntimeError: the worker processes stopped as they started" in said[0]
    assert f"imports the script {script} again" in said[0]
    assert 'if __name__ == "__main__":' in said[0]
