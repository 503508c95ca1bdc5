"""The window's menu bar: File, View, Run and Help, with the shortcuts people expect.

What it does: :class:`AppMenus` fills a window's menu bar. File: Open corpus… (Ctrl+O),
Open corpus by glob or URL…, Open held-out text…, Load tokenizer… (Ctrl+L), Save tokenizer
(Ctrl+S, in the format saved last, which the entry names: "Save tokenizer as GPT-2 files
…") and Save tokenizer as (each format),
Quit (Ctrl+Q, which asks before losing an unsaved run, as closing does). View: each tab
(Ctrl+1, Ctrl+2, …) and the colour scheme (System, Light, Dark). Run: Train (F5), Pause or
resume (F6), Stop (Shift+F5), Replay (Alt+P, the timeline's) and Timeline (the timeline's keys
that move the step: Alt+Left/Right, Alt+Shift+Left/Right, Alt+L). Help: Keyboard shortcuts (F1)
and About. An entry that does what a button of the panel does is enabled exactly when that
button is (:func:`mirror_enabled`), so a shortcut never does what the button would refuse.
What it leaves out: what the entries do (the window hands :class:`MenuHandlers` in) and the
dialogs of Help (``help_dialogs``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Slot
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QAbstractButton, QMainWindow, QMenu, QTabWidget, QWidget

from .common import app_settings
from .theme import DARK, LIGHT, SYSTEM, notifier
from .timeline import TIMELINE, StepKey

SAVE_FORMAT_KEY = "save/format"
SCHEME_LABELS = ((SYSTEM, "Follow the system"), (LIGHT, "Light"), (DARK, "Dark"))


@dataclass(frozen=True)
class RunButtons:
    """The run's buttons, which the Run menu's entries press."""

    train: QAbstractButton
    pause: QAbstractButton
    stop: QAbstractButton
    replay: QAbstractButton


@dataclass(frozen=True)
class MenuHandlers:
    """What the entries do, and the buttons whose state they share."""

    open_corpus: Callable[[], None]
    open_glob: Callable[[], None]
    open_heldout: Callable[[], None]
    load_tokenizer: Callable[[], None]
    # Save in a format of ``save_formats``, in the background; the window calls
    # ``note_save_format`` once it has written.
    save_tokenizer: Callable[[str], bool]
    save_formats: Sequence[tuple[str, str]]  # (menu text, format)
    quit: Callable[[], object]
    set_scheme: Callable[[str], None]
    scheme: Callable[[], str]
    shortcuts: Callable[[], object]
    about: Callable[[], None]
    tabs: QTabWidget
    open_button: QWidget
    load_button: QWidget
    save_button: QWidget
    run_buttons: RunButtons
    step_keys: Sequence[StepKey]


class _EnabledMirror(QObject):
    """Keeps an action enabled exactly when a widget is."""

    def __init__(self, action: QAction, widget: QWidget) -> None:
        super().__init__(action)
        self._action = action
        action.setEnabled(widget.isEnabled())
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.EnabledChange and isinstance(watched, QWidget):
            self._action.setEnabled(watched.isEnabled())
        return False


def _replay_entry(button_text: str) -> str:
    """The Run menu's replay entry for what the replay button says now ("Pause" while a
    replay runs, "Resume" while it waits), its key beside it."""
    words = {"Pause": "Pause the &replay", "Resume": "Resume the &replay"}
    return words.get(button_text, "&Replay") + "\tAlt+P"


def mirror_enabled(action: QAction, widget: QWidget) -> None:
    """``action`` is enabled exactly when ``widget`` is, from now on."""
    _EnabledMirror(action, widget)


def last_save_format(formats: Sequence[tuple[str, str]]) -> str:
    """The format saved last (the first of ``formats`` before any save)."""
    names = [fmt for _, fmt in formats]
    value = app_settings().value(SAVE_FORMAT_KEY, names[0])
    return value if value in names else names[0]


def remember_save_format(fmt: str) -> None:
    app_settings().setValue(SAVE_FORMAT_KEY, fmt)


def _format_text(formats: Sequence[tuple[str, str]], fmt: str) -> str:
    return next(text for text, name in formats if name == fmt).removesuffix("…")


def _call(slot: Callable[[str], None], value: str) -> Callable[[], None]:
    return lambda: slot(value)


class AppMenus(QObject):
    """The menus of one window (kept by it: their entries follow the run and the tabs)."""

    def __init__(self, window: QMainWindow, handlers: MenuHandlers) -> None:
        super().__init__(window)
        self.handlers = h = handlers
        bar = window.menuBar()
        file = self.file_menu = bar.addMenu("&File")
        self.open_action = self._add(file, "&Open corpus…", h.open_corpus, "Ctrl+O")
        mirror_enabled(self.open_action, h.open_button)
        glob = self._add(file, "Open corpus by &glob or URL…", h.open_glob)
        mirror_enabled(glob, h.open_button)
        self._add(file, "Open &held-out text…", h.open_heldout)
        file.addSeparator()
        self.load_action = self._add(file, "&Load tokenizer…", h.load_tokenizer, "Ctrl+L")
        mirror_enabled(self.load_action, h.load_button)
        self.save_action = self._add(file, "&Save tokenizer", self._save_last, "Ctrl+S")
        mirror_enabled(self.save_action, h.save_button)
        save_as = file.addMenu("Save tokenizer &as")
        for text, fmt in h.save_formats:
            action = self._add(save_as, text, self._saver(fmt))
            mirror_enabled(action, h.save_button)
        self._name_save_action()
        file.addSeparator()
        self.quit_action = self._add(file, "&Quit", h.quit, "Ctrl+Q")
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)

        view = self.view_menu = bar.addMenu("&View")
        self.tab_actions: list[QAction] = []
        self._tabs_end = view.addSeparator()  # the tabs are listed above it
        view.aboutToShow.connect(self._list_tabs)
        self._list_tabs()
        scheme_menu = view.addMenu("&Appearance")
        group = QActionGroup(self)
        self.scheme_actions: dict[str, QAction] = {}
        for scheme, text in SCHEME_LABELS:
            action = self._add(scheme_menu, text, _call(h.set_scheme, scheme))
            action.setCheckable(True)
            group.addAction(action)
            self.scheme_actions[scheme] = action
        self._check_scheme()
        notifier().changed.connect(self._check_scheme)

        run = self.run_menu = bar.addMenu("&Run")
        # Each entry presses its button (so it is enabled when the button is); F5 and
        # Shift+F5 start and stop a run, as in editors that run things.
        b = h.run_buttons
        for text, button, keys in (
            ("&Train", b.train, "F5"),
            ("&Pause or resume", b.pause, "F6"),
            ("&Stop", b.stop, "Shift+F5"),
        ):
            mirror_enabled(self._add(run, text, button.click, keys), button)
        run.addSeparator()
        # Alt+P is the timeline's own shortcut: shown here, not taken twice.
        self.replay_entry = self._add(run, "&Replay\tAlt+P", b.replay.click)
        mirror_enabled(self.replay_entry, b.replay)
        # The entry says what choosing it does, as its button does: a replay under way
        # pauses (a real-display audit: "Replay" paused it). Named again as the menu opens
        # and as the replay starts or ends (``name_replay_entry``), the menu open or not.
        run.aboutToShow.connect(self.name_replay_entry)
        # The timeline's keys, listed where people look for them (a keyboard audit found them
        # only in Help's list); shown, not taken twice, as Alt+P above.
        moves = self.timeline_menu = run.addMenu("T&imeline")
        for key in h.step_keys:
            what = key.what.removeprefix(TIMELINE)
            keys = key.keys.split("; ")[0]
            entry = self._add(moves, f"{what[:1].upper()}{what[1:]}\t{keys}", key.slot)
            mirror_enabled(entry, key.button)

        help_menu = self.help_menu = bar.addMenu("&Help")
        shortcuts = self._add(help_menu, "&Keyboard shortcuts", h.shortcuts, "F1")
        shortcuts.setMenuRole(QAction.MenuRole.NoRole)
        about = self._add(help_menu, "&About BPE Studio", h.about)
        about.setMenuRole(QAction.MenuRole.AboutRole)

    def _add(
        self, menu: QMenu, text: str, slot: Callable[[], object], keys: str | None = None
    ) -> QAction:
        action = menu.addAction(text)
        action.triggered.connect(lambda _checked=False: slot())
        if keys is not None:
            action.setShortcut(QKeySequence(keys))
        return action

    def name_replay_entry(self, *_: object) -> None:
        """Name the Run menu's replay entry for what its button says now."""
        self.replay_entry.setText(_replay_entry(self.handlers.run_buttons.replay.text()))

    def _saver(self, fmt: str) -> Callable[[], None]:
        return lambda: self.save(fmt)

    def save(self, fmt: str) -> None:
        """Save in ``fmt`` (remembered once written: Ctrl+S saves in it next time)."""
        self.handlers.save_tokenizer(fmt)

    def note_save_format(self, fmt: str) -> None:
        """Ctrl+S saves in ``fmt`` from now on: a save in it was written (from a menu or
        closing's question).

        subtle: not a format whose save was cancelled, refused or failed (GPT-2 files of a
        cl100k run, tokenizer.json of a \\w pattern): Ctrl+S then asked for it again at every
        press, and at the next start, though another format had been saved last."""
        remember_save_format(fmt)
        self._name_save_action()

    def _save_last(self) -> None:
        self.save(last_save_format(self.handlers.save_formats))

    def _name_save_action(self) -> None:
        formats = self.handlers.save_formats
        fmt = last_save_format(formats)
        self.save_action.setText(f"&Save tokenizer as {_format_text(formats, fmt)}…")

    @Slot()
    def _list_tabs(self) -> None:
        """One entry per tab, in order (a tab added since is listed too): Ctrl+1, Ctrl+2, …"""
        tabs, view = self.handlers.tabs, self.view_menu
        texts = [tabs.tabText(i) for i in range(tabs.count())]  # "&&": an "&" in both
        if texts == [action.text() for action in self.tab_actions]:
            return
        for action in self.tab_actions:
            view.removeAction(action)
            action.deleteLater()
        self.tab_actions = []
        for i, text in enumerate(texts):
            action = QAction(text, view)
            action.triggered.connect(lambda _checked=False, i=i: tabs.setCurrentIndex(i))
            if i < 9:
                action.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            view.insertAction(self._tabs_end, action)
            self.tab_actions.append(action)

    @Slot()
    def _check_scheme(self) -> None:
        action = self.scheme_actions.get(self.handlers.scheme())
        if action is not None:
            action.setChecked(True)
