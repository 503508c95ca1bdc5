"""What Save can write, and what closing or training again would lose: one rule for each.

What it does: :func:`saveable_merges` says how many merges Save would write now (a loaded
tokenizer's, a finished or stopped run's, a paused run's so far; 0: nothing to save, Save is
off; a run asked for no merge, :func:`byte_level`, is a tokenizer to save all the same);
:func:`data_to_save` builds those files' contents; :func:`gpt2_problem` says why GPT-2
files would not bring a tokenizer back; :func:`check_save` what a Save in a format refuses or
asks about before it writes (slow on a large tokenizer: the app runs it off the GUI thread);
:func:`unsaved_merges` says how many merges of the run on screen no file holds yet (Train,
Load, a new corpus and closing the window ask before dropping them), and
:func:`unsaved_words` says so in those questions. Every part of the app asks here.
What it leaves out: writing the files (``core.formats.files.save_data``), asking the user
(the controller and the window).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.formats.base.data import TokenizerData
from ...core.formats.files import format_problem, gpt2_loss_report, holding_formats, save_losses
from ...core.train.vocab import BYTE_TOKENS
from .run_tokenizer import run_data_at
from .state import Phase, RunState

# What the questions call each format's files.
FILES_NAMED = {"gpt2": "GPT-2 files", "hf": "tokenizer.json", "tiktoken": "tiktoken files"}


def saveable_merges(state: RunState) -> int:
    """How many merges Save would write now; 0 when it has nothing to write (no tokenizer,
    no merge learned, a run still going and not paused, a load, a stop or a save under
    way)."""
    if state.loading is not None or state.stopping or state.saving is not None:
        return 0
    if state.loaded is not None:
        return max(len(state.loaded.merge_rows), 1)  # a file with no merge is still a tokenizer
    if state.phase is Phase.PAUSED:
        return state.merges_done
    result = state.result
    if state.phase in (Phase.FINISHED, Phase.STOPPED) and result is not None:
        # A run asked for no merge (the vocabulary size is the bytes and the special tokens)
        # made a byte-level tokenizer, which is a tokenizer all the same, as the command line
        # writes it.
        return max(len(result.merges), int(byte_level(state)))
    return 0


def byte_level(state: RunState) -> bool:
    """Whether the run on screen ended as asked with no merge: its vocabulary size is the
    256 bytes and the special tokens, a byte-level tokenizer."""
    result = state.result
    return (
        state.loaded is None
        and state.phase is Phase.FINISHED
        and result is not None
        and result.target_merges == 0
        and not result.stopped
    )


def data_to_save(state: RunState) -> TokenizerData | None:
    """The contents of the files Save writes now, or None (see :func:`saveable_merges`)."""
    n = saveable_merges(state)
    if n == 0:
        return None
    result = state.result
    if state.loaded is None and result is not None and state.phase is not Phase.PAUSED:
        ids = {tok: BYTE_TOKENS + i for i, tok in enumerate(result.special_tokens)}
        return TokenizerData(dict(result.vocab), list(result.merges), ids, result.pattern)
    return run_data_at(state, n)


@dataclass(frozen=True)
class Gpt2Problem:
    """Why GPT-2 files would not bring a tokenizer back as it is (``message``), and whether
    they are the only way to save it (``only_way``: no other format holds it whole, so saving
    them anyway is offered rather than refused, or the run could not be kept at all)."""

    message: str
    only_way: bool


def gpt2_problem(data: TokenizerData) -> Gpt2Problem | None:
    """Why ``vocab.json`` + ``merges.txt`` would not bring ``data`` back as it is, or None.
    The app loads them with GPT-2's pattern and takes for special tokens the entries no merge
    makes that look like ``<...>`` or ``[...]``, with no way to say otherwise (the command
    line's ``--pattern`` and ``--special-token``)."""
    lost, namable = gpt2_loss_report(data)
    if not lost:
        return None
    holders = [FILES_NAMED[f] for f in holding_formats(data)]
    said = (
        f"GPT-2 files (vocab.json + merges.txt) cannot hold this tokenizer: they "
        f"{'; they '.join(lost)}. Loaded again, it would encode text differently."
    )
    if not holders:
        remedy = (
            "Loading them back needs what they lose named: the command line's --pattern and "
            "--special-token, Python's pattern= and special_tokens=."
            if namable
            else "Loaded back, they give other ids whatever is named."
        )
        return Gpt2Problem(
            f"{said}\n\nNo other format holds it whole either: tokenizer.json and tiktoken "
            f"files refuse it. Save GPT-2 files anyway? {remedy}",
            only_way=True,
        )
    holds = "hold both." if len(holders) == 2 else "holds them."
    return Gpt2Problem(f"{said}\n\nSave it as {' or '.join(holders)}, which {holds}", False)


@dataclass(frozen=True)
class SaveCheck:
    """What Save in a format has to say before it writes, whatever the folder: why it
    refuses (``refusal``: the title and message of the error shown instead), the GPT-2
    files' problem it asks about (``gpt2``, only-way), and what the files lose
    (``losses``, asked about at once)."""

    refusal: tuple[str, str] | None = None
    gpt2: Gpt2Problem | None = None
    losses: tuple[str, ...] = ()


def check_save(data: TokenizerData, format: str) -> SaveCheck:
    """What saving ``data`` in ``format`` has to say first (:class:`SaveCheck`). Slow on a
    large tokenizer (o200k_base: about a second, docs/responsiveness.md), so the app runs it
    off the GUI thread, before the folder dialog."""
    if format == "gpt2":
        problem = gpt2_problem(data)
        if problem is not None and not problem.only_way:
            return SaveCheck(refusal=("Cannot save as GPT-2 files", problem.message))
        return SaveCheck(gpt2=problem)
    # A pattern or a special token the format cannot say is refused by the writer whatever
    # the vocabulary: said here, before a folder is asked for, where the writer said it
    # only once the user had chosen one.
    named = FILES_NAMED[format]
    problem_words = format_problem(format, data.pattern, list(data.special_tokens))
    if problem_words is not None:
        others = [FILES_NAMED[f] for f in holding_formats(data) if f != format]
        remedy = f"Save it as {' or '.join(others)}." if others else ""
        message = f"{named} cannot hold this tokenizer: {problem_words}."
        return SaveCheck(refusal=(f"Cannot save as {named}", f"{message}\n\n{remedy}".strip()))
    return SaveCheck(losses=tuple(save_losses(data, format)))


def unsaved_merges(state: RunState) -> int:
    """How many merges of the run on screen are in no file: those learned (so far, while it
    trains) past the ones a Save wrote. A loaded tokenizer came from files: none."""
    if state.loaded is not None or state.phase in (Phase.IDLE, Phase.LOADED, Phase.FAILED):
        return 0
    if state.result is not None and not state.phase.training:
        learned = len(state.result.merges)
    else:
        learned = state.merges_done
    return max(0, learned - state.saved_merges)


def unsaved_words(state: RunState, action: str) -> tuple[str, str]:
    """What the questions before ``action`` drops the run on screen say of its merges no file
    holds, and what they call them ("it", "them"): the tokenizer, or, once a Save wrote its
    first merges (a paused run saved, then resumed), how many of how many, so that "has not
    been saved" is not said of a run partly saved."""
    n = unsaved_merges(state)
    saved = state.saved_merges
    if saved == 0:
        return (
            f"The tokenizer trained on this run ({n:,} merges) has not been saved. {action} "
            "discards it.",
            "it",
        )
    return (
        f"{n:,} of the {n + saved:,} merges of the tokenizer trained on this run are in no "
        f"file (a Save wrote its first {saved:,}). {action} discards those {n:,}.",
        "them",
    )
