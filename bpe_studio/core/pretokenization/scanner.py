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
are cut. The kernels load (numba imported, the cached machine code read) on a scanner's first
call, or are compiled the first time on a machine; ``scan_load.prepare(status)`` does that
ahead (and says when it compiles), ``scan_load.ready()`` tells whether a call costs nothing
more (what code on a GUI thread must check first). Constructing a scanner loads nothing.
What it leaves out: which spellings are which pattern (``scan_patterns``), the tables and
kernels (``scan_tables``, ``scan_kernels``), special tokens (split out first, ``specials``).

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
from typing import TYPE_CHECKING, Any

from . import scan_load
from .boundaries import CutRules, steps_cut_rules
from .names import PATTERNS
from .scan_patterns import SEQUENCES, Kind, kind_of
from .scan_tables import kernel_table

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .scan_tables import Table

    Ends = npt.NDArray[np.int64]
    Points = npt.NDArray[np.uint32]

_NAMED = {Kind.GPT2: "gpt2", Kind.CL100K: "cl100k", Kind.O200K: "o200k"}
# Code points to join pieces with in ``findall`` (noncharacters, then a lone surrogate).
_SEPARATORS = (0x10FFFF, 0xFFFF, 0xDFFF)


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
        return SEQUENCES.get(self.kinds) or self.kinds[0].name.lower()

    @property
    def pattern(self) -> str:
        """The regex that describes it: the named pattern's, or the last step's."""
        return PATTERNS.get(self.name or "", self.patterns[-1])

    @property
    def cut_rules(self) -> CutRules:
        return steps_cut_rules(self.patterns)

    @property
    def _steps(self) -> Any:
        """The kinds as the kernels take them."""
        return _kind_array(self.kinds)

    def ends(self, points: Points, start: int = 0, stop: int | None = None) -> Ends:
        """The end offsets (into ``points``) of the pieces of ``points[start:stop]``, in
        order: an int64 array whose last value is ``stop`` (empty when the stretch is).
        The first call in a process loads the kernels (see ``scan_load.prepare``)."""
        import numpy as np

        stop = len(points) if stop is None else stop
        if not 0 <= start <= stop <= len(points):
            raise IndexError(f"no stretch {start}..{stop} in {len(points)} code points")
        bounds = np.array([start], np.int64), np.array([stop], np.int64)
        return self.stretch_ends(points, *bounds)

    def stretch_ends(
        self, points: Points, starts: Ends, stops: Ends, checked: bool = False
    ) -> Ends:
        """The ends of the pieces of each stretch ``points[starts[j]:stops[j]]`` (int64
        arrays of offsets into ``points``; the stretches in order, not overlapping), one
        stretch after another, in one call: the stretches of a text between its special
        tokens, say. Each stretch is split on its own (as if it were the whole text), and
        its last end is its stop. ``checked``: the caller vouches for ``points`` (read-only
        uint32, as ``codepoints`` gives them) and the stretches (int64, in order, within
        ``points``), which a short text would otherwise spend most of its scan checking."""
        kernels, table = _loaded()
        if not checked:
            points, starts, stops = readonly_points(points), *_offsets(starts, stops, len(points))
        return kernels.scan(self._steps, points, table, starts, stops)

    def count(self, points: Points, starts: Ends, stops: Ends) -> tuple[bytes, bytes] | None:
        """The distinct pieces of the stretches ``points[starts[j]:stops[j]]`` and how often
        each occurs, packed as ``corpus.counting.pack_counts`` packs them (UTF-8 joined by
        0xFF; int64 counts), in order of first occurrence; None when a piece holds a
        surrogate (UTF-8 has no form for it: the caller replaces them and counts again)."""
        _, table = _loaded()
        kernels = scan_load.counting_kernels()
        points, starts, stops = readonly_points(points), *_offsets(starts, stops, len(points))
        first, lens, counts = kernels.count_pieces(self._steps, points, table, starts, stops)
        joined, ok = kernels.packed_counts(points, first, lens)
        return (joined.tobytes(), counts.tobytes()) if ok else None

    def findall(self, text: str) -> list[str]:
        """The pieces of ``text``, in order."""
        if not text:
            return []
        points = codepoints(text)
        ends = self.ends(points)
        # The pieces' text with a separator between them, split once: a code point the text
        # does not hold (tried in turn; a text holding them all is cut piece by piece).
        kernels = scan_load.load_kernels()
        for sep in _SEPARATORS:
            joined, ok = kernels.separated(readonly_points(points), 0, ends, sep)
            if ok:
                return text_of(joined).split(chr(sep))
        bounds = ends.tolist()
        return [text[a:b] for a, b in zip([0, *bounds], bounds)]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of each piece of ``text``."""
        ends = self.ends(codepoints(text)).tolist()
        return list(zip([0, *ends], ends))

    def __reduce__(self) -> tuple[object, tuple[tuple[str, ...]]]:
        return _rebuilt, (self.patterns,)


@cache
def _kind_array(kinds: tuple[Kind, ...]) -> Any:
    import numpy as np

    return np.array(kinds, np.int64)


def readonly_points(points: Points) -> Points:
    """``points`` as the kernels take them (C-contiguous uint32, read-only: numba compiles
    one version per array type, and ``codepoints`` gives read-only arrays)."""
    import numpy as np

    if points.dtype != np.uint32 or not points.flags.c_contiguous:
        points = np.ascontiguousarray(points, dtype=np.uint32)
    if points.flags.writeable:
        points = points.view()
        points.flags.writeable = False
    return points


def _offsets(starts: Ends, stops: Ends, size: int) -> tuple[Ends, Ends]:
    """Stretch bounds as the kernels take them, checked: in order, within ``size``."""
    import numpy as np

    starts = np.ascontiguousarray(starts, dtype=np.int64)
    stops = np.ascontiguousarray(stops, dtype=np.int64)
    if starts.shape != stops.shape or starts.ndim != 1:
        raise ValueError("starts and stops must be two 1-d arrays of the same length")
    apart = not (stops < starts).any() and not (starts[1:] < stops[:-1]).any()
    if starts.size and (starts[0] < 0 or stops[-1] > size or not apart):
        raise IndexError(f"stretches must be in order, apart, within 0..{size}")
    return starts, stops


def _loaded() -> tuple[Any, Table]:
    """The kernel module and the class table, prepared on first use."""
    if not scan_load.ready():
        scan_load.prepare()
    return scan_load.load_kernels(), kernel_table()


def _rebuilt(patterns: tuple[str, ...]) -> Scanner:
    scanner = compiled_steps(patterns)
    if scanner is None:
        raise ValueError(f"no compiled scanner for {patterns!r} here (numba is missing)")
    return scanner


def kernels_available() -> bool:
    """Whether numba is installed (the kernels can then be loaded or compiled)."""
    try:
        return importlib.util.find_spec("numba") is not None
    except (ImportError, ValueError):  # a module that failed to import, or was blocked
        return False


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
    one of them has no kernel, the Sequence is not one of ``scan_patterns.SEQUENCES`` (or
    a single step), or numba is missing."""
    kinds = tuple(k for k in map(kind_of, patterns) if k is not None)
    if len(kinds) != len(patterns) or not kinds or not kernels_available():
        return None
    if len(kinds) > 1 and kinds not in SEQUENCES:
        return None
    return Scanner(tuple(patterns), kinds)
