"""``tokenizer.json`` files of the open models' shapes, built with ``tokenizers`` itself.

Other kinds than byte-level BPE, trained by ``tokenizers``' own trainers on the CS336 fixture
``corpus.en`` (deterministic; small vocabularies, so Chinese falls back to ``[UNK]`` or to byte
tokens):
- :func:`wordpiece`: BERT's shape (BertNormalizer lowercasing, BertPreTokenizer, ``##``
  continuation, a TemplateProcessing adding ``[CLS]``/``[SEP]``); :func:`wordpiece_keeping_spaces`,
  one whose pre-tokenizer drops nothing, with words it gives as ``[UNK]``.
- :func:`unigram`: NFKC, Metaspace (SentencePiece's ``▁``), Unigram (ALBERT, T5 shape);
  :func:`unigram_byte_fallback`, the same with ``byte_fallback`` and ``<0xNN>`` tokens.
- :func:`sentencepiece_bpe`: Llama 2 / Mistral 7B's shape: no pre-tokenizer, a normalizer
  that prepends ``▁`` and turns spaces into ``▁``, a BPE with ``byte_fallback`` and the 256
  ``<0xNN>`` tokens at ids 3..258, ``<unk>``, ``<s>``, ``</s>``, the Replace/ByteFallback/
  Fuse/Strip decoder.
Byte-level BPE, from GPT-2's fixture vocabulary and merges: :func:`llama3_style` (Split with
Llama 3's regex + ByteLevel, ``ignore_merges``), :func:`qwen2_style` (Qwen2's regex) and
:func:`one_split` (any regex); :func:`removing_split` (a Split that removes text);
:func:`falcon_style` (Falcon's pre-tokenizer, which this
project's reader refuses and ``tokenizers`` runs).

Each function writes ``directory/tokenizer.json`` and returns its path.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from core_helpers import FIXTURES
from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

CORPUS = FIXTURES / "corpus.en"
LLAMA3_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _lines() -> list[str]:
    return CORPUS.read_text(encoding="utf-8").splitlines()


def _save(tok: Tokenizer, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tokenizer.json"
    tok.save(str(path))
    return path


def wordpiece(directory: Path, vocab_size: int = 600) -> Path:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials)
    tok.train_from_iterator(_lines(), trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return _save(tok, directory)


def unigram(directory: Path, vocab_size: int = 600) -> Path:
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"
    )
    tok.train_from_iterator(_lines(), trainer)
    return _save(tok, directory)


def unigram_byte_fallback(directory: Path, vocab_size: int = 600) -> Path:
    """A SentencePiece Unigram model converted with its byte fallback (as Hugging Face
    converts T5 v1.1 style models trained with ``--byte_fallback``): the pieces of
    :func:`unigram` and the 256 ``<0xNN>`` tokens, and the ByteFallback decoder."""
    trained = json.loads(Tokenizer.from_file(str(unigram(directory))).to_str())["model"]
    pieces = [tuple(piece) for piece in trained["vocab"]]
    lowest = min(score for _, score in pieces)
    pieces += [(f"<0x{b:02X}>", lowest - 1.0) for b in range(256)]
    tok = Tokenizer(models.Unigram(pieces, unk_id=trained["unk_id"], byte_fallback=True))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Sequence(
        [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    return _save(tok, directory)


def sentencepiece_bpe(directory: Path, vocab_size: int = 700) -> Path:
    """Llama 2's shape (see the module docstring)."""
    trained = Tokenizer(models.BPE(unk_token="<unk>"))
    trained.normalizer = normalizers.Sequence(
        [normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")]
    )
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"])
    trained.train_from_iterator(_lines(), trainer)
    model = json.loads(trained.to_str())["model"]
    # The byte tokens come right after the three special ones, as in Llama 2's file.
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({f"<0x{b:02X}>": 3 + b for b in range(256)})
    for token, _ in sorted(model["vocab"].items(), key=lambda item: item[1]):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = trained.normalizer
    tok.decoder = decoders.Sequence(
        [
            decoders.Replace("\u2581", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    tok.add_special_tokens([AddedToken(t, special=True) for t in ("<unk>", "<s>", "</s>")])
    return _save(tok, directory)


def _gpt2_model(ignore_merges: bool) -> models.BPE:
    vocab = json.loads((FIXTURES / "gpt2_vocab.json").read_text(encoding="utf-8"))
    lines = (FIXTURES / "gpt2_merges.txt").read_text(encoding="utf-8").splitlines()
    # subtle: the fixture has no "#version" line, and "# #" (merge 1979) is a merge.
    merges = [tuple(line.split(" ")) for line in lines if line and not line.startswith("#version")]
    return models.BPE(vocab, merges, ignore_merges=ignore_merges)


def _byte_level(regex: str, directory: Path, ignore_merges: bool) -> Tokenizer:
    tok = Tokenizer(_gpt2_model(ignore_merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(regex), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True)])
    return tok


def one_split(directory: Path, regex: str) -> Path:
    """GPT-2's fixture model behind one Isolated Split of ``regex`` then ByteLevel without
    its regex (Llama 3's and Qwen2's shape, with any regex)."""
    return _save(_byte_level(regex, directory, ignore_merges=False), directory)


def removing_split(
    directory: Path, regex: str, *, invert: bool, use_regex: bool, prefix_space: bool = False
) -> Path:
    """GPT-2's fixture model behind a Split of ``regex`` that removes text (its matches;
    ``invert``: all but them) then ByteLevel (with its regex or none, with a prefix space or
    none): a byte-level file whose pre-tokenizer drops text, which this project reads."""
    tok = _byte_level(regex, directory, ignore_merges=False)
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(regex), behavior="removed", invert=invert),
            pre_tokenizers.ByteLevel(add_prefix_space=prefix_space, use_regex=use_regex),
        ]
    )
    return _save(tok, directory)


def llama3_style(directory: Path, *, full: bool = True) -> Path:
    """Llama 3's shape; ``full``: with ``ignore_merges`` and the ``<|begin_of_text|>``
    template, as the model's file has them (``full=False`` leaves both out)."""
    tok = _byte_level(LLAMA3_REGEX, directory, ignore_merges=full)
    if full:
        tok.add_special_tokens([AddedToken("<|begin_of_text|>", special=True)])
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.TemplateProcessing(
            single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)]
        )
    return _save(tok, directory)


def qwen2_style(directory: Path, *, full: bool = True) -> Path:
    """Qwen2's shape; ``full``: with its NFC normalizer (``full=False`` leaves it out)."""
    tok = _byte_level(QWEN2_REGEX, directory, ignore_merges=False)
    if full:
        tok.normalizer = normalizers.NFC()
    return _save(tok, directory)


def nfkc_lower(directory: Path) -> Path:
    """GPT-2's fixture model behind an NFKC + Lowercase normalizer and Qwen2's regex: a
    byte-level file whose normalizer changes characters and byte counts (``ﬁ`` -> ``fi``)."""
    tok = _byte_level(QWEN2_REGEX, directory, ignore_merges=False)
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    return _save(tok, directory)


def offset_cuts(oracle: Tokenizer, text: str) -> list[int]:
    """The README's cuts of ``text`` from ``tokenizers``' own offsets (``oracle`` run
    directly): ``0 < c < len(text)`` where a token starts and no token holds characters on
    both sides of ``c`` (``start < c < end``)."""
    offsets = oracle.encode(text, add_special_tokens=False).offsets
    starts = {s for s, _ in offsets}
    return [
        c for c in range(1, len(text)) if c in starts and not any(s < c < e for s, e in offsets)
    ]


def own_ids(path: Path, text: str) -> list[int]:
    """The ids ``tokenizers`` itself gives ``text`` with the file at ``path`` (the text's own
    tokens, no template's)."""
    return Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids


def falcon_style(directory: Path) -> Path:
    """GPT-2's fixture model behind tiiuae/falcon-7b's pre-tokenizer (Punctuation, ByteLevel,
    Digits, a Split of three digits): a byte-level BPE file that ``tokenizers`` runs and this
    project's reader refuses (Punctuation's character tables are an old Unicode's)."""
    tok = _byte_level(LLAMA3_REGEX, directory, ignore_merges=False)
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Punctuation(behavior="contiguous"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            pre_tokenizers.Digits(individual_digits=False),
            pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), behavior="isolated"),
        ]
    )
    return _save(tok, directory)


def wordpiece_keeping_spaces(directory: Path) -> Path:
    """A WordPiece whose pre-tokenizer drops nothing (a Split that isolates each space, which
    is a token), Lowercase before it: "xyzw" holds a "w" no token holds, so the word is one
    ``[UNK]``, and "xyz", a token, is met only there in "Hello ok xyzw"."""
    entries = ["[UNK]", " ", *"abehklo", *(f"##{c}" for c in "abehklo"), "hello", "ok", "xyz"]
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(entries)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="isolated")
    return _save(tok, directory)


def precompiled_charsmap(key: str, replacement: str) -> bytes:
    """A SentencePiece precompiled charsmap of one rule, ``key`` (one ASCII character) ->
    ``replacement``: the trie's size, a double-array trie of that one key (darts-clone's
    units: root, the key's node, its value) and the replacements, each ended by a NUL."""
    units = [0] * 256
    units[0] = 1 << 10  # the root: its children at 0 ^ 1 ^ label
    node = 1 ^ ord(key)
    units[node] = ord(key) | 1 << 8 | 1 << 10  # its label, a leaf, the value at node ^ 1
    units[node ^ 1] = 1 << 31  # the value: the replacement at offset 0
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + replacement.encode() + b"\0"


def with_pre_tokenizer(path: Path, directory: Path, pre_tokenizer: object) -> Path:
    """The file at ``path`` with ``pre_tokenizer`` (a ``tokenizers.pre_tokenizers`` one) in
    place of its own, saved in ``directory``."""
    tok = Tokenizer.from_file(str(path))
    tok.pre_tokenizer = pre_tokenizer
    return _save(tok, directory)


def dropping_files(directory: Path) -> dict[str, Path]:
    """A file of each kind whose pre-tokenizer drops text: BERT's (WordPiece with the
    BertPreTokenizer, dropping whitespace), a Unigram with WhitespaceSplit, a
    SentencePiece-style BPE (byte fallback) with CharDelimiterSplit("|"), and a byte-level
    BPE with BERT's before its ByteLevel (run by tokenizers: this project's reader refuses
    the BertPreTokenizer)."""
    byte_level = pre_tokenizers.Sequence(
        [pre_tokenizers.BertPreTokenizer(), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    return {
        "wordpiece": wordpiece(directory / "wordpiece"),
        "unigram": with_pre_tokenizer(
            unigram(directory / "made-unigram"),
            directory / "unigram",
            pre_tokenizers.WhitespaceSplit(),
        ),
        "sentencepiece": with_pre_tokenizer(
            sentencepiece_bpe(directory / "made-sp"),
            directory / "sentencepiece",
            pre_tokenizers.CharDelimiterSplit("|"),
        ),
        "byte-level": with_pre_tokenizer(
            falcon_style(directory / "made-falcon"), directory / "byte-level", byte_level
        ),
    }


def pre_tokenizer_dropped(path: Path, text: str) -> int:
    """The bytes of ``text`` the pre-tokenizer of the file at ``path`` leaves out of its
    pieces (no piece's offsets hold them), as ``tokenizers`` normalizes and pre-tokenizes it
    (its own count: a Metaspace's piece spells a space "▁", so pieces' own bytes would not
    do)."""
    tok = Tokenizer.from_file(str(path))
    normalized = tok.normalizer.normalize_str(text) if tok.normalizer is not None else text
    held = [False] * len(normalized)
    for _, (start, end) in tok.pre_tokenizer.pre_tokenize_str(normalized):
        held[start:end] = [True] * (end - start)
    return sum(len(c.encode()) for c, kept in zip(normalized, held) if not kept)


def kept_runs(tok: Tokenizer, normalized: str) -> list[bytes]:
    """The stretches of ``normalized`` text that ``tok``'s own pre-tokenizer keeps, as UTF-8:
    runs of the characters its pieces' offsets hold, each apart where it drops some (the
    model is never given what it drops), nor a word a WordPiece model gives as its unknown
    token (as ``tok.encode`` of the word says). The text whole without a pre-tokenizer."""
    if tok.pre_tokenizer is None:
        return [normalized.encode("utf-8")]
    unk = tok.model.unk_token if isinstance(tok.model, models.WordPiece) else None
    held = [False] * len(normalized)
    for word, (start, end) in tok.pre_tokenizer.pre_tokenize_str(normalized):
        if unk is None or tok.encode(word, add_special_tokens=False).tokens != [unk]:
            held[start:end] = [True] * (end - start)
    runs, run = [], ""
    for char, kept in zip(normalized, held):
        if kept:
            run += char
        elif run:
            runs.append(run.encode("utf-8"))
            run = ""
    return runs + ([run.encode("utf-8")] if run else [])
