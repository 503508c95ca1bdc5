"""A platform palette of the scheme wanted is kept, its illegible text pairs mended (audit t11).

In the light scheme on a light platform palette (Qt's own Fusion colours, what offscreen and
bare X11 give; KDE's Breeze is alike) the app used the palette as it came: selected text was
white on #308cc6 (3.7:1) and placeholders half-transparent black, #7f7f7f on white (4.0:1).
Now every pair of text and what it is drawn on that reads under 4.5:1 takes the app's own
palette's colours for that pair, in either scheme; the pairs that read keep the desktop's.

The platform palettes are built here, not taken from the machine; the contrast is WCAG's,
computed here from its definition, a translucent text blended into its background first.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QPalette
from test_contrast import wcag_luminance

from bpe_studio.gui.views import theme

Group, Role = QPalette.ColorGroup, QPalette.ColorRole
ACTIVE, INACTIVE, DISABLED = Group.Active, Group.Inactive, Group.Disabled
MIN_CONTRAST = 4.5

# Text on what it is drawn on: focused, in a window that is not, and greyed (disabled).
READ = [
    (Role.WindowText, Role.Window),
    (Role.Text, Role.Base),
    (Role.Text, Role.AlternateBase),
    (Role.ButtonText, Role.Button),
    (Role.HighlightedText, Role.Highlight),
    (Role.PlaceholderText, Role.Base),
    (Role.ToolTipText, Role.ToolTipBase),
]
PAIRS = [(g, t, b) for g in (ACTIVE, INACTIVE) for t, b in READ] + [
    (DISABLED, t, b)
    for t, b in (
        (Role.WindowText, Role.Window),
        (Role.Text, Role.Base),
        (Role.ButtonText, Role.Button),
    )
]


def drawn(text: QColor, background: QColor) -> QColor:
    """``text`` as it shows on ``background``: blended by its alpha."""
    a = text.alpha() / 255
    return QColor(
        *(
            round(t * a + b * (1 - a))
            for t, b in (
                (text.red(), background.red()),
                (text.green(), background.green()),
                (text.blue(), background.blue()),
            )
        )
    )


def ratio(text: QColor, background: QColor) -> float:
    high, low = sorted(
        (wcag_luminance(drawn(text, background)), wcag_luminance(background)), reverse=True
    )
    return (high + 0.05) / (low + 0.05)


def short_pairs(palette: QPalette) -> list[str]:
    out = []
    for group, text, background in PAIRS:
        fg, bg = palette.color(group, text), palette.color(group, background)
        if ratio(fg, bg) < MIN_CONTRAST:
            out.append(
                f"{group.name} {text.name} {fg.name(QColor.NameFormat.HexArgb)} on "
                f"{background.name} {bg.name()}: {ratio(fg, bg):.2f}"
            )
    return out


def build(colours: dict[Role, str], disabled: dict[Role, str]) -> QPalette:
    """A palette with exactly these colours: ``colours`` in every group, then ``disabled``."""
    palette = QPalette()
    for role, colour in colours.items():
        palette.setColor(role, QColor.fromString(colour))  # every group
    for role, colour in disabled.items():
        palette.setColor(DISABLED, role, QColor.fromString(colour))
    return palette


def fusion_light() -> QPalette:
    """Qt's Fusion light palette (``qt_fusionPalette``), the one offscreen and bare X11 give."""
    return build(
        {
            Role.Window: "#efefef",
            Role.WindowText: "#000000",
            Role.Base: "#ffffff",
            Role.AlternateBase: "#f7f7f7",
            Role.Text: "#000000",
            Role.Button: "#efefef",
            Role.ButtonText: "#000000",
            Role.Highlight: "#308cc6",
            Role.HighlightedText: "#ffffff",
            Role.PlaceholderText: "#80000000",
            Role.ToolTipBase: "#ffffdc",
            Role.ToolTipText: "#000000",
            Role.BrightText: "#ffffff",
            Role.Light: "#ffffff",
            Role.Mid: "#b8b8b8",
            Role.Dark: "#9f9f9f",
            Role.Link: "#0000ff",
        },
        {
            Role.WindowText: "#bebebe",
            Role.Text: "#bebebe",
            Role.ButtonText: "#bebebe",
            Role.Base: "#efefef",
            Role.Highlight: "#919191",
        },
    )


def dark_with_faults() -> QPalette:
    """A dark desktop's palette (Breeze Dark's colours) whose selection, placeholders and
    greyed text read under 4.5:1."""
    return build(
        {
            Role.Window: "#31363b",
            Role.WindowText: "#eff0f1",
            Role.Base: "#232629",
            Role.AlternateBase: "#31363b",
            Role.Text: "#eff0f1",
            Role.Button: "#31363b",
            Role.ButtonText: "#eff0f1",
            Role.Highlight: "#3daee9",
            Role.HighlightedText: "#eff0f1",
            Role.PlaceholderText: "#60ffffff",
            Role.ToolTipBase: "#31363b",
            Role.ToolTipText: "#eff0f1",
        },
        {Role.WindowText: "#6e7175", Role.Text: "#6e7175", Role.ButtonText: "#6e7175"},
    )


def legible_light() -> QPalette:
    """A light desktop's palette that reads everywhere, in colours of its own."""
    return build(
        {
            Role.Window: "#e8eaee",
            Role.WindowText: "#1b1e22",
            Role.Base: "#fbfbfd",
            Role.AlternateBase: "#f0f2f5",
            Role.Text: "#1b1e22",
            Role.Button: "#dfe2e7",
            Role.ButtonText: "#1b1e22",
            Role.Highlight: "#1d5c96",
            Role.HighlightedText: "#fdfdfd",
            Role.PlaceholderText: "#5c6068",
            Role.ToolTipBase: "#fff8d0",
            Role.ToolTipText: "#202020",
        },
        {Role.WindowText: "#5a5d63", Role.Text: "#5a5d63", Role.ButtonText: "#4f5258"},
    )


@pytest.fixture
def platform(qapp, monkeypatch):
    """``platform(palette, dark)``: the platform gives ``palette`` and says ``dark`` or light.
    The application is left with its own platform's palette and no style sheet afterwards."""

    def set_platform(palette: QPalette, dark: bool) -> None:
        monkeypatch.setattr(theme, "platform_palette", lambda app: QPalette(palette))
        monkeypatch.setattr(theme, "system_is_dark", lambda app, p: dark)

    yield set_platform
    monkeypatch.undo()
    theme.apply_scheme(qapp, theme.SYSTEM)
    qapp.setStyleSheet("")
    qapp.setPalette(QPalette())


@pytest.mark.parametrize("choice", [theme.LIGHT, theme.SYSTEM])
def test_a_light_platform_palette_is_mended_where_its_text_reads_short(qapp, platform, choice):
    given = fusion_light()
    assert short_pairs(given)  # the faults this is about: selection, placeholder, greyed
    platform(given, dark=False)
    theme.apply_scheme(qapp, choice)
    palette = qapp.palette()
    assert short_pairs(palette) == []
    # Mended, not replaced: the desktop's window, editors and buttons keep their colours.
    for group in (ACTIVE, INACTIVE):
        for role in (Role.Window, Role.Base, Role.AlternateBase, Role.Button, Role.Text):
            assert palette.color(group, role) == given.color(group, role), role.name
    assert palette.color(Role.PlaceholderText) != palette.color(Role.Text)  # not typed text
    assert not theme.colours().dark


def test_a_dark_platform_palette_is_mended_in_the_dark_scheme(qapp, platform):
    given = dark_with_faults()
    assert short_pairs(given)
    platform(given, dark=True)
    theme.apply_scheme(qapp, theme.DARK)
    palette = qapp.palette()
    assert short_pairs(palette) == []
    for role in (Role.Window, Role.Base, Role.Button, Role.WindowText):
        assert palette.color(role) == given.color(role), role.name
    assert theme.colours().dark


@pytest.mark.parametrize("choice", [theme.LIGHT, theme.SYSTEM])
def test_a_platform_palette_that_reads_keeps_every_colour_of_its_own(qapp, platform, choice):
    given = legible_light()
    assert short_pairs(given) == []
    platform(given, dark=False)
    theme.apply_scheme(qapp, choice)
    palette = qapp.palette()
    for group in (ACTIVE, INACTIVE, DISABLED):
        for role in (r for r in Role if r not in (Role.NoRole, Role.NColorRoles)):
            assert palette.color(group, role) == given.color(group, role), (group, role)


def test_a_change_of_the_platforms_palette_is_mended_anew(qapp, platform, monkeypatch):
    """Following the system, the app mends the platform's new palette: the colours it set in
    the old one would otherwise stay (Qt keeps the roles an application sets) whatever the
    new palette's, a light placeholder on a dark editor."""
    platform(fusion_light(), dark=False)
    monkeypatch.setattr(theme.notifier(), "following", qapp)
    theme.apply_scheme(qapp, theme.SYSTEM)
    platform(dark_with_faults(), dark=True)
    theme.notifier().eventFilter(qapp, QEvent(QEvent.Type.ApplicationPaletteChange))
    palette = qapp.palette()
    assert palette.color(Role.Window) == QColor("#31363b")
    assert short_pairs(palette) == []
    assert theme.colours().dark


def button_text_contrast(button) -> float:
    """The button's text against its face, from its pixels: the face is the commonest colour
    inside its frame, the text the pixel farthest from it (the full colour of a stem)."""
    image = button.grab().toImage()
    from collections import Counter

    seen = Counter(
        image.pixelColor(x, y).rgb()
        for x in range(4, image.width() - 4)
        for y in range(4, image.height() - 4)
    )
    face = QColor.fromRgb(seen.most_common(1)[0][0])
    return max(ratio(QColor.fromRgb(rgb), face) for rgb in seen)


@pytest.mark.parametrize("scheme", [theme.LIGHT, theme.DARK])
def test_greyed_buttons_stay_legible(qtbot, qapp, platform, scheme):
    """A disabled button's text (Back, Forward, Replay; Train, the primary one, was #f8f9fa on
    #c5cae9, 1.5:1) reads at 4.5:1 on its face, on the platform's palette mended."""
    from PySide6.QtWidgets import QPushButton

    platform(fusion_light() if scheme == theme.LIGHT else dark_with_faults(), scheme == theme.DARK)
    qapp.setStyle("Fusion")
    theme.apply_scheme(qapp, scheme)
    for name in ("", "primary"):
        button = QPushButton("Forward ▶ Train")
        button.setObjectName(name)
        button.setEnabled(False)
        qtbot.addWidget(button)
        button.resize(button.sizeHint())
        assert button_text_contrast(button) >= MIN_CONTRAST, (scheme, name or "plain")
