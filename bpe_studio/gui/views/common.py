"""Small pieces the views share: fonts, table defaults, section titles, labels that update
often. The colours are the scheme's (``theme.colours()``)."""

from __future__ import annotations

import html
import re
from typing import Any

from PySide6 import QtGui
from PySide6.QtCore import QEvent, QObject, QSettings, QSize, Qt
from PySide6.QtGui import (
    QFont,
    QFontDatabase,
    QFontMetrics,
    QHelpEvent,
    QKeyEvent,
    QKeySequence,
    QResizeEvent,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableView,
    QToolTip,
    QWidget,
)

from ...core.text.display import plural, readable_cut
from .kept_settings import AppSettings

# "1 token", "2,048 tokens": the command line's helper, under the name the views use.
counted = plural


# The application font's size the views were designed at (Qt's default on Linux). A larger
# one (the platform's, or the user's setting) scales every size the views set themselves, or
# their text would stay small, and clip, beside labels that grew.
DESIGN_POINTS = 9.0


def plain_text(rich: str) -> str:
    """The text a rich-text label or title shows (its tags dropped, its entities read)."""
    return html.unescape(re.sub(r"<[^>]*>", "", rich))


def points(size: float) -> float:
    """``size`` points, scaled as the application font is to :data:`DESIGN_POINTS` (never
    smaller than designed)."""
    app = QApplication.instance()
    current = app.font().pointSizeF() if isinstance(app, QApplication) else DESIGN_POINTS
    return size * max(1.0, current / DESIGN_POINTS)


def app_settings() -> QSettings:
    """The app's settings (scheme, save format, recent Hub models, dialogs' folders, the
    window's layout): one organisation and application name for every view; a value set is
    written at once, and a file that does not keep it is said once (``kept_settings``)."""
    return AppSettings()


def monospace_font(point_size: float | None = None) -> QFont:
    """The platform's fixed-width font, at ``point_size`` (else its own size), scaled by
    :func:`points`."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    size = point_size if point_size is not None else font.pointSizeF()
    if size > 0:  # a font sized in pixels has no point size to scale
        font.setPointSizeF(points(size))
    return font


def not_a_tab_stop(chart: QWidget) -> None:
    """Leave ``chart`` (a pyqtgraph plot) out of the Tab order. pyqtgraph makes every plot
    take the focus, for zoom keys only its rectangle mode reads, and a plot draws no focus:
    Tab stopped on each chart, showed nothing and did nothing there. The mouse's pan and zoom
    need no focus, and what a click on a chart does has a control of its own (the lab's
    category box for a category's bar)."""
    chart.setFocusPolicy(Qt.FocusPolicy.NoFocus)


def title_label(text: str) -> QLabel:
    """A section title (for one whose text changes, hold it in a :class:`SteadyLabel`)."""
    label = QLabel(text)
    label.setObjectName("sectionTitle")
    return label


class SteadyLabel(QWidget):
    """A label whose changing text never re-lays out the window around it.

    subtle: ``QLabel.setText`` always asks for room again (``QWidget.updateGeometry``), and
    the request climbs every layout up to the window: each layout re-lays out its widget and
    asks that widget's parent in turn, stopping only at a widget of fixed size. On the way,
    the tab widget repaints its whole page for every request it gets. The labels updated in
    each training frame would make the window repaint entirely several times per frame
    (docs/responsiveness.md). This widget holds its label without a layout, so the label's
    request ends here: its own size hint is fixed (the width of ``longest``; the height of
    the text, which asks for a relayout only when it changes) and it lays the label over its
    whole area itself. The label's text methods are forwarded; a style sheet or tooltip set
    on this widget applies to the label too.

    Text wider than the label never just stops mid-word: plain text is cut with "…" after
    its last whole part that fits (:func:`cut_between_parts`) and shown whole in the tooltip,
    or wraps (``wrap``); rich text, which cannot be cut so, wraps onto more lines
    (the label then asks for the height it needs).

    One line of plain text has one height whatever its script: a line of Chinese is laid
    out in a fallback font whose lines are taller, and a label asking for that room moved
    everything under it by a few pixels each time its text switched scripts. The height is
    that of a line holding the tallest usual scripts at once (:data:`TALL_LINE`)."""

    def __init__(
        self, label: QLabel, longest: str = "", parent: QWidget | None = None, *, wrap: bool = False
    ) -> None:
        super().__init__(parent)
        self.label = label
        self._wrap = wrap  # plain text too wide wraps instead of being cut
        label.setParent(self)
        label.ensurePolished()  # the style sheet's font, before measuring
        width = label.fontMetrics().horizontalAdvance(longest) + 12 if longest else 40
        self._line_height = _line_height(label)
        self._hint = QSize(width, max(label.sizeHint().height(), self._line_height))
        self._text = label.text()  # in full; the label may show it cut
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(width)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return self._hint

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(self.minimumWidth(), self._hint.height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        self.label.setGeometry(self.rect())
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._show()

    def setText(self, text: str) -> None:  # noqa: N802 - QLabel's API
        if text == self._text:
            return
        self._text = text
        self._show()

    def _plain(self) -> bool:
        label = self.label
        fmt = label.textFormat()
        return fmt == Qt.TextFormat.PlainText or (
            fmt == Qt.TextFormat.AutoText and not QtGui.Qt.mightBeRichText(self._text)
        )

    def _show(self) -> None:
        label, text = self.label, self._text
        room = self.width() - 2 * label.margin() - 4
        metrics = label.fontMetrics()
        if self._plain():
            shown = text
            too_wide = "\n" not in text and metrics.horizontalAdvance(text) > room > 0
            clipped = False
            if self._wrap:
                if label.wordWrap() != too_wide:
                    label.setWordWrap(too_wide)
                # A word wider than the label is clipped even when the lines wrap.
                clipped = too_wide and max(map(metrics.horizontalAdvance, text.split())) > room
            elif too_wide:
                shown = cut_between_parts(text, metrics, room)
            tip = text if shown != text or clipped else ""
            if label.toolTip() != tip:
                label.setToolTip(tip)
            if shown != label.text():
                label.setText(shown)
        else:
            label.setText(text)
            # subtle: measured as laid out, spans in larger fonts included (the text without
            # its tags, in the label's font, fell short of a heading's 15 pt token, which
            # was then cut at the label's edge instead of wrapped).
            doc = QTextDocument()
            doc.setDocumentMargin(0)
            doc.setDefaultFont(label.font())
            doc.setHtml(text)
            wrap = doc.idealWidth() > room > 0
            if label.wordWrap() != wrap:
                label.setWordWrap(wrap)
        # subtle: asking for the size hint lays a rich-text or selectable label's text out
        # now (laid out lazily inside its paint, it asks for a repaint from there, which Qt
        # posts as one more repaint of the window), and tells whether the text's height
        # changed (a heading in a bigger font, a wrapped line): only then does the layout
        # hear of it.
        if label.wordWrap() and self.width() > 0:
            height = label.heightForWidth(self.width())
        elif self._plain() and "\n" not in text:
            height = self._line_height  # one line, whatever its script
        else:
            height = max(label.sizeHint().height(), self._line_height)
        if height != self._hint.height():
            self._hint = QSize(self._hint.width(), height)
            self.updateGeometry()

    def text(self) -> str:
        """The text in full (the label may show it cut)."""
        return self._text

    def setTextFormat(self, fmt: Qt.TextFormat) -> None:  # noqa: N802 - QLabel's API
        self.label.setTextFormat(fmt)

    def textFormat(self) -> Qt.TextFormat:  # noqa: N802 - QLabel's API
        return self.label.textFormat()

    def setTextInteractionFlags(self, flags: Qt.TextInteractionFlag) -> None:  # noqa: N802
        self.label.setTextInteractionFlags(flags)


# Latin with an accent above and a descender, a CJK character and an emoji: a line holding
# them is as tall as a line of the app's usual scripts gets (their fallback fonts' lines are
# the tallest). No script that needs shaping (Devanagari, Thai): a system without a font for
# one would walk every fallback font for it (views/glyph_warmup.py).
TALL_LINE = "Ág中😀"


def _line_height(label: QLabel) -> int:
    """The height ``label`` asks for to show one line of :data:`TALL_LINE`."""
    text, fmt = label.text(), label.textFormat()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(TALL_LINE)
    height = label.sizeHint().height()
    label.setTextFormat(fmt)
    label.setText(text)
    return int(height)


def steady_label(label: QLabel, longest: str = "", *, wrap: bool = False) -> SteadyLabel:
    """``label`` held in a :class:`SteadyLabel` (add that to the layout): its text changes
    never re-lay out the window. It keeps the width of ``longest`` (and whatever its layout
    gives it beyond that); ``wrap``: plain text too wide for it wraps instead of being cut."""
    return SteadyLabel(label, longest, wrap=wrap)


PART = " · "  # between the parts of a status or summary line

# The most of a token's bytes a cell, label or tooltip shows; a longer token shows its start
# and end around "…". (A run on 4 MB of one letter made a 4 MB token: the merge table and the
# timeline laid its text out on every paint, 14 s a frame, and held the trainer meanwhile.)
# Longer than any token of the published tokenizers, whose tokens are shown whole.
CELL_BYTES = 256


# A cell's text for Copy where the cell shows less (a token cut past CELL_BYTES): the whole.
COPY_ROLE = Qt.ItemDataRole.UserRole + 3


def token_text(token: bytes, most: int = CELL_BYTES) -> str:
    """``token`` readable (``readable_token``), its middle left out past ``most`` bytes."""
    return readable_cut(token, most)


def merged_text(left: bytes, right: bytes, most: int = CELL_BYTES) -> str:
    """``token_text(left + right, most)`` without joining two long tokens (a cell asked for on
    every paint joined two of 16 MB each time): the cut shows only the first and last
    ``most`` bytes of the pair."""
    if len(left) + len(right) <= 2 * most:
        return readable_cut(left + right, most)
    head = (left[:most] + right[:most])[:most]
    tail = (left[-most:] + right[-most:])[-most:]
    return readable_cut(head + tail, most)


def cut_between_parts(text: str, metrics: QFontMetrics, room: int) -> str:
    """``text`` cut to ``room`` pixels with "…": after its last whole part (:data:`PART`)
    that fits, so no figure or name is left half-shown ("GPT-4o (o200…"); mid-part only
    when not even the first part fits."""
    parts = text.split(PART)
    for n in range(len(parts) - 1, 0, -1):
        shown = PART.join(parts[:n]) + PART + "…"
        if metrics.horizontalAdvance(shown) <= room:
            return shown
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)


def configure_table(table: QTableView, font: QFont | None = None) -> None:
    """Defaults for the big, growing tables: fixed row heights (no per-row size queries),
    whole-row selection, no row numbers, alternating row colours, Tab to the next control."""
    if font is not None:
        table.setFont(font)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    # Tab leaves the table for the next control (the arrows move between cells), or a
    # keyboard user could not get past a table with rows.
    table.setTabKeyNavigation(False)
    table.verticalHeader().setVisible(False)
    rows = table.verticalHeader()
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(table.fontMetrics().height() + 8)
    table.horizontalHeader().setHighlightSections(False)
    table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    table.installEventFilter(_CopyWhole(table))


class _CopyWhole(QObject):
    """Ctrl+C in a table copies a cell's whole text (``COPY_ROLE``) where it shows less: Qt
    copies what the cell shows, and a token cut past CELL_BYTES was copied cut, "…" and all
    (a re-audit)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() != QEvent.Type.KeyPress or not isinstance(watched, QTableView):
            return False
        assert isinstance(event, QKeyEvent)
        if not event.matches(QKeySequence.StandardKey.Copy):
            return False
        model, index = watched.model(), watched.currentIndex()
        whole = model.data(index, COPY_ROLE) if model is not None and index.isValid() else None
        if not isinstance(whole, str):
            return False  # Qt's own copy: the text the cell shows
        QApplication.clipboard().setText(whole)
        return True


def table_width(table: QTableView) -> int:
    """The width that shows every column of ``table`` whole: its columns, its vertical scroll
    bar and its frame (what a splitter gives it at first)."""
    header = table.horizontalHeader()
    columns = sum(header.sectionSize(i) for i in range(header.count()))
    bar = table.style().pixelMetric(table.style().PixelMetric.PM_ScrollBarExtent)
    return columns + bar + 2 * table.frameWidth() + 2


def lay_out_rows_now(table: QTableView) -> None:
    """Lay out rows just inserted now, scroll bars included, rather than on Qt's zero timers,
    which run after the frame's repaint and cost the window a second repaint."""
    table.executeDelayedItemsLayout()
    table.verticalHeader().executeDelayedItemsLayout()
    table.updateGeometries()


def answer_token_tooltip(edit: Any, event: QEvent) -> bool:
    """For a text view's ``viewportEvent``: True when ``event`` asked for a tooltip, now shown
    as ``edit.tooltip_html(char)`` for the character ``edit.char_at(pos)`` under the pointer
    (or hidden where there is none)."""
    if event.type() != QEvent.Type.ToolTip or not isinstance(event, QHelpEvent):
        return False
    char = edit.char_at(event.pos())
    text = edit.tooltip_html(char) if char is not None else None
    if text:
        QToolTip.showText(event.globalPos(), text, edit.viewport())
    else:
        QToolTip.hideText()
        event.ignore()
    return True
