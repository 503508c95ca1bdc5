"""One measured workload in a child process: its environment, its wall time, its peak memory
(largest process from ``wait4``, and the whole process tree sampled with psutil) and how busy
the rest of the machine was meanwhile.

What the child does is up to its command line (``runner.py`` for the library workloads); the
timings that matter are usually taken inside it and returned on its ``RESULT {json}`` line.
Summaries and tables are left to ``results.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import psutil
import quiet
from corpora import BENCH_DIR, MIB, REPO_ROOT

RUNNER = BENCH_DIR / "runner.py"


def child_env() -> dict[str, str]:
    """The environment of every measured child: Hugging Face may use every core (no
    RAYON_NUM_THREADS cap), nothing buffers stdout, and the repo is importable."""
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"):
        env.pop(var, None)
    env["TOKENIZERS_PARALLELISM"] = "true"
    env["PYTHONUNBUFFERED"] = "1"
    # A user's install has its modules' bytecode (pip compiles it); a session that sets
    # PYTHONDONTWRITEBYTECODE would make every child compile numba's ~370 modules again
    # (0.55 s of CPU of the 0.78 its import took here).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def cpu_seconds() -> float:
    """CPU seconds of this process (all threads) and its reaped children (pool workers): what
    a child reports beside its wall time, steadier than it on a shared machine."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return time.process_time()
    return sum(
        r.ru_utime + r.ru_stime
        for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )


def _maxrss_mib(ru_maxrss: int) -> float:
    # Linux reports KiB, macOS bytes.
    return ru_maxrss / MIB if sys.platform == "darwin" else ru_maxrss / 1024


def _memory_bytes(proc: psutil.Process) -> int:
    """PSS where the OS reports it (Linux: shared pages split between their sharers, so forked
    workers are not counted twice), else RSS; 0 for a process that is gone."""
    try:
        try:
            pss = getattr(proc.memory_full_info(), "pss", None)
        except psutil.AccessDenied:
            pss = None
        return pss if pss is not None else proc.memory_info().rss
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return 0


class _TreeSampler(threading.Thread):
    """Samples every few ms the summed memory (see :func:`_memory_bytes`) of a process and all
    its descendants, keeping the peak and the largest number of processes seen at once."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.peak_bytes = 0
        self.max_procs = 0
        self._halt = threading.Event()
        try:
            self._root: psutil.Process | None = psutil.Process(pid)
        except psutil.NoSuchProcess:  # exited before sampling began
            self._root = None

    def _tree(self) -> list[psutil.Process]:
        assert self._root is not None
        try:
            return [self._root, *self._root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def run(self) -> None:
        if self._root is None:
            return
        try:  # Linux: a thread has its own nice value; keep the measured child first in line
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass
        while not self._halt.is_set():
            tree = self._tree()
            self.max_procs = max(self.max_procs, len(tree))
            self.peak_bytes = max(self.peak_bytes, sum(_memory_bytes(p) for p in tree))
            self._halt.wait(self.interval)

    def stop(self) -> float | None:
        """Stop sampling; the peak in MiB, or None if nothing was sampled."""
        self._halt.set()
        self.join()
        return self.peak_bytes / MIB if self.peak_bytes else None


@dataclass
class ChildRun:
    """One measured child process."""

    argv: list[str]
    returncode: int
    wall_s: float  # the whole child, start-up included, timed from outside
    stdout: str
    stderr: str
    maxrss_mib: float | None  # largest single process in the tree (wait4 ru_maxrss)
    tree_peak_mib: float | None  # sampled sum over the live tree (PSS), see _TreeSampler
    max_procs: int = 0
    # CPU that everything else on the machine used meanwhile, in cores (None where wait4 is
    # missing): other people's jobs on a shared machine make a run slower than it should be.
    background_cores: float | None = None
    result: dict = field(default_factory=dict)  # the runner's RESULT line, if any


def run_child(
    argv: list[str],
    timeout: float = 1800,
    extra_env: dict[str, str] | None = None,
    wait_quiet: bool = True,
) -> ChildRun:
    """Run ``argv`` with :func:`child_env` (and ``extra_env``); record wall time and peak
    memory of the tree. ``wait_quiet``: first wait (bounded) for the machine to be quiet
    (``quiet.wait_within_budget``)."""
    if wait_quiet:
        quiet.wait_within_budget()
    busy0, self0 = quiet.busy_cpu_s(), quiet.self_cpu_s()
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**child_env(), **(extra_env or {})},
        cwd=REPO_ROOT,
        text=True,
    )
    sampler = _TreeSampler(proc.pid)
    sampler.start()
    # Read the pipes on threads so a chatty child cannot block; reap with wait4 for rusage.
    out: dict[str, str] = {}

    def drain(name: str, stream) -> None:
        out[name] = stream.read()

    readers = [
        threading.Thread(target=drain, args=("stdout", proc.stdout), daemon=True),
        threading.Thread(target=drain, args=("stderr", proc.stderr), daemon=True),
    ]
    for r in readers:
        r.start()
    maxrss = child_cpu = None
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        if hasattr(os, "wait4"):
            _, status, usage = os.wait4(proc.pid, 0)
            returncode = os.waitstatus_to_exitcode(status)
            proc.returncode = returncode
            maxrss = _maxrss_mib(usage.ru_maxrss)
            child_cpu = usage.ru_utime + usage.ru_stime
        else:  # pragma: no cover
            returncode = proc.wait()
    finally:
        timer.cancel()
    wall = time.perf_counter() - start
    tree_peak = sampler.stop()
    for r in readers:
        r.join()
    busy1, self1 = quiet.busy_cpu_s(), quiet.self_cpu_s()
    background = None
    if child_cpu is not None and wall > 0:
        others = (busy1 - busy0) - child_cpu - (self1 - self0)
        background = max(others, 0.0) / wall
    run = ChildRun(
        argv=argv,
        returncode=returncode,
        wall_s=wall,
        stdout=out.get("stdout", ""),
        stderr=out.get("stderr", ""),
        maxrss_mib=maxrss,
        tree_peak_mib=tree_peak,
        max_procs=sampler.max_procs,
        background_cores=background,
    )
    for line in run.stdout.splitlines():
        if line.startswith("RESULT "):
            run.result = json.loads(line[len("RESULT ") :])
    return run


def run_workload(name: str, extra_env: dict[str, str] | None = None, **params) -> ChildRun:
    """Run ``runner.py NAME PARAMS_JSON`` in a fresh interpreter; raise on failure."""
    run = run_child([sys.executable, str(RUNNER), name, json.dumps(params)], extra_env=extra_env)
    if run.returncode != 0 or not run.result:
        raise RuntimeError(f"workload {name} failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
    return run


def run_json_child(argv: list[str], extra_env: dict[str, str] | None = None) -> dict:
    """Run ``argv`` (a script whose last line of output is one JSON object of its own
    timings, as the training benchmarks' ``--child`` modes print) as :func:`run_child` does,
    without waiting for quiet (those benchmarks alternate their runs instead); return that
    object with ``peak_mib`` (the sampled peak of the process tree) and ``process_s`` (the
    child's whole wall time, interpreter start-up and imports included). Raises
    RuntimeError, with the end of its stderr, when the child fails."""
    run = run_child(argv, extra_env=extra_env, wait_quiet=False)
    lines = run.stdout.strip().splitlines()
    if run.returncode or not lines:
        raise RuntimeError(
            f"{' '.join(argv[1:])} failed (exit {run.returncode}):\n{run.stderr[-3000:]}"
        )
    result = json.loads(lines[-1])
    result["peak_mib"] = run.tree_peak_mib or 0.0
    result["process_s"] = run.wall_s
    return result
