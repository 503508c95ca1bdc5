"""How a corpus uses a vocabulary: each token's count, the tokens it never uses, and the
under-trained candidates among them.

What it does: :func:`corpus_usage` encodes a corpus (any the trainer reads, streamed, in
worker processes: ``corpus_pass``) and counts every id; of the ordinary tokens it never got,
it says which hold bytes that occur inside tokens it did get, which only across tokens, and
which never occur (``undertrained``; the last two need a second, cheaper pass over the text,
for only the tokens the bytes it holds cannot rule out). :class:`CorpusUsage` answers with a
:class:`~.vocabulary.TokenTable`: used and unused tokens, the ranking by count, the unused ones
by category. What it leaves out: the vocabulary's own make-up (``vocabulary``), anything
drawn.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import struct
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from ..corpus.counting import resolve_workers
from ..corpus.records import DEFAULT_TEXT_FIELD
from ..corpus.sources import (
    CorpusFile,
    changes_first,
    check_text_field,
    check_text_files,
    check_unchanged_files,
)
from ..corpus.tasks import corpus_files
from ..encode.foreign import AnyTokenizer, ForeignTokenizer
from ..encode.tokenizer import Tokenizer
from ..formats.hf.kind import backend_drops_text, noted_dropping
from ..text.display import readable_size
from .categories import BYTE_FALLBACK, CATEGORIES
from .corpus_pass import (
    Passes,
    TaskCounts,
    copied_first,
    count_task,
    dfa_pays,
    in_stored_bytes,
    scan_task,
    usage_tasks,
    whole_text_notes,
    write_patterns,
)
from .undertrained import inside_emitted, might_occur
from .vocabulary import TokenTable, token_table
from .work import CancelEvent, checkpoint, gc_paused

# progress(phase, done, total): phase "decompressing" (stored bytes of the compressed or
# remote files copied first, if any), "encoding" (stored bytes), then "scanning" (the same
# bytes again, when some unused tokens are looked for in the text).
UsageProgress = Callable[[str, int, int], None]
CorpusNames = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


@dataclass(frozen=True, eq=False)
class CorpusUsage:
    """A corpus encoded with one tokenizer: ``bytes`` of text (UTF-8), ``tokens`` (ids, special
    tokens included), ``counts`` (the count of each id, indexed by id) and, among the
    ordinary tokens never used, the ids whose bytes occur ``inside`` a token used, only
    ``across`` tokens, or are ``absent`` from the text (ascending; ``across`` and ``absent``
    are None when the text was not scanned). The text is what the tokenizer gives its model
    (``encoded_text``): normalized, and without what its pre-tokenizer drops, the text on
    either side of that apart, so a token met only there is ``absent``. A byte-fallback
    model's ``<0xNN>`` tokens are in none of the three: by design they are emitted only for a
    character no token holds, so one unused is no sign of under-training (their bytes are
    inside most used tokens: they would fill ``inside``); they are among the unused ids, as
    category ``byte fallback``."""

    files: tuple[str, ...]
    bytes: int
    tokens: int
    counts: np.ndarray  # int64, by id
    inside: tuple[int, ...]
    across: tuple[int, ...] | None
    absent: tuple[int, ...] | None
    seconds: float
    # The bytes of text no id stands for: a tokenizer.json whose pre-tokenizer removes text
    # (``HfPipeline.drops_text``) drops it, as tokenizers does; 0 for any other. None where
    # it drops text the ids' bytes cannot count (:func:`drops_uncounted`: a WordPiece's
    # spaces), not 0, which would say nothing was dropped; None too where its normalizer
    # deletes characters (``uncounted``).
    dropped: int | None = 0
    # What drops text ``dropped`` does not count, each as the views say it after "the
    # tokenizer's" (:func:`uncounted_words`), where a normalizer deletes characters (its
    # pre-tokenizer first, if it drops text too); else empty.
    uncounted: tuple[str, ...] = ()
    # The words a WordPiece model gave as its unknown token (that id's count): one id each,
    # not their text, which the scan leaves out as it leaves out text dropped (a token met
    # only there is ``absent``: not in the text kept, :func:`absent_words`); 0 for any other.
    unknown: int = 0

    @property
    def bytes_per_token(self) -> float | None:
        """The bytes of text kept (not ``dropped``) per token, of the whole text where
        ``dropped`` is None; None without tokens."""
        return (self.bytes - (self.dropped or 0)) / self.tokens if self.tokens else None

    def count(self, token_id: int) -> int:
        return int(self.counts[token_id]) if 0 <= token_id < len(self.counts) else 0

    def row_counts(self, table: TokenTable) -> np.ndarray:
        """The count of each of ``table``'s rows."""
        ids = table.ids
        out = np.zeros(len(ids), dtype=np.int64)
        known = ids < len(self.counts)
        out[known] = self.counts[ids[known]]
        return out

    def used(self, table: TokenTable) -> int:
        """Distinct ordinary tokens the corpus used."""
        return int(np.count_nonzero(self.row_counts(table)[~table.special]))

    def unused_ids(self, table: TokenTable) -> list[int]:
        """Ordinary tokens the corpus never used, ascending."""
        return table.ids[~table.special & (self.row_counts(table) == 0)].tolist()

    def ranked(self, table: TokenTable) -> tuple[np.ndarray, np.ndarray]:
        """The ordinary tokens used, by count (most used first, then by id): their ids and
        counts (the usage curve: count against rank)."""
        counts = self.row_counts(table)
        rows = np.flatnonzero(~table.special & (counts > 0))
        order = rows[np.lexsort((table.ids[rows], -counts[rows]))]
        return table.ids[order], counts[order]

    def unused_by_category(self, table: TokenTable) -> dict[str, list[int]]:
        """The unused ordinary tokens' ids by category (the largest first)."""
        rows = np.flatnonzero(~table.special & (self.row_counts(table) == 0))
        groups: dict[str, list[int]] = {}
        for code in np.unique(table.category[rows]).tolist():
            groups[CATEGORIES[code]] = table.ids[rows[table.category[rows] == code]].tolist()
        return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    def special_counts(self, table: TokenTable) -> dict[str, int]:
        """How often each special token occurred (as a special token)."""
        rows = np.flatnonzero(table.special)
        counts = self.row_counts(table)
        return {table.tokens[r].decode("utf-8", "replace"): int(counts[r]) for r in rows.tolist()}


def corpus_usage(
    tokenizer: AnyTokenizer,
    corpus: CorpusNames,
    *,
    table: TokenTable | None = None,
    workers: int | None = None,
    text_field: str = DEFAULT_TEXT_FIELD,
    scan: bool = True,
    records: str | None = None,
    progress: UsageProgress | None = None,
    cancel: CancelEvent | None = None,
    status: Callable[[str], None] | None = None,
    encoded: Callable[[CorpusUsage], None] | None = None,
) -> CorpusUsage:
    """Encode ``corpus`` (paths, globs, URLs; plain, compressed, JSONL or Parquet records,
    each record's ``text_field`` a document) with ``tokenizer`` in ``workers`` processes
    (None: every core) and count each id; see :class:`CorpusUsage`. ``table`` is
    ``tokenizer``'s (built if not given). ``scan=False`` leaves the text unscanned (no
    ``across``/``absent``). ``records`` as for ``train_bpe``: "jsonl" or "parquet" (every
    file holds records), "text" (none does), None (each name says).
    ``progress(phase, done, total)`` in stored bytes; ``cancel`` is looked at as each task
    ends (``work.Cancelled``); ``status(message)`` hears of the encoder's first compile
    on this machine (``kernel_start.COMPILING``) before it starts, and of a large plain-text
    file another kind of tokenizer encodes whole (``corpus_pass.whole_text_notes``);
    ``encoded(usage)``, where the text is to be scanned, hears the usage as the encoding pass
    left it (``across`` and ``absent`` None) before the scan starts, for a view to show it at
    once. A compressed or remote file is decompressed into a temporary folder first (as
    ``encode`` does; removed at the end, a cancel or an error too), then read in ranges:
    in parallel, each a step of progress and a point to cancel at. Errors name the file."""
    # subtle: the copies of compressed files (``_read_from``) are removed however it ends.
    with gc_paused(), ExitStack() as copies:
        return _corpus_usage(
            tokenizer,
            corpus,
            table=table,
            workers=workers,
            text_field=text_field,
            scan=scan,
            records=records,
            progress=progress,
            cancel=cancel,
            status=status,
            encoded=encoded,
            copies=copies,
        )


def _corpus_usage(
    tokenizer: AnyTokenizer,
    corpus: CorpusNames,
    *,
    table: TokenTable | None = None,
    workers: int | None = None,
    text_field: str = DEFAULT_TEXT_FIELD,
    scan: bool = True,
    records: str | None = None,
    progress: UsageProgress | None = None,
    cancel: CancelEvent | None = None,
    status: Callable[[str], None] | None = None,
    encoded: Callable[[CorpusUsage], None] | None = None,
    copies: ExitStack,
) -> CorpusUsage:
    start = time.perf_counter()
    files = corpus_files(corpus, records)
    check_text_field(files, text_field)
    check_text_files(files)
    workers = resolve_workers(workers)
    if table is None:
        table = token_table(tokenizer, cancel=cancel)
    else:
        _check_table(tokenizer, table)
    read, stored = _read_from(tokenizer, files, copies, progress, cancel)
    tasks = in_stored_bytes(usage_tasks(tokenizer, read, workers, text_field), stored)
    if status is not None:
        for note in whole_text_notes(tokenizer, tasks):
            status(note)
    total = sum(t.nbytes for t in tasks)
    counts = np.zeros(max(tokenizer.n_vocab, int(table.ids.max()) + 1), dtype=np.int64)
    singles = np.zeros(256, dtype=bool)
    pairs = np.zeros(1 << 16, dtype=bool)
    text_bytes = tokens = 0
    size = sum(f.size for f in read)
    with Passes(tokenizer, workers, size, status) as passes:
        done = 0
        if progress:
            progress("encoding", 0, total)
        part: TaskCounts
        with changes_first(files):
            for part in passes.run(count_task, tasks, scan, cancel=cancel):
                counts[part.ids] += part.counts  # a task's ids are distinct (np.flatnonzero)
                singles |= np.unpackbits(part.singles).astype(bool)
                pairs |= np.unpackbits(part.pairs).astype(bool)
                text_bytes += part.text_bytes
                tokens += part.tokens
                done += part.nbytes
                if progress:
                    progress("encoding", done, total)

        deleting = _deleting_words(tokenizer)
        if deleting and drops_uncounted(tokenizer):
            deleting = (f"pre-tokenizer {UNCOUNTED_WORDS}", *deleting)
        inside, maybe, absent = _unused_split(table, counts, (singles, pairs) if scan else None)

        def result(across: list[int] | None, absent: list[int] | None) -> CorpusUsage:
            return CorpusUsage(
                files=tuple(f.name for f in files),
                bytes=text_bytes,
                tokens=tokens,
                counts=counts,
                inside=tuple(inside),
                across=None if across is None else tuple(across),
                absent=None if absent is None else tuple(absent),
                seconds=time.perf_counter() - start,
                dropped=None if deleting else _dropped(tokenizer, counts, text_bytes),
                uncounted=deleting,
                unknown=_unknown_words(tokenizer, counts),
            )

        across: list[int] | None = None
        check_unchanged_files(files)
        if scan and encoded is not None:
            checkpoint(cancel)
            encoded(result(None, None))
        if scan:
            found: set[bytes] = set()
            if maybe:
                patterns = sorted(maybe)
                with tempfile.TemporaryDirectory(prefix="bpe-studio-") as folder:
                    kept = os.path.join(folder, "patterns.pickle")
                    write_patterns(patterns, kept)
                    per_process = total // (passes.workers if passes.parallel else 1)
                    dfa = dfa_pays(per_process, len(patterns))
                    done = 0
                    if progress:
                        progress("scanning", 0, total)
                    for hits, nbytes in passes.run(scan_task, tasks, kept, dfa, cancel=cancel):
                        found.update(patterns[i] for i in hits)
                        done += nbytes
                        if progress:
                            progress("scanning", done, total)
            across = sorted(i for b in found for i in maybe[b])
            absent = sorted(absent + [i for b, ids in maybe.items() if b not in found for i in ids])
    checkpoint(cancel)
    check_unchanged_files(files)
    return result(across, absent if scan else None)


def _read_from(
    tokenizer: AnyTokenizer,
    files: Sequence[CorpusFile],
    copies: ExitStack,
    progress: UsageProgress | None,
    cancel: CancelEvent | None,
) -> tuple[list[CorpusFile], dict[str, int]]:
    """The files to read: each compressed or remote one that is better read from a local copy
    (``corpus_pass.copied_first``) copied into a temporary folder ``copies`` removes, progress
    ("decompressing", in bytes as stored) told and ``cancel`` looked at as it is read; and
    each copy's url with the stored size of the file it is a copy of."""
    wanted = {i for i, f in enumerate(files) if copied_first(tokenizer, f)}
    if not wanted:
        return list(files), {}
    folder = copies.enter_context(tempfile.TemporaryDirectory(prefix="bpe-studio-"))
    total = sum(files[i].size for i in wanted)
    done = 0

    def counted(n: int) -> None:
        nonlocal done
        done += n
        checkpoint(cancel)
        if progress:
            progress("decompressing", done, total)

    read, stored = [], {}
    for i, f in enumerate(files):
        if i in wanted:
            f_copy = f.copied_to(os.path.join(folder, f"{i}.{f.kind.value}"), counted)
            stored[f_copy.url] = f.size
            f = f_copy
        read.append(f)
    return read, stored


def dropped_words(dropped: int, total: int) -> str:
    """How much of a text of ``total`` bytes a tokenizer dropped (``CorpusUsage.dropped``),
    in the words every view uses after naming what dropped it.

    >>> dropped_words(1500, 2000).split(":")[0]
    "left out 1.50 kB of the text's 2.00 kB (75%)"
    """
    share = dropped / total if total else 0.0
    percent = "under 1%" if share < 0.01 else f"{share:.0%}"
    return (
        f"left out {readable_size(dropped)} of the text's {readable_size(total)} ({percent}): "
        "dropped, as tokenizers drops it; no id stands for it"
    )


def absent_words(usage: CorpusUsage | None) -> str:
    """What every view calls where the ``absent`` tokens' bytes are not: the text (no usage
    yet), or, for a tokenizer that drops text (``dropped`` not 0) or gave words as its
    unknown token (``unknown``), the text kept: bytes met only in what it drops or gives so,
    or across it, are in no text its model is given.

    >>> absent_words(CorpusUsage((), 9, 2, np.zeros(1), (), (), (), 0.0, dropped=4))
    'not in the text kept'
    """
    if usage is None or (usage.dropped == 0 and not usage.unknown):
        return "not in the text"
    return "not in the text kept"


def unknown_words(unknown: int) -> str:
    """What every view says, after "the tokenizer's", of the words a WordPiece model gave as
    its unknown token (``CorpusUsage.unknown``).

    >>> unknown_words(3)
    'WordPiece model gave 3 words as its unknown token (one id each, not their text)'
    """
    words = "word" if unknown == 1 else "words"
    return (
        f"WordPiece model gave {unknown:,} {words} as its unknown token (one id each, not "
        "their text)"
    )


# What every view says after naming a pre-tokenizer whose dropped text is not counted
# (``CorpusUsage.dropped`` None), and the ratio's caveat then.
UNCOUNTED_WORDS = (
    "drops text, as tokenizers does (no id stands for it): not counted, as the ids' bytes "
    "cannot tell how much"
)
WHOLE_INPUT = "of the whole input, the text dropped not counted out"


def uncounted_words(usage: CorpusUsage) -> list[str]:
    """What every view says, after "the tokenizer's", of the text ``usage`` drops and does
    not count (``dropped`` None): its pre-tokenizer's drops, its normalizer's deletions.

    >>> [s.split(":")[0] for s in uncounted_words(CorpusUsage((), 9, 2, np.zeros(1), (), (),
    ...     (), 0.0, dropped=None))]
    ['pre-tokenizer drops text, as tokenizers does (no id stands for it)']
    """
    if usage.dropped is not None:
        return []
    return list(usage.uncounted) or [f"pre-tokenizer {UNCOUNTED_WORDS}"]


# Normalizers (their JSON ``type``) that may delete characters: the accents NFD splits off, a
# Replace by "", the spaces at either end, BertNormalizer's control characters (clean_text)
# and accents (strip_accents, which follows lowercase where null), a SentencePiece charsmap's
# rules that replace characters by nothing (``_charsmap_deletes``).
def _deletes(normalizer: dict[str, object]) -> bool:
    kind = normalizer.get("type")
    if kind == "BertNormalizer":
        accents = normalizer.get("strip_accents")
        return bool(
            normalizer.get("clean_text")
            or accents
            or (accents is None and normalizer.get("lowercase"))
        )
    if kind == "Replace":
        return normalizer.get("content") == ""
    if kind == "Precompiled":
        return _charsmap_deletes(normalizer.get("precompiled_charsmap"))
    return kind in ("StripAccents", "Strip")


def _charsmap_deletes(charsmap: object) -> bool:
    """Whether a Precompiled normalizer's charsmap (base64 of SentencePiece's: the trie's
    size in bytes, the trie, then each distinct replacement once, ended by a NUL, in sorted
    order, as its ``Builder::CompileCharsMap`` writes them) holds the empty replacement: a
    rule that deletes (nmt_nfkc's control characters). The empty one sorts first; a charsmap
    not read so is taken to delete, said not counted rather than 0; none (null, "") maps
    nothing."""
    if charsmap is None or charsmap == "":
        return False
    try:
        data = base64.b64decode(str(charsmap), validate=True)
        (size,) = struct.unpack_from("<I", data)
    except (binascii.Error, ValueError, struct.error):
        return True
    replacements = data[4 + size :]
    return replacements.startswith(b"\0") or b"\0\0" in replacements


def _deleting_words(tokenizer: AnyTokenizer) -> tuple[str, ...]:
    """What :attr:`CorpusUsage.uncounted` says of ``tokenizer``'s normalizer
    (:func:`deleting_words`)."""
    if isinstance(tokenizer, ForeignTokenizer):
        steps = tokenizer.backend.normalizer  # (its JSON alone: the file's may be large)
        return deleting_words(None if steps is None else json.loads(steps.__getstate__()))
    if tokenizer.hf_pipeline is not None:
        return deleting_words(json.loads(tokenizer.hf_pipeline.spec)[0])
    return ()


def deleting_words(normalizer: object) -> tuple[str, ...]:
    """What every view says, after "the tokenizer's", of a ``normalizer`` (its JSON) a step of
    which deletes characters (named by its type): no id stands for them, and the ids' bytes
    cannot tell how many, as the normalizer changes the text otherwise too; else nothing.

    >>> deleting_words({"type": "Replace", "content": ""})[0].split(":")[0]
    'normalizer (Replace) deletes characters (no id stands for them)'
    """
    pending, named = [normalizer], []
    while pending:
        step = pending.pop(0)
        if not isinstance(step, dict):
            continue
        if step.get("type") == "Sequence":
            pending[:0] = step.get("normalizers") or []
        elif _deletes(step):
            named.append(str(step.get("type")))
    if not named:
        return ()
    return (
        f"normalizer ({', '.join(dict.fromkeys(named))}) deletes characters (no id stands "
        "for them): not counted, as the ids' bytes cannot tell how much",
    )


def drops_uncounted(tokenizer: AnyTokenizer) -> bool:
    """Whether ``tokenizer`` drops text where the bytes of its ids do not tell how much:
    ``tokenizers`` runs it (a WordPiece's, Unigram's or character-level BPE's tokens are not
    the text's bytes: "##ing"; a byte-level file's normalizer may change them) and its
    pre-tokenizer's probe finds text dropped; or its own pipeline removes text behind a
    normalizer or a prefix space, as its loading note says (a step that removes text may
    remove none)."""
    if isinstance(tokenizer, ForeignTokenizer):
        return backend_drops_text(tokenizer.backend)
    pipeline = tokenizer.hf_pipeline
    return (
        noted_dropping(tokenizer.notes)
        and pipeline is not None
        and pipeline.removes_text
        and not pipeline.drops_text
    )


def _dropped(tokenizer: AnyTokenizer, counts: np.ndarray, text_bytes: int) -> int | None:
    """How many of ``text_bytes`` no id stands for (``CorpusUsage.dropped``): the text's
    bytes less those of the ids ``counts`` counts, for a tokenizer that drops text; None
    where that cannot be counted (:func:`drops_uncounted`)."""
    if drops_uncounted(tokenizer):
        return None
    pipeline = tokenizer.hf_pipeline if isinstance(tokenizer, Tokenizer) else None
    if pipeline is None or not pipeline.drops_text:
        return 0
    lengths = np.zeros(len(counts), dtype=np.int64)
    for idx, token in tokenizer.vocab.items():
        if idx < len(lengths):
            lengths[idx] = len(token)
    return max(text_bytes - int(counts @ lengths), 0)


def _unknown_words(tokenizer: AnyTokenizer, counts: np.ndarray) -> int:
    """How many words ``tokenizer``'s WordPiece model gave as its unknown token (the scan
    leaves them out: ``encoded_text``): that id's count; 0 for any other model."""
    if not isinstance(tokenizer, ForeignTokenizer):
        return 0
    import tokenizers  # (installed wherever a ForeignTokenizer exists; slow to import)

    model = tokenizer.backend.model
    if not isinstance(model, tokenizers.models.WordPiece):
        return 0
    unk = tokenizer.backend.token_to_id(model.unk_token)
    return int(counts[unk]) if unk is not None and 0 <= unk < len(counts) else 0


def _check_table(tokenizer: AnyTokenizer, table: TokenTable, samples: int = 64) -> None:
    """ValueError when ``table`` is not ``tokenizer``'s: another tokenizer's table counted the
    ids against other tokens (17 used of 50,256 where 16 of 276 was right). A sample of its
    rows, spread over it, is compared with the tokenizer's own tokens (byte-level BPE's: other
    kinds show their tokens as their library spells them)."""
    if not isinstance(tokenizer, Tokenizer):
        return
    step = max(1, len(table) // samples)
    for row in range(0, len(table), step):
        token_id = int(table.ids[row])
        try:
            held: bytes | None = tokenizer.decode_single_token_bytes(token_id)
        except (KeyError, ValueError):
            held = None
        if held != table.tokens[row]:
            raise ValueError(
                f"table: id {token_id} is {table.tokens[row]!r} there but {held!r} in the "
                "tokenizer: the table is another tokenizer's (token_table(tokenizer) builds "
                "this one's)"
            )


def _unused_split(
    table: TokenTable, counts: np.ndarray, masks: tuple[np.ndarray, np.ndarray] | None
) -> tuple[list[int], dict[bytes, list[int]], list[int]]:
    """The unused ordinary ids (byte-fallback tokens left out) whose bytes occur inside a
    used token; the others' ids by their bytes, those that might occur in the text (its bytes
    and byte pairs: ``masks``); and the ids of those that cannot. Without ``masks`` (no scan
    follows), the first only: the other two come back empty."""
    row_counts = np.zeros(len(table.ids), dtype=np.int64)
    known = table.ids < len(counts)
    row_counts[known] = counts[table.ids[known]]
    tokens = table.tokens
    # A special token is one id: a model never sees its bytes as text, so 'end' met only
    # inside <|endoftext|> is not inside a used token.
    used = [tokens[r] for r in np.flatnonzero((row_counts > 0) & ~table.special).tolist()]
    candidate = ~table.special & (table.category != BYTE_FALLBACK)  # see CorpusUsage
    rows = np.flatnonzero(candidate & (row_counts == 0))
    unused = [tokens[r] for r in rows.tolist()]
    ids = table.ids[rows].tolist()
    # subtle: the parent runs this alone while the workers wait for the scan it prepares, so
    # the common case (no two unused tokens with the same bytes) is one comprehension; a
    # vocabulary that lists a string twice takes the loop.
    by_bytes = {t: [i] for t, i in zip(unused, ids)}
    if len(by_bytes) < len(unused):
        by_bytes = {}
        for t, i in zip(unused, ids):
            by_bytes.setdefault(t, []).append(i)
    empty = by_bytes.pop(b"", [])  # an empty entry occurs nowhere
    within = inside_emitted(list(by_bytes), used)
    inside = sorted(i for b in within for i in by_bytes[b])
    if masks is None:
        return inside, {}, []
    singles, pairs = masks
    rest = [b for b in by_bytes if b not in within]
    maybe: dict[bytes, list[int]] = {}
    ruled_out: list[int] = []
    for b, ok in zip(rest, might_occur(rest, singles, pairs).tolist()):
        if ok:
            maybe[b] = by_bytes[b]
        else:
            ruled_out += by_bytes[b]
    return inside, maybe, sorted(empty + ruled_out)
