"""The ids of a text on each of the encoder's paths, and tiktoken's own encoding of a preset:
what the compiled encoder's tests compare (``test_compiled_cuts``,
``test_compiled_short_pieces``)."""

from __future__ import annotations

import numpy as np
from core_helpers import EOT
from reference_encoder import published, shipped_tiktoken

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.merging.packed import NUMPY_DTYPE


def tiktoken_peer(tok: Tokenizer):
    """tiktoken's encoding of the preset ``tok`` (GPT-2's built from ``tok``'s own ranks)."""
    if tok.name != "gpt2":
        return shipped_tiktoken(tok.name)
    import tiktoken

    ranks = {t: i for i, t in tok.vocab.items() if t != EOT.encode()}
    return tiktoken.Encoding("gpt2_ref", pat_str=published("r50k_base")["pat_str"],
                             mergeable_ranks=ranks, special_tokens={EOT: 50256})  # fmt: skip


def python_ids(tok: Tokenizer, text: str) -> list[int]:
    enc = tok._encoder
    return np.frombuffer(enc.packed(text, enc.specials), dtype=NUMPY_DTYPE).tolist()


def compiled_ids(tok: Tokenizer, text: str) -> list[int]:
    enc = tok._encoder
    ids = enc.compiled_array(text, enc.specials)
    assert ids is not None, "the compiled path was not taken"
    return ids.tolist()
