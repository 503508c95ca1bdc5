"""Ctrl-C while a tokenizer's files are written: all of them are written, then the command
stops (one file without the other would load as another tokenizer)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from bpe_studio.cli.convert import save
from bpe_studio.cli.output import EXIT_INTERRUPTED, CliError


class _SignalledMidway:
    """Writes vocab.json, is sent Ctrl-C, then writes merges.txt (as Tokenizer.save would)."""

    def save(self, out: str, fmt: str, stem: str | None) -> list[Path]:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "vocab.json").write_text("{}", encoding="utf-8")
        os.kill(os.getpid(), signal.SIGINT)
        (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
        return [folder / "vocab.json", folder / "merges.txt"]


def test_ctrl_c_while_writing_leaves_every_file_whole(tmp_path):
    out = tmp_path / "tok"
    with pytest.raises(CliError) as info:
        save(_SignalledMidway(), str(out), "gpt2", "tokenizer", force=True)  # type: ignore[arg-type]
    assert info.value.code == EXIT_INTERRUPTED
    assert "interrupted" in str(info.value) and "merges.txt" in str(info.value)
    assert sorted(p.name for p in out.iterdir()) == ["merges.txt", "vocab.json"]
    # Ctrl-C behaves as before once the files are written.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_while_writing_is_named_as_such(tmp_path, monkeypatch):
    # The note said "Ctrl-C came while writing" whatever the signal was (SIGTERM, a
    # scheduler's limit, is handled as Ctrl-C and noted by ``termination``).
    from bpe_studio.cli import termination

    monkeypatch.setattr(termination, "terminated", [signal.SIGTERM])
    with pytest.raises(CliError) as info:
        save(_SignalledMidway(), str(tmp_path / "tok"), "gpt2", "tokenizer", force=True)  # type: ignore[arg-type]
    assert "(whole: SIGTERM came while writing)" in str(info.value)
