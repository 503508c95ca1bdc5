"""One quoting rule for patterns in messages (#32): a named pattern by its name, a regex in
shell single quotes, exactly as typed (``repr`` doubled its backslashes in some messages,
others showed it bare in parentheses, cut at 60 characters)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from core_helpers import REPO_ROOT, write_text

from bpe_studio.core import Tokenizer, count_text, pretokenizer
from bpe_studio.core.pretokenization.names import shown_pattern

REGEX = r"\p{L}+|\s+|[^\p{L}\s]+"


def test_the_rule():
    assert shown_pattern("o200k_base") == "o200k" and shown_pattern("GPT-2") == "gpt2"
    assert shown_pattern(REGEX) == f"'{REGEX}'"
    assert shown_pattern("it's") == "'it'\"'\"'s'"


def test_every_message_shows_a_regex_as_typed():
    with pytest.raises(ValueError) as bad:
        pretokenizer(r"(\w+")
    assert str(bad.value).startswith(r"pattern '(\w+' is not a valid regex")
    with pytest.raises(ValueError) as uncovered:
        count_text("two words!", pattern=r"\w+|\s+")
    assert r"the pattern '\w+|\s+' does not match '!'" in str(uncovered.value)
    with pytest.raises(ValueError) as differs:
        Tokenizer.load("o200k_base", pattern=REGEX)
    assert str(differs.value).endswith(
        f"the preset gives its own pattern, o200k; a different one, '{REGEX}', cannot be applied"
    )


def test_the_command_line_summary_shows_it_the_same_way(tmp_path):
    corpus = write_text(tmp_path / "c.txt", "some words, and more words\n" * 40)
    result = subprocess.run(
        [sys.executable, "-m", "bpe_studio", "train", str(corpus), "--vocab-size", "270",
         "--pattern", REGEX, "--format", "gpt2", "--out", str(tmp_path / "o")],
        capture_output=True, text=True, env={"PYTHONPATH": str(REPO_ROOT), "PATH": ""},
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"pattern: '{REGEX}'" in result.stderr.splitlines()
    assert f"load them with --pattern '{REGEX}' to split" in result.stderr
