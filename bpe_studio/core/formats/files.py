"""One way in and one way out for tokenizer files of every format this project reads.

What it does: :func:`load_data` tells what a source is (a preset name, a GPT-2 directory or
a GPT-2 ``vocab.json`` named directly, a ``tokenizer.json``, a ``.tiktoken`` rank file or the
directory holding one, a Hub model ``hf:ORG/NAME[@REVISION]`` fetched into the Hub's cache;
a directory holding two tokenizers is an error) and reads it into a ``TokenizerData``. A
tiktoken encoding that is no bundled preset (such as p50k_base) and a model's settings file
named instead of its tokenizer (``tokenizer_config.json``) are each refused saying so;
:func:`save_data` writes one in a named format. ``Tokenizer.load`` / ``Tokenizer.save`` (and
through them the command line and the app) use these, so every caller accepts the same
sources and gives the same one-line errors. What it leaves out: the formats' details
(``gpt2``, ``formats``) and building the tokenizer (``tokenizer``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ..corpus.stamps import Stamp, link_loop, stamp
from ..io.hf_hub import fetch_tokenizer, hub_source_meant, parse_hub_source, said_of_model
from ..pretokenization.names import ALIASES, alias_key, pattern_name, shown_pattern
from ..pretokenization.pretokenizer import pretokenizer
from ..pretokenization.scan_patterns import unwrapped
from ..pretokenization.specials import refuse_single_bytes, validate_special_tokens
from ..text.display import cut_repr, first_few
from . import gpt2, read_hf, read_tiktoken, write_hf, write_tiktoken
from .base.data import TokenizerData
from .base.json_errors import json_or_none
from .base.lossy import LossyFormatWarning as LossyFormatWarning  # named here, as always
from .base.preset_table import (
    PRESET_PREFIX,
    PRESETS,
    UNBUNDLED,
    checked_preset_name,
    preset_name,
)
from .hf.components import only_a_file_says
from .hf.kind import (
    ForeignTokenizerFile,
    RefusedByteLevelFile,
    kind_of,
    read_backend,
    tokenizers_reads,
)
from .hf.tokenizer_json import (
    RunByTokenizers,
    added_tokens_problem,
    braced_properties,
    engine_trap,
    hf_losses,
    read_hf_parsed,
    split_problem,
    split_readings,
    structure_problem,
)
from .presets import preset_data
from .tiktoken import SIDECAR_SUFFIX, given_stem, sidecar_beside
from .tiktoken.pattern_check import pattern_problem as tiktoken_pattern_problem
from .tiktoken.writing import special_tokens_problem, tiktoken_refusal

FORMATS: tuple[str, ...] = ("gpt2", "hf", "tiktoken")
DEFAULT_NAME = "tokenizer"
# File names of a GPT-2-format directory: ours (and Hugging Face's), then GPT-2's own.
GPT2_FILE_NAMES = (("vocab.json", "merges.txt"), ("gpt2_vocab.json", "gpt2_merges.txt"))
TIKTOKEN_SUFFIXES = (".tiktoken", ".tiktoken.gz")
_VOCAB_SUFFIX = "vocab.json"
_MERGES_SUFFIX = "merges.txt"
# A model's files that hold settings, not a tokenizer (beside tokenizer.json on the Hub).
_SETTINGS_FILES = (
    "tokenizer_config.json",
    "special_tokens_map.json",
    "config.json",
    "generation_config.json",
)


def _what_is_accepted() -> str:
    return (
        "a GPT-2 directory (vocab.json + merges.txt) or such a vocab.json, a tokenizer.json, "
        f"a .tiktoken file or a preset ({', '.join(PRESETS)})"
    )


def _gpt2_files(
    vocab_path: Path, merges_path: Path, pattern: str | None, extra: Sequence[str]
) -> TokenizerData:
    # load_files checks the pair agrees, naming the merges file and line if not;
    # infer_special_tokens that the merges explain the vocabulary, naming both files if not.
    vocab, merges = gpt2.load_files(vocab_path, merges_path)
    inferred = gpt2.infer_special_tokens(vocab, merges, also=extra, files=(vocab_path, merges_path))
    inverse = {tok: idx for idx, tok in sorted(vocab.items(), reverse=True)}
    specials = {s: inverse[s.encode("utf-8")] for s in inferred}
    return TokenizerData(vocab, merges, specials, pattern or "gpt2")


def gpt2_dir_files(folder: Path) -> tuple[Path, Path] | None:
    """The GPT-2 vocabulary and merges files in ``folder`` (ours first, then GPT-2's own
    names), or None when it holds neither pair."""
    pairs = _gpt2_pairs(folder)
    return pairs[0] if pairs else None


def _gpt2_pairs(folder: Path) -> list[tuple[Path, Path]]:
    pairs = [(folder / v, folder / m) for v, m in GPT2_FILE_NAMES]
    return [(v, m) for v, m in pairs if v.is_file() and m.is_file()]


def _merges_beside(vocab_path: Path) -> Path:
    """The merges file that goes with a GPT-2 vocabulary file: ``X_vocab.json`` ->
    ``X_merges.txt`` (``vocab.json`` -> ``merges.txt``)."""
    return vocab_path.with_name(vocab_path.name[: -len(_VOCAB_SUFFIX)] + _MERGES_SUFFIX)


def is_gpt2_vocabulary(path: Path) -> bool:
    """Whether the file ``path`` is read as a GPT-2 vocabulary: its name ends in vocab.json
    and it does not begin as a ``tokenizer.json`` does (``gpt2.holds_vocabulary``: a whole
    tokenizer saved as ``my_vocab.json`` was read as a vocabulary missing its merges)."""
    return path.name.lower().endswith(_VOCAB_SUFFIX) and gpt2.holds_vocabulary(path)


def _gpt2_vocab_file(path: Path, pattern: str | None, extra: Sequence[str]) -> TokenizerData:
    merges_path = _merges_beside(path)
    if not merges_path.is_file():
        raise ValueError(
            f"{path}: a GPT-2 vocabulary needs its merges file beside it, "
            f"{merges_path.name}, which is not there"
        )
    return _gpt2_files(path, merges_path, pattern, extra)


def _rank_file_of_sidecar(path: Path) -> Path:
    """The rank file ``NAME.tiktoken`` (or ``.gz``) a sidecar ``NAME.tiktoken.json`` goes with."""
    stem = path.name[: -len(SIDECAR_SUFFIX)]
    for suffix in TIKTOKEN_SUFFIXES:
        if (rank_file := path.with_name(stem + suffix)).is_file():
            return rank_file
    raise ValueError(f"{path}: the sidecar of {stem}.tiktoken, which is not beside it")


def tokenizers_in(folder: Path) -> list[Path]:
    """Each tokenizer in ``folder``, named by the file that stands for it: a GPT-2 pair's
    vocabulary, a rank file, or a ``tokenizer.json`` that is no rank file's sidecar."""
    found: list[Path] = [vocab for vocab, _ in _gpt2_pairs(folder)]
    rank_files = sorted(
        p for p in folder.iterdir() if p.name.lower().endswith(TIKTOKEN_SUFFIXES) and p.is_file()
    )
    found += rank_files
    sidecars = {sidecar_beside(p) for p in rank_files}
    hf = folder / "tokenizer.json"
    if hf.is_file() and hf not in sidecars:
        found.append(hf)
    return found


def _describe(folder: Path, file: Path) -> str:
    pairs = dict(_gpt2_pairs(folder))
    return f"{file.name} + {pairs[file].name}" if file in pairs else file.name


def _load_file(path: Path, pattern: str | None, extra: Sequence[str]) -> TokenizerData:
    """The tokenizer in the file ``path``, by its name; a file that names its own pattern
    keeps it (checked by the caller)."""
    # subtle: a file ending in vocab.json is read as GPT-2's vocabulary rather than handed to
    # the HF reader, unless its start is a tokenizer.json's (is_gpt2_vocabulary).
    lower = path.name.lower()
    if is_gpt2_vocabulary(path):
        return _gpt2_vocab_file(path, pattern, extra)
    if lower.endswith(SIDECAR_SUFFIX):
        return read_tiktoken(_rank_file_of_sidecar(path))
    if lower.endswith(TIKTOKEN_SUFFIXES):
        # A sidecar's pattern stands as a tokenizer.json's does: read with it, a different
        # one asked for is refused by the caller (passed on, read_tiktoken would take it).
        return read_tiktoken(path, None if sidecar_beside(path) else pattern)
    if lower.endswith(".json"):
        return _read_hf_file(path)
    if lower.endswith(_MERGES_SUFFIX):
        # Half of GPT-2's files: the merges name tokens only the vocabulary numbers.
        vocab = path.with_name(path.name[: -len(_MERGES_SUFFIX)] + _VOCAB_SUFFIX)
        if vocab.is_file():
            raise ValueError(
                f"{path}: the merges of GPT-2's files: name the vocabulary beside it, "
                f"{vocab.name}, or the folder holding both"
            )
        raise ValueError(
            f"{path}: GPT-2's merges alone, without {vocab.name} beside it (name the folder "
            "holding both, or the vocab.json)"
        )
    raise ValueError(
        f"{path}: cannot tell the format from the name (expected {_what_is_accepted()})"
    )


def _settings_problem(path: Path) -> str | None:
    """Why ``path`` is a model's settings file rather than its tokenizer, or None."""
    if path.name.lower() not in _SETTINGS_FILES:
        return None
    beside = path.with_name("tokenizer.json")
    where = (
        f"name the tokenizer.json beside it ({beside}) or its folder"
        if beside.is_file()
        else "the tokenizer is the model's tokenizer.json"
    )
    return f"{path}: a model's {path.name} holds its settings, not a tokenizer: {where}"


# What _foreign decided of each file, with its stamp: a command asks it of one file more
# than once (encode: whether it is foreign, then load_data), and each answer parses it whole.
_DECIDED: dict[str, tuple[Stamp, str | None, str | None]] = {}
_DECIDED_FILES = 16  # files remembered; the rest are forgotten at once
# The record the last decision read whole, or why the reader refused it, for the load that
# follows it (one at most).
_PARSED: dict[str, tuple[Stamp, TokenizerData | ValueError]] = {}


def _foreign(path: Path) -> ForeignTokenizerFile | None:
    """What ``tokenizers`` runs in place of the reader here, for the ``tokenizer.json`` at
    ``path``: a file of another kind (``ForeignTokenizerFile``), or a byte-level one whose
    model options, components or decoder ``read_hf`` refuses and ``tokenizers`` loads
    (``RefusedByteLevelFile``); None for the rest (``read_hf`` reads it, or says what is
    wrong: a file that is no readable JSON, refused vocabulary or merges)."""
    key = os.path.abspath(path)
    try:
        before = stamp(path)
    except OSError:
        return None  # read_hf names what is wrong
    known = _DECIDED.get(key)
    if known is not None and known[0] == before:
        kind, reason = known[1], known[2]
    else:
        kind, reason = _decide(path, before)
        if len(_DECIDED) >= _DECIDED_FILES:
            _DECIDED.clear()
        _DECIDED[key] = (before, kind, reason)
    if kind is not None:
        return ForeignTokenizerFile(path, kind)
    return None if reason is None else RefusedByteLevelFile(path, reason)


def _decide(path: Path, before: Stamp) -> tuple[str | None, str | None]:
    """The kind of the file at ``path`` (None: byte-level BPE), and for a byte-level one
    ``tokenizers`` runs, why the reader refuses it (else None). A file the reader reads is
    read whole here (its added tokens are judged against the model), and its record kept for
    the load that follows (``_read_hf_file``); ``before``: the file's stamp."""
    obj = json_or_none(path)
    if obj is None:
        return None, None
    kind = kind_of(obj)
    if kind is not None:
        return kind, None
    reason = structure_problem(obj, os.fspath(path))
    if reason is None:
        # The added tokens are judged against the whole model: read it, and keep the record
        # for the load that asked.
        try:
            data: TokenizerData | ValueError = read_hf_parsed(obj, os.fspath(path))
        except RunByTokenizers as e:  # (tokenizers may run it: asked below)
            reason = str(e)
        except ValueError as e:
            data = e  # what the load is told, without reading the file again
        if reason is None:
            _PARSED.clear()
            _PARSED[os.path.abspath(path)] = (before, data)
            return None, None
    if not tokenizers_reads(path):
        return None, None
    return None, reason


def _read_hf_file(path: Path) -> TokenizerData:
    """A byte-level BPE ``tokenizer.json``; a file ``tokenizers`` runs in place of this
    reader raises ``ForeignTokenizerFile`` (``foreign.open_tokenizer`` runs those through
    ``tokenizers``; see :func:`_foreign`)."""
    problem = _settings_problem(path)
    if problem is not None:
        raise ValueError(problem)
    foreign = _foreign(path)
    if foreign is not None:
        # A file of another kind that tokenizers cannot build either: say what is wrong,
        # not where it would be taken. (One it builds is kept for the open that follows; a
        # refused byte-level file is one it was found to build.)
        if not isinstance(foreign, RefusedByteLevelFile) and not tokenizers_reads(path):
            read_backend(path)
        raise foreign
    kept = _PARSED.pop(os.path.abspath(path), None)
    if kept is not None and kept[0] == stamp(path):
        if isinstance(kept[1], ValueError):
            raise kept[1]
        return kept[1]
    return read_hf(path)


def _not_a_preset(name: str) -> str:
    """What to say of a source that names no file and no preset."""
    key = alias_key(name)
    if key.startswith(UNBUNDLED) or key in ALIASES:
        return (
            f"{name}: a tiktoken encoding that is not bundled (the presets are "
            f"{', '.join(PRESETS)}); name its .tiktoken rank file"
        )
    if name.lower().endswith((".json", *TIKTOKEN_SUFFIXES)):
        # A file's name: the list of what a source may be would read as if it were a
        # file of a wrong kind.
        return f"tokenizer not found: {name}: no such file"
    meant = hub_source_meant(name)
    hint = f" (for a Hugging Face model, write {meant})" if meant else ""
    return f"tokenizer not found: {name} (expected {_what_is_accepted()}){hint}"


def foreign_file(source: str | os.PathLike[str]) -> ForeignTokenizerFile | None:
    """What :func:`load_data` would refuse ``source`` with for holding a ``tokenizer.json``
    of another kind than byte-level BPE (the file named, or its directory's), or None."""
    path = Path(source)
    if path.is_dir() and (path / "tokenizer.json").is_file():
        path = path / "tokenizer.json"
    lower = path.name.lower()
    if not path.is_file() or not lower.endswith(".json") or is_gpt2_vocabulary(path):
        return None
    if lower.endswith(SIDECAR_SUFFIX):
        return None
    return _foreign(path)


def _load_folder(folder: Path, pattern: str | None, extra: Sequence[str]) -> TokenizerData:
    """The one tokenizer in ``folder``. Several files that give the same tokenizer (see
    ``_same``; a Hugging Face download holds vocab.json + merges.txt and tokenizer.json) are
    one: the file that carries its pattern and the most special tokens is read. Several that
    differ (or do not all load) are an error naming them."""
    found = tokenizers_in(folder)
    if not found:
        # A vocabulary whose merges file is missing is half a tokenizer: name the half.
        for vocab, merges in GPT2_FILE_NAMES:
            if (folder / vocab).is_file():
                raise ValueError(
                    f"{folder}: holds {vocab} but not {merges}, the merges file it needs beside it"
                )
        raise ValueError(
            f"{folder}: a directory without vocab.json + merges.txt, gpt2_vocab.json + "
            f"gpt2_merges.txt, a NAME.tiktoken rank file or tokenizer.json"
        )
    hf = folder / "tokenizer.json"
    if len(found) == 1 or (hf in found and _foreign(hf) is not None):
        # A tokenizer.json of another kind describes the whole tokenizer; files beside it
        # (a vocab.json of its tokens) are parts of it, not a second tokenizer.
        return _load_file(hf if hf in found else found[0], pattern, extra)
    loaded: list[TokenizerData] = []
    for file in found:
        try:
            loaded.append(_load_file(file, pattern, extra))
        except ValueError:
            break
    if len(loaded) < len(found) or not all(_same(loaded[0], d) for d in loaded[1:]):
        names = ", ".join(_describe(folder, f) for f in found)
        raise ValueError(
            f"{folder}: holds {len(found)} tokenizers ({names}), not one; name the file to "
            f"load (e.g. {folder / found[-1].name})"
        )
    gpt2_vocabs = {vocab for vocab, _ in _gpt2_pairs(folder)}

    def says_most(entry: tuple[Path, TokenizerData]) -> tuple[bool, int]:
        # GPT-2 files hold no pattern and mark no special token: any other file says more.
        file, data = entry
        return file not in gpt2_vocabs, len(data.special_tokens)

    return max(zip(found, loaded), key=says_most)[1]


def _same(a: TokenizerData, b: TokenizerData) -> bool:
    """Whether two records hold the same merges and the same ordinary tokens under the same
    ids. Special tokens may differ: a Hugging Face download's vocab.json leaves out the
    added tokens its tokenizer.json holds."""
    same_merges = list(map(tuple, a.merges)) == list(map(tuple, b.merges))
    return same_merges and _ordinary(a) == _ordinary(b)


def _ordinary(data: TokenizerData) -> dict[int, bytes]:
    special_ids = {*data.special_tokens.values(), *data.added_tokens.values()}
    return {i: tok for i, tok in data.vocab.items() if i not in special_ids}


def _check_pattern_agrees(
    data: TokenizerData, pattern: str | None, source: str, path: Path | None
) -> None:
    r"""A file that names its own pattern keeps it; a different one asked for is an error.
    Any spelling of the same pattern is that pattern (:func:`patterns_agree`): a name or its
    regex, a one-letter property with braces or without (a tokenizer.json holds ``\p{L}``
    for ``\pL``, a sidecar the pattern as given), and a tokenizer.json's own Split regex."""
    if pattern is not None and not patterns_agree(pattern, data.pattern):
        sidecar = None if path is None else _sidecar_of(path)
        # A preset (no path) is no file the user gave.
        holder = "the preset" if path is None else "the file"
        holder = holder if sidecar is None else f"its sidecar {sidecar.name}"
        # A Split's regex is held in its Isolated spelling; the regex itself says more.
        theirs = unwrapped(data.pattern) or data.pattern
        raise ValueError(
            f"{source}: {holder} gives its own pattern, {shown_pattern(theirs)}; "
            f"a different one, {shown_pattern(pattern)}, cannot be applied"
        )


def same_pattern(pattern: str) -> str:
    """What two spellings of one pattern have in common (``_check_pattern_agrees``)."""
    return pattern_name(braced_properties(pattern))


def patterns_agree(asked: str, held: str, *, applied: bool = False) -> bool:
    r"""Whether the pattern ``asked`` for is the pattern a record holds (``held``): the same
    spelling (:func:`same_pattern`), or, read as a tokenizer.json's Split regex is
    (``split_readings``: Oniguruma's syntax translated, "\p{N}{1,3}" as "(?:\p{N}){1,3}", a
    Split's held in its Isolated spelling), the same as ``held`` or the regex inside it.
    ``applied``: ``asked`` splits the text itself (GPT-2 files read with it), so its
    translation counts only where Oniguruma and the ``regex`` module read it alike
    (``engine_trap``); a pattern that is only checked against a file's is the file's when
    it reads as the file's."""
    theirs = {same_pattern(held)}
    inner = unwrapped(held)
    if inner is not None:
        theirs.add(same_pattern(inner))
    if same_pattern(asked) in theirs:
        return True
    if applied and engine_trap(asked) is not None:
        return False
    return any(same_pattern(read) in theirs for read in split_readings(asked))


def _sidecar_of(path: Path) -> Path | None:
    """The sidecar that gives the pattern of the rank file ``path`` names (the rank file, its
    sidecar, or a folder whose one tokenizer besides GPT-2 files is a rank file), or None."""
    if path.is_dir():
        files = [f for f in tokenizers_in(path) if not f.name.endswith(_VOCAB_SUFFIX)]
        if len(files) != 1:
            return None
        path = files[0]
    lower = path.name.lower()
    if lower.endswith(SIDECAR_SUFFIX):
        return path
    return sidecar_beside(path) if lower.endswith(TIKTOKEN_SUFFIXES) else None


def _ranks_of(path: Path | None, preset: str | None) -> str | None:
    """Where else a special token of tiktoken's ``path`` (or ``preset``) may be given, whose
    special tokens are never among its ranks: a rank file, its sidecar, or a folder whose
    one tokenizer besides GPT-2 files is a rank file (its sidecar), a tiktoken preset (none);
    None for any other tokenizer."""
    if path is None:
        return "" if preset is not None and preset != "gpt2" else None
    rank_folder = path.is_dir() and [
        f.name.lower().endswith(TIKTOKEN_SUFFIXES) for f in tokenizers_in(path)
    ] == [True]
    if (
        _sidecar_of(path) is not None
        or path.name.lower().endswith(TIKTOKEN_SUFFIXES)
        or rank_folder
    ):
        return " or list it under special_tokens in its sidecar NAME.tiktoken.json"
    return None


def _with_extra(
    data: TokenizerData, extra: Sequence[str], source: str, ranks: str | None = None
) -> TokenizerData:
    """``data`` with the special tokens ``extra`` added, each one of its vocabulary entries
    (an id its files cannot decode is never invented). ``ranks``: ``data`` is tiktoken's,
    whose special tokens are never among its ranks, and where else one may be given
    (``_ranks_of``)."""
    if not extra:
        return data
    try:
        refuse_single_bytes(t for t in extra if t not in data.special_tokens)
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None
    # subtle: a file's added token may decode otherwise than its text (a normalized one:
    # ``hf.tokenizer_json.decoded_as``, "AB" under Lowercase as "ab"); its id is not the
    # entry of those bytes ("ab" named is not that token), and made special by its own
    # name it is its text, as every special token here is.
    other = {idx for s, idx in data.added_tokens.items() if data.vocab.get(idx) != s.encode()}
    inverse = {
        tok: idx for idx, tok in sorted(data.vocab.items(), reverse=True) if idx not in other
    }
    specials = dict(data.special_tokens)
    vocab = data.vocab
    for token in extra:
        idx = data.added_tokens.get(token)
        if idx is not None:
            vocab = {**vocab, idx: token.encode("utf-8")}
        else:
            idx = inverse.get(token.encode("utf-8"))
        if idx is None and ranks is not None:
            # subtle: tiktoken keeps special tokens apart from the ranks, so no rank file
            # holds one: "train with it" sent a downloaded file's user the wrong way.
            raise ValueError(
                f"special token {token!r} is not in {source}: a rank file keeps no special "
                f"token among its ranks; give its id (special_tokens={{{token!r}: ID}} in "
                f"Python){ranks}"
            )
        if idx is None:
            raise ValueError(
                f"special token {token!r} is not in {source}: its id would be one the "
                "tokenizer's files cannot decode (train with it as a special token to make "
                "room for it)"
            )
        specials.setdefault(token, idx)
    return replace(data, vocab=vocab, special_tokens=specials)


def load_data(
    source: str | os.PathLike[str],
    pattern: str | None = None,
    special_tokens: Iterable[str] | Mapping[str, int] | None = None,
) -> TokenizerData:
    """Read the tokenizer ``source`` names: a preset name (or ``preset:NAME``, needed where a
    path NAME exists too: a bare name that is both is refused, naming each), a GPT-2
    directory (``vocab.json`` + ``merges.txt``, or ``gpt2_vocab.json`` + ``gpt2_merges.txt``)
    or such a vocabulary file named directly (a name ending in ``vocab.json``, its merges
    file beside it; one that begins as a ``tokenizer.json`` is read as one), a
    ``tokenizer.json`` (or a directory holding one), or a ``.tiktoken``/``.tiktoken.gz``
    file (or its sidecar ``NAME.tiktoken.json``, or a directory holding it; ``pattern``
    needed unless the sidecar is beside it or it is one of OpenAI's), or a Hub model as
    ``hf:ORG/NAME[@REVISION]`` (``hf_hub.fetch_tokenizer``: from the Hub's cache, or
    downloaded into it). A directory must hold one tokenizer:
    several that differ are an error naming them.

    ``pattern`` sets the pattern of GPT-2 files (default "gpt2") and of rank files without
    a sidecar; for files that carry their own (a ``tokenizer.json``, a sidecar, a preset) it
    must agree. ``special_tokens``: more special tokens, each an entry of the vocabulary;
    or a dict of ids, held as given: building the tokenizer checks them as the constructor
    (and ``Tokenizer.from_files``) does, refusing an id that holds another token. GPT-2
    files mark none: their special tokens are the entries no merge makes, which must each
    look like one (``<...>``, ``[...]``) or be in ``special_tokens``
    (``gpt2.infer_special_tokens``). Raises FileNotFoundError or ValueError with one line
    naming the source."""
    name = os.fspath(source)
    if not name.strip():  # Path("") is the current folder: not what an empty name meant
        raise ValueError(
            f"no tokenizer named: the source is {name!r} (a preset name, a file or a folder)"
        )
    explicit = dict(special_tokens) if isinstance(special_tokens, Mapping) else None
    extra = validate_special_tokens(special_tokens if explicit is None else list(explicit))
    if pattern is not None:
        pretokenizer(pattern)  # a bad regex fails before any file is read
    model = parse_hub_source(name)
    preset = _preset_meant(source) if model is None else None
    path = None
    if preset is not None:
        data = preset_data(preset)
    else:
        path = Path(source) if model is None else fetch_tokenizer(model)
        loop = link_loop(path)
        if loop is not None:
            raise ValueError(f"{name}: {loop}")
        if not path.exists():
            meant = None if isinstance(source, str) else preset_name(os.fspath(source))
            if meant is not None:  # a Path is a path: "not bundled" said of a preset misled
                raise FileNotFoundError(
                    f"{name}: no such file or folder (a Path names a path: for the preset, "
                    f"write {PRESET_PREFIX}{meant})"
                )
            if alias_key(name).startswith(UNBUNDLED) or alias_key(name) in ALIASES:
                raise ValueError(_not_a_preset(name))
            raise FileNotFoundError(_not_a_preset(name))
        try:
            data = (
                _load_folder(path, pattern, extra)
                if path.is_dir()
                else _load_file(path, pattern, extra)
            )
        except ValueError as error:
            if model is None:
                raise
            raise said_of_model(model, error) from None
    _check_pattern_agrees(data, pattern, name, path)
    if explicit is not None:
        return replace(data, special_tokens=data.special_tokens | explicit)
    shown = name if path is None else _vocabulary_file(path)
    return _with_extra(data, extra, shown, _ranks_of(path, preset))


def _preset_meant(source: str | os.PathLike[str]) -> str | None:
    """The preset ``source`` names, or None for a path. ``preset:NAME`` always names one; a
    bare name (no preset's name holds a folder separator, so ``./gpt2`` and ``gpt2/`` are
    paths) names one unless a path by that name exists, which is refused: reading either one
    in silence gave ids of a tokenizer the user may not have meant (``train --out gpt2``
    leaves a folder named like the preset). A ``PathLike`` is a path."""
    if not isinstance(source, str):
        return None
    if source.startswith(PRESET_PREFIX):
        return checked_preset_name(source[len(PRESET_PREFIX) :])
    preset = preset_name(source)
    if preset is None or not os.path.lexists(source):
        return preset
    shown = os.path.join(os.curdir, source)
    what = "folder" if os.path.isdir(source) else "file"
    raise ValueError(
        f"{source!r} names both the preset {preset} and the {what} {shown}: write {shown} "
        f"for the {what}, or {PRESET_PREFIX}{preset} for the preset"
    )


def _vocabulary_file(path: Path) -> str:
    """The file holding the vocabulary of ``path``, for messages."""
    files = gpt2_dir_files(path) if path.is_dir() else None
    return os.fspath(files[0]) if files else os.fspath(path)


def gpt2_misread(data: TokenizerData) -> gpt2.Misread:
    """What loading GPT-2 files of ``data`` would get wrong of its special tokens, nothing
    named (``gpt2.misread``; its added tokens that are not special are said apart)."""
    return gpt2.misread(data.vocab, data.merges, data.special_tokens, data.added_tokens.values())


def holding_formats(data: TokenizerData) -> list[str]:
    """The formats other than GPT-2's that hold ``data`` whole: neither when a special token
    is one a merge makes or joins too (a tokenizer.json's merges join and make ordinary tokens
    only; tiktoken keeps special tokens out of its ranks); 'hf' unless its pattern or a special
    token is one a tokenizer.json cannot say, or an ordinary entry holds a special token's
    bytes too; 'tiktoken' unless it has added tokens that are
    not special, a template, or a pattern or special tokens tiktoken would match otherwise."""
    specials = list(data.special_tokens)
    formats = []
    # A special token a merge joins is one of the bytes, named by its byte's id on loading.
    in_merges = {part for a, b in data.merges for part in (a, b, a + b)}
    made = {s.encode("utf-8") for s in specials} & in_merges
    # A special token whose bytes an ordinary entry holds too (GPT-2's files given
    # "<|endoftext|>" at 50257, where vocab.json has it at 50256): tokenizers gives an added
    # token the id of its model entry, so a tokenizer.json cannot hold the two ids.
    special_ids = set(data.special_tokens.values())
    ordinary = {tok for idx, tok in data.vocab.items() if idx not in special_ids}
    shared = {s.encode("utf-8") for s in specials} & ordinary
    if not made and not shared and format_problem("hf", data.pattern, specials) is None:
        formats.append("hf")
    if (
        not data.added_tokens
        and data.template is None
        and not made
        and format_problem("tiktoken", data.pattern, specials) is None
        and _ranks_follow_merges(data)
    ):
        formats.append("tiktoken")
    return formats


def _ranks_follow_merges(data: TokenizerData) -> bool:
    """What tiktoken's ranks need of the ids, checked without deriving its merges: every
    byte has an id, no two ids hold the same bytes, every other token is made by a merge,
    and the ids of the merges' tokens grow in merge order (tiktoken ranks tokens by id)."""
    special_ids = set(data.special_tokens.values())
    ids: dict[bytes, int] = {}
    for idx, tok in data.vocab.items():
        if idx not in special_ids and ids.setdefault(tok, idx) != idx:
            return False
    if any(bytes([b]) not in ids for b in range(256)):
        return False
    made = [ids.get(a + b, -1) for a, b in data.merges]
    if len(set(made)) != len(ids) - 256:  # a token no merge makes, or one made twice
        return False
    return all(x >= 0 for x in made) and all(x < y for x, y in zip(made, made[1:]))


def _elsewhere(data: TokenizerData) -> str:
    """Where to save ``data`` when GPT-2 files cannot hold it at all, as advice ends."""
    formats = holding_formats(data)
    if not formats:
        return "no format holds this tokenizer (neither 'hf' nor 'tiktoken')"
    return f"save as {' or '.join(repr(f) for f in formats)}, which holds it"


def _holds_both(data: TokenizerData) -> str:
    """Where to save what GPT-2 files drop of ``data`` instead, as advice ends."""
    formats = holding_formats(data)
    if not formats:
        return "no other format holds this tokenizer whole (neither 'hf' nor 'tiktoken')"
    if len(formats) == 1:
        return f"save as {formats[0]!r}, which holds them"
    return "save as 'hf' or 'tiktoken', which hold both"


def gpt2_losses(data: TokenizerData) -> list[str]:
    """What GPT-2 files of ``data`` leave for whoever loads them to say, in words ("hold no
    pattern (...)", ...): they hold no pattern (the loader takes gpt2's) and mark no special
    token (the loader takes the entries no merge makes that look like ``<...>`` or
    ``[...]``, and cannot read one that does not unless it is named). Empty when they bring
    ``data`` back as it is."""
    return gpt2_loss_report(data)[0]


def gpt2_loss_report(data: TokenizerData) -> tuple[list[str], bool]:
    """``gpt2_losses``, and whether naming on loading (``pattern=``, ``special_tokens=``)
    brings all of it back: not when the loader would take an ordinary entry for a special
    token, nor when it cannot read one (naming only adds special tokens)."""
    lost = []
    namable = False
    if pattern_name(data.pattern) != "gpt2":
        shown = shown_pattern(unwrapped(data.pattern) or data.pattern)  # a Split's own regex
        shown = shown if len(shown) <= 60 else f"{shown[:57]}..."
        lost.append(f"hold no pattern (this tokenizer splits text with {shown})")
        namable = True
    wrong = gpt2_misread(data)
    said = []
    if wrong.missed:
        said.append(f"{first_few(wrong.missed)} would not be taken for one")
        namable = True
    if wrong.taken:
        said.append(f"{first_few(wrong.taken)}, ordinary here, would be taken for one")
    if said:
        lost.append(f"mark no special token, and {'; '.join(said)}")
    respelled = gpt2_respelled_specials(data)
    if respelled:
        lost.append(
            f"hold {', '.join(respelled[:3])}{' and more' if len(respelled) > 3 else ''} "
            "(vocab.json holds every token so): a GPT-2 reader that looks a named special "
            "token up by its text (tokenizers, transformers) gives it another id, or the "
            "ordinary token its text spells"
        )
    if wrong.unreadable:
        shown = ", ".join(f"{cut_repr(tok)} (id {idx})" for idx, tok in wrong.unreadable[:3])
        more = len(wrong.unreadable) - 3
        shown += f" and {more} more" if more > 0 else ""
        lost.append(
            f"hold {shown}, made by no merge and not written like <...> or [...]: loading "
            "them fails, and naming it makes it a special token"
        )
    if data.added_tokens:
        names = first_few(data.added_tokens)
        lost.append(f"hold no added token that is not special ({names}: special once loaded)")
        namable = True  # one not written like <...> is read once named
    template = template_loss(data)
    if template is not None:
        lost.append(template)
    return lost, namable and not wrong.taken and not wrong.unreadable


def gpt2_respelled_specials(data: TokenizerData) -> list[str]:
    """``data``'s special tokens whose text is not their own byte-level spelling, each in
    words: vocab.json holds them under that spelling, which other GPT-2 readers do not
    find by the text they are named by (``"<|中文|>"`` is written ``"<|ä¸Ńæĸĩ|>"``), or
    find as an ordinary token (``"Ġthe"`` is the spelling of `` the``). This project's
    loader reads the spelling back to bytes, so naming them here is enough."""
    ordinary = {
        tok: idx for idx, tok in data.vocab.items() if idx not in data.special_tokens.values()
    }
    said = []
    for text, idx in data.special_tokens.items():
        spelt = gpt2.encode_token(data.vocab.get(idx, text.encode("utf-8")))
        if spelt == text:
            continue
        try:
            other = ordinary.get(gpt2.decode_token(text, "special token"))
        except gpt2.TokenizerFileError:  # a character outside the byte-level alphabet
            other = None
        if other is None:
            said.append(f"special token {text!r} under its byte-level spelling {spelt!r}")
        else:
            said.append(
                f"special token {text!r} under its byte-level spelling {spelt!r} ({text!r} "
                f"there spells the ordinary token {data.vocab[other]!r}, id {other})"
            )
    return said


def template_loss(data: TokenizerData) -> str | None:
    """What files other than a ``tokenizer.json`` lose of ``data``'s post-processor template
    (the ids ``add_special_tokens=True`` adds), in words; None when it has none."""
    if data.template is None:
        return None
    return (
        f"hold no post-processor template ({data.template.text!r}): loaded back, "
        "add_special_tokens=True adds nothing"
    )


def format_problem(format: str, pattern: str, special_tokens: Sequence[str]) -> str | None:
    """Why files in ``format`` could not hold a tokenizer splitting text with ``pattern`` and
    holding these special tokens, whatever it learns; None when they can. Asked before
    training: found only when the files were written, the run was lost."""
    if format == "hf":
        return split_problem(pattern) or added_tokens_problem(special_tokens)
    if format == "tiktoken":
        return tiktoken_pattern_problem(pattern) or special_tokens_problem(special_tokens)
    return None


# A tokenizer's own files end so: a folder to save into named like one is a slip for the
# file ("x.json" became a folder holding x.json/vocab.json).
_FILE_SUFFIXES = (".json", ".tiktoken", ".txt")


def file_named_for_folder(directory: str | os.PathLike[str]) -> str | None:
    """Why ``directory``, given as the folder a save writes into, looks meant as a file: it is
    no folder yet and its name ends like a tokenizer's file (``x.json``); None otherwise (a
    folder of that name made beforehand is taken as given)."""
    path = Path(directory)
    if path.is_dir() or not path.name.lower().endswith(_FILE_SUFFIXES):
        return None
    stem = path.name[: path.name.rindex(".")] or "tokenizer"
    return (
        f"{os.fspath(directory)}: names a file, but a tokenizer is saved into a folder (its "
        f"files go inside, as {path.name}/vocab.json or {path.name}/tokenizer.json); name a "
        f"folder, e.g. {os.fspath(path.with_name(stem))}"
    )


def save_data(
    directory: str | os.PathLike[str],
    data: TokenizerData,
    format: str = "gpt2",
    name: str | None = None,
) -> list[Path]:
    """Write ``data`` into ``directory`` in ``format`` ("gpt2": ``vocab.json`` +
    ``merges.txt``; "hf": ``tokenizer.json``; "tiktoken": ``NAME.tiktoken`` + its sidecar
    ``NAME.tiktoken.json``,
    ``name`` defaulting to "tokenizer"), each file atomically; returns the paths written.
    Only the tiktoken format has a ``name``; only gpt2 files lose the pattern and the special
    tokens' marks: the loader takes "gpt2" unless told another pattern, and for special
    tokens the entries no merge makes that look like ``<...>`` or ``[...]``, unless told."""
    if os.fspath(directory) == "":  # Path("") is the working directory, silently
        raise ValueError("save: the directory is empty; name the folder to write into")
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; the formats are {', '.join(FORMATS)}")
    slip = file_named_for_folder(directory)
    if slip is not None:
        raise ValueError(slip)
    if name is not None and format != "tiktoken":
        raise ValueError(f"format {format!r} has fixed file names; name={name!r} is for tiktoken")
    if name is not None:
        name = given_stem(name)
    # The file it would write first, which each refusal names, as the writers' own do.
    first = Path(directory) / (
        "vocab.json" if format == "gpt2" else f"{name or DEFAULT_NAME}.tiktoken"
    )
    refusal = _refusal(data, format)
    if refusal is not None:
        raise ValueError(f"{first}: format {format!r} cannot hold this tokenizer: {refusal}")
    if format == "hf":
        return [write_hf(directory, data)]  # its writer warns of what it loses
    if format == "gpt2":
        apart = {*data.special_tokens.values(), *data.added_tokens.values()}
        pair = gpt2.save_files(directory, data.vocab, data.merges, lambda: _elsewhere(data), apart)
        written = list(pair)
    else:
        written = list(
            write_tiktoken(directory, name or DEFAULT_NAME, data, lambda: _elsewhere(data))
        )
    for loss in _losses(data, format):  # once written: a save refused is not also warned of
        warnings.warn(f"{os.fspath(directory)}: {loss}", LossyFormatWarning, stacklevel=3)
    return written


def save_losses(data: TokenizerData, format: str) -> list[str]:
    """What saving ``data`` in ``format`` loses, in the words of the LossyFormatWarnings
    :func:`save_data` gives (without the folder they start with), found without writing: what
    an app asks about before it writes. Empty when nothing is lost, or when the format
    refuses ``data`` (:func:`save_data` says why)."""
    if format == "hf":
        return hf_losses(data)
    if _refusal(data, format) is not None:
        return []
    if format == "tiktoken" and tiktoken_refusal(data) is not None:
        return []
    return _losses(data, format)


def _refusal(data: TokenizerData, format: str) -> str | None:
    """Why GPT-2 or tiktoken files cannot hold ``data`` whatever its vocabulary (the
    writers refuse the rest), or None."""
    beyond = (
        only_a_file_says(data.pipeline)
        if format != "hf" and data.pipeline is not None and data.pipeline.needed
        else None
    )
    if beyond is not None:
        return f"{beyond}: only a tokenizer.json can say that (save it as 'hf')"
    if format == "gpt2" and data.ignore_merges:
        return (
            "it looks whole pre-tokens up in the vocabulary (ignore_merges) and merges.txt "
            "cannot say so (save it as 'hf')"
        )
    return None


def _losses(data: TokenizerData, format: str) -> list[str]:
    """What GPT-2 or tiktoken files of ``data`` lose, as :func:`save_data` warns of it."""
    if format == "gpt2":
        lost, namable = gpt2_loss_report(data)
        if not lost:
            return []
        named = "loading them back needs them named (pattern=, special_tokens=); "
        return [
            f"GPT-2 files (vocab.json + merges.txt) {'; '.join(lost)}: "
            f"{named if namable else ''}{_holds_both(data)}"
        ]
    template = template_loss(data)
    if template is None:
        return []
    return [f"tiktoken files {template} (save as 'hf', which holds it)"]
