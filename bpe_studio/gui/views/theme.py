"""The app's colours, light or dark, legible either way, and which scheme is on.

What it does: :class:`Colours` holds every colour a view draws with that Qt's palette does not
give (token backgrounds, chart colours, secondary and error text, the training panel's
background). :func:`colours` is the set for the palette on now, derived from it: the text
colours are chosen for at least :data:`MIN_CONTRAST` (WCAG AA's 4.5:1) against the backgrounds
they sit on, whatever the palette (``tests/gui/test_contrast.py`` measures every label and
the editor's tokens in both schemes), and every background has a text colour of its own.
:func:`apply_scheme` puts a scheme on: :data:`SYSTEM` follows the platform (Qt's
``QStyleHints.colorScheme()``, and where the platform says nothing, its palette) and its
changes while the app runs; :data:`LIGHT` and :data:`DARK` are the user's own choice (View >
Appearance, kept in ``QSettings``). Where the platform's palette is not of the scheme wanted
(a desktop set to dark whose Qt theme gives no palette), the app sets its own; where it is, it
stays, but each pair of text and background in it that reads under 4.5:1 (Fusion's selection,
its placeholders, greyed text) takes the app's own palette's colours (:func:`legible_palette`).
:func:`themed` calls a view's restyling now and again after every change of scheme, while the
view lives.
What it leaves out: laying anything out; the views restyle themselves (``themed``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from .common import app_settings

STYLE_SHEET = files("bpe_studio.resources") / "style.qss"
SYSTEM, LIGHT, DARK = "system", "light", "dark"
SCHEMES = (SYSTEM, LIGHT, DARK)
SCHEME_KEY = "view/appearance"
MIN_CONTRAST = 4.5  # WCAG AA for normal text
_TARGET = 5.0  # derived text colours aim a little above the minimum (antialiasing eats some)
# Greyed text: 5:1 on the light window; 4.5:1 on the dark button's face, which Fusion paints
# lighter than the button's colour (#4a4c51 at its top for #34363b).
_LIGHT_DISABLED, _DARK_DISABLED = "#666666", "#b8bdc4"

Role = QPalette.ColorRole
_W = TypeVar("_W", bound=QObject)
_Styled = TypeVar("_Styled", bound=QWidget)


def luminance(colour: QColor) -> float:
    """WCAG's relative luminance of an opaque colour."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(colour.redF())
        + 0.7152 * channel(colour.greenF())
        + 0.0722 * channel(colour.blueF())
    )


def contrast(a: QColor | str, b: QColor | str) -> float:
    """WCAG's contrast ratio of two colours, 1 to 21."""
    la, lb = sorted((luminance(QColor(a)), luminance(QColor(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved a share ``t`` of the way to ``b``."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
    )


def _legible(wanted: str, background: QColor | list[QColor], text: QColor) -> str:
    """``wanted`` if it reads at ``_TARGET`` on ``background`` (on each, given several), else
    moved towards ``text`` (the palette's own, which reads there) until it does."""
    colour = QColor(wanted)
    backgrounds = background if isinstance(background, list) else [background]
    for step in range(11):
        mixed = _mix(colour, text, step / 10)
        if min(contrast(mixed, b) for b in backgrounds) >= _TARGET:
            return mixed.name()
    return text.name()


def _muted(text: QColor, backgrounds: list[QColor]) -> str:
    """Secondary text: the palette's text faded towards its background as far as it may go
    while it still reads at ``_TARGET`` on every one of ``backgrounds``."""
    faded = text
    for step in range(1, 10):
        mixed = _mix(text, backgrounds[0], step / 10)
        if min(contrast(mixed, b) for b in backgrounds) < _TARGET:
            break
        faded = mixed
    return faded.name()


def is_dark(palette: QPalette) -> bool:
    """A palette of light text on dark windows."""
    return palette.color(Role.Window).lightness() < palette.color(Role.WindowText).lightness()


@dataclass(frozen=True)
class Colours:
    """The colours of one scheme. Text colours come with the background they are read on."""

    dark: bool
    text: str  # the palette's window text
    base_text: str  # the palette's text in editors and tables
    muted: str  # secondary text, on the window, the panel and editors
    error: str  # an error in words
    panel: str  # the training panel's background
    panel_border: str
    header: str  # table headers' background
    border: str  # lines between things
    accent: str  # the pair merged next, the chosen chip (as a fill or a bar)
    accent_text: str  # the accent as text on a plot's background
    bar: str  # pair-count bars
    curve: str  # the in-sample curve, the decay curve
    held_out: str  # the held-out curve
    editor_dot: str
    plot_background: str
    plot_axis: str  # axis lines
    plot_text: str  # tick labels, titles
    plot_muted: str  # notes in an empty plot
    grey_bar: str  # a bar drawn while its step is worked out
    token_text: str  # text on every token background below
    tokens: tuple[str, str]  # alternate token backgrounds in the editor
    split: tuple[str, str]  # tokens holding part of a multi-byte character
    split_underline: str
    special: tuple[str, str]  # special tokens
    shared: tuple[str, str]  # Compare: tokens both tokenizers cut the same way
    diff_mark: str  # Compare: a boundary only one tokenizer has (text, on editors)
    later: str  # table rows made after the step shown (greyed on purpose)
    unreachable: str  # a token encoding never gives (text, on tables)
    selection: str  # the selected table row
    selection_text: str
    chip: tuple[str, str]  # step-through chips: fill, border
    chip_chosen: tuple[str, str]
    chip_made: tuple[str, str]
    chip_special: tuple[str, str]
    node_byte: tuple[str, str]  # merge tree: a byte's fill and border
    edge: str  # merge tree edges, idle badges
    series: tuple[str, str, str, str]  # the Report's tokenizers


# The fixed colours of each scheme; the text colours are derived from the palette (below).
_LIGHT_FIXED = dict(
    accent="#e8590c",
    bar="#4c6ef5",
    curve="#364fc7",
    held_out="#e8590c",
    editor_dot="#2f9e44",
    grey_bar="#d1d5db",
    token_text="#111827",
    tokens=("#d0e2ff", "#ffe3bf"),
    split=("#ffc9de", "#f5a8c8"),
    split_underline="#c2255c",
    special=("#c3f0ca", "#9fdfaa"),
    shared=("#eceff3", "#dde2e8"),
    selection="#ffd8a8",
    selection_text="#111827",
    chip=("#edf2ff", "#4c6ef5"),
    chip_chosen=("#fff4e6", "#e8590c"),
    chip_made=("#d3f9d8", "#2f9e44"),
    chip_special=("#c3f0ca", "#2f9e44"),
    node_byte=("#f3f4f6", "#9ca3af"),
    edge="#adb5bd",
    series=("#4c6ef5", "#e8590c", "#2b8a3e", "#ae3ec9"),
)
_DARK_FIXED = dict(
    accent="#ff7a2e",
    bar="#5c7cfa",
    curve="#748ffc",
    held_out="#ff922b",
    editor_dot="#51cf66",
    grey_bar="#4b5058",
    token_text="#f1f3f5",
    tokens=("#1f3a66", "#5a3a12"),
    split=("#6b2145", "#852a55"),
    split_underline="#ff8cc6",
    special=("#1e5631", "#2b6e40"),
    shared=("#34373c", "#2a2c30"),
    selection="#7a4a1c",
    selection_text="#f8f9fa",
    chip=("#25304d", "#5c7cfa"),
    chip_chosen=("#4a2a12", "#ff7a2e"),
    chip_made=("#1e4a2a", "#51cf66"),
    chip_special=("#1e5631", "#51cf66"),
    node_byte=("#2f3237", "#6b7280"),
    edge="#6b7280",
    series=("#5c7cfa", "#ff7a2e", "#40c057", "#cc5de8"),
)


def colours_for(palette: QPalette) -> Colours:
    """The colours that go with ``palette``: its own text, secondary and error text that read on
    its window, the panel and its editors, and the fixed colours of its scheme."""
    dark = is_dark(palette)
    fixed: dict[str, Any] = dict(_DARK_FIXED if dark else _LIGHT_FIXED)
    window, text = palette.color(Role.Window), palette.color(Role.WindowText)
    base, base_text = palette.color(Role.Base), palette.color(Role.Text)
    alternate = palette.color(Role.AlternateBase)
    # The panel stands a little apart from the window: lighter in the dark, darker in the light.
    panel = _mix(window, QColor("#ffffff" if dark else "#000000"), 0.05 if dark else 0.02)
    plot = base
    readable_on = [window, panel, base, alternate]
    muted = _muted(text, readable_on)
    error = _legible("#ff6b6b" if dark else "#b02a24", window, text)
    return Colours(
        dark=dark,
        text=text.name(),
        base_text=base_text.name(),
        muted=muted,
        error=error,
        panel=panel.name(),
        panel_border=_mix(window, text, 0.14).name(),
        header=_mix(base, text, 0.06).name(),
        border=_mix(base, text, 0.18).name(),
        accent_text=_legible(fixed["accent"], plot, base_text),
        plot_background=plot.name(),
        plot_axis=_mix(plot, base_text, 0.45).name(),
        plot_text=base_text.name(),
        plot_muted=_muted(base_text, [plot]),
        # Compare paints its marks on the tokens' backgrounds, the legend on the base.
        diff_mark=_legible(
            "#ff8787" if dark else "#c92a2a",
            [base, *(QColor(c) for c in (*fixed["shared"], *fixed["tokens"], *fixed["special"]))],
            base_text,
        ),
        later=_mix(base, base_text, 0.6).name(),  # greyed, yet over 4.5:1 on both rows' colours
        unreachable=_legible("#f783ac" if dark else "#c2255c", base, base_text),
        **fixed,
    )


def dark_palette() -> QPalette:
    """The app's own dark palette, for a dark scheme the platform gives no palette for, and
    the colours a dark platform's illegible pairs take."""
    p = QPalette()
    groups = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive)
    roles = {
        Role.Window: "#2b2d31",
        Role.WindowText: "#e6e8eb",
        Role.Base: "#1e1f22",
        Role.AlternateBase: "#26282c",
        Role.ToolTipBase: "#1e1f22",
        Role.ToolTipText: "#e6e8eb",
        Role.PlaceholderText: "#9aa0a9",
        Role.Text: "#e6e8eb",
        Role.Button: "#34363b",
        Role.ButtonText: "#e6e8eb",
        Role.BrightText: "#ff6b6b",
        Role.Light: "#45484e",
        Role.Midlight: "#3a3d42",
        Role.Mid: "#2a2c30",
        Role.Dark: "#1b1c1f",
        Role.Shadow: "#000000",
        Role.Highlight: "#3d6fd9",
        Role.HighlightedText: "#ffffff",
        Role.Link: "#7aa7ff",
        Role.LinkVisited: "#b58cff",
    }
    for role, colour in roles.items():
        for group in groups:
            p.setColor(group, role, QColor(colour))
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(colour))
    # Greyed, yet legible on the button (_DARK_DISABLED).
    for role in (Role.WindowText, Role.Text, Role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(_DARK_DISABLED))
    return p


def light_palette() -> QPalette:
    """The app's own light palette (Fusion's light colours), for a light scheme chosen on a
    platform whose palette is dark, and the colours a light platform's illegible pairs take."""
    p = QPalette(QColor("#efefef"))  # Qt derives every role from the window colour
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        p.setColor(group, Role.Base, QColor("#ffffff"))
        p.setColor(group, Role.AlternateBase, QColor("#f7f7f7"))
        p.setColor(group, Role.Text, QColor("#000000"))
        p.setColor(group, Role.WindowText, QColor("#000000"))
        p.setColor(group, Role.ButtonText, QColor("#000000"))
        # Fusion's #308cc6 holds white text at 3.7:1 only; this, at 5.2:1.
        p.setColor(group, Role.Highlight, QColor("#2a6fb0"))
        p.setColor(group, Role.HighlightedText, QColor("#ffffff"))
        # Derived from the window colour, placeholders came out black, like typed text.
        p.setColor(group, Role.PlaceholderText, QColor("#6b6f76"))
        p.setColor(group, Role.ToolTipBase, QColor("#ffffdc"))
        p.setColor(group, Role.ToolTipText, QColor("#000000"))
    # Qt derives #777777 for disabled text, 3.9:1 on the window; greyed, this reads at 5:1.
    for role in (Role.WindowText, Role.Text, Role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(_LIGHT_DISABLED))
    return p


# Text and what it is drawn on, as the app's widgets draw them: in a focused window, in one
# that is not, and disabled (where only the plain texts are: nothing disabled is selected).
_ENABLED_PAIRS = (
    (Role.WindowText, Role.Window),
    (Role.Text, Role.Base),
    (Role.Text, Role.AlternateBase),
    (Role.ButtonText, Role.Button),
    (Role.HighlightedText, Role.Highlight),
    (Role.PlaceholderText, Role.Base),
    (Role.ToolTipText, Role.ToolTipBase),
)
TEXT_PAIRS = (
    *(
        (group, text, background)
        for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive)
        for text, background in _ENABLED_PAIRS
    ),
    *((QPalette.ColorGroup.Disabled, text, background) for text, background in _ENABLED_PAIRS[:4]),
)


def pair_contrast(
    palette: QPalette, group: QPalette.ColorGroup, text: Role, background: Role
) -> float:
    """The contrast of ``palette``'s ``text`` on its ``background`` as drawn: a translucent
    text (Qt's default placeholder is half-transparent black) blended into the background."""
    behind = palette.color(group, background)
    return contrast(
        _mix(behind, palette.color(group, text), palette.color(group, text).alphaF()), behind
    )


def legible_palette(platform: QPalette, own: QPalette) -> QPalette:
    """``platform`` with every text pair of :data:`TEXT_PAIRS` that reads under
    :data:`MIN_CONTRAST` taken from ``own`` (the app's palette of the same scheme): the text
    alone where ``own``'s text reads on the platform's background, else the background too.
    The pairs that read keep the platform's colours: the desktop's look stays."""
    palette = QPalette(platform)
    changed = True
    while changed:  # a background taken from ``own`` may leave another pair on it short
        changed = False
        for group, text, background in TEXT_PAIRS:
            if pair_contrast(palette, group, text, background) >= MIN_CONTRAST:
                continue
            for role in (text, background):
                if palette.color(group, role) != own.color(group, role):
                    palette.setColor(group, role, own.color(group, role))
                    changed = True
                    if pair_contrast(palette, group, text, background) >= MIN_CONTRAST:
                        break
    return palette


class _Theme(QObject):
    """The scheme on now, its colours, and who restyles when it changes."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.choice = SYSTEM
        self.colours = colours_for(QGuiApplication.palette())
        # id(owner) -> (owner, restyle): restyle(owner) after each change while the owner
        # lives (an owner leaves when Qt destroys it: its Python wrapper may outlive it).
        self._views: dict[int, tuple[weakref.ref[QObject], Callable[[Any], object]]] = {}
        self._setting = False  # our own setPalette: its palette-change event is ours
        self.following: QApplication | None = None  # the app whose changes are followed

    def restyle_all(self) -> None:
        for key, (ref, restyle) in list(self._views.items()):
            owner = ref()
            if owner is None:
                self._views.pop(key, None)
                continue
            restyle(owner)
        self.changed.emit()

    def add(self, owner: QObject, restyle: Callable[[Any], object]) -> None:
        key = id(owner)
        self._views[key] = (weakref.ref(owner), restyle)
        owner.destroyed.connect(lambda *_: self._views.pop(key, None))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        # The platform changed the palette (a desktop switching schemes): follow it.
        if event.type() == QEvent.Type.ApplicationPaletteChange and not self._setting:
            # The application's own event: Qt posts the same one to each window and widget
            # later, after ``_setting`` is off again.
            app = self.following
            if self.choice == SYSTEM and app is not None and watched is app:
                # Anew: the pairs mended in the old palette would stick in the new one (Qt
                # keeps the roles the app set), whatever its colours.
                apply_scheme(app, SYSTEM)
        return False


_THEME: list[_Theme] = []


def _theme() -> _Theme:
    if not _THEME:
        _THEME.append(_Theme())
    return _THEME[0]


def colours() -> Colours:
    """The colours of the scheme on now."""
    return _theme().colours


def notifier() -> _Theme:
    """The app's one theme object: ``changed`` after a change of scheme (views restyled)."""
    return _theme()


def themed(owner: _W, restyle: Callable[[_W], object]) -> _W:
    """Call ``restyle(owner)`` now and after every change of scheme while ``owner`` lives
    (``restyle`` must not hold ``owner`` itself: it is handed it); returns ``owner``."""
    restyle(owner)
    _theme().add(owner, restyle)
    return owner


def muted(label: _Styled) -> _Styled:
    """``label`` (a widget with text) in the secondary text colour, whatever the scheme."""
    return themed(label, lambda w: w.setStyleSheet(f"color: {colours().muted}"))


def error_text(label: _Styled) -> _Styled:
    """``label`` in the error colour, whatever the scheme."""
    return themed(label, lambda w: w.setStyleSheet(f"color: {colours().error}"))


def saved_choice() -> str:
    """The scheme the user chose last (View > Appearance); :data:`SYSTEM` by default."""
    value = app_settings().value(SCHEME_KEY, SYSTEM)
    return value if value in SCHEMES else SYSTEM


def remember_choice(choice: str) -> None:
    """The scheme chosen in View > Appearance, for the next start."""
    if choice in SCHEMES:
        app_settings().setValue(SCHEME_KEY, choice)


def system_is_dark(app: QGuiApplication, platform: QPalette) -> bool:
    """Whether the platform asks for dark: its colour scheme (Qt 6.5), else its palette."""
    scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    return is_dark(platform)


def platform_palette(app: QApplication) -> QPalette:
    """The platform's own palette (the desktop's colours), the app's palette once nothing of
    the app's is set on it."""
    app.setPalette(QPalette())
    return app.palette()


def apply_scheme(app: QApplication, choice: str) -> None:
    """Put the scheme ``choice`` on (``SYSTEM``, ``LIGHT`` or ``DARK``): the palette, the
    app's style sheet and every themed view's colours."""
    theme = _theme()
    theme.choice = choice
    theme._setting = True
    try:
        platform = platform_palette(app)
        dark = system_is_dark(app, platform) if choice == SYSTEM else choice == DARK
        own = dark_palette() if dark else light_palette()
        # Of the scheme wanted, the platform's palette stays, its illegible pairs mended.
        app.setPalette(own if dark != is_dark(platform) else legible_palette(platform, own))
        theme.colours = colours_for(app.palette())
        app.setStyleSheet(app_style_sheet(theme.colours))
    finally:
        theme._setting = False
    theme.restyle_all()


def follow_system(app: QApplication) -> None:
    """Follow the platform's changes of scheme while the choice is :data:`SYSTEM` (once per
    application: a second call changes nothing)."""
    theme = _theme()
    if theme.following is app:
        return
    theme.following = app
    app.installEventFilter(theme)

    def on_scheme(_scheme: object) -> None:
        if theme.choice == SYSTEM:
            apply_scheme(app, SYSTEM)

    app.styleHints().colorSchemeChanged.connect(on_scheme)


def app_style_sheet(c: Colours) -> str:
    """The app's style sheet: its widgets' shapes (``resources/style.qss``) in the colours
    ``c``."""
    return STYLE_SHEET.read_text(encoding="utf-8") + colour_rules(c)


def _dark_indicators(c: Colours) -> str:
    """An unchecked box's outline in the dark scheme: Fusion draws it in the window's own
    colour darkened, 1.2:1 against the window."""
    if not c.dark:
        return ""
    return f"""
QCheckBox::indicator:unchecked {{
    border: 1px solid #8a9099;
    background: {c.plot_background};
    width: 12px;
    height: 12px;
    border-radius: 2px;
}}"""


def colour_rules(c: Colours) -> str:
    """The style sheet's colours for ``c`` (``resources/style.qss`` holds the rest)."""
    return f"""
QLabel#sectionTitle {{ color: {c.text}; }}
QWidget#trainingPanel {{ background: {c.panel}; border: 1px solid {c.panel_border}; }}
QPushButton#primary {{ background: #3b5bdb; color: #ffffff; border: 1px solid #364fc7; }}
QPushButton#primary:focus {{ border: 2px solid {c.text}; }}
QPlainTextEdit#comparePane {{ border: 1px solid {c.border}; padding: 1px; }}
QPlainTextEdit#comparePane:focus {{ border: 2px solid palette(highlight); padding: 0px; }}
QGraphicsView#mergeTree {{ border: 1px solid {c.border}; padding: 1px; }}
QGraphicsView#mergeTree:focus {{ border: 2px solid palette(highlight); padding: 0px; }}
QPushButton:checked {{
    background: #3b5bdb;
    color: #ffffff;
    border: 1px solid #364fc7;
    border-radius: 4px;
}}{_dark_indicators(c)}
QPushButton#primary:disabled {{
    background: {"#2f3a5c" if c.dark else "#c5cae9"};
    border-color: {"#2f3a5c" if c.dark else "#c5cae9"};
    color: {"#b0b8c8" if c.dark else "#454c70"};  /* greyed, at 5:1 */
}}
QProgressBar {{
    border: 1px solid {c.border};
    background: {c.plot_background};
    color: {c.base_text};
}}
QProgressBar::chunk {{ background: {"#4263eb" if c.dark else "#748ffc"}; }}
QTableView {{
    gridline-color: {c.border};
    selection-background-color: {c.selection};
    selection-color: {c.selection_text};
}}
QHeaderView::section {{
    background: {c.header};
    color: {c.base_text};
    border: none;
    border-bottom: 1px solid {c.border};
    border-right: 1px solid {c.border};
}}
"""
