"""Two vocabularies compared (``explain.overlap``) against set arithmetic on tiktoken's own
token bytes, and across kinds (a SentencePiece-style file's "▁" is a space)."""

from __future__ import annotations

from foreign_files import sentencepiece_bpe
from test_formats_tiktoken import _cached

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain.categories import CATEGORIES, classify
from bpe_studio.core.explain.overlap import Shares, overlap
from bpe_studio.core.explain.vocabulary import token_table


def _tiktoken_bytes(enc) -> set[bytes]:
    special = set(enc._special_tokens.values())
    return {enc.decode_single_token_bytes(i) for i in enc._mergeable_ranks.values()} - {
        enc.decode_single_token_bytes(i) for i in special
    }


def test_o200k_against_cl100k_is_set_arithmetic_on_tiktokens_bytes():
    o200k, cl100k = _cached("o200k_base").tiktoken, _cached("cl100k_base").tiktoken
    mine, theirs = _tiktoken_bytes(o200k), _tiktoken_bytes(cl100k)
    result = overlap(
        token_table(open_tokenizer("o200k_base")), token_table(open_tokenizer("cl100k_base"))
    )
    assert set(result.shared_tokens) == mine & theirs
    assert set(result.only_this_tokens) == mine - theirs
    assert set(result.only_other_tokens) == theirs - mine
    t = result.total
    assert (t.shared, t.only_this, t.only_other) == (
        len(mine & theirs),
        len(mine - theirs),
        len(theirs - mine),
    )
    # Per category: each group's tokens classified on their own.
    for group, slot in ((mine & theirs, "shared"), (mine - theirs, "only_this")):
        codes, _ = classify(sorted(group))
        for code in set(codes.tolist()):
            expected = int((codes == code).sum())
            assert getattr(result.categories[CATEGORIES[code]], slot) == expected
    assert sum(s.shared for s in result.categories.values()) == t.shared


def test_sentencepiece_spaces_compare_as_spaces(tmp_path):
    sp = open_tokenizer(sentencepiece_bpe(tmp_path / "sp"))
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b" t", 257: b" th", 258: b" the"})
    byte_level = Tokenizer(vocab, [(b" ", b"t"), (b" t", b"h"), (b" th", b"e")])
    result = overlap(token_table(sp), token_table(byte_level))
    sp_bytes = {
        sp.vocab[i] for i in sp.vocab if i not in {sp.special_id(s) for s in sp.special_tokens}
    }
    assert b" th" in sp_bytes or b" the" in sp_bytes
    assert (b" th" in result.shared_tokens) == (b" th" in sp_bytes)
    # No "▁" survives as the character: it stands for a space.
    assert not any("\u2581".encode() in t for t in result.only_this_tokens)


def test_the_categories_are_the_same_whichever_side_is_first(tmp_path):
    """Audit h_kinds64: a shared byte string took the first tokenizer's category, so a
    byte-fallback file against o200k said "byte fallback: shared 161, partial: shared 0" and
    the reverse "partial: shared 128". Each byte string has its bytes' category (the
    make-up's classifier); ``byte fallback`` only where every entry holding it, on each side
    that holds it, is a ``<0xNN>`` token."""
    sp = token_table(open_tokenizer(sentencepiece_bpe(tmp_path / "sp")))
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b" t", 257: b" th", 258: b" the"})
    plain = token_table(Tokenizer(vocab, [(b" ", b"t"), (b" t", b"h"), (b" th", b"e")]))
    forward, backward = overlap(sp, plain), overlap(plain, sp)
    assert forward.total == Shares(
        backward.total.shared, backward.total.only_other, backward.total.only_this
    )
    assert forward.categories.keys() == backward.categories.keys()
    for name, s in forward.categories.items():
        assert backward.categories[name] == Shares(s.shared, s.only_other, s.only_this), name
    # Every byte is shared: each of its bytes' category, none "byte fallback" (the plain
    # vocabulary holds them as bytes), "partial" for the 128 that are no whole character.
    codes, _ = classify(sorted(forward.shared_tokens))
    for code in set(codes.tolist()):
        assert forward.categories[CATEGORIES[code]].shared == int((codes == code).sum())
    assert forward.categories["partial"].shared == 128
    assert "byte fallback" not in forward.categories
    # Against itself, a byte only its <0xNN> token holds stays "byte fallback"; one a plain
    # token holds too ("A" and <0x41>) is a letter, whichever entry comes first.
    itself = overlap(sp, sp).categories
    held_plain = {
        sp.tokens[r] for r in range(len(sp)) if CATEGORIES[sp.category[r]] != "byte fallback"
    }
    only_fallback = {bytes([b]) for b in range(256)} - held_plain
    assert itself["byte fallback"] == Shares(len(only_fallback), 0, 0)
