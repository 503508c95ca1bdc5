"""Ids never wrap around in an array (issue 32): ``encode_array`` on both kinds, ``encode_file``
and the ``.npy`` it writes take one rule (``id_arrays``): a dtype that cannot hold the
tokenizer's largest id is a ValueError naming the dtype, that id and the dtype that would do;
``dtype=None`` picks the smallest that holds every id, as ``encode_file`` does.

Oracle: tiktoken's o200k_base (built offline from the shipped rank file), whose ids go past
65,535; a ``tokenizers`` WordLevel model whose ids do too.
"""

from __future__ import annotations

import numpy as np
import pytest
from core_helpers import SLICES, read_fixture, write_text
from reference_encoder import shipped_tiktoken
from tokenizers import Tokenizer as HfTokenizer
from tokenizers import models, pre_tokenizers

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.encode.id_arrays import ids_dtype

TEXT = read_fixture(SLICES["chinese"])[:20_000] + read_fixture(SLICES["english"])[:20_000]


@pytest.fixture(scope="module")
def o200k() -> Tokenizer:
    return Tokenizer.preset("o200k_base")


def test_uint16_is_refused_where_ids_go_past_it(o200k):
    expected = shipped_tiktoken("o200k_base").encode(TEXT, allowed_special="all")
    assert max(expected) > 65_535  # the ids uint16 would wrap around
    with pytest.raises(ValueError) as refused:
        o200k.encode_array(TEXT, "uint16")
    line = str(refused.value)
    assert "dtype uint16 holds ids up to 65,535" in line
    assert f"ids go up to {o200k.max_token_value:,}" in line and "use uint32" in line
    for dtype in ("uint32", "int64", None, "auto"):
        array = o200k.encode_array(TEXT, dtype)
        assert array.tolist() == expected
        assert o200k.decode(array.tolist()) == TEXT
    assert o200k.encode_array(TEXT, None).dtype == np.uint32


def test_the_smallest_dtype_is_the_files_dtype(o200k, gpt2_tokenizer, tmp_path):
    path = write_text(tmp_path / "t.txt", TEXT)
    for tok, name in ((o200k, "uint32"), (gpt2_tokenizer, "uint16")):
        assert ids_dtype(tok.max_token_value).name == name
        assert tok.encode_array(TEXT, None).dtype.name == name
        out = tmp_path / f"{name}.npy"
        stats = encode_file(tok, path, out, workers=1)
        assert stats.dtype == name and np.load(out).dtype.name == name
        assert np.load(out).tolist() == tok.encode(TEXT)


@pytest.fixture(scope="module")
def big_ids(tmp_path_factory):
    """A WordLevel tokenizer.json (run by tokenizers) whose ids reach 70,000."""
    vocab = {"[UNK]": 0, "a": 1, "big": 70_000, "word": 65_536}
    tok = HfTokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path_factory.mktemp("wordlevel") / "tokenizer.json"
    tok.save(str(path))
    return open_tokenizer(path)


def test_a_foreign_tokenizer_takes_the_same_rule(big_ids, tmp_path):
    text = "a big word a"
    assert big_ids.encode(text) == [1, 70_000, 65_536, 1]
    with pytest.raises(ValueError, match=r"dtype uint16 holds ids up to 65,535, but .* 70,000"):
        big_ids.encode_array(text, "uint16")
    assert big_ids.encode_array(text, None).tolist() == [1, 70_000, 65_536, 1]
    assert big_ids.encode_array(text, None).dtype == np.uint32
    out = tmp_path / "ids.npy"
    encode_file(big_ids, write_text(tmp_path / "t.txt", text), out, workers=1)
    assert np.load(out).tolist() == [1, 70_000, 65_536, 1]
