"""``bpe-studio inspect SRC [--corpus FILE ...] [--against SRC2] [--json]``: what a tokenizer's
vocabulary is made of, how a corpus uses it, how much of it another tokenizer shares.

What it does: loads SRC (any ``--tokenizer`` source: presets, files, folders, ``hf:ORG/NAME``)
and reports its make-up (``core.explain.vocabulary``); with ``--corpus``, encodes the corpus
(any the trainer reads; ``-`` and pipes are copied to a file first) and reports its use of the
vocabulary and the under-trained candidates (``core.explain.usage``); with ``--against``,
compares the two vocabularies by their tokens' bytes (``core.explain.overlap``). A readable
summary goes to stdout, or with ``--json`` one JSON object (the README's "inspect --json"
lists every key); progress bars go to stderr.
What it leaves out: the analysis itself (``core.explain``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import ExitStack
from typing import Any

from ..core.corpus.sources import (
    DEFAULT_TEXT_FIELD,
    changes_first,
    check_text_field,
    check_text_files,
)
from ..core.corpus.tasks import corpus_files
from ..core.encode.foreign import AnyTokenizer
from ..core.encode.tokenizer import Tokenizer
from ..core.explain.categories import CATEGORIES, label
from ..core.explain.overlap import Overlap, overlap
from ..core.explain.usage import (
    WHOLE_INPUT,
    CorpusUsage,
    absent_words,
    corpus_usage,
    dropped_words,
    uncounted_words,
    unknown_words,
)
from ..core.explain.vocabulary import Makeup, TokenTable, no_reach, token_table
from ..core.io.gc_pause import gc_paused
from ..core.text.display import plural, readable_size, readable_token
from .inputs import (
    check_input,
    check_not_records,
    check_once,
    check_stdin_once,
    input_files,
    records,
)
from .output import (
    EXIT_CLOSED_PIPE,
    EXIT_USAGE,
    STDOUT,
    STDOUT_NAME,
    CliError,
    check_stdout_not_an_input,
    check_stdout_open,
    numba_interrupts,
    os_error_line,
    say,
    write_stream,
)
from .progress import ProgressBar
from .sources import (
    fetch_hub,
    load_tokenizer,
    split_line,
    split_pattern,
    warn_of_tokenizer_json_beside,
)


def cmd_inspect(args: argparse.Namespace) -> int:
    # subtle: as for encode, the cyclic collector would only walk the millions of objects
    # loading a tokenizer makes (none in a cycle).
    with gc_paused(freeze=args.exiting):
        return _inspect(args)


def _load(
    source: str, pattern: str | None, specials: list[str] | None = None, *, warn: bool = True
) -> AnyTokenizer:
    """``warn``: of a tokenizer.json beside it (not again for the source already loaded)."""
    fetched = fetch_hub(source)
    try:
        tok = load_tokenizer(fetched, specials, pattern=pattern)
    except OSError as e:
        raise CliError(os_error_line(e)) from None
    if warn and isinstance(tok, Tokenizer):  # GPT-2 files: warned of with their data as read
        warn_of_tokenizer_json_beside(fetched, pattern, specials, data=tok.to_data())
    tok.name = source
    return tok


def _load_either(
    source: str, pattern: str | None, tries: list[list[str] | None], *, warn: bool = True
) -> AnyTokenizer:
    """``source`` read with each set of special tokens of ``tries`` in turn, until one is
    taken; where none is, the first error is the one said."""
    first: ValueError | None = None
    for specials in tries:
        try:
            return _load(source, pattern, specials, warn=warn)
        except ValueError as error:
            first = first or error
    assert first is not None  # tries is never empty
    raise first from None


def _inspect(args: argparse.Namespace) -> int:
    check_stdout_open(STDOUT)  # the report goes there: said before any work
    # The report appended to a corpus or tokenizer file it reads (">> notes.txt") is
    # refused, as the other commands refuse it.
    read = [*(args.corpus or []), args.source, *([args.against] if args.against else [])]
    check_stdout_not_an_input(read, forced=False)
    corpora: list[str] = args.corpus or []
    if args.no_scan and not corpora:
        raise CliError(
            "--no-scan leaves out a pass over the --corpus text, and no --corpus is given: "
            "name a corpus, or leave --no-scan out",
            EXIT_USAGE,
        )
    for path in corpora:
        check_input(path, "corpus", globs=True)
    check_stdin_once(corpora, "a corpus")
    # --special-token names SRC's; with --against, maybe SRC2's alone (GPT-2 files that
    # cannot mark their own, compared with a preset): SRC that refuses them is read without.
    named = args.special_token
    tok = _load_either(
        args.source, args.pattern, [named, None] if args.against and named else [named]
    )
    table = token_table(tok, status=say)
    split = split_pattern(tok), split_line(tok)
    other = None
    other_notes: tuple[str, ...] = ()
    if args.against is not None:
        again = os.path.realpath(args.against) == os.path.realpath(args.source)
        # SRC2 with the special tokens its own files give; GPT-2 files that cannot mark one
        # (trained with "<|a|><|b|>", as SRC often was) with --special-token's.
        against = _load_either(
            args.against, None, [None, named] if named else [None], warn=not again
        )
        other, other_notes = token_table(against, status=say), against.notes
    # subtle: where a normalizer or a prefix space changes the text's bytes (or tokenizers
    # runs the file), the ids' bytes do not tell how much was dropped: the usage's dropped is
    # None (``usage.drops_uncounted``, or a normalizer that deletes characters), said, not
    # counted as 0.
    usage = None
    if corpora:
        with ExitStack() as stack:
            paths = stack.enter_context(input_files(corpora, args.records))
            files = corpus_files(paths, records(args.records))
            check_once(files, "a corpus", "counted")
            check_not_records(files, args.records, paths.copies)
            check_text_field(files, args.text_field)
            check_text_files(files)
            bars: dict[str, ProgressBar] = {}

            def progress(phase: str, done: int, total: int) -> None:
                if phase not in bars:
                    for bar in bars.values():
                        bar.close()
                    bars[phase] = ProgressBar(phase, total, unit="B", eager=True)
                bars[phase].update(done, total)

            try:
                # A small corpus is encoded here, in compiled kernels: Ctrl-C is Ctrl-C.
                with numba_interrupts(), changes_first(files):
                    usage = corpus_usage(
                        tok,
                        paths,
                        records=records(args.records),
                        table=table,
                        workers=args.workers,
                        text_field=args.text_field or DEFAULT_TEXT_FIELD,
                        scan=not args.no_scan,
                        progress=progress,
                        status=say,
                    )
            finally:
                for bar in bars.values():
                    bar.close()
            usage = _named(usage, corpora)
    shares = overlap(table, other) if other is not None else None
    # subtle: a file name that is not UTF-8 is a str with lone surrogates (Python's
    # surrogateescape): the summary writes its bytes back as they were (as ls does); JSON,
    # which must be UTF-8, escapes them ("\udcff", which json.loads and os.fsencode undo).
    if args.json:
        # subtle: dumps, not dump: dump writes each of millions of pieces on its own.
        shown = report(
            table,
            usage,
            shares,
            pattern=split[0],
            notes=tok.notes,
            other_notes=other_notes,
        )
        text = json.dumps(shown, ensure_ascii=False) + "\n"
        data = text.encode("utf-8", errors="backslashreplace")
    else:
        text = summary(
            table,
            usage,
            shares,
            args.top,
            split=split[1],
            notes=tok.notes,
            other_notes=other_notes,
        )
        data = text.encode("utf-8", errors="surrogateescape")
    closed_after = write_stream(STDOUT, data)
    if closed_after is None:
        return 0
    print(
        f"{STDOUT_NAME} was closed after {closed_after:,} of {len(data):,} bytes; the rest "
        "was not written",
        file=sys.stderr,
    )
    return EXIT_CLOSED_PIPE


def _named(usage: CorpusUsage, names: list[str]) -> CorpusUsage:
    """``usage`` naming the corpus as the user did (``-``, not its copy's path)."""
    from dataclasses import replace

    if len(usage.files) == len(names) and all("*" not in n for n in names):
        return replace(usage, files=tuple(names))
    return usage


# --------------------------------------------------------------------- JSON
def _entries(table: TokenTable, usage: CorpusUsage | None) -> list[dict[str, Any]]:
    """The ``tokens`` key: one object per entry, in row order."""
    # subtle: built from whole columns (lists), not row by row: reading 200,000 rows' numpy
    # scalars one at a time was a third of what o200k's report took to build.
    n = len(table)
    special = table.special.tolist()
    reachable = [None] * n if table.reachable is None else table.reachable.tolist()
    counts = [None] * n if usage is None else usage.row_counts(table).tolist()
    texts = table.texts
    if texts is None:  # byte-level BPE: the token as it is shown
        texts = tuple(
            token.decode("utf-8", "replace") if is_special else readable_token(token)
            for token, is_special in zip(table.tokens, special)
        )
    entries = []
    for token, text, token_id, is_special, category, space, reach, count in zip(
        table.tokens,
        texts,
        table.ids.tolist(),
        special,
        table.category.tolist(),
        table.leading_space.tolist(),
        reachable,
        counts,
    ):
        entry: dict[str, Any] = {
            "id": token_id,
            "token": token.decode("utf-8", "replace") if is_special else readable_token(token),
            "text": text,
            "bytes": token.hex(),
            "special": is_special,
            "length": len(token),
            "category": None if is_special else CATEGORIES[category],
            "leading_space": space,
            "reachable": reach,
        }
        if usage is not None:
            entry["count"] = count
        entries.append(entry)
    return entries


def _makeup_json(makeup: Makeup) -> dict[str, Any]:
    return {
        "length_histogram": {str(n): c for n, c in sorted(makeup.length_histogram.items())},
        "categories": {
            name: {"tokens": c.tokens, "leading_space": c.leading_space}
            for name, c in makeup.categories.items()
        },
    }


def report(
    table: TokenTable,
    usage: CorpusUsage | None,
    shares: Overlap | None,
    *,
    pattern: str | None = None,
    notes: tuple[str, ...] = (),
    other_notes: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The ``--json`` object (see the README's "inspect --json"); ``pattern`` as
    ``sources.split_pattern`` gives it: a name or the regex itself (None: no single
    pattern splits text); ``notes``, the tokenizer's; ``other_notes``, the ``--against``
    one's."""
    makeup = table.makeup()
    out: dict[str, Any] = {
        "tokenizer": {
            "source": table.name,
            "kind": table.kind,
            "pattern": pattern,
            "notes": list(notes),
        },
        "counts": {
            "tokens": makeup.tokens,
            "special_tokens": makeup.special_tokens,
            "ordinary_tokens": makeup.ordinary_tokens,
            "unreachable": makeup.unreachable,
        },
        "tokens": _entries(table, usage),
        "special_tokens": [
            {"id": int(table.ids[r]), "token": table.tokens[r].decode("utf-8", "replace")}
            for r in range(len(table))
            if table.special[r]
        ],
        **_makeup_json(makeup),
        "unreachable": makeup.unreachable,
        # null, as "unreachable" is, where the Reach rule does not apply (not an empty list,
        # which would say every token is reachable: a docs audit).
        "unreachable_ids": None if makeup.unreachable is None else table.unreachable_ids(),
    }
    if usage is not None:
        out["corpus"] = _usage_json(table, usage)
    if shares is not None:
        out["against"] = {
            "tokenizer": shares.other,
            "notes": list(other_notes),
            "shared": shares.total.shared,
            "only_this": shares.total.only_this,
            "only_other": shares.total.only_other,
            "categories": {
                name: {"shared": s.shared, "only_this": s.only_this, "only_other": s.only_other}
                for name, s in shares.categories.items()
            },
        }
    return out


def _usage_json(table: TokenTable, usage: CorpusUsage) -> dict[str, Any]:
    ids, counts = usage.ranked(table)
    unused = usage.unused_by_category(table)
    used_by = _used_by_category(table, usage)
    return {
        "files": list(usage.files),
        "bytes": usage.bytes,
        "tokens": usage.tokens,
        "dropped_bytes": usage.dropped,
        "bytes_per_token": usage.bytes_per_token,
        "seconds": round(usage.seconds, 3),
        "used": int(len(ids)),
        "unused": sum(map(len, unused.values())),
        "special_tokens": usage.special_counts(table),
        "categories": {
            name: {"used": used_by.get(name, 0), "unused": len(unused.get(name, ()))}
            for name in dict.fromkeys([*used_by, *unused])
        },
        "ranked": [[int(i), int(c)] for i, c in zip(ids.tolist(), counts.tolist())],
        "unused_ids": unused,
        "undertrained": {
            "inside": list(usage.inside),
            "across": None if usage.across is None else list(usage.across),
            "absent": None if usage.absent is None else list(usage.absent),
        },
    }


def _used_by_category(table: TokenTable, usage: CorpusUsage) -> dict[str, int]:
    import numpy as np

    used = ~table.special & (usage.row_counts(table) > 0)
    counts = np.bincount(table.category[used], minlength=len(CATEGORIES))
    order = np.argsort(-counts, kind="stable")
    return {CATEGORIES[c]: int(counts[c]) for c in order.tolist() if counts[c]}


# ----------------------------------------------------------------- summary
def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _examples(table: TokenTable, ids: list[int], top: int) -> str:
    shown = [table.shown(table.row(i)) for i in ids[:top]]
    more = f", ... ({len(ids) - top:,} more)" if len(ids) > top else ""
    return ", ".join(f"'{s}'" for s in shown) + more


def summary(
    table: TokenTable,
    usage: CorpusUsage | None,
    shares: Overlap | None,
    top: int = 10,
    *,
    split: str | None = None,
    notes: tuple[str, ...] = (),
    other_notes: tuple[str, ...] = (),
) -> str:
    """The readable report (stdout without ``--json``); ``split``, the line saying how the
    tokenizer splits text (``sources.split_line``); ``notes``, the tokenizer's (what it does
    otherwise than its file says); ``other_notes``, the ``--against`` one's."""
    m = table.makeup()
    specials = [
        table.tokens[r].decode("utf-8", "replace") for r in range(len(table)) if table.special[r]
    ]
    lines = [f"{table.name}: {table.kind}, {plural(m.tokens, 'token')}"]
    if split is not None:
        lines.append(f"  {split}")
    lines += [f"  note: {note}" for note in notes]
    lines.append(
        f"  {plural(m.special_tokens, 'special token')}"
        + (f": {' '.join(specials[:top])}" if specials else "")
        + (f" ... ({len(specials) - top:,} more)" if len(specials) > top else "")
    )
    if m.unreachable is None:
        lines.append(f"  unreachable: {no_reach(table.kind)}")
    else:
        lines.append(
            f"  unreachable (encoding the token's own bytes gives other tokens): {m.unreachable:,}"
            + (f": {_examples(table, table.unreachable_ids(), top)}" if m.unreachable else "")
        )
    lines.append("")
    lines.append(f"Byte lengths of the {m.ordinary_tokens:,} ordinary tokens:")
    bins = _length_bins(m.length_histogram)
    widest = max(bins.values(), default=1)
    for name, count in bins.items():
        lines.append(f"  {name:>7} {count:>9,}  {'#' * round(40 * count / widest)}")
    lines.append("")
    lines.append("Categories (ordinary tokens; with a leading space):")
    for name, c in m.categories.items():
        lines.append(
            f"  {label(name):<28} {c.tokens:>9,}  {_share(c.tokens, m.ordinary_tokens):>6}"
            f"  {c.leading_space:>9,}"
        )
    if usage is not None:
        lines += ["", *_usage_lines(table, usage, top)]
    if shares is not None:
        lines += ["", *_overlap_lines(shares, other_notes)]
    return "\n".join(lines) + "\n"


def _length_bins(histogram: dict[int, int]) -> dict[str, int]:
    """Byte lengths 1 to 16 one by one, longer ones in ranges that double (17-32, ...)."""
    bins: dict[str, int] = {}
    for length, count in sorted(histogram.items()):
        if length <= 16:
            name = str(length)
        else:
            low = 17
            while length >= 2 * (low - 1) + 1:
                low = 2 * (low - 1) + 1
            name = f"{low}-{2 * (low - 1)}"
        bins[name] = bins.get(name, 0) + count
    return bins


def _usage_lines(table: TokenTable, usage: CorpusUsage, top: int) -> list[str]:
    ordinary = int((~table.special).sum())
    ids, counts = usage.ranked(table)
    per = ""
    if usage.bytes_per_token is not None:
        kept = " of the text kept" if usage.dropped else ""
        if usage.dropped is None:
            kept = f" {WHOLE_INPUT}"
        per = f" ({usage.bytes_per_token:.2f} bytes/token{kept})"
    lines = [
        f"Corpus {' '.join(usage.files)}: {readable_size(usage.bytes)} of text, "
        f"{plural(usage.tokens, 'token')}{per}, in {usage.seconds:.1f} s",
        f"  used {len(ids):,} of the {ordinary:,} ordinary tokens ({_share(len(ids), ordinary)});"
        f" never used: {ordinary - len(ids):,}",
    ]
    if usage.dropped is None:
        lines[1:1] = [f"  the tokenizer's {said}" for said in uncounted_words(usage)]
    elif usage.dropped:
        lines.insert(
            1, f"  the tokenizer's pre-tokenizer {dropped_words(usage.dropped, usage.bytes)}"
        )
    if usage.unknown:
        # (why bytes met only in those words are "not in the text kept": no text is dropped)
        lines.insert(1, f"  the tokenizer's {unknown_words(usage.unknown)}")
    specials = {k: v for k, v in usage.special_counts(table).items() if v}
    if specials:
        lines.append("  special tokens: " + ", ".join(f"{k} {v:,}" for k, v in specials.items()))
    if len(ids):
        shown = [
            f"'{table.shown(table.row(i))}' {c:,}"
            for i, c in zip(ids[:top].tolist(), counts[:top].tolist())
        ]
        lines.append("  most used: " + ", ".join(shown))
    unused = usage.unused_by_category(table)
    if unused:
        lines.append("  never used, by category:")
        for name, group in unused.items():
            lines.append(f"    {label(name):<28} {len(group):>9,}  {_examples(table, group, top)}")
    lines.append("  under-trained candidates (never used):")
    lines.append(
        f"    bytes inside tokens it used: {len(usage.inside):,}"
        + (f"  {_examples(table, list(usage.inside), top)}" if usage.inside else "")
    )
    if usage.across is not None and usage.absent is not None:
        lines.append(
            f"    bytes only across tokens:    {len(usage.across):,}"
            + (f"  {_examples(table, list(usage.across), top)}" if usage.across else "")
        )
        lines.append(
            f"    {f'bytes {absent_words(usage)}:':<29}{len(usage.absent):,}"
            + (f"  {_examples(table, list(usage.absent), top)}" if usage.absent else "")
        )
    return lines


def _overlap_lines(shares: Overlap, notes: tuple[str, ...] = ()) -> list[str]:
    t = shares.total
    this, other = shares.this, shares.other
    if this == other:
        # One name twice ("only in gpt2: 0; only in gpt2: 0") does not say which is which.
        this, other = f"{this} (SRC)", f"{other} (--against)"
    lines = [
        f"Against {shares.other} (ordinary tokens compared by their bytes):",
        *[f"  note: {note}" for note in notes],
        f"  shared {t.shared:,}; only in {this}: {t.only_this:,}; "
        f"only in {other}: {t.only_other:,}",
        f"  {'category':<28} {'shared':>9} {'only this':>10} {'only other':>11}",
    ]
    for name, s in shares.categories.items():
        lines.append(f"  {label(name):<28} {s.shared:>9,} {s.only_this:>10,} {s.only_other:>11,}")
    return lines
