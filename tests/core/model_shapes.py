"""``tokenizer.json`` files in the shapes the open models publish, post-processors included,
built with ``tokenizers`` itself (no download) from the small models ``foreign_files`` trains.

Post-processors, as the models' own files have them:
- Llama 3: ``TemplateProcessing`` "<|begin_of_text|> $A" (``foreign_files.llama3_style``).
- Llama 3.1: a ``Sequence`` of ``ByteLevel`` (add_prefix_space, no trim_offsets) and that
  template; DeepSeek-V3: a ``Sequence`` of ``ByteLevel`` (trim_offsets) and
  "<｜begin▁of▁sentence｜> $A".
- Qwen2.5 / Qwen3: ``ByteLevel`` alone (no template); RoBERTa: ``RobertaProcessing``.
- Llama 2: "<s> $A"; Gemma 3: "<bos> $A" over its BPE (``Replace`` " " -> "▁", ``Split``
  " " merged with previous, byte fallback, <pad> <eos> <bos> <unk> at ids 0..3); T5: Unigram
  with "$A </s>"; BERT: WordPiece with "[CLS] $A [SEP]" (``foreign_files.wordpiece``).

Each function writes ``directory/tokenizer.json`` and returns its path; :data:`SHAPES` names
them all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from foreign_files import (
    CORPUS,
    LLAMA3_REGEX,
    _byte_level,
    _save,
    llama3_style,
    qwen2_style,
    sentencepiece_bpe,
    unigram,
    wordpiece,
)
from tokenizers import (
    AddedToken,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    trainers,
)
from tokenizers import processors as pp

BOS3 = "<|begin_of_text|>"
DEEPSEEK_BOS = "<\uff5cbegin\u2581of\u2581sentence\uff5c>"


def _template(tok: Tokenizer, single: str, *tokens: str) -> pp.TemplateProcessing:
    return pp.TemplateProcessing(
        single=single, special_tokens=[(t, tok.token_to_id(t)) for t in tokens]
    )


def _rewrite(path: Path, change: Callable[[Tokenizer], None]) -> Path:
    tok = Tokenizer.from_file(str(path))
    change(tok)
    tok.save(str(path))
    return path


def llama31_style(directory: Path) -> Path:
    def change(tok: Tokenizer) -> None:
        byte_level = pp.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
        tok.post_processor = pp.Sequence([byte_level, _template(tok, f"{BOS3} $A", BOS3)])

    return _rewrite(llama3_style(directory), change)


def deepseek_v3_style(directory: Path) -> Path:
    tok = _byte_level(LLAMA3_REGEX, directory, ignore_merges=False)
    tok.add_special_tokens([AddedToken(DEEPSEEK_BOS, special=True)])
    byte_level = pp.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)
    template = _template(tok, f"{DEEPSEEK_BOS} $A", DEEPSEEK_BOS)
    tok.post_processor = pp.Sequence([byte_level, template])
    return _save(tok, directory)


def qwen_style(directory: Path) -> Path:
    def change(tok: Tokenizer) -> None:
        tok.post_processor = pp.ByteLevel(
            add_prefix_space=False, trim_offsets=False, use_regex=False
        )

    return _rewrite(qwen2_style(directory), change)


def roberta_style(directory: Path) -> Path:
    tok = _byte_level(LLAMA3_REGEX, directory, ignore_merges=False)
    tok.add_special_tokens([AddedToken("<s>", special=True), AddedToken("</s>", special=True)])
    tok.post_processor = pp.RobertaProcessing(
        ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>"))
    )
    return _save(tok, directory)


def llama2_style(directory: Path, vocab_size: int = 700) -> Path:
    def change(tok: Tokenizer) -> None:
        tok.post_processor = _template(tok, "<s> $A", "<s>")

    return _rewrite(sentencepiece_bpe(directory, vocab_size), change)


def t5_style(directory: Path) -> Path:
    def change(tok: Tokenizer) -> None:
        tok.post_processor = _template(tok, "$A </s>", "</s>")

    return _rewrite(unigram(directory), change)


GEMMA_SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]


def gemma3_style(directory: Path, vocab_size: int = 700) -> Path:
    """Gemma 3's shape (see the module docstring); the byte tokens after the trained ones."""
    trained = Tokenizer(models.BPE(unk_token="<unk>"))
    trained.normalizer = normalizers.Replace(" ", "\u2581")
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=GEMMA_SPECIALS, show_progress=False
    )
    trained.train_from_iterator(CORPUS.read_text(encoding="utf-8").splitlines(), trainer)
    model = json.loads(trained.to_str())["model"]
    vocab = {t: i for i, t in enumerate(GEMMA_SPECIALS)}
    for token, _ in sorted(model["vocab"].items(), key=lambda item: item[1]):
        vocab.setdefault(token, len(vocab))
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "\u2581")
    tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
    tok.decoder = decoders.Sequence(
        [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    tok.add_special_tokens([AddedToken(t, special=True) for t in GEMMA_SPECIALS])
    tok.add_special_tokens(
        [AddedToken("<start_of_turn>", special=True), AddedToken("<end_of_turn>", special=True)]
    )
    tok.post_processor = pp.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B", special_tokens=[("<bos>", 2)]
    )
    return _save(tok, directory)


# name -> (builder, what the template adds before and after the text, by token)
SHAPES: dict[str, tuple[Callable[[Path], Path], tuple[str, ...], tuple[str, ...]]] = {
    "llama3": (llama3_style, (BOS3,), ()),
    "llama3.1": (llama31_style, (BOS3,), ()),
    "deepseek_v3": (deepseek_v3_style, (DEEPSEEK_BOS,), ()),
    "qwen": (qwen_style, (), ()),
    "roberta": (roberta_style, ("<s>",), ("</s>",)),
    "llama2": (llama2_style, ("<s>",), ()),
    "gemma3": (gemma3_style, ("<bos>",), ()),
    "t5": (t5_style, (), ("</s>",)),
    "bert": (wordpiece, ("[CLS]",), ("[SEP]",)),
}
BYTE_LEVEL_SHAPES = ["llama3", "llama3.1", "deepseek_v3", "qwen", "roberta"]
