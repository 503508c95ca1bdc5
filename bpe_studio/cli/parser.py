"""The ``bpe-studio`` argument parser: commands, options and their help.

What it does: declares ``gui``, ``train``, ``encode``, ``decode`` and ``convert`` and checks
option values (whole numbers, worker counts, patterns, cluster addresses) as argparse types,
with the core's own rules, so a bad value is one line and exit 2 before any file is read. A
command's options are declared when that command is parsed or its help is shown
(:class:`Command`), and what they need from the core is imported then: ``bpe-studio --help``
and ``--version`` load none of it. Help or a version that cannot be written to standard
output (``> /dev/full``) is one line and exit 1, as for any output.
What it leaves out: running the commands (``train``, ``encode``, ``convert``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from .. import __version__
from ..commands import COMMANDS

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

STREAMS = (
    "Progress bars and summaries go to stderr; stdout carries only data (--out -). Errors "
    "are one line on stderr and a non-zero exit (130 after Ctrl-C). An --out never replaces "
    "an input, and replaces an existing file only with --force."
)
# inspect writes only to stdout: it has no --out and no --force.
STREAMS_STDOUT = (
    "Progress bars go to stderr; stdout carries only the report. Errors are one line on "
    "stderr and a non-zero exit (130 after Ctrl-C)."
)
# The program's own help, for every command: inspect's report is the data it gives.
STREAMS_PROGRAM = (
    "Progress bars go to stderr, and so do the summaries of train, encode, decode and "
    "convert; stdout carries only data (--out -, and inspect's report, which is its data). "
    "Errors are one line on stderr and a non-zero exit (130 after Ctrl-C). An --out never "
    "replaces an input, and replaces an existing file only with --force."
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
    from ..core.corpus.counting import resolve_workers

    value = _whole_number(text)
    try:
        return resolve_workers(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be at least 1 (leave --workers out for every core), got {value}"
        ) from None


def typed_text(text: str) -> str:
    r"""A text option's value (a pattern, a special token, a field's name) as it was typed.
    In a C locale without UTF-8 mode Python reads the command line as ASCII, and each byte
    of a UTF-8 character as a lone surrogate (Python's surrogateescape): the regex ``😀+`` was
    another one, silently, and ``<|😀|>`` was refused as not UTF-8. Its bytes, read as
    UTF-8, are what was typed; bytes that are not UTF-8 stay as they came, for the option's
    own check to refuse them.

    >>> typed_text("".join(chr(0xDC00 + b) for b in "é".encode())), typed_text("\udcff")
    ('é', '\udcff')
    """
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    try:
        return os.fsencode(text).decode("utf-8")
    except UnicodeError:
        return text


def refuse_empty_special_token(args: argparse.Namespace) -> None:
    """An empty ``--special-token`` is one line naming the option, exit 2, in every command:
    only ``train`` said so; ``encode``, ``decode``, ``convert`` and ``inspect`` gave the
    core's "a special token must not be empty", exit 1, naming neither the option nor what
    to write instead (an unset shell variable is the usual cause)."""
    if "" not in (getattr(args, "special_token", None) or ()):
        return
    from .output import EXIT_USAGE, CliError

    instead = (
        "for no special token use --no-special-tokens"
        if hasattr(args, "no_special_tokens")
        else "name a token of the vocabulary, or leave the option out"
    )
    raise CliError(f"--special-token '' is empty; {instead}", EXIT_USAGE)


def _pattern(text: str) -> str:
    """A --pattern value: a name (any spelling the core knows, given back as the name) or a
    regex that compiles (``core.pretokenizer``'s rule)."""
    from ..core.pretokenization.pretokenizer import pretokenizer

    text = typed_text(text)
    try:
        return pretokenizer(text).name or text
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _cluster(text: str) -> str:
    """A --cluster value, checked by the core's rule (``cluster_address``: Dask's parser)."""
    from ..core.corpus.cluster_address import ClusterError, cluster_address

    try:
        cluster_address(text)
    except ClusterError as e:
        raise argparse.ArgumentTypeError(f"{text}: {e.reason}") from None
    return text


def _pattern_names() -> str:
    from ..core.pretokenization.names import NAMES_HELP

    return NAMES_HELP


def _default_special_token() -> str:
    from ..core.pretokenization.specials import DEFAULT_SPECIAL_TOKEN

    return DEFAULT_SPECIAL_TOKEN


def _add_pattern(command: argparse.ArgumentParser, help_text: str, default: str | None) -> None:
    command.add_argument(
        "--pattern", type=_pattern, default=default, metavar="NAME|REGEX", help=help_text
    )


def _add_format(command: argparse.ArgumentParser, flag: str, help_text: str, **kw: Any) -> None:
    from ..core.formats.files import FORMATS

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


Options = Callable[[argparse.ArgumentParser], None]


def late_hint(parser: argparse.ArgumentParser, given: Sequence[str]) -> str:
    """What an error says more where ``given`` writes an option of the command (or of the
    program) after "--", where argparse reads every word as a file: an input named
    "--force" not found, "unrecognized arguments: -- --force". Empty where none is."""
    if "--" not in given:
        return ""
    known = set(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            # The command parsed has declared its options (``Command.declare``).
            for command in action.choices.values():
                known |= set(command._option_string_actions)
    # A file of that name, read as one, is what the user meant.
    late = [
        a
        for a in dict.fromkeys(given[given.index("--") + 1 :])
        if a in known and not os.path.lexists(a)
    ]
    if not late:
        return ""
    return (
        f" (after --, every word is read as a file, {', '.join(late)} too: put the options "
        "before --)"
    )


def dash_value_hint(parser: argparse.ArgumentParser, message: str, given: Sequence[str]) -> str:
    """What an error says more where an option's value starts with "-" ("--special-token
    -x-"): argparse reads such a value as the next option and says only that the option
    "expected one argument"; the value goes after "=". Empty where no such value was given
    (or the word after the option is one of the parser's options: the value was left out)."""
    if not message.endswith("expected one argument"):
        return ""
    names = message.split(": ", 1)[0].removeprefix("argument ").split("/")
    for option, value in zip(given, given[1:]):
        known = value.split("=")[0] in parser._option_string_actions
        if option in names and value.startswith("-") and value != "--" and not known:
            from .output import shell_option

            return f" (a value that starts with - goes after =: {shell_option(option, value)})"
    return ""


class Program(argparse.ArgumentParser):
    """A parser that keeps the words it parses, for its errors to say more than argparse's:
    at the top level, a file given where a command goes is said to be one."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(args) if args is not None else sys.argv[1:]
        return super().parse_known_args(args, namespace)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        # subtle: argparse says an unknown option after a command under the program's usage,
        # which lists no option of the command; the command's own usage does.
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            teller = self._command_parser(getattr(parsed, "command", None)) or self
            teller.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _command_parser(self, name: str | None) -> argparse.ArgumentParser | None:
        """The parser of the command ``name`` (None: no command was given)."""
        if name is None:
            return None
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                found: argparse.ArgumentParser | None = action.choices.get(name)
                return found
        return None

    def error(self, message: str) -> NoReturn:
        given = getattr(self, "_given", [])
        first = next((a for a in given if not a.startswith("-")), None)
        command = "argument COMMAND: invalid choice" in message  # not an option's choice
        if command and first is not None and os.path.exists(first):
            shown = shlex.quote(first)
            message += (
                f"; {first!r} is a file: open it in the app with bpe-studio gui {shown}, or "
                f"train on it with bpe-studio train {shown} --vocab-size N --out DIR"
            )
        # subtle: a file whose name starts with "-" is read as an option, and argparse says
        # only that a file is missing or that the word is not an option: say how to name it.
        # After "--" every word is a file: a dashed name there is read as one, and an option
        # there is not read as one.
        cut = given.index("--") if "--" in given else len(given)
        dashed = [
            a
            for a in given[:cut]
            if a.startswith("-") and a != "-" and a not in self._option_string_actions
        ]
        files = [a for a in dict.fromkeys(dashed) if os.path.exists(a)]
        if files:
            from .output import shell_word  # as the shell reads it back: $'-\xff' for a byte

            message += (
                f" ({', '.join(map(shell_word, files))}: a word that starts with - is read as "
                f"an option; name the file as {' '.join(shell_word('./' + a) for a in files)})"
            )
        message += late_hint(self, given) + dash_value_hint(self, message, given)
        super().error(message)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # subtle: argparse drops a write that fails (so --help > /dev/full exited 0, silent
        # when Python writes through, PYTHONUNBUFFERED); kept here for exit() to report.
        if not message:
            return
        try:
            (file or sys.stderr).write(message)
        except AttributeError:
            pass  # a closed stream (None), as argparse leaves it
        except OSError as e:
            self._unwritten = e

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:  # after --help or --version
            status = _printed(getattr(self, "_unwritten", None))
        super().exit(status, message)


def _printed(error: OSError | None) -> int:
    """The exit status once what ``--help`` or ``--version`` printed (``error``: its write
    failed) is flushed to standard output: 0; or 1 with the line any output error gives
    (``> /dev/full`` exited 0, silent); or 141 when its reader had gone, as for a command's
    data."""
    from .output import EXIT_CLOSED_PIPE, STDOUT, fail, os_error_message

    if sys.stdout is None:
        return 0  # closed (>&-): argparse printed to stderr instead
    try:
        if error is None:
            sys.stdout.flush()
    except OSError as e:
        error = e
    if error is None:
        return 0
    # subtle: point stdout at /dev/null, or the flush at exit fails again, loudly (exit 120).
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    if isinstance(error, BrokenPipeError):
        return EXIT_CLOSED_PIPE
    return fail(os_error_message(STDOUT, error))


class Command(Program):
    """A subcommand whose options ``options(self)`` declares the first time it parses or
    shows its help (or its ``actions`` are read), so that what they need is imported only
    for the command that runs."""

    def __init__(self, *args: Any, options: Options | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._options = options

    def declare(self) -> Command:
        """Declare the options, once; this parser."""
        options, self._options = self._options, None
        if options is not None:
            options(self)
        return self

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        return super(Command, self.declare()).parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        # subtle: an option of many values takes the positional after it too ("inspect
        # --corpus zh.txt o200k_base"), and argparse says only that the positional is
        # missing; say where it went.
        given = getattr(self, "_given", [])
        if "the following arguments are required" in message:
            greedy = [a for a in given if a == "--corpus"]
            if greedy and given and not given[-1].startswith("-"):
                message += (
                    f" ({greedy[-1]} takes every word after it, {given[-1]!r} too: give "
                    f"{message.rsplit(': ', 1)[-1]} before {greedy[-1]})"
                )
        super().error(message)

    def format_help(self) -> str:
        return super(Command, self.declare()).format_help()

    def format_usage(self) -> str:
        return super(Command, self.declare()).format_usage()


def _add_command(
    sub: argparse._SubParsersAction, name: str, options: Options | None = None
) -> argparse.ArgumentParser:
    """The subcommand ``name`` with its help and description (``COMMANDS``), and the
    ``options`` that declare its arguments when it is used."""
    help_text, description = COMMANDS[name]
    streams = STREAMS_STDOUT if name == "inspect" else STREAMS
    return sub.add_parser(
        name, help=help_text, description=f"{description} {streams}", options=options
    )


def _source_help() -> str:
    from ..core.formats.base.preset_table import PRESETS

    return (
        f"a preset ({', '.join(PRESETS)}; preset:NAME where a file or folder NAME is here "
        "too), a directory holding vocab.json + merges.txt (as "
        "'train' writes them) or GPT-2's gpt2_vocab.json + gpt2_merges.txt, such a vocab.json "
        "itself (its merges file beside it), a Hugging Face tokenizer.json (byte-level BPE "
        "exactly; WordPiece, Unigram, SentencePiece-style BPE and byte-level files not read "
        "exactly here through the tokenizers library), a .tiktoken rank file (plain or .gz; "
        "or the directory holding one), or a "
        "model on the Hugging Face Hub as hf:ORG/NAME[@REVISION] (its tokenizer.json, "
        "downloaded into the Hub's cache once, then read from there; gated models need `hf "
        "auth login`)"
    )


def _add_tokenizer(command: argparse.ArgumentParser) -> None:
    command.add_argument("--tokenizer", required=True, metavar="SRC", help=_source_help())


def _source_pattern_help() -> str:
    return (
        f"pre-tokenization pattern ({_pattern_names()} or a regex) for sources that carry "
        "none: GPT-2 files (default gpt2) and a .tiktoken file without its NAME.tiktoken.json "
        "beside it. A tokenizer.json, a rank file with its NAME.tiktoken.json or a preset keeps "
        "its own, and a different one is an error"
    )


def _add_records(command: argparse.ArgumentParser) -> None:
    from .inputs import RECORDS_CHOICES

    command.add_argument(
        "--records",
        choices=RECORDS_CHOICES,
        default=None,
        help="what the inputs hold, whatever their names say: jsonl (JSON Lines) or parquet "
        "records, whose text field is a document each; none: plain text. Needed for "
        "standard input and pipes of JSON Lines (zstdcat x.jsonl.zst | ... - --records "
        "jsonl); without it, a file's name says (.jsonl, .ndjson, .parquet)",
    )
    command.add_argument(
        "--text-field",
        type=typed_text,
        metavar="NAME",
        default=None,
        help="the field of the records that holds their text (default: text)",
    )


def _add_train(sub: argparse._SubParsersAction) -> None:
    _add_command(sub, "train", _train_options)


def _train_options(train: argparse.ArgumentParser) -> None:
    from ..core.train.trainer import ENGINES

    special = _default_special_token()
    train.add_argument(
        "corpus",
        metavar="CORPUS",
        nargs="+",
        help="UTF-8 text file(s), or - for standard input (pipes are read too; compressed "
        "or Parquet bytes are recognised); globs (quote them: 'shards/part-*.txt.gz'), "
        "compressed files (.gz .bz2 .xz .zst), URLs (s3://, gs://, hf://datasets/..., "
        "https://, with their fsspec package), and records: each record's text field in "
        ".jsonl and .parquet files is one document. Several are counted together as one "
        "corpus; no pre-token crosses two files or two records",
    )
    _add_records(train)
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
        type=_whole_number,  # (any number: the core's one rule words what is too small)
        required=True,
        metavar="N",
        help="size of the vocabulary to learn: 256 byte tokens + the special tokens + "
        "one token per merge (fewer if the corpus runs out of pairs); from 256 + the special "
        "tokens (no merge: a byte-level tokenizer) to 2,147,483,648",
    )
    specials = train.add_mutually_exclusive_group()
    specials.add_argument(
        "--special-token",
        action="append",
        type=typed_text,
        default=[],
        metavar="TOK",
        help=f"a special token (repeatable); giving any replaces the default "
        f"{special!r}, so repeat it to keep it too",
    )
    specials.add_argument(
        "--no-special-tokens",
        action="store_true",
        help=f"train with no special token (not even {special!r})",
    )
    _add_pattern(
        train,
        f"pre-tokenization pattern: a name ({_pattern_names()}; cl100k and o200k are GPT-4's "
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
        "default: gpt2 with the gpt2 pattern, else hf, which holds the pattern (tiktoken "
        "when a tokenizer.json cannot hold it, gpt2 when neither can)",
        default=None,
    )
    train.add_argument("--force", action="store_true", help=FORCE_DIR)


def _add_encode(sub: argparse._SubParsersAction) -> None:
    _add_command(sub, "encode", _encode_options)


def _encode_options(enc: argparse.ArgumentParser) -> None:
    enc.add_argument(
        "input",
        metavar="INPUT",
        nargs="+",
        help="what train reads: UTF-8 text files, - for standard input (pipes too), globs, "
        "compressed files (.gz .bz2 .xz .zst), URLs, and .jsonl / .parquet records; the ids "
        "of each file or record follow one another, each encoded on its own. One plain text "
        "file is encoded in parallel",
    )
    _add_records(enc)
    _add_tokenizer(enc)
    specials = enc.add_mutually_exclusive_group()
    specials.add_argument(
        "--special-token",
        action="append",
        type=typed_text,
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
    _add_pattern(enc, _source_pattern_help(), None)
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
    _add_command(sub, "decode", _decode_options)


def _decode_options(dec: argparse.ArgumentParser) -> None:
    dec.add_argument("ids", metavar="IDS.npy", help=".npy file of ids, or - for standard input")
    _add_tokenizer(dec)
    _add_pattern(
        dec,
        "not needed: decoding does not use the pattern (a .tiktoken file without its "
        "NAME.tiktoken.json decodes too); one given must agree with a file that names its own",
        None,
    )
    _add_source_specials(dec, "SRC")
    dec.add_argument(
        "--out", default="-", metavar="TEXT", help="file to write (default: - for standard output)"
    )
    dec.add_argument("--force", action="store_true", help=FORCE_FILE)


def _add_source_specials(parser: argparse.ArgumentParser, source: str = "SOURCE") -> None:
    parser.add_argument(
        "--special-token",
        action="append",
        type=typed_text,
        default=None,
        metavar="TOK",
        help=f"a vocabulary entry of {source} to take as a special token (repeatable): GPT-2 "
        "files mark none, and entries that do not look like <...> or [...] must be named",
    )


def _add_convert(sub: argparse._SubParsersAction) -> None:
    _add_command(sub, "convert", _convert_options)


def _convert_options(conv: argparse.ArgumentParser) -> None:
    conv.add_argument("source", metavar="SOURCE", help=_source_help())
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
    _add_pattern(conv, _source_pattern_help(), None)
    _add_source_specials(conv)
    conv.add_argument("--force", action="store_true", help=FORCE_DIR)


def _add_inspect(sub: argparse._SubParsersAction) -> None:
    _add_command(sub, "inspect", _inspect_options)


def _inspect_options(ins: argparse.ArgumentParser) -> None:
    ins.add_argument("source", metavar="SRC", help=_source_help())
    ins.add_argument(
        "--corpus",
        nargs="+",
        action="extend",
        metavar="FILE",
        default=None,
        help="a corpus to encode and count: files, - for standard input, globs, compressed "
        "files and URLs, .jsonl and .parquet records (each record's text field one "
        "document), as train reads them",
    )
    _add_records(ins)
    ins.add_argument(
        "--no-scan",
        action="store_true",
        help="with --corpus, leave out the second pass over the text that tells the unused "
        "tokens whose bytes occur only across tokens from those absent from it (about a "
        "third of the time)",
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
    _add_pattern(ins, _source_pattern_help(), None)
    _add_source_specials(ins)
    _add_workers(ins, "encoding")


def build_parser() -> argparse.ArgumentParser:
    parser = Program(
        prog="bpe-studio",
        description="Train, inspect and watch byte-level BPE tokenizers learn. "
        "With no command, opens the desktop app.",
        epilog=STREAMS_PROGRAM,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--demo", action="store_true", help="open the app and train on the bundled sample corpus"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Command)

    gui = sub.add_parser(
        "gui",
        help="open the desktop app, optionally with a corpus loaded",
        description="Open the desktop app (what bpe-studio with no command does), with CORPUS "
        "loaded when given; --demo trains on the bundled sample corpus at once.",
    )
    gui.add_argument(
        "corpus",
        nargs="?",
        metavar="CORPUS",
        help="a corpus to load, as train reads it: a UTF-8 text file, compressed (.gz .bz2 .xz "
        ".zst), or .jsonl / .parquet records",
    )
    gui.add_argument(
        "--demo", action="store_true", help="train on the bundled sample corpus right away"
    )
    _add_train(sub)
    _add_encode(sub)
    _add_decode(sub)
    _add_convert(sub)
    _add_inspect(sub)
    return parser
