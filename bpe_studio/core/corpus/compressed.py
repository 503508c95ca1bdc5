"""Compressed corpus files read whole, or refused: a stream cut short or damaged is an error
naming the file, never a shorter text.

What it does: :func:`decompressed` gives the decompressed bytes of a stored stream as a raw
stream. gzip, bz2 and xz come from the standard library, whose readers already raise at a
stream cut short (``EOFError``) or damaged (``zlib.error``, ``lzma.LZMAError``, ``OSError``);
each becomes a :class:`~.sources.CorpusError` naming the file. zstandard's reader, though,
ends quietly where a truncated frame's data ends, so the zstd stream is followed frame by
frame on its way in (:class:`_ZstdFrames`: headers and block sizes only, nothing
decompressed twice), and input that ends inside a frame is an error. :func:`compression_in`
tells, from a file's first bytes, which of these compressions it holds (a stream's or a
misnamed file's name says nothing of it).
What it leaves out: finding and opening the files (``sources``).
"""

from __future__ import annotations

import io
import lzma
import zlib
from typing import Any, BinaryIO

from .errors import CorpusError

_ZSTD_MAGIC = 0xFD2FB528
# Skippable frames (pzstd writes one first) have magic numbers 0x184D2A50 to 0x184D2A5F.
_SKIPPABLE = 0x184D2A50
_CUT_SHORT = "the compressed data ends early (the file is cut short)"
# Each compression's first bytes, and the suffix that names it.
_MAGIC = ((b"\x1f\x8b", "gz"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zst"))
# bzip2: "BZh", the block size, then a block's or the end's signature (never UTF-8 text;
# "BZh" alone may begin a text).
_BZIP2_SIGNATURES = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")


def compression_in(head: bytes) -> str | None:
    """The suffix ("gz", "bz2", "xz", "zst") of the compression whose data begins with
    ``head`` (a file's first 16 bytes or more); None when it is none of them.

    >>> compression_in(bytes.fromhex("1f8b0800")), compression_in(b"plain text")
    ('gz', None)
    """
    for magic, suffix in _MAGIC:
        if head.startswith(magic):
            return suffix
    # zstd's skippable frames (pzstd begins with one).
    if len(head) >= 4 and int.from_bytes(head[:4], "little") & 0xFFFFFFF0 == _SKIPPABLE:
        return "zst"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in _BZIP2_SIGNATURES:
        return "bz2"
    return None


def head_decompressed(head: bytes, compression: str, size: int) -> bytes:
    """At most ``size`` bytes of what ``head`` (a compressed file's first bytes, of
    ``compression``: a suffix :func:`compression_in` gives) decompresses to; what came out
    before a damage or the end of ``head``, possibly nothing.

    >>> import gzip
    >>> head_decompressed(gzip.compress(b"abc" * 100)[:40], "gz", 5)
    b'abcab'
    """
    try:
        if compression == "gz":
            return zlib.decompressobj(wbits=31).decompress(head, size)
        if compression == "bz2":
            import bz2

            return bz2.BZ2Decompressor().decompress(head, max_length=size)
        if compression == "xz":
            return lzma.LZMADecompressor().decompress(head, max_length=size)
        import zstandard

        # zstd's object has no limit: the head is a file's first bytes, a few KiB.
        return zstandard.ZstdDecompressor().decompressobj().decompress(head)[:size]
    except Exception:  # damaged, cut, or no zstandard: nothing to tell from
        return b""


def _refusal(name: str, compression: str, error: BaseException) -> CorpusError:
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return CorpusError(f"{name}: not readable as {compression}: damaged or cut short ({detail})")


class _Checked(io.RawIOBase):
    """A decompressing reader whose failures are :class:`CorpusError` naming the file."""

    def __init__(
        self, stream: Any, name: str, compression: str, errors: tuple[type[Exception], ...]
    ) -> None:
        self._stream, self._name, self._compression = stream, name, compression
        self._errors = errors

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._stream.read(len(buffer))
        except CorpusError:
            raise
        except self._errors as e:
            raise _refusal(self._name, self._compression, e) from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            super().close()


class _ZstdFrames(io.RawIOBase):
    """The stored bytes of a zstd stream, passed through unchanged while their frames are
    followed (RFC 8878: frame header, then blocks, each with its size, then an optional
    checksum; skippable frames by their size). At the end of the input the last frame must
    be complete; otherwise the read raises :class:`CorpusError` naming the file."""

    def __init__(self, stored: BinaryIO, name: str) -> None:
        self._stored, self._name = stored, name
        self._field = bytearray()  # the bytes of a header being read
        self._wanted = 4  # how many bytes that header needs
        self._state = "magic"
        self._skip = 0  # bytes of the current frame's content still to pass
        self._checksum = False
        self._last = False
        self._part = ""  # what the bytes being passed are

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stored.read(len(buffer))
        if not data:
            if self._state != "magic" or self._field or self._skip:
                raise CorpusError(f"{self._name}: not readable as zstd: {_CUT_SHORT}")
            return 0
        self._follow(memoryview(data))
        buffer[: len(data)] = data
        return len(data)

    def _follow(self, data: memoryview) -> None:
        at = 0
        while at < len(data):
            if self._skip:
                step = min(self._skip, len(data) - at)
                self._skip -= step
                at += step
                if not self._skip:
                    self._after_content()
                continue
            step = min(self._wanted - len(self._field), len(data) - at)
            self._field += data[at : at + step]
            at += step
            if len(self._field) == self._wanted:
                field = bytes(self._field)
                self._field.clear()
                self._parse(field)

    def _parse(self, field: bytes) -> None:
        value = int.from_bytes(field, "little")
        if self._state == "magic":
            if value == _ZSTD_MAGIC:
                self._state, self._wanted = "descriptor", 1
            elif value & 0xFFFFFFF0 == _SKIPPABLE:
                self._state, self._wanted = "skippable", 4
            else:
                raise CorpusError(f"{self._name}: not readable as zstd: not a zstd frame")
        elif self._state == "skippable":
            self._expect("frame", value)
        elif self._state == "descriptor":
            size_flag, single = value >> 6, bool(value & 0x20)
            self._checksum = bool(value & 0x04)
            content_size = (1 if single else 0, 2, 4, 8)[size_flag]
            header = (0 if single else 1) + (0, 1, 2, 4)[value & 0x03] + content_size
            self._state, self._wanted = "block", 3
            self._expect("header", header)
        elif self._state == "block":
            self._last = bool(value & 1)
            kind, size = (value >> 1) & 3, value >> 3
            if kind == 3:
                raise CorpusError(f"{self._name}: not readable as zstd: a block of no known type")
            self._expect("block", 1 if kind == 1 else size)

    def _expect(self, part: str, size: int) -> None:
        """Pass ``size`` bytes of ``part`` (the rest of a header, a block, a skippable frame)."""
        self._part = part
        self._skip = size
        if not size:
            self._after_content()

    def _after_content(self) -> None:
        part = self._part
        if part == "header":
            self._state, self._wanted = "block", 3
        elif part == "block" and not self._last:
            self._state, self._wanted = "block", 3
        elif part == "block" and self._checksum:
            self._checksum = False
            self._expect("checksum", 4)
        else:  # a frame's last block, its checksum or a skippable frame: the next frame
            self._state, self._wanted = "magic", 4


def decompressed(stored: Any, compression: str, name: str) -> io.RawIOBase:
    """The decompressed bytes of ``stored`` (``compression``: fsspec's name, "gzip", "bz2",
    "xz" or "zstd"), as a raw stream that raises :class:`CorpusError` naming ``name`` for a
    stream cut short or damaged."""
    if compression == "zstd":
        import zstandard

        frames = _ZstdFrames(stored, name)
        reader = zstandard.ZstdDecompressor().stream_reader(
            frames,  # type: ignore[arg-type]  # any stream with read() will do
            read_across_frames=True,
        )
        return _Checked(reader, name, "zstd", (zstandard.ZstdError, OSError, ValueError))
    from fsspec.compression import compr

    errors = (EOFError, OSError, ValueError, zlib.error, lzma.LZMAError)
    return _Checked(compr[compression](stored, mode="r"), name, compression, errors)
