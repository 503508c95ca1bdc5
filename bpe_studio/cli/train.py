"""``bpe-studio train``: train a tokenizer headless and write ``vocab.json`` + ``merges.txt``.

What it does: checks the output location first (so a bad ``--out`` fails in a second, not
after the whole run), pre-tokenizes and merges with progress bars on stderr, refuses to write
anything when nothing was learned (an empty corpus, one without pairs, an interrupt before the
first merge), and ends with a summary on stderr. Ctrl-C during merging keeps the merges made
so far and writes them (exit 130). What it leaves out: the training itself (``core.trainer``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ..core import BpeTrainer, trainer_from_file
from ..core.display import readable_token
from ..core.gpt2_format import save_files
from ..core.specials import DEFAULT_SPECIAL_TOKEN  # the app's default too
from ..core.vocab import BYTE_TOKENS, first_merge_id
from ..progress import ProgressBar
from .output import EXIT_INTERRUPTED, CliError, check_out_dir, os_error_message

OUT_FILES = ("vocab.json", "merges.txt")


def peak_memory_mb() -> float | None:
    """Peak resident memory of this process and its finished children, in MB."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale
    return max(own, kids) / 1e6


def special_tokens(args: argparse.Namespace) -> list[str]:
    """``--special-token`` values, else the default; none with ``--no-special-tokens``."""
    if args.no_special_tokens:
        return []
    if "" in args.special_token:
        raise CliError("--special-token '' is empty; for no special token use --no-special-tokens")
    return list(args.special_token) if args.special_token else [DEFAULT_SPECIAL_TOKEN]


def _nothing_learned(corpus: str, why: str, code: int = 1) -> CliError:
    return CliError(f"{corpus}: nothing was learned: {why}; no files written", code)


def cmd_train(args: argparse.Namespace) -> int:
    specials = special_tokens(args)
    check_out_dir(args.out, OUT_FILES, force=args.force)
    if os.path.isfile(args.corpus) and os.path.getsize(args.corpus) == 0:
        raise _nothing_learned(args.corpus, "the file is empty")
    bar = ProgressBar("pre-tokenizing", 0, unit="B", eager=True)
    start = time.perf_counter()
    try:
        trainer = trainer_from_file(
            args.corpus, args.vocab_size, specials, workers=args.workers, progress=bar.update
        )
    except KeyboardInterrupt:
        raise _nothing_learned(
            args.corpus, "interrupted during pre-tokenization", EXIT_INTERRUPTED
        ) from None
    bar.close()
    if not trainer.top_pairs(1):
        raise _nothing_learned(
            args.corpus,
            "it holds no two bytes side by side within a pre-token (only single characters, "
            "spaces or special tokens), so there is no pair to merge",
        )
    merging = ProgressBar("merging", trainer.target_merges)
    interrupted = False
    try:
        for step in trainer:
            merging.update(step.rank + 1)
    except KeyboardInterrupt:
        interrupted = True
    merging.close()
    if not trainer.merges:
        raise _nothing_learned(args.corpus, "interrupted before the first merge", EXIT_INTERRUPTED)
    vocab_path, merges_path = _save(args.out, trainer)
    elapsed = time.perf_counter() - start
    first_learned = first_merge_id(trainer.special_tokens)
    learned = [tok for i, tok in trainer.vocab.items() if i >= first_learned]
    longest = max(learned, key=len, default=b"")
    peak = peak_memory_mb()
    shown = ", ".join(f"{t} (id {BYTE_TOKENS + i})" for i, t in enumerate(trainer.special_tokens))
    lines = [
        f"{'stopped after' if interrupted else 'trained'} {len(trainer.merges):,} merges "
        f"(vocabulary {len(trainer.vocab):,}) in {elapsed:.2f} s",
        f"special tokens: {shown or 'none'}",
        f"peak memory: {peak:,.0f} MB" if peak is not None else "peak memory: unknown",
        f"longest token: {readable_token(longest)} ({len(longest)} bytes)",
        f"wrote {vocab_path} and {merges_path}",
    ]
    if len(trainer.merges) < trainer.target_merges and not interrupted:
        lines.insert(1, f"note: the corpus ran out of pairs before vocab size {args.vocab_size}")
    print("\n".join(lines), file=sys.stderr)
    return EXIT_INTERRUPTED if interrupted else 0


def _save(out: str, trainer: BpeTrainer) -> tuple[str, str]:
    try:
        vocab_path, merges_path = save_files(out, trainer.vocab, trainer.merges)
    except OSError as e:
        raise CliError(os_error_message(out, e)) from None
    return str(vocab_path), str(merges_path)
