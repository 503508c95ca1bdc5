"""LatestJob: numbered requests, the latest wins, stale results dropped, cancellation between
pieces, failures as one line, shutdown waits for the thread. Jobs are steered with events, so
nothing depends on timing."""

from __future__ import annotations

import threading

import pytest

from bpe_studio.gui.jobs.latest import LatestJob, busy_job_threads


@pytest.fixture
def runner(qtbot):
    job = LatestJob("test-jobs")
    yield job
    job.shutdown()


def collect(runner):
    done: list[object] = []
    failed: list[str] = []
    runner.done.connect(done.append)
    runner.failed.connect(failed.append)
    return done, failed


def test_a_result_arrives_on_the_gui_thread(qtbot, runner):
    gui = threading.get_ident()
    ran_in: list[int] = []

    def job(is_stale):
        ran_in.append(threading.get_ident())
        return 42

    with qtbot.waitSignal(runner.done, timeout=10_000) as blocker:
        runner.submit(job)
    assert blocker.args == [42] and ran_in and ran_in[0] != gui
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)


def test_the_latest_request_wins_and_stale_results_are_dropped(qtbot, runner):
    done, failed = collect(runner)
    started, release = threading.Event(), threading.Event()

    def first(is_stale):
        started.set()
        release.wait(10)
        return "first"  # finished, but stale by now: dropped

    runner.submit(first)
    assert started.wait(10)
    runner.submit(lambda is_stale: "second")
    release.set()
    qtbot.waitUntil(lambda: bool(done), timeout=10_000)
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    assert done == ["second"] and failed == []


def test_a_superseded_job_stops_between_pieces(qtbot, runner):
    done, _ = collect(runner)
    pieces: list[int] = []
    started, go_on = threading.Event(), threading.Event()

    def long_job(is_stale):
        for piece in range(1000):
            if is_stale():
                return None
            pieces.append(piece)
            if piece == 2:
                started.set()
                go_on.wait(10)
        return "all pieces"

    runner.submit(long_job)
    assert started.wait(10)
    runner.cancel()
    go_on.set()
    qtbot.waitUntil(lambda: runner.active_threads() == 0, timeout=10_000)
    assert pieces == [0, 1, 2] and done == [] and not runner.busy


def test_a_stale_job_is_not_started(qtbot, runner):
    done, _ = collect(runner)
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def blocker(is_stale):
        started.set()
        release.wait(10)

    def queued(is_stale):
        ran.append("queued")
        return "queued"

    runner.submit(blocker)
    assert started.wait(10)
    runner.submit(queued)  # waits for the thread ...
    runner.submit(lambda is_stale: "latest")  # ... and is superseded before it runs
    release.set()
    qtbot.waitUntil(lambda: done == ["latest"], timeout=10_000)
    assert ran == []


def test_a_failure_is_one_readable_line(qtbot):
    runner = LatestJob("test-fail", describe=lambda error: f"could not: {error}")

    def broken(is_stale):
        raise ValueError("vocab.json line 3: bad token")

    with qtbot.waitSignal(runner.failed, timeout=10_000) as blocker:
        runner.submit(broken)
    assert blocker.args == ["could not: vocab.json line 3: bad token"]
    runner.shutdown()
    default = LatestJob("test-fail-default")
    with qtbot.waitSignal(default.failed, timeout=10_000) as blocker:
        default.submit(broken)
    # The default is the app's one wording of a job's failure (model.errors): the core's own
    # line for bad input, the error's class too for anything else.
    assert blocker.args == ["vocab.json line 3: bad token"]

    def crashed(is_stale):
        raise KeyError("merges")

    with qtbot.waitSignal(default.failed, timeout=10_000) as blocker:
        default.submit(crashed)
    assert blocker.args == ["KeyError: 'merges'"]
    default.shutdown()


class PanicException(BaseException):
    """As pyo3's (tokenizers' Rust panics): a BaseException, not an Exception."""


def test_a_job_that_panics_fails_and_the_next_one_runs(qtbot, runner):
    # A panic in tokenizers' Rust code went past ``except Exception``: neither done nor
    # failed came, and a throttled request after it (the editor's) never started.
    done, failed = collect(runner)

    def panics(is_stale):
        raise PanicException("AddedVocabulary bad split")

    runner.submit(panics)
    qtbot.waitUntil(lambda: len(failed) == 1, timeout=10_000)
    assert "AddedVocabulary bad split" in failed[0]
    runner.submit(lambda is_stale: "next", throttle=True)
    qtbot.waitUntil(lambda: done == ["next"], timeout=10_000)


def test_shutdown_waits_and_drops_the_result(qtbot, qapp, runner):
    done, _ = collect(runner)
    started, never = threading.Event(), threading.Event()
    saw_stale: list[bool] = []

    def job(is_stale):
        started.set()
        # Busy until shutdown() marks the job stale (it must, before it waits for the thread):
        # polled like a real job's pieces; the bound only keeps a broken shutdown from hanging.
        for _ in range(1000):
            if is_stale():
                break
            never.wait(0.01)
        saw_stale.append(is_stale())
        return "late"

    runner.submit(job)
    assert started.wait(10)
    runner.shutdown()
    assert saw_stale == [True] and runner.active_threads() == 0
    assert busy_job_threads() == 0
    qapp.processEvents()  # deliver anything queued: nothing is
    assert done == []


def test_a_request_after_shutdown_never_runs(qtbot, qapp, runner):
    # A signal still queued when the window closed may ask for work after shutdown; starting
    # it would deadlock the pool's destruction (its thread waiting for the GIL).
    done, _ = collect(runner)
    ran: list[bool] = []
    runner.shutdown()
    runner.submit(lambda is_stale: ran.append(True) or "late")
    qapp.processEvents()
    assert ran == [] and done == [] and not runner.busy and runner.active_threads() == 0


def test_a_result_for_a_deleted_runner_is_dropped_quietly(qapp):
    # A view deleted without shutdown while its job runs: the job's thread finishes after the
    # runner is gone. Run on this thread, with the runner already deleted, for determinism.
    import shiboken6

    from bpe_studio.gui.jobs.latest import LatestJob, _Run

    runner = LatestJob("bpe-test-deleted")
    number = runner.latest
    shiboken6.delete(runner)
    _Run(runner, number, lambda is_stale: "late").run()  # raised RuntimeError before
    _Run(runner, number, lambda is_stale: 1 / 0).run()  # a failure too


@pytest.mark.parametrize("stale", [False, True])
def test_a_run_lets_go_of_its_job(qtbot, runner, stale):
    # An audit: in the app, the pool's Python wrapper kept finished runnables alive, each with
    # its job's closure (a step's tokenizers, an ids array): about 40 MB a load-and-switch
    # cycle. A run, ended or skipped as stale, holds its job no more.
    import gc
    import weakref

    from bpe_studio.gui.jobs.latest import _Run

    class Payload:
        pass

    payload = Payload()
    held = weakref.ref(payload)

    def job(is_stale, payload=payload):
        return 1

    number = runner.submit(lambda is_stale: None) + (1 if stale else 0)
    run = _Run(runner, number, job)
    del job, payload
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    run.run()  # kept alive here, as the wrapper kept them
    gc.collect()
    assert held() is None


def test_finished_runs_are_not_kept(qapp, runner):
    # An audit: after the fix above, each load-and-switch cycle still left finished runs
    # alive, held by the pool's Python wrapper (PySide's start(QRunnable) keeps a reference
    # to the runnable). Quick jobs while the GUI thread turns its event loop (as the app's
    # does) were kept nearly every time.
    import gc

    from bpe_studio.gui.jobs import latest

    done, _ = collect(runner)
    for n in range(20):
        runner.submit(lambda is_stale, n=n: n)
        while not (done[-1:] == [n] and not runner.busy):
            qapp.processEvents()
    gc.collect()
    assert sum(type(o) is latest._Run for o in gc.get_objects()) == 0
