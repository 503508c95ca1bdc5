"""The Vocabulary lab's numbers as CSV: the summary, and the tokens a list shows.

What it does: :func:`summary_csv` writes what the tab shows, one number a row
(``section,name,measure,value``: easy to filter or pivot): which tokenizer, step, corpus and
second tokenizer, with the step each was worked out for; the make-up (tokens, special,
ordinary, unreachable), each category's tokens and leading spaces, each byte length's tokens
(all of the step shown); each category's corpus use ("corpus_category") and the corpus's
bytes (and those its pre-tokenizer dropped: an empty cell where they cannot be counted),
tokens and under-trained candidates (of the corpus's step); each category's overlap
("overlap_category", of the overlap's step). :func:`tokens_csv` writes one row per token of a
list (``lab_lists.TokenRows``): id, readable token, the token as its file writes it
(``inspect --json``'s ``text``: ``▁the``, ``<0x41>``, ``##ing``), bytes in hex, category,
length, leading space, special, reachable, merge rank, and the corpus count and the other
vocabulary's holding it when known.
What it leaves out: writing files (the view, atomically).
"""

from __future__ import annotations

import csv
import io

from ...core.explain.categories import CATEGORIES
from ...core.explain.vocabulary import TokenTable
from ...core.text.display import readable_token
from .lab_lists import SPECIAL, TokenRows
from .lab_records import TokenizerRef
from .vocab_lab import VocabLab


def summary_csv(lab: VocabLab) -> str:
    """The lab's summary (see the module docstring); empty rows for what is not computed."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["section", "name", "measure", "value"])
    shown = lab.shown_makeup()
    makeup = lab.makeup
    if makeup is None or shown is None:
        return out.getvalue()
    m, step = shown
    usage, overlap = lab.usage, lab.overlap
    w.writerow(["about", "tokenizer", "name", makeup.ref.label])
    w.writerow(["about", "tokenizer", "kind", makeup.table.kind])
    w.writerow(["about", "tokenizer", "step", "" if step is None else step])
    if usage is not None:
        w.writerow(["about", "corpus", "name", usage.corpus.label])
        w.writerow(["about", "corpus", "files", " ".join(usage.usage.files)])
        w.writerow(["about", "corpus", "tokenizer_step", _step(usage.ref, makeup.table, step)])
    if overlap is not None:
        w.writerow(["about", "against", "name", overlap.other.label])
        w.writerow(["about", "against", "tokenizer_step", _step(overlap.ref, makeup.table, step)])
    w.writerow(["makeup", "all", "tokens", m.tokens])
    w.writerow(["makeup", "special", "tokens", m.special_tokens])
    w.writerow(["makeup", "ordinary", "tokens", m.ordinary_tokens])
    w.writerow(["makeup", "unreachable", "tokens", "" if m.unreachable is None else m.unreachable])
    names = list(m.categories)
    for more in (usage.used, usage.unused) if usage is not None else ():
        names += [n for n in more if n not in names]
    if overlap is not None:
        names += [n for n in overlap.overlap.categories if n not in names]
    # Each section's numbers are of one step (``about``): the make-up's of the step shown,
    # the corpus's and the overlap's of the step they were worked out for, which may differ.
    for name in names:
        count = m.categories.get(name)
        w.writerow(["category", name, "tokens", count.tokens if count else 0])
        w.writerow(["category", name, "leading_space", count.leading_space if count else 0])
    if usage is not None:
        for name in names:
            w.writerow(["corpus_category", name, "used", usage.used.get(name, 0)])
            w.writerow(["corpus_category", name, "unused", usage.unused.get(name, 0)])
    if overlap is not None:
        for name in names:
            shares = overlap.overlap.categories.get(name)
            for measure in ("shared", "only_this", "only_other"):
                value = getattr(shares, measure) if shares else 0
                w.writerow(["overlap_category", name, measure, value])
    for length, n in sorted(m.length_histogram.items()):
        w.writerow(["length", length, "tokens", n])
    if usage is not None:
        u = usage.usage
        w.writerow(["corpus", "text", "bytes", u.bytes])
        # An empty cell where the dropped text is not counted (None), not 0: nothing dropped.
        w.writerow(["corpus", "text", "dropped_bytes", "" if u.dropped is None else u.dropped])
        w.writerow(["corpus", "text", "tokens", u.tokens])
        w.writerow(["corpus", "ordinary", "used", usage.used_total])
        w.writerow(["corpus", "ordinary", "unused", usage.unused_total])
        w.writerow(["corpus", "undertrained", "inside", len(u.inside)])
        for name, ids in (("across", u.across), ("absent", u.absent)):
            w.writerow(["corpus", "undertrained", name, "" if ids is None else len(ids)])
    if overlap is not None:
        t = overlap.overlap.total
        w.writerow(["overlap", "all", "shared", t.shared])
        w.writerow(["overlap", "all", "only_this", t.only_this])
        w.writerow(["overlap", "all", "only_other", t.only_other])
    return out.getvalue()


def _step(ref: TokenizerRef, table: TokenTable, shown: int | None) -> str | int:
    """The step a result was worked out for: its ref's, else (a loaded tokenizer, whose ref
    names none) all the merges of its table, when the make-up shown has steps at all. An
    empty cell there read as if the corpus's numbers were of the make-up's step."""
    if ref.merges is not None:
        return ref.merges
    return "" if shown is None else table.merges


def tokens_csv(listed: TokenRows) -> str:
    """One row per token listed (see the module docstring)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    header = ["id", "token", "text", "bytes", "category", "length", "leading_space", "special"]
    header += ["reachable", "merge_rank"]
    if listed.counts is not None:
        header.append("count")
    if listed.held is not None:
        header.append("in_other")
    w.writerow(header)
    t = listed.table
    for r in listed.rows.tolist():
        token = t.tokens[r]
        special = bool(t.special[r])
        row: list[object] = [
            int(t.ids[r]),
            token.decode("utf-8", "replace") if special else readable_token(token),
            t.text(r),
            token.hex(),
            SPECIAL if special else CATEGORIES[t.category[r]],
            len(token),
            int(bool(t.leading_space[r])),
            int(special),
            "" if t.reachable is None else int(bool(t.reachable[r])),
            "" if t.rank is None or t.rank[r] < 0 else int(t.rank[r]),
        ]
        if listed.counts is not None:
            row.append(int(listed.counts[r]))
        if listed.held is not None:
            row.append(int(bool(listed.held[r])))
        w.writerow(row)
    return out.getvalue()
