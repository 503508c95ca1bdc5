"""The ``bpe-studio`` argument parser: commands, options and their help.

What it does: declares ``gui``, ``train``, ``encode``, ``decode`` and ``convert`` and checks
option values (whole numbers, worker counts, patterns) as argparse types, so a bad value is
one line and exit 2 before any file is read.
What it leaves out: running the commands (``train``, ``encode``, ``convert``).
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import __version__
from ..core import pretokenizer
from ..core.corpus.cluster import parse_address
from ..core.corpus.counting import resolve_workers
from ..core.formats.files import FORMATS
from ..core.pretokenization.names import NAMES_HELP
from ..core.pretokenization.specials import DEFAULT_SPECIAL_TOKEN
from ..core.train.trainer import ENGINES
from .sources import SOURCE_HELP

STREAMS = (
    "Progress bars and summaries go to stderr; stdout carries only data (--out -). Errors "
    "are one line on stderr and a non-zero exit (130 after Ctrl-C). An --out never replaces "
    "an input, and replaces an existing file only with --force."
)
FORCE_FILE = "replace the --out file if it exists (never an input)"
FORCE_DIR = (
    "replace files of the same names already in DIR, or write beside another tokenizer "
    "there (never over an input)"
)


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _positive(text: str) -> int:
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _workers(text: str) -> int:
    """A --workers value, checked by the core's one rule (``resolve_workers``)."""
    value = _whole_number(text)
    try:
        return resolve_workers(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be at least 1 (leave --workers out for every core), got {value}"
        ) from None


def _pattern(text: str) -> str:
    """A --pattern value: a name (any spelling the core knows, given back as the name) or a
    regex that compiles (``core.pretokenizer``'s rule)."""
    try:
        return pretokenizer(text).name or text
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _cluster(text: str) -> str:
    """A --cluster value, checked by the core's rule (``cluster.parse_address``)."""
    try:
        parse_address(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


PATTERN_NAMES = NAMES_HELP


def _add_pattern(command: argparse.ArgumentParser, help_text: str, default: str | None) -> None:
    command.add_argument(
        "--pattern", type=_pattern, default=default, metavar="NAME|REGEX", help=help_text
    )


def _add_format(command: argparse.ArgumentParser, flag: str, help_text: str, **kw: Any) -> None:
    command.add_argument(flag, choices=FORMATS, metavar="FORMAT", help=help_text, **kw)


def _add_workers(command: argparse.ArgumentParser, what: str) -> None:
    # The rule of corpus.resolve_workers, as the user sees it.
    command.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="K",
        help=f"{what} processes, at least 1 (default: every core)",
    )


# Each subcommand's one-line help and its description (which ends with STREAMS).
_COMMANDS: dict[str, tuple[str, str]] = {
    "train": (
        "train a tokenizer headless",
        "Train a byte-level BPE tokenizer on CORPUS (several files count as one corpus) and "
        "write it into DIR: vocab.json + merges.txt by default.",
    ),
    "encode": (
        "encode a text file to a NumPy array of ids",
        "Encode UTF-8 text to a 1-D .npy array of token ids (uint16 when every id fits, "
        "else uint32).",
    ),
    "decode": (
        "decode a NumPy array of ids back to text",
        "Write the exact bytes a 1-D .npy array of ids stands for.",
    ),
    "inspect": (
        "what a tokenizer's vocabulary is made of, how a corpus uses it",
        "Report what the vocabulary of SRC is made of (its tokens by byte length and by "
        "category: partial UTF-8, whitespace, digits, punctuation/symbols, letters by Unicode "
        "script, mixed; its unreachable tokens); with --corpus, how a corpus uses it (each "
        "token's count, the tokens it never uses, under-trained candidates); with --against, "
        "how many tokens another tokenizer shares with it. A readable summary on stdout, or "
        "one JSON object with --json.",
    ),
    "convert": (
        "convert a tokenizer between GPT-2, Hugging Face and tiktoken files",
        "Write the tokenizer SOURCE names in another format, with the same ids for every "
        "text. DIR is checked before anything is read; the files written are named on stderr.",
    ),
}


def _add_command(sub: argparse._SubParsersAction, name: str) -> argparse.ArgumentParser:
    """The subcommand ``name`` with its help and description (``_COMMANDS``)."""
    help_text, description = _COMMANDS[name]
    return sub.add_parser(name, help=help_text, description=f"{description} {STREAMS}")


def _add_tokenizer(command: argparse.ArgumentParser) -> None:
    command.add_argument("--tokenizer", required=True, metavar="SRC", help=SOURCE_HELP)


SOURCE_PATTERN_HELP = (
    f"pre-tokenization pattern ({PATTERN_NAMES} or a regex) for sources that carry none: "
    "GPT-2 files (default gpt2) and a .tiktoken file without its NAME.tiktoken.json beside it. "
    "A tokenizer.json or a preset keeps its own, and a different one is an error"
)


def _add_train(sub: argparse._SubParsersAction) -> None:
    train = _add_command(sub, "train")
    train.add_argument(
        "corpus",
        metavar="CORPUS",
        nargs="+",
        help="UTF-8 text file(s), or - for standard input (pipes are read too); globs (quote "
        "them: 'shards/part-*.txt.gz'), compressed files (.gz .bz2 .xz .zst), URLs (memory://, "
        "s3://, gs://, hf://datasets/... with their fsspec package), and records: each "
        "record's text field in .jsonl and .parquet files is one document. Several are "
        "counted together as one corpus; no pre-token crosses two files or two records",
    )
    train.add_argument(
        "--text-field",
        metavar="NAME",
        default=None,
        help="the field of .jsonl and .parquet records that holds their text (default: text)",
    )
    train.add_argument(
        "--cluster",
        type=_cluster,
        metavar="ADDRESS",
        default=None,
        help="count the pre-tokens on a Dask cluster: local (a cluster of this machine's "
        "cores), local:N (N worker processes) or a scheduler's tcp://HOST:PORT, whose workers "
        "reach the corpus by the same path or URL. The merges are the same. Needs "
        "pip install 'bpe-studio[cluster]'",
    )
    train.add_argument(
        "--vocab-size",
        type=_positive,
        required=True,
        metavar="N",
        help="size of the vocabulary to learn: 256 byte tokens + the special tokens + "
        "one token per merge (fewer if the corpus runs out of pairs)",
    )
    specials = train.add_mutually_exclusive_group()
    specials.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOK",
        help=f"a special token (repeatable); giving any replaces the default "
        f"{DEFAULT_SPECIAL_TOKEN!r}, so repeat it to keep it too",
    )
    specials.add_argument(
        "--no-special-tokens",
        action="store_true",
        help=f"train with no special token (not even {DEFAULT_SPECIAL_TOKEN!r})",
    )
    _add_pattern(
        train,
        f"pre-tokenization pattern: a name ({PATTERN_NAMES}; cl100k and o200k are GPT-4's "
        "and GPT-4o's) or a regex, checked before training (default: gpt2)",
        "gpt2",
    )
    _add_workers(train, "pre-tokenization")
    train.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="merge engine: compiled (numba; fast on large corpora, compiled on first use), "
        "python (no compile), or auto (by corpus size; the default). The merges are the same",
    )
    train.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="directory to write the tokenizer into (created if missing), or - to write "
        "tokenizer.json to standard output (with --format hf)",
    )
    _add_format(
        train,
        "--format",
        "files to write: gpt2 (vocab.json + merges.txt; they hold no pattern), hf "
        "(tokenizer.json) or tiktoken (tokenizer.tiktoken + tokenizer.tiktoken.json); "
        "default: gpt2",
        default="gpt2",
    )
    train.add_argument("--force", action="store_true", help=FORCE_DIR)


def _add_encode(sub: argparse._SubParsersAction) -> None:
    enc = _add_command(sub, "encode")
    enc.add_argument("input", metavar="INPUT", help="UTF-8 text file, or - for standard input")
    _add_tokenizer(enc)
    specials = enc.add_mutually_exclusive_group()
    specials.add_argument(
        "--special-token",
        action="append",
        default=None,
        metavar="TOK",
        help="also treat TOK as special (repeatable); it must be in the vocabulary. The "
        "special tokens the vocabulary holds (e.g. <|endoftext|>) stay special",
    )
    specials.add_argument(
        "--no-special-tokens",
        action="store_true",
        help="treat every special token in the text as ordinary text",
    )
    enc.add_argument(
        "--add-special-tokens",
        action="store_true",
        help="put the tokens the tokenizer's template adds around every text (a "
        "tokenizer.json's post-processor, e.g. Llama 3's <|begin_of_text|>) around the ids, "
        "as the model sees them",
    )
    _add_pattern(enc, SOURCE_PATTERN_HELP, None)
    _add_workers(enc, "encoding")
    enc.add_argument(
        "--out",
        required=True,
        metavar="IDS.npy",
        help="the .npy file to write, or - for its bytes on standard output (what decode "
        "reads from -)",
    )
    enc.add_argument("--force", action="store_true", help=FORCE_FILE)


def _add_decode(sub: argparse._SubParsersAction) -> None:
    dec = _add_command(sub, "decode")
    dec.add_argument("ids", metavar="IDS.npy", help=".npy file of ids, or - for standard input")
    _add_tokenizer(dec)
    _add_pattern(
        dec,
        "pattern for a .tiktoken file without its NAME.tiktoken.json; decoding does not use it, so "
        "any name will do",
        None,
    )
    dec.add_argument(
        "--out", default="-", metavar="TEXT", help="file to write (default: - for standard output)"
    )
    dec.add_argument("--force", action="store_true", help=FORCE_FILE)


def _add_convert(sub: argparse._SubParsersAction) -> None:
    conv = _add_command(sub, "convert")
    conv.add_argument("source", metavar="SOURCE", help=SOURCE_HELP)
    _add_format(
        conv,
        "--to",
        "gpt2: vocab.json + merges.txt (these hold no pattern: load them with --pattern "
        "unless it is gpt2); hf: tokenizer.json for Hugging Face tokenizers; tiktoken: "
        "NAME.tiktoken + NAME.tiktoken.json (pattern and special tokens)",
        required=True,
    )
    conv.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="directory to write into (created if missing), or - to write tokenizer.json to "
        "standard output (with --to hf)",
    )
    conv.add_argument(
        "--name",
        metavar="NAME",
        default=None,
        help="file name stem for --to tiktoken (default: the preset's name, else tokenizer)",
    )
    _add_pattern(conv, SOURCE_PATTERN_HELP, None)
    conv.add_argument("--force", action="store_true", help=FORCE_DIR)


def _add_inspect(sub: argparse._SubParsersAction) -> None:
    ins = _add_command(sub, "inspect")
    ins.add_argument("source", metavar="SRC", help=SOURCE_HELP)
    ins.add_argument(
        "--corpus",
        nargs="+",
        metavar="FILE",
        default=None,
        help="a corpus to encode and count: files, - for standard input, globs, compressed "
        "files and URLs, .jsonl and .parquet records (each record's text field one "
        "document), as train reads them",
    )
    ins.add_argument(
        "--text-field",
        metavar="NAME",
        default="text",
        help="the field of .jsonl and .parquet records that holds their text (default: text)",
    )
    ins.add_argument(
        "--no-scan",
        action="store_true",
        help="with --corpus, leave out the second pass over the text that tells the unused "
        "tokens whose bytes occur only across tokens from those absent from it (about a "
        "fifth of the time)",
    )
    ins.add_argument(
        "--against", metavar="SRC2", default=None, help="a second tokenizer to compare with"
    )
    ins.add_argument(
        "--json", action="store_true", help="one JSON object on stdout (keys: see the README)"
    )
    ins.add_argument(
        "--top",
        type=_positive,
        default=10,
        metavar="N",
        help="tokens shown as examples in the summary (default: 10)",
    )
    _add_pattern(ins, SOURCE_PATTERN_HELP, None)
    _add_workers(ins, "encoding")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bpe-studio",
        description="Train, inspect and watch byte-level BPE tokenizers learn. "
        "With no command, opens the desktop app.",
        epilog=STREAMS,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--demo", action="store_true", help="open the app and train on the bundled sample corpus"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    gui = sub.add_parser("gui", help="open the desktop app, optionally with a corpus loaded")
    gui.add_argument("corpus", nargs="?", help="UTF-8 text file to load")
    gui.add_argument(
        "--demo", action="store_true", help="train on the bundled sample corpus right away"
    )
    _add_train(sub)
    _add_encode(sub)
    _add_decode(sub)
    _add_convert(sub)
    _add_inspect(sub)
    return parser
