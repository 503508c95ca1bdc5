"""The two merge engines behind BpeTrainer: the same merges as the slow reference on the CS336
fixture, under every named pattern, with special tokens and on generated text; the choice
between them (by size, forced, and the fallback when numba cannot be imported); the compile
message and where numba's cache goes."""

from __future__ import annotations

import logging
import sys
from collections import Counter

import pytest
import regex
from core_helpers import EOT, FIXTURES, REPO_ROOT, SLICES, slice_head, write_text
from gpt2_bytes import read_gpt2_merges
from hypothesis import given
from reference_encoder import ASSIGNED_TEXTS, published
from text_strategies import HYPO

import bpe_studio.core.io
import bpe_studio.core.train
from bpe_studio.core import BpeTrainer, count_text, train_bpe
from bpe_studio.core.reference import pretoken_counts, reference_steps, split_on_specials
from bpe_studio.core.train import merge_engine, trainer
from bpe_studio.core.train.merge_engine import CompiledEngineUnavailable

ENGINES = ("python", "compiled")


def reference_merges(counts: dict[bytes, int], merges: int) -> list[tuple[bytes, bytes]]:
    return [(s.left, s.right) for s in reference_steps(counts, merges)]


def engine_merges(counts, vocab_size, specials=(), engine="python"):
    t = BpeTrainer(counts, vocab_size, list(specials), engine=engine)
    assert t.engine_used == engine
    return [(s.left, s.right) for s in t]


@pytest.mark.parametrize("engine", ENGINES)
def test_cs336_reference_merges(engine, tmp_path):
    _, merges = train_bpe(FIXTURES / "corpus.en", 500, [EOT], engine=engine)
    assert merges == read_gpt2_merges(FIXTURES / "train-bpe-reference-merges.txt")


def published_counts(text: str, name: str) -> dict[bytes, int]:
    """Pre-token counts under tiktoken's published pattern, found here with ``regex`` (not
    with bpe_studio's pattern code), special tokens split out first."""
    pat = regex.compile(published(name)["pat_str"])
    counts: Counter[bytes] = Counter()
    for piece in split_on_specials(text, [EOT]):
        counts.update(m.encode("utf-8") for m in pat.findall(piece))
    return dict(counts)


NAMED = [("cl100k", "cl100k_base"), ("o200k", "o200k_base")]


@pytest.mark.parametrize("pattern,published_name", NAMED)
def test_every_named_pattern_both_engines(pattern, published_name):
    text = "".join(slice_head(k, n) for k, n in [("mixed_web", 20_000), ("code", 10_000)])
    text += slice_head("chinese", 6_000)
    counts = count_text(text, [EOT], pattern=pattern)
    assert dict(counts) == published_counts(text, published_name)
    expected = reference_merges(dict(counts), 300)
    for engine in ENGINES:
        assert engine_merges(counts, 257 + 300, [EOT], engine) == expected, engine


def test_gpt2_pattern_both_engines_on_every_slice():
    text = "".join(slice_head(key, 6_000) for key in SLICES)
    counts = pretoken_counts(text, [EOT])
    expected = reference_merges(counts, 400)
    for engine in ENGINES:
        assert engine_merges(counts, 258 + 400, [EOT, "<pad>"], engine) == expected, engine


@HYPO
@given(ASSIGNED_TEXTS)
def test_generated_text_both_engines(text):
    counts = pretoken_counts(text, [EOT])
    expected = reference_merges(counts, 60)
    assert engine_merges(counts, 257 + 60, [EOT], "python") == expected
    assert engine_merges(counts, 257 + 60, [EOT], "compiled") == expected


@pytest.mark.parametrize("engine", ENGINES)
def test_empty_and_pairless_corpora(engine):
    assert engine_merges({}, 300, [], engine) == []
    assert engine_merges({b"a": 5, b" ": 3, b"b": 0}, 300, [EOT], engine) == []
    assert BpeTrainer({b"a": 1}, 300, engine=engine).top_pairs(3) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_close_mid_run_and_top_pairs(engine):
    counts = pretoken_counts(slice_head("chinese", 5_000), [EOT])
    expected = list(reference_steps(counts, 50, top_k=5))
    t = BpeTrainer(counts, 257 + 50, [EOT], engine=engine)
    it = iter(t)
    for ref in expected[:20]:
        assert t.top_pairs(5) == ref.top
        next(it)
    t.close()
    assert t.top_pairs(5) == []
    assert list(it) == []
    assert t.merges == [(r.left, r.right) for r in expected[:20]]
    assert len(t.vocab) == 257 + 20


def test_one_long_pre_token_keeps_the_compiled_pair_index_small():
    """A hostile-input audit: 10 MB of one letter (one pre-token) took 1.9 GB to train with
    the compiled engine, 1.1 GB of it a pair index grown for two new pairs per place merged
    (ten million) when there were 11 pairs in all. A merge creates at most two pairs per
    token there is; the index is sized by that. Exact against the reference too."""
    from bpe_studio.core.train.engine_start import EngineStart

    merge_engine.prepare()
    counts = {b"a" * 200_000 + b"b" * 100_000: 2, b"ab" * 1000: 1}
    expected = reference_merges(counts, 40)
    tokens = [bytes([i]) for i in range(256)]
    engine = merge_engine.CompiledMergeEngine(EngineStart.of(counts, tokens, 256 + 40))
    merges = []
    while len(merges) < 40 and (best := engine.best()) is not None:
        a, b, _ = best
        tokens.append(tokens[a] + tokens[b])
        engine.add_token(len(tokens) - 1, tokens[-1])
        engine.merge(len(tokens) - 1)
        merges.append((tokens[a], tokens[b]))
        # Its slots, at most half full, for the pairs there are and a merge can create.
        assert engine.hkeys.size <= 4 * (int(engine.meta[0]) + 2 * len(tokens)) + (1 << 18)
    assert merges == expected


# ---------------------------------------------------------------- choosing an engine
@pytest.fixture
def no_numba(monkeypatch):
    """numba (and so the kernels) cannot be imported, as on a platform without a wheel."""
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.delitem(sys.modules, "bpe_studio.core.train.merge_kernel", raising=False)
    monkeypatch.delitem(sys.modules, "bpe_studio.core.io.numba_cache", raising=False)
    monkeypatch.delattr(bpe_studio.core.train, "merge_kernel", raising=False)
    monkeypatch.delattr(bpe_studio.core.io, "numba_cache", raising=False)
    monkeypatch.setattr(merge_engine.LOADER, "_module", None)
    monkeypatch.setattr(merge_engine.LOADER, "_failure", None)
    monkeypatch.setattr(merge_engine.LOADER, "_ready", False)
    monkeypatch.setattr(trainer, "_fallback_said", False)


COUNTS = {b"hello": 3, b" world": 2, b"lollo": 1}


def test_auto_picks_by_positions(monkeypatch):
    positions = trainer.count_positions(COUNTS)
    assert positions == 16
    monkeypatch.setattr(trainer, "COMPILED_FROM", positions)
    assert BpeTrainer(COUNTS, 270).engine_used == "compiled"
    monkeypatch.setattr(trainer, "COMPILED_FROM", positions + 1)
    assert BpeTrainer(COUNTS, 270).engine_used == "python"
    # One-byte pre-tokens and zero counts are no positions.
    assert trainer.count_positions({b"a": 9, b"ab": 0, b"abc": 1}) == 3


@pytest.mark.parametrize("above", [False, True])
def test_numba_starts_loading_only_once_the_unique_positions_say_compiled(
    tmp_path, monkeypatch, above
):
    """Six copies of one text, one per chunk: the chunks' positions add up to six times the
    corpus's, which must not start numba loading; the corpus's own positions must."""
    from bpe_studio.core.corpus import counting as corpus

    one = slice_head("english", 6_000) + EOT
    path = write_text(tmp_path / "six.txt", one * 6)
    positions = trainer.count_positions(count_text(one, [EOT]))
    monkeypatch.setattr(corpus, "IN_PROCESS_LIMIT", 1000)
    monkeypatch.setattr(corpus, "CHUNK_BYTES", len(one.encode()))
    monkeypatch.setattr(trainer, "COMPILED_FROM", positions + (0 if above else 1))
    started: list[int] = []
    monkeypatch.setattr(merge_engine, "prepare_in_background", lambda: started.append(1))
    t = trainer.trainer_from_file(path, 300, [EOT], workers=2)
    assert t.engine_used == ("compiled" if above else "python")
    assert started == ([1] if above else [])


def test_fallback_when_numba_cannot_be_imported(no_numba, monkeypatch, caplog):
    monkeypatch.setattr(trainer, "COMPILED_FROM", 0)
    expected = reference_merges(COUNTS, 10)
    with caplog.at_level(logging.WARNING, logger="bpe_studio.trainer"):
        t = BpeTrainer(COUNTS, 266)
        assert t.engine_used == "python"
        assert [(s.left, s.right) for s in t] == expected
        assert BpeTrainer(COUNTS, 266).engine_used == "python"
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1, "said once per process"
    assert "Python merge engine" in warnings[0] and "numba" in warnings[0]
    with pytest.raises(
        CompiledEngineUnavailable,
        match=r"needs numba, which failed to import \(ModuleNotFoundError: import of numba",
    ):
        BpeTrainer(COUNTS, 266, engine="compiled")
    assert BpeTrainer(COUNTS, 266, engine="python").engine_used == "python"


def test_an_unknown_engine_is_refused(tmp_path):
    with pytest.raises(ValueError, match="must be one of auto, python, compiled, not 'fast'"):
        BpeTrainer(COUNTS, 266, engine="fast")  # type: ignore[arg-type]
    path = write_text(tmp_path / "c.txt", "hello world")
    with pytest.raises(ValueError, match="'fast'"):
        train_bpe(path, 266, engine="fast")  # type: ignore[arg-type]


def test_user_cache_dir_is_outside_the_package(monkeypatch, tmp_path):
    from bpe_studio.core.io import numba_cache

    monkeypatch.setattr(numba_cache.config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert numba_cache.kernel_cache_dir() == tmp_path / "bpe-studio" / "numba"
    assert REPO_ROOT not in numba_cache.kernel_cache_dir().parents
