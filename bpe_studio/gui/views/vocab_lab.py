"""The Vocabulary lab tab: what a tokenizer's vocabulary is made of, what a corpus never uses,
how two vocabularies overlap.

What it does: :class:`VocabLabPage` lays out the lab: the tokenizer examined and the second
one (the one :class:`~.picker.TokenizerPicker`, panes ``lab`` and ``lab-against`` of the app
model), the corpus (none, the run's, or files, globs and URLs chosen here), a progress bar
with Cancel (and Compute, for what was cancelled or failed), one line each for the make-up,
the usage and the overlap, one for the tokenizers' notes (where any), the four charts
(:class:`~.lab_charts.LabCharts`), the token list (:class:`~.lab_tokens.LabTokenList`) and
"Why this token" for the token clicked in it. All it shows comes from the lab's model
(``AppModel.lab``: ``model.vocab_lab``), which keeps only results that match the choices
shown; the work runs in the lab's own process (``jobs.lab_runner``), started only while the
tab is shown (a job under way goes on when it is hidden). When the run's tokenizer is
examined, the make-up follows the timeline's step (a step slider and Live are here too),
live while it trains (asked at most once a second).
Export CSV (the summary, or the tokens listed) and Export PNG (the charts) write atomically.
What it leaves out: the numbers (the core's ``explain``), the rules (``model.vocab_lab``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import cast

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QHideEvent, QResizeEvent, QShowEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QProgressBar,
    QPushButton,
    QSlider,
    QSplitter,
    QWidget,
)

from ...core import Tokenizer
from ...core.explain.usage import (
    WHOLE_INPUT,
    absent_words,
    dropped_words,
    uncounted_words,
    unknown_words,
)
from ...core.explain.vocabulary import no_reach
from ...core.io.atomic import atomic_write_bytes, atomic_write_text
from ...core.io.write_failure import write_failure
from ..jobs.lab_runner import LabRunner
from ..jobs.latest import LatestJob
from ..model.app_model import AppModel
from ..model.corpus_source import AS_RECORDS, AS_TEXT, CORPUS_FILTERS, how_to_read, split_sources
from ..model.lab_csv import summary_csv, tokens_csv
from ..model.lab_lists import TokenRows, categories, show_label, shows, token_rows
from ..model.lab_records import TokenizerRef
from ..model.status import format_bytes
from ..model.tokenizer_recipes import inspector_cache
from ..model.tokenizer_source import TokenizerSource
from ..model.vocab_lab import (
    LAB,
    LAB_AGAINST,
    SAME_TOKENIZER,
    CorpusKind,
    LabCorpus,
    VocabLab,
)
from ..responsiveness.busy import wait_while_gui_busy
from ..responsiveness.debounce import single_shot
from . import file_dialogs
from .common import counted, steady_label, title_label
from .glyph_warmup import GlyphWarmer, script_samples
from .hub_models import remember_model
from .lab_charts import CHOOSE_AGAINST, CHOOSE_CORPUS, LabCharts
from .lab_tokens import LabTokenList
from .layouts import column, vertical_split
from .picker import NONE, TokenizerPicker, preset_key
from .save_chooser import choose_and_save
from .theme import muted
from .why_token import WhyTokenPanel

REQUEST_MS = 150  # a change of choice is computed after this pause
LIVE_MS = 1000  # while the run trains, its make-up is asked for at most this often
# The charts' width in a 1280-pixel window, where their keys and labels are checked whole: a
# wider window gives the token list what its columns need before the charts grow.
CHARTS_WIDTH = 760
CHOOSE_FILES = "choose-files"
ASK_GLOB = "ask-glob"
_RUN_ROW, _OPENED_ROW = 1, 2  # the corpus menu's rows of the run's corpus and the opened one
HINT = "Click a token to see why it exists."


class LabWhyPanel(WhyTokenPanel):
    """ "Why this token" in the lab: as the inspector's, but explains only while it is seen
    (a token selected elsewhere waits until the tab is shown), and its heading always names
    the token's tokenizer: the lab shows a tokenizer of its own (GPT-4o at first), so a
    token of the run, selected in a vocabulary row or the editor, is not the lab's."""

    def _whose(self) -> str:
        if self.hub.state.selected_in is None:
            return " · in the run's tokenizer"
        return super()._whose()

    @Slot(int)
    def show_token(self, token_id: int) -> None:
        self.token_id = token_id
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True


class VocabLabPage(QWidget):
    """The Vocabulary lab tab (see the module docstring)."""

    error = Signal(str, str)  # title, message: a failure the user should hear of
    saved = Signal(str)  # a status line: what was written where

    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.lab: VocabLab = hub.lab
        self.runner = LabRunner(self.lab, self)
        # For "Why this token", by the tokenizer (a file's version too: one changed on disk
        # and loaded again is explained as it is now).
        self._sources: dict[TokenizerRef, TokenizerSource] = {}
        self._request = single_shot(self, REQUEST_MS, self._submit)
        self._live = single_shot(self, LIVE_MS, self._submit)
        self._redraw_timer = single_shot(self, 0, self._redraw_step)
        # The token list is filled on the event loop's next turn after the charts are drawn:
        # both at once held the GUI thread over 100 ms on a loaded machine.
        self._list_timer = single_shot(self, 0, self._fill_list)
        # What each chart shows now (see _show_results), and the results it was drawn from,
        # held so that their ids are not reused.
        self._drawn_keys: tuple[object, object, object] | None = None
        self._drawn_from: tuple[object, object, object] = (None, None, None)

        self.picker = TokenizerPicker(hub, pane=LAB, default=preset_key("o200k_base"))
        self.against = TokenizerPicker(hub, pane=LAB_AGAINST, default=NONE, allow_none=True)
        self.corpus_box = QComboBox()
        self.corpus_box.setMinimumContentsLength(16)
        self.corpus_box.addItem("(no corpus)", LabCorpus())
        self.corpus_box.addItem("The run's corpus", LabCorpus(CorpusKind.RUN))
        # Listed while it is not the run's (opened since the run trained, not trained on yet):
        # both are worth examining, and the run's name alone hid which one was used.
        self.corpus_box.addItem("The opened corpus", LabCorpus(CorpusKind.OPENED))
        self._files_end = self.corpus_box.count()
        self.corpus_box.insertSeparator(self.corpus_box.count())
        self.corpus_box.addItem("Choose corpus files…", CHOOSE_FILES)
        self.corpus_box.addItem("Glob or URL…", ASK_GLOB)
        self.corpus_box.activated.connect(self._on_corpus_activated)
        self._corpus_index = 0
        self.text_field = QLineEdit(self.lab.text_field)
        self.text_field.setAccessibleName("Records' text field")
        self.text_field.setMaximumWidth(110)
        self.text_field.setToolTip("The records' text field (JSON Lines and Parquet corpora)")
        self.text_field.editingFinished.connect(
            lambda: self.lab.set_text_field(self.text_field.text())
        )
        self.text_field_label = QLabel("Text field:")
        # Asked how to read a file whose name does not say (a .json whose first line is a
        # record): (title, question) -> AS_RECORDS, AS_TEXT or anything else for cancelled.
        # The window asks with its dialog; tests replace it.
        self.ask_records: Callable[[str, str], str] = lambda title, question: ""

        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        self.progress.setFixedWidth(260)
        # Shown only while a job runs (an empty bar reads as a text field); its room is kept
        # so the status line does not move.
        policy = self.progress.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.progress.setSizePolicy(policy)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.compute_button = QPushButton("Compute")
        self.compute_button.setToolTip("Compute again what was cancelled or failed")
        self.compute_button.clicked.connect(self.lab.compute_again)
        self.csv_button = QPushButton("Export CSV")
        menu = QMenu(self.csv_button)
        menu.addAction("Summary (make-up, usage, overlap)…", self._choose_summary_csv)
        menu.addAction("Tokens listed…", self._choose_tokens_csv)
        self.csv_button.setMenu(menu)
        self.png_button = QPushButton("Export PNG…")
        self.png_button.clicked.connect(self._choose_png)
        self.status = steady_label(QLabel(" "), "0" * 60)
        muted(self.status)

        self.step_label = QLabel(" ")
        self.step_label.setMinimumWidth(self.step_label.fontMetrics().horizontalAdvance("0" * 34))
        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.step_slider.setAccessibleName("Step of the run shown")
        self.step_slider.valueChanged.connect(self._on_slider)
        # Grabbed, its handle holds the step it shows (as the timeline's): held still, a
        # replay moved it on from under the mouse.
        self.step_slider.sliderPressed.connect(self._on_slider_grabbed)
        self.live_button = QPushButton("Live")
        self.live_button.setToolTip("Follow the newest merge (Alt+L on the training page)")
        self.live_button.clicked.connect(hub.follow_live)
        self.step_row = QWidget()
        step_row = QHBoxLayout(self.step_row)
        step_row.setContentsMargins(0, 0, 0, 0)
        step_row.addWidget(self.step_label)
        step_row.addWidget(self.step_slider, 1)
        step_row.addWidget(self.live_button)

        self.makeup_line = steady_label(QLabel(" "), "0" * 80)
        # Its under-trained candidates come last and matter most: wrapped, never cut.
        self.usage_line = steady_label(QLabel(" "), "0" * 80, wrap=True)
        self.overlap_line = steady_label(QLabel(" "), "0" * 80)
        # What the tokenizers shown do otherwise than their files say (Tokenizer.notes, as
        # Compare's and the editor's tooltips hold them): truncation not applied is why a
        # usage covers whole texts. Wrapped, whole in the tooltip; hidden where none.
        self.notes_line = muted(steady_label(QLabel(" "), "0" * 80, wrap=True))
        self.notes_line.setTextFormat(Qt.TextFormat.PlainText)  # file names may hold "<"
        self.notes_line.hide()
        self.charts = LabCharts()
        self.charts.category_clicked.connect(self._on_category_clicked)
        self.tokens = LabTokenList()
        self.tokens.choice_changed.connect(self._fill_list)
        self.tokens.token_clicked.connect(self._on_token_clicked)
        self.why = LabWhyPanel(hub, inspector_cache())
        self._glyphs = LatestJob("bpe-lab-glyphs", self)
        self._glyphs.done.connect(self._on_samples)
        self.warmer = GlyphWarmer(self.tokens.table)
        self._warmed: object = None  # the table whose fonts were warmed

        top = QHBoxLayout()
        top.setSpacing(6)
        top.addWidget(title_label("Vocabulary lab"))
        top.addWidget(self.picker)
        top.addWidget(QLabel("Corpus:"))
        top.addWidget(self.corpus_box)
        top.addWidget(self.text_field_label)
        top.addWidget(self.text_field)
        top.addWidget(QLabel("Against:"))
        top.addWidget(self.against)
        top.addStretch(1)
        top.addWidget(self.csv_button)
        top.addWidget(self.png_button)
        bar = QHBoxLayout()
        bar.setSpacing(6)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.progress)
        bar.addWidget(self.compute_button)
        bar.addWidget(self.cancel_button)
        right = vertical_split(self.tokens, self.why, (3, 2), (420, 300))
        self.body = QSplitter(Qt.Orientation.Horizontal)
        self.body.addWidget(self.charts)
        self.body.addWidget(right)
        self.body.setSizes([860, 560])
        self.body.setChildrenCollapsible(False)
        self.body.setHandleWidth(8)
        self.body.setStretchFactor(0, 1)  # the charts take a resize; the list keeps its width
        self.body.setStretchFactor(1, 0)
        self._split_moved = False  # by the user: their split is kept from then on
        self.body.splitterMoved.connect(self._on_split_moved)
        column(
            self,
            top,
            bar,
            self.step_row,
            self.makeup_line,
            self.usage_line,
            self.overlap_line,
            self.notes_line,
            (self.body, 1),
            margins=(4, 4, 4, 4),
        )

        self.lab.wanted_changed.connect(self.request)
        self._notes_running = False  # whether the empty charts' notes were of a job under way
        self.lab.results_changed.connect(self._show_results)
        self.lab.progress_changed.connect(self._show_progress)
        self.lab.problem_changed.connect(self._show_progress)
        self.lab.announce.connect(lambda message: self.error.emit("Vocabulary lab", message))
        hub.step_changed.connect(self._on_step)
        hub.live_changed.connect(lambda _live: self._show_step_row())
        hub.merges_added.connect(lambda _a, _b: self._show_step_row())
        hub.reset.connect(self._show_step_row)
        hub.corpus_changed.connect(self._name_run_corpus)
        hub.reset.connect(self._name_run_corpus)  # a run put back brings its own corpus back
        hub.pane_changed.connect(self._on_pane_changed)
        self._show_text_field()
        self._name_run_corpus()
        self._show_results()
        self._show_progress()

    # ------------------------------------------------------------ requests
    @property
    def busy(self) -> bool:
        """Work is asked for or under way (the tests wait for it to settle)."""
        return (
            self._request.isActive()
            or self._live.isActive()
            or self._list_timer.isActive()
            or self._redraw_timer.isActive()  # a step moved to: drawn on the next turn
            or self.runner.busy
        )

    @Slot()
    def request(self) -> None:
        """Something may be due: ask for it after a short pause (at most once a second while
        the run's make-up follows a training run), if the tab is shown."""
        if not self.isVisible():
            return
        if self.lab.training and self.lab.makeup is not None:
            if not self._live.isActive():
                self._live.start()
            return
        self._request.start()

    @Slot()
    def _submit(self) -> None:
        if self.isVisible():
            self.runner.run()
            self._show_progress()

    @Slot()
    def cancel(self) -> None:
        self.runner.cancel()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        # What changed while hidden (a run trained) is drawn now, not once a job starts: the
        # lines said "There is no run's tokenizer yet" over a run paused at 9,000 merges.
        self._show_results()
        self._show_progress()
        self.request()
        self._show_step_row()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if not self._split_moved:
            self.fit_split()

    def fit_split(self) -> None:
        """The token list as wide as its columns where the charts keep :data:`CHARTS_WIDTH`;
        in a smaller window, the split of the first design (charts 860 : list 560)."""
        full = self.body.width() - self.body.handleWidth()
        least = round(full * 560 / 1420)
        right = max(least, min(self.tokens.full_width(), full - CHARTS_WIDTH))
        self.body.setSizes([full - right, right])

    @Slot()
    def _on_split_moved(self) -> None:
        self._split_moved = True

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt override
        # A job under way goes on (its process is not the window's); none starts meanwhile.
        super().hideEvent(event)
        self._request.stop()
        self._live.stop()

    def _on_pane_changed(self, pane: str) -> None:
        if pane in (LAB, LAB_AGAINST):
            # A pick under way: the make-up shown says whose it is; and the charts' notes
            # follow the choices ("Choose a second tokenizer" stayed after one was chosen
            # while the run's tokenizer, with no run yet, left nothing to compute).
            self._show_results()
        if pane == LAB and self.hub.pick_under_way(LAB) is None:
            key = self.hub.pane(LAB).key
            if key.startswith("hf:"):
                remember_model(key[3:])  # opened here: listed in every menu
        if pane == LAB_AGAINST and self.hub.pick_under_way(LAB_AGAINST) is None:
            key = self.hub.pane(LAB_AGAINST).key
            if key.startswith("hf:"):
                remember_model(key[3:])

    # -------------------------------------------------------------- corpus
    @Slot(int)
    def _on_corpus_activated(self, index: int) -> None:
        data = self.corpus_box.itemData(index)
        if data == CHOOSE_FILES or data == ASK_GLOB:
            self.corpus_box.setCurrentIndex(self._corpus_index)  # an action, not a choice
            paths = self._ask_files() if data == CHOOSE_FILES else self._ask_glob()
            if paths:
                self.choose_corpus(paths)
            return
        if isinstance(data, LabCorpus):
            self._corpus_index = index
            self.lab.choose_corpus(data)
            self._show_text_field()

    def choose_corpus(self, paths: list[str] | str | None) -> None:
        """Examine the corpus of ``paths`` (a path or several; None: none; "run": the run's,
        "opened": the one opened), as the menu does; listed in the menu for this session."""
        if paths is None:
            choice = LabCorpus()
        elif paths == "run":
            # With no run trained its entry is disabled: the corpus that stands for it.
            row = _RUN_ROW if self.hub.state.run_corpus is not None else self._no_run_row()
            choice = self.corpus_box.itemData(row)
        elif paths == "opened":
            choice = LabCorpus(CorpusKind.OPENED)
        else:
            items = tuple(os.fspath(p) for p in ((paths,) if isinstance(paths, str) else paths))
            # A .json whose first line is a record: asked, as the Train page asks (of local
            # files: a URL's would be read on this thread; the lab's process says its faults).
            local = [p for p in items if "://" not in p]
            read_as = how_to_read(local, self.ask_records) if local else None
            if read_as is not None and read_as not in (AS_RECORDS, AS_TEXT):
                return  # cancelled: the corpus shown stays
            choice = LabCorpus(CorpusKind.FILES, items, read_as)
        # subtle: findData compares Python objects by identity, never finding an equal choice.
        box = self.corpus_box
        index = next((i for i in range(box.count()) if box.itemData(i) == choice), -1)
        if index < 0:
            index = self._files_end
            self._files_end += 1
            self.corpus_box.insertItem(index, choice.label, choice)
            self.corpus_box.setItemData(index, "\n".join(choice.paths), Qt.ItemDataRole.ToolTipRole)
        self.corpus_box.setCurrentIndex(index)
        self._on_corpus_activated(index)

    def _ask_files(self) -> list[str]:
        """Corpus files (modal); tests replace it."""
        # The app's one corpus dialog: roomy, opening where the last corpus was.
        return file_dialogs.open_files(
            self,
            file_dialogs.CORPUS,
            "Corpus for the Vocabulary lab (several files are one corpus)",
            CORPUS_FILTERS,
        )

    def _ask_glob(self) -> list[str]:
        text, ok = QInputDialog.getText(
            self, "Corpus by glob or URL", "A glob or URLs, separated by spaces:"
        )
        return split_sources(text) if ok else []

    def _show_text_field(self) -> None:
        records = self.lab.asks_text_field  # the rule that gives the field to the job
        self.text_field.setVisible(records)
        self.text_field_label.setVisible(records)

    def _no_run_row(self) -> int:
        """The menu's row that stands for the run's corpus while there is none: the corpus
        opened (what the next Train trains on), else no corpus."""
        return _OPENED_ROW if self.hub.state.corpus_source is not None else 0

    @Slot()
    def _name_run_corpus(self) -> None:
        """Name the run's corpus and the one opened in the menu; the opened one is listed
        only while it is another corpus than the run's. With no run trained (none yet,
        discarded, a loaded tokenizer) no corpus is the run's: its entry says so, disabled,
        and the corpus opened is only "The opened corpus"."""
        state = self.hub.state
        run, opened = state.run_corpus, state.corpus_source
        if run is not None:
            text = f"The run's corpus ({run.name})"
        elif state.loaded is not None:
            text = "The run's corpus (none: a loaded tokenizer)"
        else:
            text = "The run's corpus (none: no run trained)"
        self.corpus_box.setItemText(_RUN_ROW, text)
        # Read as the next Train reads it: the run's records read with another text field
        # (the Train page's, changed since) are another corpus too.
        run_ref, opened_ref = state.run_corpus_ref, state.corpus_ref
        other = opened_ref is not None and (
            run_ref is None
            or (run_ref.paths, run_ref.records, run_ref.text_field)
            != (opened_ref.paths, opened_ref.records, opened_ref.text_field)
        )
        if opened is not None and opened_ref is not None:
            named = opened.name
            if opened.records:
                named += f", text field {opened_ref.text_field!r}"
            self.corpus_box.setItemText(_OPENED_ROW, f"The opened corpus ({named})")
        model = self.corpus_box.model()
        assert isinstance(model, QStandardItemModel)
        # Shown disabled rather than hidden: the menu keeps its place, and says why.
        model.item(_RUN_ROW).setEnabled(run is not None)
        item = model.item(_OPENED_ROW)
        if item is not None:
            item.setEnabled(other)  # neither offered nor reached by the keys while hidden
        view = self.corpus_box.view()
        if isinstance(view, QListView):
            view.setRowHidden(_OPENED_ROW, not other)
        moved_to = None
        if run is None and self._corpus_index == _RUN_ROW:
            moved_to = self._no_run_row()  # the run's corpus is gone with its run
        elif not other and self._corpus_index == _OPENED_ROW:
            # The opened corpus is now the run's (trained on), or none is opened.
            moved_to = _RUN_ROW if run is not None else 0
        if moved_to is not None:
            self.corpus_box.setCurrentIndex(moved_to)
            self._on_corpus_activated(moved_to)
        self._show_text_field()

    # ------------------------------------------------------------- results
    @Slot()
    def _show_results(self) -> None:
        """Draw what changed since the last call: a chart whose result and note are the same
        is left as it is (a job's result, then its end, each call this; redrawing all four
        charts and the list each time held the GUI thread over 100 ms), and the list is
        filled on the next turn of the event loop."""
        lab = self.lab
        shown = lab.shown_makeup()
        makeup, usage, overlap = lab.makeup, lab.usage, lab.overlap
        ordinary = shown[0].ordinary_tokens if shown is not None else 0
        if makeup is None or shown is None:
            makeup_note = lab.missing or ("Working out the make-up…" if lab.running else "")
            makeup_key: object = ("none", makeup_note, lab.missing)
        else:
            makeup_key = ("makeup", id(makeup), shown[1], lab.behind(), self._pending_name())
        if usage is None:
            usage_note = self._waiting_note(lab.wanted_corpus() is None, CHOOSE_CORPUS)
            usage_key: object = ("none", usage_note)
        else:
            used_of = self._usage_ordinary(usage.ref) or ordinary
            usage_key = ("usage", id(usage), used_of)
        if overlap is None:
            overlap_note = self._waiting_note(lab.wanted_b() is None, CHOOSE_AGAINST)
            overlap_key: object = ("none", overlap_note)
        else:
            overlap_key = ("overlap", id(overlap))
        drawn = self._drawn_keys or (None, None, None)
        self._drawn_keys = (makeup_key, usage_key, overlap_key)
        self._drawn_from = (makeup, usage, overlap)
        if makeup_key != drawn[0]:
            if makeup is None or shown is None:
                self.charts.show_makeup(None, "Categories", makeup_note)
                self.makeup_line.setText(lab.missing or " ")
            else:
                self._draw_makeup()
        if usage_key != drawn[1]:
            if usage is None:
                self.charts.show_usage(None, 0, "Usage", usage_note)
                self.usage_line.setText(" ")
            else:
                self.charts.show_usage(usage, used_of, "Usage by rank of count")
        if usage is not None:
            # subtle: set whenever results or the job's state change, not only with the chart:
            # a usage not yet complete says whether its scan is under way.
            self.usage_line.setText(self._usage_text())
        if overlap_key != drawn[2]:
            if overlap is None:
                self.charts.show_overlap(None, "Overlap", overlap_note)
                self.overlap_line.setText(" ")
            else:
                t = overlap.overlap.total
                # Each side named with the step it was counted at (the run's tokenizer's
                # overlap is not the make-up's step while the timeline is scrubbed).
                a, b = overlap.ref.name, overlap.other.name
                self.charts.show_overlap(
                    overlap,
                    f"Overlap: {t.shared:,} shared",
                    names=(_legend_name(overlap.ref), _legend_name(overlap.other)),
                )
                self.overlap_line.setText(
                    f"Against {b} (ordinary tokens by their bytes): shared {t.shared:,} · "
                    f"only in {a} {t.only_this:,} · only in {b} {t.only_other:,}"
                )
        self._show_notes()
        for button in (self.csv_button, self.png_button):
            button.setEnabled(makeup is not None)
        if self._drawn_keys != drawn:
            self._list_timer.start()
        self._show_step_row()
        self._warm_glyphs()

    def _show_notes(self) -> None:
        """The notes of the tokenizer whose make-up is shown and of the one it is against
        (once their overlap is shown), a note both have said once: on one line that wraps,
        as the editor's, and one a line in the tooltip, as Compare's."""
        lab = self.lab
        notes = lab.makeup.notes if lab.makeup is not None else ()
        if lab.overlap is not None:
            notes += lab.overlap.other_notes
        notes = tuple(dict.fromkeys(notes))
        self.notes_line.setText("; ".join(notes) or " ")
        self.notes_line.setToolTip("\n".join(notes))
        self.notes_line.setVisible(bool(notes))

    def _waiting_note(self, unchosen: bool, hint: str) -> str:
        """What an empty usage or overlap chart says: choose, wait for the run, or nothing
        (it is being worked out; the status line says so)."""
        if unchosen:
            return hint
        if self.lab.missing:  # the first tokenizer cannot be examined (no run yet, say)
            return "Worked out once there is a tokenizer to examine"
        if self.lab.training:
            return "Worked out when the run pauses or ends"
        return "Being worked out…" if self.lab.running is not None else ""

    def _usage_ordinary(self, ref: TokenizerRef) -> int:
        """The ordinary tokens of the tokenizer a usage is of (the run's at its step)."""
        makeup = self.lab.makeup
        if makeup is None:
            return 0
        if ref.is_run and ref.merges is not None and makeup.table.rank is not None:
            return makeup.table.makeup(ref.merges).ordinary_tokens
        return makeup.table.makeup().ordinary_tokens

    def _pending_name(self) -> str | None:
        """The tokenizer picked whose make-up is being worked out while the one before is
        still shown (its results stay until the new ones come), else None."""
        makeup, wanted = self.lab.makeup, self.lab.wanted_a()
        if makeup is None or wanted is None or makeup.ref.same_tokenizer(wanted):
            return None
        return wanted.name

    def _draw_makeup(self) -> None:
        lab = self.lab
        shown = lab.shown_makeup()
        makeup = lab.makeup
        assert shown is not None and makeup is not None
        m, step = shown
        behind = lab.behind()
        where = ""
        if step is not None:
            where = f" at step {step:,}"
            if behind is not None:
                where += f" (updating to step {behind:,}…)"
        at = "" if step is None else f" · step {step:,}" + (" (updating…)" if behind else "")
        pending = self._pending_name()
        if pending is not None:
            # A real-display audit: for seconds the charts showed the tokenizer before under
            # the new one's name in the picker, with nothing saying whose they were.
            at = f" · {makeup.ref.label}, until {pending}'s is worked out"
            where += f" (shown until {pending}'s make-up is worked out)"
        self.charts.show_makeup(m, f"Categories{at}")
        unreachable = (
            f"unreachable: {no_reach(makeup.table.kind)}"
            if m.unreachable is None
            else f"{m.unreachable:,} unreachable"
        )
        self.makeup_line.setText(
            f"{makeup.ref.label}{where}, {makeup.table.kind}: {counted(m.tokens, 'token')} · "
            f"{m.special_tokens:,} special · {m.ordinary_tokens:,} ordinary · {unreachable}"
        )

    def _usage_text(self) -> str:
        usage = self.lab.usage
        assert usage is not None
        u = usage.usage
        ordinary = usage.used_total + usage.unused_total
        share = f" ({100 * usage.used_total / ordinary:.1f}%)" if ordinary else ""
        per = ""
        if u.bytes_per_token is not None:
            kept = " of the text kept" if u.dropped else ""
            if u.dropped is None:  # dropped text not counted: over the whole input, said so
                kept = f" {WHOLE_INPUT}"
            per = f" ({u.bytes_per_token:.2f} bytes/token{kept})"
        ref = usage.ref
        by = ""
        if ref.is_run and ref.merges is not None:
            by = f" by the run's tokenizer at step {ref.merges:,}"
        line = (
            f"{usage.corpus.label}{by}: {format_bytes(u.bytes)} → "
            f"{counted(u.tokens, 'token')}{per} · "
            f"used {usage.used_total:,} of {ordinary:,} ordinary{share} · never used "
            f"{usage.unused_total:,} · under-trained candidates: {len(u.inside):,} inside used "
            "tokens"
        )
        if u.across is not None and u.absent is not None:
            line += f", {len(u.across):,} only across tokens, {len(u.absent):,} {absent_words(u)}"
        elif self.lab.running is not None:
            line += "; the text is being searched for the others' bytes"
        else:
            line += "; the text was not searched for the others' bytes"
        if u.dropped is None:
            line += "".join(f" · its {said}" for said in uncounted_words(u))
        elif u.dropped:
            line += f" · its pre-tokenizer {dropped_words(u.dropped, u.bytes)}"
        if u.unknown:  # (why bytes met only in those words are "not in the text kept")
            line += f" · its {unknown_words(u.unknown)}"
        return line

    @Slot(int)
    def _on_step(self, step: int) -> None:
        if self.lab.makeup is not None and self.lab.makeup.ref.is_run:
            self._redraw_timer.start()  # once per turn of the event loop, however many steps
        self._show_step_row()

    @Slot()
    def _redraw_step(self) -> None:
        if self.lab.makeup is not None:
            self._draw_makeup()
            self._drawn_keys = None  # the make-up drawn is of another step now
            self._fill_list()

    def _show_step_row(self) -> None:
        """The step slider, while the run's tokenizer is examined (its make-up follows the
        timeline's step)."""
        s = self.hub.state
        visible = self.lab.examines_run and self.lab.has_run
        self.step_row.setVisible(visible)
        if not visible:
            return
        self.step_slider.blockSignals(True)
        self.step_slider.setRange(0, s.published)
        self.step_slider.setValue(s.step)
        self.step_slider.blockSignals(False)
        live = " · live" if s.live and s.phase.training else ""
        self.step_label.setText(f"Timeline step {s.step:,} of {s.published:,}{live}")
        # As the timeline's Live: a finished run moved back follows its last merge again too.
        self.live_button.setEnabled(not s.live)

    @Slot(int)
    def _on_slider(self, value: int) -> None:
        self.hub.select_step(value)

    @Slot()
    def _on_slider_grabbed(self) -> None:
        self.hub.pause_replay()  # the step stays that of the handle: no step change says so
        self.hub.select_step(self.step_slider.value())

    # ---------------------------------------------------------------- list
    @Slot()
    def _fill_list(self) -> None:
        lab = self.lab
        offered = shows(lab)
        self.tokens.set_shows([(s, show_label(s, lab)) for s in offered])
        listed = token_rows(lab, self.tokens.show(), None)
        if listed is None:
            self.tokens.set_categories([])
            self.tokens.set_rows(None, " ", "other")
            return
        self.tokens.set_categories(categories(listed.table, listed.rows))
        category = self.tokens.category()
        if category is not None:
            listed = token_rows(lab, self.tokens.show(), category)
        assert listed is not None
        other = lab.overlap.other.label if lab.overlap is not None else "other"
        of = (lab.overlap.other.label if listed.other else None) if lab.overlap else None
        what = f" of {of}" if of else ""
        shown = lab.shown_makeup()
        if listed.step is not None and shown is not None and listed.step != shown[1]:
            # Worked out for another step than the make-up shows: said, not mixed silently.
            work = "overlap" if self.tokens.show().needs_overlap else "corpus's use"
            what += f" at step {listed.step:,}, where the {work} was worked out"
        caption = f"{counted(len(listed), 'token')}{what} listed"
        if listed.counts_of is not None:
            caption += f" (no counts: the corpus's use is of step {listed.counts_of:,})"
        self.tokens.set_rows(listed, caption, other)

    @Slot(object)
    def _on_category_clicked(self, name: str | tuple[str, ...]) -> None:
        """A category's bar: its tokens listed (every token, unless the list is one the
        category narrows, such as the never-used ones); the bar of the rest: its
        categories' tokens."""
        self.tokens.choose_category(name or None)

    @Slot(bool, int)
    def _on_token_clicked(self, other: bool, token_id: int) -> None:
        """Select the token, in the tokenizer it belongs to: "Why this token" explains it."""
        lab = self.lab
        result = lab.overlap.other if other and lab.overlap is not None else None
        ref = result if result is not None else (lab.makeup.ref if lab.makeup else None)
        if ref is None:
            return
        if ref.is_run:
            self.hub.select_token(token_id)
        else:
            self.hub.select_token(token_id, self._source(ref))

    def _source(self, ref: TokenizerRef) -> TokenizerSource:
        """The tokenizer ``ref`` names, for "Why this token" (built in its job, from the
        pickers' shared cache; the same source each time, so it is built once)."""
        source = self._sources.get(ref)
        if source is None:
            choice = self.picker.choice(ref.key)
            assert choice is not None
            # A foreign tokenizer works too: "Why this token" says it has no merges to show.
            make = cast(Callable[[], Tokenizer], choice.get)
            source = TokenizerSource.deferred(ref.label, make, 0)
            # Another version of the file is not explained again: its tokenizer goes.
            self._sources = {r: s for r, s in self._sources.items() if r.key != ref.key}
            self._sources[ref] = source
        return source

    def _warm_glyphs(self) -> None:
        """Load the fonts the listed vocabulary's scripts need, before a scroll shows them."""
        makeup = self.lab.makeup
        table = makeup.table if makeup is not None else None
        if table is None or table is self._warmed:
            return
        self._warmed = table
        tokens = table.tokens
        self._glyphs.submit(lambda is_stale: (table, script_samples(tokens, wait_while_gui_busy)))

    @Slot(object)
    def _on_samples(self, result: tuple) -> None:
        table, samples = result
        if table is self._warmed:
            self.warmer.start(samples)

    # ------------------------------------------------------------ progress
    @Slot()
    def _show_progress(self) -> None:
        lab = self.lab
        progress = lab.progress
        running = lab.running is not None
        if running != self._notes_running:  # the empty charts' notes say whether it works
            self._notes_running = running
            self._show_results()
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        self.compute_button.setVisible(lab.can_compute_again and not running)
        if running and progress is not None:
            if progress.total > 0:
                self.progress.setRange(0, 1000)
                self.progress.setValue(round(1000 * progress.done / progress.total))
            else:
                self.progress.setRange(0, 0)  # busy, no measure yet
            self.status.setText(f"{progress.stage[:1].upper()}{progress.stage[1:]}…")
        else:
            self.progress.setRange(0, 1000)
            self.progress.setValue(0)
            self.status.setText(lab.problem or lab.missing or (HINT if lab.makeup else " "))

    # -------------------------------------------------------------- export
    def export_summary_csv(self, path: str | os.PathLike[str]) -> bool:
        return self._write(path, summary_csv(self.lab), "Export CSV", "Vocabulary lab summary")

    def export_tokens_csv(self, path: str | os.PathLike[str]) -> bool:
        model = self.tokens.model
        listed = model.listed
        if listed is None:
            return False
        ordered = TokenRows(listed.table, model.order, listed.counts, listed.held, listed.other)
        return self._write(path, tokens_csv(ordered), "Export CSV", "Tokens listed")

    def export_png(self, path: str | os.PathLike[str]) -> bool:
        data = self.charts.png(self.png_title())
        if data is None:
            self.error.emit("Export PNG", f"{os.fspath(path)}: the charts could not be rendered")
            return False
        return self._write(path, data, "Export PNG", "Charts")

    def png_title(self) -> str:
        """What the exported charts are of, for their title line: the tokenizer (and the
        step), the corpus and the second tokenizer, as the charts show them."""
        lab = self.lab
        makeup, shown = lab.makeup, lab.shown_makeup()
        if makeup is None or shown is None:
            return ""
        step = "" if shown[1] is None else f" at step {shown[1]:,}"
        parts = [f"Vocabulary lab: {makeup.ref.label}{step}"]
        usage = lab.usage
        if usage is not None:
            ref = usage.ref
            # A loaded tokenizer's ref names no step: its use is of all its merges (as the
            # lists take it); formatting that None raised, and Export PNG failed.
            counted = ref.merges if ref.merges is not None else makeup.table.merges
            at = ""
            if ref.is_run and shown[1] is not None and counted != shown[1]:
                at = f" (used at step {counted:,})"
            parts.append(f"corpus {usage.corpus.label}{at}")
        if lab.overlap is not None:
            parts.append(f"against {lab.overlap.other.name}")
        return " · ".join(parts)

    def _write(
        self, path: str | os.PathLike[str], data: str | bytes, title: str, what: str
    ) -> bool:
        if self.lab.makeup is None:
            return False
        try:
            if isinstance(data, bytes):
                atomic_write_bytes(path, data)
            else:
                atomic_write_text(path, data)
        except OSError as error:
            self.error.emit(title, write_failure(path, error))
            return False
        self.saved.emit(f"{what} saved as {os.fspath(path)}")
        return True

    @Slot()
    def _choose_summary_csv(self) -> None:
        choose_and_save(
            self, "Export the lab's summary as CSV", "vocabulary-lab.csv", "CSV (*.csv)",
            self.export_summary_csv,
        )  # fmt: skip

    @Slot()
    def _choose_tokens_csv(self) -> None:
        choose_and_save(
            self, "Export the tokens listed as CSV", "tokens.csv", "CSV (*.csv)",
            self.export_tokens_csv,
        )  # fmt: skip

    @Slot()
    def _choose_png(self) -> None:
        choose_and_save(
            self, "Export the charts as PNG", "vocabulary-lab.png", "PNG image (*.png)",
            self.export_png,
        )  # fmt: skip

    def shutdown(self) -> None:
        self._request.stop()
        self._live.stop()
        self._redraw_timer.stop()
        self._list_timer.stop()
        self.warmer.stop()
        self.runner.shutdown()
        self._glyphs.shutdown()
        self.why.shutdown()


def _short(name: str, most: int = 22) -> str:
    return name if len(name) <= most else name[: most - 1] + "…"


def _legend_name(ref: TokenizerRef) -> str:
    """A tokenizer as the overlap legend names it: the run's by its step (its label is long
    and the same at every step: cut, the step was lost), another by its label, cut short."""
    if ref.is_run and ref.merges is not None and ref.label != SAME_TOKENIZER:
        return f"run at step {ref.merges:,}"
    return _short(ref.label)
