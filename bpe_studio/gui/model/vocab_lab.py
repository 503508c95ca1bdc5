"""The Vocabulary lab's state: what it examines, what it has computed, which results still apply.

What it does: :class:`VocabLab` (``AppModel.lab``) holds the lab's choices beside the app model's:
the tokenizer examined and the second one are panes of the app model (:data:`LAB`,
:data:`LAB_AGAINST`, picked with the one picker), the corpus is the lab's own (:class:`LabCorpus`:
none, the corpus the run trained on, the corpus opened, or files). From them and the run it works
out the tokenizer, corpus and second tokenizer wanted now (``wanted_*``), what of them is still to
be computed (:meth:`VocabLab.next_job`: a :class:`~.lab_records.LabJob`), and takes the results as
they come (:meth:`VocabLab.receive`), keeping only those whose refs still match what is wanted: a
result of another tokenizer, corpus or run is dropped. The run's tokenizer is examined at the
timeline's step: its table knows which merge made each token, and :meth:`VocabLab.shown_makeup`
counts the vocabulary as it stood at ``state.step`` (a millisecond), live and scrubbed. While the
run trains, its make-up follows the newest merges (the view asks at most once a second) and its
usage and overlap wait until it pauses or ends (they would cost the trainer the cores they take,
for a tokenizer that changes meanwhile). A failed or cancelled part is not computed again until the
user asks (:meth:`compute_again`) or changes a choice; a failed pick is undone in the app model, as
every page does.
What it leaves out: the process that computes (``lab_process``), timing (the view's timers),
drawing (``views/vocab_lab``).
"""

from __future__ import annotations

import enum
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from psygnal import Signal

from ...core.corpus.records import DEFAULT_TEXT_FIELD
from ...core.corpus.sources import Kind as FileKind
from ...core.corpus.sources import split_name
from ...core.explain.vocabulary import Makeup
from .corpus_source import CorpusSource
from .errors import named_once, on_one_line
from .file_versions import file_version
from .lab_records import (
    CorpusRef,
    Ended,
    Failure,
    Kind,
    LabJob,
    MakeupResult,
    Message,
    OverlapResult,
    Part,
    Progress,
    RunData,
    TokenizerRef,
    TokenizerSpec,
    UsageResult,
)
from .run_tokenizer import run_name
from .state import Phase

if TYPE_CHECKING:
    from .app_model import AppModel

LAB = "lab"  # the pane of the tokenizer examined
LAB_AGAINST = "lab-against"  # the pane of the second tokenizer ("none" allowed)
NONE_KEY = "none"  # the picker's key of no tokenizer (views.picker.NONE)
NO_RUN = "There is no run's tokenizer yet: train one or load one, or pick another tokenizer."
# What the second tokenizer is called when it is the first (compared with itself): its name
# twice read as two tokenizers ("only in GPT-4o 0 · only in GPT-4o 0").
SAME_TOKENIZER = "the same tokenizer"


def _says_records(path: str) -> bool:
    """Whether the name of the file (or glob, or URL) ``path`` says records, as the core
    reads a name (``sources.split_name``: ``a.jsonl.gz``; not a folder ``c4.jsonl_dump``)."""
    kind, _ = split_name(path.replace("\\", "/").rsplit("/", 1)[-1])
    return kind is not FileKind.TEXT


class CorpusKind(enum.Enum):
    NONE = "none"
    # The corpus the run on screen trained on (``RunState.run_corpus``): none with no run
    # trained (none yet, discarded, a loaded tokenizer); the corpus opened is then OPENED only.
    RUN = "run"
    OPENED = "opened"  # the corpus opened on the Train page, trained on or not
    FILES = "files"


@dataclass(frozen=True)
class LabCorpus:
    """The lab's corpus choice: none, the run's corpus, or ``paths`` (files, globs, URLs),
    read as ``read_as`` says where the user said (the core's ``records``: a .json whose
    first line is a record, ``corpus_source.how_to_read``), else as their names say."""

    kind: CorpusKind = CorpusKind.NONE
    paths: tuple[str, ...] = ()
    read_as: str | None = None

    @property
    def label(self) -> str:
        if self.kind is CorpusKind.RUN:
            return "the run's corpus"
        if self.kind is CorpusKind.OPENED:
            return "the opened corpus"
        if self.kind is CorpusKind.NONE or not self.paths:
            return "no corpus"
        path = Path(self.paths[0])
        first = path.name or self.paths[0]
        if any(c in first for c in "*?[") and path.parent.name:
            first = f"{path.parent.name}/{first}"  # two globs both read "*.txt" otherwise
        if len(self.paths) > 1:
            first = f"{first} (and {len(self.paths) - 1} more)"
        if self.read_as is not None:  # the same file read the other way is another entry
            first += " (as text)" if self.read_as == "text" else " (as records)"
        return first

    @property
    def holds_records(self) -> bool:
        """Files of records (whose text field is asked for), as read: by the user's word,
        else by their names (as the core reads a name: ``a.jsonl.gz`` holds records)."""
        if self.kind is not CorpusKind.FILES:
            return False
        if self.read_as is not None:
            return self.read_as != "text"
        return any(_says_records(p) for p in self.paths)


@dataclass(frozen=True)
class Due:
    """What is still to be computed for the choices shown."""

    makeup: bool
    usage: bool
    overlap: bool

    def __bool__(self) -> bool:
        return self.makeup or self.usage or self.overlap


class VocabLab:
    """The lab's choices, results and job (see the module docstring); events are emitted
    after the change they name."""

    wanted_changed = Signal()  # a choice or the run changed: a job may be due
    results_changed = Signal()  # a result arrived, or results that no longer apply went
    progress_changed = Signal()  # a job started, moved on or ended
    problem_changed = Signal()  # ``problem`` (a failure or a cancel, until the next choice)
    announce = Signal(str)  # a failure the user should hear of at once (a dialog)

    def __init__(self, hub: AppModel) -> None:
        # subtle: the model owns the lab; a strong reference back would make the two a
        # reference cycle, which only the cyclic collector frees, and never once the app has
        # frozen them (``gc.freeze``, responsiveness.collector): a closed window's model, and
        # the run or tokenizer it holds, would stay for the life of the process.
        self._hub = weakref.ref(hub)
        self.corpus = LabCorpus()
        self.text_field = DEFAULT_TEXT_FIELD
        self.makeup: MakeupResult | None = None
        self.usage: UsageResult | None = None
        self.overlap: OverlapResult | None = None
        self.running: LabJob | None = None  # the job whose results are awaited
        self.progress: Progress | None = None
        self.problem: str | None = None
        self.cancelled = False  # the user cancelled; nothing restarts until asked
        self._gave_up: set[tuple] = set()  # parts failed or cancelled: not computed again
        self._cancelled_job: LabJob | None = None  # what the last Cancel gave up
        hub.reset.connect(self._on_run_changed)
        self._had_run = self.has_run  # as of the last tokenizer_changed
        hub.tokenizer_changed.connect(self._on_tokenizer_changed)
        hub.phase_changed.connect(self._on_run_changed)
        hub.corpus_changed.connect(self._on_run_changed)
        hub.merges_added.connect(self._on_merges_added)
        hub.pane_changed.connect(self._on_pane_changed)
        hub.file_read_again.connect(self._on_file_read_again)

    @property
    def hub(self) -> AppModel:
        """The model that owns this lab."""
        hub = self._hub()
        if hub is None:
            raise RuntimeError("the Vocabulary lab outlived its model")
        return hub

    # ------------------------------------------------------------ choices
    def choose_corpus(self, corpus: LabCorpus) -> None:
        if corpus != self.corpus:
            self.corpus = corpus
            self._choice_changed()

    def set_text_field(self, field: str) -> None:
        field = field.strip() or DEFAULT_TEXT_FIELD
        if field != self.text_field:
            self.text_field = field
            self._choice_changed()

    def file_reloaded(self) -> None:
        """A tokenizer file shown was loaded again (``file_versions.read_again``): what was
        worked out from it goes, and it is read anew."""
        self._choice_changed()

    def _on_file_read_again(self, path: str) -> None:
        """A tokenizer file was loaded again, in any picker: read anew if the lab shows it or
        is picking it."""
        key = f"file:{path}"
        for pane in (LAB, LAB_AGAINST):
            choice = self._choice(pane)  # the pick under way, else the pane's choice
            if choice is not None and key in (choice[0], self.hub.pane(pane).key):
                self.file_reloaded()
                return

    def _choice_changed(self) -> None:
        self._forget_problem()
        self._prune()
        self.wanted_changed.emit()

    def _forget_problem(self) -> None:
        self._gave_up.clear()
        self.cancelled = False
        self._cancelled_job = None
        if self.problem is not None:
            self.problem = None
            self.problem_changed.emit()

    def _on_pane_changed(self, pane: str) -> None:
        if pane not in (LAB, LAB_AGAINST):
            return
        pick = self.hub.pick_under_way(pane)
        if pick is not None and (pick.key == NONE_KEY or (pick.key == "run" and not self.has_run)):
            # Nothing to build: no tokenizer, or the run's before there is a run (the lab
            # says so, and follows the run from its start). Emits pane_changed again.
            self.hub.pick_ready(pane, pick.key)
            return
        if pick is not None:  # a new pick: its failure is news; old failures are not
            self._forget_problem()
        self._prune()
        self.wanted_changed.emit()

    def _on_run_changed(self, *args: object) -> None:
        self._prune()
        self.wanted_changed.emit()

    def _on_tokenizer_changed(self) -> None:
        """The editor's tokenizer changed: news to the lab only when the run's tokenizer came
        or went. subtle: the lab examines the run at its merges published (``_ref``), not the
        editor's source of it, which the controller rebuilds while the run merges (and
        once, whole, at a pause): taken for a new choice at each rebuild, it began the view's
        wait before computing again and again, and no job started until the rebuilds ended."""
        had, self._had_run = self._had_run, self.has_run
        if had != self._had_run:
            self._on_run_changed()

    def _on_merges_added(self, first: int, last: int) -> None:
        if self.examines_run:
            self.wanted_changed.emit()  # the run's make-up follows (the view paces it)

    # ------------------------------------------------------------- wanted
    @property
    def has_run(self) -> bool:
        return self.hub.state.shown is not None

    @property
    def training(self) -> bool:
        """The tokenizer examined is the run's, and the run is under way (not paused)."""
        phase = self.hub.state.phase
        return self.examines_run and phase in (Phase.PRE_TOKENIZING, Phase.MERGING)

    @property
    def examines_run(self) -> bool:
        """The tokenizer examined (or picked to be) is the run's."""
        a = self._choice(LAB)
        return a is not None and a[0] == "run"

    def _choice(self, pane: str) -> tuple[str, str] | None:
        """The key and label the pane is computed with: its pick under way, else its choice
        (None before the picker defined the pane)."""
        try:
            choice = self.hub.pick_under_way(pane) or self.hub.pane(pane)
        except KeyError:
            return None
        return choice.key, choice.label

    def _ref(self, key: str, label: str) -> TokenizerRef | None:
        if key == NONE_KEY:
            return None
        if key.startswith("file:"):
            return TokenizerRef(key, label, version=file_version(key.removeprefix("file:")))
        if key != "run":
            return TokenizerRef(key, label)
        s = self.hub.state
        if s.shown is None:
            return None
        merges = None if s.loaded is not None else s.published
        # Named by what the run is (the file, the corpus), not the pickers' entry: the summary
        # CSV and the charts' title say which tokenizer they measured.
        return TokenizerRef(key, run_name(s), s.run_id, merges)

    def wanted_a(self) -> TokenizerRef | None:
        """The tokenizer examined now (None: none can be; the run's, with no run)."""
        choice = self._choice(LAB)
        return None if choice is None else self._ref(*choice)

    def wanted_b(self) -> TokenizerRef | None:
        """The second tokenizer now (None: none chosen)."""
        choice = self._choice(LAB_AGAINST)
        return None if choice is None else self._ref(*choice)

    def shown_a(self) -> TokenizerRef | None:
        """The tokenizer the lab's pane shows (not a pick still under way)."""
        try:
            choice = self.hub.pane(LAB)
        except KeyError:
            return None
        return self._ref(choice.key, choice.label)

    def shown_b(self) -> TokenizerRef | None:
        try:
            choice = self.hub.pane(LAB_AGAINST)
        except KeyError:
            return None
        return self._ref(choice.key, choice.label)

    @property
    def corpus_holds_records(self) -> bool:
        """The corpus chosen holds records: its text field is shown, and used."""
        if self.corpus.kind in (CorpusKind.RUN, CorpusKind.OPENED):
            source = self.app_corpus
            return source is not None and source.records
        return self.corpus.holds_records

    @property
    def app_corpus(self) -> CorpusSource | None:
        """The corpus of the app the choice names (the run's, or the one opened), or None."""
        state = self.hub.state
        if self.corpus.kind is CorpusKind.RUN:
            return state.run_corpus
        if self.corpus.kind is CorpusKind.OPENED:
            return state.corpus_source
        return None

    @property
    def asks_text_field(self) -> bool:
        """The lab's text field applies to the corpus chosen (shown, and used): files of
        records the lab reads its own way; not the run's corpus, read with the field the run
        trained with, nor the one opened, read with the Train page's (as the next Train)."""
        return self.corpus.holds_records

    def wanted_corpus(self) -> CorpusRef | None:
        c = self.corpus
        if c.kind is CorpusKind.RUN:
            # The text the run trained on, as the in-sample curve reads it: the lab's own
            # field ("text" unless typed) read another field of the records, or none.
            return self.hub.state.run_corpus_ref
        if c.kind is CorpusKind.OPENED:
            # What the next Train reads: a field typed here read other documents than the
            # Train page's field names (the records' "text" where they keep it in "body").
            return self.hub.state.corpus_ref
        if c.kind is CorpusKind.NONE or not c.paths:
            return None
        # subtle: a field typed for records is kept (for the next records chosen) but not
        # given with plain text, which the core refuses it for: the field is hidden then.
        field = self.text_field if self.asks_text_field else DEFAULT_TEXT_FIELD
        return CorpusRef(c.paths, field, c.label, c.read_as)

    @property
    def missing(self) -> str | None:
        """Why nothing can be computed (no run's tokenizer, no run's corpus), or None."""
        if self.wanted_a() is None and self.examines_run:
            return NO_RUN
        if self.corpus.kind is CorpusKind.RUN and self.app_corpus is None:
            return "No run was trained, so it has no corpus: choose the opened one or a file."
        if self.corpus.kind is CorpusKind.OPENED and self.app_corpus is None:
            return "No corpus is opened: open one, or choose a file for the lab."
        return None

    # ------------------------------------------------------------ results
    def _a_applies(self, ref: TokenizerRef) -> bool:
        """A result of ``ref`` belongs on screen: it is of the tokenizer wanted, or of the
        one the pane shows while a pick is under way (or of the same run, another step)."""
        return ref.same_tokenizer(self.wanted_a()) or ref.same_tokenizer(self.shown_a())

    def _b_applies(self, ref: TokenizerRef) -> bool:
        return ref.same_tokenizer(self.wanted_b()) or ref.same_tokenizer(self.shown_b())

    def _prune(self) -> None:
        """Drop the results that no longer apply (another tokenizer, corpus or run)."""
        kept_makeup = self.makeup if self.makeup and self._a_applies(self.makeup.ref) else None
        usage = self.usage
        if usage is not None and not (
            self._a_applies(usage.ref) and usage.corpus == self.wanted_corpus()
        ):
            usage = None
        overlap = self.overlap
        if overlap is not None and not (
            self._a_applies(overlap.ref) and self._b_applies(overlap.other)
        ):
            overlap = None
        if (kept_makeup, usage, overlap) != (self.makeup, self.usage, self.overlap):
            self.makeup, self.usage, self.overlap = kept_makeup, usage, overlap
            self.results_changed.emit()

    def shown_makeup(self) -> tuple[Makeup, int | None] | None:
        """The make-up shown and the step it is of (None: the whole tokenizer, not a run's):
        the run's at the timeline's step, or at the last step its table knows while newer
        merges are worked out (:meth:`behind`)."""
        result = self.makeup
        if result is None:
            return None
        table = result.table
        if not result.ref.is_run or table.rank is None:
            return table.makeup(), None
        step = min(self.hub.state.step, table.merges)
        if result.ref.merges is not None:
            step = min(step, result.ref.merges)
        return table.makeup(step), step

    def behind(self) -> int | None:
        """The step asked for when the run's make-up shown is of an earlier one (the newest
        merges are being worked out), else None."""
        result = self.makeup
        if result is None or not result.ref.is_run or result.ref.merges is None:
            return None
        step = self.hub.state.step
        return step if step > result.ref.merges else None

    # --------------------------------------------------------------- jobs
    def due(self) -> Due:
        """What is still to be computed (given up parts left out until asked again)."""
        a = self.wanted_a()
        if a is None:
            return Due(False, False, False)
        corpus, b, training = self.wanted_corpus(), self.wanted_b(), self.training
        makeup = self.makeup is None or self.makeup.ref != a
        if ("a", a.identity) in self._gave_up:
            makeup = False
        usage = corpus is not None and not training
        if usage and self.usage is not None:
            # A usage whose scan has not completed (a job cancelled or failed after sending
            # its first part) is still due.
            shown = (self.usage.ref, self.usage.corpus) == (a, corpus)
            usage = not (shown and self.usage.complete)
        if ("usage", a.identity, corpus) in self._gave_up:
            usage = False
        overlap = b is not None and not training
        if overlap and self.overlap is not None:
            overlap = (self.overlap.ref, self.overlap.other) != (a, b)
        if b is not None and ("b", a.identity, b.identity) in self._gave_up:
            overlap = False
        return Due(makeup, usage, overlap)

    def next_job(self) -> LabJob | None:
        """The job that computes what is due (None: nothing is)."""
        due = self.due()
        a = self.wanted_a()
        if not due or a is None:
            return None
        b = self.wanted_b() if due.overlap else None
        b_spec = None if b is None else self._spec(b)
        if b_spec is not None and b == a:
            b_spec = replace(b_spec, ref=replace(b_spec.ref, label=SAME_TOKENIZER))
        return LabJob(
            a=self._spec(a),
            corpus=self.wanted_corpus() if due.usage else None,
            b=b_spec,
            makeup=due.makeup,
            # Every tokenizer's, not only the run's: the list's Merge column and the CSV's
            # merge_rank (a real-display audit found them empty for GPT-4o); 0.05 s for o200k.
            steps=True,
        )

    def _spec(self, ref: TokenizerRef) -> TokenizerSpec:
        kind, _, value = ref.key.partition(":")
        if ref.is_run:
            return TokenizerSpec(ref, Kind.RUN, name=ref.label, run=self._run_data(ref))
        if kind == "preset":
            return TokenizerSpec(ref, Kind.PRESET, value, name=ref.label)
        if kind == "hf":
            return TokenizerSpec(ref, Kind.FILE, name=value, hub=value)
        return TokenizerSpec(ref, Kind.FILE, value, name=ref.label)

    def _run_data(self, ref: TokenizerRef) -> RunData:
        s = self.hub.state
        pattern = s.settings.pattern if s.settings is not None else "gpt2"
        loaded = s.loaded.tokenizer if s.loaded is not None else None
        return RunData(
            loaded, s.record, ref.merges or 0, s.base_vocab, tuple(s.special_tokens), pattern
        )

    def running_still_wanted(self) -> bool:
        """The job under way computes what is still wanted (so a change of the second
        tokenizer alone lets it finish its usage rather than start it over)."""
        job = self.running
        return job is not None and job.still_wanted(self.wanted_a(), self.wanted_corpus())

    def job_started(self, job: LabJob) -> None:
        """``job`` (numbered) was handed to the process; its results are awaited."""
        self.running = job
        self.progress = Progress(job.number, "starting", 0, 0)
        self.progress_changed.emit()

    def cancel(self) -> None:
        """The user cancelled: what the job under way would compute is given up (until a
        choice changes or :meth:`compute_again`)."""
        job = self.running
        if job is None:
            return
        a = job.a.ref
        # What came already is kept, and the message names only what did not: it said
        # "Cancelled: the make-up of GPT-2" over GPT-2's make-up, drawn whole.
        makeup = self.makeup
        if job.makeup and makeup is not None and makeup.ref == a:
            job = replace(job, makeup=False)
        usage = self.usage
        if usage is not None and usage.ref == a and usage.corpus == job.corpus and usage.complete:
            job = replace(job, corpus=None)
        overlap = self.overlap
        if job.b is not None and overlap is not None and overlap.ref == a:
            if overlap.other == job.b.ref:
                job = replace(job, b=None)
        if not (job.makeup or job.corpus is not None or job.b is not None):
            return  # all of it came: nothing was given up
        if job.makeup:
            self._gave_up.add(("a", a.identity))
        if job.corpus is not None:
            self._gave_up.add(("usage", a.identity, job.corpus))
        if job.b is not None:
            self._gave_up.add(("b", a.identity, job.b.ref.identity))
        self.cancelled = True
        self._cancelled_job = job
        self._set_problem("Cancelled: " + self._describe(job))

    def _came_after_cancel(self, key: tuple) -> None:
        """A part the user's Cancel gave up came anyway (its result was on its way), and is
        shown: the message names only what is still missing, or goes. ``key``: that part as
        ``_gave_up`` holds it ("a", "usage" or "b" first)."""
        job = self._cancelled_job
        if not self.cancelled or job is None or key not in self._gave_up:
            return
        self._gave_up.discard(key)
        if key[0] == "a":
            job = replace(job, makeup=False)
        elif key[0] == "usage":
            job = replace(job, corpus=None)
        else:
            job = replace(job, b=None)
        self._cancelled_job = job
        if job.makeup or job.corpus is not None or job.b is not None:
            self._set_problem("Cancelled: " + self._describe(job))
        else:
            self._forget_problem()

    @property
    def can_compute_again(self) -> bool:
        """Whether something failed or was cancelled that :meth:`compute_again` would compute
        (a failed pick is undone instead: nothing to compute)."""
        return bool(self._gave_up)

    def compute_again(self) -> None:
        """Compute what was given up (failed or cancelled parts)."""
        self._forget_problem()
        self.wanted_changed.emit()

    @staticmethod
    def _describe(job: LabJob) -> str:
        parts = []
        if job.makeup:
            parts.append(f"the make-up of {job.a.ref.name}")
        if job.corpus is not None:
            parts.append(f"the usage of {job.corpus.label}")
        if job.b is not None:
            parts.append(f"the overlap with {job.b.ref.name}")
        return ", ".join(parts) or "the job"

    def _set_problem(self, problem: str | None) -> None:
        if problem != self.problem:
            self.problem = problem
            self.problem_changed.emit()

    # ----------------------------------------------------------- messages
    def receive(self, message: Message) -> bool:
        """A message from the process; False when it was dropped (a result that no longer
        applies, news of a job no longer awaited)."""
        if isinstance(message, MakeupResult):
            return self._take_makeup(message)
        if isinstance(message, UsageResult):
            if not (self._a_applies(message.ref) and message.corpus == self.wanted_corpus()):
                return False
            self.usage = message
            self.results_changed.emit()
            if message.complete:
                key = ("usage", message.ref.identity, message.corpus)
                self._came_after_cancel(key)
            return True
        if isinstance(message, OverlapResult):
            return self._take_overlap(message)
        running = self.running
        if running is None or message.number != running.number:
            return False
        if isinstance(message, Progress):
            self.progress = message
            self.progress_changed.emit()
        elif isinstance(message, Failure):
            self._failed(running, message)
        elif isinstance(message, Ended):
            self.running = self.progress = None
            self.progress_changed.emit()
            self.wanted_changed.emit()  # what changed meanwhile may be due now
        return True

    def _take_makeup(self, result: MakeupResult) -> bool:
        ref = result.ref
        if not self._a_applies(ref):
            return False
        known = self.makeup
        if known is not None and known.ref.same_tokenizer(ref) and ref.is_run:
            if (known.ref.merges or 0) > (ref.merges or 0):
                return False  # an older step of the run than the one shown
        self.makeup = result
        if self.usage is not None and not self._a_applies(self.usage.ref):
            self.usage = None
        self.results_changed.emit()
        self.hub.pick_ready(LAB, ref.key)  # a pick under way is the pane's choice now
        self._prune()
        self._came_after_cancel(("a", ref.identity))
        return True

    def _take_overlap(self, result: OverlapResult) -> bool:
        if not (self._a_applies(result.ref) and self._b_applies(result.other)):
            return False
        self.overlap = result
        self.results_changed.emit()
        self.hub.pick_ready(LAB_AGAINST, result.other.key)
        self._came_after_cancel(("b", result.ref.identity, result.other.identity))
        return True

    def _failed(self, job: LabJob, failure: Failure) -> None:
        a = job.a.ref
        if failure.part is Part.A:
            if self.hub.pick_failed_for(LAB, failure.key, failure.message):
                shown = self.hub.pane(LAB).label
                self._say(f"Could not load {self._pick_what(a, failure)}\n\n{shown} is shown.")
                return
            self._gave_up.add(("a", a.identity))
        elif failure.part is Part.B and job.b is not None:
            b = job.b.ref
            if self.hub.pick_failed_for(LAB_AGAINST, failure.key, failure.message):
                shown = self.hub.pane(LAB_AGAINST).label
                what = self._pick_what(b, failure)
                self._say(f"Could not load {what}\n\n{shown} is compared instead.")
                return
            self._gave_up.add(("b", a.identity, b.identity))
        elif failure.part is Part.CORPUS and job.corpus is not None:
            self._gave_up.add(("usage", a.identity, job.corpus))
        else:
            self._gave_up.add(("a", a.identity))
            if job.corpus is not None:
                self._gave_up.add(("usage", a.identity, job.corpus))
            if job.b is not None:
                self._gave_up.add(("b", a.identity, job.b.ref.identity))
        self._say(failure.message)

    @staticmethod
    def _pick_what(ref: TokenizerRef, failure: Failure) -> str:
        """The pick and why it failed, naming the pick once (as ``picker.FailedPick``)."""
        return named_once(ref.label, failure.message)

    def _say(self, message: str) -> None:
        self._set_problem(on_one_line(message))  # the status line: one line, its sentences kept
        self.announce.emit(message)
