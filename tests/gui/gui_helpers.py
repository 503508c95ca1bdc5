"""Helpers for the GUI tests: where the data is, how to wait for a training run, and a paint
counter."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from bpe_studio.core.train.pair_history import PairHistory

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
EOT = "<|endoftext|>"


def train_in_window(
    qtbot, window, corpus: Path, vocab_size: int, specials: str = EOT, timeout: int = 60_000
):
    """Open ``corpus``, click Train, and wait for the run's result."""
    assert window.open_corpus(corpus)
    window.panel.vocab_spin.setValue(vocab_size)
    window.panel.specials_edit.setText(specials)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    with qtbot.waitSignal(window.controller.session.finished, timeout=timeout) as blocker:
        pass
    return blocker.args[0]


def bad_after_probe(path: Path, bad: bytes = "caf\u00e9 au lait\n".encode("latin-1")) -> Path:
    """Write a text file that is UTF-8 through what Open reads of it
    (``corpus_source.PROBE_BYTES``) and not after it (``bad``), so that Open takes it and
    Train fails on it; returns ``path``."""
    from bpe_studio.gui.model.corpus_source import PROBE_BYTES

    line = b"hello world, this is text\n"
    path.write_bytes(line * (PROBE_BYTES // len(line) + 1) + bad)
    return path


def paused_in_window(qtbot, window, corpus: Path, vocab_size: int, after: int, workers=None):
    """Open ``corpus``, click Train, and wait until the run has paused after merge index
    ``after`` (so ``after + 1`` merges are made); the run's session."""
    assert window.open_corpus(corpus)
    window.panel.vocab_spin.setValue(vocab_size)
    if workers is not None:
        window.panel.workers_spin.setValue(workers)
    window.start_training()
    session = window.controller.session
    session.pause_after(after)
    qtbot.waitUntil(lambda: session.worker_waiting, timeout=30_000)
    return session


def shown(qtbot, widget, width: int, height: int):
    """``widget`` as a window of that size, shown and exposed, closed after the test."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def wait_for_spans(qtbot, editor, timeout: int = 30_000):
    """Wait until the editor has painted spans for its current text and tokenizer."""
    qtbot.waitUntil(lambda: editor.spans is not None and not editor.busy, timeout=timeout)
    return editor.spans


class PaintCounter(QObject):
    """An event filter that counts the paint events of the widgets it is installed on."""

    def __init__(self) -> None:
        super().__init__()
        self.paints = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint:
            self.paints += 1
        return False


class _Rows:
    """Recorded rows given by hand (``core.train.pair_history.RecordedRows``)."""

    def __init__(self, rows: list[list[tuple[int, int, int]]]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, k: int) -> list[tuple[int, int, int]]:
        return self.rows[k]


def history_of(*steps: list[tuple[bytes, bytes, int]]) -> PairHistory:
    """A pair history whose step ``k`` holds ``steps[k]``, the pairs as given."""
    ids: dict[bytes, int] = {}
    for pairs in steps:
        for a, b, _ in pairs:
            ids.setdefault(a, len(ids))
            ids.setdefault(b, len(ids))
    rows = [[(ids[a], ids[b], c) for a, b, c in pairs] for pairs in steps]
    vocab = {i: t for t, i in ids.items()}
    return PairHistory(_Rows(rows), vocab, max((len(p) for p in steps), default=0))


def threads_running() -> bool:
    """Whether any background work of the app is alive: training, jobs, curves, the lab (the
    one list every test's teardown and the app's state machine wait on)."""
    from bpe_studio.gui.jobs.latest import busy_job_threads
    from bpe_studio.gui.model.curves import live_curve_threads
    from bpe_studio.gui.model.lab_process import live_lab_processes
    from bpe_studio.gui.training.session import live_training_threads

    return bool(
        live_training_threads()
        or busy_job_threads()
        or live_curve_threads()
        or live_lab_processes()
    )


def held_in_compile(qtbot, window, monkeypatch, tmp_path: Path, vocab_size: int = 400):
    """Click Train on a small corpus trained with the compiled merge engine whose first-run
    compile is held (it waits on the returned ``go`` Event, at most half a minute) and wait until
    the status line says it compiles; returns ``(session, go)``. (The threshold is lowered and
    the compile stands in a wrapper, so tests do not depend on numba's cache being cold.)"""
    import threading

    from bpe_studio.core.train import merge_engine, trainer
    from bpe_studio.gui.app import DEMO_CORPUS

    real_prepare = merge_engine.prepare
    compiling, go = threading.Event(), threading.Event()

    def prepare(status=None):
        compiling.set()
        go.wait(30)
        compiling.clear()
        real_prepare()

    monkeypatch.setattr(trainer, "COMPILED_FROM", 0)
    monkeypatch.setattr(merge_engine, "prepare", prepare)
    monkeypatch.setattr(merge_engine, "compiling", compiling.is_set)
    corpus = tmp_path / "small.txt"
    corpus.write_bytes(DEMO_CORPUS.read_bytes()[:200_000])
    assert window.open_corpus(corpus)
    window.panel.vocab_spin.setValue(vocab_size)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    session = window.controller.session
    qtbot.waitUntil(
        lambda: window.panel.status.text().startswith("Compiling the merge engine"),
        timeout=30_000,
    )
    return session, go


def drop_event(path: Path) -> QDropEvent:
    """The event of ``path`` dropped on a window (a copy, with the left button)."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    # subtle: the event does not own its data, which Python would free on return (a crash).
    event.held_mime = mime
    return event


def save_ended(qtbot, window, timeout: int = 60_000) -> bool:
    """Wait for the save under way (started by a menu, a button or closing) to end; whether
    it wrote its files."""
    ended: list[bool] = []
    window.controller.save_finished.connect(ended.append)
    try:
        qtbot.waitUntil(lambda: bool(ended), timeout=timeout)
    finally:
        window.controller.save_finished.disconnect(ended.append)
    return ended[0]


def save_and_wait(qtbot, window, directory, format: str = "gpt2", timeout: int = 60_000) -> bool:
    """``window.save_tokenizer`` as a script waits for it: start the save (in the
    background), wait for its end; whether it wrote its files (False also when it did not
    start: nothing to save, another save under way)."""
    ended: list[bool] = []
    window.controller.save_finished.connect(ended.append)
    try:
        if not window.save_tokenizer(directory, format):
            return False
        qtbot.waitUntil(lambda: bool(ended), timeout=timeout)
    finally:
        window.controller.save_finished.disconnect(ended.append)
    return ended[0]
