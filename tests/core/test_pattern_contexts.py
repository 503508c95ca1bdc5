"""What ``explain/pattern_contexts`` reads out of a pre-tokenizer's pattern: the characters
and literal runs it names, as ``regex`` reads the pattern."""

from __future__ import annotations

import regex

from bpe_studio.core.explain.pattern_contexts import pattern_contexts


def test_a_class_holding_an_unclosed_posix_bracket_is_read_to_its_end():
    """A review: "[[:;]" (a class of "[", ":" and ";", as regex compiles it) never ended:
    the search for the POSIX class's ":]" found none and started the class over."""
    pattern = r"[[:;]+|\w+|\s+|."
    regex.compile(pattern)
    assert {":", ";"} <= set(pattern_contexts([pattern]))
    assert ":" in pattern_contexts([r"[[:x]]"])


def test_a_verbose_patterns_comments_and_spaces_are_not_read_as_its_characters():
    """A review: under (?x) the comment's letters and the spaces took the places of the
    texts that keep a token whole ("'s" was never tried)."""
    verbose = "(?x) # a comment naming words\n \\w+[\\ \\t]*'s | \\w | \\s | .\n"
    plain = r"\w+[ \t]*'s|\w|\s|."
    assert regex.compile(verbose).flags & regex.VERBOSE
    assert pattern_contexts([verbose]) == pattern_contexts([plain])
    assert "'s" in pattern_contexts([verbose])


def test_an_escaped_character_beyond_ascii_is_itself():
    r""" "\²" is the character "²" (to regex and to Oniguruma), not a group's number nor a
    class: the literal run "x²y" is read as the pattern holds it."""
    for pattern, literal in ((r"x\²y|\s+|.", "x²y"), (r"x\٣y|.", "x٣y")):
        assert regex.fullmatch(pattern, literal)
        assert literal in pattern_contexts([pattern])
