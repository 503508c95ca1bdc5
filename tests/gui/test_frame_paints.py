"""A frame paints the window once, after the frame: no widget repaints synchronously inside it
(docs/responsiveness.md). Timing is benchmarks/gui_bench.py's; this tests the behaviour."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject


class PaintCounter(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


def test_progress_bar_is_repainted_after_the_frame_not_inside_it(qtbot, window):
    window.show()
    qtbot.waitExposed(window)
    bar = window.panel.progress
    counter = PaintCounter()
    bar.installEventFilter(counter)
    try:
        # What each frame does while training (controls._show_progress).
        window.panel._set_bar(1000, 10, "%p%")
        for value in (250, 500, 750):
            window.panel._set_bar(1000, value, "%p%")
            assert bar.value() == value
            assert counter.paints == 0  # QProgressBar.setValue alone would have painted here
        qtbot.waitUntil(lambda: counter.paints > 0, timeout=10_000)
        assert bar.text() == "75%"
    finally:
        bar.removeEventFilter(counter)
