"""``span_cuts`` against a slow reference: a cut at ``c`` is a span's start that no span
holds characters on both sides of, whatever order the spans come in."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from bpe_studio.core.encode.token_spans import span_cuts

SPANS = st.lists(
    st.tuples(st.integers(0, 30), st.integers(0, 4)).map(lambda p: (p[0], p[0] + p[1])),
    max_size=40,
)


def reference_cuts(spans: list[tuple[int, int]], length: int) -> list[int]:
    starts = {a for a, _ in spans}
    return sorted(c for c in starts if 0 < c < length and not any(a < c < b for a, b in spans))


@given(SPANS, st.booleans())
def test_span_cuts_agree_with_the_reference_sorted_or_not(spans, in_order):
    """Sorted starts (a text's spans in order) take a one-pass path; any order is the
    same cuts."""
    spans = sorted(spans) if in_order else spans
    length = 35
    starts = np.array([a for a, _ in spans], dtype=np.int64)
    ends = np.array([b for _, b in spans], dtype=np.int64)
    assert span_cuts(starts, ends, length).tolist() == reference_cuts(spans, length)
