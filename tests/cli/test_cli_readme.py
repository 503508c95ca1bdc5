"""The README's command-line examples run as written (#32).

The commands are read from the README itself, not copied here: every inline command of its
"Command line" and "Counting on a cluster" sections that starts with ``bpe-studio`` or pipes
into it (``zstdcat web.jsonl.zst | bpe-studio train - --records jsonl ...``), and the guarded
Python script of "Counting on a cluster". They run in bash (``pipefail``: a failing stage of a
pipe fails the example) in a folder holding the files they name, made here from the fixtures:
``web.jsonl.zst``, ``shards/*.jsonl.zst``, ``x.txt``, ``corpus.txt``; ``T`` (a tokenizer the
reader fills in) is the GPT-2 preset, and a ``bpe-studio`` on PATH runs this worktree.

Oracles: tiktoken built offline from GPT-2's files for the ids (each record alone, files in
the glob's sorted order), ``x.txt``'s own bytes for the encode | decode round trip, and the
vocabulary rule (256 bytes + 1 special token + one token per merge) for the script."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import zstandard
from cli_run import _env
from core_helpers import EOT, REPO_ROOT, SLICES, read_fixture, slice_head
from test_cli_sources import tiktoken_encoding

README = REPO_ROOT / "README.md"
SECTIONS = ("Command line", "Counting on a cluster")
# What the reader puts for each placeholder the README's commands leave open.
PLACEHOLDERS = {"T": "gpt2"}


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def inline_commands() -> list[str]:
    """The README's inline commands, each on one line (a span may wrap in the Markdown)."""
    found = []
    for title in SECTIONS:
        prose = re.sub(r"```.*?```", "", section(title), flags=re.DOTALL)
        for span in re.findall(r"`([^`]+)`", prose):
            command = " ".join(span.split())
            if command.split()[0] in ("bpe-studio", "zstdcat"):
                found.append(command)
    return found


def python_examples() -> list[str]:
    """The Python scripts of the cluster section that start a local cluster."""
    blocks = re.findall(r"```python\n(.*?)```", section("Counting on a cluster"), re.DOTALL)
    return [re.sub(r"^ {2}", "", b, flags=re.MULTILINE) for b in blocks if "cluster=" in b]


def fill(command: str) -> str:
    words = [PLACEHOLDERS.get(w, w) for w in command.split(" ")]
    return " ".join(words)


def web_docs(start: int, n: int) -> list[str]:
    lines = read_fixture(SLICES["mixed_web"]).split("\n")
    return [p for p in lines if p.strip() and EOT not in p][start : start + n]


def jsonl_zst(path: Path, field: str, docs: list[str]) -> None:
    data = "".join(json.dumps({field: d, "id": i}) + "\n" for i, d in enumerate(docs))
    path.write_bytes(zstandard.compress(data.encode("utf-8")))


def command_bin(folder: Path) -> Path:
    """A folder with ``bpe-studio`` (this worktree's) and, where the system has none,
    a ``zstdcat`` made with zstandard."""
    folder.mkdir()
    tool = folder / "bpe-studio"
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m bpe_studio "$@"\n')
    tool.chmod(0o755)
    if shutil.which("zstdcat") is None:
        zstdcat = folder / "zstdcat"
        zstdcat.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" -c "import sys, zstandard; '
            "zstandard.ZstdDecompressor().copy_stream(open(sys.argv[1], 'rb'), "
            'sys.stdout.buffer)" "$1"\n'
        )
        zstdcat.chmod(0o755)
    return folder


def run(cwd: Path, command: str) -> subprocess.CompletedProcess[bytes]:
    env = _env({"PATH": os.pathsep.join([str(cwd / "bin"), os.environ.get("PATH", "")])})
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


def succeeded(result: subprocess.CompletedProcess[bytes], command: str) -> None:
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0, f"{command}\n{stderr}"
    assert "Traceback" not in stderr, f"{command}\n{stderr}"


def test_the_readme_names_the_examples_checked_here():
    """The extraction finds the examples (else the test below would check nothing)."""
    commands = inline_commands()
    assert any(c.startswith("zstdcat ") and " train - --records " in c for c in commands)
    assert any(" encode 'shards/*.jsonl.zst' " in c for c in commands)
    assert any(" encode x.txt " in c and "| bpe-studio decode -" in c for c in commands)
    assert python_examples()


def test_readme_commands_run_as_written(tmp_path):
    command_bin(tmp_path / "bin")
    jsonl_zst(tmp_path / "web.jsonl.zst", "content", web_docs(0, 60))
    (tmp_path / "shards").mkdir()
    shards = {"part-1.jsonl.zst": web_docs(60, 20), "part-0.jsonl.zst": web_docs(80, 20)}
    for name, docs in shards.items():
        jsonl_zst(tmp_path / "shards" / name, "text", docs)
    x_txt = slice_head("english", 60_000).encode("utf-8")
    (tmp_path / "x.txt").write_bytes(x_txt)
    gpt2 = tiktoken_encoding("gpt2")

    commands = inline_commands()
    for command in commands:
        filled = fill(command)
        result = run(tmp_path, filled)
        succeeded(result, filled)
        if " train " in filled:
            out = tmp_path / filled.split("--out ")[1].split()[0]
            merges = (out / "merges.txt").read_text(encoding="utf-8").splitlines()
            assert [m for m in merges if not m.startswith("#")], filled
        elif "| bpe-studio decode -" in filled:
            assert result.stdout == x_txt, filled
        elif "shards/" in filled:
            expected = [
                i for name in sorted(shards) for d in shards[name] for i in gpt2.encode_ordinary(d)
            ]
            assert np.load(tmp_path / "ids.npy").tolist() == expected, filled


def test_readme_cluster_script_runs_as_written(tmp_path):
    (tmp_path / "corpus.txt").write_text(
        slice_head("tinystories", 40_000), encoding="utf-8", newline=""
    )
    for script in python_examples():
        # Appended, not changed: it reads what the example's guarded block made.
        check = '\nif __name__ == "__main__":\n    print(len(vocab), len(merges))\n'
        path = tmp_path / "example.py"
        path.write_text(script + check, encoding="utf-8")
        result = subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=_env(),
            timeout=600,
        )
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
        vocab, merges = map(int, result.stdout.split())
        assert merges > 0 and vocab == 256 + 1 + merges
