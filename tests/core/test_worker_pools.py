"""The package's pools of worker processes (``io.worker_pool``, ``io.parent_exit``): their
workers end when the process that started them is killed, the pools' own initializers still
run, and a pool the open-file limit has no room for is refused with what to do, before any
worker starts or, when a start fails anyway, after ending the workers it had started. Runs
that kill a process or lower its limit are subprocesses; nothing waits on a clock but for a
condition, with a generous limit."""

from __future__ import annotations

import errno
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from core_helpers import REPO_ROOT, run_in_own_session, running

from bpe_studio.core.corpus import counting
from bpe_studio.core.io.worker_pool import WorkerPool

needs_proc = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads Linux's /proc")
WAIT_SECONDS = 60


def _wait_until(condition, seconds: float = WAIT_SECONDS) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def generated_corpus(path: Path, nbytes: int) -> Path:
    """About ``nbytes`` of short random words, Latin and Greek."""
    rng = random.Random(5)
    letters = "abcdefghijklmnopqrstuvwxyz" + "αβγδεζηθικλμνξοπρστυφχψω"
    lines = []
    size = 0
    while size < nbytes:
        line = " ".join("".join(rng.choices(letters, k=rng.randint(1, 9))) for _ in range(12))
        lines.append(line)
        size += len(line.encode("utf-8")) + 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


_KILLED_WHILE_COUNTING = """
import multiprocessing, os, signal, sys, threading
from bpe_studio.core.corpus import counting, tasks
from bpe_studio.core.io import parent_exit


def started():
    print(*[p.pid for p in multiprocessing.active_children()], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # what the out-of-memory killer sends


if __name__ == "__main__":
    counting.IN_PROCESS_LIMIT = 0  # counted by worker processes however small
    how = sys.argv[2]
    if how == "fork server":  # another thread runs: the fork server starts the workers
        threading.Thread(target=threading.Event().wait, daemon=True).start()
    elif how == "watched":  # where the kernel cannot signal them: a thread watches
        parent_exit._death_signal = lambda: False
    tasks.count_corpus(sys.argv[1], workers=2, started=started)
"""


@needs_proc
@pytest.mark.parametrize("how", ["forked", "fork server", "watched"])
def test_workers_end_when_the_process_that_started_them_is_killed(tmp_path, how):
    """``kill -9`` of a training (the out-of-memory killer) left its workers running for
    ever, orphans waiting for work."""
    corpus = generated_corpus(tmp_path / "c.txt", 3_000_000)
    script = tmp_path / "killed.py"
    script.write_text(_KILLED_WHILE_COUNTING)
    out = tmp_path / "pids.txt"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with open(out, "w") as stdout:  # (not a pipe: a worker left alive would hold it open)
        done = subprocess.run(
            [sys.executable, str(script), str(corpus), how],
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            env=env,
            timeout=300,
        )
    workers = [int(pid) for pid in out.read_text().split()]
    try:
        assert done.returncode == -signal.SIGKILL
        assert workers, "the pool had started workers"
        assert _wait_until(lambda: not any(map(running, workers))), "workers outlived it"
    finally:
        for pid in filter(running, workers):
            os.kill(pid, signal.SIGKILL)


_KILLED_WHILE_COMPILING = """
import os, signal, sys, threading, time
from bpe_studio.core.io.numba_cache import compile_in_child

pid_file = sys.argv[1]
child = f"import os, time\\nopen({pid_file!r}, 'w').write(str(os.getpid()))\\ntime.sleep(600)\\n"
threading.Thread(target=compile_in_child, args=(child,), daemon=True).start()
while not os.path.getsize(pid_file):
    time.sleep(0.05)
os.kill(os.getpid(), signal.SIGKILL)
"""


@needs_proc
def test_the_compiling_child_ends_when_its_parent_is_killed(tmp_path):
    """The child that compiles kernels into numba's cache (``numba_cache.compile_in_child``)
    ends with the process that waits for it, as the pools' workers do."""
    pid_file = tmp_path / "child.pid"
    pid_file.write_text("")
    script = tmp_path / "killed.py"
    script.write_text(_KILLED_WHILE_COMPILING)
    # Its own cache folder: the code it compiles names this test's folder, so its lock file
    # (``compile_lock``: one per code, left) would be a new one in the user's at every run.
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, str(script), str(pid_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        timeout=300,
    )
    child = int(pid_file.read_text())
    try:
        assert done.returncode == -signal.SIGKILL
        assert _wait_until(lambda: not running(child)), "the child outlived it"
    finally:
        if running(child):
            os.kill(child, signal.SIGKILL)


def _remember(path: str, word: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"{word} {os.getpid()}\n")


def _parent_pid() -> int:
    return os.getppid()


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_a_pools_own_initializer_still_runs_in_each_worker(tmp_path, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start here")
    log = tmp_path / "started.txt"
    context = multiprocessing.get_context(method)
    with WorkerPool(2, mp_context=context, initializer=_remember, initargs=(str(log), "w")) as pool:
        parents = {pool.submit(_parent_pid).result() for _ in range(4)}
    started = log.read_text(encoding="utf-8").splitlines()
    assert 1 <= len(started) <= 2 and all(line.startswith("w ") for line in started), started
    if method != "forkserver":
        assert parents == {os.getpid()}


# ------------------------------------------------------------------ the open-file limit


def _few_files(limit: int):
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))


_ROOM = """
import os
from bpe_studio.core.io.worker_pool import open_file_room

room = open_file_room()
opened = []
try:
    while True:
        opened.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
print(room, len(opened))
"""


@needs_proc
@pytest.mark.parametrize("limit", [16, 40])
def test_the_room_is_what_this_process_can_still_open(limit):
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _ROOM],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_few_files(limit),
        timeout=120,
    )
    room, opened = map(int, done.stdout.split())
    assert room == opened > 0


def test_more_workers_than_the_limit_has_room_for_are_refused_before_any_starts(monkeypatch):
    from bpe_studio.core.io import worker_pool

    monkeypatch.setattr(worker_pool, "open_file_room", lambda: 20)
    before = multiprocessing.active_children()
    for method, fit in (("fork", 5), ("forkserver", 3), ("spawn", 3)):
        if method not in multiprocessing.get_all_start_methods():
            continue
        with pytest.raises(OSError, match=r"too many open files for 8 worker processes") as e:
            WorkerPool(8, mp_context=multiprocessing.get_context(method))
        assert e.value.errno == errno.EMFILE
        assert f"pass workers={fit} or fewer" in str(e.value)
    assert multiprocessing.active_children() == before
    # The default number of workers is every core, as many as fit however they start.
    monkeypatch.setattr(counting, "available_cores", lambda: 64)
    assert counting.resolve_workers(None) == 3
    assert counting.resolve_workers(8) == 8  # asked for: refused by the pool, saying why
    monkeypatch.setattr(worker_pool, "open_file_room", lambda: 3)
    assert counting.resolve_workers(None) == 1


_START_FAILS = """
import sys
from bpe_studio.core.corpus import counting, tasks
from bpe_studio.core.io import worker_pool

if __name__ == "__main__":
    counting.IN_PROCESS_LIMIT = 0  # counted by worker processes however small
    counting.CHUNK_BYTES = 10_000  # in more chunks than workers (a pool is no larger)
    worker_pool.workers_within_limit = lambda forked: None  # the room not known beforehand
    try:
        tasks.count_corpus(sys.argv[1], workers=8)
    except OSError as e:
        print(e)
"""


@needs_proc
def test_a_start_that_runs_out_of_files_ends_the_workers_it_started_and_says_so(tmp_path):
    """Under ``ulimit -n 24`` eight forked workers could not all start: the error came out,
    and then the process waited for ever for the workers already started."""

    corpus = generated_corpus(tmp_path / "c.txt", 200_000)
    script = tmp_path / "start_fails.py"
    script.write_text(_START_FAILS)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    code, left, said = run_in_own_session(
        [sys.executable, str(script), str(corpus)], tmp_path / "out.txt", env=env,
        preexec_fn=_few_files(24),
    )  # fmt: skip
    assert code == 0 and said.startswith("too many open files for 8 worker processes"), said
    assert "(ulimit -n 24)" in said and "or fewer" in said
    assert left == [], "workers outlived the process"


def test_counting_starts_no_more_workers_than_chunks(tmp_path, monkeypatch):
    """A hostile-input audit: train --workers 1000 started 1,001 processes for 105 chunks,
    the rest starting only to wait. The pool is no larger than the chunks; the counts are
    the same as one process's."""
    from bpe_studio.core.corpus import tasks

    sizes: list[int] = []

    class Counted(WorkerPool):
        def __init__(self, workers, *args, **kwargs):
            sizes.append(workers)
            super().__init__(workers, *args, **kwargs)

    monkeypatch.setattr(tasks, "WorkerPool", Counted)
    corpus = generated_corpus(tmp_path / "big.txt", counting.IN_PROCESS_LIMIT + (1 << 20))
    many = tasks.count_corpus(corpus, ["<|endoftext|>"], workers=64)
    one = tasks.count_corpus(corpus, ["<|endoftext|>"], workers=1)
    assert sizes and all(n <= 6 for n in sizes), sizes  # 5 MB in chunks of 1 MB or more
    assert many == one


# ------------------------------------------------------------------ ending after Ctrl-C


def _half_a_result(marker: str) -> None:
    """In a worker: write the start of a result message into the pool's result pipe and no
    more, as a worker Ctrl-C ends mid-write does, then wait to be killed."""
    import gc
    from multiprocessing.queues import SimpleQueue

    (results,) = [q for q in gc.get_objects() if type(q) is SimpleQueue]
    # A message is its length (4 bytes, big-endian), then that many bytes: 1 of 1,000 come.
    os.write(results._writer.fileno(), (1000).to_bytes(4, "big") + b"x")
    Path(marker).write_text("written", encoding="utf-8")
    time.sleep(WAIT_SECONDS * 10)


def test_ending_after_ctrl_c_does_not_wait_for_a_half_written_result(tmp_path):
    """A CI run hung: Ctrl-C (sent to the process group) ended a worker while it wrote a
    result; the pool's manager thread waited for the rest of the message for ever, and
    ``end`` with it, though every worker had ended (this process held the pipe's other
    end). ``end`` now closes that end once the workers are killed."""
    import threading

    marker = tmp_path / "written.txt"
    pool = WorkerPool(1, mp_context=counting.mp_context())
    pool.submit(_half_a_result, str(marker))
    assert _wait_until(marker.exists)
    ended = threading.Thread(target=pool.end, args=(KeyboardInterrupt(),), daemon=True)
    ended.start()
    ended.join(WAIT_SECONDS)
    assert not ended.is_alive(), "the pool's end waited for the half-written result"
