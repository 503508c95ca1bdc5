"""What a tokenizer's vocabulary is made of: one row per entry, and the make-up at any step.

What it does: :func:`token_table` reads any tokenizer ``open_tokenizer`` gives (byte-level
BPE: a trained run, a preset, GPT-2 / tiktoken / ``tokenizer.json`` files; or a
:class:`~..encode.foreign.ForeignTokenizer`) into a :class:`TokenTable`: each entry's bytes,
byte length, category and leading-space flag (``categories``), whether it is special,
whether encoding its own bytes gives it back (the Reach rule, ``reach.unreachable_among``;
byte-level BPE only), and, asked for (``steps=True``), the rank of the merge that made it.
Rows are in the order of the ids. The vocabulary as it stood after ``k`` merges is the rows
whose rank is below ``k``, and :meth:`TokenTable.makeup` of a step counts those (a
millisecond for 200,000 rows): the app's timeline moves through a run without classifying
or encoding anything again. A table of a run still training is extended with its newest
tokens (``previous=``), not rebuilt.
What it leaves out: a corpus's use of the tokens (``usage``), two vocabularies compared
(``overlap``), anything drawn.

The entries of a :class:`ForeignTokenizer` are its vocabulary as it shows them (``▁`` as a
space, ``<0xNN>`` as that byte), and a WordPiece continuation (``##ing``) without its prefix;
so two entries may stand for the same bytes (``<0x41>`` and ``A``, ``##7`` and ``7``): each
row also keeps the token as the file writes it (``texts``, shown by :meth:`TokenTable.shown`),
and a byte-fallback token's category is ``byte fallback``, not its byte's. A byte-level file
that ``tokenizers`` runs has no ``texts``: its bytes are exact, shown as byte-level BPE's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..encode.foreign import AnyTokenizer, ForeignTokenizer, fallback_ids
from ..encode.tokenizer import Tokenizer
from ..formats.hf.kind import TOKENIZERS_BYTE_LEVEL
from ..text.display import readable_token
from .categories import BYTE_FALLBACK, CATEGORIES, classify
from .reach import unreachable_among
from .work import CancelEvent, Progress, checkpoint, gc_paused

# Tokens classified per slice (progress and cancelling are looked at between slices).
SLICE = 16_384
BYTE_LEVEL = "byte-level BPE"


def no_reach(kind: str) -> str:
    """Why a table of ``kind`` has no unreachable count (``Makeup.unreachable`` None), as the
    lab and ``inspect`` say it."""
    if kind == TOKENIZERS_BYTE_LEVEL:
        return "Reach needs a file this project reads itself; this one is run by tokenizers"
    return "the Reach rule applies to byte-level BPE only"


@dataclass(frozen=True)
class CategoryCount:
    """Tokens of one category, and how many of them start with a space."""

    tokens: int
    leading_space: int


@dataclass(frozen=True)
class Makeup:
    """A vocabulary's make-up (at ``step``: after that many merges; None: all of it).

    ``tokens`` counts every entry, special included; ``length_histogram`` (byte length ->
    tokens) and ``categories`` (name -> :class:`CategoryCount`, the largest first, only those
    with tokens) count the ordinary ones; ``unreachable`` is None where the Reach rule does not
    apply (another kind than byte-level BPE)."""

    step: int | None
    tokens: int
    special_tokens: int
    length_histogram: dict[int, int]
    categories: dict[str, CategoryCount]
    unreachable: int | None

    @property
    def ordinary_tokens(self) -> int:
        return self.tokens - self.special_tokens


@dataclass(frozen=True, eq=False)
class TokenTable:
    """One row per vocabulary entry (see the module docstring); arrays of equal length, in
    row order (ascending ids). ``rank`` (None unless built with ``steps=True``) is -1 for
    entries no merge makes (bytes, special tokens, a loaded file's added tokens);
    ``reachable`` is None for another kind than byte-level BPE (the special tokens' rows say
    True); ``texts`` (another kind than byte-level BPE; None for byte-level BPE, one that
    ``tokenizers`` runs too) holds each
    entry as its file writes it (``▁the``, ``##ing``, ``<0x41>``)."""

    name: str
    kind: str
    ids: np.ndarray  # int64
    tokens: tuple[bytes, ...]
    special: np.ndarray  # bool
    length: np.ndarray  # int32, bytes
    category: np.ndarray  # uint8, an index into categories.CATEGORIES
    leading_space: np.ndarray  # bool
    rank: np.ndarray | None  # int64
    reachable: np.ndarray | None  # bool
    texts: tuple[str, ...] | None = None
    _row: dict[int, int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def merges(self) -> int:
        """The number of merges behind the rows (the last step :meth:`makeup` takes)."""
        if self.rank is None or not len(self.rank):
            return 0
        return int(self.rank.max()) + 1

    def row(self, token_id: int) -> int:
        """The row of ``token_id`` (``KeyError`` if no entry has it)."""
        if not self._row:
            self._row.update(zip(self.ids.tolist(), range(len(self.ids))))
        return self._row[token_id]

    def present(self, step: int | None) -> np.ndarray:
        """A mask over the rows: the entries the vocabulary holds after ``step`` merges
        (None: every entry). A step needs a table built with ``steps=True``."""
        if step is None:
            return np.ones(len(self.ids), dtype=bool)
        if self.rank is None:
            raise ValueError("this vocabulary table was built without steps (steps=True)")
        if isinstance(step, bool) or not 0 <= step <= self.merges:
            raise ValueError(
                f"step {step!r} is out of range; this vocabulary has {self.merges} merges, "
                f"so 0 <= step <= {self.merges}"
            )
        return self.rank < step

    def text(self, r: int) -> str:
        """Row ``r``'s token as its file writes it; for byte-level BPE, and for a special
        token, as :meth:`shown` shows it."""
        if self.texts is not None:
            return self.texts[r]
        return self.shown(r)

    def shown(self, r: int) -> str:
        """Row ``r``'s token for a person to read: a special token as it is; an entry of
        another kind as its file writes it (two entries never look alike: ``<0x41>``, ``A``);
        a byte-level one readably (``readable_token``: ``␣the``, ``<e4>``)."""
        if self.special[r]:
            return self.tokens[r].decode("utf-8", "replace")
        if self.texts is not None:
            return readable_token(self.texts[r].encode("utf-8"))
        return readable_token(self.tokens[r])

    def category_name(self, token_id: int) -> str:
        return CATEGORIES[self.category[self.row(token_id)]]

    def ordinary(self, step: int | None = None) -> np.ndarray:
        """A mask over the rows of the ordinary entries present at ``step``."""
        return self.present(step) & ~self.special

    def unreachable_ids(self, step: int | None = None) -> list[int]:
        """Ids (ascending) of the unreachable tokens present at ``step`` (none when the rule
        does not apply)."""
        if self.reachable is None:
            return []
        return self.ids[self.ordinary(step) & ~self.reachable].tolist()

    def makeup(self, step: int | None = None) -> Makeup:
        """The make-up after ``step`` merges (None: the whole vocabulary). For a tokenizer
        whose merges each make a new token, as training does, a token's reachability does
        not change as merges come after it, so one table answers for every step."""
        present = self.present(step)
        ordinary = present & ~self.special
        lengths = np.bincount(self.length[ordinary])
        cats = self.category[ordinary]
        counts = np.bincount(cats, minlength=len(CATEGORIES))
        leading = np.bincount(cats[self.leading_space[ordinary]], minlength=len(CATEGORIES))
        categories = {
            CATEGORIES[c]: CategoryCount(int(counts[c]), int(leading[c]))
            for c in np.argsort(-counts, kind="stable")
            if counts[c]
        }
        unreachable = None
        if self.reachable is not None:
            unreachable = int(np.count_nonzero(ordinary & ~self.reachable))
        tokens = int(np.count_nonzero(present))
        return Makeup(
            step=step,
            tokens=tokens,
            special_tokens=tokens - int(np.count_nonzero(ordinary)),
            length_histogram={i: int(c) for i, c in enumerate(lengths) if c},
            categories=categories,
            unreachable=unreachable,
        )


def entry_bytes(tokenizer: AnyTokenizer) -> dict[int, bytes]:
    """Each vocabulary entry's bytes as the reports compare them (see the module
    docstring)."""
    vocab = tokenizer.vocab
    if not isinstance(tokenizer, ForeignTokenizer):
        return dict(vocab)
    prefix = getattr(tokenizer.backend.model, "continuing_subword_prefix", None)
    if not tokenizer.kind.startswith("WordPiece") or not prefix:
        return dict(vocab)
    mark = prefix.encode("utf-8")
    special = set(tokenizer.special_tokens)
    out = {}
    for i, token in vocab.items():
        text = tokenizer.token_text(i)
        keep = token == mark or text in special or not token.startswith(mark)
        out[i] = token if keep else token[len(mark) :]
    return out


def _merge_ranks(tokenizer: AnyTokenizer, ids: np.ndarray) -> np.ndarray:
    """The rank of the first merge making each id (-1: none)."""
    ranks = np.full(len(ids), -1, dtype=np.int64)
    if not isinstance(tokenizer, Tokenizer) or not len(ids):
        return ranks
    merged = list(tokenizer.merger.merges())
    if not merged:
        return ranks
    table = np.array([(rank, made) for rank, _, _, made in merged], dtype=np.int64)
    by_id = np.full(int(max(ids.max(), table[:, 1].max())) + 1, -1, dtype=np.int64)
    # Highest rank first, so the lowest rank making an id is written last and wins.
    by_id[table[::-1, 1]] = table[::-1, 0]
    return by_id[ids]


def token_table(
    tokenizer: AnyTokenizer,
    *,
    progress: Progress | None = None,
    cancel: CancelEvent | None = None,
    previous: TokenTable | None = None,
    steps: bool = False,
    status: Callable[[str], None] | None = None,
) -> TokenTable:
    """The :class:`TokenTable` of ``tokenizer``.

    ``progress(done, total)`` is told of each slice of the work; ``cancel.is_set()`` is looked
    at between slices (``work.Cancelled``). ``previous``, a table of an earlier step of the
    same run, lends its rows to the entries it holds with the same bytes: only the newer
    tokens are classified and reached. ``steps``: note each entry's merge rank, for
    :meth:`TokenTable.makeup` at a step (a quarter of a second for o200k's 200,000 merges).
    ``status`` is told when tokens of megabytes make the compiled encoder compile
    (``reach.unreachable_among``).

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> vocab.update({256: b" t", 257: b" th", 258: b" the"})
    >>> tok = Tokenizer(vocab, [(b" ", b"t"), (b" t", b"h"), (b" th", b"e")])
    >>> table = token_table(tok, steps=True)
    >>> table.makeup().categories["Latin"], table.makeup(step=1).categories["Latin"]
    (CategoryCount(tokens=55, leading_space=3), CategoryCount(tokens=53, leading_space=1))
    """
    with gc_paused():
        return _token_table(
            tokenizer,
            progress=progress,
            cancel=cancel,
            previous=previous,
            steps=steps,
            status=status,
        )


def _token_table(
    tokenizer: AnyTokenizer,
    *,
    progress: Progress | None = None,
    cancel: CancelEvent | None = None,
    previous: TokenTable | None = None,
    steps: bool = False,
    status: Callable[[str], None] | None = None,
) -> TokenTable:
    entries = entry_bytes(tokenizer)
    special_ids = {tokenizer.special_id(s) for s in tokenizer.special_tokens}
    ids = np.sort(np.fromiter(entries, dtype=np.int64, count=len(entries)))
    ranks = _merge_ranks(tokenizer, ids) if steps else None
    id_list = ids.tolist()
    tokens = tuple(entries[i] for i in id_list)
    n = len(tokens)
    byte_level = isinstance(tokenizer, Tokenizer)

    # Rows an earlier table of the run already holds (same id, same bytes) are copied.
    fresh = np.ones(n, dtype=bool)
    category = np.zeros(n, dtype=np.uint8)
    leading = np.zeros(n, dtype=bool)
    reachable = np.ones(n, dtype=bool)
    if previous is not None:
        for r, (i, token) in enumerate(zip(id_list, tokens)):
            try:
                p = previous.row(i)
            except KeyError:
                continue
            if previous.tokens[p] == token:
                fresh[r] = False
                category[r] = previous.category[p]
                leading[r] = previous.leading_space[p]
                if previous.reachable is not None:
                    reachable[r] = previous.reachable[p]
    todo = np.flatnonzero(fresh)
    # The work: classifying the new rows, then (byte-level BPE) reaching them.
    total = len(todo) * (2 if byte_level else 1)
    done = 0
    if progress:
        progress(done, total)
    for start in range(0, len(todo), SLICE):
        checkpoint(cancel)
        rows = todo[start : start + SLICE]
        category[rows], leading[rows] = classify([tokens[r] for r in rows.tolist()])
        done += len(rows)
        if progress:
            progress(done, total)

    if byte_level:
        assert isinstance(tokenizer, Tokenizer)

        def between_slices() -> None:
            nonlocal done
            checkpoint(cancel)
            if progress:
                progress(min(done, total), total)
            done += SLICE

        unreachable = unreachable_among(tokenizer, ids[todo].tolist(), between_slices, status)
        reachable[np.isin(ids, np.asarray(unreachable, dtype=np.int64))] = False
        checkpoint(cancel)
        if progress:
            progress(total, total)
    special = np.isin(ids, np.fromiter(special_ids, dtype=np.int64, count=len(special_ids)))
    reachable[special] = True
    texts = None
    if isinstance(tokenizer, ForeignTokenizer):
        # A byte-level file tokenizers runs is shown as one read here ("␣", "<e5>"), not in
        # GPT-2's byte-to-character spelling its file writes ("Ġ", "å"): its bytes are exact.
        if tokenizer.kind != TOKENIZERS_BYTE_LEVEL:
            texts = tuple(tokenizer.token_text(i) or "" for i in id_list)
        # A <0xNN> token stands for its byte only where no token holds that character: its
        # byte's category would count it twice (Llama 2's "A" and <0x41>, both Latin).
        fallback = np.isin(ids, np.fromiter(fallback_ids(tokenizer), dtype=np.int64))
        category[fallback] = BYTE_FALLBACK
        leading[fallback] = False
    return TokenTable(
        name=str(getattr(tokenizer, "name", None) or ""),
        kind=BYTE_LEVEL if byte_level else getattr(tokenizer, "kind", "tokenizer"),
        ids=ids,
        tokens=tokens,
        special=special,
        length=np.fromiter(map(len, tokens), dtype=np.int32, count=n),
        category=category,
        leading_space=leading,
        rank=ranks,
        reachable=reachable if byte_level else None,
        texts=texts,
    )
