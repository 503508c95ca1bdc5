"""What ``bpe-studio decode`` reads and writes: the ids of a ``.npy`` file, a block at a time
(:class:`IdsFile`), and their bytes, a block at a time (:class:`DecodedBlocks`).

A file's ids are read as they are decoded, not held: 61 million ids decoded whole held
1.4 GB. They are read, not memory-mapped: a mapped file cut short while it is read kills the
process with SIGBUS, where a read says which file changed. Standard input and other streams
are read whole first (they cannot be read twice, and every id is checked before any is
written). What it leaves out: the command's options and its summary (``encode``).
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Callable
from typing import BinaryIO

import numpy as np

from ..core import Tokenizer
from ..core.encode.decoding import ByteTable
from ..core.encode.foreign import AnyTokenizer
from ..core.train.vocab import missing_id
from .inputs import STDIN, input_name
from .output import CliError

NPY_MAGIC = b"\x93NUMPY"
# Ids read and decoded at a time (a few MB of bytes each).
DECODE_BLOCK = 1 << 20


def npy_problem(head: bytes, error: Exception | str) -> str:
    """Why bytes starting with ``head`` are no array of ids that NumPy can load."""
    if not head:
        return "is empty, not a .npy array of ids (as 'bpe-studio encode' writes)"
    if not head.startswith(NPY_MAGIC):
        return (
            "is not a .npy file (it does not begin with the .npy signature); decode reads "
            "the arrays 'bpe-studio encode' writes"
        )
    if "pickle" in str(error).lower() or "python objects" in str(error).lower():
        return "holds Python objects, not integer ids (such files are not loaded)"
    return f"is a damaged .npy file: {error}"


class IdsFile:
    """The ids in the ``.npy`` file ``path`` (or ``-``, standard input), checked to be a 1-D
    array of integers; :meth:`block` reads some of them. Errors are :class:`CliError` lines
    naming the file."""

    def __init__(self, path: str) -> None:
        self.name = name = input_name(path)
        self._held: np.ndarray | None = None
        self._file: BinaryIO | None = None
        try:
            if path == STDIN or not stat.S_ISREG(os.stat(path).st_mode):
                data = sys.stdin.buffer.read() if path == STDIN else _read(path)
                self._held = self._loaded(data)
                self.dtype, self.count = self._held.dtype, len(self._held)
            else:
                self._file = f = open(path, "rb")  # noqa: SIM115 - closed by close()
                self._header(f, os.fstat(f.fileno()).st_size)
        except OSError as e:
            self.close()
            raise CliError(f"{name}: cannot read it: {e.strerror or e}") from None
        except CliError:
            self.close()
            raise

    def _loaded(self, data: bytes) -> np.ndarray:
        # The header is checked as a file's is, so that ids cut short are said to be in the
        # same words, not in NumPy's ("EOF: reading array data").
        self._header(io.BytesIO(data), len(data))
        head, source = data[: len(NPY_MAGIC)], io.BytesIO(data)
        try:
            ids = np.load(source, allow_pickle=False)
        except (ValueError, EOFError) as e:
            raise CliError(f"{self.name}: {npy_problem(head, e)}") from None
        self._check(getattr(ids, "dtype", type(ids).__name__), getattr(ids, "shape", "?"))
        return ids

    def _header(self, f: BinaryIO, size: int) -> None:
        head = f.read(len(NPY_MAGIC))
        f.seek(0)
        fmt = np.lib.format
        try:
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = fmt.read_array_header_1_0(f)
            else:
                shape, _, dtype = fmt.read_array_header_2_0(f)
        except (ValueError, EOFError) as e:
            raise CliError(f"{self.name}: {npy_problem(head, e)}") from None
        if dtype.hasobject:
            raise CliError(f"{self.name}: {npy_problem(head, 'Python objects')}")
        self._check(dtype, shape)
        self._offset, self.dtype, self.count = f.tell(), dtype, int(shape[0])
        held = (size - self._offset) // dtype.itemsize
        if held < self.count:
            raise CliError(
                f"{self.name}: is a damaged .npy file: it holds {held:,} of the "
                f"{self.count:,} ids its header announces (cut short?)"
            )

    def _check(self, dtype: object, shape: object) -> None:
        kind = getattr(dtype, "kind", "")
        if not (isinstance(shape, tuple) and len(shape) == 1 and kind in ("i", "u")):
            raise CliError(
                f"{self.name}: expected a 1-D array of integer ids, got {dtype} of shape {shape}"
            )

    def __len__(self) -> int:
        return self.count

    def block(self, start: int, stop: int) -> np.ndarray:
        """Ids ``start`` to ``stop`` (fewer at the end)."""
        stop = min(stop, self.count)
        if self._held is not None:
            return self._held[start:stop]
        assert self._file is not None
        f, wanted = self._file, max(stop - start, 0)
        f.seek(self._offset + start * self.dtype.itemsize)
        data = f.read(wanted * self.dtype.itemsize)
        ids = np.frombuffer(data, dtype=self.dtype, count=len(data) // self.dtype.itemsize)
        if len(ids) < wanted:
            raise CliError(f"{self.name}: the file changed while it was read (it is shorter)")
        return ids

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


class DecodedBlocks:
    """The bytes of ``ids``, a block of :data:`DECODE_BLOCK` ids at a time (``read``, as a
    binary file is read; b"" at the end). Every id is checked before the first block, so an
    unknown one is refused before anything is written, to a stream too; ``total`` is the
    bytes they decode to, known then. A tokenizer that is not byte-level (its decoder may
    treat the text's start apart, as SentencePiece's does) is decoded whole, once."""

    def __init__(self, tok: AnyTokenizer, ids: IdsFile) -> None:
        self._tok, self._ids = tok, ids
        self._at = 0
        self.done = 0  # bytes read so far
        # Told ``done`` after each block read (a progress bar's update).
        self.progress: Callable[[int], None] | None = None
        self._whole: bytes | None = None
        if not isinstance(tok, Tokenizer):
            self._whole = self._decode(ids.block(0, len(ids)), 0)
            self.total = len(self._whole)
            return
        # The table decode_bytes gathers from: it also knows each token's length.
        self._table = ByteTable(tok.vocab)
        self.total = 0
        for start in range(0, len(ids), DECODE_BLOCK):
            block = ids.block(start, start + DECODE_BLOCK)
            length = self._table.length(block.astype(np.int64))
            if length is None:
                self._decode(block, start)  # raises, naming the ids the vocabulary has
                raise CliError(f"{ids.name}: holds ids the tokenizer does not have")
            self.total += length

    def _decode(self, ids: np.ndarray, start: int) -> bytes:
        """The bytes of ``ids``, the file's from position ``start`` on; an unknown id is
        refused naming where the file holds it (in 243M ids its value alone left it to be
        searched for)."""
        try:
            return self._tok.decode_bytes(ids)
        except ValueError as e:
            vocab = self._tok.vocab
            at = next((k for k, i in enumerate(ids.tolist()) if i not in vocab), None)
            if at is None:
                raise CliError(f"{self._ids.name}: {e}") from None
            bad, n = int(ids[at]), len(self._ids)
            raise CliError(
                f"{self._ids.name}: unknown token id {bad} (item {start + at + 1:,} of {n:,}): "
                f"{missing_id(bad, vocab)}"
            ) from None

    def read(self, size: int = -1) -> bytes:
        """The next block's bytes (``size`` is not looked at: a block is what is decoded)."""
        if self._whole is not None:
            data, self._whole = self._whole, b""
        elif self._at >= len(self._ids):
            return b""
        else:
            block = self._ids.block(self._at, self._at + DECODE_BLOCK)
            self._at += DECODE_BLOCK
            gathered = self._table.gather(block.astype(np.int64))
            if gathered is None:  # every id was known when checked: the file changed since
                raise CliError(f"{self._ids.name}: the file changed while it was read")
            data = gathered
        self.done += len(data)
        if self.progress is not None:
            self.progress(self.done)
        return data
