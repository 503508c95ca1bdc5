"""``bpe-studio --help`` and each command's help, read as a new user would (#10, #11 item 18):
every command and every option says what it is for."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest
from cli_run import cli, ok
from core_helpers import REPO_ROOT

from bpe_studio.cli.parser import build_parser

COMMANDS = ["gui", "train", "encode", "decode", "convert", "inspect"]
NO_DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            # Each command declares its options when it is used (parser.Command).
            return {name: command.declare() for name, command in action.choices.items()}
    raise AssertionError("no commands")


def test_every_option_of_every_command_has_help():
    parser = build_parser()
    commands = _subparsers(parser)
    assert sorted(commands) == sorted(COMMANDS)
    for name, command in [("bpe-studio", parser), *commands.items()]:
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and action.help.strip(), f"{name} {action.option_strings}"


@pytest.mark.parametrize("command", COMMANDS[1:])
def test_help_runs_and_names_the_new_options(tmp_path, command):
    stdout = cli(tmp_path, command, "--help").stdout
    ok(cli(tmp_path, command, "--help"))
    if command in ("train", "encode", "convert"):
        assert "--pattern" in stdout and "o200k" in stdout
    if command in ("encode", "decode", "convert"):
        assert "cl100k_base" in stdout and "tokenizer.json" in stdout and ".tiktoken" in stdout
    if command == "convert":
        assert "--force" in stdout and "gpt2" in stdout and "hf" in stdout


def test_top_level_help_lists_convert(tmp_path):
    result = cli(tmp_path, "--help")
    ok(result)
    assert "convert" in result.stdout


def test_top_level_help_says_inspect_reports_on_stdout():
    """The terminals audit: the help said summaries go to stderr, but inspect's summary is
    its data, on stdout."""
    text = " ".join(build_parser().format_help().split())
    assert "the summaries of train, encode, decode and convert" in text
    assert "stdout carries only data (--out -, and inspect's report, which is its data)" in text


def test_without_a_display_every_headless_command_is_named(tmp_path):
    # The message lists the parser's commands (convert was missing, #32).
    env = {k: v for k, v in os.environ.items() if k not in NO_DISPLAY_VARIABLES}
    result = subprocess.run(
        [sys.executable, "-m", "bpe_studio"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(REPO_ROOT)},
        timeout=120,
    )
    assert result.returncode == 2
    for command in COMMANDS[1:]:
        assert f"`bpe-studio {command}`" in result.stderr, result.stderr


def test_a_file_given_where_a_command_goes_is_said_to_be_one(tmp_path):
    """Found by the first-hour audit: "bpe-studio corpus.txt" said only "invalid choice"."""
    (tmp_path / "my corpus.txt").write_text("text", encoding="utf-8")
    result = cli(tmp_path, "my corpus.txt")
    assert result.returncode == 2
    assert "is a file: open it in the app with bpe-studio gui 'my corpus.txt'" in result.stderr
    assert "is a file" not in cli(tmp_path, "nonsense").stderr


def test_an_unknown_option_of_a_command_shows_the_commands_usage(tmp_path):
    """The CLI audit: "encode ... --bogus" printed the program's usage ("bpe-studio [-h]
    [--version] [--demo] COMMAND ..."), which lists none of encode's options, where the
    README says the line follows the command's usage."""
    result = cli(tmp_path, "encode", "x.txt", "--tokenizer", "gpt2", "--out", "x.npy", "--bogus")
    assert result.returncode == 2
    usage, *_, last = result.stderr.splitlines()
    assert usage.startswith("usage: bpe-studio encode ")
    assert last == "bpe-studio encode: error: unrecognized arguments: --bogus"
    alone = cli(tmp_path, "--bogus")
    assert alone.returncode == 2
    assert alone.stderr.splitlines()[-1] == "bpe-studio: error: unrecognized arguments: --bogus"


@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize("args", [("--help",), ("--version",), ("train", "--help")])
def test_help_or_version_to_a_full_device_says_so(tmp_path, args, buffered):
    """A hostile-machine audit: ``--help > /dev/full`` exited 0, silent (argparse drops a
    write that fails; Python, buffering, a flush that fails at exit); other output errors
    are one line and exit 1."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update({"PYTHONPATH": str(REPO_ROOT), **({} if buffered else {"PYTHONUNBUFFERED": "1"})})
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "bpe_studio", *args], stdout=full, stderr=subprocess.PIPE,
            text=True, cwd=tmp_path, env=env, timeout=120,
        )  # fmt: skip
    assert (result.returncode, result.stderr) == (
        1,
        "bpe-studio: error: standard output: cannot write there: No space left on device\n",
    )
