"""``bpe-studio convert``: write a tokenizer in another format (GPT-2, Hugging Face, tiktoken).

What it does: checks ``--out`` first by the output rule (``output``: a file there, files that
would be replaced or a tokenizer joined without ``--force``, SOURCE's own files, a place that
refuses new files; ``-`` for a one-file format), then reads SOURCE (``sources``; an ``hf:``
model's files are checked again once fetched), writes it with ``Tokenizer.save`` and names
each file written on stderr. It also knows which files each
format writes (:func:`files_for`) and writes a tokenizer to DIR or standard output
(:func:`check_tokenizer_out`, :func:`save`), which ``train`` uses too.
What it leaves out: the formats themselves (``core.formats``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from collections.abc import Iterable
from pathlib import Path

from ..core import Tokenizer
from ..core.formats.base.preset_table import PRESET_PREFIX, PRESETS
from ..core.formats.files import (
    DEFAULT_NAME,
    LossyFormatWarning,
    gpt2_misread,
    gpt2_respelled_specials,
    holding_formats,
)
from ..core.formats.hf.kind import read_past
from ..core.formats.hf.tokenizer_json import dropped_when_written
from ..core.formats.tiktoken import given_stem, sidecar_name
from ..core.io.atomic import new_files_only
from ..core.io.interrupts import held_interrupts
from ..core.pretokenization.names import shown_pattern
from ..core.pretokenization.specials import looks_special
from ..core.text.display import cut_repr, plural
from .output import (
    EXIT_CLOSED_PIPE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    STDOUT,
    CliError,
    check_out_dir,
    check_stdout_not_an_input,
    check_stdout_open,
    is_stream,
    one_line,
    os_error_message,
    shell_option,
    shell_word,
    stream_name,
    tokenizer_files_in,
    write_stream,
)
from .sources import (
    fetch_hub,
    load_source,
    source_files,
    split_line,
    warn_of_tokenizer_json_beside,
    written_pattern,
)
from .termination import came


def files_for(fmt: str, name: str = DEFAULT_NAME) -> tuple[str, ...]:
    """The names of the files ``Tokenizer.save(directory, fmt, name)`` writes."""
    if fmt == "gpt2":
        return ("vocab.json", "merges.txt")
    if fmt == "hf":
        return ("tokenizer.json",)
    return (f"{name}.tiktoken", sidecar_name(name))


def tiktoken_name(source: str, name: str | None) -> str:
    """``--name``, else a preset's own name, else the core's default."""
    if name is not None:
        if not name or name != Path(name).name or name.startswith("."):
            raise CliError(f"--name {name!r}: must be a plain file name (no folder, no dot first)")
        return given_stem(name)
    preset = source.removeprefix(PRESET_PREFIX)
    if preset in PRESETS and (preset != source or not Path(source).exists()):
        return preset
    return DEFAULT_NAME


def check_tokenizer_out(
    out: str, fmt: str, name: str, *, force: bool, inputs: Iterable[str | os.PathLike[str]]
) -> None:
    """``--out`` for a tokenizer in ``fmt``, by the output rule (``output``): a directory,
    or ``-`` for a format of one file."""
    files = files_for(fmt, name)
    check_stdout_open(out)
    if out == STDOUT:
        check_stdout_not_an_input(inputs)
    if not is_stream(out):
        check_out_dir(out, files, force=force, inputs=inputs)
    elif len(files) > 1:
        raise CliError(
            f"--out {out}: the {fmt} format writes two files ({' and '.join(files)}) and "
            f"{stream_name(out)} takes one; write the hf format (tokenizer.json) there, or "
            "name a directory"
        )


def others_note(out: str, fmt: str, name: str) -> str | None:
    """The summary's note when the folder ``out`` holds another tokenizer beside the one just
    written in ``fmt`` (``--force`` writes beside it, leaving its files): loading the folder
    would fail as ambiguous, loading the file by its name does not."""
    if is_stream(out):
        return None
    found = tokenizer_files_in(Path(out))
    if len(found) < 2:
        return None
    ours = os.path.join(out, files_for(fmt, name)[0])
    return (
        f"note: {out} now holds {len(found)} tokenizers ({', '.join(found)}): load this one "
        f"by its name (--tokenizer {shell_word(ours)}), or remove the others' files"
    )


class NotWritten(CliError):
    """:func:`save` could not write the tokenizer (a full disk): one line naming ``--out``
    and the ``reason``, which ``train`` adds to (its merges were not saved)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def save(tok: Tokenizer, out: str, fmt: str, name: str, *, force: bool) -> tuple[str, int]:
    """``tok.save`` into ``out`` (or to standard output for ``-``) with its errors as one line
    naming ``out`` (:class:`NotWritten`); the summary's line saying what was written, and the
    exit status. Ctrl-C while files are written takes effect once they all are. Without
    ``force``, files that appeared in ``out`` since it was checked stay, and fail the save."""
    stem = name if fmt == "tiktoken" else None
    fresh = () if force or is_stream(out) else [Path(out) / file for file in files_for(fmt, name)]
    with warnings.catch_warnings(), new_files_only(fresh):
        # What GPT-2 files leave out is said in the summary's notes (gpt2_notes), in flags.
        warnings.simplefilter("ignore", LossyFormatWarning)
        return _save(tok, out, fmt, stem)


def _save(tok: Tokenizer, out: str, fmt: str, stem: str | None) -> tuple[str, int]:
    try:
        if not is_stream(out):
            # A tokenizer is several files, and one written without the others would load as
            # another tokenizer: Ctrl-C is held until they all are.
            wrote = None
            try:
                with held_interrupts():
                    wrote = f"wrote {' and '.join(map(str, tok.save(out, fmt, stem)))}"
            except KeyboardInterrupt:
                if wrote is None:
                    raise
                raise CliError(
                    f"interrupted; {wrote} (whole: {came()} came while writing)", EXIT_INTERRUPTED
                ) from None
            return wrote, 0
        with tempfile.TemporaryDirectory() as folder:
            (path,) = tok.save(folder, fmt, stem)
            with open(path, "rb") as f:
                try:
                    closed_after = write_stream(out, f)
                except CliError as e:
                    raise NotWritten(str(e), str(e)) from None
            if closed_after is None:
                return f"wrote {path.name} to {stream_name(out)}", 0
            return (
                f"{stream_name(out)} was closed after {closed_after:,} bytes of {path.name}; "
                "the rest was not written",
                EXIT_CLOSED_PIPE,
            )
    except OSError as e:
        raise NotWritten(os_error_message(out, e), e.strerror or str(e)) from None


def gpt2_notes(tok: Tokenizer, fmt: str) -> list[str]:
    """What to tell the user when the files drop what loading them back needs told: a
    template (any format but hf); for GPT-2 files, a pattern other than gpt2, special tokens
    not written like ``<...>`` or ``[...]`` (the files mark none; the loader takes only such
    entries made by no merge for them), added tokens that are not special (they come back
    special), special tokens held under a byte-level spelling other than their text (other
    readers do not find them by it)."""
    notes = []
    template = tok.template
    if fmt != "hf" and template is not None:
        files = "vocab.json + merges.txt" if fmt == "gpt2" else "tiktoken files"
        notes.append(
            f"note: {files} hold no post-processor template ({template.text!r}): encode "
            "--add-special-tokens of these files adds nothing; --to hf keeps it"
        )
    left_out = dropped_when_written(tok.to_data()) if fmt == "hf" else None
    if left_out is not None:
        notes.append(
            f"note: the pattern {shown_pattern(tok.pattern)} leaves text such as {left_out!r} "
            "unmatched: this tokenizer refuses such text, but tokenizer.json drops it, as "
            "tokenizers does (no id stands for it); the tiktoken format keeps the refusal"
        )
    if fmt != "gpt2":
        return notes
    if tok.pattern_name != "gpt2":
        regex = written_pattern(tok.pattern)
        notes.append(
            "note: vocab.json + merges.txt hold no pattern; load them with "
            f"{shell_option('--pattern', regex, shown_pattern(regex))} to split text as this "
            "tokenizer does"
        )
    missed = gpt2_misread(tok.to_data()).missed
    if missed:
        named = " ".join(shell_option("--special-token", s) for s in missed)
        notes.append(
            "note: vocab.json + merges.txt mark no special token, and loading takes only "
            "those written like <...> or [...] (no whitespace nor bracket of the kind inside) "
            f"that no merge makes for them; load these files with {named}"
        )
    respelled = gpt2_respelled_specials(tok.to_data())
    if respelled:
        formats = holding_formats(tok.to_data())
        keeps = f"; --to {' or --to '.join(formats)} keeps it" if formats else ""
        notes.append(
            f"note: vocab.json + merges.txt hold {', '.join(respelled[:3])}"
            f"{', ...' if len(respelled) > 3 else ''}: other GPT-2 readers (tokenizers, "
            f"transformers) look it up by its text, giving it another id or that ordinary "
            f"token{keeps}"
        )
    if tok.added_tokens:
        shown = ", ".join(map(repr, list(tok.added_tokens)[:3]))
        # The loader takes only entries written like <...> or [...] unnamed: the files fail
        # to load unless the others are named.
        unnamed = [t for t in tok.added_tokens if not looks_special(t)]
        named = " ".join(shell_option("--special-token", t) for t in unnamed)
        load = f" (load these files with {named})" if unnamed else ""
        notes.append(
            f"note: vocab.json + merges.txt hold no added token that is not special ({shown}"
            f"{', ...' if len(tok.added_tokens) > 3 else ''}): loaded again they are special "
            f"tokens, which --no-special-tokens encodes as text{load}; --to hf keeps them as "
            "they are"
        )
    return notes


def refuse_gpt2_misreading(tok: Tokenizer, source: str) -> None:
    """``--to gpt2`` of a tokenizer whose files would load back with other ids whatever
    options are given: a CliError naming the entries the loader would take for special
    tokens (a tokenizer made without them) or could not read at all (made by no merge and
    not written like ``<...>``), and the formats that hold it. What options do bring back
    is a note instead (:func:`gpt2_notes`)."""
    data = tok.to_data()
    wrong = gpt2_misread(data)
    why = []
    if wrong.taken:
        shown = ", ".join(f"{s!r} (id {i})" for s, i in list(wrong.taken.items())[:3])
        why.append(
            f"loading them would make {shown}{' and more' if len(wrong.taken) > 3 else ''} "
            "special (ordinary here), and no option says otherwise"
        )
    if wrong.unreadable:
        idx, token = wrong.unreadable[0]
        more = f" and {len(wrong.unreadable) - 1} more" if len(wrong.unreadable) > 1 else ""
        why.append(
            f"{cut_repr(token)} (id {idx}){more} is made by no merge and not written like "
            "<...> or "
            "[...], so loading them fails (and --special-token would make it special)"
        )
    if not why:
        return
    formats = holding_formats(data)
    instead = (
        f"--to {formats[0]} keeps its ids" if formats else "no other format holds it whole either"
    )
    raise CliError(
        f"--to gpt2: vocab.json + merges.txt cannot give {source}'s ids: {'; '.join(why)}; "
        f"{instead}"
    )


def cmd_convert(args: argparse.Namespace) -> int:
    if args.name is not None and args.to != "tiktoken":
        raise CliError(
            f"--name {args.name}: names the files of --to tiktoken only; --to {args.to} writes "
            f"{' and '.join(files_for(args.to))}, whose names are fixed: leave --name out",
            EXIT_USAGE,
        )
    name = tiktoken_name(args.source, args.name)
    check_tokenizer_out(args.out, args.to, name, force=args.force, inputs=source_files(args.source))
    source = fetch_hub(args.source)
    if source != args.source:
        # A Hub model's files may have just been downloaded: they are inputs too.
        check_tokenizer_out(args.out, args.to, name, force=args.force, inputs=source_files(source))
    data = load_source(source, args.pattern, args.special_token)
    warn_of_tokenizer_json_beside(source, data=data)
    tok = Tokenizer.from_data(data)
    if args.to == "gpt2":
        refuse_gpt2_misreading(tok, args.source)
    written, code = save(tok, args.out, args.to, name, force=args.force)
    lines = [
        f"read {args.source}: {plural(len(tok.vocab), 'token')}, "
        f"{plural(len(tok.merges), 'merge')}, {plural(len(tok.special_tokens), 'special token')}",
        split_line(tok),
        written,
        *filter(None, [others_note(args.out, args.to, name)]),
    ]
    lines += gpt2_notes(tok, args.to)
    # The tokenizer's notes (truncation, padding and dropout read past) hold for what it
    # wrote too.
    lines += [f"note: {note}" for note in tok.notes]
    if any(read_past(note) for note in tok.notes):  # (not said of a note of other things)
        lines.append("note: the files written hold no truncation, padding or dropout")
    print("\n".join(map(one_line, lines)), file=sys.stderr)
    return code
