"""Pre-token counts kept in flat arrays and added up by compiled kernels: no Python object per
pre-token until the counts are handed over.

What it does: :class:`Tally` adds up packed counts (``counting.pack_counts``' form: byte
strings joined by 0xFF, and their int64 counts), as workers send them, in a hash table of
byte strings held in a few numpy arrays (``pretokenization.count_kernels``); it tells the
positions counted so far (what ``measured`` callbacks hear) and gives the total packed again
or as :class:`PieceCounts`, a read-only mapping over arrays that hands the merge engines
their words without a Python object per pre-token (``train.engine_start``).
:class:`CompiledCounter` counts the pre-tokens of texts with a compiled scanner into a tally
(what a worker runs for a pattern that has one). What it leaves out:
which tasks, when counting is compiled, and the regex path (``tasks``, ``counting``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..pretokenization import scan_load
from ..pretokenization.scanner import Scanner, codepoints
from ..pretokenization.specials import Specials

_SEPARATOR = b"\xff"


class Tally:
    """Byte strings and their counts, added up from packed counts (compiled)."""

    def __init__(self) -> None:
        self._kernels = scan_load.counting_kernels()
        (*self._arrays, self._size) = scan_load.empty_tally()
        self.positions = 0  # bytes of the distinct strings of two bytes or more

    def __len__(self) -> int:
        return self._size

    def add(self, tokens: bytes, freqs: bytes) -> None:
        """Add packed counts (``counting.pack_counts``)."""
        import numpy as np

        counts = np.frombuffer(freqs, np.int64)
        if not counts.size:
            return
        data = np.frombuffer(tokens, np.uint8)
        *arrays, size, positions = self._kernels.tally_add(*self._arrays, self._size, data, counts)
        self._arrays, self._size = arrays, int(size)
        self.positions += int(positions)

    def packed(self) -> tuple[bytes, bytes]:
        """The counts packed (``counting.pack_counts``' form), in order of first addition."""
        arena, offs, slots = self._arrays
        joined = self._kernels.tally_packed(arena, offs, self._size)
        return joined.tobytes(), self._kernels.tally_counts(slots, self._size).tobytes()

    def counter(self) -> Counter[bytes]:
        """The counts as a ``Counter`` (one bytes object per distinct string, made here)."""
        return self.piece_counts().counter()

    def piece_counts(self) -> PieceCounts:
        """The counts as :class:`PieceCounts` (copies of the arrays, trimmed)."""
        arena, offs, slots = self._arrays
        size = self._size
        used = int(offs[size])
        counts = self._kernels.tally_counts(slots, size)
        return PieceCounts(arena[:used].copy(), offs[: size + 1].copy(), counts, self.positions)


class PieceCounts(Mapping[bytes, int]):
    """Pre-token counts held in arrays: distinct pre-token ``u`` is ``arena[offs[u]:offs[u +
    1]]``, counted ``counts[u]`` times. A read-only mapping; its dict is made only when a
    pre-token is looked up. ``positions``: the bytes of the pre-tokens of two bytes or more
    (``trainer.count_positions``)."""

    def __init__(self, arena: Any, offs: Any, counts: Any, positions: int) -> None:
        self._arena, self._offs, self._counts = arena, offs, counts
        self.positions = positions
        self._dict: dict[bytes, int] | None = None

    def __len__(self) -> int:
        return int(self._counts.size)

    def __iter__(self) -> Iterator[bytes]:
        data = self._arena.tobytes()
        bounds = self._offs.tolist()
        return (data[a:b] for a, b in zip(bounds, bounds[1:]))

    def __getitem__(self, key: bytes) -> int:
        if self._dict is None:
            self._dict = dict(zip(self, self._counts.tolist()))
        return self._dict[key]

    def counter(self) -> Counter[bytes]:
        """The counts as a ``Counter`` (one bytes object per pre-token, made here)."""
        counts: Counter[bytes] = Counter()
        dict.update(counts, zip(self, self._counts.tolist()))
        return counts

    def pairable_arrays(self) -> tuple[Any, Any, Any]:
        """The pre-tokens that hold a pair (``engine_start.pairable``) as arrays: their bytes
        back to back (uint8), their lengths and counts (int64)."""
        import numpy as np

        lens = np.diff(self._offs)
        keep = (lens > 1) & (self._counts > 0)
        joined = self._arena[np.repeat(keep, lens)]
        return joined, lens[keep], self._counts[keep]


class CompiledCounter:
    """Counts the pre-tokens of texts with a compiled ``scanner`` into a :class:`Tally`,
    special tokens split out first (never counted, never crossed)."""

    def __init__(self, scanner: Scanner, specials: Specials) -> None:
        self.scanner, self.specials = scanner, specials
        self.tally = Tally()

    def add(self, text: str, cuts: Sequence[int]) -> bool:
        """Count ``text``, each ``text[cuts[i]:cuts[i + 1]]`` on its own (places no
        pre-token crosses). False when ``text`` holds a surrogate (nothing is counted then:
        UTF-8 has no form for it; replace them and count again)."""
        packed = count_packed(self.scanner, self.specials, text, cuts)
        if packed is None:
            return False
        self.tally.add(*packed)
        return True

    def packed(self) -> tuple[bytes, bytes]:
        """The counts so far, packed."""
        return self.tally.packed()


def count_packed(
    scanner: Scanner, specials: Specials, text: str, cuts: Sequence[int]
) -> tuple[bytes, bytes] | None:
    """The pre-token counts of ``text`` packed (``counting.pack_counts``' form), each
    ``text[cuts[i]:cuts[i + 1]]`` counted on its own and special tokens split out; None when
    ``text`` holds a surrogate."""
    import numpy as np

    starts: list[int] = []
    stops: list[int] = []
    segments = specials.segments
    for a, b in zip(cuts, cuts[1:]):
        for x, y, _ in segments(text, a, b):
            if y > x:
                starts.append(x)
                stops.append(y)
    return scanner.count(codepoints(text), np.array(starts, np.int64), np.array(stops, np.int64))
