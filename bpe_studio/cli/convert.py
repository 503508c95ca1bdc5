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
from ..core.formats.base.preset_table import PRESETS
from ..core.formats.files import DEFAULT_NAME, LossyFormatWarning, unmarked_specials
from ..core.formats.tiktoken import sidecar_name
from ..core.io.interrupts import held_interrupts
from ..core.pretokenization.names import shown_pattern
from ..core.text.display import plural
from .output import (
    EXIT_CLOSED_PIPE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CliError,
    check_out_dir,
    check_stdout_open,
    is_stream,
    one_line,
    os_error_message,
    shell_option,
    stream_name,
    write_stream,
)
from .sources import fetch_hub, load_source, source_files, split_line, written_pattern


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
        return name
    if source in PRESETS and not Path(source).exists():
        return source
    return DEFAULT_NAME


def check_tokenizer_out(
    out: str, fmt: str, name: str, *, force: bool, inputs: Iterable[str | os.PathLike[str]]
) -> None:
    """``--out`` for a tokenizer in ``fmt``, by the output rule (``output``): a directory,
    or ``-`` for a format of one file."""
    files = files_for(fmt, name)
    check_stdout_open(out)
    if not is_stream(out):
        check_out_dir(out, files, force=force, inputs=inputs)
    elif len(files) > 1:
        raise CliError(
            f"--out {out}: the {fmt} format writes two files ({' and '.join(files)}) and "
            f"{stream_name(out)} takes one; write the hf format (tokenizer.json) there, or "
            "name a directory"
        )


class NotWritten(CliError):
    """:func:`save` could not write the tokenizer (a full disk): one line naming ``--out``
    and the ``reason``, which ``train`` adds to (its merges were not saved)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def save(tok: Tokenizer, out: str, fmt: str, name: str) -> tuple[str, int]:
    """``tok.save`` into ``out`` (or to standard output for ``-``) with its errors as one line
    naming ``out`` (:class:`NotWritten`); the summary's line saying what was written, and the
    exit status. Ctrl-C while files are written takes effect once they all are."""
    stem = name if fmt == "tiktoken" else None
    with warnings.catch_warnings():
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
                    f"interrupted; {wrote} (whole: Ctrl-C came while writing)", EXIT_INTERRUPTED
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
    special)."""
    notes = []
    template = tok.template
    if fmt != "hf" and template is not None:
        files = "vocab.json + merges.txt" if fmt == "gpt2" else "tiktoken files"
        notes.append(
            f"note: {files} hold no post-processor template ({template.text!r}): encode "
            "--add-special-tokens of these files adds nothing; --to hf keeps it"
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
    unusual = unmarked_specials(tok.special_tokens)
    if unusual:
        named = " ".join(shell_option("--special-token", s) for s in unusual)
        notes.append(
            "note: vocab.json + merges.txt mark no special token, and loading takes only "
            f"those written like <...> or [...] for them; load these files with {named}"
        )
    if tok.added_tokens:
        shown = ", ".join(map(repr, list(tok.added_tokens)[:3]))
        notes.append(
            f"note: vocab.json + merges.txt hold no added token that is not special ({shown}"
            f"{', ...' if len(tok.added_tokens) > 3 else ''}): loaded again they are special "
            "tokens, which --no-special-tokens encodes as text; --to hf keeps them as they are"
        )
    return notes


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
    tok = Tokenizer.from_data(data)
    written, code = save(tok, args.out, args.to, name)
    lines = [
        f"read {args.source}: {plural(len(tok.vocab), 'token')}, "
        f"{plural(len(tok.merges), 'merge')}, {plural(len(tok.special_tokens), 'special token')}",
        split_line(tok),
        written,
    ]
    lines += gpt2_notes(tok, args.to)
    print("\n".join(map(one_line, lines)), file=sys.stderr)
    return code
