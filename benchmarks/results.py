"""What a benchmark reports: rows of measured ratios against their targets, peak-memory rows,
notes, and the Markdown they are printed as.

Takes finished :class:`child.ChildRun` records; running and timing them is ``child.py``'s job,
describing the machine ``machine.py``'s.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import quiet
from child import ChildRun


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
    if median(bg) >= quiet.QUIET_BELOW_CORES:
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
