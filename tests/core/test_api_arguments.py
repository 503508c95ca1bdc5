"""Wrong or odd arguments to the public API get an error that names them, or the result the
right argument gives. Each case was found by an audit that called every public function with
a grid of bad values: before, each was a silent wrong result, a traceback from deep inside,
or a message naming nothing."""

from __future__ import annotations

import re

import numpy as np
import pytest
from core_helpers import EOT, SLICES, read_fixture, write_text

from bpe_studio.core import BpeTrainer, Tokenizer, train_bpe
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain.encode_steps import encode_steps
from bpe_studio.core.explain.usage import corpus_usage
from bpe_studio.core.explain.vocabulary import token_table
from bpe_studio.core.train.vocab import initial_vocab, merge_budget

BYTES = {i: bytes([i]) for i in range(256)}


def test_encode_file_never_writes_over_its_input(tmp_path, gpt2_tokenizer):
    """The output named as the input: the ids replaced the text they were of."""
    text = read_fixture(SLICES["english"])[:5000]
    path = write_text(tmp_path / "c.txt", text)
    with pytest.raises(ValueError, match=r"c\.txt: is the input .*c\.txt; the ids never replace"):
        encode_file(gpt2_tokenizer, path, path, workers=1)
    assert path.read_text(encoding="utf-8") == text
    (tmp_path / "out").mkdir()
    with pytest.raises(ValueError, match=r"out: is a directory"):
        encode_file(gpt2_tokenizer, path, tmp_path / "out", workers=1)


def test_open_tokenizer_refuses_a_bare_string_of_special_tokens():
    """It was split into characters: 'éé' added 'é' as a special token."""
    with pytest.raises(TypeError, match=r"not the str 'éé' \(write \['éé'\]\)"):
        open_tokenizer("gpt2", None, "éé")


def test_usage_refuses_another_tokenizers_table(tmp_path, gpt2_tokenizer):
    """With GPT-2's table, a 300-token tokenizer's usage counted 17 used and 50,239 unused
    (16 and 276 were right)."""
    path = write_text(tmp_path / "c.txt", read_fixture(SLICES["english"])[:20_000])
    small = Tokenizer(*train_bpe(path, 300))
    with pytest.raises(ValueError, match=r"table: id \d+ is .* the table is another tokenizer's"):
        corpus_usage(small, str(path), table=token_table(gpt2_tokenizer), workers=1)
    mine = corpus_usage(small, str(path), table=token_table(small), workers=1)
    assert mine.tokens == len(small.encode(read_fixture(SLICES["english"])[:20_000]))


@pytest.mark.parametrize("engine", ["python", "compiled"])
@pytest.mark.parametrize(
    ("counts", "error", "words"),
    [
        ({b"ab": 2.6, b"cd": 2.4}, TypeError, r"b'ab': count 2.6 is not a whole number"),
        ({b"ab": True}, TypeError, r"count True is not a whole number"),
        ({b"ab": -5}, ValueError, r"b'ab': count -5 is negative"),
        ({b"ab": 10**30}, ValueError, r"beyond 2\*\*63 - 1"),
        # Each count within 64 bits, the pair (a, b)'s 2**63 past them: the compiled engine
        # wrapped it and merged (c, d) first, the Python one (a, b).
        (
            {b"ab": 2**62, b"xab": 2**62, b"cd": 2**62 + 5},
            ValueError,
            r"the byte pair b'ab' occurs 9,223,372,036,854,775,808 times in all, beyond 2\*\*63",
        ),
        # The same as NumPy's integers, whose product in a bound would wrap as well.
        (
            {b"ab": np.int64(2**62), b"xab": np.int64(2**62), b"cd": np.int64(2**62 + 5)},
            ValueError,
            r"the byte pair b'ab' occurs 9,223,372,036,854,775,808 times in all",
        ),
        ({"ab": 3}, TypeError, r"pre-tokens must be bytes, got 'ab'"),
        (None, TypeError, r"mapping of bytes -> count, not NoneType"),
        ([(b"ab", 3)], TypeError, r"mapping of bytes -> count, not list"),
    ],
)
def test_the_trainer_checks_its_counts_alike_on_both_engines(engine, counts, error, words):
    """2.6 was merged as 2.6 by the Python engine and as 2 by the compiled one; 10**30 was
    an OverflowError on the compiled engine only; None an AttributeError; counts that add
    up past 64 bits merged otherwise on each engine."""
    with pytest.raises(error, match=words):
        BpeTrainer(counts, 259, engine=engine)


@pytest.mark.parametrize(
    "counts",
    [
        {b"abc": 2**62},  # two pairs of 2**62 each: none past 64 bits
        {b"abab": 2**62 - 1, b"cd": 2**63 - 1},  # (a, b) twice in one pre-token: 2**63 - 2
    ],
)
def test_counts_whose_pairs_stay_within_64_bits_train_alike_on_both_engines(counts):
    """The check of the counts' sums refuses no counts the engines count exactly: the
    merges, counts included, of both engines are the same."""
    merges = {
        engine: [(s.left, s.right, s.count) for s in BpeTrainer(counts, 262, engine=engine)]
        for engine in ("python", "compiled")
    }
    assert merges["python"] == merges["compiled"]
    assert merges["python"][0][2] == max(
        sum(
            c * sum(1 for i in range(len(t) - 1) if t[i : i + 2] == pair) for t, c in counts.items()
        )
        for pair in (b"ab", b"bc", b"cd", b"ba")
    )


@pytest.mark.parametrize(
    "counts",
    [
        {b"ab": np.uint64(100), b"cd": 1},  # a uint64's negation, the heap's key, wrapped
        {b"ab": np.int32(2**30), b"xab": np.int32(2**30), b"cd": 2**31},  # an int32 sum
        {b"ab": np.uint64(2**60 + 1), b"xab": np.int64(1), b"cd": 2**60 + 1},  # a float sum
    ],
)
def test_numpy_counts_merge_alike_on_both_engines(counts):
    """A review: the Python engine summed and ranked NumPy counts in their own width."""
    oracle = {}  # each pair's count in Python's integers, by hand
    for token, count in counts.items():
        for i in range(len(token) - 1):
            oracle[token[i : i + 2]] = oracle.get(token[i : i + 2], 0) + int(count)
    best = max(oracle.values())
    first = max(pair for pair, n in oracle.items() if n == best)  # ties: the greater pair
    for engine in ("python", "compiled"):
        step = next(iter(BpeTrainer(counts, 257, engine=engine)))
        assert (step.left + step.right, step.count, type(step.count)) == (first, best, int)


def test_numpy_counts_are_counts():
    trainer = BpeTrainer({b"ab": np.int64(5), b"cd": 3}, 257, engine="python")
    assert [(s.left, s.right, s.count) for s in trainer] == [(b"a", b"b", 5)]


@pytest.mark.parametrize(
    ("vocab", "merges", "specials", "error", "words"),
    [
        ({**BYTES, -1: b"zz"}, [], None, ValueError, r"vocab: id -1 is out of range"),
        ({**BYTES, 2**40: b"zz"}, [], None, ValueError, r"vocab: id 1099511627776 is out of"),
        (None, [], None, TypeError, r"vocab must be a mapping .*, not NoneType"),
        ({**BYTES, 256: "ab"}, [], None, TypeError, r"the token of id 256 is a str, not bytes"),
        ({**BYTES, "x": b"x"}, [], None, TypeError, r"vocab: id 'x' is not an integer"),
        (BYTES, [("a", "b")], None, TypeError, r"merge 0 \(\('a', 'b'\)\): tokens must be bytes"),
        (BYTES, ["ab"], None, TypeError, r"merge 0 \('ab'\) is not a pair of token bytes"),
        (BYTES, [], {EOT: 2**40}, ValueError, r"id 1099511627776 is out of range"),
    ],
)
def test_the_tokenizer_checks_its_vocabulary(vocab, merges, specials, error, words):
    """-1 was kept (and decoded); 2**40 made every id array uint64; str tokens read as
    missing single bytes; a special id of 2**40 was a struct.error."""
    with pytest.raises(error, match=words):
        Tokenizer(vocab, merges, specials)


@pytest.mark.parametrize(
    ("vocab", "specials", "shown"),
    [
        ({**BYTES, 4_000_000_000: b"zz"}, None, "vocab: id 4,000,000,000"),
        ({**BYTES, (1 << 31) - 1: b"zz"}, None, "vocab: id 2,147,483,647"),
        (BYTES, {EOT: 4_000_000_000}, f"special token '{EOT}': id 4,000,000,000"),
    ],
)
def test_ids_far_past_the_vocabulary_are_refused_before_a_table_is_built(
    vocab, specials, shown, tmp_path
):
    """Found on a real display: 257 tokens with one at id 4,000,000,000 loaded, then the editor
    said "OverflowError: Python integer 4000000000 out of bounds for int32" and the merge tree
    asked for 29.8 GiB. Ids up to the number of tokens + 2**20 are taken."""
    with pytest.raises(ValueError, match=re.escape(shown) + r" is far past the vocabulary's"):
        Tokenizer(vocab, [], specials)
    near = {**BYTES, 256 + (1 << 20): b"zz"}
    assert Tokenizer(near, []).decode([256 + (1 << 20), 104]) == "zzh"
    if specials is None:
        folder = tmp_path / "gpt2"
        folder.mkdir()
        Tokenizer({**BYTES, 300: b"<z>"}, []).save(folder)
        text = (folder / "vocab.json").read_text(encoding="utf-8")
        far = max(vocab)
        (folder / "vocab.json").write_text(text.replace(": 300", f": {far}"), encoding="utf-8")
        named = re.escape(f"{folder / 'vocab.json'}: id {far:,} is")
        with pytest.raises(ValueError, match=named):
            Tokenizer.load(folder)
        with pytest.raises(ValueError, match=named):  # the file named too (the re-check)
            Tokenizer.from_files(folder / "vocab.json", folder / "merges.txt")
        Tokenizer({**BYTES, 300: b"<z>"}, []).save(tmp_path / "hf", format="hf")
        hf = tmp_path / "hf" / "tokenizer.json"
        hf.write_text(hf.read_text(encoding="utf-8").replace(": 300", f": {far}"), "utf-8")
        with pytest.raises(ValueError, match=re.escape(f"{hf}: id {far:,} is")):
            Tokenizer.from_hf(hf)


def test_the_limit_quoted_for_a_special_tokens_id_is_the_one_applied():
    vocab = {**BYTES, 256: b"ab"}
    limit = len(vocab) + 1 + (1 << 20)
    assert Tokenizer(vocab, [(b"a", b"b")], {EOT: limit}).special_id(EOT) == limit
    with pytest.raises(ValueError, match=f"may go up to {limit:,} "):
        Tokenizer(vocab, [(b"a", b"b")], {EOT: limit + 1})


def test_a_numpy_integer_as_a_special_tokens_id_is_that_id():
    tok = Tokenizer(BYTES, [], {EOT: np.int64(300)})
    assert tok.special_id(EOT) == 300 and tok.encode(EOT) == [300]


def test_training_refuses_special_tokens_given_with_ids(tmp_path):
    """The ids were silently ignored: the token went to 256."""
    path = write_text(tmp_path / "c.txt", read_fixture(SLICES["english"])[:5000])
    with pytest.raises(TypeError, match=r"special tokens for training are a list"):
        train_bpe(path, 300, {EOT: 300})


def test_vocabulary_helpers_count_special_tokens_as_training_does():
    """A bare string was one special token per character (269 entries); duplicates were
    counted twice, where training counts them once."""
    with pytest.raises(TypeError, match="not the str"):
        initial_vocab(EOT)
    with pytest.raises(TypeError, match="not the str"):
        merge_budget(300, EOT)
    assert len(initial_vocab([EOT, EOT])) == 257
    assert merge_budget(300, [EOT, EOT]) == 300 - 257


def test_special_id_names_the_special_tokens(gpt2_tokenizer):
    with pytest.raises(KeyError) as raised:
        gpt2_tokenizer.special_id("<|nope|>")
    assert str(raised.value) == (
        "'<|nope|>' is not a special token of this tokenizer (its special tokens: '<|endoftext|>')"
    )


def test_encode_steps_takes_a_lone_surrogate_as_encode_does(gpt2_tokenizer):
    """It raised UnicodeEncodeError, where encode gives U+FFFD's tokens."""
    assert list(encode_steps(gpt2_tokenizer, "\ud800")[-1].tokens) == gpt2_tokenizer.encode(
        "\ud800"
    )


@pytest.mark.parametrize(
    ("path", "words"),
    [
        (None, r"not NoneType None"),
        (123, r"not int 123"),
        (b"/tmp/corpus.txt", r"not bytes b'/tmp/corpus.txt'"),
        ([1], r"a corpus path must be a str or os.PathLike, not int 1"),
    ],
)
def test_a_corpus_that_is_no_path_is_named(path, words):
    """None was "'NoneType' object is not iterable"; bytes were iterated as ints."""
    with pytest.raises(TypeError, match=words):
        train_bpe(path, 300)


def test_more_arguments_that_are_no_such_thing_are_named(tmp_path, gpt2_tokenizer):
    """Each was an error from the standard library or from deep inside that named nothing,
    or (save('')) a tokenizer written into the working directory."""
    from bpe_studio.core import CompressionCurve

    with pytest.raises(TypeError, match=r"a preset is named by a str .*, not None"):
        Tokenizer.preset(None)
    with pytest.raises(TypeError, match=r"CompressionCurve takes the text as a str, not bytes"):
        CompressionCurve(b"text")
    path = write_text(tmp_path / "c.txt", "hello")
    with pytest.raises(TypeError, match=r"encode_file takes a tokenizer .*, not 'gpt2'"):
        encode_file("gpt2", path, tmp_path / "ids.npy")
    with pytest.raises(ValueError, match=r"save: the directory is empty"):
        gpt2_tokenizer.save("")
