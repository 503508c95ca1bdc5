"""The run's tokenizer at step k: the one place the app builds it from the state.

What it does: :func:`run_tokenizer_at` captures, on the GUI thread and cheaply (references,
no copies), how to build the tokenizer of the run on screen after its first ``k`` merges: the
bytes and special tokens, the first ``k`` merges of the record, the run's pattern; a loaded
tokenizer's is its own, cut to ``k`` merges. The build itself runs where the returned function
is called, in a background job: the run's tokenizer is built once and each step cut from it
(``run_steps``). :func:`run_data_at` gives the same as the files Save writes.
:func:`run_name` is what the pages' columns, legends and exported files call it.

subtle: the builder reads the record after it was captured, in another thread. That is safe
because a run's record only ever grows (appended to, never edited) and a new run gets a new
list, so its first ``k`` rows stay this run's.
What it leaves out: caching what was built (``tokenizer_source``, ``tokenizer_cache``) and
choosing ``k`` (the views follow the timeline's step).
"""

from __future__ import annotations

from collections.abc import Callable

from ...core import Tokenizer
from ...core.formats.base.data import TokenizerData
from ...core.train.vocab import BYTE_TOKENS
from .file_names import tokenizer_name
from .run_steps import StepBuild
from .state import Phase, RunState
from .tokenizer_source import TokenizerSource

RUN_LABEL = "The run's tokenizer"  # the pickers' entry: whatever the run on screen is


def run_name(state: RunState) -> str:
    """What the Report's columns and the Vocabulary lab's CSV call the run's tokenizer: the
    pickers' entry, and which tokenizer it is now, as the editor's heading names it (the
    loaded file by its model's name, a trained run by its corpus), so an exported file says
    what it measured. The pickers' entry stays short: it is one entry whatever the run is."""
    if state.loaded is not None:
        return f"{RUN_LABEL}: {state.loaded_name or tokenizer_name(state.loaded.vocab_file)}"
    if state.run_corpus is not None:
        return f"{RUN_LABEL}: trained on {state.run_corpus.name}"
    return RUN_LABEL


def training_label(k: int, made: int) -> str:
    """What the editor calls the run's tokenizer at step ``k`` while ``made`` merges are made
    (one wording for the controller's live rebuilds and the editor's steps back)."""
    if k >= made:
        return f"Tokenizer: training, {k:,} merges so far"
    return f"Tokenizer: training, {k:,} of {made:,} merges so far"


def paused_label(k: int, made: int) -> str:
    """What the editor calls the run's tokenizer at step ``k`` while the run is paused after
    ``made`` merges."""
    if made == 0:
        return "Tokenizer: bytes only, paused before the first merge"
    if k >= made:
        return f"Tokenizer: paused at merge {made:,}"
    return f"Tokenizer: {k:,} of {made:,} merges, paused at merge {made:,}"


def source_label(state: RunState, source: TokenizerSource, cut: bool = False) -> str:
    """What ``source`` is called with the run in ``state``: its own label, except that a
    tokenizer of a run still training counts the merges the run has made now, and one of a
    paused run says it is paused. ``cut``: the source is shown cut to a step, which the
    caller names: the label then names the run's merges only (a source built at merge
    105,769 and cut to step 8,342 is not called "105,769 of 108,017 merges").

    subtle: a source's label is written when it is made, and neither a pause nor more merges
    make one while the step stays (the timeline back at an earlier step), so the word
    "training" would outlast a pause and "of N merges so far" the run's next merges; the
    state, which alone holds the phase and the merges made, decides here instead. A run's
    sources while it trains or is paused are those made while it trained (a finished or
    stopped run shows a tokenizer of its result, under that result's label; one made while
    it trained, still painted while the result's is worked out, or a failed run's last, is
    named by its merges, no longer "so far")."""
    if source.run_id != state.run_id:
        return source.label
    # subtle: the merges the views show; the record may be ahead of them, and the label
    # would then name more merges than the timeline beside it.
    made = state.published
    k = made if cut else source.merge_count
    if state.phase is Phase.PAUSED:
        return paused_label(k, made)
    if state.phase is Phase.MERGING:
        return training_label(k, made)
    ended = state.phase in (Phase.FINISHED, Phase.STOPPED) and source is not state.shown
    if ended or state.phase is Phase.FAILED:
        return f"Tokenizer: {k:,} merges" if k >= made else f"Tokenizer: {k:,} of {made:,} merges"
    return source.label


def run_tokenizer_at(state: RunState, k: int) -> Callable[[], Tokenizer]:
    """How to build the run's tokenizer after its first ``k`` merges (clamped to the merges
    recorded); call the result off the GUI thread."""
    loaded = state.loaded
    if loaded is not None:
        full = loaded.tokenizer
        return lambda: full.truncated(k) if 0 <= k < len(full.merges) else full
    record = state.record
    pattern = state.settings.pattern if state.settings is not None else "gpt2"
    n = max(0, min(k, len(record)))
    # Cut from the run's tokenizer built once (run_steps): a replay asks for every step.
    return StepBuild(state.steps, record, state.base_vocab, state.special_tokens, pattern, n)


def run_data_at(state: RunState, k: int) -> TokenizerData:
    """The files' contents of the run's tokenizer after its first ``k`` merges (what Save
    writes of a run), built here."""
    loaded = state.loaded
    if loaded is not None:
        return run_tokenizer_at(state, k)().to_data()
    specials = state.special_tokens
    rows = state.record[: max(0, min(k, len(state.record)))]
    vocab = dict(state.base_vocab)
    vocab.update((s.new_id, s.left + s.right) for s in rows)
    merges = [(s.left, s.right) for s in rows]
    ids = {tok: BYTE_TOKENS + i for i, tok in enumerate(specials)}
    pattern = state.settings.pattern if state.settings is not None else "gpt2"
    return TokenizerData(vocab, merges, ids, pattern)
