"""The ``bpe-studio`` command.

- ``bpe-studio`` / ``bpe-studio gui [CORPUS]`` / ``bpe-studio --demo``: the desktop app.
- ``bpe-studio train CORPUS --vocab-size N [--special-token TOK ...] [--workers K] --out DIR``
- ``bpe-studio encode --tokenizer DIR [--special-token TOK ...] INPUT --out IDS.npy [--workers K]``

Headless commands report progress on stderr and end with one summary; any error is one
readable line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from .core import Tokenizer, TrainingCancelled, infer_special_tokens, trainer_from_file
from .core.corpus import resolve_workers
from .core.display import readable_token
from .core.gpt2_format import load_merges, load_vocab, save_files
from .core.vocab import first_merge_id
from .progress import ProgressBar

EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


def _peak_memory_mb() -> float | None:
    """Peak resident memory of this process and its finished children, in MB."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale
    return max(own, kids) / 1e6


def _fail(message: str, code: int = EXIT_ERROR) -> int:
    print(f"bpe-studio: error: {message}", file=sys.stderr)
    return code


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _positive(text: str) -> int:
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _workers(text: str) -> int:
    """A --workers value, checked by the core's one rule (``resolve_workers``)."""
    value = _whole_number(text)
    try:
        return resolve_workers(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be at least 1 (leave --workers out for every core), got {value}"
        ) from None


def _add_workers(command: argparse.ArgumentParser, what: str) -> None:
    # The rule of corpus.resolve_workers, as the user sees it.
    command.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="K",
        help=f"{what} processes, at least 1 (default: every core)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bpe-studio",
        description="Train, inspect and watch byte-level BPE tokenizers learn. "
        "With no command, opens the desktop app.",
    )
    parser.add_argument(
        "--demo", action="store_true", help="open the app and train on the bundled sample corpus"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    gui = sub.add_parser("gui", help="open the desktop app, optionally with a corpus loaded")
    gui.add_argument("corpus", nargs="?", help="UTF-8 text file to load")

    train = sub.add_parser("train", help="train a tokenizer headless")
    train.add_argument("corpus", help="UTF-8 text file")
    train.add_argument("--vocab-size", type=_positive, required=True, metavar="N")
    train.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOK",
        help="a special token (repeatable), e.g. '<|endoftext|>'",
    )
    _add_workers(train, "pre-tokenization")
    train.add_argument(
        "--out", required=True, metavar="DIR", help="directory for vocab.json and merges.txt"
    )

    enc = sub.add_parser("encode", help="encode a text file to a NumPy array of ids")
    enc.add_argument("input", help="UTF-8 text file")
    enc.add_argument(
        "--tokenizer", required=True, metavar="DIR", help="directory with vocab.json and merges.txt"
    )
    enc.add_argument(
        "--special-token",
        action="append",
        default=None,
        metavar="TOK",
        help="a special token (repeatable); default: those the tokenizer's vocabulary holds",
    )
    _add_workers(enc, "encoding")
    enc.add_argument("--out", required=True, metavar="IDS.npy")
    return parser


def cmd_train(args: argparse.Namespace) -> int:
    bar = ProgressBar("pre-tokenizing", 0, unit="B")
    start = time.perf_counter()
    trainer = trainer_from_file(
        args.corpus,
        args.vocab_size,
        args.special_token,
        workers=args.workers,
        progress=bar.update,
    )
    bar.close()
    merging = ProgressBar("merging", trainer.target_merges)
    interrupted = False
    try:
        for step in trainer:
            merging.update(step.rank + 1)
    except KeyboardInterrupt:
        interrupted = True
    merging.close()
    vocab_path, merges_path = save_files(args.out, trainer.vocab, trainer.merges)
    elapsed = time.perf_counter() - start
    first_learned = first_merge_id(trainer.special_tokens)
    learned = [tok for i, tok in trainer.vocab.items() if i >= first_learned]
    longest = max(learned, key=len, default=b"")
    peak = _peak_memory_mb()
    lines = [
        f"{'stopped after' if interrupted else 'trained'} {len(trainer.merges):,} merges "
        f"(vocabulary {len(trainer.vocab):,}) in {elapsed:.2f} s",
        f"peak memory: {peak:,.0f} MB" if peak is not None else "peak memory: unknown",
        f"longest token: {readable_token(longest)} ({len(longest)} bytes)"
        if learned
        else "longest token: none learned",
        f"wrote {vocab_path} and {merges_path}",
    ]
    if len(trainer.merges) < trainer.target_merges and not interrupted:
        lines.insert(1, f"note: the corpus ran out of pairs before vocab size {args.vocab_size}")
    print("\n".join(lines), file=sys.stderr)
    return EXIT_INTERRUPTED if interrupted else 0


def cmd_encode(args: argparse.Namespace) -> int:
    from .core.encode_file import encode_file

    vocab_path = os.path.join(args.tokenizer, "vocab.json")
    merges_path = os.path.join(args.tokenizer, "merges.txt")
    for p in (vocab_path, merges_path):
        if not os.path.isfile(p):
            return _fail(
                f"{p}: not found (--tokenizer needs a directory with vocab.json and "
                "merges.txt, as written by 'bpe-studio train')"
            )
    load_start = time.perf_counter()
    vocab, merges = load_vocab(vocab_path), load_merges(merges_path)
    specials = args.special_token
    if specials is None:
        specials = infer_special_tokens(vocab, merges)
    tok = Tokenizer(vocab, merges, specials)
    load_seconds = time.perf_counter() - load_start
    bar = ProgressBar("encoding", 0, unit="B")
    stats = encode_file(tok, args.input, args.out, workers=args.workers, progress=bar.update)
    bar.close()
    print(
        f"loaded the tokenizer in {load_seconds + stats.setup_seconds:.2f} s\n"
        f"encoded {stats.input_bytes / 1e6:,.2f} MB into {stats.tokens:,} tokens "
        f"({stats.dtype}) in {stats.seconds:.2f} s\n"
        f"compression ratio: {stats.bytes_per_token:.2f} bytes/token\n"
        f"throughput: {stats.mb_per_second:.2f} MB/s\n"
        f"wrote {args.out}"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in (None, "gui"):
        from .gui.app import main as gui_main

        return gui_main(argv)
    try:
        if args.command == "train":
            return cmd_train(args)
        return cmd_encode(args)
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)
    except TrainingCancelled:
        return _fail("cancelled", EXIT_INTERRUPTED)
    except (OSError, ValueError) as e:
        # FileNotFoundError, CorpusError, TokenizerFileError, bad vocab sizes: all name
        # their file or value in the message already.
        return _fail(
            str(e)
            if not isinstance(e, OSError) or not e.filename
            else f"{e.filename}: {e.strerror}"
        )
