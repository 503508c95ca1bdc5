"""Legible in both colour schemes (issue 33, defect 13): every label's text, every coloured
word inside a label, the plots' notes and the editor's tokens read at WCAG AA's 4.5:1 against
what is painted behind them, in the light scheme and in the dark one; the panel and the
section titles follow the scheme.

The background behind a label is measured, not assumed: the window is rendered and the most
common colour inside the label's rectangle is what it sits on (a panel, an editor, a chip).
The text colours are the ones the label is drawn with: its palette's (style sheets set it) and
each colour a rich-text span names. Contrast is WCAG's, computed here from its definition."""

from __future__ import annotations

import re

import numpy as np
import pytest
from gui_helpers import train_in_window
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QLabel, QWidget

from bpe_studio.gui.app import DEMO_CORPUS
from bpe_studio.gui.views import theme

MIN_CONTRAST = 4.5
SPAN_COLOUR = re.compile(r"<(?:span|b|font)[^>]*color:\s*(#[0-9a-fA-F]{6})[^>]*>([^<]*)<")


def wcag_luminance(colour: QColor) -> float:
    """Relative luminance as WCAG 2 defines it (sRGB, linearised)."""
    out = 0.0
    for weight, value in (
        (0.2126, colour.red()),
        (0.7152, colour.green()),
        (0.0722, colour.blue()),
    ):
        c = value / 255
        out += weight * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
    return out


def ratio(a: QColor, b: QColor) -> float:
    la, lb = sorted((wcag_luminance(a), wcag_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def pixels(image: QImage) -> np.ndarray:
    """The image's pixels as 0xAARRGGBB, rows by columns (a copy: the image may go)."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    width, height, row = image.width(), image.height(), image.bytesPerLine() // 4
    data = np.frombuffer(image.constBits(), dtype=np.uint32, count=height * row)
    return data.reshape(height, row)[:, :width].copy()


def most_common(block: np.ndarray) -> QColor:
    values, counts = np.unique(block.ravel(), return_counts=True)
    rgb = int(values[np.argmax(counts)])
    return QColor((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255)


def text_colours(label: QLabel) -> list[tuple[QColor, str]]:
    """The colours the label's words are drawn in, each with a sample of its words."""
    text = label.text()
    found = [(QColor(colour), words) for colour, words in SPAN_COLOUR.findall(text)]
    plain = SPAN_COLOUR.sub("<", text)
    rest = re.sub(r"<[^>]*>", "", plain)
    if any(ch.isalnum() for ch in rest):
        found.append((label.palette().color(QPalette.ColorRole.WindowText), rest))
    return [(c, words) for c, words in found if any(ch.isalnum() for ch in words)]


def illegible(window: QWidget) -> list[str]:
    """Every visible label of ``window`` whose words read under MIN_CONTRAST on what is
    painted behind them."""
    shot = pixels(window.grab().toImage())
    bad = []
    for label in window.findChildren(QLabel):
        if not (label.isVisible() and label.isEnabled() and label.text().strip()):
            continue
        top_left = label.mapTo(window, QPoint(0, 0))
        x, y, w, h = top_left.x(), top_left.y(), label.width(), label.height()
        block = shot[max(y, 0) : y + h, max(x, 0) : x + w]
        if block.size == 0:
            continue
        background = most_common(block)
        for colour, words in text_colours(label):
            contrast = ratio(colour, background)
            if contrast < MIN_CONTRAST:
                bad.append(
                    f"{words.strip()[:30]!r}: {colour.name()} on {background.name()} "
                    f"= {contrast:.2f}"
                )
    return bad


def plot_notes(window) -> list[str]:
    """The plots' notes and hints (pyqtgraph text) against their plot's background."""
    bad = []
    plots = [
        (window.curve.plot_widget, [window.curve.hint]),
        (window.chart.pairs_widget, [window.chart._pairs_note]),
        (window.chart.decay_widget, [window.chart._note]),
        (window.report.chart, [window.report.hint]),
    ]
    for widget, items in plots:
        background = widget.backgroundBrush().color()
        for item in items:
            colour = item.color
            if ratio(colour, background) < MIN_CONTRAST:
                bad.append(f"{item.toPlainText()[:30]!r}: {colour.name()} on {background.name()}")
    return bad


def token_formats(edit) -> list[str]:
    """The editor's token colours: each format's text on its background."""
    bad = []
    text = edit.palette().color(QPalette.ColorRole.Text)
    for fmt in (*edit._token_formats, *edit._split_formats, *edit._special_formats):
        background = fmt.background().color()
        colour = fmt.foreground().color() if fmt.hasProperty(fmt.Property.ForegroundBrush) else text
        if ratio(colour, background) < MIN_CONTRAST:
            bad.append(f"{colour.name()} on {background.name()}")
    return bad


@pytest.mark.parametrize("scheme", [theme.LIGHT, theme.DARK])
def test_labels_and_tokens_read_in_both_schemes(qtbot, app_style, window, scheme):
    app_style(scheme)
    window.resize(1600, 1000)
    train_in_window(qtbot, window, DEMO_CORPUS, 1_500)
    window.timeline.select_step(700)
    editor = window.editor
    qtbot.waitUntil(lambda: editor.spans is not None and not editor.busy, timeout=30_000)
    window.hub.select_token(300)  # the inspector's heading and details
    qtbot.waitUntil(lambda: not window.inspector.why.busy, timeout=30_000)
    qtbot.wait(100)
    dark = window.palette().color(QPalette.ColorRole.Window).lightness() < 128
    assert dark == (scheme == theme.DARK)
    assert illegible(window) == []
    assert token_formats(editor.edit) == []
    # Those formats are the ones the editor paints its spans with.
    c = theme.colours()
    painted = {p.format.background().color().name() for p in editor.edit.painted()}
    assert painted and painted <= {*c.tokens, *c.split, *c.special}
    for tab in (window.compare, window.report):
        window.tabs.setCurrentWidget(tab)
        qtbot.waitUntil(lambda tab=tab: not tab.busy, timeout=120_000)
        qtbot.wait(100)
        assert illegible(window) == [], tab
    assert plot_notes(window) == []
    pane = window.compare.panes[0]
    # The marks are painted on the tokens' backgrounds (a marked character's own format).
    marked = list(pane._marked.values())
    for fmt in (*pane._shared, *pane._differ, pane._special, *marked):
        assert ratio(fmt.foreground().color(), fmt.background().color()) >= MIN_CONTRAST


@pytest.mark.parametrize("scheme", [theme.LIGHT, theme.DARK])
def test_the_panel_and_titles_follow_the_scheme(qtbot, app_style, window, scheme):
    app_style(scheme)
    window.resize(1600, 1000)
    qtbot.wait(50)
    shot = window.grab().toImage()
    window_colour = window.palette().color(QPalette.ColorRole.Window)
    panel = window.panel
    inside = panel.mapTo(window, QPoint(4, panel.height() // 2))
    panel_colour = shot.pixelColor(inside)
    # The panel stands apart from the window a little, on the scheme's side of it.
    assert (panel_colour.lightness() < 128) == (window_colour.lightness() < 128)
    assert abs(panel_colour.lightness() - window_colour.lightness()) <= 40
    for title in window.findChildren(QLabel, "sectionTitle"):
        if title.isVisible():
            colour = title.palette().color(QPalette.ColorRole.WindowText)
            assert ratio(colour, window_colour) >= 7, title.text()


def test_the_app_follows_the_system_scheme_and_its_changes(qtbot, app_style, window, monkeypatch):
    """System (the default): dark when the platform says dark, light again when it says
    light, while the app runs; every view restyled."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    monkeypatch.setattr(theme, "system_is_dark", lambda app, palette: True)
    theme.apply_scheme(app, theme.SYSTEM)
    assert (
        theme.colours().dark and window.palette().color(QPalette.ColorRole.Window).lightness() < 128
    )
    base = window.editor.edit.palette().color(QPalette.ColorRole.Base)
    assert base.lightness() < 128
    plot = window.curve.plot_widget.backgroundBrush().color()
    assert plot.lightness() < 128
    monkeypatch.setattr(theme, "system_is_dark", lambda app, palette: False)
    app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert not theme.colours().dark
    assert window.curve.plot_widget.backgroundBrush().color().lightness() > 128
    assert token_formats(window.editor.edit) == []


def test_the_rank_plots_title_follows_the_scheme_with_a_loaded_tokenizer(qtbot, app_style, window):
    """A session audit: with a loaded tokenizer on screen (the pair chart shows notes, not
    counts), switching to dark left "Count at merge time vs rank" black on near-black."""
    from gui_helpers import FIXTURES

    with qtbot.waitSignal(window.controller.load_finished, timeout=60_000):
        window.load_tokenizer(FIXTURES / "gpt2_vocab.json")
    chart = window.chart

    def title_colour() -> str:
        found = re.search(r"color:\s*(#[0-9a-fA-F]{6})", chart.decay_plot.titleLabel.item.toHtml())
        assert found, chart.decay_plot.titleLabel.item.toHtml()
        return found.group(1).lower()

    for scheme in (theme.DARK, theme.LIGHT, theme.DARK):
        app_style(scheme)
        qtbot.wait(20)
        assert "vs rank" in chart.decay_plot.titleLabel.item.toPlainText()
        assert title_colour() == QColor(theme.colours().plot_text).name(), scheme


def test_labels_read_after_switching_scheme_with_a_token_shown(qtbot, app_style, window):
    """A keyboard audit: with a token picked, View > Appearance > Dark left the grey "id 9 ·
    1 byte" beside "Why this token"'s heading in the light scheme's grey (2.19:1 on the dark
    panel), and Step-through's grey hint too, until another token was picked. Both schemes,
    both ways, with the token still to come at the timeline's step (its heading in the
    "later" grey) and after."""
    window.resize(1600, 1000)
    train_in_window(qtbot, window, DEMO_CORPUS, 1_500)
    why, steps = window.inspector.why, window.inspector.step_through
    window.timeline.select_step(700)
    window.hub.select_token(1_000)  # made by a merge after step 700: "not learned yet"
    qtbot.waitUntil(lambda: not why.busy and why.explanation is not None, timeout=30_000)
    assert "not learned yet" in why.heading.text()
    for scheme in (theme.DARK, theme.LIGHT, theme.DARK):
        app_style(scheme)
        qtbot.wait(50)
        window.inspector.setCurrentWidget(why)
        qtbot.wait(50)
        assert illegible(window) == [], scheme
        c = theme.colours()
        heading = {colour.name() for colour, _ in text_colours(why.heading)}
        assert {QColor(c.later).name(), QColor(c.muted).name()} <= heading, scheme
        window.inspector.setCurrentWidget(steps)
        qtbot.wait(50)
        assert illegible(window) == [], scheme
        message = {colour.name() for colour, _ in text_colours(steps.message)}
        assert QColor(c.muted).name() in message, scheme
