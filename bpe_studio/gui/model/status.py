"""The words of the status line: a run's progress, its outcome, what was loaded.

What it does: :func:`status_text` writes the line from the :class:`~.state.RunState` (phase,
amounts, times, the estimated time left, the outcome), :func:`nothing_learned` says why a run
that ended without a merge learned nothing, and :func:`format_duration` / :func:`format_bytes`
write amounts the way every view shows them. Plain Python: the panel shows the line, the
controller words its notices with the same functions, tests read them without a window.
What it leaves out: showing the line (``views.controls``) and messages that last until the next
action (``app_model.notice``).
"""

from __future__ import annotations

from ...core.corpus.cluster import LOCAL
from ...core.corpus.records import NO_PAIR
from ...core.pretokenization.names import shown_pattern
from ...core.train.vocab import BYTE_TOKENS
from .file_names import named_file, tokenizer_name
from .saving import byte_level, unsaved_merges
from .state import Phase, RunState, TrainingResult

COMPILING_TEXT = "Compiling the merge engine (first run only)…"
# A custom regex longer than this is called "custom" on the status line (its merges would
# be cut off the line's end).
_PATTERN_SHOWN = 40


def _compiled_when(text: str) -> str:
    """``text`` (which says "(first run only)"), or where numba has no folder to cache in,
    saying instead that each run compiles (as the command line does)."""
    # subtle: imported here: numba is loaded once a compile is under way, not at start.
    from ...core.io.kernel_loader import FIRST_RUN, NO_CACHE
    from ...core.io.numba_cache import usable_cache_dir

    return text.replace(FIRST_RUN, NO_CACHE) if usable_cache_dir() is None else text


def compiling_text() -> str:
    """:data:`COMPILING_TEXT`, with how often it compiles (:func:`_compiled_when`)."""
    return _compiled_when(COMPILING_TEXT)


def stopping_text(state: RunState) -> str:
    """The status line while a stop is on its way: what holds it up when the merge engine's
    first compile does (the worker sees the stop only once the compile is over)."""
    if compiling_shown(state):
        return _compiled_when("Stopping once the merge engine is compiled (first run only)…")
    return "Stopping…"


def compile_wait_line() -> str:
    """The one line on stderr while the app, its window closed, waits for the merge engine's
    first compile to end before exiting (the compile cannot be stopped halfway)."""
    return _compiled_when(
        "bpe-studio: waiting for the merge engine to finish compiling before exiting "
        "(first run only)…"
    )


def format_duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _times(state: RunState, merge_seconds: float | None = None) -> str:
    """The run's time so far (pauses left out) and, once merging has begun, how much of it
    was merging: "0:25 elapsed, 0:14 of it merging"."""
    text = f"{format_duration(state.elapsed)} elapsed"
    if merge_seconds is None and state.merge_start is not None:
        merge_seconds = state.elapsed - state.merge_start
    if merge_seconds is not None:
        text += f", {format_duration(merge_seconds)} of it merging"
    return text


def cluster_start_text(cluster: str) -> str:
    """What the run waits for before a cluster counts (a local one starting, a scheduler
    being reached): seconds in which nothing else moves."""
    if cluster == LOCAL or cluster.startswith(LOCAL + ":"):
        workers = cluster.partition(":")[2]
        of = f" of {workers} worker{'s' if workers != '1' else ''}" if workers else ""
        return f"Starting a local Dask cluster{of}…"
    return f"Connecting to the Dask scheduler {cluster}…"


def stored_amounts(state: RunState) -> str:
    """Bytes counted so far of the corpus's total, as stored: "1.2 MB / 4.4 MB", with
    "compressed" when the files are (the count is of their compressed bytes)."""
    amounts = f"{format_bytes(state.bytes_done)} / {format_bytes(state.bytes_total)}"
    source = state.corpus_source
    stored = source.stored_bytes if source is not None else ""
    return f"{amounts} {stored}" if stored else amounts


def compiling_shown(state: RunState) -> bool:
    """The merge engine's first compile holds the run up now: the status and the bar show
    it as a phase of its own (it may outlast the counting)."""
    running = (state.resume_to or Phase.MERGING) if state.phase is Phase.PAUSED else state.phase
    return running is Phase.PRE_TOKENIZING and state.compiling


def _running_text(state: RunState, phase: Phase) -> str:
    head = "Paused · " if state.phase is Phase.PAUSED else ""
    if compiling_shown(state):
        return f"{head}{compiling_text()} · {_times(state)}"
    if phase is Phase.PRE_TOKENIZING:
        cluster = state.settings.cluster if state.settings is not None else None
        if cluster and state.counting_on is None:  # the cluster is not counting yet
            return f"{head}{cluster_start_text(cluster)} · {_times(state)}"
        said = state.counting_on or ""
        if said.startswith("compiling ") and state.bytes_done <= 0:
            # The pre-tokenizer's first compile (the core's word for it), before any text is
            # counted: first, where a narrow window's line keeps it ("Pre-tokenizing… · 9 s"
            # said nothing of why nothing moved).
            return f"{head}{said[0].upper()}{said[1:]}… · {_times(state)}"
        if state.bytes_total <= 0:  # the size is not known yet
            return f"{head}Pre-tokenizing… · {_times(state)}"
        if state.bytes_done >= state.bytes_total:
            size = format_bytes(state.bytes_total)
            source = state.corpus_source
            if source is not None and source.stored_bytes:
                size += f" {source.stored_bytes}"
            return f"{head}Pre-tokenized {size}: counting pairs… · {_times(state)}"
        # On a cluster, where it counts comes last: the amounts are what a narrow window keeps.
        where = (state.counting_on or "").removeprefix("pre-tokenizing ")
        return f"{head}Pre-tokenizing: {stored_amounts(state)} · {_times(state)}" + (
            f" · {where}" if where else ""
        )
    done, target = state.published, state.target_merges
    # subtle: no rate while paused. Nothing merges then, and the clock's last samples are
    # the merges drained as the pause came, at the pause's frozen time: "0 merges/s" or
    # "180,870 merges/s" on the same corpus.
    rate = "" if head else f" · {state.rate:,.0f} merges/s"
    text = f"{head}Merging: {done:,} / {target:,}{rate} · {_times(state)}"
    if state.remaining is not None and target > done:
        text += f" · ~{format_duration(state.remaining)} left"
    return text


def nothing_learned(state: RunState) -> str:
    """Why a run that ended without a merge learned nothing, in words."""
    result = state.result
    assert result is not None
    if result.stopped:
        return "Stopped before the first merge: nothing was learned, so there is nothing to save"
    source = state.run_corpus
    name = source.name if source is not None else "the corpus"
    return f"Nothing was learned from {name}: {result.nothing_to_merge or NO_PAIR}"


def trained_with(result: TrainingResult) -> str:
    """The pattern and special tokens a run trained with, as a loaded tokenizer's status
    names its own: the inputs may have changed since, for the next run.

    >>> trained_with(TrainingResult({}, [], ("<s>",), 0, False, 0.0, "o200k"))
    'o200k pattern, special token <s>'
    """
    shown = shown_pattern(result.pattern)
    pattern = shown if len(shown) <= _PATTERN_SHOWN else "custom"
    specials = result.special_tokens
    if not specials:
        return f"{pattern} pattern, no special tokens"
    return f"{pattern} pattern, special token{'s' if len(specials) > 1 else ''} " + ", ".join(
        specials
    )


def byte_level_text(state: RunState) -> str:
    """What a run asked for no merge made, in the command line's words."""
    result = state.result
    assert result is not None
    n = len(result.special_tokens)
    return (
        f"Done: a byte-level tokenizer, no merge asked for (vocabulary size "
        f"{len(result.vocab):,} = {BYTE_TOKENS} bytes + {n:,} special token"
        f"{'' if n == 1 else 's'}) · {trained_with(result)}"
    )


def replay_text(state: RunState) -> str:
    """What the status line says while a replay animates the run, or waits paused."""
    if state.replay_paused:
        return (
            f"Replay paused at step {state.step:,} of {state.published:,} · Resume goes on, "
            "Skip jumps to the end"
        )
    return (
        f"Replaying the run: step {state.step:,} of {state.published:,} · Skip jumps to the "
        "end, Pause (Alt+P) stops it"
    )


def _loaded_file(state: RunState) -> str:
    """The loaded file by its model's name (and its own, where they differ)."""
    assert state.loaded is not None
    own = state.loaded.vocab_file.name
    name = state.loaded_name or tokenizer_name(state.loaded.vocab_file)
    return name if name == own else f"{name} ({own})"


def _kept(state: RunState) -> str:
    """What a stopped run's line says of its merges: Save keeps them, unless a Save (of the
    paused run) already wrote every one; sent to Save then, the user saved for nothing."""
    return "all saved" if unsaved_merges(state) == 0 else "Save keeps them"


def status_text(state: RunState, new_corpus: bool = False) -> str:
    """The status line for the state: the run's progress, its outcome, or what was loaded.
    ``new_corpus``: a corpus was opened after the run ended (its outcome is no longer news).
    While a replay animates an ended run, the line says so (the outcome comes back after)."""
    if state.saving is not None:
        news = state.saving
        if news.choosing:
            # Behind the folder dialog "Getting ready" said the app was busy, not waiting.
            return f"Choose a folder to save {news.files} into…"
        if news.folder is None:
            return f"Getting ready to save {news.files}…"
        return f"Saving {news.files} into {news.folder}…"
    phase = state.phase
    if state.replaying and not phase.training and not new_corpus:
        result = state.result
        if phase is Phase.STOPPED and result is not None and result.stopped and result.merges:
            # A stop is news the user just made (Stop pressed during a replay): it stays on
            # the line, where a finished run's "Done" waits for the replay's end.
            return (
                f"Stopped after {len(result.merges):,} of {result.target_merges:,} merges, "
                f"{_kept(state)} · {replay_text(state)}"
            )
        return replay_text(state)
    if state.loading is not None:
        vocab_file, merges_file = state.loading
        if vocab_file == merges_file:
            return f"Loading {named_file(vocab_file)}…"
        return f"Loading {named_file(vocab_file)} and {merges_file.name}…"
    if new_corpus and state.corpus_source is not None:
        return f"Ready to train on {state.corpus_source.name}"
    if state.load_error is not None:
        return f"Loading failed: {state.load_error.splitlines()[0]}"
    if phase.training:
        if state.stopping:
            return stopping_text(state)
        running = (state.resume_to or Phase.MERGING) if phase is Phase.PAUSED else phase
        return _running_text(state, running)
    result = state.result
    if phase is Phase.FAILED or (phase in (Phase.FINISHED, Phase.STOPPED) and result is None):
        return "Training failed"
    if result is not None and phase in (Phase.FINISHED, Phase.STOPPED):
        n = len(result.merges)
        if byte_level(state):
            return byte_level_text(state)
        if n == 0:
            return nothing_learned(state)
        rate = n / result.merge_seconds if result.merge_seconds > 0 else 0.0
        took = f"{_times(state, result.merge_seconds)}, {rate:,.0f} merges/s"
        settings = f" · {trained_with(result)}"
        if result.stopped:
            return (
                f"Stopped after {n:,} of {result.target_merges:,} merges ({took}); "
                f"{_kept(state)}{settings}"
            )
        if result.exhausted:
            size = state.settings.vocab_size if state.settings else len(result.vocab)
            return (
                f"Pairs ran out after {n:,} merges ({took}): vocabulary "
                f"{len(result.vocab):,} of {size:,}{settings}"
            )
        return f"Done: {n:,} merges ({took}){settings}"
    if phase is Phase.IDLE and state.corpus_source is not None:
        return f"Ready to train on {state.corpus_source.name}"
    if phase is Phase.LOADED and state.loaded is not None:
        loaded, tok = state.loaded, state.loaded.tokenizer
        specials = loaded.special_tokens
        special = f", special tokens {', '.join(specials)}" if specials else ""
        pattern = tok.pattern_name or "custom"
        return (
            f"Loaded {_loaded_file(state)}: {len(tok.vocab):,} tokens, "
            f"{len(tok.merges):,} merges, {pattern} pattern{special}"
        )
    return "Ready"
