"""Which regexes have a compiled scanner: every spelling of each pattern the kernels implement.

What it does: :class:`Kind` names the patterns the compiled scanners implement (one kernel
each: ``scan_kernels``), :func:`kind_of` reads a regex string (in the ``regex`` module's
syntax, as the core holds patterns) as one of them, or None. A pattern is recognised by its
exact text, in each spelling the core meets: as published (tiktoken's, the models'
``tokenizer.json``), as ``formats.hf.onig.translate`` turns a file's Oniguruma pattern into
``regex`` syntax, and wrapped as an Isolated Split keeps the gaps between matches
(:func:`isolated`; ``formats.hf`` writes one so). A pattern that leaves some characters to
the gaps (DeepSeek's, the digit splits) is recognised only so wrapped: alone, the regex path
raises its "does not match" error, which a scanner would not. Anything else keeps the regex
path. ``tests/core/test_scanners.py`` checks that the published patterns, translated,
are spellings listed here, and every scanner against every spelling of its pattern.
What it leaves out: the kernels (``scan_kernels``), the Scanner API (``scanner``).
"""

from __future__ import annotations

from enum import IntEnum

from .names import GPT2_PATTERN, PATTERNS, R50K_PATTERN, pattern_name


class Kind(IntEnum):
    """A pattern with a compiled kernel (the values are the kernels' own numbers)."""

    GPT2 = 0  # GPT-2 (r50k, p50k); ByteLevel(use_regex=True)
    CL100K = 1  # GPT-4, GPT-3.5
    O200K = 2  # GPT-4o, gpt-oss
    LLAMA3 = 3  # Llama 3, 3.1, 3.2 (cl100k's, without possessive runs, \s*[\r\n]+)
    QWEN2 = 4  # Qwen2, Qwen2.5, Qwen3 (Llama 3's with single digits)
    DIGITS3 = 5  # DeepSeek-V3's first Split: runs of up to three digits
    CJK = 6  # DeepSeek-V3's second Split: runs of Han, Hiragana and Katakana
    DEEPSEEK = 7  # DeepSeek-V3's third Split
    DIGIT = 8  # Digits(individual_digits=True): each digit alone (StarCoder)


# The Sequences of Isolated Splits with a compiled scanner (the kernels compile one loop per
# combination): DeepSeek-V3's pre-tokenizer, and StarCoder's Digits then ByteLevel's regex.
SEQUENCES = {
    (Kind.DIGITS3, Kind.CJK, Kind.DEEPSEEK): "deepseek_v3",
    (Kind.DIGIT, Kind.GPT2): "starcoder",
}

# Patterns whose matches cover every text: their regex alone is a scanner's pattern too.
TOTAL = frozenset({Kind.GPT2, Kind.CL100K, Kind.O200K, Kind.LLAMA3, Kind.QWEN2})

# The models' patterns as their tokenizer.json files carry them (the JSON string's value).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
DEEPSEEK_V3_PATTERNS = (
    r"\p{N}{1,3}",
    "[一-龥\u3040-ゟ゠-ヿ]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
    r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
)
DIGIT_PATTERN = r"\p{N}"
# cl100k's pattern as ``formats.hf.tokenizer_json`` writes it for Oniguruma (\p{N}{1,3} and \z).
CL100K_HF_PATTERN = PATTERNS["cl100k"].replace(r"\p{N}{1,3}+", r"\p{N}{1,3}").replace("$", r"\z")

_N3 = r"\p{N}{1,3}"
_N3_TRANSLATED = r"(?:\p{N}){1,3}"  # how onig.translate spells a quantified \p{..}

SPELLINGS: dict[str, Kind] = {
    PATTERNS["gpt2"]: Kind.GPT2,
    R50K_PATTERN: Kind.GPT2,
    PATTERNS["cl100k"]: Kind.CL100K,
    CL100K_HF_PATTERN: Kind.CL100K,
    CL100K_HF_PATTERN.replace(_N3, _N3_TRANSLATED).replace(r"\z", r"\Z"): Kind.CL100K,
    PATTERNS["o200k"]: Kind.O200K,
    PATTERNS["o200k"].replace(_N3, _N3_TRANSLATED): Kind.O200K,
    LLAMA3_PATTERN: Kind.LLAMA3,
    LLAMA3_PATTERN.replace(_N3, _N3_TRANSLATED): Kind.LLAMA3,
    QWEN2_PATTERN: Kind.QWEN2,
    _N3: Kind.DIGITS3,
    _N3_TRANSLATED: Kind.DIGITS3,
    DEEPSEEK_V3_PATTERNS[1]: Kind.CJK,
    # The same class as a file may escape it (the JSON's "\\u3040"), and as translated.
    r"[一-龥\u3040-ゟ゠-ヿ]+": Kind.CJK,
    r"[一-龥\U00003040-ゟ゠-ヿ]+": Kind.CJK,
    DEEPSEEK_V3_PATTERNS[2]: Kind.DEEPSEEK,
    DEEPSEEK_V3_PATTERNS[2].replace("]^_", r"]\^_"): Kind.DEEPSEEK,
    DIGIT_PATTERN: Kind.DIGIT,
}
assert GPT2_PATTERN in SPELLINGS

_HEAD, _MIDDLE, _TAIL = "(?:", ")|(?:(?!(?:", "))(?s:.))+"


def isolated(pattern: str) -> str:
    """``pattern`` as an Isolated Split applies it: its matches, and each gap between them as
    one piece (the spelling ``formats.hf`` gives a Split's regex)."""
    return f"{_HEAD}{pattern}{_MIDDLE}{pattern}{_TAIL}"


def unwrapped(pattern: str) -> str | None:
    """The regex inside :func:`isolated`'s spelling, or None when ``pattern`` is not one."""
    inner = len(pattern) - len(_HEAD) - len(_MIDDLE) - len(_TAIL)
    if inner <= 0 or inner % 2 or not pattern.endswith(_TAIL):
        return None
    candidate = pattern[len(_HEAD) : len(_HEAD) + inner // 2]
    return candidate if isolated(candidate) == pattern else None


def kind_of(pattern: str) -> Kind | None:
    """The compiled kernel that gives exactly ``regex.findall(pattern, text)`` for every text
    (a pattern name, in any spelling ``names.pattern_name`` reads, stands for its regex), or
    None.

    >>> kind_of("o200k"), kind_of(isolated(r"\\p{N}")), kind_of(r"\\p{N}")
    (<Kind.O200K: 2>, <Kind.DIGIT: 8>, None)
    """
    kind = SPELLINGS.get(PATTERNS.get(pattern_name(pattern), pattern))
    if kind is not None:
        return kind if kind in TOTAL else None
    inner = unwrapped(pattern)
    return None if inner is None else SPELLINGS.get(inner)
