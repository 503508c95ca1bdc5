"""What ``tokenizers`` does to a text before its BPE model merges: added tokens, normalizers,
pre-tokenizers, in its order.

What it does: :class:`HfPipeline` cuts a text as ``tokenizers``' ``encode`` does
(``tokenizer/added_vocabulary.rs``: ``extract_and_normalize``, then the pre-tokenizer on each
stretch): added tokens that are not ``normalized`` are found in the original text, each
stretch between them is normalized, ``normalized`` added tokens are found in that, and the
pre-tokenizer steps cut what is left into pre-tokens. :meth:`HfPipeline.segments` gives the
pre-tokens (for encoding), :meth:`HfPipeline.spans` each token's characters in the original
text, through the normalization. Steps that are all Isolated Splits a compiled scanner has
(``pretokenization.scanner``: Llama 3's, DeepSeek-V3's three, StarCoder's digits then
ByteLevel, ...) are run by it on long texts once its kernels are loaded.
:class:`PipelinePretokenizer` is the pipeline as the pre-tokenization stage
(``pretokenization.stage``). :meth:`HfPipeline.from_spec` rebuilds a pipeline from its JSON
(how one travels to a worker process). What it leaves out: merging (the tokenizer's, through
``ids_of``), the template (``template``) and reading a whole file (``components``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import cast

import regex

from ...pretokenization import scan_load
from ...pretokenization.boundaries import SPECIALS_ONLY, CutRules, stable_cuts, steps_cut_rules
from ...pretokenization.coverage import unheld
from ...pretokenization.pretokenizer import COMPILED_FINDALL_FROM, Pretokenizer
from ...pretokenization.scanner import Scanner, compiled_steps
from .added_tokens import AddedToken, find_added, matcher, read_added
from .normalizers import EditsOf, Form, Normalized, normalize, normalizer_steps, unstable_class
from .pre_tokenizers import Piece, Step, apply_steps, pre_tokenizer_steps, step_texts

Matchers = tuple[
    tuple[regex.Pattern[str] | None, dict[str, AddedToken]],
    tuple[regex.Pattern[str] | None, dict[str, AddedToken]],
]
# (id, start, end, partial) in the original text, as ``TokenSpan`` holds them.
SpanTuple = tuple[int, int, int, bool]


@dataclass(frozen=True, eq=False)
class HfPipeline:
    """A ``tokenizer.json``'s normalizers, pre-tokenizer steps and added tokens."""

    normalizers: list[EditsOf]
    steps: list[Step]
    added: tuple[AddedToken, ...]
    spec: str  # the JSON it was read from (see ``__reduce__``; written back by ``write_hf``)
    # False when the tokenizer's own pre-tokenizer, from one pattern, cuts text as this does
    # (the pipeline is then kept only to write the file back).
    needed: bool = True
    _matchers: dict[tuple[frozenset[str], frozenset[str]], Matchers] = field(
        default_factory=dict, repr=False
    )
    _scanner: list[Scanner | None] = field(default_factory=list, repr=False)  # found once

    @classmethod
    def from_spec(cls, spec: str, needed: bool = True) -> HfPipeline:
        """The pipeline of :attr:`spec` (the file's normalizer, pre-tokenizer and added
        tokens as JSON)."""
        normalizer, pre_tokenizer, added = json.loads(spec)
        normalizers = normalizer_steps(normalizer)
        steps = pre_tokenizer_steps(pre_tokenizer)
        tokens = read_added(added, normalizers, "tokenizer.json")
        return cls(normalizers, steps, tokens, spec, needed)

    def matchers(self, allowed: Collection[str], hidden: Collection[str] = ()) -> Matchers:
        """Patterns for the added tokens of ``allowed`` and ``hidden`` (contents; ``hidden``
        ones are matched to be skipped: ``Specials.ordinary``): those found in the original
        text, and those found in normalized text."""
        key = frozenset(allowed), frozenset(hidden)
        found = self._matchers.get(key)
        if found is None:
            wanted = key[0] | key[1]
            tokens = [t for t in self.added if t.content in wanted]
            # Special tokens given besides the file's are matched as its plain ones are.
            tokens += [AddedToken(c, -1) for c in sorted(wanted - {t.content for t in self.added})]
            raw = [t for t in tokens if not t.normalized]
            normed = [t for t in tokens if t.normalized]
            found = self._matchers[key] = (matcher(raw), matcher(normed))
        return found

    def __reduce__(self) -> tuple[object, tuple[str, bool]]:
        # Its steps hold compiled patterns and functions: a worker process reads the JSON.
        return HfPipeline.from_spec, (self.spec, self.needed)

    def split_patterns(self) -> list[str] | None:
        """The regexes of the steps that split at all, each as its Isolated Split spells it
        (``scan_patterns.isolated``), when every such step is one (ByteLevel's regex without
        its prefix space included); else None."""
        steps = [s for s in self.steps if not s.passes_whole]
        if not steps or not all(s.whole is not None and not s.prefix_space for s in steps):
            return None
        return [s.whole.pattern for s in steps if s.whole is not None]

    @property
    def removes_text(self) -> bool:
        """Whether a pre-tokenizer step removes text (a Split that keeps its matches only, as
        ``train --format hf`` writes a custom regex; WhitespaceSplit), as ``tokenizers`` does:
        no id stands for it (what :meth:`dropped` finds)."""
        return any(map(_removes, self.steps))

    @property
    def drops_text(self) -> bool:
        """:attr:`removes_text`, where the bytes of the ids say how much was removed: neither
        a normalizer nor a prefix space changes the text otherwise."""
        steps = self.steps
        plain = not self.normalizers and not any(s.prefix_space for s in steps)
        return plain and self.removes_text

    def dropped(self, text: str) -> str | None:
        """The first stretch of ``text``, normalized, that no pre-token holds (added tokens
        not looked for; a prefix space holds none of it), or None."""
        normalized = normalize(self.normalizers, text)
        return unheld(normalized, self.held(normalized))

    def held(self, normalized: str) -> list[tuple[int, int]]:
        """The characters of ``normalized`` text each pre-token holds (start, end), in order:
        what a step that removes text drops is in none (nor is a prefix space a character of
        the text)."""
        # The steps after the last that removes text only cut (or add a prefix space): they
        # hold every character they are given, so they are not run (Llama 3's regex after a
        # Split that removes digits would cut the text into words for nothing).
        steps = self.steps
        last = max((i for i, s in enumerate(steps) if _removes(s)), default=-1)
        pieces = apply_steps(steps[: last + 1], [(normalized, 0, 0)])
        return [(s, s + len(p) - lead) for p, s, lead in pieces]

    def scanner(self) -> Scanner | None:
        """The compiled scanner that cuts normalized text as the steps do, or None: when
        every step that splits at all is an Isolated Split of patterns a scanner has
        (``split_patterns``, ``scanner.compiled_steps``)."""
        if not self._scanner:
            patterns = self.split_patterns()
            self._scanner.append(compiled_steps(patterns) if patterns else None)
        return self._scanner[0]

    def unicode_form(self) -> str | None:
        """The normal form ("NFC", "NFKC", ...) when the normalizer is that one alone (or a
        Sequence of it alone); None for none or any other."""
        normalizer = json.loads(self.spec)[0]
        while isinstance(normalizer, dict) and normalizer.get("type") == "Sequence":
            inner = normalizer.get("normalizers") or []
            normalizer = inner[0] if len(inner) == 1 else None
        kind = normalizer.get("type") if isinstance(normalizer, dict) else None
        return kind if kind in ("NFC", "NFKC", "NFD", "NFKD") else None

    def normalizes_each_character(self) -> bool:
        """Whether the normalizers, if any, are Unicode forms and Lowercase only: each changes
        a character whatever stands around it (Strip, Prepend and Replace do not)."""
        pending, kinds = [json.loads(self.spec)[0]], []
        while pending:
            normalizer = pending.pop()
            if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence":
                pending.extend(normalizer.get("normalizers") or [])
            elif normalizer is not None:
                kinds.append(normalizer.get("type") if isinstance(normalizer, dict) else None)
        return all(kind in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase") for kind in kinds)

    def finds_as_text(self, contents: Collection[str]) -> bool:
        """Whether the added tokens ``contents`` (those the file lacks are matched as plain
        ones, as :meth:`matchers` does) are found in one pass over the original text, each as
        its content alone: none has a flag, and none is ``normalized`` unless the pipeline
        has no normalizer and all are (then the one stretch they are looked for in is the
        original text)."""
        tokens = [t for t in self.added if t.content in contents]
        if not all(t.plain for t in tokens):
            return False
        normalized = {t.normalized for t in tokens}
        if set(contents) - {t.content for t in tokens}:
            normalized.add(False)
        return normalized <= {False} or (not self.normalizers and normalized == {True})

    def _pieces(self, normalized: str) -> list[str]:
        """The pre-tokens of normalized text: by the compiled scanner when there is one, its
        kernels are loaded and the text is long enough to gain (the same pieces)."""
        if len(normalized) >= COMPILED_FINDALL_FROM and scan_load.ready():
            scanner = self.scanner()
            if scanner is not None:
                return scanner.findall(normalized)
        return step_texts(self.steps, normalized)

    def cut_tokens(self) -> list[str]:
        """Added tokens before which a text may always be cut: those found in the original
        text, when all of them are matched as their content alone (a flag such as
        ``single_word`` makes a match depend on what is around it, and one dropped still
        takes its characters from the others); else none."""
        raw = [t for t in self.added if not t.normalized]
        return [t.content for t in raw] if all(t.plain for t in raw) else []

    def findall(self, text: str) -> list[str]:
        """The pre-tokens of ``text`` (added tokens not looked for)."""
        return self._pieces(normalize(self.normalizers, text))

    def pretokenizer(self) -> PipelinePretokenizer:
        """This pipeline as the tokenizer's pre-tokenizer (see :class:`PipelinePretokenizer`)."""
        described = [s.whole.pattern if s.whole is not None else s.pattern for s in self.steps]
        pattern = next((p for p in reversed(described) if p), r"(?s:.)+")
        return PipelinePretokenizer(None, pattern, regex.compile(pattern), pipeline=self)

    def segments(
        self, text: str, allowed: Collection[str], hidden: Collection[str] = ()
    ) -> list[tuple[list[str], str | None]]:
        """The pre-tokens of each stretch of ``text`` between added tokens (of ``allowed``;
        those of ``hidden`` are skipped where found), each with the added token after it
        (its content; None at the end)."""
        (raw, raw_map), (normed, normed_map) = self.matchers(allowed, hidden)
        out: list[tuple[list[str], str | None]] = []
        pieces: list[str] = []
        for a, b, token in find_added(text, raw, raw_map, hidden):
            if token is not None:
                out.append((pieces, token.content))
                pieces = []
                continue
            stretch = normalize(self.normalizers, text[a:b])
            for c, d, inner in find_added(stretch, normed, normed_map, hidden):
                if inner is not None:
                    out.append((pieces, inner.content))
                    pieces = []
                elif d > c:
                    pieces += self._pieces(stretch[c:d])
        out.append((pieces, None))
        return out

    def piece_starts(
        self, text: str, allowed: Collection[str], hidden: Collection[str] = ()
    ) -> list[int] | None:
        """Where each pre-token and each added token of ``text`` begins, and where each added
        token ends (as :meth:`spans` finds them), when the pipeline splits the text as it is;
        None when it changes it first (a normalizer, a prefix space, an added token that takes
        the spaces beside it), where no offset of the text is a piece's."""
        if self.normalizers or not all(t.plain for t in self.added):
            return None
        (raw, raw_map), (normed, normed_map) = self.matchers(allowed, hidden)
        starts: list[int] = []
        for a, b, token in find_added(text, raw, raw_map, hidden):
            if token is not None:
                starts += [a, b]
                continue
            for c, d, inner in find_added(text[a:b], normed, normed_map, hidden):
                if inner is not None:
                    starts += [a + c, a + d]
                elif d > c:
                    for _, start, lead in apply_steps(self.steps, [(text[a + c : a + d], 0, 0)]):
                        if lead:
                            return None
                        starts.append(a + c + start)
        return starts

    def spans(
        self,
        text: str,
        allowed: Collection[str],
        ids_of: Callable[[str], list[int]],
        vocab: Mapping[int, bytes],
        added_ids: Mapping[str, int],
        hidden: Collection[str] = (),
    ) -> list[SpanTuple]:
        """Each token of ``text`` with the original characters that hold it; ``ids_of``
        gives a pre-token's ids (``allowed`` and ``hidden`` as :meth:`segments` takes them)."""
        (raw, raw_map), (normed, normed_map) = self.matchers(allowed, hidden)
        result: list[SpanTuple] = []
        for a, b, token in find_added(text, raw, raw_map, hidden):
            if token is not None:
                result.append((added_ids[token.content], a, b, False))
                continue
            n = Normalized(text[a:b], a).apply(self.normalizers)
            for c, d, inner in find_added(n.text, normed, normed_map, hidden):
                if inner is not None:
                    s, e = n.origin(c, d)
                    result.append((added_ids[inner.content], s, e, False))
                elif d > c:
                    for piece in apply_steps(self.steps, [(n.text[c:d], c, 0)]):
                        _piece_spans(piece, n, ids_of(piece[0]), vocab, result)
        return result


def _removes(step: Step) -> bool:
    """Whether ``step`` removes text: every other keeps each character it is given."""
    return step.behavior == "Removed" and not step.passes_whole


@lru_cache(maxsize=4096)
def _char_of_byte(piece: str) -> tuple[tuple[int, ...], frozenset[int]]:
    """For each UTF-8 byte of ``piece`` the character holding it, and where characters
    start (in bytes, the end included)."""
    of: list[int] = []
    starts = set()
    for ci, ch in enumerate(piece):
        starts.add(len(of))
        of += [ci] * len(ch.encode("utf-8"))
    starts.add(len(of))
    return tuple(of), frozenset(starts)


def _piece_spans(
    piece: Piece, n: Normalized, ids: list[int], vocab: Mapping[int, bytes], out: list[SpanTuple]
) -> None:
    text, start, lead = piece
    of, starts = _char_of_byte(text)
    b = 0
    for tid in ids:
        e = b + len(vocab[tid])
        first, last = of[b], of[e - 1]
        # Characters added in front (a prefix space) stand for the first one of the text.
        lo = start + max(first - lead, 0)
        hi = start + max(last - lead, 0) + 1
        s, _ = n.origin(lo, lo + 1)
        _, t = n.origin(hi - 1, hi)
        out.append((tid, s, t, b not in starts or e not in starts))
        b = e


@dataclass(frozen=True, eq=False)
class PipelinePretokenizer(Pretokenizer):
    """A :class:`Pretokenizer` whose ``findall`` runs a pipeline's normalizers and
    pre-tokenizer steps (added tokens aside, as ``findall`` leaves special tokens aside):
    the pipeline as the pre-tokenization stage (``pretokenization.stage``). ``pattern`` and
    ``compiled`` describe its last regex step (one Split that keeps only its matches: that
    regex), for views that show one."""

    pipeline: HfPipeline | None = field(default=None, repr=False)

    def findall(self, text: str) -> list[str]:
        assert self.pipeline is not None
        return self.pipeline.findall(text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The characters of ``text`` each pre-token came from, through the normalizers (a
        character that normalization merges, "e" + U+0301 into "é", belongs to the piece of
        the result; a prefix space that ByteLevel adds belongs to no character)."""
        assert self.pipeline is not None
        n = Normalized(text, 0).apply(self.pipeline.normalizers)
        if not n.text:
            return []
        out: list[tuple[int, int]] = []
        for piece, start, lead in apply_steps(self.pipeline.steps, [(n.text, 0, 0)]):
            end = start + len(piece) - lead
            if end > start:
                out.append(n.origin(start, end))
            else:
                at = n.origin(start, start + 1)[0] if start < len(n.text) else len(text)
                out.append((at, at))
        return out

    @property
    def cut_rules(self) -> CutRules:
        """The rules of its Splits' patterns (``boundaries.steps_cut_rules``: Llama 3's,
        Qwen2's, DeepSeek-V3's three, ...) for the text its normalizer gives: as they are
        without one; after NFC or NFKC only between characters it leaves as they are and
        joins nothing across (``boundaries.stable_cuts``). Special tokens only for any other
        normalizer (Lowercase maps "İ" to two characters, Replace and Prepend add text), a
        step that is not one regex's Isolated Split, or a prefix space (added to every text
        cut off). Where its added tokens may be found is the tokenizer's to add
        (``HfPipeline.finds_as_text``)."""
        assert self.pipeline is not None
        patterns = self.pipeline.split_patterns()
        rules = SPECIALS_ONLY if patterns is None else steps_cut_rules(patterns)
        if rules is SPECIALS_ONLY or not self.pipeline.normalizers:
            return rules
        form = self.pipeline.unicode_form()
        if form not in ("NFC", "NFKC"):
            return SPECIALS_ONLY
        return stable_cuts(rules, unstable_class(cast("Form", form)), form)

    def __reduce__(self) -> tuple[object, tuple[HfPipeline]]:  # type: ignore[override]
        return HfPipeline.pretokenizer, (self.pipeline,)  # type: ignore[return-value]
