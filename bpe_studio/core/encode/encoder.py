"""The encoding engine under ``Tokenizer``: text to ids, on the compiled path or the Python one.

What it does: :class:`Encoder` holds what turns one tokenizer's text into ids: its
pre-tokenizer (and a ``tokenizer.json``'s pipeline), special tokens, the merger, and, where
one exists, a compiled scanner (``pretokenization.scanner``). A text takes the compiled path
when there is a scanner for its pre-tokenizer (``pipeline_scan`` for a pipeline), the kernels
are loaded (``kernel_start``; a text of ``PREPARE_CHARS`` or more loads them, as does the
first after the Python path has cost as much as the load), it is not a short line of mostly
one-byte characters (``SHORT_TEXT``) and a lane of the merger's caches is free: its code points
are cut into pieces by the scanner, between the special tokens, and the pieces merged in
compiled code (``compiled``) without a Python object per piece. Otherwise it takes the
Python path, the pre-tokenizer's ``findall`` and the :class:`~.merger.Merger`. Both give the
same ids (``tests/core/test_compiled_encode.py``). ``streaming`` and ``token_spans`` work
through this object, never through the tokenizer. What it leaves out: the tokenizer's public
methods and checks (``tokenizer``), the kernels.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from collections.abc import Set as AbstractSet
from contextlib import nullcontext
from functools import cached_property
from itertools import chain
from typing import TYPE_CHECKING, Literal

import numpy as np

from ..io.gc_pause import gc_paused
from ..pretokenization import re_split
from ..pretokenization.pretokenizer import (
    Pretokenizer,
    UncoveredText,
    findall_for,
    first_uncovered,
)
from ..pretokenization.specials import Specials, matcher, tiktoken_allowed
from ..text.surrogates import replace_surrogates
from .merging import kernel_start
from .merging.compiled import CompiledMerger, Items
from .merging.merger import Merger
from .merging.packed import NUMPY_DTYPE

if TYPE_CHECKING:
    from ..formats.hf.pipeline import HfPipeline
    from ..pretokenization.boundaries import CutRules
    from ..pretokenization.scanner import Scanner

# Encoding a text this long (in characters) builds the fast split patterns first, however
# short the stretches between its special tokens.
BULK_TEXT = 200_000
# A shorter text of several stretches between special tokens (a file chunk of many documents)
# is split with a pattern chosen once for the whole text from this many characters on.
SPLIT_WHOLE_MIN = 1 << 14
# A text of this many characters loads the compiled kernels if they are not loaded yet (about
# half a second from numba's cache, the first time on a machine a compile of a minute or so):
# shorter ones take the Python path meanwhile (docs/encoding.md, "When the compiled path runs").
PREPARE_CHARS = 1 << 21
# So does a shorter one with a pre-token this long (a run of one letter, digits, an emoji
# sequence): the Python path merges it at a few microseconds a character, which costs more
# than loading the kernels (docs/encoding.md, "When the compiled path runs").
PREPARE_PIECE_CHARS = 1 << 17
# A text shorter than this, nearly all of it one-byte characters (``_mostly_one_byte``),
# takes the Python path even with the kernels loaded: the compiled path's fixed cost per call
# (about 14 us) is more than the Python path's whole encode of a line of English or code
# (lines of a book, 61 characters: 13 us against 22, new pre-tokens included). A line of
# Chinese is the other way round (20 us against 66-115: the Python path merges each new run
# of Han characters byte by byte).
SHORT_TEXT = 128


def _short(text: str) -> bool:
    """Whether ``text`` keeps the Python path even with the kernels loaded (``SHORT_TEXT``)."""
    return len(text) < SHORT_TEXT and _mostly_one_byte(text) and not kernel_start.eager()


def _mostly_one_byte(text: str) -> bool:
    """Whether ``text``'s UTF-8 form is at most a quarter longer than it has characters: one
    character in eight of three bytes, one in four of two (quotes, dashes and accents in
    English; not Chinese, Japanese, Korean, Russian)."""
    if text.isascii():
        return True
    return len(text.encode("utf-8", "surrogatepass")) - len(text) <= len(text) // 4


_NO_ITEMS: Items = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
STRETCH = -1  # in a list of stretches: text to cut into pieces (else a special token's id)


def codepoints(text: str) -> np.ndarray:
    """``text`` as code points (a read-only array: numba compiles one version of a kernel per
    array type, and the scanners' are read-only); UnicodeEncodeError for a surrogate (the
    caller encodes the text with its surrogates replaced, as the Python path does)."""
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


class Encoder:
    """Text to ids for one tokenizer (see the module docstring). ``specials``: the tokens
    ``encode(text)`` cuts out (special tokens, and a tokenizer.json's added tokens that are
    not special: ``building.matcher``); ``special_ids``: each one's id; ``cut_specials``: those
    before which text may be cut; ``special_names``: the special tokens alone, which
    ``allowed_special`` chooses among; ``file_specials``: those and the file's that this
    tokenizer leaves ordinary (``building.build``)."""

    def __init__(
        self,
        pre: Pretokenizer,
        pipeline: HfPipeline | None,
        specials: Specials,
        special_ids: Mapping[str, int],
        merger: Merger,
        cut_rules: CutRules,
        cut_specials: Specials,
        special_names: tuple[str, ...] | None = None,
        file_specials: tuple[str, ...] = (),
    ) -> None:
        self.pre = pre
        self.pipeline = pipeline
        self.specials = specials
        self.special_ids = special_ids
        self.merger = merger
        self.cut_rules = cut_rules
        self.cut_specials = cut_specials
        self.special_names = specials.tokens if special_names is None else special_names
        self.added = tuple(t for t in specials.tokens if t not in self.special_names)
        self.file_specials = file_specials or self.special_names
        # pre.findall, on the standard library's `re` for the named patterns (``re_split``).
        self.findall = findall_for(pre)
        # The special tokens matched for each set that ``encode(allowed_special=...)`` allows.
        self.allowed: dict[frozenset[str], Specials] = {}

    def with_merger(self, merger: Merger) -> Encoder:
        """This encoder with another merger (a truncation's), sharing the rest."""
        out = object.__new__(Encoder)
        out.__dict__.update(self.__dict__)
        out.merger = merger
        return out

    def special_id(self, token: str) -> int:
        return self.special_ids[token]

    def specials_for(
        self,
        text: str,
        allowed_special: AbstractSet[str] | Literal["all"] | None,
        disallowed_special: Collection[str] | Literal["all"] | None,
    ) -> Specials:
        """The special tokens ``Tokenizer.encode`` matches in ``text``: all of this tokenizer's
        when neither argument is given. Else tiktoken's rules: those in ``allowed_special``
        ("all", or a set; default none; others than this tokenizer's are ignored, as tiktoken
        does); and a string of ``disallowed_special`` ("all", the default: every special token
        not allowed; or a collection of strings) found in ``text`` raises ValueError naming it."""
        ours = self.special_names
        key = tiktoken_allowed(ours, text, allowed_special, disallowed_special)
        if key is None:
            return self.specials
        specials = self.allowed.get(key)
        if specials is None:
            allowed = [t for t in ours if t in key]
            specials = self.allowed[key] = matcher(self.added, allowed, self.file_specials)
        return specials

    def prepare_bulk(self, load_kernels: bool = False) -> None:
        """Build now what encoding a lot of text builds on first use (``Tokenizer.prepare_bulk``
        asks for ``load_kernels``): where the compiled path runs (a scanner, the kernels
        loaded, or loaded now), the compiled merger's tables; else the Python path's (the fast
        pre-tokenizer pattern, the merger's tables for many pre-tokens at once)."""
        if load_kernels and self.scanner is not None:
            kernel_start.prepare()
        if self.scanner is not None and kernel_start.kernels() is not None:
            self.merger.compiled()
            return
        re_split.prepare(self.pre.name)
        self.merger.prepare()

    # ------------------------------------------------------------ the Python path
    def segments(self, text: str, specials: Specials) -> list[tuple[list[str], str | None]]:
        """The pre-tokens of each stretch of ``text`` between the special tokens ``specials``
        matches, each with the special token after it (None at the end)."""
        if self.pipeline is not None:
            return self.pipeline.segments(text, specials.tokens, specials.ordinary)
        findall = self.findall
        parts = specials.cut(text)
        bulk = len(text) >= BULK_TEXT
        if bulk and self.pre.name == "gpt2":
            # subtle: the fast split patterns are otherwise built only for one long stretch;
            # a text of many short documents between special tokens needs them as much.
            re_split.prepare("gpt2")
        if bulk or (len(parts) > 1 and len(text) >= SPLIT_WHOLE_MIN):
            # One look at the whole text's characters rather than one per stretch.
            findall = re_split.splitter(self.pre.name, text) or findall
        found: list[str | None] = [*parts[1::2], None]
        try:
            return list(zip(map(findall, parts[0::2]), found))
        except UncoveredText:
            raise self._uncovered(text, specials) from None

    def _uncovered(self, text: str, specials: Specials) -> UncoveredText:
        """The error for the first character of ``text`` that the pre-tokenizer's matches
        leave out, named by its place in the whole text (each stretch between special tokens
        is matched alone, and ``findall`` only knows the stretch)."""
        a, b = self.uncovered_stretch(text, specials)
        return self.pre.uncovered(text, a, b)

    def uncovered_stretch(self, text: str, specials: Specials) -> tuple[int, int]:
        """The first stretch of ``text`` between special tokens that holds a character the
        pre-tokenizer's matches leave out (the whole text if none does)."""
        for a, b, _ in specials.segments(text):
            if first_uncovered(self.pre.compiled, text, a, b) >= 0:
                return a, b
        return 0, len(text)

    def packed(self, text: str, specials: Specials) -> bytes:
        """The ids of ``text`` on the Python path, packed (``packed``)."""
        return self._packed(self.segments(text, specials))

    def _packed(self, segments: list[tuple[list[str], str | None]]) -> bytes:
        special_ids = self.special_ids
        return self.merger.packed(
            [(pieces, None if s is None else special_ids[s]) for pieces, s in segments]
        )

    # ---------------------------------------------------------- the compiled path
    @cached_property
    def scanner(self) -> Scanner | None:
        """The compiled scanner that cuts this tokenizer's text as its pre-tokenizer does, or
        None (the Python path only)."""
        from ..pretokenization.scanner import compiled_scanner

        if self.pipeline is not None:
            from .merging.pipeline_scan import pipeline_scanner

            return pipeline_scanner(self.pipeline)
        return compiled_scanner(self.pre.name or self.pre.pattern)

    def compiled(
        self, n_chars: int, long_piece: bool = False, tally: bool = False
    ) -> CompiledMerger | None:
        """The compiled merger if a text of ``n_chars`` characters (holding a pre-token of
        ``PREPARE_PIECE_CHARS`` or more: ``long_piece``) takes the compiled path (see the
        module docstring), else None. ``tally``: the caller counts its Python path's time
        towards the load (``encode`` and a stream's chunks, not the editor's spans)."""
        if self.scanner is None:
            return None
        kernels = kernel_start.kernels()
        if kernels is not None:
            return self.merger.compiled(kernels)
        if kernel_start.enabled():
            wanted = n_chars >= PREPARE_CHARS or kernel_start.eager()
            # subtle: not while another thread loads them (the app's start, another thread's
            # encode), which a caller would wait for: a long piece waits for a load from the
            # cache (its Python path takes seconds) but not for a compile; a text that merely
            # finds the Python path's cost paid (``kernel_start.rent_paid``) waits for neither.
            piece = long_piece and not kernel_start.compiling()
            rent = tally and kernel_start.rent_paid() and not kernel_start.preparing()
            wanted = wanted or piece or rent
            if wanted and kernel_start.prepare():
                return self.merger.compiled()
        return None

    def items(
        self, cp: np.ndarray, text: str, specials: Specials, start: int = 0, stop: int | None = None
    ) -> Items:
        """The pieces and special tokens of ``text[start:stop]`` (its code points ``cp``) as
        the kernels take them. Not for a pipeline (see :meth:`pipeline_input`)."""
        parts = specials.cut(text, start, len(text) if stop is None else stop)
        if len(parts) == 1:
            return self.scanned(cp, [(start, start + len(parts[0]), STRETCH)] if parts[0] else [])
        # Each part's start and end; the kinds: text at even places, a token's id at odd ones.
        ends = np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts))) + start
        bounds = np.empty((len(parts), 3), np.int64)
        bounds[0, 0] = start
        bounds[1:, 0] = ends[:-1]
        bounds[:, 1] = ends
        bounds[0::2, 2] = STRETCH
        bounds[1::2, 2] = np.fromiter(
            map(self.special_ids.__getitem__, parts[1::2]), np.int64, len(parts) // 2
        )
        # Empty stretches of text (two tokens side by side) give no item.
        return self.scanned(cp, bounds[(bounds[:, 1] > bounds[:, 0]) | (bounds[:, 2] != STRETCH)])

    def pipeline_input(self, text: str, specials: Specials) -> tuple[np.ndarray, Items]:
        """A pipeline's text as the kernels take it: each stretch between special tokens
        normalized (``pipeline_scan`` vouches that its added tokens are found so), the
        stretches and special tokens joined, and the items over the joined code points."""
        from ..formats.hf.normalizers import normalize

        assert self.pipeline is not None
        normalizers = self.pipeline.normalizers
        parts: list[str] = []
        stretches: list[tuple[int, int, int]] = []
        at = 0
        for a, b, special in specials.segments(text):
            part = normalize(normalizers, text[a:b])
            if part:
                parts.append(part)
                stretches.append((at, at + len(part), STRETCH))
                at += len(part)
            if special is not None:
                # subtle: the special token's characters stay in the joined text, so the
                # offsets simply add up; its item is the special token, never scanned.
                parts.append(special)
                stretches.append((at, at + len(special), self.special_ids[special]))
                at += len(special)
        cp = codepoints("".join(parts))
        return cp, self.scanned(cp, stretches)

    def scanned(self, cp: np.ndarray, stretches: list[tuple[int, int, int]] | np.ndarray) -> Items:
        """The items of ``stretches`` ``(start, end, kind)`` (tuples, or the rows of an array),
        in order: a special token's id, or ``STRETCH`` for text, which the scanner cuts into
        pieces (all of them in one call)."""
        scanner = self.scanner
        assert scanner is not None
        if len(stretches) == 0:
            return _NO_ITEMS
        if len(stretches) == 1 and stretches[0][2] == STRETCH:
            # subtle: most texts hold no special token: their pieces follow one another, so
            # each starts where the one before ends. The general way below (an index per
            # piece, scattered) took 5-6 ms of a 75 ms encode of 2 MB under o200k.
            a, b, _ = stretches[0]
            one = np.array([a], np.int64), np.array([b], np.int64)
            ends = scanner.stretch_ends(cp, *one, checked=True)
            n = len(ends)
            # (empty and fill: np.full and empty_like cost a short text twice as much)
            firsts = np.empty(n, np.int64)
            firsts[:1] = a
            firsts[1:] = ends[:-1]
            kinds = np.empty(n, np.int64)
            kinds.fill(-1)  # a piece, as below
            return firsts, ends, kinds
        bounds = np.array(stretches, dtype=np.int64).reshape(-1, 3)
        text = bounds[:, 2] == STRETCH
        ends = scanner.stretch_ends(cp, bounds[text, 0], bounds[text, 1])
        # Pieces per text stretch: its last piece ends at its stop.
        last = np.searchsorted(ends, bounds[text, 1], side="left")
        per_text = np.diff(np.concatenate([[-1], last]))
        counts = np.ones(len(bounds), dtype=np.int64)
        counts[text] = per_text
        first_item = np.cumsum(counts) - counts  # where each stretch's items begin
        # The item of each piece: its stretch's first item plus its place in the stretch.
        first_piece = np.cumsum(per_text) - per_text
        at = np.arange(len(ends)) + np.repeat(first_item[text] - first_piece, per_text)
        n = int(counts.sum())
        starts = np.empty(n, np.int64)
        stops = np.empty(n, np.int64)
        kinds = np.full(n, -1, np.int64)
        piece_starts = np.empty_like(ends)
        piece_starts[1:] = ends[:-1]
        piece_starts[first_piece] = bounds[text, 0]
        starts[at], stops[at] = piece_starts, ends
        special = first_item[~text]
        starts[special], stops[special] = bounds[~text, 0], bounds[~text, 1]
        kinds[special] = bounds[~text, 2]
        return starts, stops, kinds

    def compiled_array(
        self, text: str, specials: Specials, long_piece: bool = False, tally: bool = False
    ) -> np.ndarray | None:
        """The ids of ``text`` (uint32) on the compiled path, or None when it does not take
        it (see :meth:`compiled`; ``tally`` as there). UnicodeEncodeError for a surrogate."""
        merger = self.compiled(len(text), long_piece, tally)
        if merger is None:
            return None
        with merger.hold() as mine:
            if not mine:
                return None
            if self.pipeline is not None:
                cp, items = self.pipeline_input(text, specials)
            else:
                cp = codepoints(text)
                items = self.items(cp, text, specials)
            return merger.encode(cp, items)[0]

    # ------------------------------------------------------------------ either path
    def ids(self, text: str, specials: Specials) -> list[int]:
        """``any_array(text, specials, ...).tolist()``. A text under ``SPLIT_WHOLE_MIN``
        characters that takes the Python path (a short one, ``SHORT_TEXT``; or any while the
        kernels are not loaded) goes by the pre-tokenizer and the merger's cache alone,
        without the segments and arrays a longer text needs: for a line of a book they cost
        about as much as the rest of its encode."""
        if self.pipeline is None and len(text) < SPLIT_WHOLE_MIN:
            try:
                ids = self._lean_ids(text, specials)
            except UnicodeEncodeError:
                # Surrogates, encoded as tiktoken encodes them (``surrogates``).
                ids = self._lean_ids(replace_surrogates(text), specials)
            if ids is not None:
                return ids
        return self.any_array(text, specials, len(text) >= BULK_TEXT).tolist()

    def _lean_ids(self, text: str, specials: Specials) -> list[int] | None:
        """The ids of a text under ``SPLIT_WHOLE_MIN`` characters: on the compiled path if it
        takes it (as :meth:`array` decides), else by :meth:`_short_ids` (None: the general
        path, which names the text the pre-tokenizer leaves out). UnicodeEncodeError for a
        surrogate."""
        short = _short(text)
        if not short:
            compiled = self.compiled_array(text, specials, tally=True)
            if compiled is not None:
                return compiled.tolist()
        start = time.perf_counter()
        ids = self._short_ids(text, specials)
        # As in ``array``: a short text's time is no reason to load the kernels.
        if not short and self.scanner is not None and kernel_start.kernels() is None:
            kernel_start.tally_python_path(time.perf_counter() - start)
        return ids

    def _short_ids(self, text: str, specials: Specials) -> list[int] | None:
        """The ids of a text on the Python path, its stretches between special tokens split
        one by one; or None for the general path, which names the place of text the
        pre-tokenizer leaves out in the whole text. UnicodeEncodeError for a surrogate."""
        parts = specials.cut(text)
        ids_of, findall = self.merger.ids, self.findall
        try:
            if len(parts) == 1:
                return ids_of(findall(text))
            out: list[int] = []
            for i, part in enumerate(parts):
                if i % 2:
                    out.append(self.special_ids[part])
                elif part:
                    out += ids_of(findall(part))
            return out
        except UncoveredText:
            return None

    def array(self, text: str, specials: Specials, tally: bool = True) -> np.ndarray:
        """The ids of ``text``, the special tokens ``specials`` matches encoded as such: a
        native uint32 array (see ``packed.NUMPY_DTYPE``). UnicodeEncodeError for a
        surrogate. ``tally``: the Python path's time counts towards loading the kernels
        (``kernel_start.rent_paid``; not for the editor's spans)."""
        short = _short(text)
        ids = None if short else self.compiled_array(text, specials, tally=tally)
        if ids is not None:
            return ids
        start = time.perf_counter()
        ids = self._python_array(text, specials)
        # A short text keeps the Python path with the kernels loaded: its time is no reason
        # to load them.
        if tally and not short and self.scanner is not None and kernel_start.kernels() is None:
            kernel_start.tally_python_path(time.perf_counter() - start)
        return ids

    def _python_array(self, text: str, specials: Specials) -> np.ndarray:
        """:meth:`array` on the Python path (or the compiled one for a long pre-token)."""
        segments = self.segments(text, specials)
        if kernel_start.kernels() is None and len(text) >= PREPARE_PIECE_CHARS:
            every_piece = chain.from_iterable(pieces for pieces, _ in segments)
            longest = max(map(len, every_piece), default=0)
            if longest >= PREPARE_PIECE_CHARS:
                ids = self.compiled_array(text, specials, long_piece=True)
                if ids is not None:
                    return ids
        return np.frombuffer(self._packed(segments), dtype=NUMPY_DTYPE)

    def any_array(self, text: str, specials: Specials, pause_gc: bool) -> np.ndarray:
        """:meth:`array` of any text: surrogates are encoded as tiktoken encodes them (a pair
        as the character it stands for, a lone one as U+FFFD: ``surrogates``). ``pause_gc``:
        with the cyclic collector paused (a long text's merging makes many lists, of
        pre-tokens, of ids, whose allocations would set it off again and again)."""
        with gc_paused() if pause_gc else nullcontext():
            # subtle: only surrogates make UTF-8 encoding fail; trying the text as it is
            # first keeps ordinary text free of a scan for them.
            try:
                return self.array(text, specials)
            except UnicodeEncodeError:
                return self.array(replace_surrogates(text), specials)
