"""Large JSON parsed in slices (core/formats/base/json_slices.py).

The oracle is ``json.loads`` on the same text: the value, or the error (its message and
place), must be the same. Slices are made tiny here, so that a few hundred characters are cut
as a tokenizer file's megabytes are, and the keys hold the characters that could be taken
for a cut or an end (quotes, escapes, commas, brackets, colons, digits).
"""

from __future__ import annotations

import json

import pytest
from core_helpers import FIXTURES
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO, WIDE_CHARS

from bpe_studio.core import Tokenizer
from bpe_studio.core.formats.base import json_slices
from bpe_studio.core.formats.base.json_slices import loads_in_slices

# Characters a cut or an end could be mistaken at, and some others.
TRICKY = st.sampled_from(list('"\\,:{}[] 0123456789\n\t\u0120') + ["\u00e9", "\u4e2d"])
KEYS = st.text(st.one_of(TRICKY, WIDE_CHARS), max_size=6)
VOCABS = st.lists(st.tuples(KEYS, st.integers(-5, 10**6)), max_size=40).map(dict)
PAIRS = st.lists(st.tuples(KEYS, KEYS).map(list), max_size=30)
STRINGS = st.lists(st.tuples(KEYS, KEYS).map(" ".join), max_size=30)
STYLES = st.sampled_from([{}, {"indent": 2}, {"ensure_ascii": False}, {"separators": (",", ":")}])


@pytest.fixture(scope="module")
def tiny():
    """Slices of a few characters, and every text parsed in them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(json_slices, "SLICE", 16)
        patch.setattr(json_slices, "LARGE", 0)
        yield


def _file(vocab, merges, style) -> str:
    model = {"type": "BPE", "dropout": None, "vocab": vocab, "merges": merges}
    added = [{"id": 0, "content": "<s>", "special": True}]
    return json.dumps({"version": "1.0", "added_tokens": added, "model": model}, **style)


@given(vocab=VOCABS, merges=st.one_of(PAIRS, STRINGS), style=STYLES)
@HYPO
def test_a_tokenizer_file_is_what_json_loads_gives(tiny, vocab, merges, style):
    text = _file(vocab, merges, style)
    assert loads_in_slices(text) == json.loads(text)


@given(vocab=VOCABS, style=STYLES)
@HYPO
def test_a_vocabulary_file_is_what_json_loads_gives_with_its_hook(tiny, vocab, style):
    text = json.dumps(vocab, **style)
    assert loads_in_slices(text, object_pairs_hook=list) == json.loads(text, object_pairs_hook=list)
    # A key given twice: the last value, as json.loads keeps it.
    twice = text.replace("{", '{"x": 1, "x": 2,', 1) if vocab else '{"x": 1, "x": 2}'
    assert loads_in_slices(twice) == json.loads(twice)


@given(vocab=VOCABS, merges=PAIRS, cut=st.integers(0, 10**6), style=STYLES)
@HYPO
def test_a_broken_text_raises_what_json_loads_raises(tiny, vocab, merges, cut, style):
    text = _file(vocab, merges, style)
    text = text[: cut % len(text)] + text[cut % len(text) + 1 :]  # one character gone
    try:
        expected: object = json.loads(text)
    except json.JSONDecodeError as e:
        expected = (e.msg, e.pos)
    try:
        got: object = loads_in_slices(text)
    except json.JSONDecodeError as e:
        got = (e.msg, e.pos)
    assert got == expected


@pytest.mark.parametrize("escape", [False, True])
def test_a_string_that_spells_a_mark_is_kept(tiny, escape):
    """A container is put back where a string of the rest equals its mark: a string of the
    file that spells one (with an escape, so it is not found in the text) is no place."""
    text = _file({"a": 1, "b": 2}, [["a", "b"]], {})
    mark = json.dumps(json_slices._MARK + " 0")
    spelled = text.replace('"<s>"', mark.replace("b", "\\u0062") if escape else mark)
    assert loads_in_slices(spelled) == json.loads(spelled)


def test_a_real_file_is_parsed_in_slices(tmp_path, monkeypatch):
    """GPT-2's vocabulary and merges as a tokenizer.json: no call parses more than about
    two slices (whole, one call held Python's lock for the whole file)."""
    monkeypatch.setattr(json_slices, "SLICE", 4096)
    monkeypatch.setattr(json_slices, "LARGE", 0)
    calls: list[int] = []
    loads = json.loads

    def counted(text, **kw):
        calls.append(len(text))
        return loads(text, **kw)

    tok = Tokenizer.from_files(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt")
    tok.save(tmp_path / "t", format="hf")
    text = (tmp_path / "t" / "tokenizer.json").read_text(encoding="utf-8")
    monkeypatch.setattr(json_slices.json, "loads", counted)
    sliced = loads_in_slices(text)
    assert len(calls) > 200 and max(calls) <= 2 * 4096 + 2
    assert sliced == loads(text)
