"""Special tokens (``core.pretokenization.specials``), the one matcher every caller uses:
validation, leftmost-longest matching, splitting, and where a file chunk may end before a
special token. Checked against a slow scan written here, and through each caller (counting,
encode, spans, streaming)."""

from __future__ import annotations

import pytest
from core_helpers import EOT, FIXTURES, SLICES, read_fixture
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import HYPO

from bpe_studio.core import Tokenizer, count_text, train_bpe
from bpe_studio.core.pretokenization.specials import (
    Specials,
    first_free_start,
    validate_special_tokens,
)

# Overlapping tokens: one a prefix of another, one a suffix of another, one inside another.
OVERLAPPING = ["<s>", "<s><s>", "s>", "ab", "b", "xaby"]
PARTS = st.sampled_from(["<s>", "<", "s", ">", "a", "b", "ab", "x", "y", " ", "\n", "中"])


def reference_matches(text: str, tokens) -> list[tuple[int, int, str]]:
    """Scan left to right; where some token starts, take the longest one and jump past it."""
    out, i = [], 0
    while i < len(text):
        found = [t for t in tokens if text.startswith(t, i)]
        if found:
            t = max(found, key=len)
            out.append((i, i + len(t), t))
            i += len(t)
        else:
            i += 1
    return out


def test_validation_keeps_order_and_drops_duplicates():
    assert validate_special_tokens(["b", "a", "b"]) == ["b", "a"]
    assert validate_special_tokens(None) == []
    with pytest.raises(ValueError, match="empty"):
        validate_special_tokens(["a", ""])
    with pytest.raises(TypeError, match="b'x'"):
        validate_special_tokens([b"x"])
    assert Specials.of(["b", "a", "b"]).tokens == ("b", "a")


def test_no_special_tokens():
    s = Specials.of([])
    assert not s and s.regex is None and s.longest == 0
    assert list(s.segments("abc")) == [(0, 3, None)]
    assert s.split("abc") == ["abc"] and s.spans("abc") == []


@HYPO
@given(st.lists(PARTS, max_size=40).map("".join), st.sampled_from([OVERLAPPING, [EOT], ["<s>"]]))
def test_matching_is_leftmost_longest(text, tokens):
    sp = Specials.of(tokens)
    expected = reference_matches(text, tokens)
    assert sp.spans(text) == [(a, b) for a, b, _ in expected]
    segments = list(sp.segments(text))
    assert [(b, t) for _, b, t in segments[:-1]] == [(a, t) for a, _, t in expected]
    ends = [0] + [b for _, b, _ in expected]
    starts = [a for a, _, _ in expected] + [len(text)]
    assert [(a, b) for a, b, _ in segments] == list(zip(ends, starts))
    assert sp.split(text) == [text[a:b] for a, b in zip(ends, starts)]
    assert sp.longest == max(map(len, tokens))


@HYPO
@given(st.lists(PARTS, max_size=40).map("".join), st.data())
def test_segments_of_any_range_are_those_of_the_slice(text, data):
    # Segments are found by one split of the range, not by matching within the whole text:
    # a token cut by either end of the range is no token.
    start = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(start, len(text)))
    expected = reference_matches(text[start:stop], OVERLAPPING)
    ends = [start] + [start + b for _, b, _ in expected]
    starts = [start + a for a, _, _ in expected] + [stop]
    tokens = [t for _, _, t in expected] + [None]
    got = list(Specials.of(OVERLAPPING).segments(text, start, stop))
    assert got == list(zip(ends, starts, tokens))


def test_segments_of_a_range():
    sp = Specials.of(["<s>"])
    # "<s>" at 1 and at 5; from 2 the first is cut, up to 7 the second too.
    assert list(sp.segments("a<s>b<s>c", 2, 8)) == [(2, 5, "<s>"), (8, 8, None)]
    assert list(sp.segments("a<s>b<s>c", 2, 7)) == [(2, 7, None)]


# --- callers: counting, encode, spans use the same matching ----------------------------------


@pytest.fixture(scope="module")
def pair(gpt2_tokenizer):
    """GPT-2 with the overlapping special tokens, and without any. The one-byte "b" takes
    its byte's id explicitly (a list refuses a one-byte special token), the others the ids
    the list form gives them."""
    vocab, merges = gpt2_tokenizer.vocab, gpt2_tokenizer.merges
    longer = Tokenizer(vocab, merges, [t for t in OVERLAPPING if len(t.encode()) > 1])
    byte_b = next(i for i, t in vocab.items() if t == b"b")
    ids = {t: byte_b if t == "b" else longer.special_id(t) for t in OVERLAPPING}
    return Tokenizer(longer.vocab, merges, ids), Tokenizer(vocab, merges)


@HYPO
@given(st.lists(PARTS, max_size=40).map("".join))
def test_callers_split_alike(pair, text):
    tokens = OVERLAPPING
    tok, plain = pair
    matches = reference_matches(text, tokens)
    ends = [0] + [b for _, b, _ in matches]
    starts = [a for a, _, _ in matches] + [len(text)]
    expected: list[int] = []
    for k, (a, b) in enumerate(zip(ends, starts)):
        expected += plain.encode(text[a:b])
        if k < len(matches):
            expected.append(tok.special_id(matches[k][2]))
    assert tok.encode(text) == expected
    assert [s.id for s in tok.spans(text)] == expected
    assert list(tok.encode_iterable(iter(text))) == expected
    counted = count_text(text, tokens)
    pieces = [text[a:b] for a, b in zip(ends, starts)]
    assert counted == sum((count_text(p) for p in pieces), start=count_text(""))


def test_fixture_with_end_of_text(gpt2_tokenizer):
    text = read_fixture(SLICES["tinystories"])
    matches = reference_matches(text, [EOT])
    assert len(matches) > 300
    assert Specials.of([EOT]).spans(text) == [(a, b) for a, b, _ in matches]
    assert gpt2_tokenizer.encode(text).count(50256) == len(matches)


# --- where a file chunk may end: first_free_start --------------------------------------------


@HYPO
@given(
    st.lists(PARTS, max_size=30).map("".join),
    st.sampled_from([OVERLAPPING, ["<s>", "<s><s>"], ["<s>"]]),
    st.data(),
)
def test_first_free_start_is_a_safe_cut(text, tokens, data):
    """Wherever it says a chunk may end, matching the two sides on their own finds the
    matches of the whole text; and it finds a place whenever a token occurs that no other
    occurrence overlaps."""
    window = text.encode()
    start = data.draw(st.integers(0, len(window)))
    end = data.draw(st.integers(start, len(window)))
    h = first_free_start(window, start, end, [t.encode() for t in tokens])
    whole = reference_matches(text, tokens)
    if h < 0:
        occurrences = [
            (i, i + len(t))
            for t in tokens
            for i in range(len(window))
            if window.startswith(t.encode(), i)
        ]

        def overlapped(a, b):
            return any(c < b and a < d and (c, d) != (a, b) for c, d in occurrences)

        lonely = [a for a, b in occurrences if start <= a < end and not overlapped(a, b)]
        assert not lonely
        return
    assert start <= h < end
    assert any(window.startswith(t.encode(), h) for t in tokens)
    left, right = window[:h].decode(), window[h:].decode()
    shifted = [(a + len(left), b + len(left), t) for a, b, t in reference_matches(right, tokens)]
    assert reference_matches(left, tokens) + shifted == whole


# ------------------------------------------------- a bare string is refused (issue 24, 5)
def _entry_points(tmp_path):
    from bpe_studio.core import train_bpe
    from bpe_studio.core.formats.files import load_data

    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest " * 50, encoding="utf-8")
    vocab = {i: bytes([i]) for i in range(256)}
    return corpus, {
        "train_bpe": lambda specials: train_bpe(corpus, 300, specials),
        "Tokenizer": lambda specials: Tokenizer(vocab, [], special_tokens=specials),
        "from_data": lambda specials: Tokenizer.from_data(load_data("gpt2"), specials),
        "load": lambda specials: Tokenizer.load("gpt2", special_tokens=specials),
        "count_text": lambda specials: count_text("a b", specials),
        "from_files": lambda specials: Tokenizer.from_files(
            FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", specials
        ),
    }


@pytest.mark.parametrize(
    "where", ["train_bpe", "Tokenizer", "from_data", "load", "count_text", "from_files"]
)
def test_a_bare_string_is_refused_everywhere_special_tokens_are_taken(tmp_path, where):
    _, calls = _entry_points(tmp_path)
    with pytest.raises(TypeError, match=r"list of strings, not the str .*\['<\|endoftext\|>'\]"):
        calls[where](EOT)


def test_the_list_form_makes_one_special_token(tmp_path):
    _, calls = _entry_points(tmp_path)
    vocab, _ = calls["train_bpe"]([EOT])
    assert vocab[256] == EOT.encode()
    assert all(len(tok) > 1 for tok in list(vocab.values())[256:])  # no one-character ones


# ------------------------------------------ a one-byte special token (issue 32) is refused
ONE_BYTE = r"special token 'a' is a single byte \(0x61\), which byte-level BPE already holds"


def test_training_refuses_a_one_byte_special_token_before_reading(tmp_path):
    from bpe_studio.core import BpeTrainer, train_bpe, trainer_from_file

    missing = tmp_path / "not there.txt"  # never read: the refusal comes first
    with pytest.raises(ValueError, match=ONE_BYTE):
        train_bpe(missing, 300, [EOT, "a"])
    with pytest.raises(ValueError, match=ONE_BYTE):
        trainer_from_file(missing, 300, ["a"])
    with pytest.raises(ValueError, match=r"special token '\\n' is a single byte \(0x0a\)"):
        BpeTrainer({b"ab": 3}, 300, ["\n"])


def test_a_tokenizer_refuses_one_in_a_list_and_takes_an_explicit_id(tiktoken_gpt2):
    import tiktoken

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ca"}
    merges = [(b"c", b"a")]
    with pytest.raises(ValueError, match=ONE_BYTE):
        Tokenizer(vocab, merges, ["<s>", "a"])
    with pytest.raises(ValueError, match=r"gpt2: special token 'a' is a single byte"):
        Tokenizer.load("gpt2", special_tokens=["a"])
    # Given its own id, it is what tiktoken makes of it: cut out, never merged, decoded back.
    tok = Tokenizer(vocab, merges, {"a": 257})
    enc = tiktoken.Encoding(
        "one_byte",
        pat_str=tiktoken_gpt2._pat_str,
        mergeable_ranks={t: i for i, t in vocab.items()},
        special_tokens={"a": 257},
    )
    for text in ("cat", "a ca", "banana"):
        assert tok.encode(text) == enc.encode(text, allowed_special="all")
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
        assert tok.decode(tok.encode(text)) == text


def test_a_multi_byte_character_works_end_to_end(tmp_path):
    from bpe_studio.core import train_bpe

    corpus = tmp_path / "c.txt"
    corpus.write_text("café au lait é café\n" * 40, encoding="utf-8")
    vocab, merges = train_bpe(corpus, 280, ["é"])
    assert vocab[256] == "é".encode()
    tok = Tokenizer(vocab, merges, ["é"])
    assert tok.special_id("é") == 256
    assert tok.encode("café")[-1] == 256 and tok.decode(tok.encode("café")) == "café"
    assert all(b"\xc3\xa9" not in t for i, t in vocab.items() if i > 256)  # never merged


def test_a_surrogate_pair_in_a_special_token_is_named_as_a_pair():
    with pytest.raises(
        ValueError,
        match=r"surrogate pair \(U\+D83D at character 1\).*write the character itself, 'a😀'",
    ):
        validate_special_tokens(["a\ud83d\ude00"])
    with pytest.raises(ValueError, match=r"holds a lone surrogate \(U\+DE00 at character 0\)"):
        validate_special_tokens(["\ude00\ud83d"])


@pytest.mark.parametrize("given_as", [set, frozenset])
def test_special_tokens_in_a_set_are_refused_since_their_ids_would_follow_hash_order(
    tmp_path, given_as
):
    """Found by the API audit: ``train_bpe(p, 300, {"<|endoftext|>", "<|pad|>"})`` gave
    ``<|endoftext|>`` id 256 with one PYTHONHASHSEED and 257 with another."""
    specials = given_as({"<|endoftext|>", "<|pad|>", "<|bos|>"})
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 20, encoding="utf-8")
    with pytest.raises(TypeError, match=r"in an order .*write \['<\|bos\|>', '<\|endoftext"):
        train_bpe(corpus, 300, specials)
    vocab = {i: bytes([i]) for i in range(256)}
    with pytest.raises(TypeError, match="a set's order changes"):
        Tokenizer(vocab, [], specials)
    # In an order (a list, a tuple, a dict's keys): taken, ids in that order.
    for ordered in (
        ["<|pad|>", "<|bos|>"],
        ("<|pad|>", "<|bos|>"),
        {"<|pad|>": 0, "<|bos|>": 0}.keys(),
    ):
        tok = Tokenizer(vocab, [], ordered)
        assert [tok.special_id(s) for s in ("<|pad|>", "<|bos|>")] == [256, 257]


def test_an_unknown_training_option_names_train_bpe_and_the_options(tmp_path):
    """Found by the API audit: ``num_processes=4`` (CS336's adapters pass **kwargs on) was
    "trainer_from_file() got an unexpected keyword argument"."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 20, encoding="utf-8")
    with pytest.raises(
        TypeError, match=r"^train_bpe\(\) .*'num_processes' \(did you mean 'workers'\?\)"
    ):
        train_bpe(corpus, 300, [], num_processes=4)
    with pytest.raises(
        TypeError, match=r"'pattrn' \(did you mean 'pattern'\?\); its options are workers"
    ):
        train_bpe(corpus, 300, [], pattrn="gpt2")
