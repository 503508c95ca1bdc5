"""The Vocabulary lab's work in a process of its own, fed by a thread: :class:`LabProcess`.

What it does: :meth:`LabProcess.submit` hands a :class:`~.lab_records.LabJob` over and numbers
it; one job runs at a time, and a newer one cancels the job under way and replaces any job
still waiting (the latest wins). A thread of this process starts the child
(``lab_server.serve``) on first use, sends it what the job needs (a Hub model's file fetched
first, in this thread; the run's data in slices, only what the child has not had yet), then
the job, and passes every reply to ``deliver`` as it comes: progress, results, failures, and
the one :class:`~.lab_records.Ended` every job gets (also a job dropped before it started, or
one whose process died). Cancelling raises a number the child reads between slices of its
work. ``deliver`` is called in the thread; the app's bridge (``jobs.lab_runner``) takes the
messages to the GUI thread.

Why a process: see ``lab_server``. The thread calls ``between_sends`` before each message it
sends (the app waits there while the GUI thread repaints, so pickling never competes with a
repaint), and runs each job inside ``around_job`` (the app's short GIL switch interval).
What it leaves out: which job to run (``vocab_lab``), Qt.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from ...core.corpus.counting import mp_context
from ...core.encode.merging import kernel_start
from ...core.io.hf_hub import TOKENIZER_FILE, HubCancelled, fetch_tokenizer, parse_repo
from ...core.io.worker_pool import ended_abruptly
from .errors import describe_job_error
from .lab_records import (
    Ended,
    Failure,
    LabJob,
    Message,
    Outcome,
    Part,
    Progress,
    RunData,
    TokenizerSpec,
)
from .lab_server import serve

SLICE = 8192  # vocabulary entries or merges per message: each one's pickling is short
SHUTDOWN_WAIT = 2.0  # s: how long closing waits for the process before ending it
BUSY_SHUTDOWN_WAIT = 0.1  # s: the same, when a job was under way (cancelled by the close)
WAITING_FOR_COMPILE = "waiting for the window to compile the encoder"

_LIVE: set[LabProcess] = set()


def live_lab_processes() -> int:
    """Lab threads or processes started and still running (tests assert none is left)."""
    return sum(lab.running for lab in list(_LIVE))


@atexit.register
def _end_all() -> None:
    # subtle: the child is not a daemon (its usage pass starts worker processes, which a
    # daemon may not), so multiprocessing would wait for it at exit: end every one first.
    for lab in list(_LIVE):
        lab.shutdown()


def _end(process: BaseProcess, sig: int) -> None:
    """Send ``sig`` to the lab's process and the worker processes it started (its process
    group, ``lab_server.serve``), or to it alone where there are no groups."""
    pid = process.pid
    if pid is not None and hasattr(os, "killpg"):
        try:
            # The group is the child's own (its id is the child's pid, alive): no other.
            os.killpg(pid, sig)
            return
        except (ProcessLookupError, PermissionError):
            pass  # not its own group yet (it had just started): end it alone
    if sig == signal.SIGTERM:
        process.terminate()
    else:
        process.kill()


class LabProcess:
    """Runs lab jobs in a child process (see the module docstring)."""

    def __init__(
        self,
        deliver: Callable[[Message], None],
        between_sends: Callable[[], object] = lambda: None,
        around_job: Callable[[], AbstractContextManager[object]] = nullcontext,
    ) -> None:
        self._deliver = deliver
        self._between_sends = between_sends
        self._around_job = around_job  # the app shortens the GIL's switch interval there
        self._lock = threading.Condition()
        self._waiting: LabJob | None = None  # the next job (the latest submitted)
        self._numbers = 0
        self._running = 0  # the number of the job the child is on (0: none)
        self._closed = False
        self._thread: threading.Thread | None = None
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._cancel_mark = 0  # the last job cancelled (0: none)
        self._cancelled: Any = None  # the same number, shared with the child, which reads it
        # What the child holds of the run (thread only): the run whose data it has, how many
        # of its merges, and the run whose loaded tokenizer it has.
        self._run_sent: int | None = None
        self._merges_sent = 0
        self._loaded_sent: int | None = None
        # The child's temporary folder (its TMPDIR: the usage's copies of compressed files,
        # hundreds of MB): removed here once the child has ended, which an ended child
        # cannot do itself.
        self._temp: str | None = None

    # ------------------------------------------------------------ app side
    @property
    def running(self) -> bool:
        thread, process = self._thread, self._process
        return bool(
            (thread is not None and thread.is_alive())
            or (process is not None and process.is_alive())
        )

    def submit(self, job: LabJob) -> LabJob:
        """Run ``job`` next (numbered: the returned copy); the job under way is cancelled,
        one still waiting is dropped (each gets its ``Ended``)."""
        with self._lock:
            self._numbers += 1
            job = dataclasses.replace(job, number=self._numbers)
            if self._closed:
                return job
            dropped, self._waiting = self._waiting, job
            self._cancel_running()
            if self._thread is None:
                self._start()
            self._lock.notify_all()
        if dropped is not None:
            self._deliver(Ended(dropped.number, Outcome.CANCELLED))
        return job

    def cancel(self) -> None:
        """Cancel the job under way and drop the one waiting."""
        with self._lock:
            dropped, self._waiting = self._waiting, None
            self._cancel_running()
            self._lock.notify_all()  # a job waiting for the window's compile ends now
        if dropped is not None:
            self._deliver(Ended(dropped.number, Outcome.CANCELLED))

    def _cancel_running(self) -> None:
        self._cancel_mark = max(self._cancel_mark, self._running)
        if self._cancelled is not None:
            self._cancelled.value = self._cancel_mark

    def shutdown(self) -> None:
        """End the thread and the process (waits for both, then ends the process if it is
        still busy). Final: later jobs are dropped."""
        with self._lock:
            self._closed = True
            self._waiting = None
            busy = self._running != 0
            self._cancel_running()
            self._lock.notify_all()
        _LIVE.discard(self)
        # subtle: a job under way sees its cancel only at its next checkpoint, seconds away
        # in a large table or corpus, while the window that closes waits here: its process is
        # ended at once instead (it writes nothing the app keeps).
        wait = BUSY_SHUTDOWN_WAIT if busy else SHUTDOWN_WAIT
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(wait)
        process = self._process
        if process is not None:
            process.join(wait)
            if process.is_alive():
                _end(process, signal.SIGTERM)
                process.join(SHUTDOWN_WAIT)
            if process.is_alive():
                _end(process, getattr(signal, "SIGKILL", signal.SIGTERM))
                process.join()
            self._process = None
        if thread is not None and thread.is_alive():
            thread.join(SHUTDOWN_WAIT)  # its recv ended with the process
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None

    def _start(self) -> None:
        # subtle: the process is started by the thread, not here: the first process of the
        # app also starts multiprocessing's fork server and waits for it (curves._start).
        thread = threading.Thread(target=self._loop, name="bpe-lab", daemon=True)
        self._thread = thread
        _LIVE.add(self)
        thread.start()

    # ---------------------------------------------------------- thread side
    def _loop(self) -> None:
        while True:
            with self._lock:
                while self._waiting is None and not self._closed:
                    self._lock.wait()
                if self._closed:
                    break
                job, self._waiting = self._waiting, None
                assert job is not None
                self._running = job.number
            try:
                with self._around_job():
                    self._run(job)
            finally:
                with self._lock:
                    self._running = 0
        self._stop_process()

    def _run(self, job: LabJob) -> None:
        try:
            conn = self._ensure_process()
        except (OSError, RuntimeError, ValueError) as error:
            self._fail(job, Part.JOB, "", f"the lab's process could not start ({error})")
            return
        try:
            sendable = self._prepare(job, conn)
            if sendable is None:
                return
            if sendable.corpus is not None and kernel_start.preparing():
                # subtle: this process is compiling the encoder (the window's first run); the
                # child would compile it too, side by side, each at half the machine. What
                # needs no encoder goes first, the usage once the compile is cached.
                if not self._exchange(conn, dataclasses.replace(sendable, corpus=None), False):
                    return
                if not self._wait_for_compile(job):
                    return
                sendable = dataclasses.replace(sendable, makeup=False, b=None)
            self._exchange(conn, sendable)
        except (OSError, EOFError):
            self._lost_process()
            if self._closed:
                self._deliver(Ended(job.number, Outcome.CANCELLED))
            else:
                # subtle: the error is the pipe's ("Broken pipe", or none at all), not why the
                # process ended; the next job starts a new one (_ensure_process).
                ended = ended_abruptly("The lab's process")
                self._fail(job, Part.JOB, "", f"{ended}; asking again starts it anew")

    def _exchange(self, conn: Connection, job: LabJob, last: bool = True) -> bool:
        """Send ``job`` and deliver the child's replies until it ends; whether it ended
        done. A part that is not the ``last`` keeps its ``Ended`` when done (the job goes on)."""
        self._send(conn, ("job", job))
        while True:
            reply = conn.recv()
            if isinstance(reply, Ended) and reply.number == job.number:
                done = reply.outcome is Outcome.DONE
                if last or not done:
                    self._deliver(reply)
                return done
            self._deliver(reply)

    def _wait_for_compile(self, job: LabJob) -> bool:
        """Wait, cancellable, while this process prepares the encoder; False: cancelled
        meanwhile (and said)."""
        self._deliver(Progress(job.number, WAITING_FOR_COMPILE, 0, 0))
        while kernel_start.preparing():
            with self._lock:
                if self._is_cancelled(job):
                    break
                self._lock.wait(0.2)  # a cancel or a close wakes it: submit and shutdown notify
        if self._is_cancelled(job):
            self._deliver(Ended(job.number, Outcome.CANCELLED))
            return False
        return True

    def _fail(self, job: LabJob, part: Part, key: str, message: str) -> None:
        self._deliver(Failure(job.number, part, key, message))
        self._deliver(Ended(job.number, Outcome.FAILED))

    def _prepare(self, job: LabJob, conn: Connection) -> LabJob | None:
        """Fetch Hub files and send the run's data; the job as the child takes it (None:
        it failed or was cancelled meanwhile, and said so)."""
        specs: dict[str, TokenizerSpec | None] = {"a": job.a, "b": job.b}
        for name, part in (("a", Part.A), ("b", Part.B)):
            spec = specs[name]
            if spec is None:
                continue
            if spec.hub is not None:
                try:
                    spec = self._fetched(job, spec)
                except HubCancelled:
                    self._deliver(Ended(job.number, Outcome.CANCELLED))
                    return None
                except Exception as error:  # offline, gated, a bad name: the user's to hear
                    self._fail(job, part, spec.ref.key, describe_job_error(error))
                    return None
            if spec.run is not None:
                self._send_run(conn, spec, spec.run)
                spec = dataclasses.replace(spec, run=None)  # the data went ahead
            specs[name] = spec
            if self._is_cancelled(job):
                self._deliver(Ended(job.number, Outcome.CANCELLED))
                return None
        a = specs["a"]
        assert a is not None
        return dataclasses.replace(job, a=a, b=specs["b"])

    def _fetched(self, job: LabJob, spec: TokenizerSpec) -> TokenizerSpec:
        assert spec.hub is not None
        model = parse_repo(spec.hub)
        stage = f"downloading {model.name}"

        def progress(done: int, total: int | None) -> None:
            self._deliver(Progress(job.number, stage, done, total or 0))

        # Cancel, a new pick (submit) or the window's close stops the download at once.
        folder = fetch_tokenizer(model, progress, cancelled=lambda: self._is_cancelled(job))
        return dataclasses.replace(
            spec, source=str(folder / TOKENIZER_FILE), name=model.name, hub=None
        )

    def _send_run(self, conn: Connection, spec: TokenizerSpec, run: RunData) -> None:
        run_id = spec.ref.run_id
        if run.loaded is not None:
            if self._loaded_sent == run_id:
                return
            data = run.loaded.to_data()
            items = list(data.vocab.items())
            for i in range(0, len(items), SLICE):
                self._send(conn, ("loaded-vocab", items[i : i + SLICE]))
            for i in range(0, len(data.merges), SLICE):
                self._send(conn, ("loaded-merges", data.merges[i : i + SLICE]))
            rest = {
                "special_tokens": data.special_tokens,
                "pattern": data.pattern,
                "ignore_merges": data.ignore_merges,
                "pipeline": data.pipeline,
                "template": data.template,
                "added_tokens": data.added_tokens,
                "added_in_model": data.added_in_model,
                # subtle: to_data leaves the notes out; a loaded file's are said as a picked one's.
                "notes": tuple(run.loaded.notes),
            }
            self._send(conn, ("loaded-rest", run_id, rest))
            self._loaded_sent = run_id
            self._run_sent, self._merges_sent = run_id, 0
            return
        if self._run_sent != run_id:
            base = dict(run.base_vocab)
            self._send(conn, ("run-base", run_id, base, run.special_tokens, run.pattern))
            self._run_sent, self._merges_sent = run_id, 0
        end = run.merges
        for start in range(self._merges_sent, end, SLICE):
            rows = run.record[start : min(end, start + SLICE)]
            merges = [(s.new_id, s.left, s.right) for s in rows]
            self._send(conn, ("run-merges", run_id, start, merges))
        self._merges_sent = max(self._merges_sent, end)

    def _is_cancelled(self, job: LabJob) -> bool:
        return self._closed or self._cancel_mark >= job.number

    def _send(self, conn: Connection, message: tuple) -> None:
        self._between_sends()
        conn.send(message)

    def _ensure_process(self) -> Connection:
        process = self._process
        if process is not None and process.is_alive() and self._conn is not None:
            return self._conn
        self._lost_process()
        ctx = mp_context()
        if self._cancelled is None:
            with self._lock:
                self._cancelled = ctx.Value("q", self._cancel_mark)
        if self._temp is None:
            self._temp = tempfile.mkdtemp(prefix="bpe-studio-lab-")
        ours, theirs = ctx.Pipe()
        # typeshed's BaseContext lacks Process, which every concrete start method's context has.
        process = ctx.Process(  # type: ignore[attr-defined]
            target=serve, args=(theirs, self._cancelled, self._temp), name="bpe-lab"
        )
        process.start()
        theirs.close()
        self._process, self._conn = process, ours
        return ours

    def _lost_process(self) -> None:
        """The child is gone (or never was): forget what it held."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._run_sent, self._merges_sent, self._loaded_sent = None, 0, None

    def _stop_process(self) -> None:
        conn = self._conn
        if conn is not None:
            try:
                conn.send(("stop",))
            except OSError:
                pass  # gone already
