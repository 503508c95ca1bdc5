"""A vocabulary's make-up (``explain.vocabulary``) against independent computations:
tiktoken's own encodings for GPT-2, cl100k and o200k (their token bytes, and the Reach rule by
tiktoken encoding each token's bytes as one piece), a run's steps against the tokenizer
truncated there and built again, and ``tokenizers``' files of other kinds."""

from __future__ import annotations

import re
import threading
from collections import Counter

import numpy as np
import pytest
import tiktoken
import tokenizers
from core_helpers import EOT, FIXTURES, in_no_text
from foreign_files import falcon_style, sentencepiece_bpe, unigram, wordpiece
from test_formats_tiktoken import _cached

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain.categories import CATEGORIES, classify
from bpe_studio.core.explain.vocabulary import CategoryCount, token_table
from bpe_studio.core.explain.work import Cancelled


def _ordinary_bytes(enc: tiktoken.Encoding) -> dict[int, bytes]:
    special = set(enc._special_tokens.values())
    out = {}
    for i in range(enc.n_vocab):
        if i in special:
            continue
        try:
            out[i] = enc.decode_single_token_bytes(i)
        except KeyError:
            continue  # a gap in the ids (o200k has some)
    return out


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_makeup_equals_tiktoken(name, tiktoken_gpt2):
    enc = tiktoken_gpt2 if name == "gpt2" else _cached(name).tiktoken
    tok = open_tokenizer(name)
    table = token_table(tok)
    makeup = table.makeup()
    ordinary = _ordinary_bytes(enc)
    assert makeup.special_tokens == len(enc._special_tokens)
    assert makeup.tokens == len(ordinary) + len(enc._special_tokens)
    assert makeup.length_histogram == dict(Counter(map(len, ordinary.values())))
    # Every ordinary token's category, in tiktoken's order: the counts per category are those
    # of classifying tiktoken's own bytes (the classifier itself is checked against a slow
    # one in test_vocab_categories).
    codes, lead = classify(list(ordinary.values()))
    expected = Counter(CATEGORIES[c] for c in codes.tolist())
    assert {k: v.tokens for k, v in makeup.categories.items()} == dict(expected)
    leading = Counter(CATEGORIES[c] for c, f in zip(codes.tolist(), lead.tolist()) if f)
    assert {k: v.leading_space for k, v in makeup.categories.items() if v.leading_space} == dict(
        leading
    )
    # The Reach rule by tiktoken: encoding a token's bytes as one piece gives that token,
    # and some text holds them (tiktoken encodes text only).
    unreachable = [
        i for i, t in ordinary.items() if in_no_text(t) or enc._encode_single_piece(t) != [i]
    ]
    assert table.unreachable_ids() == unreachable
    assert makeup.unreachable == len(unreachable)


def test_unreachable_tokens_of_a_vocabulary_with_duplicates():
    # "abc" is made twice: by (ab, c) first, then by (a, bc); encoding "abc" gives the first.
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"ab", 257: b"bc", 258: b"abc", 259: b"abc"})
    tok = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")])
    ranks = {t: i for i, t in vocab.items() if i < 259}
    enc = tiktoken.Encoding("dups", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    table = token_table(tok)
    no_text = [0xC0, 0xC1, *range(0xF5, 0x100)]  # bytes no UTF-8 text holds
    assert table.unreachable_ids() == [*no_text, 259]
    assert enc._encode_single_piece(b"abc") == [258]


@pytest.fixture(scope="module")
def run() -> Tokenizer:
    english = (FIXTURES / "tinystories_slice.txt").read_text(encoding="utf-8")[:40_000]
    chinese = (FIXTURES / "chinese_slice.txt").read_text(encoding="utf-8")[:8_000]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / "mixed.txt"
        corpus.write_text(english + EOT + chinese, encoding="utf-8")
        vocab, merges = train_bpe(corpus, 257 + 600, [EOT], workers=1)
    return Tokenizer(vocab, merges, [EOT])


@pytest.mark.parametrize("step", [0, 1, 37, 300, 599])
def test_makeup_at_a_step_is_the_truncated_tokenizers(run, step):
    table = token_table(run, steps=True)
    assert table.merges == len(run.merges)
    again = token_table(run.truncated(step)).makeup()
    at = table.makeup(step)
    assert (at.tokens, at.special_tokens, at.unreachable) == (
        again.tokens,
        again.special_tokens,
        again.unreachable,
    )
    assert at.length_histogram == again.length_histogram
    assert at.categories == again.categories
    assert table.unreachable_ids(step) == token_table(run.truncated(step)).unreachable_ids()


def test_a_table_extended_from_an_earlier_step_equals_one_built_whole(run):
    earlier = token_table(run.truncated(250), steps=True)
    calls = []
    later = token_table(run, steps=True, previous=earlier, progress=lambda d, t: calls.append(t))
    whole = token_table(run, steps=True)
    for field in ("ids", "special", "length", "category", "leading_space", "rank", "reachable"):
        assert np.array_equal(getattr(later, field), getattr(whole, field)), field
    # Only the 350 newer tokens were classified and reached.
    assert calls[-1] == 2 * 350


def test_makeup_needs_steps_to_answer_for_a_step(run):
    with pytest.raises(ValueError, match="steps=True"):
        token_table(run).makeup(3)


@pytest.mark.parametrize("step", [-1, 601, True])
def test_a_step_outside_the_run_is_refused_naming_it(run, step):
    # Found by fuzzing: -1 gave no tokens at all, 601 the whole vocabulary as step 601.
    table = token_table(run, steps=True)
    with pytest.raises(ValueError, match=rf"step {step!r} is out of range.* <= 600"):
        table.makeup(step)
    with pytest.raises(ValueError, match="out of range"):
        table.unreachable_ids(step)


def test_progress_and_cancel(run):
    seen = []
    token_table(run, progress=lambda done, total: seen.append((done, total)))
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] == 2 * len(run.vocab)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        token_table(run, cancel=stop)


def test_foreign_tokenizers(tmp_path):
    wp = open_tokenizer(wordpiece(tmp_path / "wp"))
    table = token_table(wp)
    makeup = table.makeup()
    assert makeup.unreachable is None and table.reachable is None
    assert makeup.special_tokens == 5 and makeup.tokens == len(wp.vocab)
    # "##ing" is the letters "ing" without a space; "the" is a word.
    row = table.row(wp.backend.token_to_id("##ing"))
    assert table.tokens[row] == b"ing" and table.category_name(table.ids[row]) == "Latin"

    sp = open_tokenizer(sentencepiece_bpe(tmp_path / "sp"))
    table = token_table(sp)
    assert table.tokens[table.row(sp.backend.token_to_id("<0xE4>"))] == b"\xe4"
    assert table.category_name(sp.backend.token_to_id("<0xE4>")) == "byte fallback"
    the = sp.backend.token_to_id("\u2581the\u2581")
    assert table.tokens[table.row(the)] == b" the "
    assert bool(table.leading_space[table.row(the)])

    uni = open_tokenizer(unigram(tmp_path / "uni"))
    makeup = token_table(uni).makeup()
    assert makeup.special_tokens == 3
    assert sum(c.tokens for c in makeup.categories.values()) == makeup.ordinary_tokens


def _file_spellings(path) -> dict[int, str]:
    """Each id's token as ``tokenizers`` itself reads the file."""
    own = tokenizers.Tokenizer.from_file(str(path))
    return {i: t for t, i in own.get_vocab(with_added_tokens=True).items()}


def test_byte_fallback_tokens_are_a_category_of_their_own(tmp_path):
    path = sentencepiece_bpe(tmp_path / "sp")
    table = token_table(open_tokenizer(path))
    spelled = _file_spellings(path)
    byte_ids = {i for i, t in spelled.items() if re.fullmatch(r"<0x[0-9A-F]{2}>", t)}
    assert len(byte_ids) == 256
    fallback = {int(i) for i in table.ids if table.category_name(int(i)) == "byte fallback"}
    assert fallback == byte_ids
    makeup = table.makeup()
    assert makeup.categories["byte fallback"] == CategoryCount(256, 0)
    # The letter "a" has a token of its own, which is Latin; <0x61> stands for it by design.
    assert table.category_name(spelled_id(spelled, "a")) == "Latin"
    assert table.category_name(spelled_id(spelled, "<0x61>")) == "byte fallback"


def spelled_id(spelled: dict[int, str], token: str) -> int:
    (found,) = [i for i, t in spelled.items() if t == token]
    return found


@pytest.mark.parametrize(
    ("shape", "alike"), [(sentencepiece_bpe, True), (wordpiece, True), (unigram, False)]
)
def test_a_foreign_entry_is_shown_as_its_file_writes_it(shape, alike, tmp_path):
    path = shape(tmp_path / "tok")
    table = token_table(open_tokenizer(path))
    spelled = _file_spellings(path)
    assert {int(i): table.text(r) for r, i in enumerate(table.ids)} == spelled
    # Two entries may stand for the same bytes ("<0x41>" and "A", "##7" and "7"); as shown,
    # no two look alike.
    shown = [table.shown(r) for r in range(len(table))]
    assert len(set(shown)) == len(shown)
    assert (len(set(table.tokens)) < len(table.tokens)) is alike


def test_a_byte_level_entry_is_shown_readably(tiktoken_gpt2):
    table = token_table(open_tokenizer("gpt2"))
    assert table.texts is None
    row = table.row(tiktoken_gpt2.encode_single_token(" the"))
    assert table.shown(row) == table.text(row) == "␣the"


def test_a_byte_level_file_tokenizers_runs_is_shown_as_one_read_here(tmp_path):
    # Found by an audit: a byte-level file this project leaves to tokenizers (Falcon's
    # pre-tokenizer) showed "Ġ", "å" and "Âł" (GPT-2's byte-to-character spelling) where the
    # same vocabulary read here shows "␣", "<e5>" and "<U+00A0>".
    tok = open_tokenizer(falcon_style(tmp_path / "falcon"))
    table = token_table(tok)
    assert table.texts is None
    shown = {}
    for data in (b" ", b"\xe5", b"\xc2\xa0"):
        (token_id,) = [i for i, b in tok.vocab.items() if b == data]
        shown[data] = table.shown(table.row(token_id))
    assert shown == {b" ": "␣", b"\xe5": "<e5>", b"\xc2\xa0": "<U+00A0>"}
