"""Compiled scanners: the pre-tokenization patterns of the common tokenizers, run over code
points by numba-compiled kernels, with exactly the pieces the ``regex`` module gives.

What it does: :func:`compiled_scanner` gives a :class:`Scanner` for a pattern that has a
compiled kernel (GPT-2's, cl100k's, o200k's, Llama 3's, Qwen2's; ``scan_patterns`` lists every
spelling read), :func:`compiled_steps` one for a Sequence of Isolated Splits whose every
pattern has one (DeepSeek-V3's three, StarCoder's digits then GPT-2's); None otherwise, and
the caller keeps the regex path. A scanner works on a text as code points
(:func:`codepoints`: a ``numpy.uint32`` array; lone surrogates kept as their own code points,
which no pattern class holds, as in ``regex``) and answers with the pieces' end offsets
(:meth:`Scanner.ends`), from which ``findall`` and ``spans`` (the stage interface, ``stage``)
are cut. The kernels load (numba imported, the cached machine code read) on first use, or are
compiled the first time on a machine (:func:`prepare`, which says so).
What it leaves out: which spellings are which pattern (``scan_patterns``), the Unicode class
tables (``scan_tables``), the kernels (``scan_kernels``), special tokens (split out first,
``specials``), counting (``corpus``).

>>> s = compiled_scanner("gpt2")
>>> s.findall("Hello world's end")
['Hello', ' world', "'s", ' end']
>>> s.ends(codepoints("Hello world")).tolist()
[5, 11]
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import regex

from .boundaries import SPECIALS_ONLY, CutRules, cut_rules
from .names import PATTERNS, pattern_name
from .scan_patterns import Kind, isolated, kind_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ends = npt.NDArray[np.int64]
    Points = npt.NDArray[np.uint32]

_NAMED = {Kind.GPT2: "gpt2", Kind.CL100K: "cl100k", Kind.O200K: "o200k"}
# What a scanner of these steps is called (its ``label``).
_LABELS = {
    (Kind.DIGITS3, Kind.CJK, Kind.DEEPSEEK): "deepseek_v3",
    (Kind.DIGIT, Kind.GPT2): "starcoder",
}


def codepoints(text: str) -> Points:
    """``text`` as its code points, what a scanner reads. subtle: "surrogatepass" keeps a lone
    surrogate as its own code point (a string may hold one; no pattern class does)."""
    import numpy as np

    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def text_of(points: Points) -> str:
    """The text of code points (``codepoints``' inverse)."""
    return points.tobytes().decode("utf-32-le", "surrogatepass")


@dataclass(frozen=True, eq=False)
class Scanner:
    """A compiled pre-tokenizer: one or more steps, each an Isolated split by one pattern
    (its matches and the gaps between them are the pieces), each step splitting the pieces
    of the one before. Implements the stage interface (``stage.PreTokenizerStage``).

    ``patterns``: each step's regex as given; ``kinds``: each step's kernel.
    """

    patterns: tuple[str, ...]
    kinds: tuple[Kind, ...]

    @property
    def name(self) -> str | None:
        """The named pattern ("gpt2", "cl100k", "o200k") this scanner runs, else None."""
        return _NAMED.get(self.kinds[0]) if len(self.kinds) == 1 else None

    @property
    def label(self) -> str:
        """What it is, for messages and benchmarks: "gpt2", "llama3", "deepseek_v3", ..."""
        return _LABELS.get(self.kinds) or "+".join(k.name.lower() for k in self.kinds)

    @property
    def pattern(self) -> str:
        """The regex that describes it: the named pattern's, or the last step's."""
        return PATTERNS.get(self.name or "", self.patterns[-1])

    @property
    def cut_rules(self) -> CutRules:
        return cut_rules(self.name) if self.name else SPECIALS_ONLY

    def ends(self, points: Points, start: int = 0, stop: int | None = None) -> Ends:
        """The end offsets (into ``points``) of the pieces of ``points[start:stop]``, in
        order: an int64 array whose last value is ``stop`` (empty when the stretch is)."""
        import numpy as np

        stop = len(points) if stop is None else stop
        bounds = [start, stop] if stop > start else [start]
        text = text_of(points)
        for step in _step_regexes(self.patterns):
            cut = [start]
            for a, b in zip(bounds, bounds[1:]):
                cut += [m.end() for m in step.finditer(text, a, b)]
            bounds = cut
        return np.asarray(bounds[1:], dtype=np.int64)

    def findall(self, text: str) -> list[str]:
        ends = self.ends(codepoints(text)).tolist()
        return [text[a:b] for a, b in zip([0, *ends], ends)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        ends = self.ends(codepoints(text)).tolist()
        return list(zip([0, *ends], ends))

    def __reduce__(self) -> tuple[object, tuple[tuple[str, ...]]]:
        return _rebuilt, (self.patterns,)


@cache
def _step_regexes(patterns: tuple[str, ...]) -> list[regex.Pattern[str]]:
    """Each step's pattern as the Split applies it (a name read as its regex)."""
    return [regex.compile(isolated(PATTERNS.get(pattern_name(p), p))) for p in patterns]


def _rebuilt(patterns: tuple[str, ...]) -> Scanner:
    scanner = compiled_steps(patterns)
    if scanner is None:
        raise ValueError(f"no compiled scanner for {patterns!r} here (numba is missing)")
    return scanner


def kernels_available() -> bool:
    """Whether numba is installed (the kernels can then be loaded or compiled)."""
    return importlib.util.find_spec("numba") is not None


def compiled_scanner(pattern: str) -> Scanner | None:
    """The compiled scanner whose pieces are exactly ``regex.findall(pattern, text)`` (the
    pattern a name or a regex string, in a spelling ``scan_patterns`` knows, or such a
    pattern as an Isolated Split spells it), or None: then keep the regex path.

    >>> compiled_scanner("cl100k_base").label, compiled_scanner(r"\\w+|\\W+")
    ('cl100k', None)
    """
    return compiled_steps([pattern])


def compiled_steps(patterns: Sequence[str]) -> Scanner | None:
    """The compiled scanner of a Sequence of Isolated Splits by ``patterns`` (each step splits
    every piece of the one before into its matches and the gaps between them), or None when
    one of them has no kernel (or numba is missing)."""
    kinds = [kind_of(p) for p in patterns]
    if not patterns or None in kinds or not kernels_available():
        return None
    return Scanner(tuple(patterns), tuple(k for k in kinds if k is not None))
