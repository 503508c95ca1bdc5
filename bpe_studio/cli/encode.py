"""``bpe-studio encode`` (text -> ids ``.npy``) and ``bpe-studio decode`` (ids ``.npy`` -> text).

What it does: ``encode`` reads a file (in parallel, ``core.encode_file``) or standard input
(``-``) and writes a 1-D ``.npy`` of ids; ``decode`` reads such an array (a file or ``-``) and
writes the exact bytes the ids stand for to a file or standard output (``-``). Progress and the
summary go to stderr, so stdout carries only data. The output location is checked before any
work. What it leaves out: loading ``--tokenizer`` (``sources``), the encoding itself (core).
"""

from __future__ import annotations

import argparse
import gc
import io
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..core import Tokenizer
from ..core.atomic import atomic_open, atomic_write_bytes
from ..core.corpus import decode_chunk
from ..core.encode_file import encode_file, ids_dtype
from ..progress import ProgressBar
from .output import EXIT_INTERRUPTED, CliError, check_out_file, os_error_line, os_error_message
from .sources import load_tokenizer

STDIO = "-"


def _input_file(path: str) -> None:
    p = Path(path)
    if not p.exists():
        raise CliError(f"{path}: not found")
    if p.is_dir():
        raise CliError(f"{path}: is a directory, not a file")


def _read_stdin_text() -> str:
    data = sys.stdin.buffer.read()
    return decode_chunk(data, "<stdin>", 0)


def _loader(args: argparse.Namespace) -> Callable[[], Tokenizer]:
    """What builds ``--tokenizer`` (in this process, and in the workers forked before it is
    built: see ``encode_file``). Its errors name the tokenizer's source, never ``--out``."""

    def load() -> Tokenizer:
        try:
            return load_tokenizer(
                args.tokenizer,
                args.special_token,
                no_specials=args.no_special_tokens,
                pattern=args.pattern,
            )
        except OSError as e:
            raise CliError(os_error_line(e)) from None

    return load


def cmd_encode(args: argparse.Namespace) -> int:
    # subtle: building a tokenizer and encoding make millions of objects and no reference
    # cycles, so the cyclic collector, set off again and again by them, only walks them (a
    # sixth of o200k's load): it is off for the command and the workers it forks. It comes
    # back on after, unless the process then ends (``args.exiting``): turned on, it would
    # walk them all at once, and the collection at exit too; frozen, they are left out.
    was_on = gc.isenabled()
    gc.disable()
    try:
        return _encode(args)
    finally:
        if args.exiting:
            gc.freeze()
        elif was_on:
            gc.enable()


def _encode(args: argparse.Namespace) -> int:
    if args.input != STDIO:
        _input_file(args.input)
    check_out_file(args.out)
    load = _loader(args)
    try:
        if args.input == STDIO:
            load_start = time.perf_counter()
            tok = load()
            load_seconds = time.perf_counter() - load_start
            start = time.perf_counter()
            text = _read_stdin_text()
            dtype = ids_dtype(tok)
            ids = tok.encode_array(text, dtype.name)
            with atomic_open(args.out, "wb") as f:
                np.save(f, ids)
            n_bytes, n_tokens = len(text.encode("utf-8")), len(ids)
            seconds, setup, dtype_name = time.perf_counter() - start, 0.0, dtype.name
        else:
            bars: list[ProgressBar] = []

            def progress(done: int, total: int) -> None:
                # The bar starts with the encoding, once the tokenizer is built, so that its
                # rate and elapsed time are the encoding's.
                if not bars:
                    bars.append(ProgressBar("encoding", total, unit="B", eager=True))
                bars[0].update(done, total)

            stats = encode_file(load, args.input, args.out, workers=args.workers, progress=progress)
            for bar in bars:
                bar.close()
            n_bytes, n_tokens, seconds = stats.input_bytes, stats.tokens, stats.seconds
            setup, dtype_name, load_seconds = stats.setup_seconds, stats.dtype, stats.load_seconds
    except OSError as e:
        raise CliError(os_error_message(args.out, e)) from None
    except KeyboardInterrupt:
        raise CliError(f"interrupted; {args.out} not written", EXIT_INTERRUPTED) from None
    ratio = n_bytes / n_tokens if n_tokens else 0.0
    rate = n_bytes / 1e6 / seconds if seconds > 0 else float("inf")
    print(
        f"loaded the tokenizer in {load_seconds + setup:.2f} s\n"
        f"encoded {n_bytes / 1e6:,.2f} MB into {n_tokens:,} tokens ({dtype_name}) "
        f"in {seconds:.2f} s\n"
        f"compression ratio: {ratio:.2f} bytes/token\n"
        f"throughput: {rate:.2f} MB/s\n"
        f"wrote {args.out}",
        file=sys.stderr,
    )
    return 0


def _load_ids(path: str) -> np.ndarray:
    name = "<stdin>" if path == STDIO else path
    if path != STDIO:
        _input_file(path)
    try:
        source = io.BytesIO(sys.stdin.buffer.read()) if path == STDIO else path
        ids = np.load(source, allow_pickle=False)
    except (ValueError, EOFError, OSError):
        raise CliError(f"{name}: not a .npy array of ids (as 'bpe-studio encode' writes)") from None
    if not isinstance(ids, np.ndarray) or ids.ndim != 1 or ids.dtype.kind not in "iu":
        shape = getattr(ids, "shape", "?")
        kind = getattr(ids, "dtype", type(ids).__name__)
        raise CliError(f"{name}: expected a 1-D array of integer ids, got {kind} of shape {shape}")
    return ids


def cmd_decode(args: argparse.Namespace) -> int:
    ids = _load_ids(args.ids)
    tok = load_tokenizer(args.tokenizer, None, pattern=args.pattern)
    if args.out != STDIO:
        check_out_file(args.out)
    try:
        data = tok.decode_bytes(ids.tolist())
    except ValueError as e:
        name = "<stdin>" if args.ids == STDIO else args.ids
        raise CliError(f"{name}: {e}") from None
    if args.out == STDIO:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        try:
            atomic_write_bytes(args.out, data)
        except OSError as e:
            raise CliError(os_error_message(args.out, e)) from None
    where = "standard output" if args.out == STDIO else args.out
    print(f"decoded {len(ids):,} ids into {len(data):,} bytes; wrote {where}", file=sys.stderr)
    return 0
