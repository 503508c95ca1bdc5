"""Errors of the command line, and the one rule for every command's ``--out``.

The rule (train, encode, decode, convert; the README's "Outputs" says the same):
1. ``-`` is standard output. Only one file can go there: encode's ``.npy`` bytes, decode's
   text, or a tokenizer in the ``hf`` format (one ``tokenizer.json``); a format of two files
   there is an error. A device or a named pipe (``/dev/null``, a FIFO) is written as standard
   output is: a stream, not a file to replace.
2. An output never replaces one of the command's inputs (the corpus, the text or ids read,
   the tokenizer's files; for ``hf:`` the model's files in the Hub's cache, known only once
   its source is looked up: ``sources.source_files``), with or without ``--force``: paths are
   compared resolved, and as the same file where both exist (links).
3. An existing file is replaced only with ``--force``, and a directory that already holds a
   tokenizer (GPT-2 files, ``tokenizer.json``, a ``.tiktoken``) gets another one only with
   ``--force``; a directory where a file is to go is never replaced.
4. A place that cannot be written fails before any work: :func:`check_out_dir` and
   :func:`check_out_file` create what is missing, write a probe file and remove both again.
Files are written beside their final name and renamed into place (``core.io.atomic``), so an
error or Ctrl-C never leaves half a file under it.

What it does besides: :class:`CliError` is a one-line message for the user;
:func:`os_error_message` words an ``OSError`` with the path the user gave, never a temporary
file; :func:`write_stream` writes data to standard output (or a device or pipe) and says
truthfully what happened when it is closed early (``| head``) or full.
"""

from __future__ import annotations

import argparse
import codecs
import errno
import io
import os
import re
import shlex
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from ..core.io.atomic import AppearedMeanwhile
from .terminal import erase, is_terminal

EXIT_ERROR = 1
EXIT_USAGE = 2  # as argparse exits for a bad option value
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: what a program killed by a closed pipe exits with
STDOUT = "-"
STDOUT_NAME = "standard output"


class CliError(Exception):
    """A one-line message for the user; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


@contextmanager
def numba_interrupts() -> Iterator[None]:
    """Ctrl-C as the KeyboardInterrupt it is. One that lands while a compiled kernel calls
    back into Python comes out of numba as a SystemError ("returned a result with an
    exception set") whose causes hold the KeyboardInterrupt."""
    try:
        yield
    except SystemError as error:
        seen: BaseException | None = error
        while seen is not None:
            if isinstance(seen, KeyboardInterrupt):
                raise KeyboardInterrupt from None
            seen = seen.__cause__ or seen.__context__
        raise


def out_of_memory(error: MemoryError, args: argparse.Namespace, phase: str | None = None) -> str:
    """The one line for ``error``: where it came (the command's ``phase``, when known), what
    Python or NumPy said, and what to try with the options ``args`` left."""
    line = "out of memory" + (f" while {phase}" if phase else "")
    line += f" ({error})" if str(error) else ""
    fewer_workers = getattr(args, "workers", None) != 1
    tries = []
    if args.command == "train":
        # The python engine's tables are smaller than the compiled one's preallocated ones.
        if args.engine != "python":
            tries.append("--engine python")
        if fewer_workers and not args.cluster:
            tries.append("fewer --workers")
        if not args.cluster:
            tries.append("--cluster")
        tries.append("a smaller corpus or --vocab-size")
    elif args.command == "encode" and fewer_workers:
        tries.append("fewer --workers")
    if not tries:
        return line
    return f"{line}: try " + (", ".join(tries[:-1]) + ", or " if len(tries) > 1 else "") + tries[-1]


def in_cli_words(message: str) -> str:
    """A core message in the options' words: ``engine='python'`` is ``--engine python``,
    ``text field 'body'`` is ``--text-field body``, ``records='jsonl' or 'parquet'`` is
    ``--records jsonl or parquet``."""
    message = re.sub(r"engine='(\w+)'", r"--engine \1", message)
    message = re.sub(r"records='(\w+)' or '(\w+)'", r"--records \1 or \2", message)
    return re.sub(r"text field '([^']*)'", r"--text-field \1", message)


# Control characters (C0, DEL, C1) and Unicode's line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


# The characters that stand for bytes that are not UTF-8 in a name (os.fsdecode's
# surrogateescape): U+DC80 to U+DCFF for bytes 0x80 to 0xFF.
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def one_line(message: str) -> str:
    """``message`` with its control characters written as Python escapes (``\\n``,
    ``\\x1b``): a file name holding a newline split an error over two lines, and one holding
    an escape sequence reached the terminal as one. A byte of a name that is not UTF-8 is
    written ``\\xff``, as the shell's ``$'...'`` reads it back (stderr would show the
    ``\\udcff`` it was decoded as)."""
    message = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), message)
    return _NOT_UTF8.sub(lambda m: _c_escape(m.group()), message)


_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _c_escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (see _NOT_UTF8)
        code -= 0xDC00
    return _SHORT_ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def shell_option(option: str, value: str, word: str | None = None) -> str:
    """``option`` given ``value`` (shown as ``word``, else :func:`shell_word`) as a command
    line takes it back: a value that starts with "-" is joined by "=", which argparse would
    otherwise read as the next option.

    >>> print(shell_option("--special-token", "<s>"), shell_option("--special-token", "--sep--"))
    --special-token '<s>' --special-token=--sep--
    """
    shown = shell_word(value) if word is None else word
    return f"{option}={shown}" if value.startswith("-") else f"{option} {shown}"


def shell_word(text: str) -> str:
    r"""``text`` quoted for a POSIX shell so that pasting it back gives ``text``: in single
    quotes (``shlex.quote``), or where it holds control characters, which a message shows as
    escapes, in bash's ``$'...'``, which reads those escapes back.

    >>> print(shell_word("<|end|>"), shell_word("it's"), shell_word("<line\nbreak's>"))
    '<|end|>' 'it'"'"'s' $'<line\nbreak\'s>'
    """
    if not (_CONTROL.search(text) or _NOT_UTF8.search(text)):
        return shlex.quote(text)
    inner = text.replace("\\", "\\\\").replace("'", "\\'")
    inner = _NOT_UTF8.sub(lambda m: _c_escape(m.group()), inner)
    return "$'" + _CONTROL.sub(lambda m: _c_escape(m.group()), inner) + "'"


def fail(message: str, code: int = EXIT_ERROR) -> int:
    """Print ``bpe-studio: error: MESSAGE`` on one line of stderr (on a terminal, over any
    progress bar still drawn there) and return ``code``."""
    print(f"{erase(sys.stderr)}bpe-studio: error: {one_line(message)}", file=sys.stderr)
    return code


def say(message: str) -> None:
    """A phase the command is in (such as the encoder's first compile) on a line of its own
    on stderr, even while a progress bar is drawn on the terminal's current line."""
    sys.stderr.write(erase(sys.stderr) + one_line(message) + "\n")
    sys.stderr.flush()


class Compiles:
    """The compiles a command announces (as :func:`say` does) and how long they held it up:
    from the first announcement until :meth:`over` (the work waiting for them has begun).
    A first run's minute of compiling was in no line of the summary."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._began: float | None = None
        self.seconds: float | None = None

    def say(self, message: str) -> None:
        if message.startswith("compiling "):
            name = message.removeprefix("compiling ").split(" (")[0]
            if name not in self.names:
                self.names.append(name)
            if self._began is None:
                self._began = time.perf_counter()
        say(message)

    def over(self) -> None:
        if self._began is not None and self.seconds is None:
            self.seconds = time.perf_counter() - self._began

    def summary(self) -> str | None:
        """The summary's line for them, or None when nothing was compiled."""
        if not self.names:
            return None
        self.over()
        from ..core.io.compile_lock import waited_for_another
        from ..core.io.numba_cache import caches_nothing  # numba is loaded: it compiled

        names = " and ".join(self.names)
        if waited_for_another():
            return f"waited {self.seconds:.1f} s for another process to compile {names}"
        kept = "not cached: each run" if caches_nothing() else "once: then cached"
        return f"compiled {names} in {self.seconds:.1f} s ({kept})"


def os_error_line(error: OSError) -> str:
    """An error reading an input, as one line: ``FILE: reason`` when it names its file."""
    return f"{error.filename}: {error.strerror}" if error.filename else str(error)


def os_error_message(user_path: str, error: OSError) -> str:
    """``error`` as ``USER_PATH: reason``; the reason explains what errno alone misleads on."""
    reason = error.strerror or str(error)
    if isinstance(error, AppearedMeanwhile):
        return appeared_message(user_path, error)
    if user_path == STDOUT:
        user_path = STDOUT_NAME
    elif error.errno == errno.ENOENT and (
        (folder := Path(os.fsdecode(error.filename or user_path)).parent).is_dir()
    ):
        # subtle: /proc and /sys exist but refuse new entries with ENOENT, which would read
        # as if the user's directory were missing. The folder is the refused file's (for
        # train, --out is the folder itself).
        reason = f"{os.fspath(folder) or '.'} does not accept new files ({reason})"
    return f"{user_path}: cannot write there: {reason}"


def appeared_message(user_path: str, error: AppearedMeanwhile) -> str:
    """A file found where ``--out user_path`` was to put one, though the check before any
    work found none there: as that check words it, saying when it came."""
    name = os.fsdecode(error.filename or user_path)
    meanwhile = "(written since this run checked --out: by another run?)"
    fix = "pass --force to replace it, or choose another --out"
    if os.path.realpath(name) == os.path.realpath(user_path):
        return f"{user_path}: exists {meanwhile}; {fix}"
    return f"{user_path}: already holds {Path(name).name} {meanwhile}; {fix}"


def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path(".")


def _probe_directory(directory: Path, user_path: str) -> None:
    """Create ``directory`` if missing and write a file in it; then undo both. Another run
    probing the same new folder may remove it under this one (its own undoing): then the
    probe starts again, a few times, rather than report that the folder is missing."""
    for _ in range(4):
        try:
            return _probe_once(directory, user_path)
        except _Vanished:
            continue
    _probe_once(directory, user_path, retry=False)


class _Vanished(Exception):
    """A folder the probe found or made was gone when it wrote there."""


def _probe_once(directory: Path, user_path: str, *, retry: bool = True) -> None:
    created: list[Path] = []
    try:
        ancestor = _existing_ancestor(directory)
        if not ancestor.is_dir():
            raise CliError(f"{user_path}: {ancestor} is a file, not a directory")
        missing = [directory, *directory.parents]
        missing = missing[: missing.index(ancestor)] if ancestor in missing else []
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:
                if not d.is_dir():
                    raise
                continue  # made meanwhile by another run writing there: not ours to remove
            created.append(d)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".bpe-studio-probe-")
        os.close(fd)
        os.unlink(probe)
    except FileNotFoundError as e:
        if retry and ancestor.is_dir() and not directory.is_dir():
            raise _Vanished from None
        raise CliError(os_error_message(user_path, e)) from None
    except OSError as e:
        raise CliError(os_error_message(user_path, e)) from None
    finally:
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except (OSError, RuntimeError):  # a symbolic link loop: writing there fails, named
        return False


@dataclass(frozen=True)
class Matched(os.PathLike[str]):
    """An input a glob matched, ``name`` as the glob gave it: rule 2's message names the
    glob, which is what the user wrote (the file may be an earlier run's output)."""

    name: str
    glob: str

    def __fspath__(self) -> str:
        return self.name


def check_stdout_not_an_input(
    inputs: Iterable[str | os.PathLike[str]], *, forced: bool = True
) -> None:
    """Rule 2 for ``--out -``: standard output redirected to one of ``inputs`` (``>> a.txt``)
    is refused as that file named would be; compared as ``cat`` compares them (device and
    inode of a regular file), since standard output has no path to resolve. ``forced``:
    the command has a ``--force``, which the error says does not change that."""
    fd = _stdout_fd()
    try:
        out = os.fstat(fd) if fd is not None else None
    except OSError:
        out = None
    if out is None or not stat.S_ISREG(out.st_mode):
        return

    def same(_target: Path, given: Path) -> bool:
        try:
            st = os.stat(given)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino)

    _not_an_input(Path(STDOUT_NAME), STDOUT_NAME, inputs, same, forced=forced)


def _not_an_input(
    target: Path,
    user_path: str,
    inputs: Iterable[str | os.PathLike[str]],
    same: Callable[[Path, Path], bool] = _same_file,
    *,
    forced: bool = True,
) -> None:
    """Rule 2: ``target`` (to be written for ``--out user_path``) is none of ``inputs``."""
    for given in inputs:
        if not same(target, Path(given)):
            continue
        if isinstance(given, Matched):
            matches = f"the input glob {shell_word(given.glob)} matches"
            what = (
                f"{user_path}: {matches} it"
                if target == Path(user_path)
                else f"{user_path}: writing {target.name} there would replace {given.name}, "
                f"which {matches}"
            )
        elif os.fspath(given) == "/dev/stdin":
            what = f"{user_path}: is the file standard input reads (the input -)"
        elif target != Path(user_path):
            what = f"{user_path}: writing {target.name} there would replace the input {given}"
        elif os.fspath(given) == user_path:
            what = f"{user_path}: is an input of this command"
        else:
            what = f"{user_path}: is the input {given} (the same file)"
        never = "an output never replaces an input" + (", even with --force" if forced else "")
        raise CliError(f"{what}; {never}")


def tokenizer_files_in(folder: Path) -> list[str]:
    """The names of the tokenizer files in ``folder`` (``core.formats.files.tokenizers_in``:
    GPT-2 vocabularies, rank files, a ``tokenizer.json`` that is no rank file's sidecar)."""
    from ..core.formats.files import tokenizers_in

    return [p.name for p in tokenizers_in(folder)] if folder.is_dir() else []


def _not_empty(user_path: str) -> None:
    # Path("") is the current folder, where train wrote its files.
    if not user_path:
        raise CliError("--out '': the path is empty (an unset shell variable?); name the output")


def check_out_dir(
    user_path: str,
    files: Sequence[str],
    *,
    force: bool,
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Raise :class:`CliError` unless the tokenizer ``files`` can be written into the
    directory ``user_path`` (created if missing) by the rule above: none an input, none
    replacing a file or joining another tokenizer without ``force``."""
    _not_empty(user_path)
    out = Path(user_path)
    if out.exists() and not out.is_dir():
        raise CliError(f"{user_path}: exists and is not a directory (--out names a directory)")
    from ..core.formats.files import file_named_for_folder  # the formats: not for --help

    slip = file_named_for_folder(user_path)
    if slip is not None:  # said before a run, not after its merges are learned
        raise CliError(slip.replace("a tokenizer is saved into a folder", "--out is a folder"))
    for name in files:
        _not_an_input(out / name, user_path, inputs)
        if (out / name).is_dir():
            raise CliError(
                f"{os.path.join(user_path, name)}: is a directory, where a file is to be "
                "written (--force replaces files, not directories); move it away, or choose "
                "another --out"
            )
    if out.is_dir() and not force:
        # a dangling link is there too: writing through it would make the file it names
        present = [name for name in files if _present(out / name)]
        if present:
            raise CliError(
                f"{user_path}: already holds {' and '.join(present)}; pass --force to "
                f"replace {'them' if len(present) > 1 else 'it'}, or choose another --out"
            )
        others = tokenizer_files_in(out)
        if others:
            raise CliError(
                f"{user_path}: already holds a tokenizer ({', '.join(others)}); a folder with "
                "two is ambiguous to load: choose another --out, or pass --force to write "
                "this one beside it"
            )
    _probe_directory(out, user_path)


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def check_out_file(
    user_path: str, *, force: bool, inputs: Iterable[str | os.PathLike[str]] = ()
) -> None:
    """Raise :class:`CliError` unless a file can be written at ``user_path`` (its directory
    is created if missing) by the rule above; a stream (:func:`is_stream`) that is no input
    always can."""
    if user_path == STDOUT:
        check_stdout_not_an_input(inputs)
        return
    _not_empty(user_path)
    out = Path(user_path)
    if out.is_dir():
        raise CliError(f"{user_path}: is a directory; --out names the file to write")
    # subtle: Path drops a final "/" (and "/."), so "ids/" would be written as a file "ids".
    if os.path.basename(user_path) in ("", ".", ".."):
        raise CliError(f"{user_path}: names a folder; --out names the file to write")
    _not_an_input(out, user_path, inputs)
    if is_stream(user_path):
        _device_opens(user_path)
        return
    if _present(out) and not force:  # a dangling link is there too
        raise CliError(f"{user_path}: exists; pass --force to replace it, or choose another --out")
    _probe_directory(out.parent, user_path)


def _device_opens(user_path: str) -> None:
    """:class:`CliError` when ``user_path`` is a device that cannot be opened for writing:
    ``/dev/tty`` in a process with no terminal (cron, ``ssh`` without ``-t``) was refused only
    by the last write, after all the work. A named pipe is not opened: its reader may come
    later."""
    try:
        if not stat.S_ISCHR(os.stat(user_path).st_mode):
            return
        # O_NOCTTY: opening a terminal never makes it this process's controlling one.
        fd = os.open(user_path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | os.O_NONBLOCK)
    except OSError as error:
        raise CliError(os_error_message(user_path, error)) from None
    os.close(fd)


def is_stream(user_path: str) -> bool:
    """Whether ``--out user_path`` is written as a stream: ``-`` (standard output), or an
    existing device or named pipe."""
    if user_path == STDOUT:
        return True
    try:
        mode = os.stat(user_path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def writes_to_terminal(user_path: str) -> bool:
    """Whether ``--out user_path`` writes to a terminal: standard output that is one, or a
    path that names one (``/dev/stdout`` on a terminal, ``/dev/tty``), opened to ask."""
    if user_path == STDOUT:
        return is_terminal(sys.stdout)
    try:
        if not stat.S_ISCHR(os.stat(user_path).st_mode):
            return False
        # O_NOCTTY: opening a terminal never makes it this process's controlling one.
        fd = os.open(user_path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | os.O_NONBLOCK)
    except OSError:
        return False  # writing there says why, naming it
    try:
        return os.isatty(fd)
    finally:
        os.close(fd)


def stream_name(user_path: str) -> str:
    """What messages call an output: "standard output" for ``-``, else the path."""
    return STDOUT_NAME if user_path == STDOUT else user_path


def check_stdout_open(user_path: str) -> None:
    """:class:`CliError` before any work when ``user_path`` is standard output and it was
    closed before the program started (``>&-``)."""
    if user_path == STDOUT and sys.stdout is None:
        raise CliError(f"{STDOUT_NAME}: it is closed (>&-); nothing was written")


def _stdout_fd() -> int | None:
    """Standard output's file descriptor; None when ``sys.stdout`` was replaced by a stream of
    Python's own (a notebook's, a ``StringIO``, ``contextlib.redirect_stdout``).

    subtle: Jupyter's stream answers ``fileno()`` with a copy of the kernel's own standard
    output, which the notebook never shows; only the interpreter's stream, or a text file
    over a file, is written by its descriptor."""
    stdout = sys.stdout
    interpreters = stdout is sys.__stdout__
    if stdout is None or not (interpreters or isinstance(stdout, io.TextIOWrapper)):
        return None
    try:
        return stdout.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None


def _stdout_buffer() -> BinaryIO | None:
    """The binary stream under ``sys.stdout`` when it has one (a text wrapper's ``buffer``)."""
    buffer = getattr(sys.stdout, "buffer", None)
    return buffer if callable(getattr(buffer, "write", None)) else None


def check_stdout_takes_bytes(user_path: str, what: str) -> None:
    """:class:`CliError` before any work when ``user_path`` is standard output and it takes
    text only: ``sys.stdout`` replaced by a stream with neither a file nor a binary buffer
    behind it (a notebook's). Bytes ``what`` names (not text) cannot be written there."""
    if user_path == STDOUT and _stdout_fd() is None and _stdout_buffer() is None:
        raise CliError(
            f"--out -: standard output is a text stream here ({type(sys.stdout).__name__}: "
            f"sys.stdout replaced, as in a notebook), and {what}; pass --out FILE"
        )


class Readable(Protocol):
    """What :func:`write_stream` reads blocks from (a binary file, or blocks made as asked)."""

    def read(self, size: int = -1, /) -> bytes: ...


def write_stream(user_path: str, source: bytes | Readable) -> int | None:
    """Write ``source`` (bytes, or a binary file read to its end) to the stream ``user_path``
    (:func:`is_stream`); return the bytes written when its reader closed it early
    (``| head``), else None. A full or failing stream raises :class:`CliError` naming it.
    Standard output replaced by a stream of Python's own (a notebook's) is written through
    it: its binary buffer, else as text (UTF-8; bytes that are not are U+FFFD there), which
    is why binary data is refused first (:func:`check_stdout_takes_bytes`)."""
    blocks = (
        iter([source]) if isinstance(source, bytes) else iter(lambda: source.read(1 << 20), b"")
    )
    if user_path == STDOUT:
        check_stdout_open(user_path)  # Python makes a closed one None
        assert sys.stdout is not None
        sys.stdout.flush()
        fd = _stdout_fd()
        if fd is None:
            _write_through(blocks)
            return None
    else:
        try:
            fd = os.open(user_path, os.O_WRONLY)
        except OSError as e:
            raise CliError(os_error_message(user_path, e)) from None
    written = 0
    try:
        for block in blocks:
            view = memoryview(block)
            # subtle: a write to a pipe may take part of the data; only the next one learns
            # that the reader has gone (a buffered write would report nothing).
            while view:
                n = os.write(fd, view)
                written += n
                view = view[n:]
    except BrokenPipeError:
        if user_path == STDOUT:
            # subtle: point stdout at /dev/null, or flushing it at exit fails again, loudly.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        return written
    except OSError as e:
        raise CliError(os_error_message(user_path, e)) from None
    finally:
        if user_path != STDOUT:
            os.close(fd)
    return None


def _write_through(blocks: Iterator[bytes]) -> None:
    """Write ``blocks`` to ``sys.stdout``, a stream with no file behind it: to its binary
    buffer, else decoded (UTF-8) as text."""
    assert sys.stdout is not None
    buffer = _stdout_buffer()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    try:
        for block in blocks:
            if buffer is not None:
                buffer.write(block)
            else:
                sys.stdout.write(decoder.decode(block))
        if buffer is not None:
            buffer.flush()
        else:
            sys.stdout.write(decoder.decode(b"", final=True))
            sys.stdout.flush()
    except OSError as e:
        raise CliError(os_error_message(STDOUT, e)) from None
