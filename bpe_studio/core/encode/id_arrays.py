"""Which NumPy dtype holds a tokenizer's ids: one rule for arrays, files and the command line.

What it does: :func:`ids_dtype` is the smallest unsigned dtype that holds every id of a
tokenizer (uint16 when its largest id is below 65,536, else uint32), what ``encode_file``,
``bpe-studio encode`` and ``encode_array(text, dtype=None)`` use. :func:`array_dtype` checks a
dtype a caller asks for: an integer dtype that holds the tokenizer's largest id, else a
ValueError naming the dtype, that id and the dtype that would do. An id never wraps around.
What it leaves out: encoding (``tokenizer``, ``foreign``) and writing ``.npy`` files
(``encode_file``).

The check is on the tokenizer's largest id, not the text's: whether a dtype will do is known
before any work, and the same for every text (so the arrays of a file's pieces agree).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

AUTO = "auto"  # dtype=None or "auto": the smallest dtype that holds every id


def ids_dtype(largest_id: int) -> np.dtype:
    """The smallest of uint16, uint32 and uint64 that holds ``largest_id``.

    >>> ids_dtype(50_256).name, ids_dtype(200_018).name
    ('uint16', 'uint32')
    """
    for name in ("uint16", "uint32"):
        if largest_id <= np.iinfo(name).max:
            return np.dtype(name)
    return np.dtype("uint64")


def array_dtype(dtype: DTypeLike | None, largest_id: int, where: str = "encode_array") -> np.dtype:
    """The dtype an array of ids is built in: ``dtype`` if it is an integer dtype that holds
    ``largest_id`` (the tokenizer's), :func:`ids_dtype` for None or "auto"; else ValueError.

    >>> array_dtype("uint16", 200_018)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: encode_array: dtype uint16 holds ids up to 65,535, but ... 200,018: use uint32 ...
    >>> array_dtype(None, 200_018).name, array_dtype("int64", 200_018).name
    ('uint32', 'int64')
    """
    if dtype is None or (isinstance(dtype, str) and dtype == AUTO):
        return ids_dtype(largest_id)
    try:
        chosen = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"{where}: dtype {dtype!r} is not a NumPy dtype") from None
    if chosen.kind not in "iu":
        # subtle: named as given ("U5"), not by NumPy's name for it ("str160").
        shown = dtype if isinstance(dtype, str) else chosen.name
        raise ValueError(
            f"{where}: dtype {shown} is not an integer dtype; token ids need one "
            f"such as {ids_dtype(largest_id).name} (or dtype=None)"
        )
    top = int(np.iinfo(chosen).max)
    if largest_id > top:
        raise ValueError(
            f"{where}: dtype {chosen.name} holds ids up to {top:,}, but this tokenizer's ids "
            f"go up to {largest_id:,}: use {ids_dtype(largest_id).name} (or dtype=None, the "
            "smallest that holds them all)"
        )
    return chosen
