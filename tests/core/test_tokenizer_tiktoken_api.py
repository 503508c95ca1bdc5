"""The names tiktoken and Hugging Face users reach for (issue 24, items 9 and 11): ``len``,
``n_vocab``, ``encode_ordinary``, ``encode(allowed_special=, disallowed_special=)``, the
batch and bytes forms, ``repr``; ``decode`` of what is not an id, ``encode`` of bytes, and the
message for an id in cl100k_base's unassigned gap.

Oracle: tiktoken's cl100k_base, built offline from the shipped rank file with the settings
tiktoken_ext publishes (``reference_encoder.published``); Hugging Face ``tokenizers`` for
``len``. Every call is compared with tiktoken's, errors included.
"""

from __future__ import annotations

import re

import pytest
import tiktoken
import tokenizers
from core_helpers import EOT, REPO_ROOT, SLICES, read_fixture
from reference_encoder import published, read_rank_file

from bpe_studio.core import Tokenizer

RESOURCES = REPO_ROOT / "resources" / "tokenizers"
FIM = "<|fim_prefix|>"
TEXTS = [
    read_fixture(SLICES["english"])[:2000] + EOT + " next",
    f"a{FIM}b{EOT}{EOT}<|endofprompt|> c",
    "no special token here",
    "",
]
KEYWORDS = [
    {"allowed_special": "all"},
    {"allowed_special": {EOT}},
    {"allowed_special": {EOT}, "disallowed_special": ()},
    {"allowed_special": {EOT, "<|not one of its specials|>"}, "disallowed_special": ()},
    {"disallowed_special": ()},
    {"disallowed_special": "all"},
    {"allowed_special": set()},
    {"allowed_special": {FIM}, "disallowed_special": {EOT}},
]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.preset("cl100k_base")


@pytest.fixture(scope="module")
def enc() -> tiktoken.Encoding:
    settings = published("cl100k_base")
    return tiktoken.Encoding(
        "cl100k_base",
        pat_str=settings["pat_str"],
        mergeable_ranks=read_rank_file(RESOURCES / "cl100k_base.tiktoken.gz"),
        special_tokens=settings["special_tokens"],
    )


def _outcome(call):
    """What a call gives: its result, or the kind of error it raises."""
    try:
        return call()
    except ValueError:
        return ValueError


def test_sizes(tmp_path, tok, enc):
    assert tok.n_vocab == enc.n_vocab == 100277
    assert tok.max_token_value == enc.max_token_value
    assert tok.special_tokens_set == enc.special_tokens_set
    tok.save(tmp_path, format="hf")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert len(tok) == hf.get_vocab_size(with_added_tokens=True)


def keywords_id(keywords: dict) -> str:
    # Sets are written sorted: a set's repr follows string hashing, which differs between
    # processes, and every xdist worker must collect the same test ids.
    def spell(value):
        return repr(sorted(value)) if isinstance(value, set | frozenset) else repr(value)

    return ", ".join(f"{key}={spell(value)}" for key, value in keywords.items())


@pytest.mark.parametrize("keywords", KEYWORDS, ids=keywords_id)
def test_encode_keywords_mean_what_they_mean_in_tiktoken(tok, enc, keywords):
    for text in TEXTS:
        ours = _outcome(lambda: tok.encode(text, **keywords))  # noqa: B023
        theirs = _outcome(lambda: enc.encode(text, **keywords))  # noqa: B023
        assert ours == theirs, text[:40]


def test_plain_encode_keeps_cs336s_meaning(tok, enc):
    """Without a keyword every special token of the tokenizer is one (tiktoken would raise)."""
    for text in TEXTS:
        assert tok.encode(text) == enc.encode(text, allowed_special="all")
    with pytest.raises(ValueError):
        enc.encode(TEXTS[0])


def test_the_disallowed_error_names_the_token_and_the_way_out(tok):
    with pytest.raises(ValueError) as err:
        tok.encode("ab" + EOT, allowed_special=set())
    line = str(err.value)
    assert repr(EOT) in line and "character 2" in line
    assert "allowed_special" in line and "disallowed_special=()" in line


def test_a_token_both_allowed_and_disallowed_is_named_so(tok, enc):
    """An encode-edges audit: the error advised allowed_special={'<|endoftext|>'}, which the
    caller had passed (tiktoken raises too, with the same advice)."""
    keywords = {"allowed_special": {EOT}, "disallowed_special": {EOT}}
    with pytest.raises(ValueError):
        enc.encode("a" + EOT, **keywords)
    with pytest.raises(ValueError) as err:
        tok.encode("a" + EOT, **keywords)
    line = str(err.value)
    assert repr(EOT) in line and "character 1" in line
    assert "both allowed_special and disallowed_special" in line
    assert "pass allowed_special" not in line


def test_ordinary_batch_and_bytes_forms(tok, enc):
    for text in TEXTS:
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.encode_ordinary_batch(TEXTS) == enc.encode_ordinary_batch(TEXTS)
    for keywords in (KEYWORDS[0], KEYWORDS[2], KEYWORDS[4]):  # those that raise on no text
        assert tok.encode_batch(TEXTS, **keywords) == enc.encode_batch(TEXTS, **keywords)
    batch = enc.encode_batch(TEXTS, allowed_special="all")
    assert tok.decode_batch(batch) == enc.decode_batch(batch)
    ids = batch[1]
    assert tok.decode_tokens_bytes(ids) == enc.decode_tokens_bytes(ids)
    assert [tok.decode_single_token_bytes(i) for i in ids] == [
        enc.decode_single_token_bytes(i) for i in ids
    ]


def test_batch_forms_take_tiktoken_num_threads(tok, enc):
    # Found by fuzzing against tiktoken: code passing num_threads raised TypeError here.
    batch = enc.encode_batch(TEXTS, allowed_special="all", num_threads=2)
    assert tok.encode_batch(TEXTS, allowed_special="all", num_threads=2) == batch
    assert tok.encode_ordinary_batch(TEXTS, num_threads=2) == enc.encode_ordinary_batch(
        TEXTS, num_threads=2
    )
    assert tok.decode_batch(batch, num_threads=2) == enc.decode_batch(batch, num_threads=2)


def test_an_empty_string_among_the_allowed_is_ignored_as_tiktoken_ignores_it(tok, enc):
    # Found by fuzzing: it raised "a special token must not be empty".
    text = TEXTS[1]
    allowed = {"", EOT}
    kept = {"disallowed_special": ()}
    assert tok.encode(text, allowed_special=allowed, **kept) == enc.encode(
        text, allowed_special=allowed, **kept
    )


def test_ids_without_an_order_are_refused_as_tiktoken_refuses_them(tok, enc):
    # Found by fuzzing: a set or a dict of ids was decoded in its iteration order.
    for ids in ({40, 6}, {40: "a", 6: "b"}):
        with pytest.raises(TypeError):
            enc.decode(ids)
        with pytest.raises(TypeError, match="in order"):
            tok.decode(ids)
        with pytest.raises(TypeError, match="in order"):
            tok.decode_bytes(ids)


def test_what_is_not_text_or_ids_is_a_type_error(tok):
    for bad, shown in ((1.0, "1.0 (float)"), ("7", "'7' (str)"), (True, "True (bool)")):
        with pytest.raises(TypeError, match=re.escape(f"token ids must be ints, got {shown}")):
            tok.decode([5, bad])
        with pytest.raises(TypeError, match=r"ints"):
            tok.decode_single_token_bytes(bad)
    for call in (tok.encode, tok.encode_ordinary, tok.encode_array, tok.spans):
        with pytest.raises(TypeError, match=r"takes a str, not bytes \(decode the bytes"):
            call(b"hello")
    with pytest.raises(TypeError, match="a list of texts, not one str"):
        tok.encode_batch("hello")
    with pytest.raises(TypeError, match="list of strings, not the str"):
        tok.encode("x", allowed_special=EOT)


@pytest.mark.parametrize("token_id", [100256, 100261, 100275])
def test_an_id_in_the_unassigned_gap_is_named_unassigned(tok, enc, token_id):
    with pytest.raises(KeyError):
        enc.decode_single_token_bytes(token_id)  # tiktoken has no token there either
    with pytest.raises(ValueError) as err:
        tok.decode([1, token_id])
    line = str(err.value)
    assert f"unknown token id {token_id}: it is unassigned" in line
    # The runs of ids cl100k_base has, by hand: 100,256 ranks, then its special tokens.
    assert "0..100255, 100257..100260, 100276" in line


def test_an_id_past_the_end_is_out_of_range(tok):
    with pytest.raises(ValueError, match=r"unknown token id 100277: it is out of range"):
        tok.decode([100277])


def test_repr_names_the_tokenizer(tok, enc):
    shown = repr(tok)
    ranks = len(enc._mergeable_ranks)
    assert shown.startswith("<Tokenizer 'cl100k_base': ")
    assert f"{ranks + len(enc.special_tokens_set):,} tokens" in shown
    assert f"{ranks - 256:,} merges" in shown and "pattern cl100k" in shown
    assert repr(EOT) in shown and "(5 in all)" in shown
    vocab = {i: bytes([i]) for i in range(256)}
    assert repr(Tokenizer(vocab, [], ["<s>"])) == (
        "<Tokenizer 257 tokens, 0 merges, pattern gpt2, special tokens ['<s>']>"
    )


def _documents() -> list[str]:
    """Documents long enough for a batch to be worth threads: English, Chinese, code and web
    text in 40,000-character pieces (about a million characters), one with a special token
    inside."""
    docs = [
        read_fixture(SLICES[kind])[i : i + 40_000]
        for kind in SLICES
        for i in range(0, 280_000, 40_000)
    ]
    docs = [d for d in docs if d]
    docs[3] = docs[3][:1000] + EOT + docs[3][1000:]
    return docs


def test_a_long_batch_is_encoded_on_threads_with_tiktokens_ids(tok, enc, monkeypatch):
    """Before, ``num_threads`` was taken and not used: a batch ran in one thread where
    tiktoken's runs on eight."""
    import threading

    from bpe_studio.core.encode import batches

    tok.prepare_bulk()
    docs = _documents()
    assert batches.batch_threads(tok._encoder, docs, None) > 1
    seen: set[str] = set()
    real = batches.on_threads

    def spy(encode, texts, threads):
        def recorded(text):
            seen.add(threading.current_thread().name)
            return encode(text)

        return real(recorded, texts, threads)

    monkeypatch.setattr(batches, "on_threads", spy)
    monkeypatch.setattr("bpe_studio.core.encode.tiktoken_names.on_threads", spy)
    for threads in (None, 2, 4):
        got = tok.encode_batch(docs, allowed_special="all", num_threads=threads)
        assert got == enc.encode_batch(docs, allowed_special="all")
        assert tok.encode_ordinary_batch(docs, num_threads=threads) == enc.encode_ordinary_batch(
            docs
        )
    assert any(name.startswith("bpe-studio-batch") for name in seen)


def test_a_batch_stays_in_this_thread_where_threads_cannot_gain(tok):
    from bpe_studio.core.encode import batches

    tok.prepare_bulk()
    docs = _documents()
    assert batches.batch_threads(tok._encoder, docs, 1) == 1
    assert batches.batch_threads(tok._encoder, docs[:1], 8) == 1
    pieces = [doc[i : i + 4000] for doc in docs for i in range(0, len(doc), 4000)]
    assert batches.batch_threads(tok._encoder, pieces, 8) == 1  # threads would take turns
    custom = Tokenizer(tok.vocab, tok.merges, tok.special_tokens, pattern=r"\S+|\s+")
    assert batches.batch_threads(custom._encoder, docs, 8) == 1  # no scanner: Python path


@pytest.mark.parametrize("threads", [1, 4])
def test_a_batchs_error_names_the_text_it_came_from(tok, threads):
    from bpe_studio.core.encode import batches

    tok.prepare_bulk()
    docs = [doc.replace(EOT, "") for doc in _documents()]
    n = len(docs) + 1
    assert (batches.batch_threads(tok._encoder, docs, threads) > 1) == (threads > 1)
    with pytest.raises(
        ValueError, match=rf"special token not allowed.*\(text 7 of {n} in the batch\)$"
    ):
        tok.encode_batch([*docs[:6], EOT, *docs[6:]], allowed_special=set(), num_threads=threads)
    with pytest.raises(TypeError, match=rf"not bytes.*\(text 6 of {n} in the batch\)$"):
        tok.encode_batch([*docs[:5], b"bytes", *docs[5:]], num_threads=threads)
    # A keyword wrong for every text names none.
    with pytest.raises(TypeError, match=r"not the str 'nope'") as caught:
        tok.encode_batch(docs, allowed_special="nope", num_threads=threads)
    assert "batch" not in str(caught.value)


def test_decode_batchs_error_names_the_ids_it_came_from(tok):
    with pytest.raises(
        ValueError, match=r"unknown token id 999999\b.*\(ids list 3 of 3 in the batch\)$"
    ):
        tok.decode_batch([[1], [2], [999_999]])
    with pytest.raises(ValueError, match=r"\(ids list 2 in the batch\)$"):
        tok.decode_batch(iter([[1], [-1]]))  # (its length not known)
    cut = tok.encode("é")[0]
    assert tok.decode_single_token_bytes(cut) == "é".encode()  # one token, two bytes
    half = [i for i, t in tok.vocab.items() if t == b"\xc3"][0]
    with pytest.raises(UnicodeDecodeError, match=r"\(ids\[0\]\) \(ids list 2 of 2 in the batch\)$"):
        tok.decode_batch([[cut], [half]], errors="strict")


def test_a_threaded_batch_raises_the_first_failing_texts_error(tok):
    tok.prepare_bulk()
    docs = _documents()
    with pytest.raises(ValueError, match=re.escape(repr(EOT))):
        tok.encode_batch(docs, allowed_special=set(), num_threads=4)
    with pytest.raises(TypeError, match="encode takes a str"):
        tok.encode_batch([*docs[:5], b"bytes", *docs[5:]], num_threads=4)
