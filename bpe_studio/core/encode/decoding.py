"""Token ids back to bytes (``Tokenizer.decode_bytes``).

What it does: :func:`decode_bytes` joins the ids' tokens, refusing ids that are not ints
(``1.0`` would pass a dict lookup) and naming an unknown id. What it leaves out: text (UTF-8
decoding with replacement is ``Tokenizer.decode``) and character offsets (``token_spans``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from numbers import Integral

from ..train.vocab import missing_id

_INT = frozenset({int})


def _check_ids(ids: Iterable[object], types: set[type]) -> None:
    """TypeError naming the first id that is not an int (``1.0``, ``"7"``, ``True``);
    ``types`` are the ids' types (each is looked at once)."""
    wrong = {t for t in types if issubclass(t, bool) or not issubclass(t, Integral)}
    if wrong:
        bad = next(i for i in ids if type(i) in wrong)
        raise TypeError(f"token ids must be ints, got {bad!r} ({type(bad).__name__})")


def refuse_unordered(ids: object) -> None:
    """TypeError for a set or a mapping of ids: it has no order to decode in."""
    if isinstance(ids, (AbstractSet, Mapping)):
        raise TypeError(
            f"ids must be in order (a list, tuple or array), not a {type(ids).__name__}"
        )


def decode_bytes(vocab: Mapping[int, bytes], ids: Iterable[int]) -> bytes:
    """The bytes of ``ids``, concatenated. An id that is not an int (``1.0``, ``"7"``) raises
    TypeError, one not in ``vocab`` ValueError naming the ids it has; so does a set or a
    mapping of ids, which has no order to decode in (tiktoken raises too)."""
    refuse_unordered(ids)
    if not isinstance(ids, (list, tuple)):
        # A NumPy array's tolist() gives Python ints (or floats, refused below).
        tolist = getattr(ids, "tolist", None)
        ids = tolist() if callable(tolist) else list(ids)
    # subtle: checked before the lookup, which 1.0 would pass (it hashes as 1).
    types = set(map(type, ids))
    if not _INT.issuperset(types):
        _check_ids(ids, types)
    try:
        return b"".join([vocab[i] for i in ids])
    except KeyError:
        bad = int(next(i for i in ids if i not in vocab))
        raise ValueError(f"unknown token id {bad}: {missing_id(bad, vocab)}") from None
