"""A description of the machine and software a benchmark ran on, for the results file: CPU,
cores, RAM, OS, Python, the library's version and git commit, and the peers' versions.

Describes only; it measures nothing that a result depends on.
"""

from __future__ import annotations

import ast
import datetime as _dt
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import psutil
from corpora import REPO_ROOT


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _bpe_studio_version() -> str:
    """``__version__`` of the checkout being measured (the one version source), read without
    importing it: the installed distribution may be another checkout's."""
    init = REPO_ROOT / "bpe_studio" / "__init__.py"
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            return str(ast.literal_eval(node.value))
    return "unknown"


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
    ram = psutil.virtual_memory().total / (1 << 30)
    return {
        "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": _cpu_model(),
        "cores": f"{os.cpu_count()} logical" + (f", {affinity} usable" if affinity else ""),
        "ram": f"{ram:.1f} GiB",
        "os": platform.platform(),
        "python": platform.python_version(),
        "bpe-studio": f"{_bpe_studio_version()} (git {_git_head()})",
        "regex": _version("regex"),
        "numpy": _version("numpy"),
        "tiktoken": _version("tiktoken"),
        "tokenizers": _version("tokenizers"),
    }


def machine_markdown(info: dict[str, str]) -> str:
    return "\n".join(f"- **{k}**: {v}" for k, v in info.items())
