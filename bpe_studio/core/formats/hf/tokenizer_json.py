"""Hugging Face ``tokenizer.json`` for byte-level BPE: reading and writing.

What it does: :func:`read_hf` reads the model (vocabulary, merges, ``ignore_merges``) and,
through ``hf.components``, how the file treats text (normalizers, pre-tokenizers, added tokens
with their flags, the post-processor's template), refusing, naming the file and component,
anything whose tokenization it could not reproduce exactly. :func:`write_hf` writes a file
``tokenizers`` loads and that encodes as the data does (a file read here gets its own
normalizer, pre-tokenizer, added tokens and post-processor back). What it leaves out: other
model types (WordPiece, Unigram, WordLevel), truncation and padding (read past, said in the
record's ``notes``), and encoding itself.

Regexes: ``tokenizers`` runs Oniguruma (Ruby syntax), this project the ``regex`` module.
Reading translates (``hf.onig``). Writing does not (but for one-letter property names,
put in braces: Oniguruma reads ``\\pL`` as the text "pL"): a custom pattern using what the two
read differently (``^``/``$``, ``{m,n}+``, the regex module's fuzzy ``{e<=1}``, some inline
flags) or what tokenizers cannot compile is refused, naming what to write instead where one
exists and the files that hold it; the named ones are written in forms proven equal by the
tests.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...io.atomic import atomic_write_bytes, output_folder
from ...pretokenization.coverage import first_dropped, first_left_out
from ...pretokenization.names import property_key, shown_pattern
from ...pretokenization.scan_patterns import isolated, unwrapped
from ...text.display import first_few
from ..base.byte_chars import decode_token, encode_token
from ..base.data import PATTERNS, TokenizerData, check_id_range, pattern_name
from ..base.fuzzy import FUZZY_REASON, fuzzy_at
from ..base.json_errors import read_json
from ..base.json_writing import dumps_in_slices
from ..base.lossy import LossyFormatWarning
from .added_tokens import EmptyAddedToken
from .kind import (
    dropout_note,
    dropped_note,
    found_alike_note,
    removed_regex_note,
    removed_strings,
    whole_text_note,
)
from .onig import translate
from .template import unknown_id

if TYPE_CHECKING:
    from .added_tokens import AddedToken
    from .components import Components
    from .pipeline import HfPipeline

# The named patterns as Oniguruma must read them to split as the regex module splits with
# PATTERNS (gpt2 is ByteLevel's own regex, so it needs none). cl100k: "\p{N}{1,3}+" loses its
# possessive "+" (nothing follows it inside its alternative, so greedy is the same) and "$"
# becomes "\z" (after "\s++" no line break is left for Python's "$" to stop before).
_HF_PATTERNS: dict[str, str] = {
    "cl100k": PATTERNS["cl100k"].replace(r"\p{N}{1,3}+", r"\p{N}{1,3}").replace("$", r"\z"),
    "o200k": PATTERNS["o200k"],
}
_HF_NAMES = {regex: name for name, regex in _HF_PATTERNS.items()}
_ESCAPES_WITH_BRACES = set("pPNxgkuU")
# (\z is the end of the text in both, as the cl100k written above has it.) \m and \M: the
# regex module's start and end of a word, which Oniguruma does not have.
_ANCHOR_ESCAPES = set("ZGhHRXKmM")
# What to write instead of a refused construct, where something means the same in both.
_INSTEAD = {
    "$": "; \\z is the end of the text in both",
    "\\Z": "; \\z is the end of the text in both",
    "^": "; \\A is the start of the text in both",
}
# Escapes whose characters or meaning differ (onig.py: Oniguruma's \w also takes ² ³ ¹ ¼ ½
# ¾ and not U+200C/U+200D; \b and \B follow that \w; \y, \Y, \O, \N, \g and \k are
# Oniguruma's own), inside a class or out.
_WORD_ESCAPES = set("wWbByYONgk")
_QUANTIFIER = re.compile(r"\{\d*,?\d*\}")
# An escape; groups: a one-letter property's "p" or "P", and its name.
_ONE_LETTER_PROPERTY = re.compile(r"\\(?:([pP])([A-Za-z])|.)", re.DOTALL)


# Properties Oniguruma reads otherwise (measured against tokenizers): Word as its \w (² ³ ¹
# ¼ ½ ¾ in), XDigit with every script's digits (Arabic-Indic ٠ in).
_PROPERTY_TRAPS = frozenset({"word", "xdigit"})


def _property_trap(escape: str) -> bool:
    r"""Whether ``\p{...}`` (``escape``, braces included) is read otherwise by Oniguruma:
    one of :data:`_PROPERTY_TRAPS`, or a ``Name=Value`` form it does not have."""
    name = escape[3:-1]
    return "=" in name or property_key(name) in _PROPERTY_TRAPS


def engine_trap(pattern: str) -> str | None:
    """The first construct of ``pattern`` that Oniguruma and the regex module read
    differently (see the module docstring), or None."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt in _ANCHOR_ESCAPES or nxt in _WORD_ESCAPES:
                return "\\" + nxt
            if nxt in _ESCAPES_WITH_BRACES and pattern[i + 2 : i + 3] == "{":
                end = pattern.find("}", i) + 1 or n
                if nxt in "pP" and _property_trap(pattern[i:end]):
                    return pattern[i:end]
                i = end
                continue
            i += 2
        elif c == "[":
            # A class: skip to its closing bracket (a "]" first in the class is literal).
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                if pattern[j] == "\\" and pattern[j + 1 : j + 2] in _WORD_ESCAPES | {"h", "H"}:
                    return pattern[j : j + 2]
                if pattern.startswith("[:", j):
                    return "[:"  # a POSIX bracket: some of their sets differ (onig.py)
                if pattern.startswith(("&&", "--"), j):
                    # Oniguruma's intersection, and a range it refuses; characters here.
                    return pattern[j : j + 2]
                if pattern.startswith(("\\p{", "\\P{"), j):
                    end = pattern.find("}", j) + 1 or n
                    if _property_trap(pattern[j:end]):
                        return pattern[j:end]
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
        elif c in "^$":
            return c
        elif c == "{":
            fuzzy = fuzzy_at(pattern, i)
            if fuzzy is not None:
                return fuzzy
            m = _QUANTIFIER.match(pattern, i)
            if m and pattern[m.end() : m.end() + 1] == "+":
                return m.group() + "+"
            i = m.end() if m else i + 1
        elif c == "(" and pattern[i + 1 : i + 2] == "?":
            flags = re.match(r"\(\?([a-zA-Z]*)[:)-]", pattern[i:])
            if flags and set(flags.group(1)) - {"i"}:
                return flags.group(0)
            i += 2
        else:
            i += 1
    return None


# ------------------------------------------------------------------ reading
class _Reader:
    """One file's checks; ``fail`` names the file and the component."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, component: str, why: str) -> ValueError:
        return ValueError(f"{self.name}: {component}: {why}")

    def check_model(self, model: Any) -> dict[str, Any]:
        if model is None:
            # (a JSON file of text or records, given as a tokenizer: "model: missing" did not
            # say it is no tokenizer at all)
            raise ValueError(
                f'{self.name}: holds no "model": not a tokenizer.json (nor a GPT-2 vocab.json, '
                "whose values are ids)"
            )
        if not isinstance(model, dict):
            shown = json.dumps(model, ensure_ascii=False)[:80]
            raise self.fail("model", f"expected an object, got {shown}")
        kind = model.get("type", "BPE" if "merges" in model else None)
        if kind != "BPE":
            raise self.fail("model", f"type {kind!r} is not supported (only byte-level BPE)")
        if model.get("byte_fallback"):
            raise self.fail("model.byte_fallback", "byte fallback is not byte-level BPE")
        dropout = model.get("dropout")
        if dropout is not None and (type(dropout) not in (int, float) or not 0 <= dropout <= 1):
            raise self.fail("model.dropout", f"expected a probability, got {dropout!r}")
        for key in ("continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(key):
                raise self.fail(f"model.{key}", f"{model[key]!r} is not supported")
        return model

    def token(self, text: Any, where: str) -> bytes:
        if not isinstance(text, str) or not text:
            raise self.fail(where, f"expected a non-empty token string, got {text!r:.80}")
        return decode_token(text, f"{self.name}: {where}")

    def merges(self, raw: Any, known: Mapping[str, bytes]) -> list[tuple[bytes, bytes]]:
        """``known``: the vocabulary's token strings and their bytes (parts are looked up
        there, only strangers are decoded)."""
        if not isinstance(raw, list):
            raise self.fail("model.merges", "expected a list")
        merges: list[tuple[bytes, bytes]] = []
        for i, m in enumerate(raw):
            parts = m.split(" ") if isinstance(m, str) else m
            if not isinstance(parts, list) or len(parts) != 2:
                raise self.fail(f"model.merges[{i}]", f"expected 'a b' or [a, b], got {m!r:.80}")
            a, b = known.get(parts[0]), known.get(parts[1])
            if a is None or b is None:
                a = a or self.token(parts[0], f"model.merges[{i}]")
                b = b or self.token(parts[1], f"model.merges[{i}]")
            merges.append((a, b))
        return merges


@cache
def _ids_counted_once() -> bool:
    """Whether the installed tokenizers (0.23 on) gives the added tokens the model does not
    hold the ids from one count, started at the model's size; before, each new one got one
    past the largest added id so far (those the model holds included)."""
    try:
        major, minor = (int(x) for x in metadata.version("tokenizers").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return True
    return (major, minor) >= (0, 23)


def decoded_as(token: AddedToken) -> bytes:
    """The bytes the installed tokenizers decodes an added token as: since 0.23 a
    ``normalized`` one as the ByteLevel decoder reads its normalized form (``simple_id_to_token``
    gives it, from ``normalized_cache``: "THINK" under Lowercase decodes as "think"), each
    letter of the byte-level alphabet as its byte, or as that text's UTF-8 where one letter is
    outside it; before, every one as its content."""
    if not token.normalized or token.match in ("", token.content) or not _ids_counted_once():
        return token.content.encode("utf-8")
    try:
        return decode_token(token.match, "")
    except ValueError:
        return token.match.encode("utf-8")


def _added_ids(contents: Sequence[str], vocab: Mapping[str, Any]) -> dict[str, int]:
    """Each added token's id as the installed tokenizers gives it when it loads the file
    (``serialization.rs``, then ``AddedVocabulary::add_tokens``), in the file's order (each
    token once): the model's own for a token its vocabulary holds; else the next of a count
    that starts at the number of entries of that vocabulary (``_ids_counted_once``).

    subtle: the id written beside each added token is not read: tokenizers only warns where
    it differs (a vocabulary with gaps in its ids, a file edited by hand), and its id is the
    one a model sees."""
    size = len(vocab)
    ids: dict[str, int] = {}
    count = size
    for content in contents:
        own = vocab.get(content)
        if isinstance(own, int) and not isinstance(own, bool):
            ids[content] = own
        elif _ids_counted_once():
            ids[content], count = count, count + 1
        else:
            top = max(ids.values(), default=None)
            ids[content] = size if top is None or (top < size and size) else top + 1
    return ids


def _u32(idx: object) -> bool:
    """Whether ``idx`` is an id tokenizers reads (a JSON integer that fits in a u32)."""
    return isinstance(idx, int) and not isinstance(idx, bool) and 0 <= idx < 2**32


def _spelled(text: str) -> bytes | None:
    """The other bytes ``text`` is GPT-2's byte-level spelling of (``"Ġhi"``: `` hi``, ``"é"``:
    byte 0xE9), or None when it spells none but its own."""
    try:
        spelled = decode_token(text, "")
    except ValueError:
        return None  # not a byte-level spelling: the token's text is its bytes
    return None if spelled == text.encode("utf-8") else spelled


def _byte_level_decoder(decoder: object) -> bool:
    """Whether ``decoder`` decodes as ByteLevel does: ByteLevel, alone or as the one step of
    a Sequence (as some files write it)."""
    if isinstance(decoder, dict) and decoder.get("type") == "Sequence":
        steps = decoder.get("decoders")
        decoder = steps[0] if isinstance(steps, list) and len(steps) == 1 else None
    return isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"


def _refuse_a_spelling_of_other_bytes(text: str, idx: int, r: _Reader) -> None:
    """ValueError when an added token is also the model's byte-level spelling of other bytes
    (``"Ġhi"`` for `` hi``, ``"Ĳ"`` for byte 0x90): tokenizers then matches the text and
    decodes the bytes, which one added token (its text's bytes) cannot hold."""
    spelled = _spelled(text)
    if spelled is not None:
        raise r.fail(
            "added_tokens",
            f"{text!r} (id {idx}) is also model.vocab's byte-level spelling of {spelled!r}: "
            "tokenizers matches the text and decodes those bytes, which an added token "
            "cannot do here",
        )


# What a byte-level spelling is, said where one is refused (U+0120 "Ġ" is no Latin-1 letter).
_EACH_LETTER_A_BYTE = "each of its letters stands for one byte in the byte-level alphabet"


def _refuse_a_decoding_of_other_bytes(text: str, idx: int, r: _Reader) -> None:
    """ValueError when an added token that model.vocab does not hold is the byte-level
    spelling of other bytes (``"<|größe|>"``, ``"ĠĠĠ"``): tokenizers decodes it as those
    bytes, an added token here as its text's. Refused as writing refuses it
    (``added_tokens_problem``), so that no file is read that could not be written back."""
    spelled = _spelled(text)
    if spelled is not None:
        raise r.fail(
            "added_tokens",
            f"{text!r} (id {idx}) is the byte-level spelling of {spelled!r} "
            f"({_EACH_LETTER_A_BYTE}): tokenizers decodes it as those bytes, which an added "
            "token cannot do here (it decodes as its text)",
        )


def _refuse_added_tokens(parts: Components, raw_vocab: dict[str, Any], r: _Reader) -> None:
    """ValueError for what the added tokens and the template give that no token here can
    (tokenizers runs such a file all the same, so ``structure_problem`` says it): an added
    token outside model.vocab that spells other bytes, a template id past the vocabulary.
    A token given twice, and a model.vocab id that is no u32 or is given twice, are left to
    ``read_hf``, which names the entry (the ids counted here from such a vocabulary named
    the template's first id as the fault)."""
    contents = [token.content for token in parts.added]
    if len(set(contents)) < len(contents):
        return
    model_ids = list(raw_vocab.values())
    if len(set(model_ids)) < len(model_ids) or not all(map(_u32, model_ids)):
        return
    added = _added_ids(contents, raw_vocab)
    for content, at in added.items():
        if content not in raw_vocab:  # one model.vocab holds is refused by read_hf
            _refuse_a_decoding_of_other_bytes(content, at, r)
    if parts.template is not None:
        ids = {i for i in raw_vocab.values() if isinstance(i, int)} | set(added.values())
        if problem := unknown_id(parts.template, ids):
            raise r.fail("post_processor", problem)


# How a special token's refusal ends: the files that hold it instead.
TOKEN_HELD_ELSEWHERE = (
    " (tiktoken files hold it where no merge makes it too; GPT-2 files do, named again on loading)"
)


def added_tokens_problem(tokens: Iterable[str]) -> str | None:
    """Why a ``tokenizer.json`` cannot hold one of these special (or added) tokens, whatever
    the vocabulary; None when it can. Asked before training too. A token whose text is also
    the byte-level spelling of other bytes (``"é"``, ``"<|größe|>"``: the Latin-1 letters
    spell single bytes) is decoded by tokenizers as those bytes, and reading the file back
    here is refused (``read_hf``)."""
    for text in tokens:
        spelled = _spelled(text)
        if spelled is not None:
            return (
                f"special token {text!r} is also the byte-level spelling of {spelled!r} "
                f"({_EACH_LETTER_A_BYTE}): tokenizers would decode it as those "
                f"bytes{TOKEN_HELD_ELSEWHERE}"
            )
    return None


def file_components(obj: dict[str, Any], name: str) -> Components:
    """The components of the parsed ``tokenizer.json`` ``obj`` (``name``: the file), its
    named patterns known by their names (``components.read_components``)."""
    # subtle: imported here, so that loading a preset or a rank file does not import it.
    from .components import read_components

    return read_components(obj, name, _HF_NAMES)


def split_readings(pattern: str) -> set[str]:
    """What the reader makes of a ``tokenizer.json`` Split by the regex ``pattern`` (written
    for Oniguruma), in every spelling a file's record may hold it: a named pattern's name
    (:data:`_HF_PATTERNS`), or its translation (``hf.onig``) alone and as an Isolated Split
    applies it. Empty when it is nothing ``translate`` reads. A pattern asked for is compared
    through these with a file's (``files.patterns_agree``): the file's own regex given back
    is read as translated, "\\p{N}{1,3}" as "(?:\\p{N}){1,3}", and was refused as another."""
    named = _HF_NAMES.get(pattern)
    if named is not None:
        return {named}
    try:
        translated = translate(pattern).pattern
    except (ValueError, RecursionError):  # no Oniguruma regex: it reads as none of a file's
        return set()
    return {translated, isolated(translated)}


def _structure(obj: dict[str, Any], r: _Reader) -> tuple[dict[str, Any], Components]:
    """The model's options, the components, the decoder and what the added tokens and the
    template give checked (ValueError naming the file and component): the model and the
    components read."""
    if obj and all(isinstance(v, int) and not isinstance(v, bool) for v in obj.values()):
        # subtle: OpenAI's own GPT-2 vocabulary is named encoder.json, and holds a token
        # "model" (its id 19849): "model: missing" was said of it.
        raise ValueError(
            f"{r.name}: a GPT-2 vocabulary (each token's id), not a tokenizer.json: load it "
            "with its merges (vocab.bpe beside OpenAI's encoder.json), as a folder's "
            "vocab.json + merges.txt or Tokenizer.from_files(vocab, merges)"
        )
    model = r.check_model(obj.get("model"))
    parts = file_components(obj, r.name)
    decoder = obj.get("decoder")
    if not _byte_level_decoder(decoder):
        shown = json.dumps(decoder, ensure_ascii=False)  # as the file writes it: null, {...}
        raise r.fail("decoder", f"{shown} is not supported (ByteLevel only)")
    raw_vocab = model.get("vocab")
    if isinstance(raw_vocab, dict):  # else read_hf names what is wrong
        _refuse_added_tokens(parts, raw_vocab, r)
    return model, parts


class RunByTokenizers(ValueError):
    """What :func:`read_hf` refuses in a byte-level file that ``tokenizers`` may run all the
    same (``files`` hands such a file to it, as another kind, when it does)."""


class MissingByteTokens(RunByTokenizers):
    """A byte-level model without a token for every byte: ``BpeTrainer`` trains one so
    unless given the byte-level alphabet. ``tokenizers`` leaves out the text it has no token
    for; byte-level BPE here needs all 256."""


class AddedTokenConflict(RunByTokenizers):
    """An added token :func:`read_hf` cannot place beside the model's own tokens: its bytes
    held by another id, or a merge's part or result. ``tokenizers`` may run such a file all
    the same (it cuts added tokens out of the text before the model sees it)."""


class RepeatedMerge(RunByTokenizers):
    """A merge listed twice: ``tokenizers`` ranks it by its last copy (its table of merges
    keeps the last), where a rank-based encoder here would take the first."""


def structure_problem(obj: Any, name: str) -> str | None:
    """Why :func:`read_hf` refuses the parsed byte-level ``tokenizer.json`` ``obj`` (named
    ``name``) for its model's options, its components, its decoder or what its added tokens
    and template give, or None; its vocabulary's entries and merges are not checked. None
    too for a ``normalized`` added token its normalizer empties: ``tokenizers`` would not run
    it either (``EmptyAddedToken``)."""
    if not isinstance(obj, dict):
        return None  # read_hf names what is wrong
    try:
        _structure(obj, _Reader(name))
    except EmptyAddedToken:
        return None  # tokenizers cannot run it either: read_hf raises it
    except ValueError as e:
        return str(e)
    return None


def read_hf(path: str | os.PathLike) -> TokenizerData:
    """Read a Hugging Face ``tokenizer.json`` holding a byte-level BPE tokenizer; its added
    tokens with their ids become special tokens (``"special": true``) or the record's
    ``added_tokens``, matched always (``"special": false``), as ``tokenizers`` treats them.

    Raises ValueError naming the file and component for anything whose tokenization this
    project would not reproduce exactly (see the module docstring and ``_Reader``).
    """
    return read_hf_parsed(read_json(path), os.fspath(path))


def read_hf_parsed(obj: Any, name: str) -> TokenizerData:
    """:func:`read_hf` of the parsed ``tokenizer.json`` ``obj`` (named ``name``)."""
    r = _Reader(name)
    if not isinstance(obj, dict):
        raise ValueError(
            f"{name}: expected a JSON object, got {_json_kind(obj)}: not a tokenizer.json"
        )
    # Truncation, padding and dropout are not applied, as for every kind of file (hf.kind).
    model, parts = _structure(obj, r)
    notes: tuple[str | None, ...] = (
        whole_text_note(name, obj.get("truncation"), obj.get("padding")),
        dropout_note(name, model.get("dropout")),
        _dropped_note(name, parts.pipeline),
    )
    raw_vocab = model.get("vocab")
    if not isinstance(raw_vocab, dict):
        raise r.fail("model.vocab", "expected an object mapping tokens to ids")
    # Every added token, special or not: each is cut out of the text whole, never merged.
    contents = [token.content for token in parts.added]
    for i, content in enumerate(contents):
        if content in contents[:i]:
            # subtle: tokenizers runs such a file (it keeps one of the copies); refused as
            # a plain error, open_tokenizer refused it too.
            raise AddedTokenConflict(
                f"{name}: added_tokens[{i}]: {content!r} is given twice (as "
                f"added_tokens[{contents.index(content)}])"
            )
    specials = _added_ids(contents, raw_vocab)
    notes += (found_alike_note(name, parts.added, specials),)
    vocab: dict[int, bytes] = {}
    known: dict[str, bytes] = {}
    for text, idx in raw_vocab.items():
        if not _u32(idx):
            raise r.fail(
                f"model.vocab[{text!r}]",
                f"id must be an integer from 0 to {2**32 - 1:,} (as tokenizers reads one), "
                f"not {idx!r:.60}",
            )
        if idx in vocab:
            raise r.fail(f"model.vocab[{text!r}]", f"id {idx} is used twice")
        if specials.get(text) == idx:
            _refuse_a_spelling_of_other_bytes(text, idx, r)
            vocab[idx] = text.encode("utf-8")
            continue
        vocab[idx] = known[text] = r.token(text, f"model.vocab[{text!r}]")
    special = {t.content for t in parts.added if t.special}
    decoded = {t.content: decoded_as(t) for t in parts.added if not t.special}
    # subtle: an added token that is not special may hold bytes a model token holds too
    # (phi-2's "  " beside "ĠĠ"): it is always cut out whole, so its own id is the one
    # encoding gives; merges are checked against the model's.
    shared = {idx for s, idx in specials.items() if s not in special}
    inverse: dict[bytes, int] = {}
    added_ids = set(specials.values())
    for idx, tok in sorted(vocab.items(), key=lambda item: item[0] in shared):
        if inverse.setdefault(tok, idx) != idx and idx not in shared:
            if {idx, inverse[tok]} & added_ids:
                # A special token listed in model.vocab (as Llama 3's are) whose bytes a model
                # token holds ("\n" beside "Ċ"): tokenizers cuts it out first and runs the file.
                content = next(c for c, at in specials.items() if at in (idx, inverse[tok]))
                raise AddedTokenConflict(
                    f"{name}: added_tokens: {content!r} (id {specials[content]}) clashes with "
                    f"the model's vocabulary (ids {inverse[tok]} and {idx} hold {tok!r})"
                )
            raise r.fail("model.vocab", f"ids {inverse[tok]} and {idx} hold the same bytes {tok!r}")
    for s, idx in specials.items():
        sb = s.encode("utf-8")
        if vocab.get(idx, sb) != sb or (inverse.get(sb, idx) != idx and idx not in shared):
            held = vocab.get(idx, sb)
            why = f"id {idx} holds {held!r}" if held != sb else f"id {inverse[sb]} holds {sb!r}"
            raise AddedTokenConflict(
                f"{name}: added_tokens: {s!r} (id {idx}) clashes with the model's vocabulary "
                f"(in model.vocab, {why})"
            )
        shown = sb if s in special else decoded.get(s, sb)
        if shown != sb and len(sb) == 1 and raw_vocab.get(s) == idx:
            # subtle: a normalized added token that is also the model's own token for a byte
            # ("X" under Lowercase): tokenizers decodes that id as the normalized text ("x"),
            # and byte-level BPE needs it as the byte "X"; one id with two spellings, which
            # only tokenizers' own lookup holds.
            raise AddedTokenConflict(
                f"{name}: added_tokens: {s!r} (id {idx}) is also model.vocab's token for the "
                f"byte {s!r}, which tokenizers decodes as its normalized form {shown!r}; one "
                "byte's id spelt two ways is not supported"
            )
        vocab[idx] = shown
    missing = [b for b in range(256) if bytes([b]) not in inverse]
    if missing:
        # subtle: the note of the file tokenizers then runs (kind._REASON_CHARS of it): it
        # says what the user loses, text holding such a byte encoded without it.
        more = f" and {len(missing) - 1:,} more have" if len(missing) > 1 else " has"
        raise MissingByteTokens(
            f"{name}: model.vocab: byte 0x{missing[0]:02x}{more} no token: tokenizers "
            "leaves such bytes out of the text it encodes (byte-level needs all 256)"
        )

    merges = r.merges(model.get("merges"), known)
    merge_rank: dict[tuple[bytes, bytes], int] = {}
    special_ids = set(specials.values())
    for i, (a, b) in enumerate(merges):
        ids = inverse.get(a), inverse.get(b), inverse.get(a + b)
        if None in ids or not special_ids.isdisjoint(ids):
            part, idx = next(
                (p, idx) for p, idx in zip((a, b, a + b), ids) if idx is None or idx in special_ids
            )
            if idx is not None:
                # tokenizers cuts an added token out of the text before merging; one the
                # merges also use or make would need both rules at once.
                content = next(c for c, at in specials.items() if at == idx)
                raise AddedTokenConflict(
                    f"{name}: added_tokens: {content!r} (id {idx}) is also "
                    f"{'made' if part == a + b else 'used'} by model.merges[{i}] ({a!r} + "
                    f"{b!r}); a token both added and merged is not supported"
                )
            raise r.fail(
                f"model.merges[{i}]", f"token {part!r} is not an ordinary vocabulary token"
            )
        # subtle: tokenizers keeps the last rank of a repeated merge, this project the first.
        if merge_rank.setdefault((a, b), i) != i:
            raise RepeatedMerge(
                f"{name}: model.merges[{i}]: repeats merge {merge_rank[(a, b)]} (tokenizers "
                "ranks the last copy of a merge, this reader the first)"
            )
    check_id_range(vocab, name)
    ignore_merges = model.get("ignore_merges")
    if ignore_merges is not None and not isinstance(ignore_merges, bool):
        # tokenizers refuses any other value ("false" as a string would be true to bool).
        written = json.dumps(ignore_merges, ensure_ascii=False)
        raise r.fail("model.ignore_merges", f"must be true, false or null, got {written}")
    ignore_merges = bool(ignore_merges)
    return TokenizerData(
        vocab,
        merges,
        {s: idx for s, idx in specials.items() if s in special},
        parts.pattern,
        ignore_merges=ignore_merges,
        pipeline=parts.pipeline,
        template=parts.template,
        added_tokens={s: idx for s, idx in specials.items() if s not in special},
        notes=tuple(note for note in notes if note is not None),
        # Where tokenizers would look a pre-token up as one of them (ignore_merges only).
        added_in_model={s: i for s, i in specials.items() if raw_vocab.get(s) == i}
        if ignore_merges
        else {},
    )


# ------------------------------------------------------------------ writing
def _dropped_note(name: str, pipeline: HfPipeline | None) -> str | None:
    """The note for a file whose pre-tokenizer drops text (a Split that keeps its matches
    only, a WhitespaceSplit), whatever its normalizer: text it drops, so that a caller of
    encode knows before text is lost (the command line also counts what each input lost,
    where the ids' bytes tell: ``HfPipeline.drops_text``)."""
    if pipeline is None or not pipeline.removes_text:
        return None
    pre_tokenizer = json.loads(pipeline.spec)[1]
    found = first_dropped(pipeline.dropped, removed_strings(pre_tokenizer))
    return dropped_note(name, found) if found else removed_regex_note(name, pre_tokenizer)


def dropped_when_written(data: TokenizerData) -> str | None:
    """A character that this tokenizer's custom pattern leaves unmatched, which the
    ``tokenizer.json`` written for it drops: the file keeps the Split's matches only, as
    tokenizers runs it, where this tokenizer refuses such text (``UncoveredText``). None for
    a named pattern, a pipeline read from a file (written as read: it dropped the text
    already), or one probe character it leaves out (``coverage.first_left_out``)."""
    if data.pipeline is not None or pattern_name(data.pattern) in PATTERNS:
        return None
    if _isolated(data.pattern) is not None:
        return None
    import regex

    try:
        compiled = regex.compile(data.pattern)
    except regex.error:
        return None  # refused, naming the pattern, where it is written
    return first_left_out(lambda text: [m.group() for m in compiled.finditer(text)])


def _isolated(pattern: str) -> str | None:
    """A file's one Isolated Split as read (``scan_patterns.isolated``): its regex, which as
    read never matches "" nor refers back to a group (``components.single_pattern``); None
    for any other pattern, written as the regex it is."""
    inner = unwrapped(pattern)
    if inner is None:
        return None
    translated = translate(inner)
    return None if translated.nullable or translated.refers_back else inner


def braced_properties(pattern: str) -> str:
    r"""``pattern`` with each one-letter property name in braces (``\pL`` as ``\p{L}``), the
    same to the regex module: Oniguruma reads ``\pL`` as the text "pL". A tokenizer.json
    holds a pattern so: compared with another, a pattern is compared so (``files``)."""
    return _ONE_LETTER_PROPERTY.sub(
        lambda m: f"\\{m[1]}{{{m[2]}}}" if m[1] else m[0],
        pattern,
    )


def _oniguruma_refuses(regex: str) -> str | None:
    """Oniguruma's own error compiling ``regex``, where tokenizers is installed (it is not
    required): a last check for what tokenizers could not load (property names it lacks,
    such as ``\\p{Horiz_Space}``)."""
    try:
        from tokenizers import Regex
    except ImportError:
        return None
    try:
        Regex(regex)
    except Exception as e:  # noqa: BLE001 - tokenizers raises a bare Exception
        return str(e).splitlines()[0] if str(e) else type(e).__name__
    return None


def split_problem(pattern: str) -> str | None:
    """Why a ``tokenizer.json`` cannot hold ``pattern`` (a regex, not a named pattern) as a
    Split that pre-tokenizes as it does here, naming the files that hold it; None when it
    can. Asked before training too: found only when the files were written, the run was
    lost."""
    if pattern_name(pattern) in ("gpt2", *_HF_PATTERNS):
        return None
    why = _why(pattern)
    if why is None:
        return None
    # subtle: imported here, so that reading a tokenizer.json does not import tiktoken's files.
    from ..tiktoken.pattern_check import held_elsewhere, pattern_problem

    return why + held_elsewhere("tiktoken" if pattern_problem(pattern) is None else None)


def _why(pattern: str) -> str | None:
    inner = _isolated(pattern)
    regex = pattern if inner is None else inner
    written = braced_properties(regex)
    trap = engine_trap(written)
    if trap and fuzzy_at(trap, 0) == trap:
        return f"pattern {shown_pattern(regex)}: {shown_pattern(trap)} {FUZZY_REASON}"
    if trap:
        return (
            f"pattern {shown_pattern(regex)}: {shown_pattern(trap)} means different things in "
            f"Oniguruma (which tokenizers runs) and in Python's regex{_INSTEAD.get(trap, '')}"
        )
    try:
        translated = translate(written)
    except ValueError as e:
        # What reading the file back here would refuse (case-insensitive letters with no
        # exact equivalent, say): not written.
        return f"pattern {shown_pattern(regex)}: {e}"
    if translated.respelled:
        # Read back, it means what Oniguruma makes of it, not what it means here.
        return (
            f"pattern {shown_pattern(regex)}: {translated.respelled!r} inside a "
            "case-insensitive group matches other characters in Oniguruma (which tokenizers "
            "runs) than in Python's regex; end the group before it, spelling out both cases "
            "([iI])"
        )
    if inner is None and translated.nullable:
        # subtle: written as a Split of its matches, tokenizers steps past an empty match
        # otherwise than Python's regex does, and drops the text in between (an audit: all
        # but the spaces of "Once upon a time.").
        return (
            f"pattern {shown_pattern(regex)} can match empty text, which tokenizers' Split "
            "reads otherwise than Python's regex: the tokenizer.json would drop text"
        )
    refused = _oniguruma_refuses(written)
    if refused is not None:
        return f"pattern {shown_pattern(regex)}: tokenizers cannot compile it ({refused})"
    return None


def _pre_tokenizer(pattern: str) -> dict[str, Any]:
    name = pattern_name(pattern)
    if name == "gpt2":
        return {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        }
    if name in _HF_PATTERNS:
        split = {"Regex": _HF_PATTERNS[name]}
        behavior, invert = "Isolated", False
    else:
        # A file's one Isolated Split as read (``scan_patterns.isolated``: the regex, and the
        # text between its matches as pieces) is written back as that Split of its regex;
        # as read, its regex never matches "" (``components.single_pattern``).
        inner = _isolated(pattern)
        regex = pattern if inner is None else inner
        problem = split_problem(pattern)
        if problem:
            raise ValueError(problem)
        split = {"Regex": braced_properties(regex)}
        # Else the matches only, as findall gives them: text the pattern does not cover is
        # dropped.
        behavior, invert = ("Removed", True) if inner is None else ("Isolated", False)
    return {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": split, "behavior": behavior, "invert": invert},
            {
                "type": "ByteLevel",
                "add_prefix_space": False,
                "trim_offsets": True,
                "use_regex": False,
            },
        ],
    }


def _merge_of_an_added_token(data: TokenizerData, at: int, part: bytes, idx: int) -> str:
    """Why a merge that makes or joins a special or added token (id ``idx``) is not
    written, in words as the tiktoken writer's for the same case: tokenizers cuts such a
    token out of the text before any merge, so a merge of it would never apply as here."""
    a, b = data.merges[at]
    kind = "special" if idx in data.special_tokens.values() else "added"
    text = next(s for s, i in {**data.added_tokens, **data.special_tokens}.items() if i == idx)
    role = f"what merge {at} makes" if part == a + b else f"a part of merge {at} ({a!r}, {b!r})"
    return (
        f"{kind} token {text!r} (id {idx}) is also {role}: a tokenizer.json's merges join "
        f"and make only model.vocab's ordinary tokens, apart from its {kind} tokens, so that "
        "token and those built on it could not be held (GPT-2 files hold it, named again on "
        "loading: 'gpt2')"
    )


def _hf_object(data: TokenizerData, where: str) -> dict[str, Any]:
    # Added tokens, special or not, are written alike but for their "special" flag.
    every_added = {**data.added_tokens, **data.special_tokens}
    problem = added_tokens_problem(every_added)
    if problem is not None:
        raise ValueError(problem)
    special_ids = set(every_added.values())
    special_of = {idx: s for s, idx in every_added.items()}
    spelt: dict[str, int] = {}  # every token as model.vocab would write it
    inverse: dict[bytes, int] = {}
    text_of: dict[bytes, str] = {}
    added_ids = set(data.added_tokens.values())
    for idx, tok in sorted(data.vocab.items()):
        # An added token that is not special may share its bytes with a model token (phi-2's
        # "  "): the model's id is the one merges are checked against.
        if tok in inverse and {idx, inverse[tok]}.isdisjoint(added_ids):
            raise ValueError(f"ids {inverse[tok]} and {idx} hold the same token {tok!r}")
        if tok not in inverse or inverse[tok] in added_ids:
            inverse[tok] = idx
        text_of[tok] = encode_token(tok)
        # subtle: a special token is in the model's vocabulary as its own text, which
        # tokenizers looks up to give it its id; its byte-level spelling ("<|endĠofĠtext|>"
        # for one with spaces) is found by no one.
        text = special_of.get(idx, text_of[tok])
        if text in spelt:
            raise ValueError(
                f"ids {spelt[text]} and {idx} would both be written as {text!r} (a special token "
                "as its own text, the other token's bytes in byte-level spelling): tokenizers "
                "would read them as one token"
            )
        spelt[text] = idx
    # subtle: under ignore_merges tokenizers looks every pre-token up in model.vocab first,
    # added tokens' entries too, so only those the file read held are written there
    # (``added_in_model``); the others take ids counted past its entries, as they did there.
    free: dict[str, int] = {}
    if data.ignore_merges:
        free = {s: i for s, i in every_added.items() if data.added_in_model.get(s) != i}
    vocab = {text: idx for text, idx in spelt.items() if text not in free}
    # A normalized added token decodes as tokenizers decodes it (``decoded_as``).
    read_added = () if data.pipeline is None else data.pipeline.added
    held = {t.content: decoded_as(t) for t in read_added if t.content in data.added_tokens}
    for s, idx in every_added.items():
        if data.vocab.get(idx) not in (s.encode("utf-8"), held.get(s)):
            raise ValueError(f"added token {s!r}: id {idx} does not hold it in the vocabulary")
    missing = [b for b in range(256) if bytes([b]) not in inverse]
    if missing:
        raise ValueError(f"no id for byte 0x{missing[0]:02x}: byte-level BPE needs all 256")
    merges: list[list[str]] = []
    seen: set[tuple[bytes, bytes]] = set()
    for i, (a, b) in enumerate(data.merges):
        for part in (a, b, a + b):
            if part in inverse and inverse[part] in special_ids:
                raise ValueError(_merge_of_an_added_token(data, i, part, inverse[part]))
            if part not in inverse:
                raise ValueError(f"merge {i} ({a!r}, {b!r}): {part!r} is not an ordinary token")
        if (a, b) in seen:
            continue  # a repeat never applies; tokenizers would let it override the first
        seen.add((a, b))
        merges.append([text_of[a], text_of[b]])
    added = [
        {
            "id": idx,
            "content": s,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": s in data.special_tokens,
        }
        for s, idx in sorted(every_added.items(), key=lambda item: item[1])
    ]
    normalizer, pre_tokenizer = None, None
    if data.pipeline is not None:
        # Read from a tokenizer.json: its own normalizer, pre-tokenizer and added tokens.
        normalizer, pre_tokenizer, read = json.loads(data.pipeline.spec)
        # The file's own added tokens with their flags, then any special token given since;
        # one of its own made special since (``special_tokens=``) is written so. One that is
        # no added token any more (its special tokens turned off: ``no_specials``) is an
        # ordinary token, written in model.vocab: left in added_tokens, tokenizers would give
        # it a new id and match it as a special token (a fuzzing audit).
        turned_off = [str(t["content"]) for t in read if t.get("content") not in every_added]
        read = [token for token in read if token.get("content") in every_added]
        warn_hidden(turned_off, [str(t["content"]) for t in read], where)
        if data.ignore_merges:
            # subtle: written into model.vocab, tokenizers looks them up whole where the file
            # read had them outside it, as this tokenizer still does; no file keeps an id
            # out of that look-up (an ordinary token is written under its byte-level
            # spelling, " zzz" as "Ġzzz", which a pre-token is looked up by), so the loss
            # is said.
            looked_up = {
                s: spelt[encode_token(s.encode("utf-8"))]
                for s in turned_off
                if encode_token(s.encode("utf-8")) in spelt and s not in data.added_in_model
            }
            one_regex = not data.pipeline.needed
            _warn_looked_up_whole(
                looked_up, where, data.pattern if one_regex else None, _TURNED_OFF, spelt=True
            )
        known = {token.get("content") for token in read}
        read = [
            {**token, "special": True} if token.get("content") in data.special_tokens else token
            for token in read
        ]
        added = read + [token for token in added if token["content"] not in known]
    given = _added_ids([str(token["content"]) for token in added], vocab)
    if any(given[str(token["content"])] != token["id"] for token in added):
        # A count cannot give them their ids (a truncated tokenizer's, one whose special
        # tokens were turned off): model.vocab holds them all, as without ignore_merges.
        vocab = spelt
        # A file that splits text with one regex (its pipeline not needed to encode) is split
        # so here; another's pipeline is not run for a warning.
        one_regex = data.pipeline is None or not data.pipeline.needed
        _warn_looked_up_whole(free, where, data.pattern if one_regex else None, _KEPT_IDS)
    if pre_tokenizer is None:
        left_out = dropped_when_written(data)
        if left_out is not None:
            warnings.warn(
                f"{where}: the pattern {shown_pattern(data.pattern)} leaves text such as "
                f"{left_out!r} unmatched; this tokenizer refuses such text, but tokenizers, "
                "reading this file, drops it (no id stands for it); tiktoken files keep "
                "the refusal",
                LossyFormatWarning,
                stacklevel=3,
            )
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer or _pre_tokenizer(data.pattern),
        "post_processor": data.template.spec if data.template is not None else None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": data.ignore_merges,
            "vocab": vocab,
            "merges": merges,
        },
    }


def warn_hidden(
    turned_off: Sequence[str], added: Sequence[str], where: str, stacklevel: int = 4
) -> None:
    """LossyFormatWarning naming the added tokens that a special token turned off hides where
    its text occurs: tokenizers, reading special tokens as text, skips a special token's match
    without searching it again, so an added token the match overlaps from inside ("<|end" in
    "<|endoftext|>") is not found there. A file holds no special token that is off: written
    without it, tokenizers finds that added token there."""
    hidden = [
        (a, s)
        for s in turned_off
        for a in added
        if a in s or any(a.startswith(s[i:]) for i in range(1, len(s)))
    ]
    if hidden:
        a, s = hidden[0]
        warnings.warn(
            f"{where}: with its special tokens turned off, this tokenizer reads {s!r} as text "
            f"with no added token {a!r} inside it (as tokenizers does with "
            "encode_special_tokens); the file written has no such special token, so tokenizers "
            f"will find {a!r} there"
            + (f" ({len(hidden) - 1} more such pair(s))" if len(hidden) > 1 else ""),
            LossyFormatWarning,
            stacklevel=stacklevel,
        )


# Why tokens are in model.vocab, said where ``_warn_looked_up_whole`` names them.
_KEPT_IDS = (
    "added token(s) {} are written into model.vocab to keep their ids (tokenizers counts the "
    "others' past its entries)"
)
_TURNED_OFF = (
    "special token(s) {}, turned off (no_specials), are written into model.vocab as the "
    "ordinary tokens they are (the file read held them outside it, as added tokens)"
)


def _warn_looked_up_whole(
    written: Mapping[str, int],
    where: str,
    pattern: str | None,
    why: str,
    spelt: bool = False,
) -> None:
    """LossyFormatWarning naming the tokens written into model.vocab that a file with
    ``ignore_merges`` will look a pre-token up as (``building.file_whole_tokens``: those
    whose text is its own byte-level spelling, and, split by one ``pattern``, one piece),
    where this tokenizer merges it; ``why`` (with a ``{}`` for them) says why they are
    there. Llama 3's 256 reserved tokens split into several pieces: a warning naming them
    all warned of a loss that cannot happen. ``spelt``: written under their byte-level
    spelling (ordinary tokens), so every text is found by the look-up, not only one that
    is its own spelling."""
    found = [
        s
        for s in sorted(written, key=written.__getitem__)
        if spelt or encode_token(s.encode()) == s
    ]
    if pattern is not None:
        import regex

        split = regex.compile(PATTERNS.get(pattern, pattern))
        found = [s for s in found if split.findall(s) == [s]]
    if not found:
        return
    shown = first_few(found, 5)
    warnings.warn(
        f"{where}: {why.format(shown)}; with ignore_merges, "
        "tokenizers then gives a pre-token that is such a text that token's id where it is "
        "not cut out first (special tokens read as text, single_word, lstrip), where this "
        "tokenizer merges its bytes",
        LossyFormatWarning,
        stacklevel=4,
    )


def hf_losses(data: TokenizerData) -> list[str]:
    """What a ``tokenizer.json`` written for ``data`` loses, in the words of the
    LossyFormatWarnings :func:`write_hf` gives (without the path they start with), found
    without writing; empty when it loses nothing or cannot be written (:func:`write_hf` says
    why)."""
    where = "tokenizer.json"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LossyFormatWarning)
        try:
            _hf_object(data, where)
        except ValueError:
            return []
    return [
        str(w.message).removeprefix(f"{where}: ")
        for w in caught
        if issubclass(w.category, LossyFormatWarning)
    ]


def write_hf(directory: str | os.PathLike, data: TokenizerData) -> Path:
    """Write ``directory/tokenizer.json`` (atomically) for ``data``; returns its path.

    Raises ValueError naming the path for a tokenizer the format cannot hold exactly.
    """
    where = os.fspath(Path(directory) / "tokenizer.json")
    try:
        obj = _hf_object(data, where)
    except ValueError as e:
        raise ValueError(f"{where}: cannot write this tokenizer: {e}") from None
    text = dumps_in_slices(obj) + "\n"  # json.dumps' text, letting other threads run
    with output_folder(directory) as out:
        atomic_write_bytes(out / "tokenizer.json", text.encode("utf-8"))
    return out / "tokenizer.json"


def _json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words ("an array", "a string")."""
    kinds = ((list, "an array"), (str, "a string"), (bool, "true or false"), (type(None), "null"))
    return next((said for kind, said in kinds if isinstance(value, kind)), "a number")
