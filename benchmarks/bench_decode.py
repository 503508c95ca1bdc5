"""Decoding many ids: ``Tokenizer.decode`` (a list of ids, as tiktoken takes them) and
``decode_bytes`` of the list and of a NumPy array of it (what ``bpe-studio decode`` passes from
a ``.npy``) against tiktoken's ``decode`` and ``decode_bytes`` of the list (tiktoken takes no
array: the last ratio is the command line's case, not like for like).

Ids: tiktoken's own ``encode_ordinary`` of 2 MB of each of ``english_books.txt``,
``chinese.txt``, ``code.txt`` and ``mixed_web.txt`` (from byte 5,000,000, cut at line breaks),
with GPT-2, cl100k_base and o200k_base built offline (``peers``). Every result must equal
tiktoken's bytes (a mismatch exits non-zero). In this process, one thread; the two sides
alternate, each figure the median of ``--reps`` calls; the first call of ours (which builds the
tokenizer's table of token bytes, once) is timed apart as "first".

    python benchmarks/bench_decode.py [--reps 5] [--mb 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora  # noqa: E402
import peers  # noqa: E402
from timing import median_and_result  # noqa: E402

TEXTS = corpora.TEXT_KINDS
PRESETS = ("gpt2", "cl100k_base", "o200k_base")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mb", type=int, default=2)
    args = ap.parse_args(argv)
    corpora.require("tiktoken", "numpy")
    import numpy as np

    import bpe_studio
    from bpe_studio.core import Tokenizer

    print(f"bpe_studio from {Path(bpe_studio.__file__).parent}")
    paths = dict(zip(TEXTS, corpora.corpus(*TEXTS.values())))
    texts = {
        label: corpora.line_slice(path, 5 * corpora.MB, args.mb * corpora.MB).decode("utf-8")
        for label, path in paths.items()
    }
    failed = False
    print(
        "preset       text     ids        first  | ours: str     bytes    bytes of array | "
        "tiktoken: str   bytes | tiktoken's time over ours: str, bytes, bytes of array"
    )
    for name in PRESETS:
        enc = peers.tiktoken_gpt2() if name == "gpt2" else peers.tiktoken_preset(name)
        for label, text in texts.items():
            ids = enc.encode_ordinary(text)
            array = np.array(ids, dtype=np.int64)
            tok = Tokenizer.preset(name)
            start = time.perf_counter()
            first = tok.decode_bytes(ids)
            first_s = time.perf_counter() - start
            ours_str, ours_text = median_and_result(partial(tok.decode, ids), args.reps)
            ours_list, ours_listed = median_and_result(partial(tok.decode_bytes, ids), args.reps)
            ours_arr, ours_bytes = median_and_result(partial(tok.decode_bytes, array), args.reps)
            tk_str, tk_text = median_and_result(partial(enc.decode, ids), args.reps)
            tk_bytes, tk_data = median_and_result(partial(enc.decode_bytes, ids), args.reps)
            same = first == ours_listed == ours_bytes == tk_data and ours_text == tk_text
            failed |= not same
            print(
                f"{name:12s} {label:8s} {len(ids):9,} {1000 * first_s:6.1f} ms | "
                f"{1000 * ours_str:6.1f} {1000 * ours_list:6.1f} {1000 * ours_arr:6.1f} ms | "
                f"{1000 * tk_str:6.1f} {1000 * tk_bytes:6.1f} ms | {tk_str / ours_str:.2f}x, "
                f"{tk_bytes / ours_list:.2f}x, {tk_bytes / ours_arr:.2f}x"
                f"{'' if same else '  FAIL: bytes differ'}",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
