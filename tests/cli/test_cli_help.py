"""``bpe-studio --help`` and each command's help, read as a new user would (#10, #11 item 18):
every command and every option says what it is for."""

from __future__ import annotations

import argparse

import pytest
from cli_run import cli, ok

from bpe_studio.cli.parser import build_parser

COMMANDS = ["gui", "train", "encode", "decode", "convert", "inspect"]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
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
