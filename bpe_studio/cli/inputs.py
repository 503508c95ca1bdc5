"""Inputs read as files: a regular file as it is; standard input (``-``), a named pipe or a
process substitution (``<(cmd)``) copied to a temporary file first.

What it does: :func:`input_files` gives, for the paths a command reads, paths of regular
files, so that every input is read the same way: measured, cut where the pattern may cut,
encoded or counted in parallel with progress, never held in memory whole. A pipe is copied
as it streams (a "reading" bar shows it on stderr); the copies are removed when the block
ends. A copy's name says what its first bytes show, which a pipe's name cannot: gzip, bzip2,
xz or zstd compression (read decompressed), a Parquet file. ``--records jsonl|parquet`` says
that the inputs hold records (:func:`records`); without it, a stream or a ``.json`` file
whose first line is a JSON object is refused with one line saying so
(:func:`check_not_records`), rather than trained on its JSON syntax.
:func:`check_input` finds a missing path, a directory or a device read without end
(``/dev/zero``) before any work; a stream's first block is looked at before the rest is copied.
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

from ..core.corpus.compressed import compression_in
from ..core.corpus.records import unsaid_records
from ..core.corpus.sources import (
    NUL_WINDOW,
    TAR_BLOCK,
    CorpusFile,
    check_text_head,
    is_glob_or_url,
    local_glob,
    repeated_file,
    twice_said,
)
from ..core.corpus.stamps import is_devnull, link_loop, reports_empty_but_is_not
from .output import CliError, Matched, shell_word
from .progress import ProgressBar

STDIN = "-"
STDIN_NAME = "<stdin>"
# --records: what the inputs hold ("none": plain text, even where the first line is JSON).
RECORDS_CHOICES = ("jsonl", "parquet", "none")
# A Parquet file's first bytes (a compression's are the core's: ``compression_in``).
_PARQUET = b"PAR1"


def records(choice: str | None) -> str | None:
    """The core's ``records`` for a ``--records`` value: "text" for "none" (plain text,
    whatever the names say), None when none was given (each name says)."""
    return "text" if choice == "none" else choice


def _suffix(head: bytes) -> str:
    """The suffix that names what a stream beginning with ``head`` holds ("" for text)."""
    if head.startswith(_PARQUET):
        return ".parquet"
    compression = compression_in(head)
    return "" if compression is None else f".{compression}"


def check_not_records(
    files: Sequence[CorpusFile], choice: str | None, copies: dict[str, str]
) -> None:
    """Without ``--records``, refuse a plain-text input whose name says nothing of what it
    holds (a stream's copy, or a ``.json`` file) when its first line is a JSON object: it
    would be trained on as text, braces and field names included. ``copies`` maps a copy's
    path to the name the user gave."""
    if choice is not None:
        return
    f = unsaid_records(files, copies)
    if f is not None:
        name = copies.get(f.url, f.name)
        raise CliError(
            f"{name}: its first line is a JSON object: give --records jsonl to read each "
            "record's text field (--text-field, default text), or --records none to read "
            "it as plain text"
        )


STDIN_FILE = "/dev/stdin"


def stdin_input(user_paths: Sequence[str]) -> list[str]:
    """``[STDIN_FILE]`` when ``-`` is among the inputs and standard input is a regular file
    (``< c.txt``), so that the output rule sees that file as an input too; else none."""
    if STDIN not in user_paths or not os.path.exists(STDIN_FILE):
        return []
    try:
        regular = stat.S_ISREG(os.fstat(0).st_mode)
    except OSError:
        return []
    return [STDIN_FILE] if regular else []


_STDIN_NAMES = frozenset({STDIN_FILE, "/dev/fd/0", "/proc/self/fd/0"})


def check_stdin_once(user_paths: Sequence[str], what: str = "input") -> None:
    """:class:`CliError` when standard input is named twice (``-`` twice, or ``-`` and
    ``/dev/stdin``): it can be read once, and the second would read nothing."""

    def is_stdin(path: str) -> bool:
        # subtle: by name, not by what the name resolves to: with standard input redirected
        # from a file (< a.txt), /dev/stdin resolves to a.txt, which may be named as well.
        return path == STDIN or os.path.abspath(path) in _STDIN_NAMES

    if sum(map(is_stdin, user_paths)) > 1:
        raise CliError(
            f"{STDIN_NAME}: given twice as {what} (standard input is read once; the second "
            "would be empty)"
        )


def input_name(user_path: str) -> str:
    """What messages call an input: ``<stdin>`` for ``-``, else the path as given."""
    return STDIN_NAME if user_path == STDIN else user_path


# How decode's ids reach it through a pipe.
IDS_PIPE = "bpe-studio encode ... --out - | bpe-studio decode - ..."


def check_input(
    user_path: str, what: str = "file", *, globs: bool = False, ids: bool = False
) -> None:
    """Raise :class:`CliError` for an input that is missing or a directory. With ``globs``,
    a glob or a URL is taken as it is: the core resolves it (``sources``). ``ids``: the
    input is a ``.npy`` of ids, binary, which nobody types: a terminal is refused (decode
    waited at one, silently, for bytes that never come)."""
    if not user_path:
        # Path("") is the current folder: it was said to be "a directory, not a file".
        raise CliError(f"'': the {what} name is empty (an unset shell variable?); name the {what}")
    if user_path.startswith("memory://"):
        raise CliError(
            f"{user_path}: memory:// files live inside one Python process, and a command "
            "starts with none; name a file (from Python, train_bpe reads memory:// URLs)"
        )
    if user_path == STDIN:
        if sys.stdin is None:  # Python makes a closed one None
            piped = f"the ids in ({IDS_PIPE})" if ids else "the text in"
            raise CliError(f"{STDIN_NAME}: it is closed (<&-); name a file, or pipe {piped}")
    elif globs and is_glob_or_url(user_path):
        return
    else:
        p = Path(user_path)
        if not p.exists():
            raise CliError(f"{user_path}: {link_loop(p) or f'{what} not found'}")
        if p.is_dir():
            article = "an" if what[0] in "aeiou" else "a"  # "an ids file"
            raise CliError(f"{user_path}: is a directory, not {article} {what}")
    check_not_endless(user_path, what)
    if ids and _is_terminal(user_path, unknown=False):
        raise CliError(
            f"{input_name(user_path)}: is a terminal, and the ids are binary (.npy bytes), "
            f"which are not typed: pipe them in ({IDS_PIPE}) or name the .npy file"
        )


def check_not_endless(user_path: str, what: str = "file") -> None:
    """Raise :class:`CliError` for an input that is a character device other than a terminal
    or ``/dev/null`` (``/dev/zero``, ``/dev/urandom``): read as a stream, it was copied to a
    temporary file without end before anything looked at it."""
    try:
        st = os.fstat(0) if user_path == STDIN else os.stat(user_path)
    except OSError:
        return  # what reading it meets is said then, naming it
    if not stat.S_ISCHR(st.st_mode) or is_devnull(st):
        return
    if _is_terminal(user_path):
        return  # text typed until Ctrl-D
    # The device itself (/dev/stdin, /dev/fd/0 name the one it reads on Linux).
    device = os.path.realpath(STDIN_FILE if user_path == STDIN else user_path)
    raise CliError(
        f"{input_name(user_path)}: is a character device ({shell_word(device)}), not a "
        f"{what}: one that is no terminal and not /dev/null (/dev/zero, /dev/urandom) is read "
        "without end, and holds no text; name a text file, or pipe one in"
    )


def _is_terminal(user_path: str, unknown: bool = True) -> bool:
    """Whether ``user_path`` (or standard input) is a terminal; for one that cannot be
    opened, ``unknown`` (reading it says why, naming it)."""
    if user_path == STDIN:
        return os.isatty(0)
    # O_NOCTTY: opening a terminal never makes it this process's controlling one.
    flags = os.O_RDONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        # subtle: only a device is opened to ask: opening and closing a named pipe's reading
        # end would let its writer start, then lose its reader (SIGPIPE).
        if not stat.S_ISCHR(os.stat(user_path).st_mode):
            return False
        fd = os.open(user_path, flags)
    except OSError:
        return unknown
    try:
        return os.isatty(fd)
    finally:
        os.close(fd)


def is_regular(user_path: str) -> bool:
    """A regular file read by its size: not one that reports 0 bytes but holds some
    (``/proc/cpuinfo``), which is read to its end as a stream is."""
    if user_path == STDIN or not stat.S_ISREG(os.stat(user_path).st_mode):
        return False
    return not reports_empty_but_is_not(user_path)


def is_stream(user_path: str) -> bool:
    """Standard input, a pipe or a device: read once, so copied to a file first."""
    if user_path == STDIN:
        return True
    return not is_glob_or_url(user_path) and not is_regular(user_path)


def _copy(source: BinaryIO, target: BinaryIO, name: str, temp_dir: str, *, text: bool) -> None:
    """Copy ``source`` to ``target``. When it is to hold ``text`` (no ``--records``), its first
    block is looked at as the copy would be: an endless stream of what is no text (``cat
    /dev/zero |``) is refused then, not once copied whole, which is never."""
    bar = ProgressBar("reading", None, unit="B")
    done = 0
    while True:
        try:
            # subtle: read1, one read of the source: read() waits for its whole block, so
            # text typed at a terminal needed Ctrl-D twice to end.
            block = source.read1(1 << 20) if hasattr(source, "read1") else source.read(1 << 20)
        except OSError as e:
            raise CliError(f"{name}: cannot read it: {e.strerror}") from None
        if not block:
            break
        if not done and text and not _suffix(block[:16]):  # compressed: looked at decompressed
            # No text (cat /dev/urandom |) is said at its first block, not once copied whole.
            check_text_head(block[:NUL_WINDOW], name)
            from ..core.corpus.counting import decode_head  # (lazily: it imports the pools)

            try:
                decode_head(block[:TAR_BLOCK], name, cut=len(block) > TAR_BLOCK)
            except ValueError as e:
                raise CliError(str(e)) from None
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


class Inputs(list[str]):
    """The paths :func:`input_files` gives (a list), with ``copies``: each stream's copy and
    the name the user gave it."""

    copies: dict[str, str]


def check_once(files: Sequence[CorpusFile], what: str, done: str) -> None:
    """Refuse a file met under two names (a link and the file, which a glob matches both
    of), naming both: it would be ``done`` twice unseen. One name given twice is what the
    user wrote, and ``encode a.txt a.txt`` gives a.txt's ids twice (``train`` refuses even
    that: ``sources.check_counted_once``)."""
    pair = repeated_file(files, other_names=True)
    if pair is not None:
        raise CliError(twice_said(pair[1].name, pair[0].name, what, done))


def local_inputs(paths: Inputs, files: Sequence[CorpusFile]) -> list[str | Matched]:
    """The local files among ``files`` that are no stream's copy: the inputs the output rule
    checks once globs are expanded, each file a glob matched as :class:`Matched` so that the
    rule's message names the glob (a second run's glob matches the first run's output)."""
    matched = {g: set(local_glob(g)) for g in paths if "://" not in g and is_glob_or_url(g)}
    found: list[str | Matched] = []
    for f in files:
        if not f.local or f.url in paths.copies or is_stream(f.url):
            continue
        by = next((g for g, names in matched.items() if f.name in names), None)
        found.append(f.url if by is None else Matched(f.name, by))
    return found


@contextmanager
def input_files(user_paths: Sequence[str], choice: str | None = None) -> Iterator[Inputs]:
    """Paths of regular files holding what ``user_paths`` hold, in order: a regular file (or a
    glob or a URL) itself, anything else (``-``, a pipe, a character device) copied into a
    temporary file named for what its first bytes show (compression, Parquet; a Parquet
    file where ``choice``, the ``--records`` value, says JSON Lines is an error), removed
    when the block ends. Errors raised in
    the block (``ValueError``: invalid UTF-8, text the pattern leaves out) that name a copy
    name the user's path instead."""
    with ExitStack() as stack:
        paths = Inputs()
        copies: dict[str, str] = {}
        paths.copies = copies
        for user_path in user_paths:
            if not is_stream(user_path):
                paths.append(user_path)
                continue
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="bpe-studio-"))
            copy = os.path.join(folder, "input")
            name = input_name(user_path)
            text = choice not in ("jsonl", "parquet")
            with open(copy, "wb") as target:
                if user_path == STDIN:
                    _copy(sys.stdin.buffer, target, name, folder, text=text)
                else:
                    try:
                        source = open(user_path, "rb")  # noqa: SIM115 - closed just below
                    except OSError as e:
                        raise CliError(f"{name}: cannot read it: {e.strerror}") from None
                    with source:
                        _copy(source, target, name, folder, text=text)
            with open(copy, "rb") as f:
                suffix = _suffix(f.read(16))
                if suffix == ".parquet":
                    # Parquet also ends in "PAR1": text that merely begins so stays text.
                    f.seek(max(os.path.getsize(copy) - 4, 0))
                    suffix = suffix if f.read(4) == _PARQUET else ""
            if suffix == ".parquet" and choice == "jsonl":
                raise CliError(f"{name}: holds a Parquet file, not JSON Lines (--records jsonl)")
            if suffix:
                os.rename(copy, copy + suffix)
                copy += suffix
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
