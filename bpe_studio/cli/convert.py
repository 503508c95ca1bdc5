"""``bpe-studio convert``: write a tokenizer in another format (GPT-2, Hugging Face, tiktoken).

What it does: checks ``--out`` first (a file there, files that would be replaced without
``--force``, a place that refuses new files), then reads SOURCE (``sources``), writes it with
``Tokenizer.save`` and names each file written on stderr. It also knows which files each
format writes (:func:`files_for`), which ``train --format`` uses for the same check.
What it leaves out: the formats themselves (core ``tokenizer_files``, ``formats``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core import Tokenizer
from ..core.formats.tiktoken_file import sidecar_name
from ..core.presets import PRESETS
from ..core.tokenizer_files import DEFAULT_NAME
from .output import CliError, check_out_dir, os_error_message
from .sources import load_source


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


def save(tok: Tokenizer, out: str, fmt: str, name: str) -> list[Path]:
    """``tok.save`` with its errors as one line naming ``out``."""
    try:
        return tok.save(out, fmt, name if fmt == "tiktoken" else None)
    except OSError as e:
        raise CliError(os_error_message(out, e)) from None


def pattern_note(tok: Tokenizer, fmt: str) -> str | None:
    """What to tell the user when GPT-2 files drop a pattern other than gpt2."""
    if fmt != "gpt2" or tok.pattern_name == "gpt2":
        return None
    how = tok.pattern_name or f"{tok.pattern!r}"
    return (
        "note: vocab.json + merges.txt hold no pattern; load them with --pattern "
        f"{how} to split text as this tokenizer does"
    )


def cmd_convert(args: argparse.Namespace) -> int:
    name = tiktoken_name(args.source, args.name)
    check_out_dir(args.out, files_for(args.to, name), force=args.force)
    data = load_source(args.source, args.pattern)
    tok = Tokenizer.from_data(data)
    written = save(tok, args.out, args.to, name)
    lines = [
        f"read {args.source}: {len(tok.vocab):,} tokens, {len(tok.merges):,} merges, "
        f"{len(tok.special_tokens)} special token(s), pattern {tok.pattern_name or 'custom'}",
        f"wrote {' and '.join(map(str, written))}",
    ]
    note = pattern_note(tok, args.to)
    if note:
        lines.append(note)
    print("\n".join(lines), file=sys.stderr)
    return 0
