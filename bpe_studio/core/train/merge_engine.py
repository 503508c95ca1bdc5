"""The compiled merge engine: unique pre-tokens as linked positions in flat arrays.

What it does: :class:`CompiledMergeEngine` turns ``{pre-token bytes: count}`` into the arrays
that :mod:`~bpe_studio.core.train.merge_kernel` works on (layout described there), sizes them before
each kernel call, and answers in token ids: the best pair, the ``k`` best pairs, and "merge this
pair into that new id", with the same small interface as ``merge_python.PythonMergeEngine``. A
merge costs in proportion to the places the pair occurs, not to the length of the words holding
it. Also loading the kernels: :func:`load_kernels` (numba is imported then, never with the
package), :func:`prepare` (load, or compile on the first run, saying so) and
:func:`prepare_in_background` (``io.kernel_loader`` does the loading). What it leaves out:
the vocabulary's bytes beyond tie-breaking, MergeStep records, cancelling, choosing an engine
(``trainer`` does those).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..io.kernel_loader import KernelLoader
from .engine_start import EngineStart

# Byte pairs: at most 256 * 256 distinct pairs before any merge.
_BYTE_PAIRS = 256 * 256

StatusFn = Callable[[str], None]
COMPILING = "compiling the merge engine (first run only)"


class CompiledEngineUnavailable(ImportError):
    """The compiled engine cannot be used here: numba (or its kernels) failed to import."""


def _import() -> ModuleType:
    from . import merge_kernel

    return merge_kernel


def compiling() -> bool:
    """Whether a :func:`prepare` is compiling the kernels right now (in any thread)."""
    return LOADER.compiling()


def load_kernels() -> ModuleType:
    """The kernel module, imported once (with numba). Raises :class:`CompiledEngineUnavailable`
    naming the import failure, every time it is asked after one."""
    return LOADER.load()


def prepare(status: StatusFn | None = None) -> None:
    """Load the kernels and make each one ready to run: from numba's cache, or compiled on the
    first run (seconds, in a child process), in which case ``status(COMPILING)`` is called
    first. Runs the kernels once on a tiny corpus, which is what makes numba load them.
    Thread-safe; a second call waits for the first and returns."""
    LOADER.prepare(status)


def _warm_up(kernels: ModuleType) -> None:
    """Call every kernel once with the argument types training uses: numba loads (or
    compiles) a kernel on its first call."""
    tokens = [bytes([i]) for i in range(256)]
    engine = CompiledMergeEngine(EngineStart.of({b"abab": 2, b"ab": 1}, tokens, 300, record=2))
    engine.top(2)
    engine.best()
    engine.add_token(256, b"ab")
    engine.merge(256)
    kernels.rehash(engine.hkeys, engine.hvals, 2 * engine.hkeys.size)
    engine.close()


def prepare_in_background(status: StatusFn | None = None) -> threading.Thread:
    """:func:`prepare` in a daemon thread (the kernels release the GIL, but numba's compiler
    is partly Python, so the caller's thread still runs between its steps). A failure to import
    is left for the engine's user to meet and report."""
    return LOADER.prepare_in_background(status)


LOADER = KernelLoader(
    name="merge-engine",
    importer=_import,
    kernels_of=lambda module: module.KERNELS,
    warm_up=_warm_up,
    # A child process that compiles the kernels into numba's cache, in-process, and exits.
    child_code="from bpe_studio.core.train import merge_engine as m; m._warm_up(m.load_kernels())",
    compiling_message=COMPILING,
    unavailable=CompiledEngineUnavailable,
    explain=lambda reason: _unavailable_because(reason),
)


def _unavailable_because(reason: str) -> str:
    if "NUMBA_DISABLE_JIT" in reason:  # numba is there, told to compile nothing
        return f"the compiled merge engine is unavailable ({reason}); or train with engine='python'"
    return (
        f"the compiled merge engine needs numba, which failed to import ({reason}); "
        "install numba, or train with engine='python'"
    )


def _pow2_at_least(n: int) -> int:
    return 1 << max(4, (n - 1).bit_length())


class CompiledMergeEngine:
    """``engine.best()`` -> ``(a, b, count)`` or None; then ``engine.add_token(new_id, bytes)``
    and ``engine.merge(new_id)``; ``engine.top(k)``; ``engine.close()``."""

    def __init__(self, start: EngineStart) -> None:
        # subtle: numba is imported here, on first training, not with the package: importing it
        # takes most of a second that encoding, converting and the app's start need not pay.
        # NumPy too is imported in the methods: the Python engine's runs never load it.
        import numpy as np

        self._k = K = load_kernels()
        tokens, max_tokens, record = start.tokens, start.max_tokens, start.record
        joined, lens, freqs = start.packed()
        tok = joined.astype(np.int32)
        del joined
        n = tok.size
        ends = np.cumsum(lens)
        starts = ends - lens
        nxt = np.arange(1, n + 1, dtype=np.int32)
        prv = np.arange(-1, n - 1, dtype=np.int32)
        if n:
            nxt[ends - 1] = -1
            prv[starts] = -1
        wof = np.repeat(np.arange(lens.size, dtype=np.int32), lens)
        del lens, ends, starts
        # Every merge site removes one position, so there are at most `sites` of them in all,
        # each creating at most two pairs and two occurrences. np.empty leaves the pages of
        # these upper bounds unmapped until written: memory follows what is actually used.
        sites = max(n - freqs.size, 1)
        pair_cap = min(_BYTE_PAIRS, sites) + 2 * sites
        self.tok, self.nxt, self.prv, self.wof, self.wfreq = tok, nxt, prv, wof, freqs
        self.ppair = np.empty(n, np.int32)
        self.meta = np.zeros(3, np.int64)
        self.pa = np.empty(pair_cap, np.int32)
        self.pb = np.empty(pair_cap, np.int32)
        self.pcount = np.empty(pair_cap, np.int64)
        self.phead = np.empty(pair_cap, np.int32)
        self.plen = np.empty(pair_cap, np.int32)
        self.opos = np.empty(3 * sites, np.int32)
        self.onext = np.empty(3 * sites, np.int32)
        self.hc = np.empty(pair_cap, np.int64)
        self.hp = np.empty(pair_cap, np.int32)
        self.hkeys = np.full(_pow2_at_least(4 * min(_BYTE_PAIRS, sites)), -1, np.int64)
        self.hvals = np.empty(self.hkeys.size, np.int32)
        self.toff = np.zeros(max(max_tokens, len(tokens)) + 1, np.int64)
        self.toff[1 : len(tokens) + 1] = np.cumsum([len(t) for t in tokens])
        self.n_tokens = len(tokens)
        self._pending = -1
        used = int(self.toff[self.n_tokens])
        self.tbuf = np.empty(max(4096, 2 * used), np.uint8)
        self.tbuf[:used] = np.frombuffer(b"".join(tokens), np.uint8)
        # The record's rows: one before each merge, and one after the last.
        rows = max(max_tokens - len(tokens), 0) + 1 if record > 0 else 0
        width = max(record, 1)
        self.track = (np.zeros(4 + 4 * width, np.int64), np.empty((rows, 3 * width), np.int64))
        self.recorded = RecordedPairs(*self.track) if record > 0 else None
        self._group()
        K.build(self.words, self.pairs, self.queue)
        if self.recorded is not None:
            K.record(self.pairs, self.queue, self.track, self.meta[K.NPAIRS])

    def _group(self) -> None:
        """(Re)make the kernels' three tuples of arrays (merge_kernel's docstring), after any
        array is replaced: hkeys/hvals by a rehash, tbuf as it grows."""
        self.words = (self.tok, self.nxt, self.prv, self.ppair, self.wof, self.wfreq)
        self.pairs = (
            self.hkeys, self.hvals, self.meta, self.pa, self.pb, self.pcount,
            self.phead, self.plen, self.opos, self.onext,
        )  # fmt: skip
        self.queue = (self.hc, self.hp, self.tbuf, self.toff)

    def add_token(self, token_id: int, token: bytes) -> None:
        """Record the bytes of the next token id (ids come in order), for tie-breaking."""
        import numpy as np

        if token_id != self.n_tokens or token_id + 1 >= self.toff.size:
            raise ValueError(f"token id {token_id} is out of order or beyond max_tokens")
        start = int(self.toff[token_id])
        end = start + len(token)
        if end > self.tbuf.size:
            grown = np.empty(2 * end, np.uint8)
            grown[:start] = self.tbuf[:start]
            self.tbuf = grown
            self._group()
        self.tbuf[start:end] = np.frombuffer(token, np.uint8)
        self.toff[token_id + 1] = end
        self.n_tokens = token_id + 1

    def best(self) -> tuple[int, int, int] | None:
        """The pair to merge next ``(a, b, count)``, or None when no pair is left. The pair
        leaves the queue: call :meth:`merge` on it next."""
        pid, count = self._k.pop_best(self.pairs, self.queue)
        if pid < 0:
            return None
        self._pending = int(pid)
        return int(self.pa[pid]), int(self.pb[pid]), int(count)

    def merge(self, new_id: int) -> int:
        """Merge the pair :meth:`best` returned into ``new_id`` everywhere; returns how many
        places were merged."""
        pid = self._pending
        # The pairs a merge creates hold the new token beside another: at most two per place
        # merged, and at most two per token there is (one on each side). Bounded by places
        # alone, a run of one letter ten million long (one pre-token) grew the hash to 134
        # million slots, 1.1 GB, for the 11 pairs there ever were. Kept at most half full.
        created = 2 * min(int(self.plen[pid]), self.n_tokens + 1)  # (new_id counted, added or not)
        need = 2 * (int(self.meta[self._k.NPAIRS]) + created)
        if need > self.hkeys.size:
            # (the next power of two: at least twice the old size, so rehashes stay rare)
            self.hkeys, self.hvals = self._k.rehash(self.hkeys, self.hvals, _pow2_at_least(need))
            self._group()
        return int(self._k.apply(pid, new_id, self.words, self.pairs, self.queue, self.track))

    def top(self, k: int) -> list[tuple[int, int, int]]:
        """The ``k`` pairs :meth:`best` would return next, best first: ``(a, b, count)``."""
        k = max(0, min(k, int(self.meta[self._k.HSIZE])))
        ids, counts = self._k.top(self.pairs, self.queue, k)
        return [
            (int(self.pa[p]), int(self.pb[p]), int(c))
            for p, c in zip(ids.tolist(), counts.tolist())
        ]

    def close(self) -> None:
        """Drop the arrays (each is one allocation, freed at once) and empty the queue; the
        record stays."""
        import numpy as np

        empty32, empty64 = np.zeros(0, np.int32), np.zeros(0, np.int64)
        self.meta = np.zeros(3, np.int64)
        self.tok = self.nxt = self.prv = self.ppair = self.wof = self.pa = self.pb = empty32
        self.phead = self.plen = self.opos = self.onext = self.hp = self.hvals = empty32
        self.wfreq = self.pcount = self.hc = empty64
        self.hkeys = np.full(16, -1, np.int64)
        self._group()


class RecordedPairs:
    """The best pairs before each merge, as the compiled engine recorded them: row ``k``
    holds those before merge ``k`` (0-based), as token ids, in the queue's order. Rows are
    written before the merge they precede is handed out, so a reader in another thread may
    read every row below ``len()``."""

    def __init__(self, meta: Any, rows: Any) -> None:
        self._meta, self._rows = meta, rows
        self._width = rows.shape[1] // 3

    def __len__(self) -> int:
        return int(self._meta[3])

    def row(self, k: int) -> list[tuple[int, int, int]]:
        """The pairs before merge ``k``, best first: ``(left id, right id, count)``."""
        if not 0 <= k < len(self):
            raise IndexError(f"no recorded row {k} (rows 0..{len(self) - 1})")
        w = self._width
        left, right, counts = self._rows[k].reshape(3, w).tolist()
        n = w - counts.count(0)
        return list(zip(left[:n], right[:n], counts[:n]))
