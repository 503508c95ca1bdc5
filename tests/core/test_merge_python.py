"""The Python merge engine on its own: token ids are characters there, so ids in the surrogate
range and above U+FFFF must merge like any other, and a vocabulary beyond the code points is
refused. Checked merge by merge against the slow reference in ``core.reference``."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from core_helpers import slice_head

from bpe_studio.core.reference import pretoken_counts, reference_steps
from bpe_studio.core.train.engine_start import EngineStart
from bpe_studio.core.train.merge_python import MAX_TOKENS, PythonMergeEngine


def engine_steps(
    counts: dict[bytes, int],
    first_id: int,
    merges: int,
    after_merge: Callable[[PythonMergeEngine], None] = lambda engine: None,
) -> list:
    """Run the engine with ids ``256..first_id - 1`` taken by tokens no word holds, so that
    the merges get ids from ``first_id`` on; ``(left, right, count, top 4)`` per merge.
    ``after_merge`` looks at the engine after each merge."""
    tokens = [bytes([i]) for i in range(256)]
    tokens += [b"<%d>" % i for i in range(first_id - 256)]
    engine = PythonMergeEngine(EngineStart.of(counts, tokens, first_id + merges))
    steps = []
    for new_id in range(first_id, first_id + merges):
        top = [(tokens[a], tokens[b], c) for a, b, c in engine.top(4)]
        best = engine.best()
        if best is None:
            break
        a, b, count = best
        tokens.append(tokens[a] + tokens[b])
        engine.add_token(new_id, tokens[-1])
        engine.merge(new_id)
        after_merge(engine)
        steps.append((tokens[a], tokens[b], count, top))
    engine.close()
    return steps


@pytest.mark.parametrize("first_id", [0xD800 - 40, 0xFFFF - 40, 0x10000])
@pytest.mark.parametrize("key", ["chinese", "code"])
def test_ids_past_the_surrogates_and_the_bmp(key, first_id):
    counts = pretoken_counts(slice_head(key, 3_000), [])
    reference = [(s.left, s.right, s.count, s.top) for s in reference_steps(counts, 200, top_k=4)]
    assert engine_steps(counts, first_id, 200) == reference


def test_a_vocabulary_beyond_the_code_points_is_refused():
    # The engine is sized by the merges its corpus allows (EngineStart.of); a start that
    # could need more ids than there are code points is refused.
    tokens = [bytes([i]) for i in range(256)]
    PythonMergeEngine(EngineStart(tokens, MAX_TOKENS, words=[b"ab"], freqs=[1]))
    with pytest.raises(ValueError, match="at most 1,114,112 tokens.*engine='compiled'"):
        PythonMergeEngine(EngineStart(tokens, MAX_TOKENS + 1, words=[b"ab"], freqs=[1]))


@pytest.mark.parametrize("word", [b"ab" * 2_000, b" " * 4_000, b"abcabdabc" * 400])
def test_a_word_is_listed_once_per_pair_it_gains_and_merges_as_the_reference(word):
    # Listed once per merge site, a long pre-token (DNA, a run of spaces) made each later
    # merge of a pair it gained replace the whole word once per site: quadratic (a 600 KB
    # line of DNA took 59 s to train 44 merges, 0.5 s after).
    counts = {word: 3, b"ab": 2, b"  ": 1}

    def listed_once(engine: PythonMergeEngine) -> None:
        for pair, listed in engine._where.items():
            assert len(listed) == len(set(listed)), pair

    steps = engine_steps(counts, 256, 12, after_merge=listed_once)
    reference = [(s.left, s.right, s.count) for s in reference_steps(counts, 12, top_k=0)]
    assert [step[:3] for step in steps] == reference
