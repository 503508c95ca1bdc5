"""Fuzzy matching, the regex module's own: :func:`fuzzy_at` and :data:`FUZZY_REASON`.

What it does: finds a fuzzy constraint (``(?:the){e<=1}``: "the" with up to one error;
``{i,d}``, ``{1<=e<=2}``, ``{2i+2d+1s<=4}``, ``{e<=1:[a-z]}``), which neither tiktoken's
regex engine (Rust's fancy-regex) nor Oniguruma (``tokenizers``) has: both read the braces as
text, so a file written with one would split text otherwise, with no error (an audit: tiktoken
gave 12,753 ids where this project gave 12,665). Both pattern checks refuse it. What it leaves
out: where the braces stand (each check walks its engine's syntax, skipping classes and
escapes, where a "{" is no constraint).
"""

from __future__ import annotations

import regex

# Braces a fuzzy constraint could be: an error kind (e, i, d or s) standing alone, after an
# optional lower bound or cost, with nothing that could end the braces early.
_CANDIDATE = regex.compile(r"\{[0-9<=+,\s]*[eids](?![A-Za-z])[^{}\\()|]*\}")
# An inline flag group turning verbose mode on, where white space in the braces is left out.
_VERBOSE = regex.compile(r"\(\?[a-zA-Z]*x[a-zA-Z-]*[:)]")

FUZZY_REASON = (
    "is fuzzy matching, which only Python's regex module has: tiktoken's regex engine "
    "(Rust's fancy-regex) and Oniguruma (which tokenizers runs) read the braces as text"
)


def fuzzy_at(pattern: str, i: int) -> str | None:
    """The fuzzy constraint opening at ``pattern[i]`` (its braces), as the regex module reads
    it; None where the braces there are text to it (``{2e}``, ``{ e}``) or no brace opens.

    >>> fuzzy_at("(?:the){e<=1}", 7)
    '{e<=1}'
    >>> fuzzy_at("a{2e}", 1) is None
    True
    >>> fuzzy_at("(?x)a{ e<=1 }", 5)
    '{ e<=1 }'
    """
    m = _CANDIDATE.match(pattern, i)
    if m is None:
        return None
    braces = m.group()
    # Decided by the regex module itself, which reads the braces as text where they are no
    # constraint it knows: as text, "x" followed by them matches only itself. Verbose mode
    # anywhere before counts (over-approximated: "{ e<=1 }" is a constraint there only).
    verbose = "(?x)" if _VERBOSE.search(pattern, 0, i) else ""
    try:
        compiled = regex.compile(verbose + "x" + braces)
    except regex.error:
        return None
    text = "x" + ("".join(braces.split()) if verbose else braces)
    as_text = compiled.fullmatch(text) is not None and compiled.fullmatch("x") is None
    return None if as_text else braces
