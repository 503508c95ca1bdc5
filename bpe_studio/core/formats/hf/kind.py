"""What kind of tokenizer a Hugging Face ``tokenizer.json`` holds: byte-level BPE or another.

What it does: :func:`foreign_kind` reads the file's model, pre-tokenizer and decoder and says
whether it is byte-level BPE (None: the project's own ``Tokenizer`` reads it, exactly, through
``tokenizer_json``) or another kind, named for people ("WordPiece", "Unigram", "BPE
(SentencePiece-style, byte fallback)"), which ``foreign`` runs through the ``tokenizers``
library. :class:`ForeignTokenizerFile` is the error ``formats.files`` raises for such a file
where only byte-level BPE will do; :class:`RefusedByteLevelFile`, for a byte-level BPE file
whose options or components this project's reader refuses and ``tokenizers`` runs (such a file
is run by ``tokenizers`` too). What it leaves out: reading either kind (``tokenizer_json``,
``foreign``).

Byte-level BPE is a BPE model over the 256 byte symbols: the ``ByteLevel`` pre-tokenizer maps
each byte to one of them. A BPE model without it works on characters (SentencePiece's BPE,
with a ``▁`` for spaces and, with ``byte_fallback``, ``<0xNN>`` tokens for characters outside
its vocabulary).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...corpus.stamps import Stamp, stamp
from ...pretokenization.coverage import first_dropped, unheld
from ..base.json_errors import json_or_none

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import tokenizers

    from .added_tokens import AddedToken

# The models the tokenizers library runs (its ``models`` module; ``ModelWrapper`` in Rust).
TOKENIZERS_MODELS = ("BPE", "Unigram", "WordLevel", "WordPiece")


def unknown_model(path: str | os.PathLike[str]) -> str | None:
    """The model ``type`` the ``tokenizer.json`` at ``path`` names, when ``tokenizers`` runs
    no such model (None: one it runs, or no readable type)."""
    obj = json_or_none(path)
    model = obj.get("model") if isinstance(obj, dict) else None
    kind = model.get("type") if isinstance(model, dict) else None
    return None if kind is None or kind in TOKENIZERS_MODELS else str(kind)


class ForeignTokenizerFile(ValueError):
    """A ``tokenizer.json`` of a kind other than byte-level BPE (``kind``), at ``path``."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        self.path = Path(path)
        self.kind = kind
        super().__init__(
            f"{os.fspath(path)}: a {kind} tokenizer, not byte-level BPE: it is run by the "
            "tokenizers library, and only the editor, Compare, Report, encode, decode and inspect "
            "take it (in Python, bpe_studio.core.open_tokenizer)"
        )


# How the notes of what a file asks and is not applied (truncation, padding, dropout) say
# so: ``read_past`` knows them by it.
_NOT_APPLIED = "not applied: "


def read_past(note: str) -> bool:
    """Whether ``note`` is :func:`whole_text_note`'s or :func:`dropout_note`'s: something
    the file asks that is read past (and that a file written from it does not hold)."""
    return f" is {_NOT_APPLIED}" in note or f" are {_NOT_APPLIED}" in note


def whole_text_note(name: str, truncation: object, padding: object) -> str | None:
    """The note for a ``tokenizer.json`` (``name``) that truncates or pads the ids (its
    ``truncation``, ``padding`` blocks; None: null), or None. Neither is applied here:
    this tool looks at how text is tokenized, so the ids are always the whole text's.

    >>> whole_text_note("t.json", None, None) is None
    True
    >>> whole_text_note("t.json", {"max_length": 8}, None)
    "t.json: its truncation is not applied: the ids are each whole text's (tokenizers' ..."
    """
    given = [key for key, block in (("truncation", truncation), ("padding", padding)) if block]
    if not given:
        return None
    if truncation and padding:
        ids = "each whole text's, unpadded (tokenizers' Encoding.ids would differ for long or "
        ids += "short texts)"
    elif truncation:
        ids = "each whole text's (tokenizers' Encoding.ids would be cut for long texts)"
    else:
        ids = "unpadded (tokenizers' Encoding.ids would be padded for short texts)"
    verb = "are" if len(given) > 1 else "is"
    return f"{name}: its {' and '.join(given)} {verb} {_NOT_APPLIED}the ids are {ids}"


def dropout_note(name: str, dropout: object) -> str | None:
    """The note for a ``tokenizer.json`` (``name``) whose BPE model has ``dropout`` (a
    number), or None. BPE dropout skips merges at random: one text would get other ids at
    each call, which no view here can show, so every merge applies, as with none."""
    if not dropout:
        return None
    return (
        f"{name}: its model.dropout {dropout:g} is {_NOT_APPLIED}every merge applies, the ids "
        "are deterministic"
    )


def found_alike_note(name: str, added: Sequence[AddedToken], ids: Mapping[str, int]) -> str | None:
    """The note for a ``tokenizer.json`` (``name``) where two ``normalized`` added tokens are
    found as one text once normalized ("nce" and "Nce" under Lowercase), or None.
    ``tokenizers`` keeps them in a hash map: which id a text holding that text gets varies
    from one load of the file to the next, so no id is the file's; this tokenizer always
    gives the one listed last. ``ids``: each token's id as loading gives it (by content),
    not as written, which tokenizers renumbers where written ids clash."""
    found: dict[str, list[AddedToken]] = {}
    for token in added:
        if token.normalized:
            found.setdefault(token.match or token.content, []).append(token)
    alike = [tokens for tokens in found.values() if len({ids[t.content] for t in tokens}) > 1]
    if not alike:
        return None
    tokens, last = alike[0], alike[0][-1]
    named = ", ".join(repr(t.content) for t in tokens)
    more = f" ({len(alike) - 1} more such group(s))" if len(alike) > 1 else ""
    return (
        f"{name}: its added tokens {named} are each found as {tokens[0].match!r} once "
        "normalized: tokenizers gives one of their ids or another, varying from one load to "
        f"the next; here always {last.content!r} (id {ids[last.content]}), the one listed "
        f"last{more}"
    )


_DROPS = ": its pre-tokenizer drops text such as "  # in dropped_note, found by noted_dropping


def dropped_note(name: str, left_out: str | None) -> str | None:
    """The note for a ``tokenizer.json`` (``name``) whose pre-tokenizer drops text, such as
    ``left_out`` (None: none found, no note)."""
    if not left_out:
        return None
    return (
        f"{name}{_DROPS}{left_out!r}, as tokenizers does: no "
        "id stands for it, and decoding does not give it back"
    )


def removed_regex_note(name: str, pre_tokenizer: object) -> str | None:
    """The note for a ``tokenizer.json`` (``name``) whose pre-tokenizer's JSON has a Split
    of a ``Regex`` with the ``Removed`` behavior (not inverted): the text it matches is
    dropped, where no probe text need hold any (a URL, a run of digits, Greek), so the
    pattern is named; None without such a Split."""
    patterns = removed_regexes(pre_tokenizer)
    if not patterns:
        return None
    return (
        f"{name}{_DROPS}what its Split's Regex {patterns[0]!r} matches (behavior Removed), as "
        "tokenizers does: no id stands for it, and decoding does not give it back"
    )


# The pre-tokenizers that remove text whatever their options: whitespace (BERT's too: it
# splits on whitespace, dropping it, and isolates punctuation), a CharDelimiterSplit's
# delimiter.
_REMOVING = ("Whitespace", "WhitespaceSplit", "BertPreTokenizer", "CharDelimiterSplit")


def noted_dropping(notes: Iterable[str]) -> bool:
    """Whether one of a tokenizer's loading ``notes`` is a :func:`dropped_note`: its probe
    found text the file drops (a step that removes text may remove none: ``\\S+|\\s+``)."""
    return any(_DROPS in note for note in notes)


def _removes(pre_tokenizer: object) -> bool:
    """Whether a pre-tokenizer's JSON has a step that removes text: a ``Removed`` behavior
    (Split, Punctuation, ...), or one of :data:`_REMOVING` (BERT's drops the spaces too)."""
    if isinstance(pre_tokenizer, list):
        return any(map(_removes, pre_tokenizer))
    if not isinstance(pre_tokenizer, dict):
        return False
    if pre_tokenizer.get("type") in _REMOVING:
        return True
    if str(pre_tokenizer.get("behavior", "")).lower() == "removed":
        return True
    return _removes(pre_tokenizer.get("pretokenizers"))


def removed_strings(pre_tokenizer: object) -> list[str]:
    """Probe texts for the strings a pre-tokenizer's JSON removes (a Split of a ``String``
    with the ``Removed`` behavior: "zz"), each alone and between words: a probe of common
    text need not hold them); a CharDelimiterSplit's delimiter the same way."""
    written = [w for w, _ in _removing_splits(pre_tokenizer, "String")]
    return [t for w in written + _delimiters(pre_tokenizer) for t in (w, f"a {w} b")]


def _delimiters(pre_tokenizer: object) -> list[str]:
    """The delimiters of a pre-tokenizer's JSON's CharDelimiterSplits (it removes them)."""
    if isinstance(pre_tokenizer, list):
        return [found for item in pre_tokenizer for found in _delimiters(item)]
    if not isinstance(pre_tokenizer, dict):
        return []
    found = _delimiters(pre_tokenizer.get("pretokenizers"))
    delimiter = pre_tokenizer.get("delimiter")
    if pre_tokenizer.get("type") == "CharDelimiterSplit" and isinstance(delimiter, str):
        found.append(delimiter)
    return found


def removed_regexes(pre_tokenizer: object) -> list[str]:
    """The ``Regex`` patterns of a pre-tokenizer's JSON's Splits that remove what they match
    (the ``Removed`` behavior, not inverted: an inverted one removes what no probe text
    escapes, between its matches)."""
    return [w for w, inverted in _removing_splits(pre_tokenizer, "Regex") if not inverted]


def _removing_splits(pre_tokenizer: object, kind: str) -> list[tuple[str, bool]]:
    """The patterns of ``kind`` ("String" or "Regex") that the Splits of a pre-tokenizer's
    JSON with the ``Removed`` behavior write, each with whether the Split is inverted."""
    if isinstance(pre_tokenizer, list):
        return [found for item in pre_tokenizer for found in _removing_splits(item, kind)]
    if not isinstance(pre_tokenizer, dict):
        return []
    found = _removing_splits(pre_tokenizer.get("pretokenizers"), kind)
    pattern = pre_tokenizer.get("pattern")
    written = pattern.get(kind) if isinstance(pattern, dict) else None
    removed = str(pre_tokenizer.get("behavior", "")).lower() == "removed"
    if removed and isinstance(written, str) and written:
        found.append((written, bool(pre_tokenizer.get("invert"))))
    return found


def pre_tokenizer_removes(backend: tokenizers.Tokenizer) -> bool:
    """Whether the pre-tokenizer ``tokenizers`` runs (``backend``'s) has a step that removes
    text (``_removes``)."""
    pre = backend.pre_tokenizer
    return pre is not None and _removes(json.loads(pre.__getstate__()))


def backend_dropped_note(name: str, backend: tokenizers.Tokenizer) -> str | None:
    """:func:`dropped_note` for a byte-level BPE file run by ``tokenizers`` (``backend``):
    text the probe (``coverage.first_dropped``) finds no token's offsets hold, where its
    pre-tokenizer removes text. Byte-level BPE holds every byte else; other kinds get no
    loading note (WordPiece drops spaces by design), but :func:`backend_drops_text` tells
    them, so that what they drop is not counted as nothing."""
    if not pre_tokenizer_removes(backend):
        return None
    normalizer, pre = backend.normalizer, backend.pre_tokenizer
    assert pre is not None  # pre_tokenizer_removes

    def dropped(text: str) -> str | None:
        # subtle: what the pre-tokenizer leaves out of the normalized text: a normalizer's
        # own drops (StripAccents' accents) are no pre-tokenizer's (a review).
        normalized = normalizer.normalize_str(text) if normalizer is not None else text
        return unheld(normalized, (span for _, span in pre.pre_tokenize_str(normalized)))

    spec = json.loads(pre.__getstate__())
    found = first_dropped(dropped, removed_strings(spec))
    return dropped_note(name, found) if found else removed_regex_note(name, spec)


def backend_drops_text(backend: tokenizers.Tokenizer) -> bool:
    """Whether the pre-tokenizer ``tokenizers`` runs (``backend``'s) drops text: the probe of
    :func:`backend_dropped_note` finds some (a step that removes text may remove none)."""
    return backend_dropped_note("", backend) is not None


# The kind a byte-level BPE file read by tokenizers (RefusedByteLevelFile) is named by.
TOKENIZERS_BYTE_LEVEL = "byte-level BPE (not read exactly here)"
# How much of the reader's refusal the note of such a tokenizer quotes.
_REASON_CHARS = 160


class RefusedByteLevelFile(ForeignTokenizerFile):
    """A byte-level BPE ``tokenizer.json`` at ``path`` that this project's reader refuses
    (``reason``: its one line, naming the file and component) and ``tokenizers`` runs: the
    project's own ``Tokenizer`` cannot be made of it, so ``open_tokenizer``, the app and the
    command line run it through ``tokenizers``, as another kind."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = Path(path)
        self.kind = TOKENIZERS_BYTE_LEVEL
        self.reason = reason
        ValueError.__init__(
            self,
            f"{reason}; tokenizers runs this file: open_tokenizer (in Python), the app and "
            "bpe-studio encode, decode and inspect open it through tokenizers, with its ids",
        )

    @property
    def note(self) -> str:
        """What the tokenizer opened from it says once: why ``tokenizers`` runs it."""
        why = self.reason.removeprefix(f"{os.fspath(self.path)}: ")
        if len(why) > _REASON_CHARS:
            why = why[: _REASON_CHARS - 1] + "…"
        return (
            f"{os.fspath(self.path)}: run by tokenizers (its ids are tokenizers' own; merge "
            f"trees and step-through need a file read here, which this one is not: {why})"
        )


# The tokenizers object tokenizers_reads loaded last (or what it raised), with the file's
# stamp, until the ForeignTokenizer opened from that file takes it (read_backend): a large
# file's parse takes seconds, and the command asking whether tokenizers reads a file then
# opens it (or says why not).
_LOADED: dict[str, tuple[Stamp, Any]] = {}


@contextmanager
def _rust_panics_unprinted() -> Iterator[None]:
    """Standard error (the file descriptor) to the null device while the block runs.
    subtle: a file tokenizers cannot build (a subword prefix longer than a merge's part) makes
    its Rust code panic, whose hook prints the panic (and, with RUST_BACKTRACE, a backtrace of
    a hundred lines) before the one line that says why the file is refused; the probe only
    asks whether it loads. Another thread's writes meanwhile go there too."""
    if sys.stderr is not None:  # None where Python started with fd 2 closed
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    try:
        saved = os.dup(2)
    except OSError:  # no standard error to quiet
        yield
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)
        finally:
            os.close(null)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def tokenizers_reads(path: str | os.PathLike[str]) -> bool:
    """Whether ``tokenizers`` loads the ``tokenizer.json`` at ``path`` (what it loaded, or
    why it could not, is kept for :func:`read_backend`)."""
    try:
        before = stamp(path)
    except OSError:
        return False
    found = _parsed(path)
    _LOADED.clear()  # one kept at most: it is only for the open that follows
    _LOADED[os.path.abspath(path)] = (before, found)
    return not isinstance(found, BaseException)


def _parsed(path: str | os.PathLike[str]) -> Any:
    """``tokenizers``' ``Tokenizer`` of the file at ``path``, or what it raised."""
    import tokenizers

    try:
        with _rust_panics_unprinted():
            return tokenizers.Tokenizer.from_file(os.fspath(path))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a panic in tokenizers' Rust code is a BaseException
        return e  # (pyo3's PanicException): a file it cannot build is one it does not read


def read_backend(path: str | os.PathLike[str]) -> Any:
    """``tokenizers``' own ``Tokenizer`` of the ``tokenizer.json`` at ``path`` (what
    :func:`tokenizers_reads` found, if the file is unchanged since: given to one caller only,
    who may change it); a ValueError naming the file and what ``tokenizers`` finds wrong with
    it where it cannot build it."""
    kept = _LOADED.pop(os.path.abspath(path), None)
    try:
        unchanged = kept is not None and stamp(path) == kept[0]
    except OSError:
        unchanged = False
    found = kept[1] if unchanged and kept is not None else _parsed(path)
    if not isinstance(found, BaseException):
        return found
    # Its words for a model it does not know name no model ("data did not match any variant
    # of untagged enum ModelUntagged"): the file's own type says more.
    model = unknown_model(path)
    if model is not None:
        raise ValueError(
            f"{os.fspath(path)}: model type {model!r} is not one tokenizers runs "
            f"({', '.join(TOKENIZERS_MODELS)})"
        ) from None
    raise ValueError(f"{os.fspath(path)}: tokenizers cannot read it ({found})") from None


def _types(component: Any, key: str) -> list[str]:
    """The ``type`` of a component and of the steps of a ``Sequence`` of them."""
    if not isinstance(component, dict):
        return []
    steps = component.get(key)
    if component.get("type") == "Sequence" and isinstance(steps, list):
        return [t for step in steps for t in _types(step, key)]
    return [str(component.get("type"))]


def has_byte_level(pre_tokenizer: Any) -> bool:
    """Whether the parsed ``pre_tokenizer`` holds a ``ByteLevel`` step (alone or in a
    ``Sequence``): its model's tokens are then spelt in GPT-2's byte-to-unicode alphabet."""
    return "ByteLevel" in _types(pre_tokenizer, "pretokenizers")


def undecoded_note(name: str, pre_tokenizer: Any, decoder: Any) -> str | None:
    """The note for a file (``name``) whose parsed ``pre_tokenizer`` spells text byte-level
    but whose ``decoder`` has no ``ByteLevel`` step (none at all, say): ``tokenizers`` decodes
    its ids as the tokens' spellings ("Ġw", "Ã¶") joined by spaces, not as the text."""
    if not has_byte_level(pre_tokenizer) or "ByteLevel" in _types(decoder, "decoders"):
        return None
    shown = json.dumps(decoder.get("type") if isinstance(decoder, dict) else decoder)
    joined = "joined by spaces" if decoder is None else "as that decoder joins them"
    return (
        f"{name}: its decoder ({shown}) has no ByteLevel step: decode gives what tokenizers "
        f"decodes, the tokens' byte-level spellings {joined}, not the text "
        "(decode_tokens_bytes gives each token's bytes)"
    )


def kind_of(obj: Any) -> str | None:
    """None when the parsed ``tokenizer.json`` ``obj`` is byte-level BPE, else its kind.

    >>> kind_of({"model": {"type": "WordPiece"}})
    'WordPiece'
    >>> kind_of({"model": {"type": "BPE"}, "pre_tokenizer": {"type": "ByteLevel"}}) is None
    True
    """
    model = obj.get("model") if isinstance(obj, dict) else None
    if not isinstance(model, dict):
        return None  # no model at all: hf_json names what is wrong
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind == "Unigram" and model.get("byte_fallback"):
        return "Unigram (byte fallback)"
    if kind != "BPE":
        return str(kind)
    byte_level = has_byte_level(obj.get("pre_tokenizer"))
    if byte_level and not model.get("byte_fallback"):
        return None
    if model.get("byte_fallback"):
        return "BPE (SentencePiece-style, byte fallback)"
    return "BPE (SentencePiece-style)"


def foreign_kind(path: str | os.PathLike[str]) -> str | None:
    """:func:`kind_of` the ``tokenizer.json`` at ``path``; None too for a file that is no
    readable JSON (``tokenizer_json`` then says what is wrong with it, naming the file)."""
    obj = json_or_none(path)
    return kind_of(obj)
