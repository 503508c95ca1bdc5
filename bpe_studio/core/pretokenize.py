"""Pre-tokenization: the GPT-2 pattern, special-token splitting, safe chunk boundaries, and
parallel counting of pre-tokens in a corpus file.

What it does: turns text (or a file, read in pieces by worker processes) into
``{pretoken_bytes: count}``. Special tokens are split out first and never counted; pre-tokens
never cross a special token. What it leaves out: merging (``trainer``) and encoding
(``tokenizer``).

Chunk boundaries are chosen so that counting chunk by chunk gives exactly the counts of the
whole text: a chunk ends just before a special token, or, where none is near, right after a
line break that sits between two non-space characters (the GPT-2 pattern always cuts there).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import regex

from .pattern import pretokenize

# A file smaller than this is counted in-process: starting workers would cost more than it saves.
IN_PROCESS_LIMIT = 4 * 1024 * 1024
# Workers read chunks of about this size, so no process ever holds the whole corpus.
CHUNK_BYTES = 4 * 1024 * 1024
# In-process counting goes chunk by chunk too: each chunk is a few long calls into C that hold
# the GIL, which other threads (the GUI's) wait for, so chunks stay around 10 ms of work.
IN_PROCESS_CHUNK = 256 * 1024
# How far past a desired boundary we look for a special token or a safe line break.
_SCAN_STEP = 64 * 1024

ProgressFn = Callable[[int, int], None]


class CorpusError(ValueError):
    """A corpus that cannot be used for training; the message names the file and the reason."""


class TrainingCancelled(Exception):
    """Raised when training is cancelled before any merge was made (during pre-tokenization)."""


def validate_special_tokens(special_tokens: Iterable[str] | None) -> list[str]:
    """Return the special tokens in the given order with duplicates dropped; reject empty ones."""
    seen: dict[str, None] = {}
    for tok in special_tokens or ():
        if not isinstance(tok, str):
            raise TypeError(f"special tokens must be str, got {tok!r}")
        if tok == "":
            raise ValueError("a special token must not be empty")
        seen.setdefault(tok, None)
    return list(seen)


def special_regex(special_tokens: Sequence[str]) -> regex.Pattern | None:
    """A pattern matching any special token, longest first (so overlapping tokens resolve
    to the longest), or None when there are none."""
    if not special_tokens:
        return None
    ordered = sorted(special_tokens, key=len, reverse=True)
    return regex.compile("|".join(regex.escape(t) for t in ordered))


def split_special(text: str, special_re: regex.Pattern | None) -> list[str]:
    """The pieces of ``text`` between special tokens (the special tokens themselves dropped)."""
    if special_re is None:
        return [text]
    return special_re.split(text)


def count_text(text: str, special_tokens: Sequence[str] = ()) -> Counter[bytes]:
    """Count GPT-2 pre-tokens (as UTF-8 bytes) in ``text``, special tokens split out first."""
    counts: Counter[str] = Counter()
    for piece in split_special(text, special_regex(list(special_tokens))):
        counts.update(pretokenize(piece))
    return Counter({k.encode("utf-8"): v for k, v in counts.items()})


# ASCII bytes that are not whitespace to the GPT-2 pattern (\x1c-\x1f included).
_SOLID = frozenset(range(0x80)) - frozenset(b"\t\n\x0b\x0c\r ")


def _safe_newline_cut(data: bytes) -> int:
    """Index just after the first line break with a non-space ASCII character on both sides,
    or -1.

    Cutting there cannot change how the GPT-2 pattern splits the text: the break is a
    pre-token of its own and the next character starts a new one. subtle: the neighbours must
    be ASCII; a byte of U+00A0 or U+3000 is not a space byte, but the character is a space.
    """
    start = 1
    while True:
        i = data.find(b"\n", start)
        if i < 0 or i + 1 >= len(data):
            return -1
        if data[i - 1] in _SOLID and data[i + 1] in _SOLID:
            return i + 1
        start = i + 1


def _special_cut(window: bytes, start: int, end: int, specials: Sequence[bytes]) -> int:
    """The first index in ``[start, end)`` of ``window`` where a special token begins and no
    special token occurrence begins earlier and runs across it, or -1.

    subtle: with "<|endoftext|>" and "<|endoftext|><|endoftext|>" both special, the start of
    the second half of the double token is no place to cut.
    """
    pos = start
    while True:
        hits = [h for h in (window.find(s, pos, end + len(s) - 1) for s in specials) if h >= 0]
        if not hits:
            return -1
        h = min(hits)
        covered = any(
            0 <= window.find(s, max(h - len(s) + 1, 0), h + len(s) - 1) < h for s in specials
        )
        if not covered:
            return h
        pos = h + 1


def chunk_boundaries(
    path: str | os.PathLike, target_chunk: int, special_tokens: Sequence[str]
) -> list[int]:
    """Byte offsets ``[0, b1, ..., size]`` splitting ``path`` into chunks of about
    ``target_chunk`` bytes, each counted (or encoded) exactly as it would be in the whole file.

    An inner boundary is the start of a special token found near the desired offset or, when
    none is near, a safe line break (see module docstring; not used when a special token
    itself contains a line break, as a cut there could split one). A chunk grows until one of
    the two is found.
    """
    size = os.path.getsize(path)
    specials = [t.encode("utf-8") for t in special_tokens]
    newline_ok = not any(b"\n" in s for s in specials)
    # Overlap reads by the longest special token so one split across two reads is still seen.
    overlap = max((len(s) for s in specials), default=0)
    bounds = [0]
    with open(path, "rb") as f:
        pos = target_chunk
        while pos < size:
            found = -1
            scan = pos
            while scan < size and found < 0:
                back = min(scan, overlap)
                f.seek(scan - back)
                window = f.read(back + _SCAN_STEP + overlap)
                hit = _special_cut(window, back, back + _SCAN_STEP, specials)
                if hit >= 0:
                    found = scan - back + hit
                elif newline_ok:
                    cut = _safe_newline_cut(window[back:])
                    if 0 < cut <= _SCAN_STEP:
                        found = scan + cut
                scan += _SCAN_STEP
            if found < 0 or found >= size:
                break
            if found > bounds[-1]:
                bounds.append(found)
            pos = found + target_chunk
    bounds.append(size)
    return bounds


def decode_chunk(data: bytes, path: str | os.PathLike, offset: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorpusError(
            f"{os.fspath(path)}: not valid UTF-8 at byte offset {offset + e.start} "
            f"({e.reason}); convert the file to UTF-8 first"
        ) from None


def _count_chunk(args: tuple[str, int, int, list[str]]) -> tuple[dict[bytes, int], int]:
    """Worker: read one byte range of the file and count its pre-tokens."""
    path, start, end, special_tokens = args
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    counts = count_text(decode_chunk(data, path, start), special_tokens)
    return dict(counts), end - start


def _count_in_process(
    path: Path,
    size: int,
    specials: list[str],
    progress: ProgressFn | None,
    should_stop: Callable[[], bool] | None,
) -> Counter[bytes]:
    bounds = chunk_boundaries(path, IN_PROCESS_CHUNK, specials)
    total: Counter[bytes] = Counter()
    for a, b in zip(bounds, bounds[1:]):
        counts, _ = _count_chunk((os.fspath(path), a, b, specials))
        total.update(counts)
        if progress:
            progress(b, size)
        if should_stop and should_stop():
            raise TrainingCancelled("training cancelled during pre-tokenization")
    return total


def mp_context() -> multiprocessing.context.BaseContext:
    """fork where it is safe (fast, and scripts need no ``__main__`` guard); otherwise a clean
    start. subtle: forking a process that runs other threads (the GUI trains from a QThread,
    and Qt keeps threads of its own) can deadlock the child."""
    methods = multiprocessing.get_all_start_methods()
    single_threaded = (
        threading.current_thread() is threading.main_thread()
        and threading.active_count() == 1
        and not any(m.startswith(("PySide6", "PyQt")) for m in sys.modules)
    )
    if "fork" in methods and single_threaded:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def check_corpus_path(path: str | os.PathLike) -> Path:
    """Raise a clear error for a missing, unreadable or non-regular corpus path."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"corpus not found: {os.fspath(path)}")
    if p.is_dir():
        raise CorpusError(f"{os.fspath(path)}: is a directory, not a text file")
    if not os.access(p, os.R_OK):
        raise CorpusError(f"{os.fspath(path)}: permission denied")
    return p


def count_file(
    path: str | os.PathLike,
    special_tokens: Sequence[str] = (),
    *,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Counter[bytes]:
    """Count the pre-tokens of a UTF-8 corpus file.

    Small files are counted in this process; larger ones in ``workers`` processes (default:
    all cores), each reading its own chunks. ``progress(bytes_done, bytes_total)`` is called
    as chunks finish. ``should_stop()`` is polled between chunks; when it returns true,
    :class:`TrainingCancelled` is raised.
    """
    p = check_corpus_path(path)
    specials = validate_special_tokens(special_tokens)
    size = p.stat().st_size
    if workers is None:
        workers = os.cpu_count() or 1
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if progress:
        progress(0, size)
    if size <= IN_PROCESS_LIMIT or workers == 1 and size <= 4 * IN_PROCESS_LIMIT:
        return _count_in_process(p, size, specials, progress, should_stop)

    bounds = chunk_boundaries(p, min(CHUNK_BYTES, max(size // (workers * 4), 1 << 20)), specials)
    jobs = [(os.fspath(p), a, b, specials) for a, b in zip(bounds, bounds[1:])]
    total: Counter[bytes] = Counter()
    done = 0
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp_context()) as pool:
        try:
            for counts, nbytes in pool.map(_count_chunk, jobs):
                total.update(counts)
                done += nbytes
                if progress:
                    progress(done, size)
                if should_stop and should_stop():
                    raise TrainingCancelled("training cancelled during pre-tokenization")
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return total
