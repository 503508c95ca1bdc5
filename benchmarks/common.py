"""Shared helpers for the BPE Studio benchmarks: where the corpora are, how text slices are cut,
how GPT-2's files become a tiktoken / Hugging Face encoder, and how one measured workload runs in
a child process whose wall time and peak memory are recorded.

Nothing here measures anything by itself. Units: 1 MB = 1,000,000 bytes (of UTF-8 text, for
throughput figures); memory is reported in MiB (2**20 bytes).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

try:  # not on Windows: there the peak-memory columns read "n/a"
    import resource
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RUNNER = BENCH_DIR / "runner.py"
MB = 1_000_000
MIB = 1 << 20
SPECIAL = "<|endoftext|>"

# The GPT-2 pre-tokenization pattern, written out here (not imported from bpe_studio) so the
# peers are configured independently of the library under test.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


# --------------------------------------------------------------------------- corpora
def corpora_dir() -> Path | None:
    """``$BPE_STUDIO_CORPORA`` if set, else ``<repo root>/../shared/corpora``; None if absent."""
    env = os.environ.get("BPE_STUDIO_CORPORA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "corpora")
    for c in candidates:
        if c.is_dir():
            return c
    return None


class Skip(Exception):
    """A benchmark cannot run on this machine; it is reported as SKIP, not failed."""


class MissingCorpus(Skip):
    """A benchmark's input is not on this machine."""


def require(*modules: str) -> None:
    """Skip unless the peer libraries are installed (``pip install -e '.[bench]'``)."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise Skip(f"not installed: {', '.join(missing)} (pip install -e '.[bench]')")


def corpus(*names: str) -> list[Path]:
    """Paths of the named corpus files (relative to the corpora folder), or MissingCorpus."""
    root = corpora_dir()
    if root is None:
        raise MissingCorpus(
            "corpora folder not found: set BPE_STUDIO_CORPORA or put it at "
            f"{REPO_ROOT.parent / 'shared' / 'corpora'}"
        )
    paths = [root / n for n in names]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise MissingCorpus("corpus file(s) missing: " + ", ".join(missing))
    return paths


def line_slice(path: Path, start: int, size: int) -> bytes:
    """About ``size`` bytes of ``path`` from ``start``, cut at line boundaries: the slice begins
    just after the first line break at or after ``start`` (or at 0) and ends with the last line
    break before ``start + size`` is passed."""
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            f.readline()  # finish the line that holds byte start - 1
        begin = f.tell()
        data = f.read(size)
    if len(data) < size // 2:
        raise MissingCorpus(f"{path}: too short for {size} bytes from offset {begin}")
    cut = data.rfind(b"\n")
    if cut < 0:
        raise ValueError(f"{path}: no line break in {size} bytes from offset {begin}")
    data = data[: cut + 1]
    data.decode("utf-8")  # cut at a line break, so this cannot split a character
    return data


def write_temp(data: bytes, name: str, directory: Path) -> Path:
    p = directory / name
    p.write_bytes(data)
    return p


# --------------------------------------------------------------------------- GPT-2 peers
def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (encoder.py of openai/gpt-2)."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), 256)]
    cs = list(bs)
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def gpt2_files() -> tuple[Path, Path]:
    vocab, merges = corpus("cs336/gpt2_vocab.json", "cs336/gpt2_merges.txt")
    return vocab, merges


def tiktoken_gpt2():
    """tiktoken's GPT-2 built offline from ``gpt2_vocab.json`` (no download)."""
    import tiktoken

    vocab_path, _ = gpt2_files()
    decoder = {c: b for b, c in _bytes_to_unicode().items()}
    vocab = json.loads(vocab_path.read_text(encoding="utf-8"))
    ranks = {bytes(decoder[c] for c in tok): i for tok, i in vocab.items() if tok != SPECIAL}
    return tiktoken.Encoding(
        name="gpt2_local",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={SPECIAL: vocab[SPECIAL]},
    )


def hf_pre_tokenizer():
    """The GPT-2 regex (isolated splits), then byte-level mapping without its own regex."""
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


def hf_gpt2():
    """Hugging Face ``tokenizers`` BPE loaded from the same GPT-2 files, same pre-tokenizer."""
    from tokenizers import Tokenizer, decoders, models

    vocab_path, merges_path = gpt2_files()
    vocab = json.loads(vocab_path.read_text(encoding="utf-8"))
    merges = []
    for line in merges_path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#version"):
            a, b = line.split(" ")
            merges.append((a, b))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = hf_pre_tokenizer()
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([SPECIAL])
    return tok


def ids_digest(ids: Sequence[int]) -> tuple[int, str]:
    """(count, sha256 of the ids as little-endian uint32): compares id lists across processes
    without shipping them."""
    import hashlib

    import numpy as np

    arr = np.asarray(ids, dtype="<u4")
    return int(arr.size), hashlib.sha256(arr.tobytes()).hexdigest()


# --------------------------------------------------------------------------- child processes
def child_env() -> dict[str, str]:
    """The environment of every measured child: Hugging Face may use every core (no
    RAYON_NUM_THREADS cap), nothing buffers stdout, and the repo is importable."""
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"):
        env.pop(var, None)
    env["TOKENIZERS_PARALLELISM"] = "true"
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def _maxrss_mib(ru_maxrss: int) -> float:
    # Linux reports KiB, macOS bytes.
    return ru_maxrss / MIB if sys.platform == "darwin" else ru_maxrss / 1024


class _TreeSampler(threading.Thread):
    """Polls /proc every few ms for the summed memory of a process and all its descendants.
    Uses PSS (shared pages split between sharers, so forked workers are not double counted)
    where /proc/PID/smaps_rollup exists, else RSS. Linux only; elsewhere it reports None."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kib = 0
        self.max_procs = 0
        self.ok = Path("/proc/self/stat").exists()
        self._halt = threading.Event()

    def _descendants(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry))
        tree, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            tree.append(p)
            todo.extend(children.get(p, ()))
        return tree

    @staticmethod
    def _mem_kib(pid: int) -> int:
        # PSS where the kernel reports it, else RSS.
        for name, key in (("smaps_rollup", b"Pss:"), ("status", b"VmRSS:")):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    for line in f:
                        if line.startswith(key):
                            return int(line.split()[1])
            except OSError:
                pass
        return 0

    def run(self) -> None:
        if not self.ok:
            return
        try:  # Linux: a thread has its own nice value; keep the measured child first in line
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass
        while not self._halt.is_set():
            tree = self._descendants()
            self.max_procs = max(self.max_procs, len(tree))
            self.peak_kib = max(self.peak_kib, sum(self._mem_kib(p) for p in tree))
            self._halt.wait(self.interval)

    def stop(self) -> float | None:
        self._halt.set()
        self.join()
        return self.peak_kib / 1024 if self.ok and self.peak_kib else None


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
    # CPU that everything else on the machine used meanwhile, in cores (None off Linux):
    # other people's jobs on a shared machine make a run slower than it should be.
    background_cores: float | None = None
    result: dict = field(default_factory=dict)  # the runner's RESULT line, if any


def _busy_cpu_s() -> float | None:
    """Machine-wide busy CPU seconds so far (/proc/stat), or None where there is no /proc."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _self_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


# Before each measured child, wait (at most this many seconds) until the rest of the machine is
# quiet; 0 turns it off. On a shared machine this keeps other people's jobs out of the timings.
QUIET_MAX_WAIT_S = 20.0
QUIET_BELOW_CORES = 0.3
# ... and in all at most this long per process, so a machine that never quiets down costs a
# few minutes, not one wait per run.
QUIET_TOTAL_BUDGET_S = 180.0
_quiet_waited = 0.0


def wait_for_quiet(max_wait: float, below: float = QUIET_BELOW_CORES) -> float | None:
    """Sample machine-wide CPU use in 0.3 s windows until other processes use fewer than
    ``below`` cores or ``max_wait`` seconds have passed; return the last sample (None without
    /proc)."""
    deadline = time.monotonic() + max_wait
    while True:
        busy0, self0 = _busy_cpu_s(), _self_cpu_s()
        t0 = time.perf_counter()
        time.sleep(0.3)
        busy1, self1 = _busy_cpu_s(), _self_cpu_s()
        if busy0 is None or busy1 is None:
            return None
        load = max((busy1 - busy0) - (self1 - self0), 0.0) / (time.perf_counter() - t0)
        if load < below or time.monotonic() >= deadline:
            return load


def run_child(argv: list[str], timeout: float = 1800) -> ChildRun:
    """Run ``argv`` with :func:`child_env`; record wall time and peak memory of the tree."""
    global _quiet_waited
    allowed = min(QUIET_MAX_WAIT_S, QUIET_TOTAL_BUDGET_S - _quiet_waited)
    if allowed > 0:
        t0 = time.monotonic()
        wait_for_quiet(allowed)
        _quiet_waited += time.monotonic() - t0
    busy0, self0 = _busy_cpu_s(), _self_cpu_s()
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
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
    busy1, self1 = _busy_cpu_s(), _self_cpu_s()
    background = None
    if busy0 is not None and busy1 is not None and child_cpu is not None and wall > 0:
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


def run_workload(name: str, **params) -> ChildRun:
    """Run ``runner.py NAME PARAMS_JSON`` in a fresh interpreter; raise on failure."""
    run = run_child([sys.executable, str(RUNNER), name, json.dumps(params)])
    if run.returncode != 0 or not run.result:
        raise RuntimeError(f"workload {name} failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
    return run


# --------------------------------------------------------------------------- summaries
def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def background_note(label: str, runs: Sequence[ChildRun]) -> str | None:
    """A note on how busy the rest of the machine was during ``runs``, if measurable."""
    bg = [r.background_cores for r in runs if r.background_cores is not None]
    if not bg:
        return None
    note = (
        f"[{label}] other processes on this machine used {median(bg):.2f} cores (median), "
        f"up to {max(bg):.2f}, while these runs were timed"
    )
    if median(bg) >= QUIET_BELOW_CORES:
        note += " — **these timings are disturbed; re-run on a quiet machine**"
    return note


def fmt_mib(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.0f}"


def verdict(ratio: float, target: float, higher_is_better: bool) -> str:
    ok = ratio >= target if higher_is_better else ratio <= target
    return "PASS" if ok else "MISS"


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def scratch_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="bpe_studio_bench_")


@dataclass
class Row:
    """One line of the results table: a measured ratio against its target."""

    item: str
    what: str
    ours: str
    peer: str
    ratio: str
    target: str
    status: str  # PASS | MISS | FAIL (wrong ids) | SKIP (no corpus) | N/A


@dataclass
class MemRow:
    """Peak memory of one workload over its repetitions (each rep its own child process)."""

    what: str
    impl: str
    runs: list[ChildRun]

    def cells(self) -> list[str]:
        rss = [r.maxrss_mib for r in self.runs if r.maxrss_mib is not None]
        tree = [r.tree_peak_mib for r in self.runs if r.tree_peak_mib is not None]
        procs = max((r.max_procs for r in self.runs), default=0)
        return [
            self.what,
            self.impl,
            fmt_mib(max(rss) if rss else None),
            fmt_mib(max(tree) if tree else None),
            str(procs) if procs else "n/a",
        ]


MEM_HEADER = [
    "workload",
    "impl",
    "peak RSS, largest process (MiB)",
    "peak of whole process tree (MiB, sampled PSS)",
    "processes",
]


@dataclass
class Section:
    rows: list[Row] = field(default_factory=list)
    mem: list[MemRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def extend(self, other: Section) -> None:
        self.rows += other.rows
        self.mem += other.mem
        self.notes += other.notes


ROW_HEADER = ["#", "benchmark", "bpe_studio", "peer", "ratio", "target", "result"]


def section_markdown(sec: Section) -> str:
    parts = [
        md_table(
            ROW_HEADER,
            [[r.item, r.what, r.ours, r.peer, r.ratio, r.target, r.status] for r in sec.rows],
        )
    ]
    if sec.mem:
        parts.append(
            "Peak memory (max over repetitions):\n\n"
            + md_table(MEM_HEADER, [m.cells() for m in sec.mem])
        )
    if sec.notes:
        parts.append("\n".join(f"- {n}" for n in sec.notes))
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- machine
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1 << 20)
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
    except (ValueError, OSError, AttributeError):
        return None


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_head() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "bpe_studio"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + (" + uncommitted changes in bpe_studio/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_info() -> dict[str, str]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    ram = _ram_gib()
    return {
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": _cpu_model(),
        "cores": f"{os.cpu_count()} logical" + (f", {affinity} usable" if affinity else ""),
        "ram": f"{ram:.1f} GiB" if ram else "unknown",
        "os": platform.platform(),
        "python": platform.python_version(),
        "bpe-studio": f"{_version('bpe-studio')} (git {_git_head()})",
        "regex": _version("regex"),
        "numpy": _version("numpy"),
        "tiktoken": _version("tiktoken"),
        "tokenizers": _version("tokenizers"),
    }


def machine_markdown(info: dict[str, str]) -> str:
    return "\n".join(f"- **{k}**: {v}" for k, v in info.items())
