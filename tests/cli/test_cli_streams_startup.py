"""Start-up and standard error (#32): Ctrl-C at any moment, start-up included, is one line and
exit 130 (a traceback while modules loaded); ``--help`` and ``--version`` load none of the
heavy modules; a closed stderr (``2>&-``) or one whose reader has gone (``2>&1 | head``)
costs nothing but the messages: the files are written and the exit code is the command's.

The interrupt is sent by the program to itself from an audit hook as a given module starts
to import (a ``sitecustomize`` on the path), so it lands while modules load every time,
with no timing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from core_helpers import EOT, REPO_ROOT, slice_head, write_text

pytestmark = pytest.mark.skipif(not hasattr(os, "kill"), reason="POSIX signals and descriptors")

INTERRUPT_AT_IMPORT = """\
import os, signal, sys

_target = os.environ.get("BPE_TEST_INTERRUPT_AT")
_sent = []


def _hook(event, args):
    if event == "import" and args[0] == _target and not _sent:
        _sent.append(1)
        os.kill(os.getpid(), signal.SIGINT)


sys.addaudithook(_hook)
"""


def run(cwd: Path, *args: object, env: dict[str, str] | None = None, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "bpe_studio", *map(str, args)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
        timeout=300,
        **kwargs,
    )


@pytest.mark.parametrize(
    "module",
    [
        "typing",
        "bpe_studio.cli",
        "bpe_studio.cli.parser",
        "bpe_studio.core.pretokenization.pretokenizer",
        "regex",
        "bpe_studio.cli.train",
        "bpe_studio.core.train.trainer",
        "numpy",
    ],
)
def test_ctrl_c_while_modules_load_is_one_line(tmp_path, module):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(INTERRUPT_AT_IMPORT, encoding="utf-8")
    corpus = write_text(tmp_path / "c.txt", slice_head("english", 20_000))
    env = {"PYTHONPATH": f"{hooks}{os.pathsep}{REPO_ROOT}", "BPE_TEST_INTERRUPT_AT": module}
    result = run(tmp_path, "train", corpus, "--vocab-size", 300, "--engine", "compiled",
                 "--out", tmp_path / "out", env=env, capture_output=True, text=True)  # fmt: skip
    assert (result.returncode, result.stderr) == (130, "bpe-studio: error: interrupted\n")
    assert not (tmp_path / "out").exists()


HEAVY = ("numpy", "regex", "tokenizers", "tqdm", "huggingface_hub", "fsspec", "numba")


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["gui", "--help"]])
def test_help_and_version_load_nothing_heavy(tmp_path, args):
    script = (
        "import sys\n"
        "from bpe_studio.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        timeout=60,
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"


def _train_args(tmp_path: Path, out: str) -> list[object]:
    corpus = write_text(tmp_path / "c.txt", (slice_head("english", 60_000) + EOT) * 3)
    return ["train", corpus, "--vocab-size", 400, "--out", tmp_path / out]


def test_a_closed_stderr_costs_nothing_but_the_messages(tmp_path):
    shown = run(tmp_path, *_train_args(tmp_path, "shown"), capture_output=True)
    assert shown.returncode == 0
    closed = run(tmp_path, *_train_args(tmp_path, "closed"), stdout=subprocess.DEVNULL,
                 preexec_fn=lambda: os.close(2))  # fmt: skip  # as 2>&-
    assert closed.returncode == 0
    for name in ("vocab.json", "merges.txt"):
        assert (tmp_path / "closed" / name).read_bytes() == (tmp_path / "shown" / name).read_bytes()


def test_a_stderr_whose_reader_has_gone_costs_nothing_but_the_messages(tmp_path):
    shown = run(tmp_path, *_train_args(tmp_path, "shown"), capture_output=True)
    assert shown.returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `2>&1 | head -0`: every write to stderr meets a closed pipe
    try:
        gone = run(tmp_path, *_train_args(tmp_path, "gone"), stdout=subprocess.DEVNULL,
                   stderr=write_end)  # fmt: skip
    finally:
        os.close(write_end)
    assert gone.returncode == 0
    for name in ("vocab.json", "merges.txt"):
        assert (tmp_path / "gone" / name).read_bytes() == (tmp_path / "shown" / name).read_bytes()
    # An error is still an error when nobody reads it.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        args = ["train", tmp_path / "absent.txt", "--vocab-size", 300, "--out", tmp_path / "x"]
        failed = run(tmp_path, *args, stdout=subprocess.DEVNULL, stderr=write_end)
    finally:
        os.close(write_end)
    assert failed.returncode == 1
