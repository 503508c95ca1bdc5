"""Open corpus reads the start of a plain text file and refuses one that is not UTF-8 there,
naming the file and the byte, before asking to discard the run on screen (as an empty or
missing file is refused); so is a compressed one, decompressed, and a glob's first files.
Records are left to the run.
A .json file whose first line is a JSON object is read as the user says: records or text."""

from __future__ import annotations

import gzip
import json

from gui_helpers import FIXTURES, train_in_window

from bpe_studio.gui.model.corpus_source import AS_RECORDS, AS_TEXT, PROBE_BYTES
from bpe_studio.gui.model.state import Phase
from bpe_studio.gui.training.controller import CANCEL

TINY = FIXTURES / "tinystories_slice.txt"


def test_a_non_utf8_file_is_refused_at_open_and_the_run_stays(qtbot, window, tmp_path):
    first = train_in_window(qtbot, window, TINY, 300)
    asked: list[str] = []
    window.ask = lambda title, question: asked.append(title) or True
    for name, data, offset in (
        ("latin1.txt", "caf\u00e9 au lait\n".encode("latin-1") * 10, 3),
        ("binary.bin", b"\x00\xff\xfe" * 100, 1),
    ):
        bad = tmp_path / name
        bad.write_bytes(data)
        window.last_error = None
        assert not window.open_corpus(bad)
        assert window.last_error is not None
        assert str(bad) in window.last_error
        assert f"not valid UTF-8 at byte offset {offset}" in window.last_error
    assert asked == []  # refused before any question: the run was never at stake
    assert window.state.result is first and window.state.phase is Phase.FINISHED
    assert window.state.corpus == TINY.resolve()


def test_a_glob_matching_a_file_not_utf8_is_refused_at_open_and_the_run_stays(
    qtbot, window, tmp_path
):
    """An audit (wrong order): a glob was opened unread (Open read only the files given by
    name), after "Discard the trained tokenizer?" had let the run on screen go for it, and
    the run then failed at once on a file it matched that is not UTF-8: nothing was left.
    Open reads the start of a glob's first files as it does a file named."""
    first = train_in_window(qtbot, window, TINY, 300)
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.txt").write_text("Once upon a time there was a cat.\n" * 50, encoding="utf-8")
    (shards / "b.txt").write_bytes(b"\x00\xff\xfe" * 100)
    asked: list[str] = []
    window.ask = lambda title, question: asked.append(title) or True
    window.last_error = None
    assert not window.open_corpus([str(shards / "*.txt")])
    assert window.last_error is not None
    assert "b.txt" in window.last_error and "not valid UTF-8 at byte offset 1" in window.last_error
    assert asked == []  # refused before the question: the run was never at stake
    assert window.state.result is first and window.state.corpus == TINY.resolve()
    (shards / "b.txt").write_text("The end.\n", encoding="utf-8")
    assert window.open_corpus([str(shards / "*.txt")]), window.last_error


def test_a_compressed_file_not_utf8_is_refused_at_open_and_the_run_stays(qtbot, window, tmp_path):
    """An audit (wrong order): a .txt.gz whose text is not UTF-8 opened (after "Discard the
    trained tokenizer?" let the run on screen go) and Train then failed at once on it. Open
    reads the start of its text, decompressed, as it does a plain file's."""
    first = train_in_window(qtbot, window, TINY, 300)
    bad = tmp_path / "bad.txt.gz"
    bad.write_bytes(gzip.compress("caf\u00e9 au lait\n".encode("latin-1") * 10))
    asked: list[str] = []
    window.ask = lambda title, question: asked.append(title) or True
    window.last_error = None
    assert not window.open_corpus(bad)
    assert window.last_error is not None
    assert str(bad) in window.last_error and "not valid UTF-8 at byte offset 3" in window.last_error
    assert asked == [] and window.state.result is first


def test_a_character_cut_by_the_probe_and_other_corpora_open(qtbot, window, tmp_path):
    # "é" is two bytes: the probe ends inside one, which is no fault of the file.
    cut = tmp_path / "accents.txt"
    cut.write_bytes(b"a" + "\u00e9".encode() * PROBE_BYTES)
    assert window.open_corpus(cut), window.last_error
    # A compressed file whose text is UTF-8 opens; records are read, and checked, by the run.
    compressed = tmp_path / "text.txt.gz"
    compressed.write_bytes(gzip.compress("caf\u00e9 au lait\n".encode() * 100))
    assert window.open_corpus(compressed), window.last_error
    records = tmp_path / "rows.jsonl"
    records.write_text("\n".join(json.dumps({"text": f"row {i}"}) for i in range(50)))
    assert window.open_corpus(records), window.last_error


def test_a_tar_archive_is_refused_at_open(qtbot, window, tmp_path):
    """The first-hour audit: a .tar.gz opened and trained on, headers and all."""
    import tarfile

    text = tmp_path / "story.txt"
    text.write_text("Once upon a time " * 50, encoding="utf-8")
    archive = tmp_path / "stories.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(text, arcname="story.txt")
    window.last_error = None
    assert not window.open_corpus(archive)
    assert window.last_error is not None
    assert "stories.tar.gz: a tar archive, not text" in window.last_error


def test_a_json_file_of_records_is_read_as_the_user_says(qtbot, window, tmp_path):
    """Audit h_tui61: a .json of JSON Lines was trained on as text, braces and field names
    included, where the command line refuses it without --records."""
    words = ("lantern", "harbour", "meadow", "pebble", "thistle", "copper")
    lines = [json.dumps({"text": f"{a} {b} {a}{b}"}) for a in words for b in words]
    corpus = tmp_path / "rows.json"
    corpus.write_text(("\n".join(lines) + "\n") * 4, encoding="utf-8")
    asked: list[str] = []

    def answer(choice):
        def ask(title, question):
            asked.append(question)
            return choice

        return ask

    window.ask_records = answer(CANCEL)
    assert not window.open_corpus(corpus)
    assert window.state.corpus_source is None
    assert "rows.json: its first line is a JSON object" in asked[0]
    window.ask_records = answer(AS_TEXT)
    assert window.open_corpus(corpus)
    assert not window.state.corpus_source.records
    window.ask_records = answer(AS_RECORDS)
    assert window.open_corpus(corpus)  # the same file, read another way
    source = window.state.corpus_source
    assert source.records and source.read_as == AS_RECORDS
    assert not window.panel.text_field_edit.isHidden()
    window.panel.vocab_spin.setValue(300)
    window.panel.workers_spin.setValue(1)
    assert window.start_training()
    with qtbot.waitSignal(window.controller.session.finished, timeout=60_000) as blocker:
        pass
    assert blocker.args[0] is not None, window.last_error
    merged = [a + b for a, b in blocker.args[0].merges]
    assert merged and not [m for m in merged if b'"' in m or b"{" in m or b"text" == m]
    assert len(asked) == 3  # asked at Open only, not again at Train


def test_the_records_question_says_it_is_for_every_file_a_glob_matches(window, tmp_path):
    """The review: a glob over a .json of records and a .txt asked "Read it as records",
    without saying the answer is for every file it matches (it is, as --records is), and
    Train then refused the .txt as "not a JSON record"."""
    (tmp_path / "rows.json").write_text(json.dumps({"text": "a b"}) + "\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("plain notes\n", encoding="utf-8")
    asked: list[str] = []
    window.ask_records = lambda title, question: asked.append(question) or CANCEL
    assert not window.open_corpus(str(tmp_path / "*"))
    assert "(and every other file of the corpus)" in asked[0]
    asked.clear()
    assert not window.open_corpus(tmp_path / "rows.json")
    assert "every other file" not in asked[0]
