"""``decode(ids, errors="strict")`` on ids whose bytes are not valid UTF-8: the same
UnicodeDecodeError (class, byte positions) as tiktoken raises, whose message names only a byte
position; ours also names the id and where it is among the ids (an encode-edges audit: the
README's example said the id, the error did not)."""

from __future__ import annotations

import numpy as np
import pytest

from bpe_studio.core import Tokenizer


def _oracle_error(oracle, ids: list[int]) -> UnicodeDecodeError:
    with pytest.raises(UnicodeDecodeError) as caught:
        oracle.decode(ids, errors="strict")
    return caught.value


@pytest.mark.parametrize("as_array", [False, True])
def test_a_strict_decode_names_the_id_whose_bytes_break(tiktoken_gpt2, as_array):
    tok = Tokenizer.preset("gpt2")
    good = tiktoken_gpt2.encode("hello world, ")
    # The first byte of 中 (E4 B8 AD) alone, inside the ids, then more text.
    lone = next(i for i in range(tok.n_vocab) if tok.vocab.get(i) == b"\xe4")
    ids = good + [lone] + tiktoken_gpt2.encode(" and more")
    expected = _oracle_error(tiktoken_gpt2, ids)
    with pytest.raises(UnicodeDecodeError) as caught:
        tok.decode(np.array(ids) if as_array else iter(ids), errors="strict")
    error = caught.value
    assert (error.start, error.end, error.object) == (expected.start, expected.end, expected.object)
    assert error.reason == f"{expected.reason}, in the bytes of id {lone} (ids[{len(good)}])"
    # Decoding as the other modes do is unchanged.
    assert tok.decode(ids) == tiktoken_gpt2.decode(ids)
    assert tok.decode(iter(ids), errors="ignore") == tiktoken_gpt2.decode(ids, errors="ignore")


def test_a_character_cut_short_at_the_end_names_the_last_id(tiktoken_gpt2):
    tok = Tokenizer.preset("gpt2")
    ids = tiktoken_gpt2.encode("naïve 😀")
    cut = ids[:-1]  # the emoji's last token is gone: its first bytes end the text
    expected = _oracle_error(tiktoken_gpt2, cut)
    with pytest.raises(UnicodeDecodeError) as caught:
        tok.decode(cut, errors="strict")
    at = next(
        k for k in range(len(cut)) if sum(len(tok.vocab[i]) for i in cut[: k + 1]) > expected.start
    )
    assert caught.value.reason == f"{expected.reason}, in the bytes of id {cut[at]} (ids[{at}])"
