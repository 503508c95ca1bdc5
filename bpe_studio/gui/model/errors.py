"""How the app words a failure: one readable line, naming the file or value where one is known.

What it does: :func:`describe_error` turns an error from the core into a sentence (an
``OSError`` as "PATH: reason"; any other error's message, capitalised unless it starts with a
name); :func:`describe_job_error` words a background job's failure: the core's one line for bad
input (``OSError``, ``ValueError``), a pool whose worker process died in the CLI's words,
else the error's class too, since an unexpected failure should say what kind it was;
:func:`on_one_line` puts a dialog's paragraphs on a status line. Every part of the app that
shows a failure asks here.
What it leaves out: where the line is shown (a dialog, a status line, a note).
"""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool

from ...core.io.worker_pool import ended_abruptly


def describe_error(error: BaseException) -> str:
    """One readable sentence for an error from the core; it names the file where one is known.

    >>> describe_error(FileNotFoundError(2, "No such file or directory", "/tmp/x.txt"))
    '/tmp/x.txt: No such file or directory'
    >>> describe_error(ValueError("vocabulary size 3 is too small"))
    'Vocabulary size 3 is too small'
    """
    if isinstance(error, OSError) and error.filename and error.strerror:
        return f"{os.fspath(error.filename)}: {error.strerror}"
    text = str(error) or type(error).__name__
    # A sentence starts with a capital; a name (a Hub model "acme/model: ...") keeps its own.
    first = text.split(" ", 1)[0]
    return text[0].upper() + text[1:] if first.isalpha() else text


def describe_job_error(error: BaseException) -> str:
    """A background job's failure: the core's one line for bad input (OSError, ValueError:
    they name their file or value), a worker process that died, else the error's class too.

    >>> describe_job_error(KeyError("merges"))
    "KeyError: 'merges'"
    """
    if isinstance(error, BrokenProcessPool):
        # subtle: its own message ("terminated abruptly while the future was running or
        # pending") says neither why nor what to do; the pool is gone, the next job makes one.
        return f"{ended_abruptly('A worker process')}; asking again starts new ones"
    if isinstance(error, (OSError, ValueError)):
        return describe_error(error)
    return f"{type(error).__name__}: {error}"


def on_one_line(message: str) -> str:
    """A message of paragraphs (a dialog's, split by blank lines) for a one-line label: each
    paragraph ends its sentence, so they do not run together.

    >>> on_one_line("Could not load x.json: not valid JSON (line 1)\\n\\nGPT-2 is shown.")
    'Could not load x.json: not valid JSON (line 1). GPT-2 is shown.'
    """
    parts = [p.strip().replace("\n", " ") for p in message.split("\n\n") if p.strip()]
    ended = [p if p.endswith((".", "!", "?", "…")) else f"{p}." for p in parts[:-1]]
    return " ".join([*ended, *parts[-1:]])


def named_once(label: str, message: str) -> str:
    """``message``, why the pick ``label`` failed, naming the pick once: as it is where it
    names the pick already (a Hub model's words begin with its name, or with its source,
    ``hf:`` and the name, as the command line was given it), else after the label.

    >>> named_once("acme/x", "hf:acme/x: its tokenizer.json in the cache is empty")
    'hf:acme/x: its tokenizer.json in the cache is empty'
    >>> named_once("x.json", "not valid JSON")
    'x.json: not valid JSON'
    """
    if message.startswith((label, f"hf:{label}")):
        return message
    return f"{label}: {message}"
