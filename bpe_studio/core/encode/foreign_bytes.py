"""The exact bytes of a ``tokenizers`` tokenizer's ids, byte-fallback tokens as their bytes.

What it does: :class:`ExactDecoder` gives the text the tokenizer's own decoder makes of a list
of ids, as UTF-8 bytes, except that a run of byte-fallback tokens (``<0xE4>``) whose bytes are
not valid UTF-8 gives those very bytes. ``tokenizers``' ByteFallback decoder turns such a run
into one U+FFFD per byte, so the bytes are lost; here the run is handed to the decoder as
stand-in characters, one per byte (plane 16 private use, which no decoder step touches), and
they are turned back into the bytes afterwards. A run that is valid UTF-8 is the decoder's, as
is everything else. What it leaves out: checking the ids (``foreign``).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import tokenizers

BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_STAND_IN = 0x10FE00  # U+10FE00 + byte: plane 16 private use, in no real vocabulary
_STAND_INS = re.compile("([\U0010fe00-\U0010feff]+)")


def falls_back_to_bytes(backend: tokenizers.Tokenizer) -> bool:
    """Whether ``backend``'s model writes a character it has no token for as ``<0xNN>``
    tokens (``byte_fallback``), BPE's or Unigram's."""
    flag = getattr(backend.model, "byte_fallback", None)
    if flag is None:
        # subtle: tokenizers' Unigram (0.23) has no such attribute, though it falls back
        # to bytes as its file says; only its state holds the flag.
        flag = json.loads(backend.model.__getstate__()).get("byte_fallback", False)
    return bool(flag)


def byte_fallback_ids(backend: tokenizers.Tokenizer, falls_back: bool) -> dict[int, int]:
    """id -> byte of each ``<0xNN>`` token, when the model ``falls_back`` to bytes
    (:func:`falls_back_to_bytes`) and its decoder turns them into bytes (``ByteFallback``);
    else empty."""
    if backend.decoder is None or not falls_back:
        return {}
    if "ByteFallback" not in json.dumps(json.loads(backend.decoder.__getstate__())):
        return {}
    found = {}
    for token, idx in backend.get_vocab(with_added_tokens=False).items():
        m = BYTE_TOKEN.fullmatch(token)
        if m:
            found[idx] = int(m.group(1), 16)
    return found


class ExactDecoder:
    """Decodes ids to bytes with ``backend``'s decoder (see the module docstring); its model
    ``falls_back`` to bytes or not (:func:`falls_back_to_bytes`)."""

    def __init__(self, backend: tokenizers.Tokenizer, falls_back: bool) -> None:
        self._backend = backend
        byte_of = byte_fallback_ids(backend, falls_back)
        self.byte_ids = byte_of  # id -> byte of each byte-fallback token
        # id -> byte (-1: not a byte token), for finding runs with NumPy.
        size = max(byte_of, default=-1) + 1
        self._table = np.full(size, -1, dtype=np.int16)
        if byte_of:
            self._table[list(byte_of)] = list(byte_of.values())

    def decode_bytes(self, ids: list[int]) -> bytes:
        """The bytes of ``ids`` (each one known to be an id of the tokenizer)."""
        runs = self._bad_runs(ids)
        if not runs:
            return self._backend.decode(ids, skip_special_tokens=False).encode("utf-8")
        id_to_token = self._backend.id_to_token
        tokens: list[str] = [id_to_token(i) or "" for i in ids]
        for start, end in runs:
            for j in range(start, end):
                tokens[j] = chr(_STAND_IN + int(self._table[ids[j]]))
        decoder = self._backend.decoder
        text = decoder.decode(tokens) if decoder is not None else " ".join(tokens)
        parts = _STAND_INS.split(text)
        # split keeps the stand-in runs at the odd places.
        return b"".join(
            bytes(ord(c) - _STAND_IN for c in part) if k % 2 else part.encode("utf-8")
            for k, part in enumerate(parts)
        )

    def _bad_runs(self, ids: list[int]) -> list[tuple[int, int]]:
        """``(start, end)`` of each maximal run of byte tokens in ``ids`` whose bytes are not
        valid UTF-8 (those the ByteFallback decoder would make U+FFFD of)."""
        table = self._table
        if not len(table) or not ids:
            return []
        arr = np.asarray(ids, dtype=np.int64)
        values = np.full(len(arr), -1, dtype=np.int16)
        inside = arr < len(table)
        values[inside] = table[arr[inside]]
        is_byte = values >= 0
        if not is_byte.any():
            return []
        # Every run is valid UTF-8 (the usual case) exactly when the runs with a NUL in place
        # of each other token are: a NUL is a whole character, so it ends and begins runs.
        try:
            np.where(is_byte, values, 0).astype(np.uint8).tobytes().decode("utf-8")
            return []
        except UnicodeDecodeError:
            pass
        edges = np.flatnonzero(np.diff(np.concatenate(([0], is_byte.view(np.int8), [0]))))
        bad = []
        for start, end in zip(edges[0::2].tolist(), edges[1::2].tolist()):
            try:
                values[start:end].astype(np.uint8).tobytes().decode("utf-8")
            except UnicodeDecodeError:
                bad.append((start, end))
        return bad
