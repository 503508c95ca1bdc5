"""The record every format reader returns and every writer takes, and the named patterns.

What it does: :class:`TokenizerData` holds a byte-level BPE tokenizer as plain data (ids kept
as the file gave them); :data:`PATTERNS` holds the named pre-tokenization patterns (GPT-2's,
and the regexes tiktoken publishes for cl100k and o200k; re-exported from ``pattern``, their
one home). What it leaves out: compiling or applying patterns (``pretokenization``), and
checking that a record is consistent (each writer checks what it needs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...pretokenization.names import PATTERNS as PATTERNS
from ...pretokenization.names import pattern_name as pattern_name
from ...pretokenization.names import pattern_regex as pattern_regex

if TYPE_CHECKING:
    from ..hf.pipeline import HfPipeline
    from ..hf.template import Template

# Ids a vocabulary may leave unused below its largest: tables indexed by id (decoding, the
# merge tree, a corpus's counts, the editor's int32 spans) are as long as the largest id, so
# 257 tokens with one at id 4,000,000,000 asked for 29.8 GiB. Real vocabularies leave a few
# dozen (cl100k's 100,257-100,275 range, o200k's special tokens at 199,999 and 200,018).
SPARE_IDS = 1 << 20


def id_limit(n_tokens: int) -> int:
    """The largest id a vocabulary of ``n_tokens`` tokens may use (see ``SPARE_IDS``)."""
    return n_tokens + SPARE_IDS


def check_id_range(vocab: Mapping[int, bytes], source: str) -> None:
    """ValueError naming ``source`` when ``vocab``'s largest id is past ``id_limit``."""
    if vocab and max(vocab) > id_limit(len(vocab)):
        raise ValueError(f"{source}: {sparse_id(max(vocab), len(vocab))}")


def sparse_id(idx: int, n_tokens: int) -> str:
    """What is wrong with id ``idx`` in a vocabulary of ``n_tokens`` tokens past the limit."""
    return (
        f"id {idx:,} is far past the vocabulary's {n_tokens:,} tokens: tables here are indexed "
        f"by id, so the ids may go up to {id_limit(n_tokens):,} (the number of tokens + "
        f"{SPARE_IDS:,}); renumber the tokens"
    )


@dataclass(frozen=True)
class TokenizerData:
    """A byte-level BPE tokenizer as a file describes it.

    - ``vocab``: id -> token bytes, every id the tokenizer can emit, special tokens included
      (as their UTF-8 bytes), so ``vocab[special_tokens[s]] == s.encode()``.
    - ``merges``: ``(left, right)`` in priority order (the first applies first); each joins two
      vocabulary tokens into a third. Special tokens take part in none.
    - ``special_tokens``: special token string -> its id.
    - ``pattern``: a name in :data:`PATTERNS` (``"gpt2"``, ``"cl100k"``, ``"o200k"``) or a
      regex string, applied with ``findall`` semantics (text no match covers is dropped).
    - ``merge_ids``: optional, ``(left ids, right ids, made ids)`` of ``merges`` in order, when
      the reader knows them (a rank file's ids are its ranks): the tokenizer then need not look
      each merge's tokens up. They must be those of ``merges`` (not part of equality).
    - ``whole_tokens``: true when the reader knows that the bytes of every vocabulary token
      but the special tokens merge into that one token (no token is unreachable), so that a
      pre-token that is a whole token may be looked up instead of merged, as tiktoken does
      (the presets; not part of equality).
    - ``ignore_merges``: a pre-token that is a vocabulary token (special tokens aside) is that
      token, whether or not merging would build it (``tokenizer.json``'s ``model.ignore_merges``;
      tiktoken's encoder does the same).
    - ``pipeline``: what a ``tokenizer.json`` does to text (normalizers, pre-tokenizer steps,
      added tokens with flags), or None. When its ``needed`` is true the tokenizer
      pre-tokenizes with it; else ``pattern`` alone cuts text as it does and the pipeline is
      kept to write the file back (not part of equality).
    - ``template``: the ids a ``tokenizer.json``'s post-processor adds around every text (the
      tokenizer adds them when asked: ``add_special_tokens=True``), or None.
    - ``added_tokens``: a ``tokenizer.json``'s added tokens that are not special
      (``"special": false``, Qwen3's ``<think>``): string -> id, ``vocab[id]`` its UTF-8
      bytes, or, for a ``normalized`` one the normalizer changes, what ``tokenizers`` decodes
      it as (``hf.tokenizer_json.decoded_as``: "THINK" under Lowercase, b"think"). Cut out
      of the text as special tokens are, but always (``allowed_special`` and
      ``encode_ordinary`` choose among the special tokens only), as ``tokenizers`` does;
      merges take no part in them.
    - ``notes``: what this project does otherwise than the file says, one line each, for the
      summaries and the app to say (a ``tokenizer.json``'s truncation and padding, not applied:
      ``hf.kind.whole_text_note``); not part of equality.
    - ``added_in_model``: with ``ignore_merges``, the added tokens (special or not) that a
      ``tokenizer.json``'s model.vocab also holds under their own text: string -> that id.
      ``tokenizers`` looks every pre-token up there whole, by its byte-level spelling, so a
      pre-token that is such a token's text (``"<pad>"``, not ``"<|a b|>"``: a space is never
      its own spelling) is that id also where the token is not cut out (``single_word``,
      ``encode_ordinary``); the other added tokens are never looked up so. Written back, they
      are the added tokens model.vocab holds (``formats.hf.tokenizer_json``).

    >>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    >>> TokenizerData(vocab, [(b"a", b"b")], {}, "gpt2").merges
    [(b'a', b'b')]
    """

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    special_tokens: dict[str, int]
    pattern: str
    merge_ids: tuple[list[int], list[int], list[int]] | None = field(
        default=None, compare=False, repr=False
    )
    whole_tokens: bool = field(default=False, compare=False, repr=False)
    ignore_merges: bool = False
    pipeline: HfPipeline | None = field(default=None, compare=False, repr=False)
    template: Template | None = field(default=None, compare=False, repr=False)
    added_tokens: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)
    added_in_model: dict[str, int] = field(default_factory=dict)
