"""One pass of a report over a corpus: its tasks, what a worker does with one, and the pool.

What it does: :func:`usage_tasks` cuts any corpus the trainer reads (``corpus.sources``:
plain or compressed files, globs, URLs, JSONL and Parquet records) into tasks
(``corpus.tasks.CountTask``): byte ranges of a plain file cut where the tokenizer's ids
cannot change (its own cut rules, as ``encode_file`` cuts), line ranges of a plain JSONL
file, one Parquet row group, one whole compressed or remote file, read as a stream. A
compressed or remote file of text or JSONL records is best copied first (:func:`copied_first`,
``CorpusFile.copied_to``, as ``encode`` does): then its ranges are tasks too, run in
parallel, each a step of progress and a point to cancel at (:func:`in_stored_bytes` keeps
progress in bytes as stored). Two
things are done with a task, in this process or in a pool of worker processes
(:class:`Passes`):

- :func:`count_task` encodes its text and counts each id (a sparse array back), the text's
  bytes, and, when a scan follows, which byte pairs occur in it (a filter for the scan);
- :func:`scan_task` finds which of a list of byte strings occur in its text (Aho-Corasick,
  ``ahocorasick_rs``; a DFA where the text a process scans is long enough to pay for building
  one, :func:`dfa_pays`), none across two documents.

A record's text is a document of its own, as in training. Memory is bounded by a task: a
range of at most ``CHUNK_BYTES``, a row group, or a stream's block.
What it leaves out: what the counts mean (``usage``, ``undertrained``).
"""

from __future__ import annotations

import bisect
import codecs
import gc
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from itertools import accumulate, islice
from typing import Any, TypeVar

import numpy as np

from ..corpus.counting import (
    decode_chunk,
    mp_context,
    not_utf8,
    pool_start_explained,
    start_worker,
)
from ..corpus.records import Place, jsonl_documents, parquet_documents
from ..corpus.sources import CorpusFile, Kind
from ..corpus.stamps import read_range
from ..corpus.tasks import CountTask, make_tasks
from ..encode.encode_file import CHUNK_BYTES, PARALLEL_MIN_BYTES, PREPARE_MIN_BYTES, encode_range
from ..encode.foreign import AnyTokenizer, ForeignTokenizer
from ..encode.merging import kernel_start
from ..io.interrupts import completed, held_interrupts, no_check
from ..io.worker_pool import WorkerPool
from ..pretokenization.pretokenizer import UncoveredText
from ..text.surrogates import replace_surrogates
from .encoded_text import SHRINK, Given, adds_spaces, given_of, given_range, normalizes
from .work import CancelEvent, checkpoint

# Tasks hold at most encode_file's CHUNK_BYTES, fewer for a small corpus (so every worker
# gets some) but not below this; PARALLEL_MIN_BYTES and PREPARE_MIN_BYTES are encode_file's
# too: usage is measured against encoding with the same workers (issue 36).
MIN_TASK_BYTES = 256 * 1024
# A stream is read, and records' texts are gathered, this many bytes at a time.
BLOCK = 4 * 1024 * 1024
# Ids counted at a time from a stream.
IDS_BLOCK = 1 << 20
# Records longer than this many characters are encoded in pieces (``_count_long``).
LONG_RECORD = 1 << 20

# A scan's DFA is built only where each process scans at least this many bytes of text per
# string looked for (see dfa_pays).
DFA_BYTES_PER_PATTERN = 2 * 1024
# A plain-text file a tokenizer of another kind encodes whole (``usage_tasks``) is said, from
# this size on, to need about WHOLE_TEXT_MEMORY times its size: tokenizers holds the whole
# text's encoding at once (every token's string and offsets, the normalized text's alignment);
# 10 MB of English took 1.07 GB under a Llama-2-shaped file (README, "bpe-studio inspect").
WHOLE_TEXT_NOTE_BYTES = 64 * 1024 * 1024
WHOLE_TEXT_MEMORY = 100

# The tokenizer of a pool's worker (``_init_worker``), and its last automaton (scan_task):
# the patterns' file, whether a DFA, the automaton and the longest pattern's length.
_worker_tokenizer: AnyTokenizer | None = None
_automaton: tuple[str, bool, tuple[Any, int]] | None = None
_special_automaton: tuple[tuple[str, ...], tuple[Any, int]] | None = None
T = TypeVar("T")


@dataclass(frozen=True)
class TaskCounts:
    """What :func:`count_task` found in one task: the ids it used (ascending) and how often,
    the text's bytes (UTF-8) and ids, and the bytes and byte pairs of its text (masks of 256
    and of 65,536 entries, ``first << 8 | second``, packed into bits; all False when not
    asked for)."""

    ids: np.ndarray  # uint32
    counts: np.ndarray  # int64
    text_bytes: int
    tokens: int
    singles: np.ndarray  # uint8, np.packbits of the mask
    pairs: np.ndarray  # uint8, np.packbits of the mask
    nbytes: int  # the task's stored bytes, for progress


def usage_tasks(
    tokenizer: AnyTokenizer, files: Sequence[CorpusFile], workers: int, field: str
) -> list[CountTask]:
    """The tasks of ``files`` for ``tokenizer`` (see the module docstring). A tokenizer of
    another kind than byte-level BPE encodes a plain file whole: where its text may be cut is
    its own affair."""
    size = sum(f.size for f in files)
    target = min(CHUNK_BYTES, max(MIN_TASK_BYTES, size // (4 * workers)))
    if isinstance(tokenizer, ForeignTokenizer):
        tasks = []
        for f in files:
            if f.kind is Kind.TEXT:
                tasks.append(CountTask(f, nbytes=f.size, field=field))
            else:
                tasks += make_tasks([f], target, [], "gpt2", field)
        return tasks
    specials = list(tokenizer.cut_specials.tokens)
    # subtle: the tokenizer's own rules, as encode_file cuts by: its pattern's alone would
    # ignore a normalizer, and give nothing for a pipeline's Splits (one task a file).
    return make_tasks(files, target, specials, tokenizer.pattern, field, tokenizer.cut_rules)


def copied_first(tokenizer: AnyTokenizer, f: CorpusFile) -> bool:
    """Whether ``f`` is read from a local plain copy (``CorpusFile.copied_to``) rather than
    as one stream: a compressed or remote file of JSON Lines records, or of text for
    byte-level BPE (a tokenizer of another kind encodes a text file whole either way)."""
    if f.plain_local or f.kind is Kind.PARQUET:
        return False
    return f.kind is Kind.JSONL or not isinstance(tokenizer, ForeignTokenizer)


def in_stored_bytes(tasks: Sequence[CountTask], stored: Mapping[str, int]) -> list[CountTask]:
    """``tasks`` with each range of a copy (``stored``: the copy's url -> the stored size of
    the file it is a copy of) standing for its share of the stored bytes, so that a copy's
    tasks add up to its file's stored size, as one stream's task did."""
    out = []
    for task in tasks:
        size = stored.get(task.file.url)
        text = task.file.size
        if size is None or task.end is None or not text:
            out.append(task)
            continue
        nbytes = size * task.end // text - size * task.start // text
        out.append(replace(task, nbytes=nbytes))
    return out


def whole_text_notes(tokenizer: AnyTokenizer, tasks: Sequence[CountTask]) -> list[str]:
    """One line for each plain-text file of ``WHOLE_TEXT_NOTE_BYTES`` or more that
    ``tokenizer`` (another kind than byte-level BPE) encodes whole: its name, the memory it
    will take, and that records are encoded one by one. Cutting the text would change the
    ids (Llama 2's normalizer puts "▁" before each text it is given), so it is not cut."""
    if not isinstance(tokenizer, ForeignTokenizer):
        return []
    notes = []
    for task in tasks:
        f = task.file
        if f.kind is Kind.TEXT and task.end is None and f.size >= WHOLE_TEXT_NOTE_BYTES:
            need = WHOLE_TEXT_MEMORY * f.size / 1e9
            notes.append(
                f"{f.name}: a {tokenizer.kind} tokenizer encodes a plain-text file whole, in "
                f"one call and one process: {f.size / 1e6:,.0f} MB will take about "
                f"{need:,.1f} GB of memory; records (.jsonl, one document per record) are "
                "encoded one by one"
            )
    return notes


# ------------------------------------------------------------------ reading
def _documents(task: CountTask, place: Place | None = None) -> Iterator[str]:
    """The texts of the records of a JSONL or Parquet task (``place`` told each one's)."""
    f = task.file
    if task.group is not None:
        with f.open() as stream:
            yield from parquet_documents(stream, f.name, task.group, task.field, place)
    elif task.end is not None:
        first = _first_line(f.url, task.start)
        with open(f.url, "rb") as stream:
            stream.seek(task.start)
            lines = _lines_within(stream, task.end - task.start)
            yield from jsonl_documents(lines, f.name, task.field, lambda i: first + i, place)
    else:
        with f.open() as stream:
            yield from jsonl_documents(stream, f.name, task.field, place=place)


def _first_line(path: str, offset: int) -> int:
    """The number (from 1) of the line starting at byte ``offset`` of ``path``."""
    with open(path, "rb") as f:
        return 1 + sum(block.count(b"\n") for block in _blocks(f, offset))


def _blocks(f: Any, size: int) -> Iterator[bytes]:
    while size > 0:
        block = f.read(min(BLOCK, size))
        if not block:
            return
        size -= len(block)
        yield block


def _lines_within(f: Iterable[bytes], size: int) -> Iterator[bytes]:
    for line in f:
        if size <= 0:
            return
        size -= len(line)
        yield line


def _utf8(text: str) -> bytes:
    """``text`` as the tokenizers encode it: a surrogate (from a JSON escape) as they do."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return replace_surrogates(text).encode("utf-8")


def _stream_text(stream: Any, name: str, seen: Callable[[bytes], None]) -> Iterator[str]:
    """A stream's text a block at a time; ``seen`` is given each block's bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    read = 0
    while True:
        block = stream.read(BLOCK)
        pending = len(decoder.getstate()[0])
        try:
            text = decoder.decode(block, final=not block)
        except UnicodeDecodeError as e:
            raise not_utf8(name, read - pending + e.start, e.reason) from None
        read += len(block)
        seen(block)
        if text:
            yield text
        if not block:
            return


# ----------------------------------------------------------------- counting
class _Tally:
    """Ids and text bytes seen so far in one task; with ``masks``, the bytes and byte pairs
    of its text too."""

    def __init__(self, size: int, masks: bool = True) -> None:
        self.masks = masks
        self.counts = np.zeros(size, dtype=np.int64)
        self.singles = np.zeros(256, dtype=bool)
        self.pairs = np.zeros(1 << 16, dtype=bool)
        self.text_bytes = 0
        self.tokens = 0
        self._last = b""  # the byte before the next text's: a pair may straddle two

    def ids(self, ids: np.ndarray) -> None:
        if len(ids):
            self.counts += np.bincount(ids, minlength=len(self.counts))[: len(self.counts)]
            self.tokens += len(ids)

    def text(self, data: bytes, after: bytes = b"", seen: bytes | None = None) -> None:
        """``data`` came next in the text; ``after``, the byte that follows it where
        another task reads on (the pair across the seam is this task's too). ``seen``: what
        the tokenizer encodes of ``data`` where its normalizers change it (``after`` then
        follows that): the masks are of the text encoded."""
        self.text_bytes += len(data)
        if not self.masks:
            return
        if seen is not None:
            data = seen
        if len(data) == 1:
            self.singles[data[0]] = True  # every other byte is in a pair
        joined = self._last + data + after
        if len(joined) > 1:
            # The pairs at even offsets and at odd ones, read in place as big-endian 16-bit
            # numbers (first << 8 | second): no array is made per task.
            even = len(joined) // 2 * 2
            self.pairs[np.frombuffer(joined, ">u2", count=even // 2)] = True
            self.pairs[np.frombuffer(joined, ">u2", count=(len(joined) - 1) // 2, offset=1)] = True
        self._last = data[-1:] or self._last

    def _singles(self) -> np.ndarray:
        """The bytes that occur: those of a pair, and that of a one-byte text."""
        grid = self.pairs.reshape(256, 256)
        return self.singles | grid.any(axis=1) | grid.any(axis=0)

    def result(self, nbytes: int) -> TaskCounts:
        used = np.flatnonzero(self.counts)
        return TaskCounts(
            used.astype(np.uint32),
            self.counts[used],
            self.text_bytes,
            self.tokens,
            np.packbits(self._singles()),
            np.packbits(self.pairs),
            nbytes,
        )


def count_task(tok: AnyTokenizer, task: CountTask, masks: bool = True) -> TaskCounts:
    """Encode one task's text with ``tok`` and count its ids; with ``masks``, note which bytes
    and byte pairs its text holds (only the scan needs them: without, they are all False).
    Errors name the file: invalid UTF-8, a record without its text field, text a custom
    pattern leaves unmatched."""
    # Where the tokenizer gives its model the corpus's characters, the masks are of the
    # corpus as it is: they hold every byte and byte pair of the stretches it gives.
    normalized = given_of(tok) if masks and normalizes(tok) else None
    # tokenizers' own normalizers run at about 10 MB/s: for a file it runs, the text is
    # normalized once, by the scan, and every byte and byte pair is taken to occur (the scan
    # reads the text whatever the masks rule out, and its cost hardly depends on how many
    # tokens it looks for).
    every = isinstance(tok, ForeignTokenizer) and normalized is not None
    if every:
        normalized = None
    tally = _Tally(tok.n_vocab, masks and not every)
    if masks and adds_spaces(tok):
        # The space put before each stretch or piece may precede any byte, and the one put
        # before a piece follow any: a superset of the pairs the model is given, at no cost
        # (the scan decides).
        tally.singles[0x20] = True
        tally.pairs[0x20 << 8 : 0x21 << 8] = True
        tally.pairs[0x20::256] = True
    f = task.file
    if f.kind is not Kind.TEXT:
        docs: list[np.ndarray] = []
        gathered, seen = bytearray(), bytearray()
        place = Place()
        for doc in _documents(task, place):
            try:
                if len(doc) > LONG_RECORD and not isinstance(tok, ForeignTokenizer):
                    _count_long(tok, doc, tally)
                else:
                    docs.append(tok.encode_array(doc, "uint32"))
            except UncoveredText as e:  # where in the corpus, not only in the text
                raise UncoveredText(f"{f.name}: {place.now}: {e}") from None
            gathered += _utf8(doc)
            if normalized is not None:
                seen += _utf8("".join(normalized(doc)))
            if len(gathered) >= BLOCK:
                if docs:  # (none when the block is one long record, counted already)
                    tally.ids(np.concatenate(docs))
                tally.text(bytes(gathered), seen=None if normalized is None else bytes(seen))
                docs, gathered, seen = [], bytearray(), bytearray()
        if docs:
            tally.ids(np.concatenate(docs))
        tally.text(bytes(gathered), seen=None if normalized is None else bytes(seen))
    elif task.end is not None and not isinstance(tok, ForeignTokenizer):
        tally.ids(encode_range(tok, f.url, task.start, task.end, "uint32", f.name))
        size = task.end - task.start
        if normalized is not None:
            # SHRINK bytes hold the next character whole: the first byte it normalizes to.
            with open(f.url, "rb") as stream:
                data = read_range(stream, task.start, task.end, f.name, extra=SHRINK)
            head, tail = given_range(normalized, data, size)
            tally.text(data[:size], b"".join(tail)[:1], seen=b"".join(head))
        elif masks:
            with open(f.url, "rb") as stream:
                data = read_range(stream, task.start, task.end, f.name, extra=1)
            tally.text(data[:size], data[size:])
        else:
            tally.text_bytes += size
    else:
        # (A byte-level tokenizer reads no plain text as a stream: ``copied_first``; the
        # masks of a stream are of its bytes as they are.)
        with f.open() as stream:
            if isinstance(tok, ForeignTokenizer):
                data = stream.read()
                text = decode_chunk(data, f.text_name, 0, with_line=True)
                tally.ids(tok.encode_array(text, "uint32"))
                tally.text(data)
            else:
                ids = tok.encode_iterable(_stream_text(stream, f.text_name, tally.text))
                try:
                    while len(block := np.fromiter(islice(ids, IDS_BLOCK), dtype=np.int64)):
                        tally.ids(block)
                except UncoveredText as e:
                    raise UncoveredText(f"{f.name}: {e}") from None
    if every:
        tally.singles[:] = True
        tally.pairs[:] = True
    return tally.result(task.nbytes)


def _count_long(tok: AnyTokenizer, doc: str, tally: _Tally) -> None:
    """Count the ids of a long record in blocks from ``encode_iterable`` (the same ids):
    encoded whole, a record cost about 20 bytes of memory a character."""
    pieces = (doc[i : i + LONG_RECORD] for i in range(0, len(doc), LONG_RECORD))
    ids = tok.encode_iterable(pieces)
    while len(block := np.fromiter(islice(ids, IDS_BLOCK), dtype=np.int64)):
        tally.ids(block)


# ----------------------------------------------------------------- scanning
def write_patterns(patterns: Sequence[bytes], path: str) -> None:
    """Keep the byte strings a scan looks for in ``path``, which the scanning processes read
    once each (sent with every task, tens of thousands of them would cost more than the
    scan)."""
    with open(path, "wb") as f:
        pickle.dump(list(patterns), f, protocol=pickle.HIGHEST_PROTOCOL)


def dfa_pays(bytes_per_process: int, patterns: int) -> bool:
    """Whether a scan in which each process searches ``bytes_per_process`` bytes for
    ``patterns`` strings should build a DFA rather than a contiguous NFA.

    The DFA searches faster on every kind of text (least on English, most on Chinese and
    code) but takes several times longer and about eight times the memory to build, in
    every process that scans; on English it pays from about 2 KB of text per pattern
    (benchmarks/RESULTS.md, "The usage scan on a new machine: what was tried").

    >>> dfa_pays(500_000_000, 60_000), dfa_pays(50_000_000, 60_000)
    (True, False)
    """
    return bytes_per_process >= DFA_BYTES_PER_PATTERN * patterns


def _matcher(path: str, dfa: bool) -> tuple[Any, int]:
    """The automaton of the patterns in ``path`` (``write_patterns``), a DFA or a contiguous
    NFA, built once per process, and their longest length."""
    global _automaton
    if _automaton is None or _automaton[:2] != (path, dfa):
        import ahocorasick_rs

        with open(path, "rb") as f:
            patterns = pickle.load(f)
        # A contiguous NFA is built in a twentieth of a second for 60,000 patterns, and
        # searched as fast as the library's default choice once built.
        kind = ahocorasick_rs.Implementation
        implementation = kind.DFA if dfa else kind.ContiguousNFA
        matcher = ahocorasick_rs.BytesAhoCorasick(patterns, implementation=implementation)
        _automaton = (path, dfa, (matcher, max(map(len, patterns), default=1)))
    return _automaton[2]


def _text_blocks(
    task: CountTask,
    overlap: int,
    margin: int = 0,
    given: Given | None = None,
) -> Iterator[tuple[bytes, list[int], int, int]]:
    """The task's text as UTF-8 bytes, a block at a time, with the offsets in each block
    where one document ends and another begins, and the offsets ``lo, hi`` where the matches
    this block decides start (every offset of the text is decided in exactly one block).
    Each match starting there (at most ``overlap + 1`` bytes) lies in the block whole, and so
    does every stretch of at most ``margin + 1`` bytes that overlaps it (a special token's
    text, which a block cut in two would not show as one). ``given``
    (``encoded_text.given_of``): the stretches the tokenizer gives its model as text instead
    of the text: each record's, and a range's and what is read past it, with the offsets
    where one stretch ends and the next begins among the documents' ends (no match runs
    across a token left out between them).
    """
    f = task.file
    if f.kind is not Kind.TEXT:
        gathered, ends = bytearray(), []
        for doc in _documents(task):
            for stretch in [doc] if given is None else given(doc):
                gathered += _utf8(stretch)
                ends.append(len(gathered))
            if len(gathered) >= BLOCK:
                yield bytes(gathered), ends, 0, len(gathered)
                gathered, ends = bytearray(), []
        yield bytes(gathered), ends, 0, len(gathered)
    elif task.end is not None:
        # A range starts and ends where text may be cut, never inside a special token.
        extra = overlap + margin
        if given is not None:
            extra = SHRINK * (extra + 1)  # normalized, still ``overlap + margin`` bytes
        with open(f.url, "rb") as stream:
            data = read_range(stream, task.start, task.end, f.name, extra=extra)
        if given is None:
            yield data, [], 0, task.end - task.start
        else:
            head, tail = given_range(given, data, task.end - task.start)
            stretches = head[:-1] + [head[-1] + tail[0]] + tail[1:]
            yield b"".join(stretches), _seams(stretches), 0, sum(map(len, head))
    elif given is not None:
        # A file another kind of tokenizer encodes whole (``usage_tasks``), given so:
        # normalizing it a block at a time could change the characters at each cut.
        with f.open() as stream:
            stretches = [_utf8(s) for s in given(stream.read().decode("utf-8"))]
        yield b"".join(stretches), _seams(stretches), 0, sum(map(len, stretches))
    else:
        # Each block repeats the end of the one before: the bytes its undecided matches start
        # in, and ``margin`` before them. (Only a file of a tokenizer with nothing to leave
        # out is read so: ``copied_first`` and ``given_of``.)
        with f.open() as stream:
            data = stream.read(BLOCK)
            lo = 0
            while data:
                more = stream.read(BLOCK)
                hi = max(lo, len(data) - overlap - margin) if more else len(data)
                yield data, [], lo, hi
                if not more:
                    break
                cut = max(0, hi - margin)
                data, lo = data[cut:] + more, hi - cut


def _seams(stretches: Sequence[bytes]) -> list[int]:
    """The offsets where each of ``stretches`` joined but the last ends."""
    return list(accumulate(map(len, stretches[:-1])))


def scan_task(
    tok: AnyTokenizer, task: CountTask, patterns: str, dfa: bool = False
) -> tuple[list[int], int]:
    """Indexes (into the list ``write_patterns`` kept in the file ``patterns``) of the byte
    strings that occur in the text ``tok`` gives its model as text (normalized, without the
    special tokens it takes: ``encoded_text``), not across two documents, and the task's
    stored bytes. ``dfa``: search with a DFA (:func:`dfa_pays`)."""
    matcher, longest = _matcher(patterns, dfa)
    given = given_of(tok)
    # Where nothing is given otherwise, the special tokens are found here, as ``Specials``
    # finds them: ordinary ones (read as text) too, which hide any other inside them.
    # (A file tokenizers runs with any added token has its stretches given.)
    every: tuple[str, ...] = ()
    ordinary: frozenset[str] = frozenset()
    if not isinstance(tok, ForeignTokenizer):
        every, ordinary = tok.specials.every, tok.specials.ordinary
    taken = every if given is None else ()
    specials, _ = _specials_matcher(taken)
    hidden = [s in ordinary for s in taken]
    # A range is read on past its end by the longest token's text, so that one there is
    # found whole, here or in the stretches given.
    margin = max((len(s.encode("utf-8")) for s in every), default=1) - 1
    found: set[int] = set()
    for data, ends, lo, hi in _text_blocks(task, longest - 1, margin, given):
        covered: tuple[list[int], list[int]] | None = None
        for index, start, end in matcher.find_matches_as_indexes(data, overlapping=True):
            if index in found or not lo <= start < hi:
                continue
            # No document boundary strictly inside the match.
            i = bisect.bisect_right(ends, start)
            if i != len(ends) and ends[i] < end:
                continue
            if specials is not None:
                # Nor a special token's text: it is one id, never text a model sees.
                if covered is None:
                    covered = _covered(specials, hidden, data, ends)
                j = bisect.bisect_left(covered[0], end) - 1
                if j >= 0 and covered[1][j] > start:
                    continue
            found.add(index)
    return sorted(found), task.nbytes


def _specials_matcher(specials: tuple[str, ...]) -> tuple[Any, int]:
    """An automaton of the special tokens' bytes (None for none) and the longest one's
    length, built once per process."""
    global _special_automaton
    if not specials:
        return None, 0
    if _special_automaton is None or _special_automaton[0] != specials:
        import ahocorasick_rs

        spelled = [s.encode("utf-8") for s in specials]
        found = ahocorasick_rs.BytesAhoCorasick(spelled), max(map(len, spelled))
        _special_automaton = (specials, found)
    return _special_automaton[1]


def _covered(
    specials: Any, hidden: Sequence[bool], data: bytes, documents: list[int]
) -> tuple[list[int], list[int]]:
    """The stretches of ``data`` where a special token is taken, as sorted starts and their
    ends: in each document (``documents`` are the offsets where one ends) from its start, the
    leftmost match and, of those starting there, the longest, as ``Specials`` matches them
    (a UTF-8 string's bytes found in UTF-8 text start at a character). A match of a token
    ``hidden`` (by index: an ordinary one) is taken as text: it covers nothing, but no match
    inside it is taken."""
    starts: list[int] = []
    ends: list[int] = []
    free = 0  # where the next match may start
    matches = specials.find_matches_as_indexes(data, overlapping=True)
    for index, start, end in sorted(matches, key=lambda m: (m[1], -m[2])):
        if start < free:
            continue
        i = bisect.bisect_right(documents, start)
        if i != len(documents) and documents[i] < end:
            continue  # spelled across two documents: text in each
        free = end
        if not hidden[index]:
            starts.append(start)
            ends.append(end)
    return starts, ends


# --------------------------------------------------------------------- pool
def prepare_encoder(tokenizer: AnyTokenizer, status: Callable[[str], None] | None = None) -> None:
    """Make ``tokenizer`` ready to encode a lot of text, as ``encode_file`` does: the compiled
    encoder's kernels loaded (compiled the first time on a machine, ``status`` told first)
    and its bulk tables built. Without this, a text shorter than ``encoder.PREPARE_CHARS``
    characters (a 2 MB task of Chinese or code) would take the Python path."""
    if isinstance(tokenizer, ForeignTokenizer):
        return
    kernel_start.prepare(status)
    tokenizer.prepare_bulk()


def _init_worker(tokenizer: AnyTokenizer, prepare: bool) -> None:
    global _worker_tokenizer, _automaton
    _worker_tokenizer, _automaton = tokenizer, None
    start_worker()
    # Encoding makes no reference cycles; the cyclic collector would only walk its caches.
    gc.disable()
    if prepare:
        # A forked worker inherits all of it (this costs nothing); a clean-started one loads
        # the kernels from the cache this process's prepare_encoder filled, and builds the
        # tables.
        prepare_encoder(tokenizer)


class Passes:
    """Runs tasks in this process or, for a corpus of ``PARALLEL_MIN_BYTES`` or more and
    more than one worker, in a pool of ``workers`` processes holding ``tokenizer`` (forked
    where that is safe: they share its tables; else it is sent to each). For a corpus of
    ``PREPARE_MIN_BYTES`` or more the tokenizer is made ready to encode in bulk first
    (:func:`prepare_encoder`, ``status`` told of a first compile), here and in each worker.
    Use it as a context manager; the pool is started on first use and stopped at the end."""

    def __init__(
        self,
        tokenizer: AnyTokenizer,
        workers: int,
        size: int,
        status: Callable[[str], None] | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.parallel = workers > 1 and size >= PARALLEL_MIN_BYTES
        self.workers = workers
        self.prepare = size >= PREPARE_MIN_BYTES
        self._status = status
        self._pool: WorkerPool | None = None
        self._held = ExitStack()
        self._check: Callable[[], None] = no_check

    def __enter__(self) -> Passes:
        if self.prepare:
            # Before any worker forks: they inherit the kernels and share the tables.
            prepare_encoder(self.tokenizer, self._status)
        if self.parallel:
            # Ctrl-C held while the pool may run, raised between two results (and, if it
            # came after the last, once the pool is shut down).
            self._check = self._held.enter_context(held_interrupts())
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pool is not None:
            # Queued tasks (cancelled, failed) are dropped, and the workers are waited for
            # (after Ctrl-C, a few seconds, then killed): the pool's threads end with them,
            # so this process may fork again (a process running threads does not:
            # ``mp_context``).
            self._pool.end(exc[1] if exc else None)
            self._pool = None
        self._held.__exit__(*exc)

    def run(
        self,
        job: Callable[..., T],
        tasks: Sequence[CountTask],
        *args: Any,
        cancel: CancelEvent | None = None,
    ) -> Iterator[T]:
        """``job(tokenizer, task, *args)`` of each task, in the order they finish;
        ``cancel`` is looked at as each finishes (``work.Cancelled``)."""
        if not self.parallel or (self._pool is None and len(tasks) < 2):
            # (a Ctrl-C held meanwhile is raised after the task, not when the block ends)
            for task in tasks:
                checkpoint(cancel)
                self._check()
                result = job(self.tokenizer, task, *args)
                self._check()
                yield result
            return
        context = mp_context()
        if self._pool is None:
            self._pool = WorkerPool(
                self.workers,
                mp_context=context,
                initializer=_init_worker,
                initargs=(self.tokenizer, self.prepare),
            )
        with pool_start_explained(context):
            futures = [self._pool.submit(_call, job, task, *args) for task in tasks]
            for future in completed(futures, self._check):
                checkpoint(cancel)
                if future.exception() is not None:
                    # The corpus's first error, not the first to finish: a worker reached
                    # line 7,575 before the other reached line 1 as often as not.
                    for earlier in futures[: futures.index(future)]:
                        if earlier.exception() is not None:  # (waits for it)
                            earlier.result()
                yield future.result()


def _call(job: Callable[..., T], task: CountTask, *args: Any) -> T:
    """In a worker: ``job`` with the worker's tokenizer."""
    assert _worker_tokenizer is not None
    return job(_worker_tokenizer, task, *args)
