"""Large JSON parsed in slices (core/formats/base/json_slices.py).

The oracle is ``json.loads`` on the same text: the value, or the error (its message and
place), must be the same. Slices are made tiny here, so that a few hundred characters are cut
as a tokenizer file's megabytes are, and the keys hold the characters that could be taken
for a cut or an end (quotes, escapes, commas, brackets, colons, digits).
"""

from __future__ import annotations

import json
from collections import OrderedDict

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


def test_a_key_given_twice_keeps_its_last_value(tiny):
    """The JSON review: a "vocab" given twice, the last a string spelling the mark that put
    the first back (an escape kept it from the text): json.loads keeps the string."""
    text = _file({f"t{i}": i for i in range(40)}, [["a", "b"]], {})
    spelled = "\\u0000\\u0062pe-studio: parsed in slices 0"
    twice = text.replace('"merges"', f'"vocab": "{spelled}", "merges"', 1)
    assert loads_in_slices(twice) == json.loads(twice)
    assert isinstance(json.loads(twice)["model"]["vocab"], str)


def _refused_as_json_loads_refuses(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as whole:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as sliced:
        loads_in_slices(text)
    assert (sliced.value.msg, sliced.value.pos) == (whole.value.msg, whole.value.pos)


@pytest.mark.parametrize("space", ["\x0c", "\x0b", "\u00a0", "\u2028", "\x1f"])
def test_whitespace_json_does_not_allow_at_a_cut_is_refused(tiny, space):
    """The JSON review: a cut's text is dropped, and it was matched with \\s, which takes
    characters JSON refuses: such a text was read as a vocabulary."""
    text = json.dumps({f"t{i}": i for i in range(60)})
    _refused_as_json_loads_refuses(text.replace(', "t30"', f'{space}, "t30"', 1))


def test_a_hook_sees_what_json_loads_shows_it(monkeypatch):
    """The JSON review: an object inside a sliced one was built with list, not the hook; and
    a hook may count on json.loads' calls (load_vocab records the first repeated key)."""
    monkeypatch.setattr(json_slices, "SLICE", 64)
    monkeypatch.setattr(json_slices, "LARGE", 0)
    members = json.dumps({f"tok{i}": i for i in range(40)})[1:-1].split(", ")
    members.insert(20, '"nested": {"x": "a", "x": "b"}')
    text = "{" + ", ".join(members) + "}"
    calls: list[list] = []

    def hook(pairs):
        calls.append(list(pairs))
        return OrderedDict(pairs)

    assert loads_in_slices(text, object_pairs_hook=hook) == json.loads(
        text, object_pairs_hook=OrderedDict
    )
    seen, calls[:] = list(calls), []
    json.loads(text, object_pairs_hook=hook)
    assert seen == calls


def test_the_first_error_in_the_text_is_the_one_raised(monkeypatch):
    """The JSON review: the containers were parsed before the rest, so an integer too long
    inside "vocab" was raised for a text whose first error came before it."""
    monkeypatch.setattr(json_slices, "SLICE", 8192)
    monkeypatch.setattr(json_slices, "LARGE", 0)
    vocab = json.dumps({f"tok{i}": i for i in range(3000)})
    vocab = vocab.replace('"tok5": 5,', '"tok5": ' + "9" * 5000 + ",")
    _refused_as_json_loads_refuses('{"version": "1.0",, "model": {"vocab": ' + vocab + "}}")


def test_a_text_of_many_small_containers_is_parsed_whole_at_once(monkeypatch):
    """The JSON review: 60,000 records {"vocab": {"a": 1}} took 166 s (each tried as a
    container to slice, a slice's length of text searched and parsed for each)."""
    monkeypatch.setattr(json_slices, "LARGE", 0)
    text = json.dumps([{"vocab": {"a": 1, "b": 2}}] * 20_000)
    calls: list[int] = []
    loads = json.loads

    def counted(text, **kw):
        calls.append(len(text))
        return loads(text, **kw)

    monkeypatch.setattr(json_slices.json, "loads", counted)
    assert loads_in_slices(text) == loads(text)
    assert len(calls) <= 2 * json_slices._KEYS_TRIED + 2


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
