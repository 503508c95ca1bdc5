"""Cache files that vouch for their own bytes: a digest of the payload ahead of it.

What it does: :func:`seal` puts a BLAKE2b digest of ``payload``, keyed with what the entry is
of, before it, and :func:`unseal` gives the payload back only if the digest still matches for
the entry asked for. A cache file cut short, zeroed after
a crash (renames are not fsynced) or edited is then a miss, rebuilt, and never read as the
right bytes of another table: a scanner class table zeroed past its header had given other
ids, with no error, on every run. About 2 ms for the 2 MB class table.
What it leaves out: where the files are (``user_cache``), writing them (``atomic``).
"""

from __future__ import annotations

import hashlib

_MAGIC = b"bpe-studio sealed 2\n"  # 2: the digest is keyed with what the entry is of
_DIGEST = 32


def _digest(payload: bytes, of: str) -> bytes:
    # The digest is keyed with what the file is of: another entry's file, copied or renamed
    # into this one's name, is a miss (an audit: cl100k's rank entry under o200k's name gave
    # o200k cl100k's ranks, silently, on every run).
    key = hashlib.blake2b(of.encode("utf-8"), digest_size=_DIGEST).digest()
    return hashlib.blake2b(payload, digest_size=_DIGEST, key=key).digest()


def seal(payload: bytes, of: str) -> bytes:
    """``payload`` with its digest before it, keyed with ``of`` (what the entry is of: the
    rank file's sha256, the ``regex`` version), which :func:`unseal` checks."""
    return _MAGIC + _digest(payload, of) + payload


def unseal(data: bytes, of: str) -> bytes | None:
    """The payload :func:`seal` sealed into ``data`` for ``of``, or None if ``data`` is not
    such a file, is another entry's, or its payload changed since."""
    head = len(_MAGIC) + _DIGEST
    if len(data) < head or not data.startswith(_MAGIC):
        return None
    payload = data[head:]
    return payload if _digest(payload, of) == data[len(_MAGIC) : head] else None
