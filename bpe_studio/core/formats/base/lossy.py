"""The warning a writer gives when the files it wrote do not bring the tokenizer back by
themselves (GPT-2 files, a ``tokenizer.json`` whose ids ``tokenizers`` may give otherwise).
Here, below the writers, so that each may raise it without importing another."""

from __future__ import annotations


class LossyFormatWarning(UserWarning):
    """Files were written that do not bring the tokenizer back by themselves (GPT-2 files of
    a tokenizer with another pattern, or whose special tokens the loader would infer
    otherwise: ``files.gpt2_losses``; a ``tokenizer.json`` whose added tokens tokenizers may
    look up whole: ``hf.tokenizer_json``)."""
