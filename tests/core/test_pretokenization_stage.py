"""The pre-tokenization stage interface (``pretokenization.stage``) and its three
implementations: the regex path (``Pretokenizer``), a ``tokenizer.json``'s pipeline
(``PipelinePretokenizer``) and the compiled scanners (``Scanner``).

Oracles: ``regex.findall`` for the patterns, Hugging Face ``tokenizers``' own pre-tokenizers
(and their offsets) for the pipelines, hand-checked spans through a normalizer.
"""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys

import pytest
import regex
from core_helpers import REPO_ROOT, SLICES, read_fixture
from hf_shapes import FAMILIES, components, hf_pretokens

from bpe_studio.core.formats.hf.components import read_components
from bpe_studio.core.formats.hf.pipeline import HfPipeline, PipelinePretokenizer
from bpe_studio.core.formats.hf.pre_tokenizers import step_texts
from bpe_studio.core.pretokenization import scan_load
from bpe_studio.core.pretokenization.boundaries import (
    DEEPSEEK_V3_CUTS,
    GPT2_CUTS,
    LLAMA3_CUTS,
    O200K_CUTS,
    SPECIALS_ONLY,
    STARCODER_CUTS,
)
from bpe_studio.core.pretokenization.names import PATTERNS
from bpe_studio.core.pretokenization.pretokenizer import pretokenizer
from bpe_studio.core.pretokenization.scan_patterns import LLAMA3_PATTERN, isolated
from bpe_studio.core.pretokenization.scanner import compiled_scanner
from bpe_studio.core.pretokenization.stage import PreTokenizerStage

TEXTS = [read_fixture(name)[:30_000] for name in SLICES.values()]


def _pipeline(family: str) -> HfPipeline:
    parts = read_components(components(*FAMILIES[family]), family, {})
    assert parts.pipeline is not None
    return parts.pipeline


# Built by the test that uses it, not at collection: translating DeepSeek-V3's patterns takes
# most of a second, which every xdist worker would spend collecting this file.
STAGES = {
    "Pretokenizer0": lambda: pretokenizer("gpt2"),
    "Pretokenizer1": lambda: pretokenizer(r"\p{L}+|\p{N}|[^\p{L}\p{N}]+"),
    "PipelinePretokenizer0": lambda: _pipeline("deepseek_v3").pretokenizer(),
    "PipelinePretokenizer1": lambda: _pipeline("qwen2").pretokenizer(),
    "Scanner0": lambda: compiled_scanner("o200k"),
    "Scanner1": lambda: compiled_scanner(LLAMA3_PATTERN),
}


@pytest.mark.parametrize("kind", list(STAGES))
def test_every_stage_implements_the_interface(kind):
    stage = STAGES[kind]()
    assert isinstance(stage, PreTokenizerStage)
    assert type(stage).__name__ == kind[:-1]
    for text in TEXTS:
        pieces = stage.findall(text)
        spans = stage.spans(text)
        assert len(spans) == len(pieces)
        if not isinstance(stage, PipelinePretokenizer) or not stage.pipeline.normalizers:
            # No normalizer: the spans are the pieces' own places, one after another.
            assert [text[a:b] for a, b in spans] == pieces
            assert spans[0][0] == 0 and spans[-1][1] == len(text)
            assert all(b == c for (_, b), (c, _) in zip(spans, spans[1:]))


def test_cut_rules_of_each_stage():
    assert pretokenizer("gpt2").cut_rules is GPT2_CUTS
    assert compiled_scanner("o200k_base").cut_rules is O200K_CUTS
    assert pretokenizer(r"\w+|\W").cut_rules is SPECIALS_ONLY
    assert compiled_scanner(LLAMA3_PATTERN).cut_rules is LLAMA3_CUTS
    assert pretokenizer(isolated(LLAMA3_PATTERN)).cut_rules is LLAMA3_CUTS
    # A pipeline: its Splits' rules where they are known to hold through its other steps
    # (tests/core/test_boundaries.py): DeepSeek-V3's three Splits; after NFC (hf_shapes'
    # Qwen2 splits with Llama 3's regex) only between characters NFC leaves alone.
    assert _pipeline("deepseek_v3").pretokenizer().cut_rules is DEEPSEEK_V3_CUTS
    assert _pipeline("qwen2").pretokenizer().cut_rules.name == "llama3 after NFC"
    # Digits(individual_digits), then ByteLevel's regex (GPT-2's).
    assert _pipeline("starcoder").pretokenizer().cut_rules is STARCODER_CUTS


def test_pipeline_spans_go_through_the_normalizer():
    """Qwen2's NFC joins "e" + U+0301 into "é": its piece spans both original characters."""
    stage = _pipeline("qwen2").pretokenizer()
    text = "Cafe\u0301 nai\u0308ve 42"
    assert stage.findall(text) == ["Café", " naïve", " ", "42"]
    assert stage.spans(text) == [(0, 5), (5, 12), (12, 13), (13, 15)]
    assert stage.spans("") == [] == stage.findall("")


@pytest.mark.parametrize("family", ["gpt2", "llama3", "deepseek_v3", "starcoder"])
def test_pipeline_spans_equal_tokenizers_offsets(family):
    normalizer, pre = FAMILIES[family]
    stage = _pipeline(family).pretokenizer()
    for text in TEXTS:
        theirs = [offsets for _, offsets in pre.pre_tokenize_str(text)]
        assert stage.spans(text) == theirs, family


@pytest.mark.parametrize("family", list(FAMILIES))
def test_pipelines_with_a_scanner_cut_as_tokenizers(family, monkeypatch):
    """With the kernels loaded, a pipeline whose steps all have a scanner splits long texts
    with it: the same pieces as its regex steps and as ``tokenizers``."""
    pipeline = _pipeline(family)
    has = {"gpt2", "llama3", "qwen2", "deepseek_v3", "starcoder"}
    assert (pipeline.scanner() is not None) == (family in has), family
    if pipeline.scanner() is None:
        return
    scan_load.prepare()
    used = []
    scanner = pipeline.scanner()
    original = type(scanner).findall
    monkeypatch.setattr(
        type(scanner), "findall", lambda self, text: used.append(1) or original(self, text)
    )
    normalizer, pre = FAMILIES[family]
    for text in TEXTS:
        normalized = text if normalizer is None else normalizer.normalize_str(text)
        assert pipeline.findall(text) == step_texts(pipeline.steps, normalized)
        assert pipeline.findall(text) == hf_pretokens(normalizer, pre, text)
    assert used, "the scanner was not used"


def test_the_regex_path_uses_a_loaded_scanner_for_long_texts(monkeypatch):
    """A custom regex with a scanner (Llama 3's) is split by it once the kernels are
    loaded, for long texts only; the named patterns keep their ``re`` forms."""
    scan_load.prepare()
    calls = []
    scanner = compiled_scanner(LLAMA3_PATTERN)
    original = type(scanner).findall
    monkeypatch.setattr(
        type(scanner), "findall", lambda self, text: calls.append(len(text)) or original(self, text)
    )
    pre = pretokenizer(LLAMA3_PATTERN)
    for text in TEXTS:
        assert pre.findall(text) == regex.findall(LLAMA3_PATTERN, text)
    assert pre.findall("short text") == ["short", " text"]
    assert calls and min(calls) >= 1000, "long texts only"
    calls.clear()
    assert pretokenizer("cl100k").findall(TEXTS[0]) == regex.findall(PATTERNS["cl100k"], TEXTS[0])
    assert not calls


def test_a_pipeline_pickles_by_its_json():
    pipeline = _pipeline("deepseek_v3")
    again = pickle.loads(pickle.dumps(pipeline))
    assert again.spec == pipeline.spec and again.needed == pipeline.needed
    assert again.findall(TEXTS[0]) == pipeline.findall(TEXTS[0])
    stage = pickle.loads(pickle.dumps(pipeline.pretokenizer()))
    assert stage.findall(TEXTS[1]) == pipeline.findall(TEXTS[1])


def test_the_pipeline_does_not_reach_back_into_components():
    """``components`` reads a file into a pipeline; the pipeline never imports it back, at
    any level (the run-time back edge is gone)."""
    source = (REPO_ROOT / "bpe_studio/core/formats/hf/pipeline.py").read_text(encoding="utf-8")
    imported = {
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not any(name.endswith("components") for name in imported)
    code = (
        "import sys, pickle; from bpe_studio.core.formats.hf import pipeline as p; "
        "print('bpe_studio.core.formats.hf.components' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    assert out.stdout.strip() == "False"
