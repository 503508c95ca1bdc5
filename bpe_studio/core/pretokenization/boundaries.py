"""Where text may be cut without changing its tokens, per pre-tokenization pattern.

What it does: every rule of the form "cut here and pre-tokenize both sides on their own, and
you get exactly the pre-tokens of the whole" lives here, so that file chunking (parallel
counting and encoding), the fast pattern's fallback around astral characters, streaming and
the editor's pieces all rely on the same, tested, statements. The rules depend on the pattern,
so they are obtained per pattern with :func:`cut_rules`: the named patterns (gpt2, cl100k,
o200k) and the open models' (Llama 3's, Qwen2's, recognised by their exact text in every
spelling ``scan_patterns`` knows) have the rules below, and so do DeepSeek-V3's Sequence of
three Splits and StarCoder's digits then GPT-2's regex (:func:`steps_cut_rules`); a
tokenizer.json whose normalizer is NFC or NFKC keeps its pattern's letter and line rules
only between characters the normalizer leaves alone and joins nothing across
(:func:`stable_cuts`). Any other regex has none, so only the places just
before a special token are safe (files are chunked only there, the editor cuts only there)
and a stream must hold its text until a special token or its end.

The rules (each checked per pattern against whole-text pre-tokenization by
``tests/core/test_boundaries.py``):
- *space* (gpt2 only): just before a space, tab or line break that follows a non-space
  character (see :func:`is_space_cut`); GPT-2's fast pattern relies on it;
- *letter*: just after a letter (``\\p{L}``) that a character the pattern cannot continue a
  word with follows. gpt2 and cl100k: any non-letter; their words are runs of letters, and a
  contraction ends in a letter only where the next letter would be needed to go on; Llama 3
  and Qwen2 likewise (cl100k's pattern without its possessive runs, which change no split
  here). o200k: its words also take marks (``\\p{M}``) and a contraction suffix ("don't" is
  one pre-token), so the next character must be neither a letter, a mark nor an apostrophe;
  DeepSeek-V3: its words take marks, so neither a letter nor a mark (its digit and CJK
  Splits never join a letter to a character that is neither);
- *line*: in raw UTF-8 bytes, just after a line break between two ASCII non-space bytes (for
  o200k, the second must not be "/", which its punctuation alternative takes after line
  breaks): the break ends its pre-token, no alternative of the pattern reads past it into the
  next character except to find it is no line break, and the next character starts afresh;
- *lookahead*: the patterns look at most 3 characters past a match (o200k's "'ll" after a
  word), so a pre-token that ends 4 or more characters before the end of the text known so
  far is final; except in o200k, whose words backtrack: "עבריתHTTP" splits after "ת", but
  "עבריתHTTPa" is one pre-token, so the split of a run of letters and marks is known only
  once the run has ended, and nothing in a run still open at the end of the known text is
  final (*open run*). o200k, Llama 3, Qwen2 and DeepSeek-V3 have ``\\s*[\\r\\n]+`` and no
  ``\\s++$``: "\\n   " splits as "\\n" + "   ", "\\n   \\n" is one pre-token, so a run of
  whitespace at the end is open too.
Special tokens come first everywhere (see ``specials``): no cut falls inside one.
What it leaves out: the patterns themselves (``names``), matching special tokens (``specials``).
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass

import regex

from .names import pattern_name
from .scan_patterns import Kind, isolated, kind_of, unwrapped
from .specials import Specials, first_free_start

# A space, tab or line break after a non-space character (see is_space_cut). `re`'s \s is
# str.isspace, a superset of the regex module's, so this never finds a cut that is not one.
_NEXT_SPACE_CUT = re.compile(r"(?<=\S)[ \n\t]")
# A letter that a non-letter (or the end) follows: gpt2's and cl100k's letter cut.
_LETTER_END = regex.compile(r"\p{L}(?!\p{L})")
# o200k's: a letter followed by neither a letter, a mark nor an apostrophe (or by the end).
_O200K_LETTER_END = regex.compile(r"\p{L}(?![\p{L}\p{M}'])")
# The run at the end of a text that o200k may yet split differently, found searching
# backwards: whitespace (its `\s*[\r\n]+` takes a whole run of spaces and tabs once a line
# break follows them: "\n   \t" splits as "\n" + "   \t", "\n   \t\n" as one pre-token), or
# letters and marks (a later lowercase letter regroups a run of capitals and marks).
_O200K_OPEN_RUN = regex.compile(r"(?r)(?:\s+|[\p{L}\p{M}]*)\Z")
# DeepSeek-V3's letter cut: its words are runs of letters and marks.
_WORD_END = regex.compile(r"\p{L}(?![\p{L}\p{M}])")
# The run of whitespace at the end of a text, for Llama 3's, Qwen2's and DeepSeek-V3's
# `\s*[\r\n]+` (as o200k's: a later line break takes the whole run with it).
_SPACE_RUN = regex.compile(r"(?r)\s+\Z")
# ASCII bytes that are not whitespace to the GPT-2 pattern (\x1c-\x1f included).
_SOLID = frozenset(range(0x80)) - frozenset(b"\t\n\x0b\x0c\r ")
# How far past a desired chunk boundary a file is read at a time, looking for a cut.
_SCAN_STEP = 64 * 1024


@dataclass(frozen=True)
class CutRules:
    """The places where one pattern's pre-tokens never cross (see the module docstring).

    A rule that is False (or a lookahead of None) is unknown for the pattern: callers then
    cut only before special tokens.
    """

    name: str  # the pattern the rules were written for ("gpt2"), or "specials only"
    space: bool  # without it a pattern gets no fast path (pattern.py is GPT-2's)
    letter_end: regex.Pattern[str] | None  # matches a letter a cut may follow; None: no rule
    line_next: frozenset[int]  # ASCII bytes a line cut may come before; empty: no rule
    lookahead: int | None  # characters the pattern may read past a match; None: unbounded
    # Finds a run at the end of a text whose split may change as the text grows; None: none.
    open_run: regex.Pattern[str] | None = None

    @property
    def letter(self) -> bool:
        return self.letter_end is not None

    @property
    def line(self) -> bool:
        return bool(self.line_next)

    def stream_limit(self, text: str, specials: Specials) -> int:
        """In a stream of which ``text`` has come in so far, pre-tokens ending at or before
        this offset are final; -1 when no pre-token can be final yet.

        The last ``longest special - 1`` characters might still begin a special token, the
        pattern may read ``lookahead`` characters past a match, and a run still open at the
        end (``open_run``) may yet split differently."""
        if self.lookahead is None:
            return -1
        limit = len(text) - max(specials.longest - 1, 0) - self.lookahead
        if self.open_run is not None:
            m = self.open_run.search(text)
            if m is not None:
                limit = min(limit, m.start() - 1)
        return limit

    def next_letter_cut(self, text: str, pos: int, end: int | None = None) -> int:
        """The first letter cut at or after ``pos`` (an offset just after the letter), or -1;
        ``end``: the text ends there as far as the rule sees (a letter just before it counts
        as followed by the end)."""
        if self.letter_end is None:
            return -1
        m = self.letter_end.search(text, pos, len(text) if end is None else end)
        return m.end() if m else -1

    def line_cut(self, data: bytes) -> int:
        """Index in ``data`` just after the first line break with an ASCII non-space byte
        before it and one of ``line_next`` after it, or -1. subtle: the neighbours must be
        ASCII; a byte of U+00A0 or U+3000 is not a space byte, but the character is a space."""
        after = self.line_next
        if not after:
            return -1
        start = 1
        while True:
            i = data.find(b"\n", start)
            if i < 0 or i + 1 >= len(data):
                return -1
            if data[i - 1] in _SOLID and data[i + 1] in after:
                return i + 1
            start = i + 1


def is_space_cut(text: str, p: int) -> bool:
    """GPT-2's space rule at ``0 < p < len(text)``.

    subtle: a pre-token holds whitespace only at its start (" word") or only whitespace, and
    the pattern decides a pre-token ending in a non-space the same way whether whitespace or
    the end of text follows. So before a space, tab or line break that follows a non-space
    character no pre-token crosses, and either side can be matched on its own."""
    return text[p] in " \n\t" and not text[p - 1].isspace()


def space_cut_before(text: str, i: int, floor: int) -> int:
    """The last space cut before ``i`` (and after ``floor``), else ``floor``."""
    p = i
    while p > floor:
        p = max(text.rfind(" ", floor, p), text.rfind("\n", floor, p), text.rfind("\t", floor, p))
        if p <= floor:
            return floor
        if is_space_cut(text, p):
            return p
    return floor


def space_cut_after(text: str, i: int) -> int:
    """The first space cut after ``i``, else the end of the text."""
    m = _NEXT_SPACE_CUT.search(text, i + 1)
    return m.start() if m else len(text)


GPT2_CUTS = CutRules("gpt2", True, _LETTER_END, _SOLID, lookahead=4)
CL100K_CUTS = CutRules("cl100k", False, _LETTER_END, _SOLID, lookahead=4)
O200K_CUTS = CutRules(
    "o200k", False, _O200K_LETTER_END, _SOLID - {ord("/")}, lookahead=4, open_run=_O200K_OPEN_RUN
)
LLAMA3_CUTS = CutRules("llama3", False, _LETTER_END, _SOLID, lookahead=4, open_run=_SPACE_RUN)
QWEN2_CUTS = CutRules("qwen2", False, _LETTER_END, _SOLID, lookahead=4, open_run=_SPACE_RUN)
DEEPSEEK_V3_CUTS = CutRules(
    "deepseek_v3", False, _WORD_END, _SOLID, lookahead=4, open_run=_SPACE_RUN
)
# StarCoder's Digits(individual_digits) then GPT-2's regex: every digit is a piece alone
# whatever is around it, and each run between digits is split by GPT-2's regex on its own, so
# a cut GPT-2's rules allow inside a run is one here too, and a cut beside a digit always is.
STARCODER_CUTS = CutRules("starcoder", False, _LETTER_END, _SOLID, lookahead=4)
SPECIALS_ONLY = CutRules("specials only", False, None, frozenset(), lookahead=None)
_BY_NAME = {"gpt2": GPT2_CUTS, "cl100k": CL100K_CUTS, "o200k": O200K_CUTS}
# The patterns with rules, by the kernel that runs them (``scan_patterns.kind_of`` reads each
# in every spelling it knows, each tested to split every text alike), and the one Sequence
# of Splits with rules, DeepSeek-V3's.
_BY_KIND = {
    Kind.GPT2: GPT2_CUTS,
    Kind.CL100K: CL100K_CUTS,
    Kind.O200K: O200K_CUTS,
    Kind.LLAMA3: LLAMA3_CUTS,
    Kind.QWEN2: QWEN2_CUTS,
}
_BY_STEPS = {
    (Kind.DIGITS3, Kind.CJK, Kind.DEEPSEEK): DEEPSEEK_V3_CUTS,
    (Kind.DIGIT, Kind.GPT2): STARCODER_CUTS,
}


def cut_rules(pattern: str) -> CutRules:
    """The cut rules of a pre-tokenization pattern (a name or a regex string): a named
    pattern's (its regex given in any spelling ``names.pattern_name`` knows), Llama 3's or
    Qwen2's (in any spelling ``scan_patterns`` knows), or for a custom regex none beyond
    special tokens.

    subtle: a regex wrapped as an Isolated Split (``scan_patterns.isolated``) gets none here,
    only from :func:`steps_cut_rules`: a tokenizer.json's pipeline describes itself by its
    last Split's regex so wrapped, and rules read from that string would not see its
    normalizer, its other steps or a prefix space."""
    named = _BY_NAME.get(pattern_name(pattern))
    if named is not None:
        return named
    return SPECIALS_ONLY if unwrapped(pattern) is not None else steps_cut_rules([pattern])


def steps_cut_rules(patterns: list[str] | tuple[str, ...]) -> CutRules:
    """The cut rules of Isolated Splits run in turn, each on the pieces of the one before
    (a regex's ``findall`` is one such step: a pattern whose matches cover every text leaves
    no gap), each pattern wrapped as ``scan_patterns.isolated`` spells it or bare: one
    pattern's rules (as :func:`cut_rules`), DeepSeek-V3's three Splits' own, StarCoder's
    digits then GPT-2's; else none."""
    kinds = tuple(_step_kind(p) for p in patterns)
    if len(kinds) == 1:
        return _BY_KIND.get(kinds[0], SPECIALS_ONLY)  # type: ignore[arg-type]
    return _BY_STEPS.get(kinds, SPECIALS_ONLY)  # type: ignore[arg-type]


def _step_kind(pattern: str) -> Kind | None:
    """The kernel of ``pattern`` as an Isolated Split's regex: a bare pattern that leaves
    gaps has a kind only wrapped (``kind_of``), and as a step it is."""
    kind = kind_of(pattern)
    return kind_of(isolated(pattern)) if kind is None else kind


def stable_cuts(rules: CutRules, unstable: str, form: str) -> CutRules:
    """``rules`` for a text that a normalizer (``form``: NFC or NFKC) changes before the
    pattern splits it. ``unstable`` is the normalizer's class (a regex character class's
    inside) of the characters before which a text cannot be cut and normalized in two parts:
    marks, characters it changes, characters that compose with what precedes them.

    A letter cut is kept only between a letter and a next character both outside that
    class: each side then normalizes on its own to its part of the whole's normalization,
    the letter stays the last character of the left one, and the next character the first
    of the right one or the start of what it composes into with the marks after it, which
    is a letter, a mark or neither as it is (tests/core/test_boundaries.py checks every
    composition). A line cut's neighbours are ASCII, never in the class. Without a bound on
    how far the normalized text lies from the original one, there is no lookahead rule."""
    if rules.letter_end is None:
        return SPECIALS_ONLY
    letter = regex.compile(f"(?![{unstable}])(?:{rules.letter_end.pattern})(?=[^{unstable}])")
    return CutRules(f"{rules.name} after {form}", False, letter, rules.line_next, None)


def _letter_cut(window: bytes, start: int, end: int, specials: Specials, rules: CutRules) -> int:
    """Index in the raw UTF-8 ``window`` of the first letter cut at an index in ``(start,
    end]`` that no occurrence of a special token runs across, or -1. ``window[:start]`` is
    what comes before (at least the longest special token's length, so one that covers
    ``start`` is seen), and the window runs that far past ``end``. The window may begin and
    end inside a character; a cut is taken only where the window holds the characters after
    it that the pattern may look at, so it is a cut in the file.

    subtle: every occurrence, not the matches: matched from the window's start, special
    tokens that overlap in a chain ("<|a|><|b|>" and "|><|" in "<|a|><|b|><|a|><|b|>") line
    up otherwise than matched from the file's, so a cut outside this window's matches could
    fall inside one of the file's."""
    lo = 0
    while lo < min(len(window), 3) and window[lo] & 0xC0 == 0x80:
        lo += 1  # subtle: continuation bytes of a character that began before the window
    # subtle: "surrogateescape" maps each byte of a cut-off or invalid sequence to a lone
    # surrogate (never a letter) and back, so offsets in the text give exact byte offsets.
    text = window[lo:].decode("utf-8", "surrogateescape")
    limit = len(text) - 4 - (rules.lookahead or 0)
    tokens = specials.every
    pos = 0
    while (cut := rules.next_letter_cut(text, pos)) >= 0 and cut < limit:
        at = lo + len(text[:cut].encode("utf-8", "surrogateescape"))
        if at > end:
            return -1
        if at > start and not any(
            0 <= text.find(t, max(cut - len(t) + 1, 0), cut + len(t) - 1) < cut for t in tokens
        ):
            return at
        pos = cut
    return -1


def chunk_boundaries(
    path: str | os.PathLike[str],
    target_chunk: int,
    special_tokens: Specials,
    rules: CutRules = GPT2_CUTS,
) -> list[int]:
    """Byte offsets ``[0, b1, ..., size]`` splitting ``path`` into chunks of about
    ``target_chunk`` bytes, each counted (or encoded) exactly as it would be in the whole file.

    An inner boundary is the start of a special token found near the desired offset or, when
    none is near, a line cut (not used when a special token itself contains a line break, as a
    cut there could split one), or, in a stretch without either (a file with no line breaks),
    a letter cut outside special tokens. A chunk grows until one is found; for a custom
    regex (no rules) only special tokens cut.
    """
    size = os.path.getsize(path)
    specials, every = special_tokens.encoded(), special_tokens.encoded(every=True)
    lines = rules.line and not any(b"\n" in s for s in every)
    # Overlap reads by the longest special token so one split across two reads is still seen.
    overlap = max((len(s) for s in every), default=0)
    bounds = [0]
    with open(path, "rb") as f:
        pos = target_chunk
        while pos < size:
            found = -1
            scan = pos
            while scan < size and found < 0:
                back = min(scan, overlap)
                f.seek(scan - back)
                window = f.read(back + _SCAN_STEP + overlap)
                hit = first_free_start(window, back, back + _SCAN_STEP, specials, every)
                if hit >= 0:
                    found = scan - back + hit
                elif lines:
                    cut = rules.line_cut(window[back:])
                    if 0 < cut <= _SCAN_STEP:
                        found = scan + cut
                if found < 0 and rules.letter:
                    cut = _letter_cut(window, back, back + _SCAN_STEP, special_tokens, rules)
                    if cut >= 0:
                        found = scan - back + cut
                scan += _SCAN_STEP
            if found < 0 or found >= size:
                break
            if found > bounds[-1]:
                bounds.append(found)
            pos = found + target_chunk
    bounds.append(size)
    return bounds


def text_cuts(text: str, specials: Specials, rules: CutRules, piece: int) -> list[int]:
    """Offsets ``[0, ..., len(text)]`` about ``piece`` characters apart (or more) where
    cutting ``text`` leaves every token as it is: letter cuts outside special tokens, and the
    starts of special tokens."""
    n = len(text)
    cuts = [0]
    # Every match, ordinary tokens' too (``Specials.ordinary``): a cut inside one would let
    # a token it hides be found. Text is cut before the others only.
    matched = specials.spans(text, every=True)
    every = [s for s, _ in matched]
    starts = [s for s, e in matched if text[s:e] not in specials.ordinary]
    pos = piece
    while pos < n:
        cut = rules.next_letter_cut(text, pos)
        i = bisect.bisect_left(starts, pos)
        if i < len(starts) and (cut < 0 or starts[i] < cut):
            cut = starts[i]  # a special token begins first
        elif cut >= 0:
            # No special token begins in [pos, cut): one that covers the cut began earlier.
            j = bisect.bisect_left(every, cut) - 1
            if j >= 0 and matched[j][0] < cut < matched[j][1]:
                pos = matched[j][1]
                continue
        if cut < 0 or cut >= n:
            break
        cuts.append(cut)
        pos = cut + piece
    cuts.append(n)
    return cuts


# How far back from the end of a stream's buffer a letter cut is looked for first (each
# further look goes back sixteen times as far): in text, one is seldom farther.
_BACK_STEP = 256


def last_letter_cut(text: str, lo: int, hi: int, specials: Specials, rules: CutRules) -> int:
    """The last letter cut in ``(lo, hi]`` that no match of a special token (ordinary ones
    included), matched from ``lo``, runs across; -1 when there is none.

    The caller vouches that the whole text's matching of special tokens begins at ``lo``
    too (a cut, or a special token's start), that the character after the cut is known
    (``hi < len(text)``), and that a special token running across a cut would be complete
    in ``text`` (``hi <= len(text) - (specials.longest - 1)``). Looked for backwards from
    ``hi``, as a stream wants the last one."""
    if rules.letter_end is None or hi <= lo:
        return -1
    starts: list[int] = []
    stops: list[int] = []
    if specials.regex is not None:
        for m in specials.regex.finditer(text, lo):
            if m.start() >= hi:
                break
            starts.append(m.start())
            stops.append(m.end())
    top, step = hi, _BACK_STEP
    while top > lo:
        bottom = max(lo, top - step)
        best = -1
        # The rule sees the text up to top + 1: the character after a cut at top.
        for m in rules.letter_end.finditer(text, bottom, top + 1):
            cut = m.end()
            i = bisect.bisect_left(starts, cut) - 1
            if lo < cut <= top and (i < 0 or stops[i] <= cut):
                best = cut
        if best >= 0:
            return best
        top, step = bottom, step * 16
    return -1
