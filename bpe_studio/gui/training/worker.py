"""The training worker: a ``QObject`` moved to a ``QThread`` that iterates the core's trainer.

What it does: :meth:`TrainingWorker.run` pre-tokenizes the corpus with
:func:`~bpe_studio.core.count_file` (reporting bytes done; the counts go to the GUI once,
for the pair chart's history), then iterates the
:class:`~bpe_studio.core.BpeTrainer`, emitting ``merged`` once per merge with the frozen
:class:`~bpe_studio.core.MergeStep`, and about every 50 ms the pairs that would be merged next.
Pause, resume and stop go through a :class:`RunControl` of ``threading.Event`` objects, checked
between merges: a queued slot would never run while ``run()`` is busy.

What it leaves out: the thread's lifecycle and the buffering of merges for the views
(``session``), and any widget.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from PySide6.QtCore import QObject, Signal, Slot

from ...core import MergeStep, TrainingCancelled, trainer_from_file
from ...core.corpus.records import nothing_to_merge
from ...core.corpus.tasks import corpus_files
from ...core.io.kernel_loader import FIRST_RUN
from ...core.pretokenization.specials import validate_special_tokens
from ...core.train import merge_engine
from ...core.train.vocab import check_vocab_size, initial_vocab
from ..model.errors import describe_error
from ..model.state import RunSettings, TrainingResult
from ..responsiveness.busy import GUI_HOLD_LIMIT
from ..responsiveness.trainer_hold import END_SHOWN_LIMIT, GuiTurn

TOP_PAIRS = 20  # pairs the trainer records before every merge (the pair chart's bars)


class RunControl:
    """Thread-safe pause / resume / stop for one run, shared by the GUI and the worker; its
    ``turn`` lets the GUI thread hold the worker between merges
    (``responsiveness.trainer_hold``)."""

    def __init__(self) -> None:
        self.cancel_event = threading.Event()
        self.turn = GuiTurn()
        # The worker pauses itself right after the merge of this rank (set from any thread:
        # rebinding an attribute is atomic).
        self.pause_after: int | None = None
        self.running = threading.Event()  # set unless paused (the worker checks it per merge)
        self.running.set()
        # Set while the worker makes no merge until resumed: it sits at its pause point, or is
        # past its last merge. The GUI may wait for it to count merges that stay counted.
        self.holding_still = threading.Event()
        # Set by the worker once the corpus is counted, before its first merge: from then a
        # merge may be under way, whatever phase the window shows yet (it switches a frame
        # later: ``session._on_merging``).
        self.merging = threading.Event()

    def pause(self) -> None:
        if not self.cancel_event.is_set():
            self.running.clear()

    def resume(self) -> None:
        self.holding_still.clear()
        self.running.set()

    def stop(self) -> None:
        self.cancel_event.set()
        self.running.set()  # wakes a paused worker so it can see the stop
        self.turn.release()

    @property
    def paused(self) -> bool:
        return not self.running.is_set()

    @property
    def stopped(self) -> bool:
        return self.cancel_event.is_set()

    def wait_while_paused(self) -> float:
        """Block (without spinning) until resumed or stopped; return the seconds waited."""
        if self.running.is_set():
            return 0.0
        start = time.perf_counter()
        self.holding_still.set()
        self.running.wait()
        self.holding_still.clear()
        return time.perf_counter() - start


class MergeBuffer:
    """Hands merges from the worker thread to the GUI thread without one event per merge.

    ``push`` runs in the worker thread (``merged`` is connected to it directly) and ``drain``
    on the GUI thread's flush timer. ``deque.append`` and ``popleft`` are atomic, so with one
    producer and one consumer no lock is needed. A queued connection instead would make the GUI
    thread take the GIL once per merge (docs/responsiveness.md).
    """

    def __init__(self) -> None:
        self._items: deque[MergeStep] = deque()
        # The builtin append itself, not a Python method around it: the signal calls it once
        # per merge, and a builtin is the cheapest thing PySide can call.
        self.push = self._items.append

    def drain(self) -> list[MergeStep]:
        items = self._items
        return [items.popleft() for _ in range(len(items))]

    def __len__(self) -> int:
        return len(self._items)


class TrainingWorker(QObject):
    """Runs one training in whatever thread it was moved to; emits, never touches widgets."""

    pretokenizing = Signal(object, object)  # bytes done, bytes total (ints, maybe > 2**31)
    # The run's PairHistory, once, before ``merging``: the best pairs before each merge,
    # filled in as the trainer merges (each row before its merge is emitted).
    recording = Signal(object)
    merging = Signal(int)  # pre-tokenization is over; how many merges vocab_size takes
    merged = Signal(object)  # MergeStep, one per merge
    # The last merge was pushed; the worker now waits for
    # ``turn.end_shown`` before it frees its working state and emits ``finished``.
    merges_done = Signal()
    paused = Signal(bool)
    status = Signal(str)  # where the counting runs (a cluster's tasks and workers)
    failed = Signal(str)
    finished = Signal(object)  # TrainingResult, or None after ``failed``

    def __init__(self, settings: RunSettings, control: RunControl) -> None:
        super().__init__()
        self.settings = settings
        self.control = control

    @Slot()
    def run(self) -> None:
        result: TrainingResult | None = None
        try:
            result = self._train()
        except TrainingCancelled:
            cfg = self.settings
            specials = tuple(cfg.special_tokens)
            result = TrainingResult(
                initial_vocab(specials), [], specials, cfg.target_merges, True, 0.0, cfg.pattern
            )
        except Exception as error:  # every failure must reach the user, and the run must end
            self.failed.emit(describe_error(error))
        finally:
            self.finished.emit(result)

    def _progress(self, done: int, total: int) -> None:
        self.pretokenizing.emit(done, total)
        if self.control.paused:
            self._pause()

    def _status(self, message: str) -> None:
        # The session learns of a compile from the core itself (merge_engine.compiling).
        if not message.startswith(merge_engine.COMPILING.removesuffix(FIRST_RUN)):
            self.status.emit(message)

    def _pause(self) -> float:
        self.paused.emit(True)
        waited = self.control.wait_while_paused()
        self.paused.emit(False)
        return waited

    def _train(self) -> TrainingResult:
        cfg, control = self.settings, self.control
        if control.stopped:  # stopped before the thread started
            raise TrainingCancelled("training stopped before it started")
        specials = validate_special_tokens(cfg.special_tokens)
        check_vocab_size(cfg.vocab_size, specials)  # before the corpus is read, not after
        # Counting, and (for a big corpus) loading the compiled merge engine meanwhile; the
        # session asks the core whether it is compiling (merge_engine.compiling).
        trainer = trainer_from_file(
            list(cfg.corpus),
            cfg.vocab_size,
            specials,
            workers=cfg.workers,
            progress=self._progress,
            cancel_event=control.cancel_event,
            pattern=cfg.pattern,
            record_pairs=TOP_PAIRS,
            cluster=cfg.cluster,
            text_field=cfg.text_field,
            records=cfg.records,
            status=self._status,
        )
        # Why nothing can be learned, in the command line's words (a corpus with no text is
        # read up to its first character, on this thread), when nothing can.
        why = None
        if trainer.target_merges > 0 and not trainer.top_pairs(1):
            files = corpus_files(list(cfg.corpus), cfg.records)
            why = nothing_to_merge(files, cfg.text_field, bool(trainer.pretoken_counts))
        control.merging.set()  # before the pause check below: hold_still counts on it
        self.recording.emit(trainer.pair_history)
        self.merging.emit(trainer.target_merges)

        # subtle: what runs once per merge is kept to bound methods in locals: a merge of a small
        # corpus is so short that the loop's own checks are a visible share of it.
        emit_merge = self.merged.emit
        gui_free = control.turn.gui_free
        gui_is_free, running = gui_free.is_set, control.running.is_set
        start = time.perf_counter()
        paused_for = self._pause() if control.paused else 0.0
        for step in trainer:
            emit_merge(step)
            if not gui_is_free():
                gui_free.wait(GUI_HOLD_LIMIT)  # the GUI is repainting (trainer_hold)
            if step.rank == control.pause_after:
                control.pause()
            if not running():
                paused_for += self._pause()
        seconds = time.perf_counter() - start - paused_for
        control.holding_still.set()  # no merge comes after these
        # subtle: freeing the working state holds the GIL for thousands of short slices; during
        # the window's last frame and its repaint they would compete for it. So the window
        # shows the last merges first (docs/responsiveness.md, "The run's end").
        self.merges_done.emit()
        control.turn.end_shown.wait(END_SHOWN_LIMIT)
        trainer.close()
        merges = list(trainer.merges)
        return TrainingResult(
            dict(trainer.vocab),
            merges,
            tuple(trainer.special_tokens),
            trainer.target_merges,
            control.stopped and len(merges) < trainer.target_merges,
            seconds,
            cfg.pattern,
            why,
        )
