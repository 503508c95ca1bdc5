"""``tokenizer.json`` components shaped like the open models', built with ``tokenizers``.

The patterns are the ones those models' files carry (Llama 3, DeepSeek-V3, BLOOM, gpt-oss's
o200k pattern), and tiktoken's own cl100k pattern as a file would carry it verbatim.
:func:`unbyte` turns ``tokenizers``' byte-level pieces back into text, so its pre-tokens
compare with ours.
"""

from __future__ import annotations

import json

from gpt2_bytes import token_from_gpt2
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, trainers
from tokenizers import normalizers as nz
from tokenizers import pre_tokenizers as pt

from bpe_studio.core.pretokenization.names import PATTERNS

LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# tiktoken_ext/openai_public.py's cl100k_base pattern, verbatim.
CL100K_TIKTOKEN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
    r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
BLOOM = r" ?[^(\s|[.,!?…。，、।۔،])]+"
DEEPSEEK_V3 = [
    r"\p{N}{1,3}",
    r"[一-龥\u3040-ゟ゠-ヿ]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
    r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
]


def trained_bpe(
    normalizer, pre_tokenizer, texts: list[str], vocab_size: int, specials: list[str] = ()
) -> Tokenizer:
    """A byte-level BPE ``tokenizers.Tokenizer`` with ``normalizer`` (or none) and
    ``pre_tokenizer``, trained by ``tokenizers`` on ``texts`` to ``vocab_size`` (its
    ``specials`` among them), with the byte-level decoder."""
    tok = Tokenizer(models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pt.ByteLevel.alphabet(),
        special_tokens=list(specials),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def byte_level(prefix: bool = False, regex: bool = False) -> pt.ByteLevel:
    return pt.ByteLevel(add_prefix_space=prefix, use_regex=regex)


def splits_then_bytes(*patterns: str) -> pt.Sequence:
    return pt.Sequence([*(pt.Split(Regex(p), "isolated") for p in patterns), byte_level()])


# name -> (normalizer or None, pre-tokenizer)
FAMILIES = {
    "gpt2": (None, byte_level(regex=True)),
    "llama3": (None, splits_then_bytes(LLAMA3)),
    "qwen2": (nz.NFC(), splits_then_bytes(LLAMA3)),
    "deepseek_v3": (None, splits_then_bytes(*DEEPSEEK_V3)),
    "starcoder": (None, pt.Sequence([pt.Digits(individual_digits=True), byte_level(regex=True)])),
    "bloom": (None, splits_then_bytes(BLOOM)),
    "cl100k_in_json": (None, splits_then_bytes(CL100K_TIKTOKEN)),
}
# gpt-oss's file: o200k's pattern in one Isolated Split, then ByteLevel without its regex.
GPT_OSS = (None, splits_then_bytes(PATTERNS["o200k"]))


def components(normalizer, pre_tokenizer) -> dict:
    """The JSON object of a tokenizer with these components (and an empty BPE model)."""
    tok = Tokenizer(models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    return json.loads(tok.to_str())


def unbyte(piece: str) -> str:
    """A byte-level piece of ``tokenizers`` as text (its bytes, decoded)."""
    return token_from_gpt2(piece).decode("utf-8", errors="replace")


def hf_pretokens(normalizer, pre_tokenizer, text: str) -> list[str]:
    """``tokenizers``' own pre-tokens of ``text``, as text."""
    if normalizer is not None:
        text = normalizer.normalize_str(text)
    return [unbyte(piece) for piece, _ in pre_tokenizer.pre_tokenize_str(text)]


def hub_folder(folder, family: str, specials=(), added=(), trained=()) -> Tokenizer:
    """``folder`` as Qwen2's, GPT-2's or RoBERTa's Hub snapshot holds the tokenizer: its
    ``tokenizer.json`` and, beside it, the same model's ``vocab.json`` + ``merges.txt`` (which
    hold neither the added tokens nor the pipeline). A ``FAMILIES`` member, trained by
    ``tokenizers`` on the fixtures' slices with the special tokens ``trained`` (in the model's
    vocabulary, as GPT-2's ``<|endoftext|>``), then ``specials`` and the non-special
    ``added`` added (outside it, as Qwen2's)."""
    from core_helpers import SLICES, slice_head

    normalizer, pre = FAMILIES[family]
    texts = [slice_head(key, 20_000) for key in SLICES]
    tok = trained_bpe(normalizer, pre, texts, 400, list(trained))
    tok.add_special_tokens(list(specials))
    tok.add_tokens(list(added))
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    tok.model.save(str(folder))
    return tok


# Words that hold "word": trained into tokens (" sword", " words", " swords") that encoding
# reaches though the single_word added token "word" sits inside them.
WORD_TEXT = "swords sword words word_1 thinking think <tool> sword word the a an ing " * 20


def flagged_file(folder, ignore_merges: bool = True) -> str:
    """A Llama 3 shaped ``tokenizer.json`` in ``folder`` with the added tokens that are not
    special ``word`` (single_word) and ``<tool>`` (lstrip), and the special ``<pad>``, all
    held in ``model.vocab`` as Llama 3 holds its added tokens; its model holds tokens with
    ``word`` inside (:data:`WORD_TEXT`). Its path."""
    from core_helpers import read_fixture

    texts = [WORD_TEXT, read_fixture("corpus.en")[:20_000]]  # a text without "word" alone
    tok = trained_bpe(*FAMILIES["llama3"], texts, 600)
    tok.add_tokens(
        [
            AddedToken("word", single_word=True, special=False, normalized=False),
            AddedToken("<tool>", lstrip=True, special=False, normalized=False),
        ]
    )
    tok.add_special_tokens([AddedToken("<pad>", special=True, normalized=False)])
    obj = json.loads(tok.to_str())
    obj["model"]["ignore_merges"] = ignore_merges
    for content in ("word", "<tool>", "<pad>"):
        obj["model"]["vocab"][content] = tok.token_to_id(content)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return str(path)
