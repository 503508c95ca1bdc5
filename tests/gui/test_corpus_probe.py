"""What Train checks of a corpus's start before the run on screen is discarded
(``gui.model.corpus_probe``): bounded reads, in the trainer's words."""

from __future__ import annotations

import json

from bpe_studio.gui.model.corpus_probe import settings_problem
from bpe_studio.gui.model.corpus_source import PROBE_BYTES, corpus_source
from bpe_studio.gui.model.state import RunSettings


def test_a_first_record_longer_than_the_probe_is_left_to_the_run(tmp_path):
    """The review: the first record was read whole and pre-tokenized on the GUI thread (a
    100 MB record held the window 19-28 s and 1.5 GB). A record whose line does not end in
    the bytes Open reads of a plain file is left to the run; a short one is still checked."""
    pattern = r"[a-z]+|\s+"  # no digit
    long_record = {"text": "words " * PROBE_BYTES + "1"}  # its digit is far past the probe
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(long_record) + "\n" + json.dumps({"text": "x"}) + "\n")
    settings = RunSettings(300, pattern=pattern)
    assert settings_problem(corpus_source([str(path)]), settings) is None
    short = tmp_path / "short.jsonl"
    short.write_text(json.dumps({"text": "words 1"}) + "\n")
    problem = settings_problem(corpus_source([str(short)]), settings)
    assert problem is not None and "short.jsonl: the record on line 1:" in problem
    assert "does not match '1'" in problem
