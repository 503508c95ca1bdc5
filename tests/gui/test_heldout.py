"""Which corpora the compression curve calls English-like (and so like its default held-out
text): real text from the fixtures, whose language and kind are known."""

from __future__ import annotations

import pytest
from gui_helpers import FIXTURES

from bpe_studio.gui.model.curves import DEFAULT_HELDOUT
from bpe_studio.gui.model.heldout import english_like, heldout_label


@pytest.mark.parametrize(
    "name", ["english_books_slice.txt", "tinystories_slice.txt", "mixed_web_slice.txt"]
)
def test_english_prose_is_english_like(name):
    assert english_like(FIXTURES / name)


@pytest.mark.parametrize("name", ["chinese_slice.txt", "code_slice.txt"])
def test_other_text_is_not(name):
    assert not english_like(FIXTURES / name)


def test_the_default_heldout_text_is_english_like_and_named_for_what_it_is(tmp_path):
    assert english_like(DEFAULT_HELDOUT)
    assert heldout_label(DEFAULT_HELDOUT) == "TinyStories validation (English, bundled)"
    assert heldout_label(tmp_path / "mine.txt") == "mine.txt"


def test_empty_or_missing_files_are_not(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert not english_like(empty)
    assert not english_like(tmp_path / "missing.txt")
