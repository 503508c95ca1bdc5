"""The timeline bar: which step of the run every view shows, and the replay controls.

What it does: :class:`TimelineBar` shows a slider over steps 0..N (N: the merges published so
far, growing while training), a spin box, step back / forward buttons, a Live button (checked
while the step follows the newest merge), Replay / Pause, Skip and the replay pace, and a label
"step k of N: merge k" with merge k readable. Moving any of them calls the hub
(``select_step``, ``follow_live``) and pauses a replay; the hub's signals move them back, with
their own signals blocked, so an update never echoes. Shortcuts (window-wide): Alt+Left/Right
one step, Alt+Shift+Left/Right (or Alt+Page Up/Down) 100 steps, Alt+L live, Alt+P replay or pause.
What it leaves out: the replay's clock (``replay``), and what a step means to each view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QToolButton,
    QWidget,
)

from ..model.app_model import AppModel
from ..training.replay import PACES, Pace, Replay
from .common import steady_label, title_label, token_text
from .layouts import column

BIG_STEP = 100  # Alt+Shift+Left/Right, and the slider's page step
LABEL_BYTES = 48  # the most of each token's bytes the label shows (a line of its own)
TIMELINE = "Timeline: "  # how Help's list names the keys that move the step


@dataclass(frozen=True)
class StepKey:
    """A window-wide key that moves the step: its keys ("; " between alternatives), what it
    does (as Help's list says it), what it calls, and the button enabled exactly when it can
    act (the Run menu's entry follows it)."""

    keys: str
    what: str
    slot: Callable[[], object]
    button: QWidget


def describe_step(k: int, n: int, row: object | None) -> str:
    """The label's text at step ``k`` of ``n``; ``row`` is merge k (rank k - 1), or None."""
    head = f"step {k:,} of {n:,}"
    if k == 0 or row is None:
        return f"{head}: bytes only, no merge applied"
    left, right = getattr(row, "left", b""), getattr(row, "right", b"")
    count = getattr(row, "count", None)
    made = token_text(left + right, LABEL_BYTES)
    # Ranks count from 0, as the merge list, the vocabulary and the merge tree show them.
    pair = f"{token_text(left, LABEL_BYTES)} + {token_text(right, LABEL_BYTES)} → {made}"
    text = f"{head}: last merge, rank {k - 1:,}:  {pair}"
    return text + (f"  ({count:,}×)" if count is not None else "")


class TimelineBar(QWidget):
    def __init__(self, hub: AppModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub = hub
        self.replay = Replay(hub, self)

        self.back_button = QToolButton()
        self.back_button.setArrowType(Qt.ArrowType.LeftArrow)
        self.back_button.setAccessibleName("Previous merge")
        self.back_button.setToolTip("One merge back (Alt+Left)")
        self.forward_button = QToolButton()
        self.forward_button.setArrowType(Qt.ArrowType.RightArrow)
        self.forward_button.setAccessibleName("Next merge")
        self.forward_button.setToolTip("One merge forward (Alt+Right)")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setAccessibleName("Timeline step")
        self.slider.setRange(0, 0)
        self.slider.setPageStep(BIG_STEP)
        self.slider.setToolTip("The step every view shows: merges applied so far")
        self.spin = QSpinBox()
        self.spin.setAccessibleName("Step")
        self.spin.setRange(0, 0)
        self.spin.setGroupSeparatorShown(True)
        self.spin.setKeyboardTracking(False)
        # Fixed size: its maximum grows every frame, and a spin box asks for room again on
        # each change of range, unless its size is fixed (see common.SteadyLabel).
        self.spin.ensurePolished()
        self.spin.setFixedSize(
            self.spin.fontMetrics().horizontalAdvance("0,000,000") + 30,
            self.spin.sizeHint().height(),
        )
        self.live_button = QPushButton("Live")
        self.live_button.setCheckable(True)
        self.live_button.setChecked(True)
        self.live_button.setToolTip("Follow the newest merge (Alt+L)")
        self.replay_button = QPushButton("Replay")
        self.replay_button.setToolTip("Animate the run from the first merge (Alt+P)")
        self.skip_button = QPushButton("Skip")
        self.skip_button.setToolTip("Jump to the end of the replay")
        self.skip_button.setEnabled(False)
        self.pace_combo = QComboBox()
        for pace in PACES:
            self.pace_combo.addItem(pace.label, pace)
        self.pace_combo.setCurrentIndex(PACES.index(self.replay.pace))
        self.pace_combo.setToolTip("Replay pace")
        self.label = steady_label(QLabel(), "step 00,000 of 00,000: merge 00,000  ")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(title_label("Timeline"))
        row.addWidget(self.back_button)
        row.addWidget(self.slider, 1)
        row.addWidget(self.forward_button)
        row.addWidget(self.spin)
        row.addWidget(self.live_button)
        row.addSpacing(12)
        row.addWidget(self.replay_button)
        row.addWidget(self.skip_button)
        row.addWidget(self.pace_combo)
        column(self, row, self.label, spacing=2)

        self.slider.valueChanged.connect(self._user_step)
        # Grabbing the handle chooses the step it shows: held still, a replay (or a live run)
        # moved it on from under the mouse until the mouse moved.
        self.slider.sliderPressed.connect(lambda: self._user_step(self.slider.value()))
        self.spin.valueChanged.connect(self._user_step)
        # Typed (and chosen, or left): the box shows the hub's step again.
        self.spin.editingFinished.connect(self._typed)
        self.back_button.clicked.connect(lambda: self._user_step(hub.state.step - 1))
        self.forward_button.clicked.connect(lambda: self._user_step(hub.state.step + 1))
        self.live_button.clicked.connect(self._live_clicked)
        self.replay_button.clicked.connect(self.toggle_replay)
        self.skip_button.clicked.connect(self.replay.skip)
        self.pace_combo.currentIndexChanged.connect(self._pace_chosen)
        self.replay.running_changed.connect(self._show_replay)

        hub.reset.connect(self.refresh)
        hub.merges_added.connect(self.refresh)
        hub.step_changed.connect(self.refresh)
        hub.live_changed.connect(self.refresh)
        hub.replay_changed.connect(self._show_replay)
        self.refresh()

    def step_keys(self) -> list[StepKey]:
        """The keys that move the step, in the order Help and the Run menu list them."""
        back, forward = self.back_button, self.forward_button
        return [
            StepKey(
                "Alt+Left",
                f"{TIMELINE}one merge back",
                lambda: self._user_step(self.hub.state.step - 1),
                back,
            ),
            StepKey(
                "Alt+Right",
                f"{TIMELINE}one merge forward",
                lambda: self._user_step(self.hub.state.step + 1),
                forward,
            ),
            # Alt+Page Up/Down too: window managers of the openbox family take Alt+Shift+arrows
            # (to move the window to another desktop), so the app never sees them there.
            StepKey(
                "Alt+Shift+Left; Alt+PgUp",
                f"{TIMELINE}{BIG_STEP} merges back",
                lambda: self._user_step(self.hub.state.step - BIG_STEP),
                back,
            ),
            StepKey(
                "Alt+Shift+Right; Alt+PgDown",
                f"{TIMELINE}{BIG_STEP} merges forward",
                lambda: self._user_step(self.hub.state.step + BIG_STEP),
                forward,
            ),
            StepKey(
                "Alt+L",
                f"{TIMELINE}follow the newest merge (Live)",
                self._go_live,
                self.live_button,
            ),
        ]

    def add_keys(self, window: QWidget) -> None:
        """The timeline's keys, on ``window``: they step and replay from every tab. (Qt turns
        off a shortcut whose widget is hidden, and the timeline is hidden on every tab but
        the first: a real-display audit's Alt+P typed "p" into Compare's text.)"""
        replay = StepKey(
            "Alt+P", "Replay the run, or pause the replay", self.toggle_replay, self.replay_button
        )
        for key in (*self.step_keys(), replay):
            shortcut = QShortcut(window)
            shortcut.setKeys([QKeySequence(k) for k in key.keys.split("; ")])
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.setWhatsThis(key.what)  # listed in Help > Keyboard shortcuts
            # Only where its button can act, as the Run menu's entry: Alt+Right at the newest
            # merge (its button greyed) moved nothing but left live mode, so a run that went
            # on was no longer followed.
            shortcut.activated.connect(lambda key=key: key.button.isEnabled() and key.slot())

    # ------------------------------------------------------------ actions
    def select_step(self, k: int) -> None:
        """What moving the slider does: show step ``k`` (leaves live, pauses a replay)."""
        self._user_step(k)

    @Slot()
    def toggle_replay(self) -> None:
        if self.replay.running:
            self.replay.pause()
        else:
            self.replay.start(self.pace_combo.currentData())

    @Slot(int)
    def _user_step(self, k: int) -> None:
        self.replay.pause()
        self.hub.select_step(k)

    @Slot()
    def _typed(self) -> None:
        self.spin.lineEdit().setModified(False)
        self.refresh()

    @Slot()
    def _live_clicked(self) -> None:
        if self.live_button.isChecked():
            self._go_live()
        else:  # unchecking Live keeps the step where it is
            self._user_step(self.hub.state.step)

    @Slot()
    def _go_live(self) -> None:
        self.replay.stop()
        self.hub.follow_live()

    @Slot(int)
    def _pace_chosen(self, index: int) -> None:
        pace = self.pace_combo.itemData(index)
        if isinstance(pace, Pace):
            self.replay.set_pace(pace)

    # --------------------------------------------------------------- view
    @Slot()
    def refresh(self, *_: object) -> None:
        """Show the hub's step and N; cheap (a few widget setters), called every frame."""
        state = self.hub.state
        n, k = state.published, state.step
        # A step being typed in the box is left as typed until Enter or leaving the box: a
        # replay or a live run moved the step every frame, and set over it, undid each key.
        typing = self.spin.lineEdit().isModified()
        for widget in (self.slider, self.spin):
            widget.blockSignals(True)
            if widget.maximum() != n:
                widget.setMaximum(n)
            if widget.value() != k and not (typing and widget is self.spin):
                widget.setValue(k)
            widget.blockSignals(False)
        rows = state.merge_rows
        row = rows[k - 1] if 0 < k <= len(rows) else None
        described = describe_step(k, n, row)
        # ": ", not the parts' " · ": a line too long for the label is cut at its end; cut
        # between parts, all after "Replaying ·" went (an audit: "Replay paused · …").
        replay = "Replay paused: " if state.replay_paused else "Replaying: "
        self.label.setText(replay + described if state.replaying else described)
        if self.live_button.isChecked() != state.live:
            self.live_button.setChecked(state.live)
        self.back_button.setEnabled(k > 0)
        self.forward_button.setEnabled(k < n)
        self.replay_button.setEnabled(n > 0)

    @Slot()
    def _show_replay(self, *_: object) -> None:
        running = self.replay.running
        self.replay_button.setText(
            "Pause" if running else "Resume" if self.replay.paused else "Replay"
        )
        self.skip_button.setEnabled(self.hub.state.replaying)
        self.refresh()  # the label says whether it replays

    def shutdown(self) -> None:
        """Stop the replay's timer (the window is closing)."""
        self.replay.stop()
