"""Read-only dict and list: a tokenizer's vocabulary, merges and special tokens as it hands
them out.

What it does: :class:`ReadOnlyDict` and :class:`ReadOnlyList` are a ``dict`` and a ``list`` in
every way users rely on (``isinstance``, ``==`` with plain ones, ``json``, ``pickle``, NumPy,
C-speed reads) whose changing methods raise ``TypeError``. A tokenizer's tables are built from
these once; an entry changed in place afterwards would leave ``encode`` and ``decode`` (or
``save``) disagreeing with no error, so changing one is refused with the way to do it.
What it leaves out: building them (``building``); code that must fill one calls ``dict``'s or
``list``'s own methods on it, which these do not override.
"""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")

_REFUSAL = (
    "a tokenizer's {what} read-only: its encoding tables were built from {it}, and a change "
    "here would not reach them. To change {it}, build a new Tokenizer from a copy: {copy}"
)


class ReadOnlyDict(dict[K, V]):
    """A ``dict`` whose changing methods raise ``TypeError`` (see the module docstring).

    >>> d = ReadOnlyDict({1: b"a"})
    >>> d == {1: b"a"}, isinstance(d, dict)
    (True, True)
    >>> d[2] = b"b"
    Traceback (most recent call last):
    ...
    TypeError: a tokenizer's vocabulary is read-only: ...
    """

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError(_REFUSAL.format(what="vocabulary is", it="it", copy="dict(tok.vocab)"))

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from a plain dict: pickle's default fills a dict subclass item by item.
        return (type(self), (dict(self),))

    def __copy__(self) -> ReadOnlyDict[K, V]:
        return self  # nothing in it can change


class ReadOnlyList(list[T]):
    """A ``list`` whose changing methods raise ``TypeError`` (see the module docstring).

    >>> m = ReadOnlyList([(b"a", b"b")])
    >>> m == [(b"a", b"b")], m[:1] == m
    (True, True)
    >>> m.append((b"c", b"d"))
    Traceback (most recent call last):
    ...
    TypeError: a tokenizer's merges and special tokens are read-only: ...
    """

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError(
            _REFUSAL.format(what="merges and special tokens are", it="them", copy="list(...)")
        )

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (list(self),))

    def __copy__(self) -> ReadOnlyList[T]:
        return self
