"""BPE Studio's engine: pre-tokenization, the incremental trainer, the rank-based tokenizer and
tokenizer files. Pure Python (regex, numpy); never imports Qt.

``PATTERNS`` names the pre-tokenization patterns ("gpt2", "cl100k", "o200k"; ``GPT2_PATTERN``
is GPT-2's regex); ``pretokenizer(pattern)`` compiles a name or a regex, ``pretokenize(text,
pattern)`` splits text with it; ``count_text``/``count_file`` count pre-tokens; ``train_bpe``,
``iter_merges``, ``trainer_from_file`` and ``BpeTrainer`` train (each with a ``pattern``);
``Tokenizer`` encodes and decodes, and loads and saves every format (``load``, ``preset``,
``from_hf``, ``from_tiktoken``, ``save``); ``open_tokenizer`` opens any source, a
``tokenizer.json`` of another kind as a ``ForeignTokenizer`` (run by ``tokenizers``); both
satisfy ``TokenizerLike``, the one interface (``TokenNotFound``: no such token);
``encode_file`` encodes a file on every core;
``initial_vocab`` and ``merge_budget`` tell the id layout of a trained vocabulary. The stages
are packages (``corpus``, ``pretokenization``, ``train``, ``encode``, ``formats``, ``io``,
``text``, ``explain``: docs/architecture.md); ``reference`` is the slow, readable trainer the
tests hold the fast one to.

The names are listed once, in ``__init__.pyi``, and imported on first use (``lazy_loader``,
PEP 562).
"""

from __future__ import annotations

import lazy_loader

# subtle: the names are imported on first use, so that training from a small corpus never
# loads NumPy (which ``tokenizer`` and ``explain`` import), a large share of such a process's
# memory (docs/training.md, "Memory").
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
