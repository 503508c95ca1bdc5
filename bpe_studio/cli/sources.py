"""What ``--tokenizer`` (and ``convert``'s SOURCE) names, and which special tokens apply.

What it does: :func:`load_tokenizer` reads every source the core reads (``Tokenizer.load``,
``tokenizer_files.load_data``: a preset name, a GPT-2 directory or ``vocab.json``, a
``tokenizer.json`` of any kind (``core.encode.foreign``), a ``.tiktoken`` file or its directory),
with an optional ``--pattern`` for formats that carry none. It then applies the user's
special tokens: the source's own, plus any named, each of which must be in the vocabulary
(``load_data`` checks it), or none at all.
What it leaves out: the file formats themselves (``core.formats``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core import Tokenizer
from ..core.corpus.stamps import Stamp, how_changed, stamp
from ..core.encode.foreign import AnyTokenizer, ForeignTokenizer, open_tokenizer
from ..core.formats.base.data import TokenizerData
from ..core.formats.beside import tokenizer_json_beside
from ..core.formats.files import (
    GPT2_FILE_NAMES,
    TIKTOKEN_SUFFIXES,
    is_gpt2_vocabulary,
    load_data,
)
from ..core.formats.hf.components import only_a_file_says
from ..core.formats.hf.pipeline import HfPipeline
from ..core.formats.tiktoken import sidecar_beside
from ..core.io.hf_hub import (
    CONFIG_FILE,
    HubError,
    HubModel,
    cached_files,
    fetch_tokenizer,
    parse_hub_source,
    said_of_model,
)
from ..core.pretokenization.names import PATTERNS, pattern_name, shown_pattern
from ..core.pretokenization.scan_patterns import unwrapped
from ..core.text.display import plural
from .output import CliError, say, tokenizer_files_in
from .progress import ProgressBar


def source_files(source: str) -> list[Path]:
    """The files that ``source`` reads (none for a preset), for the output rule (an output
    never replaces one): a folder's tokenizer files, or the file named with the files read
    beside it (a vocabulary's merges, a rank file's sidecar, a ``tokenizer.json``'s
    ``tokenizer_config.json``, which names a foreign file's special tokens). For
    ``hf:ORG/NAME`` they are the files the Hub's cache holds now (links into its blobs,
    compared by the file they name); a command checks again once :func:`fetch_hub` has
    downloaded them."""
    try:
        model = parse_hub_source(source)
    except HubError as e:
        raise CliError(str(e)) from None
    if model is not None:
        return [f for f in cached_files(model) if f.is_file()]
    path = Path(source)
    if not path.exists():
        return []
    if path.is_dir():
        named = [path / name for name in tokenizer_files_in(path)]
    else:
        named = [path]
    found: list[Path] = []
    for file in named:
        found.append(file)
        if is_gpt2_vocabulary(file):
            found += [file.with_name(merges) for _, merges in GPT2_FILE_NAMES]
        elif file.name.endswith(TIKTOKEN_SUFFIXES):
            sidecar = sidecar_beside(file)
            if sidecar is not None:
                found.append(sidecar)
        elif file.suffix == ".json":  # a tokenizer.json, whatever its name
            found.append(file.with_name(CONFIG_FILE))
    return [f for f in found if f.is_file()]


def stamp_sources(source: str) -> dict[Path, Stamp]:
    """The stamps (``core.corpus.stamps``) of the files ``source`` reads
    (:func:`source_files`: none for a preset), taken before it is first loaded. A command
    that loads it more than once (encode's workers each build it, then this process reads
    its template and summary) checks them once done (:func:`check_sources_unchanged`): a
    file replaced meanwhile gave ids of one version and a template of the other."""
    stamps = {}
    for file in source_files(source):
        try:
            stamps[file] = stamp(file)
        except FileNotFoundError:
            continue  # removed since it was listed: its loader names it
    return stamps


def check_sources_unchanged(stamps: dict[Path, Stamp], doing: str) -> None:
    """One line (``CliError``) naming the first of the files stamped (:func:`stamp_sources`)
    that is not as it was, worded as a corpus changed while read is."""
    for file, before in stamps.items():
        try:
            now: Stamp | None = stamp(file)
        except FileNotFoundError:
            now = None
        if now != before:
            raise CliError(
                f"{file}: changed while {doing} ({how_changed(before, now)}); nothing written: "
                "run again once it is written whole"
            )


def fetch_hub(source: str) -> str:
    """``source`` itself, or for ``hf:ORG/NAME[@REVISION]`` the local folder holding that
    model's tokenizer files (``core.io.hf_hub``: from the Hub's cache, or downloaded into it
    with a progress bar). One line if the model cannot be had."""
    model = parse_hub_source(source)
    if model is None:
        return source
    bars: list[ProgressBar] = []

    def progress(done: int, total: int | None) -> None:
        if not bars:
            bars.append(ProgressBar("downloading", total, unit="B"))
        bars[0].update(done, total)

    try:
        folder = fetch_tokenizer(model, progress)
    except HubError as e:
        raise CliError(str(e)) from None
    finally:
        for bar in bars:
            bar.close()
    _FETCHED[str(folder)] = model
    return str(folder)


# The cache's folders fetch_hub gave, by the model they hold: an error reading one is said of
# the model (a file damaged within: how to clear it), not of a snapshot's path alone.
_FETCHED: dict[str, HubModel] = {}


def _said_of_model(source: str, error: ValueError) -> ValueError:
    model = _FETCHED.get(source)
    return error if model is None else said_of_model(model, error)


def load_source(
    source: str, pattern: str | None = None, extra_specials: Sequence[str] | None = None
) -> TokenizerData:
    """The tokenizer data ``source`` names (see ``parser``'s help for SRC, and
    ``core.formats.files.load_data``, which reads every kind); ``pattern`` for the formats
    without one of their own; ``extra_specials`` more special tokens, each a vocabulary
    entry. One-line errors name the source, or the file beside it that holds what is wrong."""
    try:
        return load_data(source, pattern, extra_specials)
    except ValueError as error:
        raise _said_of_model(source, error) from None


def warn_of_tokenizer_json_beside(
    source: str,
    pattern: str | None = None,
    extra_specials: Sequence[str] | None = None,
    data: TokenizerData | None = None,
) -> TokenizerData | None:
    """A warning line on stderr when ``source`` names a GPT-2 ``vocab.json`` whose model's
    ``tokenizer.json``, beside it, gives other ids (``formats.beside``); said once, by the
    command, before its work (the workers that load it too say nothing). ``data``: what
    ``source`` was read into, if it was (else it is read here, only when such a file is
    beside it). Returns the data read here or given (None: none was needed), which the
    command may use rather than read the files again."""
    path = Path(source)
    # subtle: the name first; with_name refuses a path without one (".", "./", "").
    if not is_gpt2_vocabulary(path):
        return data
    beside = path.with_name("tokenizer.json")
    if not beside.is_file():
        return data
    if data is None:
        try:
            data = load_data(source, pattern, extra_specials)
        except (OSError, ValueError):
            return None  # the command's own load names what is wrong
    note = tokenizer_json_beside(path, data)
    if note is not None:
        say(f"bpe-studio: warning: {note}")
    return data


def load_tokenizer(
    source: str,
    extra_specials: Sequence[str] | None,
    *,
    no_specials: bool = False,
    pattern: str | None = None,
) -> AnyTokenizer:
    """The tokenizer ``source`` names (a ``tokenizer.json`` of another kind than byte-level
    BPE runs through ``tokenizers``: ``core.encode.foreign``). Its special tokens are its own (for
    GPT-2 files, the entries neither a byte nor made by a merge), plus ``extra_specials``,
    which must be vocabulary entries too; ``no_specials`` treats every one as ordinary text."""
    try:
        return open_tokenizer(source, pattern, extra_specials, no_specials=no_specials)
    except ValueError as error:
        raise _said_of_model(source, error) from None


def written_pattern(pattern: str) -> str:
    """``pattern`` as a ``tokenizer.json``'s one Split reads: its regex alone, not wrapped as
    the core runs an Isolated Split (``scan_patterns.isolated``). The regex is in the
    ``regex`` module's syntax (a file's Oniguruma spelling translated, the same matches)."""
    return unwrapped(pattern) or pattern


def split_pattern(tok: AnyTokenizer | TokenizerData) -> str | None:
    """The pattern ``tok`` splits text with: a named pattern's name, else its regex
    (:func:`written_pattern`); None when no single pattern does: a ``tokenizer.json`` whose
    pipeline (normalizers, several pre-tokenizer steps, added tokens' flags) splits text, or
    a tokenizer of another kind, which ``tokenizers`` splits as its file says. A file that
    keeps one regex's matches only (how ``train --format hf`` writes a custom regex) is split
    by that regex, as tiktoken's ``findall`` splits."""
    if isinstance(tok, ForeignTokenizer):
        return None
    pipeline = pipeline_of(tok)
    if pipeline is not None and only_a_file_says(pipeline) is not None:
        return None
    name = pattern_name(tok.pattern)
    return name if name in PATTERNS else written_pattern(tok.pattern)


def shown_split(tok: AnyTokenizer | TokenizerData) -> str | None:
    """:func:`split_pattern` as messages show it (``shown_pattern``: a name, or the regex as
    ``--pattern`` takes it back)."""
    pattern = split_pattern(tok)
    return None if pattern is None else shown_pattern(pattern)


def split_line(tok: AnyTokenizer | TokenizerData) -> str:
    """The summaries' line saying how ``tok`` splits text (:func:`shown_split`), or what does
    it when no single pattern does."""
    shown = shown_split(tok)
    if shown is not None:
        return f"pattern: {shown}"
    if isinstance(tok, ForeignTokenizer):
        return f"pattern: none ({tok.kind}: tokenizers splits text as its file says)"
    pipeline = pipeline_of(tok)
    assert pipeline is not None
    return (
        "pattern: none (the tokenizer.json's pipeline splits text: "
        f"{plural(len(pipeline.normalizers), 'normalizer')}, "
        f"{plural(len(pipeline.steps), 'pre-tokenizer step')})"
    )


def pipeline_of(tok: Tokenizer | TokenizerData) -> HfPipeline | None:
    """The ``tokenizer.json`` pipeline ``tok`` splits text with, or None when its pattern
    alone does (``TokenizerData.pipeline``'s ``needed``)."""
    if isinstance(tok, TokenizerData):
        return tok.pipeline if tok.pipeline is not None and tok.pipeline.needed else None
    return tok.hf_pipeline
