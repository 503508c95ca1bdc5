"""Running ``python -m bpe_studio`` from this worktree in a subprocess, and reading its
one-line errors."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from core_helpers import REPO_ROOT

PROGRESS = ("pre-tokenizing ", "merging ", "encoding ", "reading ", "decompressing ", "scanning ")
_OUT_NUMBER = itertools.count()


def _env(update: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT), **(update or {})}


def _command(args: tuple[object, ...]) -> list[str]:
    return [sys.executable, "-m", "bpe_studio", *map(str, args)]


def cli(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(args), capture_output=True, text=True, cwd=cwd, env=_env(), timeout=600
    )


def cli_bytes(
    cwd: Path, *args: object, stdin: bytes | None = None, env_update: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``cli`` with bytes in and out, ``stdin`` fed to it, ``env_update`` added to its
    environment."""
    return subprocess.run(
        _command(args), input=stdin, capture_output=True, cwd=cwd, env=_env(env_update),
        timeout=600,
    )  # fmt: skip


def ok(result: subprocess.CompletedProcess[str]) -> str:
    """stderr of a run that must have succeeded."""
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result.stderr


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one line of a failed run's stderr, besides progress bars drawn before it."""
    assert result.returncode != 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [
        ln
        for ln in result.stderr.splitlines()
        if ln.strip() and not ln.startswith(PROGRESS) and not ln.startswith(("usage:", " "))
    ]
    assert len(lines) == 1, result.stderr
    return lines[0]


def encode_ids(cwd: Path, text_path: Path, source: object, *extra: object) -> list[int]:
    """``bpe-studio encode`` of ``text_path`` with ``--tokenizer source``: the ids written."""
    out = cwd / f"ids_{next(_OUT_NUMBER)}.npy"
    ok(cli(cwd, "encode", text_path, "--tokenizer", source, *extra, "--out", out, "--workers", 1))
    return np.load(out).tolist()
