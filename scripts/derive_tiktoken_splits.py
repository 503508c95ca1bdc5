"""Derive the merges of the preset rank files once and ship them beside the rank files.

Deriving o200k_base's merges takes seconds; loading the preset must take under one. This
script writes ``resources/tokenizers/NAME.splits.gz`` for each shipped ``NAME.tiktoken.gz``:
the sha256 of the rank file it belongs to, then one byte per multi-byte token (in rank order)
giving the length of the token's left part. The rank files stay the source of truth:
``read_tiktoken`` uses a splits file only for the exact rank file its header names, and
``tests/core/test_formats_tiktoken.py`` re-derives every split from the rank files.

Usage: python scripts/derive_tiktoken_splits.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpe_studio.core.formats.tiktoken.shipped import splits_file_for  # noqa: E402

FOLDER = ROOT / "resources" / "tokenizers"


def main() -> None:
    for rank_file in sorted(FOLDER.glob("*.tiktoken.gz")):
        start = time.perf_counter()
        blob = splits_file_for(rank_file)
        out = FOLDER / rank_file.name.replace(".tiktoken.gz", ".splits.gz")
        out.write_bytes(blob)
        took = time.perf_counter() - start
        print(f"{out.relative_to(ROOT)}: {len(blob):,} bytes ({took:.1f} s)")


if __name__ == "__main__":
    main()
