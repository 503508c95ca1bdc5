"""Ctrl-C held while a pool runs (``core.io.interrupts``): noted by the handler, raised where
the caller checks or when the block ends, never inside the pool's machinery; and
``encode_file`` interrupted between two chunks stops its workers and writes nothing. The
signal is sent with ``signal.raise_signal``: its handler runs in this thread before the next
line, so nothing waits on a clock."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import weakref
from concurrent.futures import Future
from contextlib import contextmanager

import pytest
from core_helpers import REPO_ROOT, read_fixture

from bpe_studio.core import Tokenizer
from bpe_studio.core.corpus.tasks import corpus_files
from bpe_studio.core.encode.encode_file import PARALLEL_MIN_BYTES, encode_file
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain import corpus_pass
from bpe_studio.core.io.interrupts import (
    checked,
    completed,
    held_interrupts,
    keep_dropped,
    no_check,
    raise_dropped,
    results,
)


@contextmanager
def python_sigint():
    """Python's own SIGINT handler for the test (a test runner may have its own)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_is_noted_then_raised_where_checked():
    with python_sigint():
        with held_interrupts() as check:
            check()  # nothing came yet
            signal.raise_signal(signal.SIGINT)  # noted, not raised here
            with pytest.raises(KeyboardInterrupt):
                check()
            check()  # raised once
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_not_yet_raised_is_raised_when_the_block_ends():
    with python_sigint():
        reached = False
        with pytest.raises(KeyboardInterrupt):
            with held_interrupts():
                signal.raise_signal(signal.SIGINT)
                reached = True
        assert reached
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_checked_raises_before_the_next_item():
    with python_sigint():
        seen = []
        with pytest.raises(KeyboardInterrupt):
            with held_interrupts() as check:
                for item in checked([1, 2, 3], check):
                    seen.append(item)
                    if item == 1:
                        signal.raise_signal(signal.SIGINT)
        assert seen == [1]


def test_nothing_is_held_off_the_main_thread_or_under_another_handler():
    got = []
    thread = threading.Thread(target=lambda: got.append(held_interrupts().__enter__()))
    thread.start()
    thread.join()
    assert got == [no_check]
    came = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        with held_interrupts() as check:
            assert check is no_check
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


class _Dropping:
    """Ctrl-C lands while its finalizer runs, which Python reports and drops."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)


@pytest.fixture
def keeping(monkeypatch):
    """``keep_dropped`` for the test; the hooks it wraps are put back after."""
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    keep_dropped()


def test_ctrl_c_a_finalizer_dropped_is_raised_where_checked(keeping):
    # Dropped, it stopped nothing: `timeout` landed SIGTERM (raised as Ctrl-C) so.
    with python_sigint():
        _Dropping()  # finalized at once: its last reference is gone
        with pytest.raises(KeyboardInterrupt):
            raise_dropped()
        raise_dropped()  # raised once
        with held_interrupts() as check:
            _Dropping()
            raise_dropped()  # held: not raised here, where the files may be half written
            with pytest.raises(KeyboardInterrupt):
                check()
        with pytest.raises(KeyboardInterrupt):
            with held_interrupts():
                _Dropping()  # raised when the block ends


def test_ctrl_c_that_c_code_printed_and_cleared_is_raised_where_checked(keeping, capsys):
    # As PyErr_Print calls it: numpy's import_array in a compiled module's start printed the
    # KeyboardInterrupt, raised an ImportError instead, and the command fell back and went on.
    error = KeyboardInterrupt()
    sys.excepthook(KeyboardInterrupt, error, None)
    assert capsys.readouterr().err == ""
    with pytest.raises(KeyboardInterrupt):
        raise_dropped()


def test_other_errors_in_finalizers_are_reported_as_before(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    keep_dropped()

    class Failing:
        def __del__(self) -> None:
            raise ValueError("reported")

    Failing()
    assert [u.exc_type for u in seen] == [ValueError]
    raise_dropped()  # nothing to raise


def test_encode_file_interrupted_between_chunks_stops_its_workers(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text(read_fixture("english_books_slice.txt") * 12, encoding="utf-8")
    out = tmp_path / "ids.npy"
    sent = []

    def progress(done: int, total: int) -> None:
        if done and not sent:  # the first chunk is in: the workers are under way
            sent.append(done)
            signal.raise_signal(signal.SIGINT)

    with python_sigint(), pytest.raises(KeyboardInterrupt):
        encode_file(lambda: Tokenizer.preset("gpt2"), text, out, workers=2, progress=progress)
    assert sent
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [text]  # no chunk folder, no temporary output
    assert multiprocessing.active_children() == []


@pytest.mark.timeout(40)
def test_ctrl_c_ends_a_pool_whose_worker_was_stopped(tmp_path, monkeypatch):
    # A worker stopped (SIGSTOP) never ends its chunk: told to stop, encode waited for it
    # for ever. Now it is killed once the grace has passed (none here: the test waits for it).
    import os

    from bpe_studio.core.io import worker_pool

    monkeypatch.setattr(worker_pool, "STOP_GRACE_SECONDS", 0.0)
    text = tmp_path / "text.txt"
    text.write_text(read_fixture("english_books_slice.txt") * 12, encoding="utf-8")
    out = tmp_path / "ids.npy"
    stopped = []

    def progress(done: int, total: int) -> None:
        if done and not stopped:  # the first chunk is in: the workers are under way
            stopped.extend(p.pid for p in multiprocessing.active_children())
            os.kill(stopped[0], signal.SIGSTOP)
            signal.raise_signal(signal.SIGINT)

    with python_sigint(), pytest.raises(KeyboardInterrupt):
        encode_file(lambda: Tokenizer.preset("gpt2"), text, out, workers=2, progress=progress)
    assert stopped
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [text]
    assert multiprocessing.active_children() == []


def test_results_lets_each_result_go_once_passed_on():
    """``results`` replaced ``Executor.map``, which drops each future as it yields its
    result; holding them all kept every chunk's ids of an ``encode_file`` to the end."""

    class Chunk:
        pass

    futures: list[Future[Chunk]] = [Future() for _ in range(3)]
    for future in futures:
        future.set_result(Chunk())
    gone = [weakref.ref(future.result()) for future in futures]
    passed = results(futures, no_check)
    del futures, future
    first = next(passed)
    del first
    next(passed)
    gc.collect()
    assert gone[0]() is None and gone[2]() is not None


def test_completed_raises_while_no_future_finishes():
    """``completed`` passes futures on as they finish and checks while it waits: a worker's
    task may take minutes (one long pre-token), and a held Ctrl-C waited for it."""
    done, never = Future(), Future()
    done.set_result("first")
    seen = []
    with python_sigint(), pytest.raises(KeyboardInterrupt):
        with held_interrupts() as check:
            for future in completed([never, done], check):
                seen.append(future.result())
                signal.raise_signal(signal.SIGINT)
    assert seen == ["first"]


def test_a_held_ctrl_c_ends_a_pass_run_here_after_its_task(tmp_path):
    """A corpus big enough for a pool but of one task (one long pre-token) is run in this
    process while Ctrl-C is held: it came out when every pass had ended, ~20 s after the
    task for 60 MB of one letter (its scan pass too). Now it comes after the task."""
    corpus = tmp_path / "one.txt"
    corpus.write_text("a" * (PARALLEL_MIN_BYTES + 1), encoding="utf-8")
    tok = open_tokenizer("gpt2")
    files = corpus_files(corpus)
    tasks = corpus_pass.usage_tasks(tok, files, 2, "text")[:1]
    ran = []

    def job(tok, task):
        ran.append("task")
        signal.raise_signal(signal.SIGINT)  # Ctrl-C while the task runs
        return task.nbytes

    with python_sigint(), pytest.raises(KeyboardInterrupt):
        with corpus_pass.Passes(tok, 2, files[0].size) as passes:
            assert passes.parallel
            list(passes.run(job, tasks))
            ran.append("the next pass")
    assert ran == ["task"]


STUCK_WORKER = """
import signal, sys, time
from bpe_studio.core.corpus.tasks import corpus_files
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain import corpus_pass


def job(tok, task):
    if task.start:  # every task but the first works for longer than the test waits
        time.sleep(3600)
    return task.start


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    tok = open_tokenizer("gpt2")
    files = corpus_files(sys.argv[1])
    tasks = corpus_pass.usage_tasks(tok, files, 2, "text")
    assert len(tasks) > 2
    try:
        with corpus_pass.Passes(tok, 2, sum(f.size for f in files)) as passes:
            for start in passes.run(job, tasks):
                assert start == 0
                signal.raise_signal(signal.SIGINT)
    except KeyboardInterrupt:
        print("interrupted")
"""


def test_ctrl_c_ends_a_pass_whose_workers_are_busy(tmp_path):
    """Ctrl-C held while a pool runs a pass came out only when the next task finished, and
    the pool's end then waited for every running task."""
    corpus = tmp_path / "zh.txt"
    corpus.write_text(read_fixture("chinese_slice.txt") * 4, encoding="utf-8")
    script = tmp_path / "stuck.py"
    script.write_text(STUCK_WORKER, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    # The bound only keeps a failure from hanging the suite: the tasks sleep an hour.
    result = subprocess.run(
        [sys.executable, str(script), str(corpus)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["interrupted"]
