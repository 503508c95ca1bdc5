"""What the panel says of a corpus (issue 33, defect 10): a corpus of several files is named by
its file count, size and files, cut with "…" in whatever room the panel has and whole in its
tooltip; progress through compressed files says its bytes are compressed ones (the count is of
the bytes as stored); while a cluster starts or a scheduler is reached, the status line says
so instead of "Pre-tokenizing…"."""

from __future__ import annotations

import gzip
from pathlib import Path

from gui_helpers import FIXTURES
from PySide6.QtGui import QTextDocument

from bpe_studio.gui.model.corpus_source import corpus_source
from bpe_studio.gui.model.state import Phase, RunSettings, RunState
from bpe_studio.gui.model.status import format_bytes, status_text


def plain(rich: str) -> str:
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


def two_files(tmp_path: Path) -> list[Path]:
    paths = []
    for name, source in (("tinystories.txt", "tinystories_slice.txt"), ("books.txt", "german.txt")):
        path = tmp_path / name
        path.write_bytes((FIXTURES / source).read_bytes())
        paths.append(path)
    return paths


def test_a_corpus_of_two_files_is_named_by_count_size_and_files(qtbot, app_style, window, tmp_path):
    paths = two_files(tmp_path)
    assert window.open_corpus([str(p) for p in paths])
    label = window.panel.corpus_label
    size = format_bytes(sum(p.stat().st_size for p in paths))
    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: label.width() > 300, timeout=5_000)
    shown = plain(label.text())
    assert shown.startswith("2 files · text · ") and size in shown
    assert "tinystories.txt, books.txt" in shown
    tip = plain(label.toolTip())
    assert all(str(p) in tip for p in paths)
    # Narrow: cut with "…" inside, never mid-word at the edge; the count and size stay.
    label.resize(260, label.height())
    narrow = label.shown_plain
    assert narrow.startswith("2 files · ") and "…" in narrow
    assert label.fontMetrics().horizontalAdvance(narrow) <= label.width()
    assert plain(label.toolTip()) == tip


def test_progress_through_compressed_files_says_so(tmp_path):
    text = (FIXTURES / "tinystories_slice.txt").read_bytes()
    packed = tmp_path / "stories.txt.gz"
    packed.write_bytes(gzip.compress(text))
    source = corpus_source([str(packed)])
    state = RunState(corpus=None, phase=Phase.PRE_TOKENIZING, elapsed=2.0)
    state.corpus_source = source
    state.bytes_done, state.bytes_total = source.size // 2, source.size
    line = status_text(state)
    assert f"{format_bytes(source.size // 2)} / {format_bytes(source.size)} compressed" in line
    # Several files, some compressed: the bytes are as stored.
    plain_file = tmp_path / "more.txt"
    plain_file.write_bytes(text)
    state.corpus_source = corpus_source([str(packed), str(plain_file)])
    assert " as stored" in status_text(state)
    state.corpus_source = corpus_source([str(plain_file)])
    assert "compressed" not in status_text(state) and "stored" not in status_text(state)


def test_the_label_of_a_compressed_file_says_compressed(qtbot, window, tmp_path):
    packed = tmp_path / "stories.txt.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "tinystories_slice.txt").read_bytes()))
    assert window.open_corpus(str(packed))
    shown = plain(window.panel.corpus_label.text())
    assert shown.startswith("stories.txt.gz · text · ") and " compressed" in shown


def test_reaching_a_cluster_says_so(qtbot, window):
    state = RunState(corpus=Path("books.txt"), phase=Phase.PRE_TOKENIZING, elapsed=3.0)
    state.settings = RunSettings(1_000, (), cluster="tcp://10.1.2.3:8786")
    assert status_text(state).startswith("Connecting to the Dask scheduler tcp://10.1.2.3:8786…")
    state.settings = RunSettings(1_000, (), cluster="local:3")
    assert status_text(state).startswith("Starting a local Dask cluster of 3 workers…")
    # Once the cluster counts, the core's line says where; the amounts come first.
    state.counting_on = "pre-tokenizing on the Dask cluster local:3: 9 tasks on 3 workers"
    state.bytes_done, state.bytes_total = 1_000, 4_000
    line = status_text(state)
    assert line.startswith("Pre-tokenizing: 1.0 kB / 4.0 kB · ")
    assert line.endswith("on the Dask cluster local:3: 9 tasks on 3 workers")
    # The panel shows it while the run waits for the scheduler.
    hub = window.hub
    hub.state.phase = Phase.PRE_TOKENIZING
    hub.state.settings = RunSettings(1_000, (), cluster="tcp://10.1.2.3:8786")
    hub.updated.emit()
    assert window.panel.status.text().startswith("Connecting to the Dask scheduler")
    hub.state.phase = Phase.IDLE
    hub.updated.emit()


def test_the_pre_tokenizers_first_compile_is_said_until_text_is_counted():
    """The first-run audit: while the pre-tokenizer compiled (about 10 s), the window said
    "Pre-tokenizing… · 9.2 s elapsed", the bar at 0%; the command line says the compile."""
    from bpe_studio.core.pretokenization.scan_load import COMPILING

    state = RunState(corpus=Path("books.txt"), phase=Phase.PRE_TOKENIZING, elapsed=9.0)
    state.counting_on = COMPILING
    said = "Compiling the pre-tokenizer (first run only)… · "
    for total in (0, 37_943_669):  # the size not known yet, or known
        state.bytes_total = total
        assert status_text(state).startswith(said)
    state.bytes_done = 1 << 20  # counting has begun: the compile is over
    assert status_text(state).startswith("Pre-tokenizing: ")
