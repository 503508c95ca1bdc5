"""``dumps_in_slices`` writes ``json.dumps``' own text (compact, and indented as vocab.json
is), a slice at a time: checked on random nested values with tiny slices, and on o200k's
tokenizer.json object."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_studio.core.formats.base import json_writing
from bpe_studio.core.formats.base.json_writing import dumps_in_slices

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
keys = st.text(max_size=3) | st.integers(-3, 3)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=7) | st.dictionaries(keys, inner, max_size=7),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(value=values, indent=st.none() | st.integers(0, 2))
def test_the_text_is_json_dumps_own(value, indent, monkeypatch_slices):
    assert dumps_in_slices(value, indent=indent) == json.dumps(
        value, ensure_ascii=False, indent=indent
    )


@pytest.fixture(scope="module")
def monkeypatch_slices():
    """Slices of two members: every container of more is cut."""
    before, json_writing.SLICE_MEMBERS = json_writing.SLICE_MEMBERS, 2
    yield
    json_writing.SLICE_MEMBERS = before


def test_a_large_tokenizer_json_and_vocab_json_are_json_dumps_own_text():
    from bpe_studio.core import Tokenizer
    from bpe_studio.core.formats.gpt2 import encode_token
    from bpe_studio.core.formats.hf.tokenizer_json import _hf_object

    data = Tokenizer.preset("o200k_base").to_data()
    obj = _hf_object(data, "tokenizer.json")
    assert len(obj["model"]["vocab"]) > json_writing.SLICE_MEMBERS  # it is sliced
    assert dumps_in_slices(obj) == json.dumps(obj, ensure_ascii=False)
    vocab = {encode_token(tok): idx for idx, tok in sorted(data.vocab.items())}
    assert dumps_in_slices(vocab, indent=0) == json.dumps(vocab, ensure_ascii=False, indent=0)
