"""Encoding a batch of texts on several threads (``encode_batch``: tiktoken's ``num_threads``).

What it does: :func:`batch_threads` says how many threads a batch is worth: one unless its
texts take the compiled path, whose kernels release Python's lock (each thread holding a lane
of the merger's caches, ``compiled.CompiledMerger.hold``), and are long enough that the part
of each call that holds the lock (the checks, the code points, the list of ids) is small; a
batch of ``PREPARE_CHARS`` characters or more loads the kernels first, as one text that long
does. :func:`on_threads` encodes the texts in order on that many threads. What it leaves out:
the encoding itself (``encoder``), a foreign tokenizer's batches (``tokenizers`` runs its own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from .interface import each_named, in_batch
from .merging.compiled import PROCESSORS

if TYPE_CHECKING:
    from .encoder import Encoder

T = TypeVar("T")

# tiktoken's default number of threads.
DEFAULT_THREADS = 8
# A batch under this many characters in all stays in the calling thread: starting threads
# costs more than it saves.
PARALLEL_CHARS = 1 << 18
# So does a batch of texts shorter than this on average: the part of each call that holds
# Python's lock (the code points, the items, the list of ids) makes threads take turns, and
# below about this length two threads took longer than one (benchmarks/RESULTS.md, "Batches
# on threads").
PARALLEL_MEAN = 1 << 15


def batch_threads(encoder: Encoder, texts: Sequence[object], num_threads: int | None) -> int:
    """The threads to encode ``texts`` on (see the module docstring): at most
    ``num_threads`` (None: tiktoken's default, 8) and one per processor (more take turns for
    Python's lock and for the processors, and each holds a lane of caches of its own)."""
    wanted = DEFAULT_THREADS if num_threads is None else num_threads
    if wanted <= 1 or len(texts) < 2 or not all(isinstance(t, str) for t in texts):
        return 1  # (a text that is not a str is refused by encode, in order)
    total = sum(map(len, texts))  # type: ignore[arg-type]
    if total < PARALLEL_CHARS or total < PARALLEL_MEAN * len(texts):
        return 1
    if encoder.compiled(total) is None:
        return 1
    return min(wanted, PROCESSORS, len(texts))


def on_threads(encode: Callable[[str], T], texts: Sequence[str], threads: int) -> list[T]:
    """``[encode(t) for t in texts]`` on ``threads`` threads; the first text's error that
    fails is raised, saying which text it is (``interface.in_batch``), and texts not started
    yet are dropped."""
    if threads <= 1:
        return each_named(encode, texts, "text")
    pool = ThreadPoolExecutor(threads, thread_name_prefix="bpe-studio-batch")
    out: list[T] = []
    try:
        # (results come in order: the first error met is the first failing text's)
        out.extend(pool.map(encode, texts))
    except Exception as error:
        raise in_batch(error, len(out), len(texts), "text") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return out
