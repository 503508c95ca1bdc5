"""``bpe-studio train --cluster`` as a user runs it (#28): the same files as local training,
from a glob of compressed files and from JSONL records; Ctrl-C mid-count (SIGINT to the whole
process group, as a terminal sends it) leaves no process running and no file written; an
unreachable scheduler is one line naming it."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_run import cli, error_line, ok
from core_helpers import EOT, REPO_ROOT, SLICES, read_fixture
from test_cli_interrupt import assert_one_quiet_line, generated_corpus

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="processes are found by session in /proc"
)


def live_in_session(sid: int) -> list[str]:
    """The processes of session ``sid`` that still run (zombies, already ended and waiting
    for init to reap them, are left out), as "pid command"."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found.append(f"{entry.name} {command}")
    return found


@pytest.mark.slow
def test_cluster_training_writes_what_local_training_writes(tmp_path):
    for i, key in enumerate(("english", "code")):
        text = read_fixture(SLICES[key])[:100_000]
        (tmp_path / f"part-{i}.txt.gz").write_bytes(gzip.compress(text.encode("utf-8")))
    with open(tmp_path / "d.jsonl", "w", encoding="utf-8") as f:
        for line in read_fixture(SLICES["tinystories"])[:50_000].split(EOT):
            f.write(json.dumps({"story": line}) + "\n")
    corpus = ("part-*.txt.gz", "d.jsonl", "--text-field", "story", "--vocab-size", 500)
    ok(cli(tmp_path, "train", *corpus, "--out", "local", "--workers", 1))
    stderr = ok(cli(tmp_path, "train", *corpus, "--out", "dask", "--cluster", "local:2"))
    assert "pre-tokenizing on the Dask cluster local:2: " in stderr
    for name in ("vocab.json", "merges.txt"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()


@pytest.mark.slow
def test_ctrl_c_while_the_cluster_counts(tmp_path):
    corpus = generated_corpus(tmp_path / "big.txt", 2**20, 12 * 2**20)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bpe_studio", "train", str(corpus), "--vocab-size", "1000",
         "--cluster", "local:2", "--out", str(out)],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            # The bar's first line: a task has ended and others are running.
            if line.startswith("pre-tokenizing ") and "%" in line:
                os.killpg(proc.pid, signal.SIGINT)
                break
        lines.extend(ln.rstrip("\n") for ln in proc.stderr)
        code = proc.wait(timeout=120)
        left = live_in_session(proc.pid)
        for _ in range(100):  # workers told to close may take a moment to be gone
            if not left:
                break
            time.sleep(0.1)
            left = live_in_session(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    status = [ln for ln in lines if ln.startswith("pre-tokenizing on the Dask cluster")]
    assert len(status) == 1, lines
    assert_one_quiet_line(code, [ln for ln in lines if ln not in status])
    assert left == []
    assert not out.exists()


def test_an_unreachable_scheduler_is_one_line_and_nothing_written(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "t.txt").write_text("some text", encoding="utf-8")
    result = cli(tmp_path, "train", "t.txt", "--vocab-size", 300, "--out", "out",
                 "--cluster", f"tcp://127.0.0.1:{port}")  # fmt: skip
    assert error_line(result) == (
        f"bpe-studio: error: --cluster tcp://127.0.0.1:{port}: nothing listens at "
        f"127.0.0.1:{port} (is `dask scheduler` running there, and the port open?)"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("local:0", "local:N takes a worker count of at least 1"),
        ("tcp://h:abc", "the port 'abc' is not a number"),
        ("inproc://x", "inproc:// names a scheduler inside one Python process"),
        ("tcp://:99999", "port 99999 is out of range (1 to 65535)"),
        ("tls://h:8786", "tls:// needs TLS certificates, and Dask's configuration names none"),
    ],
)
def test_a_bad_address_is_refused_before_any_work(tmp_path, address, reason):
    result = cli(tmp_path, "train", "absent.txt", "--vocab-size", 300, "--out", "out",
                 "--cluster", address)  # fmt: skip
    assert result.returncode == 2
    assert f"error: argument --cluster: {address}: {reason}" in result.stderr
    assert "Traceback" not in result.stderr


def test_errors_on_the_workers_are_one_line(tmp_path):
    """A record without its field and a file that is not UTF-8, raised on a worker: the one
    line, without Dask's "Compute Failed" log before it."""
    (tmp_path / "m.jsonl").write_text('{"text": "a b"}\n{"title": "b"}\n', encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"fine text\n\xff\xfe and more\n")
    for corpus, expected in (
        ("m.jsonl", "m.jsonl: line 2: no field 'text' (the record's fields: 'title')"),
        ("bad.txt", "bad.txt: not valid UTF-8 at byte offset 10 (invalid start byte)"),
    ):
        result = cli(tmp_path, "train", corpus, "--vocab-size", 300, "--out", "out",
                     "--cluster", "local:2")  # fmt: skip
        line = error_line(result)
        assert line.startswith("bpe-studio: error: ") and expected in line, line
        assert "Compute Failed" not in result.stderr and "distributed" not in result.stderr


def test_local_workers_beyond_the_machine_are_capped_saying_so(tmp_path):
    from bpe_studio.core.corpus.counting import available_cores

    (tmp_path / "t.txt").write_text("some text to count, and more text " * 50, encoding="utf-8")
    stderr = ok(cli(tmp_path, "train", "t.txt", "--vocab-size", 300, "--out", "out",
                    "--cluster", "local:100"))  # fmt: skip
    cores = available_cores()
    status = [ln for ln in stderr.splitlines() if ln.startswith("pre-tokenizing on the Dask")]
    assert status == [
        f"pre-tokenizing on the Dask cluster local:100: 1 task on {cores} "
        f"worker{'s' if cores != 1 else ''} (capped at {cores}: this machine has {cores} "
        f"core{'s' if cores != 1 else ''} and " + status[0].split(" and ", 1)[1]
    ]


@pytest.mark.slow
@pytest.mark.dask_in_process
def test_a_file_a_worker_cannot_find_is_one_line_naming_the_worker(tmp_path, monkeypatch, capsys):
    """The file exists here, but not where the worker looks: in-process, so that the tasks
    can send the worker to a path where nothing is (as another machine's file system)."""
    from dataclasses import replace

    from distributed import LocalCluster

    from bpe_studio.cli import main
    from bpe_studio.core.corpus import cluster

    corpus = tmp_path / "t.txt"
    corpus.write_text(read_fixture(SLICES["english"])[:20_000], encoding="utf-8")
    planned = cluster.make_tasks

    def sent_elsewhere(*args, **kwargs):
        absent = str(tmp_path / "elsewhere" / "t.txt")
        return [replace(t, file=replace(t.file, url=absent)) for t in planned(*args, **kwargs)]

    monkeypatch.setattr(cluster, "make_tasks", sent_elsewhere)
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=50,
    ) as lc:  # fmt: skip
        (worker,) = lc.scheduler_info["workers"]
        code = main(["train", str(corpus), "--vocab-size", "300", "--out",
                     str(tmp_path / "out"), "--cluster", lc.scheduler_address])  # fmt: skip
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("bpe-studio")]
    assert code == 1 and len(lines) == 1, lines
    assert lines[0] == (
        f"bpe-studio: error: {corpus}: the cluster's worker {worker} cannot read it at "
        f"{tmp_path / 'elsewhere' / 't.txt'} (No such "
        "file or directory), though this machine can: every worker must see the same file "
        "under that name (a shared filesystem, or the same copy on every machine)"
    )
    assert not (tmp_path / "out").exists()
