"""A ``tokenizer.json``'s normalizers and pre-tokenizers cut text as ``tokenizers`` does.

Oracle: ``tokenizers`` itself (``normalize_str``, ``pre_tokenize_str``) on the same components,
on the fixtures' English, Chinese, code and web text and on generated text of assigned
characters; Oniguruma's readings of single constructs are checked by ``tokenizers``' own Split.
"""

from __future__ import annotations

import unicodedata

import pytest
import regex
from core_helpers import SLICES, read_fixture
from hf_shapes import FAMILIES, components, hf_pretokens
from hypothesis import given
from reference_encoder import ASSIGNED_TEXTS
from text_strategies import HYPO, PIECES
from tokenizers import Regex
from tokenizers import normalizers as nz
from tokenizers import pre_tokenizers as pt

from bpe_studio.core.formats.hf.components import read_components
from bpe_studio.core.formats.hf.normalizers import Normalized, normalizer_steps
from bpe_studio.core.formats.hf.onig import find_spans, translate
from bpe_studio.core.pretokenization.pretokenizer import pretokenizer

SAMPLES = [read_fixture(SLICES[k])[:6_000] for k in ("english", "chinese", "code", "mixed_web")]
SPECIMENS = [
    *PIECES,
    "Hello world 12345 don't\n\n  x  ",
    "e\u0301\u0323a ﬁ Ａ１ ㌀ Ⅻ",
    "a\nb\r\nc  \n\n",
    "ΑΣ İ ß ſ K",
    "(x|y) [a] «b» 1.5, 2!? …。，、।۔،",
    "  leading and trailing  ",
    "hey HEY queRY QUERY qUEry 'S 'll 'LL abc (d) |x| [e]",
    "apL pLL pN Np PL 12 pl",
    "ı İ i I ıİiI Iı SS ß",
    "xaab ccd abba 1122 zz",
]


def _ours(normalizer, pre_tokenizer, name: str = "tokenizer.json"):
    return read_components(components(normalizer, pre_tokenizer), name, {})


def _pipeline_pretokens(parts, text: str) -> list[str]:
    if parts.pipeline is not None and parts.pipeline.needed:
        return parts.pipeline.findall(text)
    return pretokenizer(parts.pattern).findall(text)


SHAPES = dict(FAMILIES)
for behavior in ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"):
    for invert in (False, True):
        SHAPES[f"split_{behavior}_{invert}"] = (
            None,
            pt.Sequence(
                [
                    pt.Split(Regex(r"\s+|\p{N}"), behavior, invert),
                    pt.ByteLevel(False, use_regex=False),
                ]
            ),
        )
        SHAPES[f"split_string_{behavior}_{invert}"] = (
            None,
            pt.Sequence([pt.Split("ab", behavior, invert), pt.ByteLevel(False, use_regex=False)]),
        )
SHAPES |= {
    "digits_contiguous": (None, pt.Sequence([pt.Digits(False), pt.ByteLevel(True)])),
    "whitespace": (None, pt.Sequence([pt.Whitespace(), pt.ByteLevel(True, use_regex=False)])),
    "whitespace_split": (None, pt.Sequence([pt.WhitespaceSplit(), pt.ByteLevel(False)])),
    "byte_level_prefix": (None, pt.ByteLevel(add_prefix_space=True)),
    "byte_level_prefix_no_regex": (None, pt.ByteLevel(add_prefix_space=True, use_regex=False)),
    "anchors_and_intervals": (
        None,
        pt.Sequence(
            [
                pt.Split(
                    Regex(r"^\s*\w|\w$|x\z|y\Z|a{0,2}+b|(?m)c.d|\h+|[[:alpha:]&&[^a-f]]+"),
                    "isolated",
                ),
                pt.ByteLevel(False, use_regex=False),
            ]
        ),  # fmt: skip
    ),
    "inline_flags": (
        None,
        pt.Sequence(
            [
                pt.Split(
                    Regex(r"(?x: h e y )|q(?i)ue(?-i)ry|(?i:'S|'LL)|[^(\s|[a-c[^d-z]])]"),
                    "isolated",
                ),
                pt.ByteLevel(False, use_regex=False),
            ]
        ),
    ),
    # Found by the review: the regex module also folds "ı" with "I" and "İ" with "i", spelt
    # as escapes too; Oniguruma matches "ı" alone, and "i" with "I" only.
    "dotless_and_dotted_i": (
        None,
        pt.Sequence(
            [
                pt.Split(Regex(r"(?i:ı|\x69x|\u0131y|\x{131}z|\ıw)+|\s+|\S"), "isolated"),
                pt.ByteLevel(False, use_regex=False),
            ]
        ),
    ),
    # Found by the review: an Isolated Split's regex spelt twice in one regex (``isolated``)
    # made the copy's backreference refer to the first copy's group ("xaab ccd" was one piece).
    "backreference_isolated": (
        None,
        pt.Sequence(
            [pt.Split(Regex(r"(\p{L})\1"), "isolated"), pt.ByteLevel(False, use_regex=False)]
        ),
    ),
    "backreference_isolated_then_digits": (
        None,
        pt.Sequence(
            [
                pt.Split(Regex(r"(\p{L})\1|\s"), "isolated"),
                pt.Digits(True),
                pt.ByteLevel(False, use_regex=False),
            ]
        ),
    ),
    "empty_matches": (None, pt.Sequence([pt.Split(Regex(r"a*"), "removed"), pt.ByteLevel(False)])),
    # Found by the patterns audit: Oniguruma reads "\\pL" as the text "pL", this project read
    # it as the property.
    "one_letter_property": (
        None,
        pt.Sequence(
            [
                pt.Split(Regex(r"\pL+|[\pN]|\PL|\p{L}+"), "isolated"),
                pt.ByteLevel(False, use_regex=False),
            ]
        ),
    ),
    "nfkc_lower_strip": (
        nz.Sequence([nz.NFKC(), nz.Lowercase(), nz.Strip()]),
        pt.Sequence([pt.Whitespace(), pt.ByteLevel(True, use_regex=False)]),
    ),
    "nfd_replace_prepend": (
        nz.Sequence(
            [nz.NFD(), nz.Replace(Regex(r"\s+"), " "), nz.Replace("a", "AA"), nz.Prepend("▁")]
        ),
        pt.Sequence([pt.WhitespaceSplit(), pt.ByteLevel(False)]),
    ),
    "nfkd_strip_left": (nz.Sequence([nz.NFKD(), nz.Strip(True, False)]), pt.ByteLevel(True)),
    # A Split's regex may capture: its pieces are still the whole matches. NFC makes the
    # Isolated one go through the pipeline's own steps.
    "captures_isolated_nfc": (
        nz.NFC(),
        pt.Sequence(
            [
                pt.Split(Regex(r"(\p{L})+|(?<digits>\p{N}+)"), "isolated"),
                pt.ByteLevel(False, use_regex=False),
            ]
        ),
    ),
    "captures_kept": (
        None,
        pt.Sequence(
            [
                pt.Split(Regex(r"(\p{L})+|\p{N}+| ?[^\s\p{L}\p{N}]+"), "removed", invert=True),
                pt.ByteLevel(False, use_regex=False),
            ]
        ),
    ),
}
# The shapes whose pre-tokens keep offsets into the text (no normalizer, no prefix space).
UNCHANGED_TEXT = [
    "split_removed_True",
    "split_isolated_False",
    "split_contiguous_True",
    "captures_kept",
    "whitespace_split",
]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_pretokens_equal_tokenizers_on_fixtures(shape):
    normalizer, pre_tokenizer = SHAPES[shape]
    parts = _ours(normalizer, pre_tokenizer)
    for text in SAMPLES + SPECIMENS:
        assert _pipeline_pretokens(parts, text) == hf_pretokens(normalizer, pre_tokenizer, text), (
            repr(text[:60])
        )


@pytest.mark.parametrize("shape", list(SHAPES))
@HYPO
@given(text=ASSIGNED_TEXTS)
def test_pretokens_equal_tokenizers_on_generated_text(shape, text):
    normalizer, pre_tokenizer = SHAPES[shape]
    parts = _ours(normalizer, pre_tokenizer)
    assert _pipeline_pretokens(parts, text) == hf_pretokens(normalizer, pre_tokenizer, text)


@pytest.mark.parametrize("shape", UNCHANGED_TEXT)
def test_pipeline_spans_equal_tokenizers_offsets(shape):
    """Where each piece is in the text, as the editor's spans need it (a Split that keeps
    only its matches finds them in one pass; the others cut piece by piece)."""
    normalizer, pre_tokenizer = SHAPES[shape]
    parts = _ours(normalizer, pre_tokenizer)
    assert parts.pipeline is not None
    stage = parts.pipeline.pretokenizer()
    for text in SAMPLES + SPECIMENS:
        theirs = [offsets for _, offsets in pre_tokenizer.pre_tokenize_str(text)]
        assert stage.spans(text) == theirs, (shape, text[:60])


def test_only_one_regex_split_takes_the_fast_path():
    # Llama 3's and BLOOM's files split with one regex: the tokenizer's own pre-tokenizer.
    assert not _ours(*FAMILIES["llama3"]).pipeline.needed
    assert not _ours(*FAMILIES["bloom"]).pipeline.needed
    assert _ours(*FAMILIES["gpt2"]).pattern == "gpt2"
    for name in ("qwen2", "deepseek_v3", "starcoder"):
        assert _ours(*FAMILIES[name]).pipeline.needed, name


def test_bloom_pattern_is_one_class_as_oniguruma_reads_it():
    # Oniguruma reads "[^(\s|[.,])]" as one class with a nested one; the regex module would
    # end the class at the first "]" and find an unbalanced parenthesis.
    assert translate(r" ?[^(\s|[.,!?])]+").pattern == r" ?[^(\s|).,!?]+"


def test_possessive_interval_repeats_as_oniguruma_reads_it():
    # Ruby syntax: "{1,3}+" is the interval repeated, so digits are one run, not threes.
    parts = _ours(*FAMILIES["cl100k_in_json"])
    assert _pipeline_pretokens(parts, "1234567 x") == ["1234567", " x"]


# Patterns with inline flags as Oniguruma reads them: under "x" ASCII white space and "#"
# comments are no part of the pattern (before a quantifier too), other white space is;
# flag groups one after another each apply. The oracle: tokenizers' own Split.
FLAGGED = [
    "(?x) # a word, kept with the 's after it\n \\w+[\\ \\t]*'s | \\w | \\s | .",
    "(?x)a +|.",
    "(?x)a\u3000b|.",
    "(?x)[\u3000 ]b|.",
    "(?x: a b )|(?-x: a b )|.",
    "(?i)(?x) A b|.",
    "(?x)(?i) A # a comment\n b|.",
    "(?i)(?m)A.b|.",
    "(?x)a\vb|.",
    "(?x)a+ ?|.",
    "a{2}?|.",
    "b{2}?c|.",
    "a{2}??|.",
    "a{2}?+|.",
    "a(?#c){2}|.",
    "(?x)a (?#c) {2}|.",
]
_FLAGGED_TEXT = "ab AB a  b a\u3000b \u3000b #c 1's x's\n\tab a\nb ab's Ab aab a\vb aaaaa bc bbc"


@pytest.mark.parametrize("pattern", FLAGGED)
def test_inline_flags_split_as_oniguruma_splits(pattern):
    """A review: a comment under "(?x)" was read as text to match ("#", "a", ...), so the
    pattern's first alternative never matched, where tokenizers leaves the comment out; of
    two flag groups in a row ("(?i)(?x)") the first was lost. The next review: a vertical
    tab is no white space to Oniguruma's "x"; "a+ ?" is "(a+)?"; in Ruby syntax "{n}?" is
    "{n}" made optional, not lazy ("a{2}?" read lazily split "aaaaa" otherwise); a
    quantifier after a comment group repeats the atom before it ("a(?#c){2}")."""
    assert isolated_spans(pattern, _FLAGGED_TEXT) == oniguruma_spans(pattern, _FLAGGED_TEXT)


@pytest.mark.parametrize("pattern", [r"a\²²|.", r"[\²²]+|.", r"(a)\²|.", r"\٣\①|."])
def test_escaped_digits_beyond_ascii_are_the_characters_themselves(pattern):
    r""" "²", "٣" and "①" pass str.isdigit(): read as a group's number, "a\²²" failed an
    assertion where Oniguruma reads each escape as the character itself."""
    text = "a²² (a)² ٣① a² ²"
    assert isolated_spans(pattern, text) == oniguruma_spans(pattern, text)


def oniguruma_spans(pattern: str, text: str) -> list[tuple[int, int]]:
    """The pieces of an Isolated Split of ``pattern``, as ``tokenizers`` cuts ``text``."""
    split = pt.Split(Regex(pattern), "isolated")
    return [span for _, span in split.pre_tokenize_str(text)]


def isolated_spans(pattern: str, text: str) -> list[tuple[int, int]]:
    """The same pieces from our translation of ``pattern``: its matches and the gaps."""
    compiled = regex.compile(translate(pattern).pattern)
    ours, end = [], 0
    for start, stop in find_spans(compiled, text):
        ours += [(end, start)] if start > end else []
        ours += [(start, stop)] if stop > start else []
        end = stop
    ours += [(end, len(text))] if end < len(text) else []
    return ours


REFUSED_PATTERNS = {
    r"\bword": r"\b",
    r"a\Gb": r"\G",
    r"ab\Kc": r"\K",
    r"(?i:ss)": "'ss'",
    r"(?i:[a-z])": "the class '[a-z]' inside a case-insensitive group",
    r"(?i:[ı])": "the class '[ı]' inside a case-insensitive group",
    r"(?i:[İ])": "the class '[İ]' inside a case-insensitive group",
    r"(?i:s\x73)": "'ss'",
    # Found by the review: the refusal showed the class cut at ":]", '[x-[:alpha:]'.
    r"[x-[:alpha:]]": "in the class '[x-[:alpha:]]'",
    # The fuzz: the bracket was shown as its first ten characters, '[:punct:]a'.
    r"[[:punct:]a]": "the POSIX bracket '[:punct:]' ",
    r"[[:nope]": "the POSIX bracket '[:nope]' ",
    r"[[:al pha]] x (?:a|b):]": "the POSIX bracket '[:al pha]' ",  # not to a later ":]"
    # Found by the second review: Oniguruma reads "\U" as the letter U, and "\151" as a
    # group or as octal by how many groups there are; the regex module otherwise.
    r"\U00000069": r"\U",
    r"(?i:\151)": r"\151",
    r"[\151]": r"\151",
    r"(a|b": "unbalanced parenthesis",
    r"[ab": "unclosed character class",
    r"(?~abc)": "the group",
    # Found by the review's fuzz: an unclosed comment group started the pattern over, forever.
    r"a(?#c": "unclosed comment group",
}


@pytest.mark.parametrize("pattern", list(REFUSED_PATTERNS))
def test_patterns_without_an_exact_reading_are_refused_naming_the_component(pattern):
    pre = pt.Sequence([pt.ByteLevel(False, use_regex=False)])
    obj = components(None, pre)
    split = {
        "type": "Split",
        "pattern": {"Regex": pattern},
        "behavior": "Isolated",
        "invert": False,
    }
    obj["pre_tokenizer"]["pretokenizers"].insert(0, split)
    with pytest.raises(ValueError) as info:
        read_components(obj, "my/tokenizer.json", {})
    message = str(info.value)
    assert message.startswith("my/tokenizer.json: pre_tokenizer.pretokenizers[0]: pattern")
    assert REFUSED_PATTERNS[pattern] in message


REFUSED_COMPONENTS = {
    "metaspace": (None, pt.Metaspace(), "pre_tokenizer: 'Metaspace' is not byte-level BPE"),
    "metaspace_in_sequence": (
        None,
        pt.Sequence([pt.Digits(), pt.Metaspace()]),
        "pre_tokenizer.pretokenizers[1]: 'Metaspace' is not byte-level BPE",
    ),
    "not_last": (
        None,
        pt.Sequence([pt.ByteLevel(False), pt.Digits()]),
        "pre_tokenizer.pretokenizers[0]: ByteLevel must come last",
    ),
    "no_byte_level": (None, pt.Digits(), "pre_tokenizer: does not end in ByteLevel"),
    "punctuation": (
        None,
        pt.Sequence([pt.Punctuation(), pt.ByteLevel()]),
        "Punctuation's character tables",
    ),
    "bert_normalizer": (
        nz.BertNormalizer(),
        pt.ByteLevel(),
        "normalizer: 'BertNormalizer' is not supported",
    ),
    "strip_accents": (
        nz.Sequence([nz.NFD(), nz.StripAccents()]),
        pt.ByteLevel(),
        "normalizer.normalizers[1]: 'StripAccents' is not supported",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED_COMPONENTS))
def test_other_components_are_refused_naming_them(case):
    normalizer, pre, expected = REFUSED_COMPONENTS[case]
    with pytest.raises(ValueError) as info:
        _ours(normalizer, pre, "dir/tokenizer.json")
    assert str(info.value).startswith("dir/tokenizer.json: ") and expected in str(info.value)


# Marks of combining classes 1, 10, 129, 202, 220, 230 and 240, in every Unicode version.
BESIDE = ("\u0334", "\u05b0", "\u0f71", "\u0327", "\u0323", "\u0308", "\u0345")


def _with_a_part(ch: str) -> bool:
    """Whether this Python gives ``ch`` a part in normalization: a decomposition, a combining
    class, or a place in a two-character canonical decomposition."""
    return bool(unicodedata.decomposition(ch) or unicodedata.combining(ch))


def _parts_of_compositions() -> tuple[set[str], list[str]]:
    parts, pairs = set(), []
    for c in range(0x110000):
        mapping = unicodedata.decomposition(chr(c)) if not 0xD800 <= c <= 0xDFFF else ""
        if mapping and not mapping.startswith("<") and len(mapping.split()) == 2:
            pair = "".join(chr(int(x, 16)) for x in mapping.split())
            parts.update(pair)
            pairs.append(pair)
    return parts, pairs


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_every_character_normalizes_as_tokenizers_does(form):
    # Each character this Python gives a part in normalization: alone, on either side of
    # marks of seven combining classes, and each canonical pair with a mark after it, as
    # tokenizers normalizes them (its tables are an older Unicode's: characters it does not
    # know must stay where they are, and compose with nothing).
    parts, pairs = _parts_of_compositions()
    chars = [
        chr(c)
        for c in range(0x110000)
        if not 0xD800 <= c <= 0xDFFF and (_with_a_part(chr(c)) or chr(c) in parts)
    ]
    probes = [f"a{ch}" for ch in chars]
    probes += [f"a{ch}{m}" for ch in chars for m in BESIDE]
    probes += [f"a{m}{ch}" for ch in chars for m in BESIDE]
    probes += pairs + [f"{pair}\u0301" for pair in pairs] + [f"{pair}\u0323" for pair in pairs]
    text = "\n".join(probes)
    theirs = getattr(nz, form)().normalize_str(text).split("\n")
    ours = Normalized(text).apply(normalizer_steps({"type": form})).text.split("\n")
    assert len(ours) == len(theirs) == len(probes)
    wrong = [(p, o, t) for p, o, t in zip(probes, ours, theirs) if o != t]
    assert not wrong, [tuple(" ".join(f"{ord(c):04X}" for c in x) for x in w) for w in wrong[:5]]


def test_every_character_lowercases_as_tokenizers_does():
    # A Reach audit: 55 capital letters of Unicode 16 and 17 (U+A7CB, Garay's) were left by
    # Python 3.11's str.lower and lowercased by tokenizers' Rust, so a Lowercase file's ids
    # differed for text holding one. Every code point, alone, as tokenizers lowercases it.
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and c != 0x0A]
    text = "\n".join(chars)
    theirs = nz.Lowercase().normalize_str(text).split("\n")
    ours = Normalized(text).apply(normalizer_steps({"type": "Lowercase"})).text.split("\n")
    assert len(ours) == len(theirs) == len(chars)
    wrong = [f"U+{ord(c):04X}" for c, o, t in zip(chars, ours, theirs) if o != t]
    assert not wrong, (len(wrong), wrong[:8])


def test_an_older_tokenizers_lowercase_is_followed(monkeypatch):
    # The review: tokenizers 0.21 (which the dependencies allow) leaves U+A7CB as it is, its
    # Rust older than Unicode 16; a table applied whatever tokenizers is installed gave those
    # users other ids. The installed tokenizers is asked.
    from bpe_studio.core.formats.hf import normalizers as module

    class Unicode15Lowercase:
        def normalize_str(self, text: str) -> str:
            return text if text in module._NEWER_CAPITALS else text.lower()

    monkeypatch.setattr(nz, "Lowercase", Unicode15Lowercase)
    module._newer_lowercase.cache_clear()
    try:
        steps = normalizer_steps({"type": "Lowercase"})
        assert Normalized("A\ua7cbB").apply(steps).text == "a\ua7cbb"
    finally:
        module._newer_lowercase.cache_clear()
    assert Normalized("A\ua7cbB").apply(normalizer_steps({"type": "Lowercase"})).text == (
        nz.Lowercase().normalize_str("A\ua7cbB")
    )


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
@pytest.mark.parametrize(
    "text",
    [
        "\u1df7\u0f74",  # a mark of class 228 here (Unicode 10), unknown there, and one of 132
        "x\u0301\u1df7",
        "x\u1df7\u0316",
        "a\u0898\u0316",  # class 230 here (Unicode 14)
        "\U00011935\U00011930",  # composed into U+11938 here (Unicode 13), not there
        *(
            f"e\u0301{c}\u0301a\u0308 \ufb01{c}"
            for c in ("\u0c3c", "\U00010781", "\u32ff", "\U0001fbf0")
        ),
    ],
)
def test_unicode_forms_around_characters_the_old_tables_lack(text, form):
    steps = normalizer_steps({"type": form})
    assert Normalized(text).apply(steps).text == getattr(nz, form)().normalize_str(text)


def test_normalized_characters_point_into_the_original_text():
    steps = normalizer_steps(
        {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]}
    )
    n = Normalized("Ae\u0301ﬁ x", 100).apply(steps)
    assert n.text == "aéfi x"
    # "é" came from "e" + U+0301, "f" and "i" from the ligature.
    assert [n.origin(i, i + 1) for i in range(len(n.text))] == [
        (100, 101), (101, 103), (103, 104), (103, 104), (104, 105), (105, 106),
    ]  # fmt: skip


def test_nfc_of_nfc_text_is_the_identity():
    steps = normalizer_steps({"type": "NFC"})
    text = read_fixture(SLICES["chinese"])[:2000]
    n = Normalized(text).apply(steps)
    assert n.text == text and n.starts is None
