"""Inputs read as files: a regular file as it is; standard input (``-``), a named pipe or a
process substitution (``<(cmd)``) copied to a temporary file first.

What it does: :func:`input_files` gives, for the paths a command reads, paths of regular
files, so that every input is read the same way: measured, cut where the pattern may cut,
encoded or counted in parallel with progress, never held in memory whole. A pipe is copied
as it streams (a "reading" bar shows it on stderr); the copies are removed when the block
ends. :func:`check_input` finds a missing path or a directory before any work.
What it leaves out: what is done with the files (the commands).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from ..core.corpus.sources import is_glob_or_url
from .output import CliError
from .progress import ProgressBar

STDIN = "-"
STDIN_NAME = "<stdin>"


def input_name(user_path: str) -> str:
    """What messages call an input: ``<stdin>`` for ``-``, else the path as given."""
    return STDIN_NAME if user_path == STDIN else user_path


def check_input(user_path: str, what: str = "file", *, globs: bool = False) -> None:
    """Raise :class:`CliError` for an input that is missing or a directory. With ``globs``,
    a glob or a URL is taken as it is: the core resolves it (``sources``)."""
    if user_path == STDIN or (globs and is_glob_or_url(user_path)):
        return
    p = Path(user_path)
    if not p.exists():
        raise CliError(f"{user_path}: {what} not found")
    if p.is_dir():
        raise CliError(f"{user_path}: is a directory, not a {what}")


def is_regular(user_path: str) -> bool:
    return user_path != STDIN and stat.S_ISREG(os.stat(user_path).st_mode)


def is_stream(user_path: str) -> bool:
    """Standard input, a pipe or a device: read once, so copied to a file first."""
    if user_path == STDIN:
        return True
    return not is_glob_or_url(user_path) and not is_regular(user_path)


def _copy(source: BinaryIO, target: BinaryIO, name: str, temp_dir: str) -> None:
    bar = ProgressBar("reading", None, unit="B")
    done = 0
    while True:
        try:
            block = source.read(1 << 20)
        except OSError as e:
            raise CliError(f"{name}: cannot read it: {e.strerror}") from None
        if not block:
            break
        try:
            target.write(block)
        except OSError as e:
            raise CliError(
                f"{name}: cannot copy it to a temporary file in {temp_dir}: {e.strerror} "
                "(set TMPDIR to a folder with room)"
            ) from None
        done += len(block)
        bar.update(done)
    bar.close()


@contextmanager
def input_files(user_paths: Sequence[str]) -> Iterator[list[str]]:
    """Paths of regular files holding what ``user_paths`` hold, in order: a regular file (or a
    glob or a URL) itself, anything else (``-``, a pipe, a character device) copied into a
    temporary file,
    removed when the block ends. Errors raised in the block (``ValueError``: invalid UTF-8,
    text the pattern leaves out) that name a copy name the user's path instead."""
    with ExitStack() as stack:
        paths: list[str] = []
        copies: dict[str, str] = {}
        for user_path in user_paths:
            if not is_stream(user_path):
                paths.append(user_path)
                continue
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="bpe-studio-"))
            copy = os.path.join(folder, "input")
            name = input_name(user_path)
            with open(copy, "wb") as target:
                if user_path == STDIN:
                    _copy(sys.stdin.buffer, target, name, folder)
                else:
                    try:
                        source = open(user_path, "rb")  # noqa: SIM115 - closed just below
                    except OSError as e:
                        raise CliError(f"{name}: cannot read it: {e.strerror}") from None
                    with source:
                        _copy(source, target, name, folder)
            paths.append(copy)
            copies[copy] = name
        try:
            yield paths
        except ValueError as e:
            message = str(e)
            for copy, name in copies.items():
                message = message.replace(copy, name)
            if message == str(e):
                raise
            raise CliError(message) from None
