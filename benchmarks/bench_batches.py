"""Batches of documents: ``encode_batch`` on threads (``num_threads``, tiktoken's default of 8)
against one thread, ours and tiktoken's, for the presets GPT-2, cl100k_base and o200k_base.

Text: 4 MB from byte 5,000,000 of each kind (``corpora.TEXT_KINDS``; the web text holds about
2 MB from there), cut into documents of ``--size`` characters. In this process, the kernels
loaded; ours cold, a freshly loaded preset (untimed) for each pass, as tiktoken has no cache
to warm; each figure is the median of ``--reps`` passes, the four ways alternating. The ids
must equal tiktoken's (a mismatch exits non-zero). Ours stays in one thread where a batch is
not worth threads (``batches.batch_threads``: documents under 32,768 characters on average),
so below that "ours, threads" is "ours, one thread" again.

    python benchmarks/bench_batches.py [--reps 5] [--size 65536]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
import peers  # noqa: E402
import timing  # noqa: E402

PRESETS = ("gpt2", "cl100k_base", "o200k_base")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--size", type=int, default=1 << 16, help="characters per document")
    args = ap.parse_args(argv)
    corpora.require("tiktoken")
    import bpe_studio
    from bpe_studio.core import Tokenizer
    from bpe_studio.core.encode import batches

    print(f"bpe_studio from {Path(bpe_studio.__file__).parent}")
    kinds = corpora.TEXT_KINDS
    paths = dict(zip(kinds, corpora.corpus(*kinds.values())))
    texts = {
        k: corpora.line_slice(p, 5 * corpora.MB, 4 * corpora.MB).decode() for k, p in paths.items()
    }
    failed = False
    print("preset       text     docs | ms: ours 1 thread  ours threads  tiktoken 1  tiktoken 8"
          " | threads' gain: ours, tiktoken | tiktoken 8's time over ours")  # fmt: skip
    for name in PRESETS:
        tok = Tokenizer.preset(name)
        tok.prepare_bulk()
        enc = peers.tiktoken_gpt2() if name == "gpt2" else peers.tiktoken_preset(name)
        for label, text in texts.items():
            docs = [text[i : i + args.size] for i in range(0, len(text), args.size)]
            expected = enc.encode_batch(docs, allowed_special="all")
            ours_threads = batches.batch_threads(tok._encoder, docs, None)
            every = "all"
            ways = {
                "ours 1": lambda t: t.encode_batch(docs, num_threads=1),  # noqa: B023
                "ours n": lambda t: t.encode_batch(docs),  # noqa: B023
                "tiktoken 1": lambda _: enc.encode_batch(docs, allowed_special=every, num_threads=1),  # noqa
                "tiktoken 8": lambda _: enc.encode_batch(docs, allowed_special=every),  # noqa: B023
            }  # fmt: skip
            times: dict[str, list[float]] = {k: [] for k in ways}
            same = True
            for _ in range(args.reps):
                for way, fn in ways.items():
                    # Ours cold, as tiktoken, which has no cache: a freshly loaded preset
                    # (untimed), its caches empty, for each pass.
                    fresh = Tokenizer.preset(name) if way.startswith("ours") else tok
                    seconds, got = timing.median_and_result(lambda: fn(fresh), 1)  # noqa: B023
                    times[way].append(seconds)
                    if way.startswith("ours"):
                        same &= got == expected
            failed |= not same
            med = {k: sorted(v)[len(v) // 2] * 1e3 for k, v in times.items()}
            ours_gain = med["ours 1"] / med["ours n"]
            their_gain = med["tiktoken 1"] / med["tiktoken 8"]
            print(
                f"{name:12s} {label:8s} {len(docs):4d} | {med['ours 1']:16.1f}"
                f" {med['ours n']:13.1f} {med['tiktoken 1']:11.1f} {med['tiktoken 8']:11.1f} |"
                f" {ours_gain:.2f}x ({ours_threads} threads), {their_gain:.2f}x |"
                f" {med['tiktoken 8'] / med['ours n']:.2f}x{'' if same else '  FAIL: ids differ'}",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
