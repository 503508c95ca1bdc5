"""The ``bpe-studio`` command.

- ``bpe-studio`` / ``bpe-studio gui [CORPUS] [--demo]`` / ``bpe-studio --demo``: the desktop app.
- ``bpe-studio train CORPUS|- [CORPUS ...] --vocab-size N [--special-token TOK ... |
  --no-special-tokens] [--pattern NAME|REGEX] [--workers K] [--engine E] --out DIR|-
  [--format F] [--force]``
- ``bpe-studio encode INPUT|- --tokenizer SRC [--pattern NAME|REGEX] [--special-token TOK ... |
  --no-special-tokens] --out IDS.npy|- [--workers K] [--force]``
- ``bpe-studio decode IDS.npy|- --tokenizer SRC [--out TEXT|-] [--force]``
- ``bpe-studio convert SRC --to gpt2|hf|tiktoken --out DIR|- [--name NAME] [--force]``
- ``bpe-studio inspect SRC [--corpus FILE ...] [--against SRC2] [--json]``

SRC is a preset name (preset:NAME where a path NAME exists too), a GPT-2 directory or
vocab.json, a tokenizer.json (any kind), a .tiktoken file, or a Hugging Face Hub model as
hf:ORG/NAME[@REVISION] (fetched into the Hub's cache, ``sources.fetch_hub``).

Headless commands report progress and a summary on stderr; stdout carries only data. Any
error is one readable line on stderr and a non-zero exit code (2 for a bad option value, 130
after Ctrl-C at any moment, start-up included; 141 when standard output was closed early),
never a traceback. A closed or broken stderr costs nothing but the messages (``streams``).
Every ``--out`` follows one rule (``output``). This module imports nothing heavy: the
commands, the core and its dependencies are imported where used, so ``--help`` and
``--version`` are quick and an interrupt while they load is one line too. Modules:
``parser`` (options and help), ``train``, ``encode`` (and decode), ``convert``, ``sources``
(what ``--tokenizer`` names), ``inputs`` (standard input and pipes read as files),
``output`` (errors, the output rule), ``streams`` (standard error), ``termination``
(SIGTERM).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: see bpe_studio/__init__.py
if TYPE_CHECKING:
    from collections.abc import Sequence

EXIT_INTERRUPTED = 130  # as output.EXIT_INTERRUPTED, which this module does not import
EXIT_CLOSED_PIPE = 141  # as output.EXIT_CLOSED_PIPE: its reader had gone


def _interrupted() -> int:
    """The one line for Ctrl-C, wherever it came (``output.fail`` may not be imported yet)."""
    try:
        from .terminal import erase  # light: the standard library only

        print(f"{erase(sys.stderr)}bpe-studio: error: interrupted", file=sys.stderr)
    except (OSError, ValueError, AttributeError, ImportError):
        pass
    return EXIT_INTERRUPTED


def program() -> int:
    """The ``bpe-studio`` program (and ``python -m bpe_studio``): :func:`main` in a process
    that ends when it returns, so a command may leave process-wide state as it is (see
    ``encode``). Ctrl-C at any moment is one line and exit 130."""
    try:
        # subtle: no command does linear algebra, but importing NumPy starts OpenBLAS's
        # threads, which spin for a while on the cores that the tokenizer's building and the
        # workers need (docs/patterns.md, round 21): one BLAS thread unless the user chose.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        from .streams import guard_stderr

        guard_stderr()
        code = main(exiting=True)
        if code in (0, EXIT_CLOSED_PIPE):
            # One a finalizer dropped after the command's last check ends it as one landing
            # now (also where its reader had gone: Ctrl-C was pressed all the same); a command
            # that failed or was interrupted has said so already, once.
            from ..core.io.interrupts import raise_dropped

            raise_dropped()
    except KeyboardInterrupt:
        code = _interrupted()
    from .termination import exit_code

    ended = exit_code()
    return ended if ended is not None and code == EXIT_INTERRUPTED else code


# --workers beyond this many per core is said (a hostile-input audit: --workers 1000 started
# 1,001 processes on 2 cores, 8x slower, each holding its own memory, with no word). A few
# more than the cores is a user's choice (a core shared with other work); this many is a slip.
_WORKERS_PER_CORE_SAID = 16


def _note_many_workers(workers: object) -> None:
    if not isinstance(workers, int):
        return
    from ..core.corpus.counting import available_cores

    cores = available_cores()
    if workers > _WORKERS_PER_CORE_SAID * cores:
        print(
            f"note: --workers {workers:,} on {cores:,} core{'s' if cores > 1 else ''}: the "
            "processes beyond the cores only wait for one, each with its own memory; leave "
            "--workers out for one per core",
            file=sys.stderr,
        )


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    from .parser import build_parser

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.exiting = exiting
    if args.command in (None, "gui"):
        from ..gui.app import main as gui_main

        return gui_main(argv)
    if exiting:
        from ..core.io.interrupts import keep_dropped
        from .termination import terminate_as_interrupt

        terminate_as_interrupt()
        keep_dropped()  # the process ends with the command: its hook may change
    if args.command != "encode":  # (which starts no more workers than cores)
        _note_many_workers(getattr(args, "workers", None))
    from ..core.corpus.counting import TrainingCancelled
    from .output import EXIT_ERROR, CliError, fail, in_cli_words, os_error_line, out_of_memory
    from .parser import late_hint, refuse_empty_special_token

    def refused(message: str, code: int = EXIT_ERROR) -> int:
        # An option written after "--" was read as a file: say so with the error it gave.
        return fail(message + late_hint(parser, argv), code)

    try:
        refuse_empty_special_token(args)
        if args.command == "train":
            from .train import cmd_train

            return cmd_train(args)
        if args.command == "convert":
            from .convert import cmd_convert

            return cmd_convert(args)
        if args.command == "inspect":
            from .inspect import cmd_inspect

            return cmd_inspect(args)
        from .encode import cmd_decode, cmd_encode

        return cmd_encode(args) if args.command == "encode" else cmd_decode(args)
    except CliError as e:
        return refused(str(e), e.code)
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED)
    except TrainingCancelled:
        return fail("cancelled", EXIT_INTERRUPTED)
    except Exception as e:
        if isinstance(e, MemoryError):
            return fail(out_of_memory(e, args))
        # subtle: imported here, not with the module: --help stays light (its module is
        # loaded already wherever a pool broke).
        from concurrent.futures.process import BrokenProcessPool

        from ..core.io.worker_pool import ended_abruptly

        if isinstance(e, BrokenProcessPool):
            # SIGTERM sent to the process group (as ``timeout`` sends it) ends the workers
            # too: the pool then breaks under the Ctrl-C the parent is handling. Only that:
            # any other error after a SIGTERM is its own (a bug stays a traceback).
            from .termination import terminated

            if terminated:
                return fail("interrupted", EXIT_INTERRUPTED)
            # (the kernel's out-of-memory killer ends a worker so, as does a user's kill)
            return fail(ended_abruptly("a worker process"))
        if not isinstance(e, (OSError, ValueError)):
            raise
        # FileNotFoundError, CorpusError, TokenizerFileError, bad vocab sizes: all name
        # their file or value in the message already.
        return refused(os_error_line(e) if isinstance(e, OSError) else in_cli_words(str(e)))
