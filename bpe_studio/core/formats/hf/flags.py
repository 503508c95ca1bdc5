"""The booleans a ``tokenizer.json`` component holds, read as ``tokenizers`` reads them.

What it does: :func:`json_flag` gives a component's flag (Split's ``invert``, ByteLevel's
``add_prefix_space``, Strip's ``strip_left``, ...) where it is a JSON boolean, and raises
ValueError naming the key where it is not: ``tokenizers`` refuses such a file ("expected a
boolean", "missing field"), and ``bool()`` read the string ``"false"`` as true, a missing
flag as a default the file never gave. What it leaves out: the added tokens' flags
(``added_tokens``, whose messages name the token too).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def json_flag(obj: Mapping[str, Any], flag: str, where: str, default: bool | None = None) -> bool:
    """``obj[flag]``, a JSON boolean; ``default`` where it is missing and ``tokenizers`` has
    one (ByteLevel's ``use_regex``: true), else ValueError naming ``where`` and the flag."""
    if flag not in obj and default is not None:
        return default
    value = obj.get(flag)
    if isinstance(value, bool):
        return value
    if flag not in obj:
        raise ValueError(f"{where}.{flag}: missing; tokenizers requires it (true or false)")
    got = json.dumps(value, ensure_ascii=False)[:80]
    raise ValueError(f"{where}.{flag}: must be true or false, as tokenizers requires; got {got}")
