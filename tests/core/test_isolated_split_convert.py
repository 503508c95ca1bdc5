"""A ``tokenizer.json`` that splits text with one custom Isolated Split (Llama 3's and Qwen2's
shape) converts to tiktoken's format and back to a ``tokenizer.json`` with every id as
``tokenizers`` gives it with the original file: on the shared corpora and generated text, and
with a regex that leaves text between its matches (which an Isolated Split keeps as pieces).
tiktoken itself encodes the file between as ``tokenizers`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tiktoken
import tokenizers
from core_helpers import full_corpus
from foreign_files import LLAMA3_REGEX, QWEN2_REGEX, one_split
from hypothesis import HealthCheck, given, settings
from reference_encoder import ASSIGNED_TEXTS, read_rank_file

from bpe_studio.core import Tokenizer

REGEXES = {"llama3": LLAMA3_REGEX, "qwen2": QWEN2_REGEX, "gaps": r"\p{L}+| ?\p{N}"}
CORPORA = ("english_books.txt", "chinese.txt", "code.txt", "mixed_web.txt")
GAPPY = "a1 b2,, c3!\n\n  x 4 \t5 中文 😀 ?? "


class RoundTrip:
    """The original file, the tiktoken files converted from it, and the tokenizer.json
    converted from those, each as its own library reads it."""

    def __init__(self, folder: Path, regex: str) -> None:
        original = one_split(folder / "original", regex)
        rank_path, sidecar = Tokenizer.load(original).save(folder / "tt", format="tiktoken")
        (back,) = Tokenizer.load(rank_path).save(folder / "back", format="hf")
        settings = json.loads(sidecar.read_text(encoding="utf-8"))
        self.original = tokenizers.Tokenizer.from_file(str(original))
        self.back = tokenizers.Tokenizer.from_file(str(back))
        self.tiktoken = tiktoken.Encoding(
            "converted",
            pat_str=settings["pat_str"],
            mergeable_ranks=read_rank_file(rank_path),
            special_tokens=settings["special_tokens"],
        )
        self.written = json.loads(back.read_text(encoding="utf-8"))

    def check(self, text: str) -> None:
        expected = self.original.encode(text, add_special_tokens=False).ids
        assert self.back.encode(text, add_special_tokens=False).ids == expected
        assert self.tiktoken.encode(text, allowed_special="all") == expected


@pytest.fixture(scope="module", params=sorted(REGEXES))
def round_trip(request, tmp_path_factory) -> RoundTrip:
    return RoundTrip(tmp_path_factory.mktemp(request.param), REGEXES[request.param])


def test_the_split_is_written_back_as_one_isolated_split(round_trip):
    split, byte_level = round_trip.written["pre_tokenizer"]["pretokenizers"]
    assert (split["type"], split["behavior"], split["invert"]) == ("Split", "Isolated", False)
    assert byte_level["type"] == "ByteLevel" and not byte_level["use_regex"]
    round_trip.check(GAPPY)


@pytest.mark.parametrize("corpus", CORPORA)
def test_ids_on_the_shared_corpora(round_trip, corpus):
    with full_corpus(corpus).open(encoding="utf-8", errors="replace") as f:
        text = f.read(200_000)
    round_trip.check(text)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=ASSIGNED_TEXTS)
def test_ids_on_generated_text(round_trip, text):
    round_trip.check(text)
