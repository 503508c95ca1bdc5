"""``encode(text, add_special_tokens=True)`` with the post-processor of every shape the open
models publish (``model_shapes``): byte-level files (Llama 3's and 3.1's template, DeepSeek-V3's
``Sequence`` of ByteLevel and TemplateProcessing, Qwen's ByteLevel alone, RoBERTa's
processor) run by ``Tokenizer``, and SentencePiece-style, Unigram and WordPiece files (Llama 2,
Gemma 3, T5, BERT) run by ``tokenizers``. Oracle: ``tokenizers``' own ``encode`` of the file.
"""

from __future__ import annotations

import pytest
import tokenizers
from core_helpers import SLICES, read_fixture
from model_shapes import BYTE_LEVEL_SHAPES, SHAPES

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.foreign import open_tokenizer

TEXTS = [read_fixture(SLICES["english"])[:2000], read_fixture(SLICES["chinese"])[:300], "", "a"]


@pytest.fixture(scope="module", params=list(SHAPES))
def shape(request, tmp_path_factory):
    build, before, after = SHAPES[request.param]
    path = build(tmp_path_factory.mktemp(request.param.replace(".", "_")))
    return request.param, path, before, after


def test_the_kind_is_the_one_the_file_needs(shape):
    name, path, _, _ = shape
    assert isinstance(open_tokenizer(path), Tokenizer) == (name in BYTE_LEVEL_SHAPES)


def test_add_special_tokens_adds_what_tokenizers_adds(shape):
    _, path, before, after = shape
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = open_tokenizer(path)
    for text in TEXTS:
        assert tok.encode(text, add_special_tokens=True) == hf.encode(text).ids, text[:30]
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert tok.encode_batch(TEXTS, add_special_tokens=True) == [
        e.ids for e in hf.encode_batch(TEXTS)
    ]
    # The template names its tokens by what the model file calls them.
    template = tok.template
    if not before and not after:
        assert template is None
    else:
        assert template.before == tuple(hf.token_to_id(t) for t in before)
        assert template.after == tuple(hf.token_to_id(t) for t in after)
        assert template.text == " ".join([*before, "$A", *after])
