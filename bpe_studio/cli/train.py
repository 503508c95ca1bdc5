"""``bpe-studio train``: train a tokenizer headless and write it (``vocab.json`` +
``merges.txt`` by default, or ``--format hf|tiktoken``).

What it does: checks the corpus files and the output location first (so a bad ``--out`` fails
in a second, not after the whole run; the pattern is checked by the parser), pre-tokenizes
the corpus files as one corpus and merges, with progress bars on stderr, refuses to write
anything when nothing was learned (an empty corpus, one without pairs, an interrupt before the
first merge), and ends with a summary on stderr. Ctrl-C during merging keeps the merges made
so far and writes them (exit 130). What it leaves out: the training itself (``core.trainer``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ..core import Tokenizer, trainer_from_file
from ..core.display import readable_token
from ..core.specials import DEFAULT_SPECIAL_TOKEN  # the app's default too
from ..core.vocab import BYTE_TOKENS, first_merge_id
from ..progress import ProgressBar
from .convert import files_for, pattern_note, save
from .output import EXIT_INTERRUPTED, CliError, check_out_dir


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


def _check_corpora(paths: list[str]) -> None:
    """Each corpus file exists and is a file; several name the same file at most once."""
    seen: dict[Path, str] = {}
    for path in paths:
        p = Path(path)
        if not p.exists():
            raise CliError(f"{path}: corpus file not found")
        if p.is_dir():
            raise CliError(f"{path}: is a directory; CORPUS names text files")
        same = seen.setdefault(p.resolve(), path)
        if same != path or paths.count(path) > 1:
            raise CliError(f"{path}: given twice as a corpus file (it would be counted twice)")


def _status(message: str) -> None:
    """A line of its own, even while a progress bar is drawn on the terminal's current line."""
    sys.stderr.write(("\r\x1b[2K" if sys.stderr.isatty() else "") + message + "\n")


def cmd_train(args: argparse.Namespace) -> int:
    specials = special_tokens(args)
    corpora: list[str] = list(args.corpus)
    _check_corpora(corpora)
    check_out_dir(args.out, files_for(args.format), force=args.force)
    # The corpus named in messages: the file, or all of them when there are several.
    named = corpora[0] if len(corpora) == 1 else f"{corpora[0]} (and {len(corpora) - 1} more)"
    if sum(os.path.getsize(p) for p in corpora) == 0:
        raise _nothing_learned(
            named, "the file is empty" if len(corpora) == 1 else "the files are empty"
        )
    bar = ProgressBar("pre-tokenizing", 0, unit="B", eager=True)
    start = time.perf_counter()
    try:
        trainer = trainer_from_file(
            corpora[0] if len(corpora) == 1 else corpora,
            args.vocab_size,
            specials,
            workers=args.workers,
            progress=bar.update,
            pattern=args.pattern,
            status=_status,
        )
    except KeyboardInterrupt:
        raise _nothing_learned(
            named, "interrupted during pre-tokenization", EXIT_INTERRUPTED
        ) from None
    bar.close()
    if not trainer.top_pairs(1):
        raise _nothing_learned(
            named,
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
        raise _nothing_learned(named, "interrupted before the first merge", EXIT_INTERRUPTED)
    tok = Tokenizer(
        trainer.vocab,
        trainer.merges,
        {s: BYTE_TOKENS + i for i, s in enumerate(trainer.special_tokens)},
        args.pattern,
    )
    written = save(tok, args.out, args.format, "tokenizer")
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
        f"pattern: {args.pattern if tok.pattern_name else tok.pattern}",
        f"wrote {' and '.join(map(str, written))}",
    ]
    note = pattern_note(tok, args.format)
    if note:
        lines.append(note)
    if len(trainer.merges) < trainer.target_merges and not interrupted:
        note = f"note: the corpus ran out of pairs before vocabulary size {args.vocab_size:,}"
        lines.insert(1, note)
    print("\n".join(lines), file=sys.stderr)
    return EXIT_INTERRUPTED if interrupted else 0
