"""A ``tokenizer.json`` with ``ignore_merges`` (Llama 3's shape) whose vocabulary holds runs of
Han characters that no merge makes: such a token is the whole pre-token's one id when the
pre-token is exactly it, and never appears inside a longer pre-token, which merges by rank.
The Python path once cached the parts it cut long pre-tokens into in the same cache as whole
pre-tokens, so a part equal to such a token took the whole token's id (and a long one found
whole was merged again from its characters). Both encoders, against ``tokenizers`` itself."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
import regex
from core_helpers import SLICES, read_fixture
from foreign_files import LLAMA3_REGEX
from tokenizers import Regex, Tokenizer, decoders, pre_tokenizers, trainers
from tokenizers import models as hf_models

from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.encode.merging import kernel_start
from bpe_studio.core.encode.merging.merger import CUTS_BUILD_MIN


def _hf_token(text: str) -> str:
    """``text`` as a byte-level vocabulary spells it (ByteLevel's own mapping of its bytes)."""
    [(spelled, _)] = pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str(text)
    return spelled


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The file, the text and the added tokens (3 and 4 Han characters: 9 and 12 bytes)."""
    corpus = read_fixture(SLICES["chinese"])
    tok = Tokenizer(hf_models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=3000, initial_alphabet=alphabet, show_progress=False)
    tok.train_from_iterator([corpus], trainer)
    common = [c for c, _ in Counter(regex.findall(r"\p{Han}", corpus)).most_common(300)]
    rng = random.Random(20261128)
    added: list[str] = []
    for size in (3, 4):
        while True:
            run = "".join(rng.choice(common[:40]) for _ in range(size))
            if len(tok.encode(run).ids) >= 2:  # its bytes do not merge into one token
                added.append(run)
                break
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    for run in added:
        vocab[_hf_token(run)] = len(vocab)
    data["model"]["ignore_merges"] = True
    path = tmp_path_factory.mktemp("unreachable") / "tokenizer.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    # Enough distinct long pre-tokens for the cuts' tables (CUTS_BUILD_MIN), each holding an
    # added run inside, then each run alone (a line of its own is a pre-token of its own).
    pieces: set[str] = set()
    while len(pieces) < 3 * CUTS_BUILD_MIN:
        run = rng.choice(added)
        before = "".join(rng.choice(common) for _ in range(rng.randint(1, 4)))
        after = "".join(rng.choice(common) for _ in range(rng.randint(1, 4)))
        pieces.add(before + run + after)
    lines = sorted(pieces)
    rng.shuffle(lines)
    text = "\n".join(lines[:100] + added * 3 + lines[100:] + added * 3) + "\n"
    return path, text, added


@pytest.mark.parametrize("encoder", ["python", "compiled"])
def test_an_unreachable_token_only_whole(files, encoder, monkeypatch):
    path, text, added = files
    monkeypatch.setenv(kernel_start.ENV, encoder)
    if encoder == "compiled" and not kernel_start.prepare():
        pytest.skip(f"the compiled encoder is unavailable here: {kernel_start.failure()}")
    oracle = Tokenizer.from_file(str(path))
    added_ids = {oracle.token_to_id(_hf_token(run)) for run in added}
    expected = oracle.encode(text, add_special_tokens=False).ids
    # The text uses each added token only where a line is the run alone (6 times each).
    assert Counter(i for i in expected if i in added_ids) == dict.fromkeys(added_ids, 6)
    assert open_tokenizer(str(path)).encode(text) == expected


def test_the_reach_rule_counts_tokens_found_whole_as_reachable(files):
    """Found by the audit of inspect on open models' files: the Reach rule merged each
    token's bytes and never looked them up whole as ``ignore_merges`` does, so every Llama 3
    token no merge makes was called unreachable although encoding its text gives it."""
    from bpe_studio.core.explain.reach import unreachable_tokens

    path, _, added = files
    oracle = Tokenizer.from_file(str(path))
    ours = open_tokenizer(str(path))
    unreachable = set(unreachable_tokens(ours))
    checked = 0
    for i, data in ours.vocab.items():
        if i in ours.merger.special_ids:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # not text alone: tokenizers cannot be asked
        given = oracle.encode(text, add_special_tokens=False).ids == [i]
        assert (i in unreachable) != given, (i, text)
        checked += 1
    assert checked > 2000
    assert not {oracle.token_to_id(_hf_token(run)) for run in added} & unreachable


def test_gpt2_files_hold_a_file_whose_every_token_merging_reaches(tmp_path):
    """Found by the conversion audit: a Llama-3-style file sets ignore_merges, which merges.txt
    cannot say, so saving it as GPT-2 files was refused, although every token of it is what
    merging its bytes gives and the look-up changes no id (its tiktoken files, converted to
    GPT-2's, were accepted and encoded the same)."""
    import warnings

    from foreign_files import llama3_style

    from bpe_studio.core.encode.tokenizer import Tokenizer as OurTokenizer

    path = llama3_style(tmp_path / "llama", full=True)
    assert json.loads(path.read_text(encoding="utf-8"))["model"]["ignore_merges"] is True
    ours = OurTokenizer.load(path)
    assert ours.to_data().ignore_merges
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the template and the pattern, said elsewhere
        written = ours.save(tmp_path / "gpt2", format="gpt2")
    assert [p.name for p in written] == ["vocab.json", "merges.txt"]
    specials = ours.to_data().special_tokens
    assert set(specials) == {"<|endoftext|>", "<|begin_of_text|>"}
    back = OurTokenizer.from_files(*written, specials, pattern=LLAMA3_REGEX)
    oracle = Tokenizer.from_file(str(path))
    text = read_fixture(SLICES["english"])[:60_000] + read_fixture(SLICES["chinese"])[:30_000]
    expected = oracle.encode(text, add_special_tokens=False).ids
    assert back.encode(text) == expected
    # Every ordinary token's own text comes back as that one token, as the file gives it.
    for i, data in ours.vocab.items():
        try:
            piece = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if (
            piece
            and i not in ours.merger.special_ids
            and regex.findall(LLAMA3_REGEX, piece) == [piece]
        ):
            assert back.encode(piece) == oracle.encode(piece, add_special_tokens=False).ids


def test_gpt2_files_still_refuse_a_file_with_tokens_only_the_look_up_gives(files, tmp_path):
    """A token merging never makes is found only by the look-up, which merges.txt cannot say."""
    path, _, _ = files
    with pytest.raises(ValueError, match=r"ignore_merges.*save it as 'hf'"):
        open_tokenizer(str(path)).save(tmp_path / "gpt2", format="gpt2")
    assert not (tmp_path / "gpt2").exists()


@pytest.mark.parametrize(
    ("pattern", "free"),
    [
        (LLAMA3_REGEX, True),
        (r"[^\s$^]+|\s+(?!\S)|\\b", True),  # in a class, or escaped: no assertion
        (r"\bword|\s+", False),
        (r"\s+$|\S+", False),
        (r"^\S+|\s+", False),
        (r"(?=\S)\s|\S+", False),
        (r"(?<=a)b|\S+", False),
        (r"\m\w+|\W+", False),
        (r"(?r)\w+|\W+", False),
        (r"(?V1)[\w--\d]+|\W+", False),
    ],
)
def test_a_pattern_decides_pre_tokens_by_their_own_text_only_without_assertions(pattern, free):
    from bpe_studio.core.encode.whole_lookup import _context_free

    assert _context_free(pattern) is free
