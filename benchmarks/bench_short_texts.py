"""Many short texts, one call each: the lines of a book, of Chinese prose and of code encoded
one ``encode`` at a time (a dataset of sentences, chat messages, log lines), ours against
tiktoken, for the presets GPT-2, cl100k_base and o200k_base.

Text: the first ``--lines`` non-empty lines from byte 5,000,000 of ``english_books.txt``,
``chinese.txt``, ``code.txt`` and ``mixed_web.txt`` (the web text holds 15,792 from there;
about half of them are longer than the short-text rule's 128 characters). In this process,
one thread; each figure is the median of ``--reps`` passes over all the lines, each pass by
a freshly loaded preset (its caches empty, as a new script's), ours and tiktoken
alternating; µs per line. Ours twice: as a script gets it (no kernels loaded: the Python
path until its time adds up to what loading them costs, ``kernel_start.LOAD_SECONDS``; a
short line of mostly one-byte characters does not count), and after ``prepare_bulk()`` (the
kernels loaded, untimed; such a short line still takes the Python path). The ids must equal
tiktoken's (a mismatch exits non-zero).

    python benchmarks/bench_short_texts.py [--reps 3] [--lines 20000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
import peers  # noqa: E402

TEXTS = corpora.TEXT_KINDS
PRESETS = ("gpt2", "cl100k_base", "o200k_base")


def _lines(path: Path, count: int) -> list[str]:
    data = corpora.line_slice(path, 5 * corpora.MB, 4 * corpora.MB).decode("utf-8")
    return [line for line in data.split("\n") if line.strip()][:count]


def _pass(encode, lines: list[str]) -> tuple[float, list[list[int]]]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = [encode(line) for line in lines]
    return (time.perf_counter() - start) / len(lines) * 1e6, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lines", type=int, default=20_000)
    args = ap.parse_args(argv)
    corpora.require("tiktoken")
    import bpe_studio
    from bpe_studio.core import Tokenizer
    from bpe_studio.core.encode.merging import kernel_start

    print(f"bpe_studio from {Path(bpe_studio.__file__).parent}")
    paths = dict(zip(TEXTS, corpora.corpus(*TEXTS.values())))
    texts = {label: _lines(path, args.lines) for label, path in paths.items()}
    failed = False
    print("preset       text     lines  chars/line | us per line: ours  ours prepared  tiktoken"
          " | tiktoken's time over ours: as is, prepared")  # fmt: skip
    for name in PRESETS:
        for label, lines in texts.items():
            times: dict[str, list[float]] = {"ours": [], "prepared": [], "tiktoken": []}
            same = True
            for _ in range(args.reps):
                enc = peers.tiktoken_gpt2() if name == "gpt2" else peers.tiktoken_preset(name)
                seconds, expected = _pass(
                    lambda t: enc.encode(t, allowed_special="all"),  # noqa: B023
                    lines,
                )
                times["tiktoken"].append(seconds)
                # subtle: as a fresh script: no kernels, and no characters counted yet.
                kernel_start.forget()
                seconds, got = _pass(Tokenizer.preset(name).encode, lines)
                times["ours"].append(seconds)
                same &= got == expected
                tok = Tokenizer.preset(name)
                tok.prepare_bulk()
                seconds, got = _pass(tok.encode, lines)
                times["prepared"].append(seconds)
                same &= got == expected
            failed |= not same
            med = {k: statistics.median(v) for k, v in times.items()}
            chars = sum(map(len, lines)) / len(lines)
            print(
                f"{name:12s} {label:8s} {len(lines):6,} {chars:8.0f}   | "
                f"{med['ours']:14.1f} {med['prepared']:13.1f} {med['tiktoken']:9.1f} | "
                f"{med['tiktoken'] / med['ours']:.2f}x, {med['tiktoken'] / med['prepared']:.2f}x"
                f"{'' if same else '  FAIL: ids differ'}",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
