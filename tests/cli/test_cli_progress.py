"""The command line's progress bars: whole lines in logs, scaled bytes, unknown totals. Their
time-left estimate is the core's (tests/core/test_remaining.py)."""

from __future__ import annotations

import io

import pytest

from bpe_studio.cli.progress import ProgressBar


class LogStream(io.StringIO):
    """stderr redirected to a file: not a terminal."""

    def isatty(self) -> bool:
        return False


def test_in_a_log_an_eager_bar_prints_whole_lines_labelled_in_bytes():
    """In a log each line ends in a newline and starts with the label (readers, the tests
    among them, tell bars from messages so); byte counts are scaled; no line is repeated."""
    log = LogStream()
    bar = ProgressBar("encoding", 8_000_000, unit="B", eager=True, stream=log)
    bar.update(2_000_000)  # eager: a quarter done is under way, logged at once
    lines = log.getvalue().splitlines(keepends=True)
    assert len(lines) == 1 and lines[0].endswith("\n") and "\r" not in lines[0]
    assert lines[0].startswith("encoding ")
    assert "2.00MB / 8.00MB" in lines[0] and "25.0%" in lines[0]
    bar.close()  # the final state is the line already logged
    assert log.getvalue() == lines[0]
    bar.update(8_000_000)
    bar.close()
    last = log.getvalue().splitlines()[-1]
    assert last.startswith("encoding ") and "100.0%" in last and "8.00MB / 8.00MB" in last


def test_a_bar_of_unknown_total_shows_what_is_done():
    log = LogStream()
    bar = ProgressBar("reading", None, unit="B", stream=log)
    bar.update(3_000_000)
    bar.close()
    (line,) = log.getvalue().splitlines()
    assert line.startswith("reading ") and "3.00MB" in line and "%" not in line


class AsciiLog(LogStream):
    """stderr in a C locale, or with PYTHONIOENCODING=ascii."""

    encoding = "ascii"


def test_a_stream_without_block_characters_gets_an_ascii_bar():
    """The bar's blocks came out as ``\\u2588`` escapes there, six times wider, so a line
    wrapped on a terminal and bloated a log."""
    log = AsciiLog()
    bar = ProgressBar("encoding", 8_000_000, unit="B", eager=True, stream=log)
    bar.update(4_000_000)
    bar.close()
    line = log.getvalue().splitlines()[0]
    line.encode("ascii")  # nothing to escape
    assert "#" in line and "50.0%" in line
    utf8 = LogStream()  # StringIO's encoding is None: as UTF-8
    bar = ProgressBar("encoding", 8_000_000, unit="B", eager=True, stream=utf8)
    bar.update(4_000_000)
    bar.close()
    assert "\u2588" in utf8.getvalue()


def test_encode_names_a_first_compile_and_its_time_in_the_summary(tmp_path, monkeypatch, capsys):
    """A first run's compile held the command up for a minute, but the summary said "loaded
    the tokenizer in 0.3 s … encoded in 0.1 s". The compiles announced are now one line."""
    from bpe_studio.cli import encode, main
    from bpe_studio.core.encode.merging import kernel_start
    from bpe_studio.core.pretokenization import scan_load

    real = encode.encode_inputs

    def compiling_first(*args, **kwargs):
        kwargs["status"](scan_load.COMPILING)  # as the loaders say it, before compiling
        kwargs["status"](kernel_start.COMPILING)
        return real(*args, **kwargs)

    text = tmp_path / "t.txt"
    text.write_text("Hello world, hello again.\n" * 50, encoding="utf-8")
    out = tmp_path / "ids.npy"
    assert main(["encode", str(text), "--tokenizer", "gpt2", "--out", str(out)]) == 0
    assert "compiled" not in capsys.readouterr().err  # nothing compiled: no line
    monkeypatch.setattr(encode, "encode_inputs", compiling_first)
    assert main(["encode", str(text), "--tokenizer", "gpt2", "--out", str(out), "--force"]) == 0
    lines = capsys.readouterr().err.splitlines()
    said = [line for line in lines if line.startswith("compiled ")]
    assert len(said) == 1
    assert said[0].startswith("compiled the pre-tokenizer and the encoder in ")
    assert said[0].endswith(" s (once: then cached)")
    assert lines.index(said[0]) == lines.index(next(x for x in lines if x.startswith("loaded"))) + 1
    # A run that waited for another process's compile says so, not that it compiled.
    from bpe_studio.core.io import compile_lock

    # subtle: this process may have compiled kernels for earlier tests (a fresh cache).
    monkeypatch.setattr(compile_lock, "_loaded_from_another", [True])
    monkeypatch.setattr(compile_lock, "_compiled_here", [])
    assert main(["encode", str(text), "--tokenizer", "gpt2", "--out", str(out), "--force"]) == 0
    said = [x for x in capsys.readouterr().err.splitlines() if x.startswith(("compiled", "wait"))]
    assert len(said) == 1
    assert said[0].startswith("waited ") and said[0].endswith(
        " s for another process to compile the pre-tokenizer and the encoder"
    )
    # One that compiled a group itself after all (the third review) says it compiled.
    monkeypatch.setattr(compile_lock, "_compiled_here", [True])
    assert main(["encode", str(text), "--tokenizer", "gpt2", "--out", str(out), "--force"]) == 0
    said = [x for x in capsys.readouterr().err.splitlines() if x.startswith(("compiled", "wait"))]
    assert len(said) == 1 and said[0].startswith("compiled the pre-tokenizer and the encoder")


class Terminal(io.StringIO):
    """stderr on a terminal (its size is COLUMNS, as the tests set it)."""

    def isatty(self) -> bool:
        return True


class Clock:
    """``time`` as the bar reads it, moved by the test: no wall-clock in the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now


def _drawn(stream: Terminal) -> list[str]:
    """The lines a bar drew in place, without the erasing before each."""
    text = stream.getvalue().replace("\n", "")
    return [line for line in text.split("\r\x1b[2K") if line]


@pytest.mark.parametrize("columns", [20, 40, 80, 200])
@pytest.mark.parametrize(
    ("label", "total", "unit"), [("encoding", 8_000_000, "B"), ("merging", 119_744, "")]
)
def test_a_bar_on_a_terminal_fits_its_width(monkeypatch, columns, label, total, unit):
    """Found by the terminals audit: a bar was 87-107 characters, so on an 80-column
    terminal it wrapped, and erasing clears only the cursor's row: each redraw left a line
    behind (thousands over a run). Every line now fits (one column to spare), the bar
    shrinking first; the label and the share stay while they fit."""
    from bpe_studio.cli import progress

    clock = Clock()
    monkeypatch.setattr(progress, "time", clock)
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.delenv("TERM", raising=False)
    stream = Terminal()
    bar = ProgressBar(label, total, unit=unit, stream=stream)
    for k in range(1, 40):
        clock.now += 0.5  # past MIN_SECONDS: the time left is shown too
        bar.update(total * k // 50)
    bar.close()
    lines = _drawn(stream)
    assert len(lines) >= 39
    assert all(len(line) < columns for line in lines), max(lines, key=len)
    last = lines[-1]
    assert last.startswith(label) and "78.0%" in last
    if columns >= 80:
        assert "\u2588" in last and "left" in last  # the bar and the time left fit there


def test_a_bar_follows_a_resized_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    stream = Terminal()
    bar = ProgressBar("merging", 1000, stream=stream)
    bar.update(500)
    monkeypatch.setenv("COLUMNS", "30")
    bar.close()
    wide, narrow = _drawn(stream)
    assert len(wide) > 60 and len(narrow) < 30 and "50.0%" in narrow


def test_a_dumb_terminal_gets_no_escape_sequence(monkeypatch):
    """TERM=dumb (Emacs' shell) shows escape sequences as text: a bar redraws with a
    carriage return and spaces, and so do the lines written over it."""
    from bpe_studio.cli import output

    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setenv("TERM", "dumb")
    stream = Terminal()
    bar = ProgressBar("merging", 1000, stream=stream)
    bar.update(500)
    bar.close()
    monkeypatch.setattr("sys.stderr", stream)
    output.say("compiling the encoder")
    output.fail("it went wrong")
    text = stream.getvalue()
    assert "\x1b" not in text
    assert text.count("\r" + " " * 39 + "\r") == 4
    assert "merging" in text and "compiling the encoder\n" in text
    assert "bpe-studio: error: it went wrong\n" in text


@pytest.mark.parametrize("columns", ["abc", "0", "-3", ""])
def test_a_columns_that_is_no_width_leaves_the_terminals_own(monkeypatch, columns):
    """The review: COLUMNS set to no positive number made bars ignore stderr's own 40
    columns (stdout piped), so they were 79 wide there, and wrapped."""
    import io
    import os

    from bpe_studio.cli import terminal

    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setattr(terminal.os, "get_terminal_size", lambda fd: os.terminal_size((40, 24)))
    # Standard output piped: shutil answers its fallback.
    monkeypatch.setattr(
        terminal.shutil, "get_terminal_size", lambda fallback: os.terminal_size(fallback)
    )

    class Stderr(io.StringIO):
        def fileno(self) -> int:
            return 2

    assert terminal.width(Stderr()) == 39
    monkeypatch.setenv("COLUMNS", "120")  # a real number still wins, as shutil reads it
    assert terminal.width(Stderr()) == 119
