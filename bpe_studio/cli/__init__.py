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

SRC is a preset name, a GPT-2 directory or vocab.json, a tokenizer.json (any kind), a
.tiktoken file, or a Hugging Face Hub model as hf:ORG/NAME[@REVISION] (fetched into the Hub's
cache, ``sources.fetch_hub``).

Headless commands report progress and a summary on stderr; stdout carries only data. Any
error is one readable line on stderr and a non-zero exit code (2 for a bad option value, 130
after Ctrl-C, 141 when standard output was closed early), never a traceback. Every ``--out``
follows one rule (``output``). Modules: ``parser`` (options and help), ``train``, ``encode``
(and decode), ``convert``, ``sources`` (what ``--tokenizer`` names), ``inputs`` (standard
input and pipes read as files), ``output`` (errors, the output rule).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..core import TrainingCancelled
from .output import EXIT_INTERRUPTED, CliError, fail, os_error_line
from .parser import build_parser


def program() -> int:
    """The ``bpe-studio`` program (and ``python -m bpe_studio``): :func:`main` in a process
    that ends when it returns, so a command may leave process-wide state as it is (see
    ``encode``)."""
    # subtle: no command does linear algebra, but importing NumPy starts OpenBLAS's threads,
    # which spin for a while on the cores that the tokenizer's building and the workers need
    # (docs/patterns.md, round 21): one BLAS thread unless the user chose otherwise.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    return main(exiting=True)


def main(argv: Sequence[str] | None = None, *, exiting: bool = False) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.exiting = exiting
    if args.command in (None, "gui"):
        from ..gui.app import main as gui_main

        return gui_main(argv)
    try:
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
        return fail(str(e), e.code)
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED)
    except TrainingCancelled:
        return fail("cancelled", EXIT_INTERRUPTED)
    except (OSError, ValueError) as e:
        # FileNotFoundError, CorpusError, TokenizerFileError, bad vocab sizes: all name
        # their file or value in the message already.
        return fail(os_error_line(e) if isinstance(e, OSError) else str(e))
