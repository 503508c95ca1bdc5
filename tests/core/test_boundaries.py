"""Every "where may text be cut" rule (``core.pretokenization.boundaries``) checked against
whole-text pre-tokenization: cutting at every cut a rule reports and pre-tokenizing the pieces
on their own gives exactly the pre-tokens (and special tokens, and ids) of the whole text.

The oracle is GPT-2's pattern in its published form, applied by ``regex`` after special tokens
are cut out leftmost-longest (``core.reference``, which imports nothing else of ``bpe_studio``).
Texts: slices of the fixture corpora and hypothesis-generated text.
"""

from __future__ import annotations

import dataclasses
import itertools
import unicodedata
from collections import Counter
from unittest import mock

import pytest
import regex
from core_helpers import EOT, SLICES, read_fixture, write_text
from foreign_files import LLAMA3_REGEX, QWEN2_REGEX
from hf_shapes import DEEPSEEK_V3, byte_level, components, hf_pretokens, splits_then_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_encoder import published
from text_strategies import HYPO, TEXTS
from tokenizers import normalizers as nz

from bpe_studio.core import Tokenizer, count_file, count_text
from bpe_studio.core.corpus.counting import IN_PROCESS_LIMIT
from bpe_studio.core.formats.hf import unicode_tables
from bpe_studio.core.formats.hf.components import read_components
from bpe_studio.core.formats.hf.normalizers import unstable_class
from bpe_studio.core.pretokenization import boundaries as boundaries_module
from bpe_studio.core.pretokenization.boundaries import (
    CL100K_CUTS,
    DEEPSEEK_V3_CUTS,
    GPT2_CUTS,
    LLAMA3_CUTS,
    O200K_CUTS,
    QWEN2_CUTS,
    SPECIALS_ONLY,
    STARCODER_CUTS,
    CutRules,
    chunk_boundaries,
    cut_rules,
    is_space_cut,
    space_cut_after,
    space_cut_before,
    steps_cut_rules,
    text_cuts,
)
from bpe_studio.core.pretokenization.names import GPT2_PATTERN, PATTERNS
from bpe_studio.core.pretokenization.scan_patterns import (
    DEEPSEEK_V3_PATTERNS,
    DIGIT_PATTERN,
    LLAMA3_PATTERN,
    QWEN2_PATTERN,
    isolated,
)
from bpe_studio.core.pretokenization.specials import Specials
from bpe_studio.core.reference import GPT2_SPLIT_PATTERN

SPLIT = regex.compile(GPT2_SPLIT_PATTERN)
DOUBLE = EOT + EOT
# Special tokens that overlap in a chain: "<|a|><|b|><|a|><|b|>" holds "|><|" between the two,
# so matched from a point inside the run they line up otherwise than from its start.
CHAIN = ("<|a|><|b|>", "|><|")
RULES = [GPT2_CUTS, SPECIALS_ONLY]


def items(text: str, specials=(), split=SPLIT) -> list[tuple[str, str]]:
    """The whole text's pre-tokens ("t", piece) and special tokens ("s", token), in order:
    at each point the earliest special token is cut out, the longest of those starting there."""
    out: list[tuple[str, str]] = []
    pos = 0
    while True:
        hits = [(text.find(t, pos), -len(t), t) for t in specials if text.find(t, pos) >= 0]
        end = min(hits)[0] if hits else len(text)
        out += [("t", p) for p in split.findall(text[pos:end])]
        if not hits:
            return out
        out.append(("s", min(hits)[2]))
        pos = end + len(min(hits)[2])


def pieces_at(text: str, cuts) -> list[str]:
    cuts = sorted(set(cuts))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


def assert_cuts_keep_tokens(text: str, cuts, specials=()) -> None:
    whole = items(text, specials)
    joined = [it for piece in pieces_at(text, cuts) for it in items(piece, specials)]
    assert joined == whole, f"cuts {sorted(cuts)[:20]} change the pre-tokens"


def fixture_texts():
    return {key: read_fixture(name)[:60_000] for key, name in SLICES.items()}


@pytest.fixture(scope="module")
def texts():
    return fixture_texts()


# --- the rules are obtained per pattern -----------------------------------------------------


def test_rules_per_pattern():
    assert cut_rules(GPT2_PATTERN) is GPT2_CUTS
    custom = cut_rules(r"\w+|\s+|[^\w\s]+")
    assert custom is SPECIALS_ONLY
    assert custom.lookahead is None and not (custom.space or custom.letter or custom.line)
    with pytest.raises(AttributeError):
        GPT2_CUTS.lookahead = 9  # frozen: shared by every tokenizer


def test_the_oracle_can_fail():
    # A cut inside a word or a run of spaces changes the pre-tokens: the check notices.
    with pytest.raises(AssertionError):
        assert_cuts_keep_tokens("hello world", [2])
    with pytest.raises(AssertionError):
        assert_cuts_keep_tokens("a   b", [2])
    with pytest.raises(AssertionError):
        assert_cuts_keep_tokens(f"a{EOT}b", [4], [EOT])


# --- the space rule (the fast pattern's fallback around astral characters) ----------------


def space_cuts(text):
    return [p for p in range(1, len(text)) if is_space_cut(text, p)]


@pytest.mark.parametrize("key", list(SLICES))
def test_space_cuts_on_fixtures(texts, key):
    text = texts[key].replace(EOT, "")
    cuts = space_cuts(text)
    assert len(cuts) > 100
    assert_cuts_keep_tokens(text, cuts)


@HYPO
@given(TEXTS)
def test_space_cuts_on_generated_text(text):
    assert_cuts_keep_tokens(text.replace(EOT, ""), space_cuts(text.replace(EOT, "")))


@HYPO
@given(TEXTS, st.data())
def test_space_cut_before_and_after_find_the_nearest_cuts(text, data):
    if not text:
        return
    i = data.draw(st.integers(0, len(text) - 1))
    floor = data.draw(st.integers(0, i))
    cuts = space_cuts(text)
    before = [p for p in cuts if floor < p < i]
    after = [p for p in cuts if p > i]
    assert space_cut_before(text, i, floor) == (before[-1] if before else floor)
    assert space_cut_after(text, i) == (after[0] if after else len(text))


# --- the letter rule (the editor's pieces) -------------------------------------------------


def letter_cuts(rules: CutRules, text: str) -> list[int]:
    cuts, pos = [], 0
    while (cut := rules.next_letter_cut(text, pos)) >= 0 and cut < len(text):
        cuts.append(cut)
        pos = cut + 1
    return cuts


@pytest.mark.parametrize("key", list(SLICES))
def test_letter_cuts_on_fixtures(texts, key):
    text = texts[key].replace(EOT, "")
    cuts = letter_cuts(GPT2_CUTS, text)
    assert len(cuts) > 100
    assert_cuts_keep_tokens(text, cuts)


@HYPO
@given(TEXTS)
def test_letter_cuts_on_generated_text(text):
    text = text.replace(EOT, "")
    assert_cuts_keep_tokens(text, letter_cuts(GPT2_CUTS, text))


def test_no_letter_cuts_without_rules():
    assert letter_cuts(SPECIALS_ONLY, "hello, world") == []


# --- the line rule (file chunks, in bytes) -------------------------------------------------


def line_cuts(rules: CutRules, data: bytes) -> list[int]:
    cuts, pos = [], 0
    while (cut := rules.line_cut(data[pos:])) > 0:
        cuts.append(pos + cut)
        pos += cut
    return cuts


@pytest.mark.parametrize("key", list(SLICES))
def test_line_cuts_on_fixtures(texts, key):
    data = texts[key].replace(EOT, "").encode()
    cuts = line_cuts(GPT2_CUTS, data)
    assert len(cuts) > 20 or key == "chinese"
    parts = [data[a:b].decode() for a, b in zip([0, *cuts], [*cuts, len(data)])]
    assert [it for p in parts for it in items(p)] == items(data.decode())


@HYPO
@given(TEXTS)
def test_line_cuts_on_generated_text(text):
    data = text.replace(EOT, "").encode()
    cuts = line_cuts(GPT2_CUTS, data)
    parts = [data[a:b].decode() for a, b in zip([0, *cuts], [*cuts, len(data)])]
    assert [it for p in parts for it in items(p)] == items(data.decode())


def test_no_line_cuts_without_rules():
    assert line_cuts(SPECIALS_ONLY, b"a\nb\nc\n") == []
    assert line_cuts(GPT2_CUTS, b"a\nb\nc\n") == [2, 4]


# --- the lookahead rule (streaming) --------------------------------------------------------


def assert_stream_limit_holds(text: str) -> None:
    """For every prefix of ``text`` (no special tokens): the pre-tokens of the prefix that end
    at or before the rule's limit are exactly the whole text's first pre-tokens."""
    whole = [(m.span(), m.group()) for m in SPLIT.finditer(text)]
    for k in range(len(text) + 1):
        limit = GPT2_CUTS.stream_limit(text[:k], Specials.of([]))
        decided = [(m.span(), m.group()) for m in SPLIT.finditer(text[:k]) if m.end() <= limit]
        assert decided == whole[: len(decided)], (k, limit)
        assert len(decided) == len([w for w in whole if w[0][1] <= limit])


def assert_stream_limit_spares_specials(text: str, specials: tuple[str, ...]) -> None:
    """No special token that the first ``k`` characters hold only the start of begins before
    the limit (plus the lookahead, which the pattern may read)."""
    sp = Specials.of(specials)
    starts = [(m.start(), len(t)) for t in specials for m in regex.finditer(regex.escape(t), text)]
    for k in range(len(text) + 1):
        limit = GPT2_CUTS.stream_limit(text[:k], sp)
        straddling = [s for s, n in starts if s < k < s + n]
        assert all(limit + GPT2_CUTS.lookahead <= s for s in straddling), (k, limit)


@pytest.mark.parametrize("key", list(SLICES))
def test_stream_limit_on_fixtures(texts, key):
    assert_stream_limit_holds(texts[key][:3000].replace(EOT, ""))
    assert_stream_limit_spares_specials(texts[key][:3000], (EOT, DOUBLE))


@HYPO
@given(TEXTS)
def test_stream_limit_on_generated_text(text):
    assert_stream_limit_holds(text.replace(EOT, ""))
    assert_stream_limit_spares_specials(text, (EOT, DOUBLE))


def test_stream_limit_without_rules_decides_nothing():
    assert SPECIALS_ONLY.stream_limit("a" * 10_000, Specials.of([EOT])) == -1
    assert GPT2_CUTS.stream_limit("a" * 100, Specials.of([EOT])) == 100 - (len(EOT) - 1) - 4
    # o200k: nothing in the open run of letters at the end is final
    assert O200K_CUTS.stream_limit("x. " + "a" * 97, Specials.of([])) == 2


# --- the editor's pieces: text_cuts -------------------------------------------------------


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
@pytest.mark.parametrize("key", list(SLICES))
def test_text_cuts_on_fixtures(texts, gpt2_tokenizer, rules, key):
    text = texts[key]
    specials = Specials.of([EOT])
    cuts = text_cuts(text, specials, rules, 300)
    assert cuts[0] == 0 and cuts[-1] == len(text) and cuts == sorted(set(cuts))
    if rules is GPT2_CUTS:
        assert len(cuts) > 20
    assert_cuts_keep_tokens(text, cuts[1:-1], [EOT])
    ids = [i for piece in pieces_at(text, cuts[1:-1]) for i in gpt2_tokenizer.encode(piece)]
    assert ids == gpt2_tokenizer.encode(text)


@HYPO
@given(TEXTS, st.integers(1, 12), st.sampled_from([(EOT,), (EOT, DOUBLE), ()]))
def test_text_cuts_on_generated_text(text, piece, specials):
    for rules in RULES:
        cuts = text_cuts(text, Specials.of(specials), rules, piece)
        assert cuts[0] == 0 and cuts[-1] == len(text)
        assert_cuts_keep_tokens(text, cuts[1:-1], specials)


def test_text_cuts_never_fall_inside_a_special_token():
    text = ("word" * 3 + EOT) * 50
    cuts = text_cuts(text, Specials.of([EOT]), GPT2_CUTS, 1)
    inside = [
        c for c in cuts for s in regex.finditer(regex.escape(EOT), text) if s.start() < c < s.end()
    ]
    assert not inside
    # Without rules the only cuts are the starts of special tokens.
    only = text_cuts(text, Specials.of([EOT]), SPECIALS_ONLY, 1)
    assert set(only[1:-1]) <= {m.start() for m in regex.finditer(regex.escape(EOT), text)}
    assert len(only) > 40


# --- file chunks: chunk_boundaries ---------------------------------------------------------
#
# Both the parallel counter and the parallel encoder cut files with chunk_boundaries. Here it
# is called with tiny chunk sizes (and tiny scan windows) so that generated texts of a few
# dozen characters get many cuts, and each cut is checked by what matters: counting or
# encoding chunk by chunk gives exactly the result for the whole text.

CUT_PIECES = st.sampled_from(
    ["a", "bc", " ", "  ", "\n", "\n\n", " \n", "\t", "\u00a0", "\u3000", "中", "😀", "1",
     ".", "'ll", "'", "\x1c", EOT, EOT + EOT, "<|", "|>", "<|a|>", "<|b|>", "|><|"]
)  # fmt: skip


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("chunks") / "t.txt"


@pytest.fixture(scope="module")
def overlapping_gpt2(gpt2_tokenizer):
    return {
        (): Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges),
        (EOT,): gpt2_tokenizer,
        (EOT, DOUBLE): Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, [EOT, DOUBLE]),
        CHAIN: Tokenizer(gpt2_tokenizer.vocab, gpt2_tokenizer.merges, list(CHAIN)),
    }


@settings(deadline=None, max_examples=300, database=None)
@given(
    st.lists(CUT_PIECES, max_size=40).map("".join),
    st.integers(1, 40),
    st.sampled_from([2, 5, 16, 1 << 16]),
    st.sampled_from([(), (EOT,), (EOT, DOUBLE), CHAIN]),
    st.sampled_from(RULES),
)
def test_chunks_count_and_encode_like_the_whole(
    scratch, overlapping_gpt2, text, target, scan_step, specials, rules
):
    write_text(scratch, text)
    data = text.encode()
    with mock.patch.object(boundaries_module, "_SCAN_STEP", scan_step):
        bounds = chunk_boundaries(scratch, target, Specials.of(specials), rules)
    assert bounds[0] == 0 and bounds[-1] == len(data)
    assert all(a < b for a, b in zip(bounds, bounds[1:])) or len(data) == 0
    chunks = [data[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])]  # whole chars
    total: Counter[bytes] = Counter()
    for chunk in chunks:
        total.update(count_text(chunk, list(specials)))
    assert total == count_text(text, list(specials))
    assert [it for c in chunks for it in items(c, specials)] == items(text, specials)
    tok = overlapping_gpt2[specials]
    assert [i for c in chunks for i in tok.encode(c)] == tok.encode(text)


@pytest.mark.parametrize("scan_step", [3, 7, 64])
@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
def test_special_tokens_overlapping_in_a_chain_are_never_cut(
    scratch, overlapping_gpt2, scan_step, rules
):
    # A file that is all chained special tokens holds no cut but between its runs; fuzzing
    # found a letter cut inside one ("...<|a|><|b" | "|>..."), taken where the window's
    # own matching, begun inside the run, put "|><|" across it instead.
    text = "<|a|><|b|>" * 120 + "x y" + "<|a|><|b|>" * 40
    write_text(scratch, text)
    with mock.patch.object(boundaries_module, "_SCAN_STEP", scan_step):
        bounds = chunk_boundaries(scratch, 16, Specials.of(CHAIN), rules)
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:])]  # ASCII: bytes are characters
    assert [it for c in chunks for it in items(c, CHAIN)] == items(text, CHAIN)
    tok = overlapping_gpt2[CHAIN]
    assert [i for c in chunks for i in tok.encode(c)] == tok.encode(text)


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
@pytest.mark.parametrize("key", list(SLICES))
def test_chunks_of_fixtures(tmp_path, rules, key):
    text = read_fixture(SLICES[key])
    path = write_text(tmp_path / "f.txt", text)
    bounds = chunk_boundaries(path, 20_000, Specials.of([EOT]), rules)
    data = text.encode()
    chunks = [data[a:b].decode() for a, b in zip(bounds, bounds[1:])]
    if rules is GPT2_CUTS or EOT in text:
        assert len(chunks) > 3
    assert [it for c in chunks for it in items(c, [EOT])] == items(text, [EOT])


# --- the line rule at full size: count_file must not cut where the pattern would not ---------
#
# Without special tokens the file is cut just after a line break. GPT-2's pattern keeps a run
# of whitespace together (minus its last character before a non-space), and \s includes
# non-ASCII spaces such as U+00A0 (no-break space, common in web text) and U+3000 (ideographic
# space, common in Chinese). A line break next to such a space is inside a whitespace run, so
# cutting after it changes the pre-tokens.


def whole_vs_parallel(tmp_path, lines):
    text = "\n".join(lines) + "\n"
    text *= 5_000_000 // len(text.encode()) + 1
    path = write_text(tmp_path / "c.txt", text)
    assert path.stat().st_size > IN_PROCESS_LIMIT
    return count_file(path, [], workers=2), count_text(text, [])


def test_cut_after_line_ending_in_a_no_break_space(tmp_path):
    # Like mixed_web.txt, where 152 lines end in U+00A0 followed by a line starting a word.
    lines = read_fixture(SLICES["mixed_web"]).replace(EOT, "").split("\n")
    lines = [ln.rstrip() + "\u00a0" for ln in lines if ln.strip()]
    parallel, whole = whole_vs_parallel(tmp_path, lines)
    assert parallel == whole


def test_cut_before_line_indented_with_ideographic_spaces(tmp_path):
    # Chinese paragraphs indented with two U+3000, as in chinese.txt (810 such lines).
    lines = read_fixture(SLICES["chinese"]).replace(EOT, "").split("\n")
    lines = ["\u3000\u3000" + ln for ln in lines if ln.strip()]
    parallel, whole = whole_vs_parallel(tmp_path, lines)
    assert parallel == whole


# --- cl100k's, o200k's and the open models' rules ----------------------------------------
#
# The same checks for the other patterns with rules, with tiktoken's published regexes, the
# open models' as their tokenizer.json files carry them (Llama 3, Qwen2) and DeepSeek-V3's
# three Splits run in turn as the oracles. Texts get extra pieces these patterns treat
# specially: o200k's "/" after line breaks, contractions glued to words, case changes inside
# words, marks, digit runs, DeepSeek-V3's kana and punctuation before ASCII letters.


class _Piece:
    """A piece of :class:`Steps`, as a regex match gives one (``span``, ``group``)."""

    def __init__(self, start: int, text: str) -> None:
        self.text, self.at = text, (start, start + len(text))

    def span(self) -> tuple[int, int]:
        return self.at

    def end(self) -> int:
        return self.at[1]

    def group(self) -> str:
        return self.text


class Steps:
    """Isolated Splits run in turn, each on the pieces of the one before (DeepSeek-V3's
    pre-tokenizer), by ``regex``: an oracle with the methods the checks use."""

    def __init__(self, patterns) -> None:
        self.patterns = list(patterns)
        self.splits = [regex.compile(isolated(p)) for p in patterns]

    def findall(self, text: str) -> list[str]:
        pieces = [text] if text else []
        for split in self.splits:
            pieces = [q for p in pieces for q in split.findall(p)]
        return pieces

    def finditer(self, text: str):
        at = 0
        for piece in self.findall(text):
            yield _Piece(at, piece)
            at += len(piece)


# The open models' patterns as their tokenizer.json files carry them (and the test files
# that build such files spell them).
assert (LLAMA3_REGEX, QWEN2_REGEX) == (LLAMA3_PATTERN, QWEN2_PATTERN)
OTHER = {
    "cl100k": (CL100K_CUTS, regex.compile(published("cl100k_base")["pat_str"])),
    "o200k": (O200K_CUTS, regex.compile(published("o200k_base")["pat_str"])),
    "llama3": (LLAMA3_CUTS, regex.compile(LLAMA3_REGEX)),
    "qwen2": (QWEN2_CUTS, regex.compile(QWEN2_REGEX)),
    "deepseek_v3": (DEEPSEEK_V3_CUTS, Steps(DEEPSEEK_V3)),
    # Digits(individual_digits) then ByteLevel's regex.
    "starcoder": (STARCODER_CUTS, Steps([DIGIT_PATTERN, GPT2_PATTERN])),
}
EXTRA_PIECES = st.sampled_from(
    ["a", "B", "é", "עברית", "HTTP", "e\u0301", "\u0301", "'", "'s", "'S", "'ll", "n't", "/",
     "\n", "\r\n", ".", "\n/", ".\n", " ", "  ",
     "\u00a0", "\u3000", "12345", "中", "😀", "x/", "\t", "\x1c",
     "ſ", "'LL", "'D", "・", "ー", "カナ", "\u3099", "\u200d", "\x01", ".com", "..a", "\r\n\r\n ",
     " \n\t", "1234567"]
)  # fmt: skip
OTHER_TEXTS = st.lists(st.one_of(EXTRA_PIECES, TEXTS), max_size=30).map("".join)


def test_named_patterns_have_their_rules():
    assert cut_rules("cl100k") is CL100K_CUTS and cut_rules("o200k") is O200K_CUTS
    for _, (rules, split) in OTHER.items():
        if isinstance(split, Steps):
            assert steps_cut_rules(split.patterns) is rules
            assert steps_cut_rules([isolated(p) for p in split.patterns]) is rules
        else:
            assert cut_rules(split.pattern) is rules
            assert steps_cut_rules([isolated(split.pattern)]) is rules
    assert cut_rules(published("r50k_base")["pat_str"]) is GPT2_CUTS


def test_open_models_patterns_are_recognised_by_their_exact_text():
    # Llama 3's regex in every spelling the core meets (as published, as onig.translate
    # gives it), Qwen2's; one character off, or a sequence of other Splits: no rules.
    assert cut_rules(LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"(?:\p{N}){1,3}")) is LLAMA3_CUTS
    assert cut_rules(LLAMA3_PATTERN.replace("{1,3}", "{1,4}")) is SPECIALS_ONLY
    assert cut_rules(QWEN2_PATTERN + "|x") is SPECIALS_ONLY
    assert steps_cut_rules(DEEPSEEK_V3_PATTERNS[::-1]) is SPECIALS_ONLY
    assert steps_cut_rules([GPT2_PATTERN, r"\p{N}"]) is SPECIALS_ONLY
    assert steps_cut_rules([r"\p{N}", PATTERNS["cl100k"]]) is SPECIALS_ONLY
    # subtle: wrapped as an Isolated Split a regex is a tokenizer.json pipeline's last step,
    # which cut_rules alone cannot vouch for (the pipeline's normalizer, a prefix space).
    assert cut_rules(isolated(LLAMA3_PATTERN)) is SPECIALS_ONLY
    assert cut_rules(isolated(GPT2_PATTERN)) is SPECIALS_ONLY


def assert_other_cuts(name: str, text: str, cuts, specials=()) -> None:
    split = OTHER[name][1]
    whole = items(text, specials, split)
    joined = [it for piece in pieces_at(text, cuts) for it in items(piece, specials, split)]
    assert joined == whole, (name, sorted(cuts)[:20])


def test_other_oracles_can_fail():
    with pytest.raises(AssertionError):
        assert_other_cuts("o200k", "don't", [3])  # o200k keeps "don't" whole
    with pytest.raises(AssertionError):
        assert_other_cuts("o200k", ".\n/x", [2])  # and "/" after a line break
    with pytest.raises(AssertionError):
        assert_other_cuts("cl100k", "12345", [2])
    with pytest.raises(AssertionError):
        assert_other_cuts("deepseek_v3", "e\u0301x", [1])  # its words take marks
    with pytest.raises(AssertionError):
        assert_other_cuts("llama3", "a\n  \nb", [2])  # \s*[\r\n]+ takes the run
    with pytest.raises(AssertionError):
        assert_other_cuts("starcoder", "x 1 hey", [4])  # " hey" is one pre-token
    # Without its open run, Llama 3's stream limit would take "\n" as final in "\n    ".
    text, rules = "a\n     \n", dataclasses.replace(LLAMA3_CUTS, open_run=None)
    limit = rules.stream_limit(text[:-1], Specials.of([]))
    assert 2 <= limit and OTHER["llama3"][1].findall(text) == ["a", text[1:]]


@pytest.mark.parametrize("name", list(OTHER))
@pytest.mark.parametrize("key", list(SLICES))
def test_other_letter_and_line_cuts_on_fixtures(texts, name, key):
    rules = OTHER[name][0]
    text = texts[key].replace(EOT, "")
    cuts = letter_cuts(rules, text)
    assert len(cuts) > 100
    assert_other_cuts(name, text, cuts)
    data = text.encode()
    lines = line_cuts(rules, data)
    assert len(lines) > 20 or key == "chinese"
    parts = [data[a:b].decode() for a, b in zip([0, *lines], [*lines, len(data)])]
    split = OTHER[name][1]
    assert [it for p in parts for it in items(p, (), split)] == items(text, (), split)


@pytest.mark.parametrize("name", list(OTHER))
def test_other_cuts_on_generated_text(name):
    rules, split = OTHER[name]

    @HYPO
    @given(OTHER_TEXTS, st.integers(1, 12))
    def check(text, piece):
        text = text.replace(EOT, "")
        assert_other_cuts(name, text, letter_cuts(rules, text))
        # every cut point the rule allows, checked one at a time too
        for cut in letter_cuts(rules, text):
            assert_other_cuts(name, text, [cut])
        data = text.encode()
        lines = line_cuts(rules, data)
        parts = [data[a:b].decode() for a, b in zip([0, *lines], [*lines, len(data)])]
        assert [it for p in parts for it in items(p, (), split)] == items(text, (), split)
        cuts = text_cuts(text, Specials.of([]), rules, piece)
        assert_other_cuts(name, text, cuts[1:-1])
        # the lookahead rule: pre-tokens of a prefix ending by the limit are final
        whole = [(m.span(), m.group()) for m in split.finditer(text)]
        for k in range(len(text) + 1):
            limit = rules.stream_limit(text[:k], Specials.of([]))
            decided = [(m.span(), m.group()) for m in split.finditer(text[:k]) if m.end() <= limit]
            assert decided == whole[: len(decided)], (k, limit)

    check()


@pytest.mark.parametrize("name", list(OTHER))
def test_other_chunks_count_like_the_whole(scratch, name):
    rules, split = OTHER[name]

    @settings(deadline=None, max_examples=200, database=None)
    @given(
        st.lists(st.one_of(CUT_PIECES, EXTRA_PIECES), max_size=40).map("".join),
        st.integers(1, 40),
        st.sampled_from([(), (EOT,), (EOT, DOUBLE)]),
    )
    def check(text, target, specials):
        write_text(scratch, text)
        data = text.encode()
        with mock.patch.object(boundaries_module, "_SCAN_STEP", 5):
            bounds = chunk_boundaries(scratch, target, Specials.of(specials), rules)
        chunks = [data[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])]
        joined = [it for c in chunks for it in items(c, specials, split)]
        assert joined == items(text, specials, split)

    check()


@pytest.mark.parametrize("name", ["gpt2", *OTHER])
def test_stream_limit_on_every_short_text(name):
    # Every text of up to 6 characters of line breaks, spaces, tabs, a letter and a full stop:
    # the pre-tokens of each prefix that end by its stream limit are the whole text's. (o200k
    # once took "\n" as final in "\n    ", which "\n    \n" holds whole.)
    rules, split = OTHER[name] if name in OTHER else (GPT2_CUTS, SPLIT)
    for n in range(1, 7):
        for chars in itertools.product("\n \ta.", repeat=n):
            text = "".join(chars)
            whole = [(m.span(), m.group()) for m in split.finditer(text)]
            for k in range(len(text)):
                limit = rules.stream_limit(text[:k], Specials.of([]))
                decided = [
                    (m.span(), m.group()) for m in split.finditer(text[:k]) if m.end() <= limit
                ]
                assert decided == whole[: len(decided)], (text, k, limit)


# --- the open models' patterns: every short text -------------------------------------------
#
# Llama 3's, Qwen2's and DeepSeek-V3's rules were derived from their alternatives (see the
# module docstring of ``boundaries``); here every text of up to four characters over an
# alphabet of the characters their alternatives treat apart (contraction letters in both
# cases, "ſ", digits, line breaks, spaces, a no-break space, a mark, Han, kana and its
# middle dot and prolonged sound mark, a joiner), and every text of up to six over a
# smaller one, is cut at every letter and line cut, and each prefix decided by its stream
# limit, against the whole text.

SHORT_ALPHABETS = [("'sSlLſ1. \n\r\t\u00a0\u0301中・ー\u200d", 4), ("'sl .\n\r", 6)]


def assert_every_cut_of(name: str, text: str) -> None:
    rules, split = OTHER[name]
    whole = split.findall(text)
    for cut in letter_cuts(rules, text):
        assert split.findall(text[:cut]) + split.findall(text[cut:]) == whole, (text, cut)
    data = text.encode()
    for cut in line_cuts(rules, data):
        left, right = data[:cut].decode(), data[cut:].decode()
        assert split.findall(left) + split.findall(right) == whole, (text, cut)
    spans = [m.span() for m in split.finditer(text)]
    for k in range(len(text)):
        limit = rules.stream_limit(text[:k], Specials.of([]))
        decided = [m.span() for m in split.finditer(text[:k]) if m.end() <= limit]
        assert decided == spans[: len(decided)], (text, k, limit)


@pytest.mark.parametrize("name", ["llama3", "qwen2", "deepseek_v3", "starcoder"])
def test_open_patterns_on_every_short_text(name):
    for alphabet, longest in SHORT_ALPHABETS:
        for n in range(1, longest + 1):
            for chars in itertools.product(alphabet, repeat=n):
                assert_every_cut_of(name, "".join(chars))


# --- after a tokenizer.json's normalizer: NFC, NFKC -------------------------------------------
#
# A pipeline's rules are its Splits' patterns', kept only between characters the normalizer
# leaves as they are and joins nothing across (``boundaries.stable_cuts``). The oracle is
# ``tokenizers`` itself: its normalizer, then its pre-tokenizer, on each side of a cut.

NORMALIZED = {
    "qwen2": (nz.NFC(), splits_then_bytes(QWEN2_REGEX)),
    "llama3_nfkc": (nz.NFKC(), splits_then_bytes(LLAMA3_REGEX)),
    "deepseek_v3_nfc": (nz.NFC(), splits_then_bytes(*DEEPSEEK_V3)),
    "o200k_nfc": (nz.NFC(), splits_then_bytes(PATTERNS["o200k"])),
    "gpt2_nfkc": (nz.NFKC(), byte_level(regex=True)),
}
# Characters normalization changes, composes or reorders: a letter NFC gives a mark
# (U+0958 is "क" + nukta), Hangul jamo that compose, ligatures and compatibility forms
# NFKC expands (into letters, from a number or a symbol: "Ⅻ", "™"), singletons (the Kelvin
# sign), a CJK compatibility ideograph, marks of two classes, fullwidth punctuation.
NORMALIZING = ["e", "\u0301", "\u0323", "\u0958", "\u1100", "\u1161", "\u11a8", "ﬁ",
               "Ⅻ", "\u2122", "\u212a", "\uf900", "，", "Ａ", "中", ".", " ", "\n", "a",
               "'"]  # fmt: skip
NORMALIZING_TEXTS = st.lists(
    st.one_of(st.sampled_from(NORMALIZING), EXTRA_PIECES, TEXTS), max_size=30
).map("".join)


def _normalized(name: str):
    normalizer, pre_tokenizer = NORMALIZED[name]
    pipeline = read_components(components(normalizer, pre_tokenizer), name, {}).pipeline
    assert pipeline is not None
    rules = pipeline.pretokenizer().cut_rules
    return rules, lambda text: hf_pretokens(normalizer, pre_tokenizer, text)


def assert_normalized_cuts(split, text: str, cuts) -> None:
    whole = split(text)
    joined = [p for piece in pieces_at(text, cuts) for p in split(piece)]
    assert joined == whole, (text[:60], sorted(cuts)[:20])


def test_normalized_oracle_can_fail():
    # The raw pattern's letter rule: after "क़" (a letter) NFC leaves a mark that joins "."
    # in the punctuation run, and "e" + U+0301 is one letter.
    rules, split = _normalized("qwen2")
    assert rules.name == "qwen2 after NFC"
    for text, cut in [("x\u0958.y", 2), ("e\u0301.", 1)]:
        with pytest.raises(AssertionError):
            assert_normalized_cuts(split, text, [cut])
        assert cut not in letter_cuts(rules, text)


def test_what_the_normalized_rules_rest_on():
    # Line cuts' neighbours are ASCII: never in the unstable class.
    for form in ("NFC", "NFKC"):
        unstable = regex.compile(f"[{unstable_class(form)}]")
        assert not [c for c in range(128) if unstable.match(chr(c))], form
    # A character after a letter cut may compose with the marks after it: the character it
    # composes into is a letter, a mark or neither as the first one is.
    kind = regex.compile(r"(\p{L})|(\p{M})")
    _, _, pairs = unicode_tables.characters()
    assert len(pairs) > 900
    for pair in pairs:
        composed = unicodedata.normalize("NFC", pair)
        first, whole = kind.match(pair[0]), kind.match(composed)
        assert (first and first.lastindex) == (whole and whole.lastindex), pair


@pytest.mark.parametrize("name", list(NORMALIZED))
def test_normalized_cuts_on_fixtures(texts, name):
    rules, split = _normalized(name)
    assert rules.name.endswith(("after NFC", "after NFKC"))
    for key in SLICES:
        text = texts[key].replace(EOT, "")[:20_000]
        cuts = letter_cuts(rules, text)
        assert len(cuts) > 100 or key == "chinese" and len(cuts) > 20, key
        assert_normalized_cuts(split, text, cuts)
        data = text.encode()
        lines = line_cuts(rules, data)
        assert len(lines) > 20 or key == "chinese"
        parts = [data[a:b].decode() for a, b in zip([0, *lines], [*lines, len(data)])]
        assert [p for part in parts for p in split(part)] == split(text)


@pytest.mark.parametrize("name", list(NORMALIZED))
def test_normalized_cuts_on_generated_text(name):
    rules, split = _normalized(name)

    @HYPO
    @given(NORMALIZING_TEXTS)
    def check(text):
        text = text.replace(EOT, "")
        for cut in letter_cuts(rules, text):
            assert_normalized_cuts(split, text, [cut])
        assert_normalized_cuts(split, text, letter_cuts(rules, text))
        data = text.encode()
        lines = line_cuts(rules, data)
        parts = [data[a:b].decode() for a, b in zip([0, *lines], [*lines, len(data)])]
        assert [p for part in parts for p in split(part)] == split(text)

    check()


@pytest.mark.parametrize("name", list(NORMALIZED))
def test_normalized_cuts_on_every_short_text(name):
    rules, split = _normalized(name)
    for n in range(1, 4):
        for chars in itertools.product(NORMALIZING, repeat=n):
            text = "".join(chars)
            for cut in letter_cuts(rules, text):
                assert_normalized_cuts(split, text, [cut])


# --- a stream's last cut (a tokenizer.json's pipeline) ---------------------------------------


@HYPO
@given(
    st.lists(st.one_of(CUT_PIECES, EXTRA_PIECES), max_size=60).map("".join),
    st.sampled_from([LLAMA3_CUTS, DEEPSEEK_V3_CUTS, SPECIALS_ONLY]),
    st.sampled_from([2, 256]),
    st.data(),
)
def test_last_letter_cut_is_the_last_one_outside_special_tokens(text, rules, step, data):
    specials = Specials.of([EOT, "<|a|>"], ordinary=list(CHAIN))
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, max(lo, len(text) - 1)))
    matches = [m.span() for m in specials.regex.finditer(text, lo)]
    expected = [
        c
        for c in letter_cuts(rules, text)
        if lo < c <= hi and not any(a < c < b for a, b in matches)
    ]
    with mock.patch.object(boundaries_module, "_BACK_STEP", step):
        got = boundaries_module.last_letter_cut(text, lo, hi, specials, rules)
    assert got == (expected[-1] if expected else -1)
