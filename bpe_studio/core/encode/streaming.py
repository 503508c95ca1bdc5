"""Encoding a stream of text chunks with a bounded tail held back (``Tokenizer.encode_iterable``).

What it does: :func:`encode_iterable` gathers chunks into blocks of ``STREAM_BLOCK``
characters, encodes the part of each block that more text cannot change
(:func:`encode_decided`, which asks ``boundaries``' cut rules how far that is) and carries the
rest over. What it leaves out: merging (``merger``) and files (``encode_file``).
"""

from __future__ import annotations

import bisect
import io
import itertools
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from ..pretokenization.boundaries import last_letter_cut
from ..pretokenization.pretokenizer import UncoveredText, first_uncovered, uncovered_message
from ..text.surrogates import replace_surrogates
from .encoder import STRETCH, codepoints
from .merging import kernel_start

if TYPE_CHECKING:
    from ..pretokenization.specials import Specials
    from .encoder import Encoder
    from .merging.compiled import CompiledMerger

# encode_iterable works on buffers of at least this many characters.
STREAM_BLOCK = 1 << 16


def _replace_all_but_last_high(buf: str) -> str:
    """``replace_surrogates(buf)``, except that a high surrogate at the very end is kept as it
    is: the low surrogate completing it may come with the next chunk of a stream."""
    if buf and "\ud800" <= buf[-1] <= "\udbff":
        return replace_surrogates(buf[:-1]) + buf[-1]
    return replace_surrogates(buf)


def encode_decided(enc: Encoder, buf: str, out: list[int]) -> int:
    """Append to ``out`` the ids of the part of ``buf`` that more text cannot change; return
    its length. The compiled path is taken when its kernels are loaded, and a stream loads
    them as ``encode`` does once the Python path has cost this process as much as the load
    (``kernel_start.rent_paid``): 11.7 MB of Chinese streamed under o200k took 9.8 s on the
    Python path for ever, 1.0 s with the kernels.

    A special token starting at ``p`` is decided once ``p + longest special`` characters are
    in; a pre-token is decided once the characters the pattern looks at past its end are in,
    and none of them could still turn out to begin a special token (the limit
    ``cut_rules.stream_limit`` gives).
    """
    if enc.pipeline is not None:
        return _encode_decided_pipeline(enc, buf, out)
    merger = enc.compiled(len(buf), tally=True)
    if merger is not None:
        with merger.hold() as mine:
            if mine:
                return _encode_decided_compiled(enc, merger, buf, out)
    start = time.perf_counter()
    done = _encode_decided_python(enc, buf, out)
    if enc.scanner is not None and kernel_start.kernels() is None:
        kernel_start.tally_python_path(time.perf_counter() - start)
    return done


def _encode_decided_python(enc: Encoder, buf: str, out: list[int]) -> int:
    """:func:`encode_decided` on the Python path."""
    n = len(buf)
    specials = enc.specials
    longest = specials.longest
    pos = 0
    for a, b, special in specials.segments(buf):
        if special is None or b + longest > n:
            break
        out += enc.merger.ids(enc.findall(buf[a:b]))
        out.append(enc.special_id(special))
        pos = b + len(special)
    limit = enc.cut_rules.stream_limit(buf, specials)
    done = pos
    if limit > pos:
        # subtle: encode the decided matches themselves. Pre-tokenizing buf[pos:done]
        # afresh would be wrong: "\n\nWord" gives "\n", "\n", but "\n\n" alone is one.
        pieces, ends = [], []
        for m in enc.pre.compiled.finditer(buf, pos):
            if m.end() > limit:
                break
            pieces.append(m.group())
            ends.append(m.end())
        kept = _outside_matches(ends, buf, pos, specials)
        if kept:
            done = ends[kept - 1]
            out += enc.merger.ids(pieces[:kept])
    return done


def _encode_decided_compiled(enc: Encoder, merger: CompiledMerger, buf: str, out: list[int]) -> int:
    """:func:`encode_decided` on the compiled path (the caller holds the merger's lock)."""
    cp = _points_but_last_high(buf)
    n = len(buf)
    specials = enc.specials
    stretches: list[tuple[int, int, int]] = []
    pos = 0
    for a, b, special in specials.segments(buf):
        if special is None or b + specials.longest > n:
            break
        if b > a:
            stretches.append((a, b, STRETCH))
        stretches.append((b, b + len(special), enc.special_id(special)))
        pos = b + len(special)
    starts, ends, kinds = enc.scanned(cp, stretches)
    limit = enc.cut_rules.stream_limit(buf, specials)
    done = pos
    if limit > pos:
        # subtle: the pieces of the rest as the whole buffer cuts it, those ending by the
        # limit kept (see the Python path above).
        assert enc.scanner is not None
        tail = enc.scanner.ends(cp, pos, n)
        tail = tail[tail <= limit]
        if specials.ordinary:
            tail = tail[: _outside_matches(tail.tolist(), buf, pos, specials)]
        if len(tail):
            done = int(tail[-1])
            starts = np.concatenate([starts, [pos], tail[:-1]])
            ends = np.concatenate([ends, tail])
            kinds = np.concatenate([kinds, np.full(len(tail), -1, np.int64)])
    out += merger.encode(cp, (starts, ends, kinds))[0].tolist()
    return done


def _outside_matches(ends: list[int], buf: str, pos: int, specials: Specials) -> int:
    """How many of the decided pieces of ``buf`` from ``pos``, ending at ``ends``, to encode
    now: all, but that the last may not end strictly inside a match of a special token read
    as text (``Specials.ordinary``). What follows is carried over and searched for tokens
    afresh, and from a point inside such a match a token it hides would be found ("ab|>" in
    "<|ab|>" when "<|ab|>" is text), which encode never finds.

    subtle: matches are found from ``pos``, where the whole text's matching is too (the
    buffer begins where no match runs across). Other special tokens' matches begin past
    the stream limit: those before it were encoded as tokens already."""
    if not ends or not specials.ordinary or specials.regex is None:
        return len(ends)
    starts, stops = [], []
    for m in specials.regex.finditer(buf, pos):
        if m.start() >= ends[-1]:
            break
        starts.append(m.start())
        stops.append(m.end())
    kept = len(ends)
    while kept:
        i = bisect.bisect_left(starts, ends[kept - 1]) - 1
        if i < 0 or stops[i] <= ends[kept - 1]:
            break
        kept -= 1
    return kept


def _points_but_last_high(buf: str) -> np.ndarray:
    """``codepoints(buf)``, except that a high surrogate at the very end is let through (the
    Python path never encodes it either: the piece holding the last character is never
    decided); any other surrogate raises UnicodeEncodeError, for the caller to replace."""
    if buf and "\ud800" <= buf[-1] <= "\udbff":
        codepoints(buf[:-1])  # raises for any other surrogate
        return np.frombuffer(buf.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return codepoints(buf)


def _encode_decided_pipeline(enc: Encoder, buf: str, out: list[int]) -> int:
    """:func:`encode_decided` for a tokenizer.json's pipeline: what comes before an added
    token that always splits the text there (``Encoder.cut_specials``), and then before the
    last letter cut of its rules (``cut_rules``: the pattern's, kept only where the pipeline's
    normalizer changes nothing) that no special token's match runs across. Its pieces are
    encoded afresh (``encode_text``): at such a cut, the text on either side splits alone
    as it does in the whole."""
    cuts, pos = enc.cut_specials, 0
    for _, b, special in cuts.segments(buf):
        if special is None or b + cuts.longest > len(buf):
            break
        pos = b
    # The letter cut must have its next character in, and a special token across it whole.
    hi = len(buf) - max(enc.specials.longest - 1, 1)
    pos = max(pos, last_letter_cut(buf, pos, hi, enc.specials, enc.cut_rules))
    if pos:
        out += encode_text(enc, buf[:pos])
    return pos


def encode_text(enc: Encoder, text: str) -> list[int]:
    """The ids of ``text``, every special token of the tokenizer encoded as one (as
    ``Tokenizer.encode(text)``), surrogates as ``encode`` encodes them."""
    try:
        return enc.array(text, enc.specials).tolist()
    except UnicodeEncodeError:
        return enc.array(replace_surrogates(text), enc.specials).tolist()


def encode_iterable(enc: Encoder, iterable: Iterable[str]) -> Iterator[int]:
    """Lazily yield the ids of ``"".join(iterable)``, holding only a bounded tail of text
    (see ``Tokenizer.encode_iterable``)."""
    iterable = _pieces(text_chunks(iterable))
    pending: list[str] = []
    pending_len = 0
    tail = ""
    block = STREAM_BLOCK
    before = _Consumed()  # the text before ``tail``, for naming a place in the stream
    for chunk in iterable:
        pending.append(chunk)
        pending_len += len(chunk)
        if pending_len >= block:
            buf = tail + "".join(pending)
            pending.clear()
            pending_len = 0
            out: list[int] = []
            try:
                try:
                    done = encode_decided(enc, buf, out)
                except UnicodeEncodeError:
                    buf = _replace_all_but_last_high(buf)
                    out = []
                    done = encode_decided(enc, buf, out)
            except UncoveredText as e:
                raise before.uncovered(enc, buf, e) from None
            before.add(buf[:done])
            tail = buf[done:]
            yield from out
            # subtle: a pre-token longer than a block (a huge run of spaces) stays in the
            # tail; growing the block keeps re-scanning it from turning quadratic.
            block = max(STREAM_BLOCK, 2 * len(tail))
    last = tail + "".join(pending)
    try:
        ids = encode_text(enc, last)
    except UncoveredText as e:
        raise before.uncovered(enc, last, e) from None
    yield from ids


def text_chunks(source: Iterable[str]) -> Iterator[str]:
    """``source``'s chunks of text (a file object's read in blocks: :func:`_blocks`); a
    chunk that is no str is a TypeError naming its type."""
    for chunk in _blocks(source):
        if not isinstance(chunk, str):
            raise TypeError(f"encode_iterable expects str chunks, got {type(chunk).__name__}")
        yield chunk


def _pieces(chunks: Iterable[str]) -> Iterator[str]:
    """``chunks`` with any longer than ``STREAM_BLOCK`` characters cut into pieces of that
    length. A chunk may be a whole file's text (one line of a generator over a file with no
    line breaks); encoded as one buffer, its ids all existed at once, ~25 bytes a character.
    Cut, it costs what any stream of chunks costs, with the same ids (a cut between a
    surrogate pair is one the stream mends, as between a caller's own chunks)."""
    for chunk in chunks:
        if len(chunk) > STREAM_BLOCK:
            for at in range(0, len(chunk), STREAM_BLOCK):
                yield chunk[at : at + STREAM_BLOCK]
        else:
            yield chunk


def _blocks(source: Iterable[str]) -> Iterable[str]:
    """``source`` as the chunks to encode: a file object's text read in blocks of
    ``STREAM_BLOCK`` characters, any other iterable as it is.

    subtle: a text file iterates by lines, and a line may be the whole file (minified code,
    base64, one JSON document). Not every text file is an io.TextIOBase (tempfile's
    wrappers, codecs.open's reader, whose readline is quadratic on a long line), so anything
    whose ``read`` gives text is read so; its first block says which it gives."""
    read = getattr(source, "read", None)
    if not callable(read):
        return source
    read = _naming_the_file(source, read)
    try:
        first = read(STREAM_BLOCK)
    except TypeError:
        if isinstance(source, io.IOBase) or not hasattr(source, "__iter__"):
            raise
        return source  # a read() that takes no size is no file's: the chunks it iterates
    if not isinstance(first, str):
        raise TypeError(
            f"encode_iterable expects str chunks, got {type(first).__name__} from "
            f"{type(source).__name__}.read(): open the file in text mode "
            "(encoding='utf-8', newline='')"
        )
    return itertools.chain([first], iter(partial(read, STREAM_BLOCK), ""))


def _naming_the_file(source: object, read: Callable[[int], str]) -> Callable[[int], str]:
    """``read``, whose UnicodeDecodeError (a file that is not UTF-8) also says where in the
    file and which file: the codec's position is in the block it was decoding."""

    def reading(size: int) -> str:
        try:
            return read(size)
        except UnicodeDecodeError as error:
            raise _in_file(source, error) from None

    return reading


def _in_file(source: object, error: UnicodeDecodeError) -> UnicodeDecodeError:
    name = getattr(source, "name", None)
    where = f" of {name}" if isinstance(name, str) else ""
    try:
        # subtle: the decoder was given the block just read (and any bytes of a character
        # the block before cut short), so the file's position is just past them.
        offset = source.buffer.tell() - len(error.object) + error.start  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        offset = None
    if offset is None or offset < 0:
        if not where:
            return error
        reason = f"{error.reason}, in{where}"
    else:
        reason = f"{error.reason}, at byte {offset:,}{where}"
    return UnicodeDecodeError(error.encoding, error.object, error.start, error.end, reason)


class _Consumed:
    """How much of a stream has been encoded and let go: characters, line breaks, and the
    characters since the last line break, so that an error names a place in the whole
    stream rather than in the buffer it was found in."""

    def __init__(self) -> None:
        self.chars = self.lines = self.column = 0

    def add(self, text: str) -> None:
        self.chars += len(text)
        breaks = text.count("\n")
        self.lines += breaks
        self.column = len(text) - text.rfind("\n") - 1 if breaks else self.column + len(text)

    def uncovered(self, enc: Encoder, buf: str, found: UncoveredText) -> UncoveredText:
        """The error for the first character of ``buf`` the pre-tokenizer leaves out
        (``found`` as it is where that is not the pattern's own matching: a pipeline)."""
        a, b = enc.uncovered_stretch(buf, enc.specials)
        at = first_uncovered(enc.pre.compiled, buf, a, b)
        if at < 0:
            return found
        line = self.lines + buf.count("\n", 0, at) + 1
        newline = buf.rfind("\n", 0, at)
        column = at - newline if newline >= 0 else self.column + at + 1
        where = f"character {self.chars + at} (line {line}, column {column}) of the text"
        return UncoveredText(uncovered_message(enc.pre.pattern, buf[at], where))
