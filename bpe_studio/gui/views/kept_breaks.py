"""What each line break of an edited text was, where the document keeps only "a break".

A ``QTextDocument`` turns ``\\r\\n``, ``\\r`` and U+2029 into one paragraph break each, as it
does ``\\n``, and drops a leading byte-order mark. The token editor tokenizes the text it was
given, so :class:`KeptBreaks` remembers those breaks by their document position, follows the
edits Qt reports (and its undo and redo), and puts them back into the document's raw text.
It holds no Qt object, so that the bookkeeping is tested on its own terms; positions are
UTF-16 units, as Qt's are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import regex

_BREAKS = regex.compile("\r\n|\r|\u2029")  # the breaks a document does not keep as "\n"
_ASTRAL = regex.compile(r"[\U00010000-\U0010FFFF]")
_PARAGRAPH = "\u2029"  # how a document's raw text ends a paragraph
_PARAGRAPH_RE = regex.compile(_PARAGRAPH)


def narrowed(
    old: bytes, new: bytes, position: int, removed: int, added: int
) -> tuple[int, int, int]:
    """Qt's report of a change (``position``, units ``removed``, units ``added``) narrowed
    to what differs between the texts before and after (UTF-16 bytes): the units both ends
    of the window share are taken out."""
    start, stop = 2 * position, 2 * (position + removed)
    if len(old) - stop != len(new) - 2 * (position + added):
        return position, removed, added  # not the change reported: left as it is
    head = 0
    while (
        head < min(removed, added)
        and old[start + 2 * head : start + 2 * head + 2]
        == new[start + 2 * head : start + 2 * head + 2]
    ):
        head += 1
    tail = 0
    while (
        tail < min(removed, added) - head
        and old[stop - 2 * tail - 2 : stop - 2 * tail]
        == new[2 * (position + added) - 2 * tail - 2 : 2 * (position + added) - 2 * tail]
    ):
        tail += 1
    return position + head, removed - head - tail, added - head - tail


@dataclass
class _Command:
    """One undo command as the bookkeeping followed it: the undo depth it reached, whether the
    text began with a BOM before it, its changes (position, units removed, units added; in
    the order made) and the breaks it dropped, at their positions before it."""

    depth: int
    bom: bool
    changes: list[tuple[int, int, int]] = field(default_factory=list)
    dropped: dict[int, str] = field(default_factory=dict)

    def before(self, position: int) -> int | None:
        """Where ``position`` (after the changes so far) was before the first; None for one
        inside text they added."""
        for start, removed, added in reversed(self.changes):
            if position >= start + added:
                position += removed - added
            elif position >= start:
                return None
        return position

    def drop(self, position: int, kind: str) -> None:
        """A break at ``position`` (before the change being made) is dropped by it."""
        at = self.before(position)
        if at is not None:
            self.dropped.setdefault(at, kind)


class KeptBreaks:
    """The breaks of a text that its document holds as a plain paragraph break (document
    position -> ``"\\r\\n"``, ``"\\r"`` or ``"\\u2029"``) and whether it began with a BOM.

    >>> kept = KeptBreaks()
    >>> kept.given("one\\r\\ntwo")
    >>> kept.text("one\\u2029two")
    'one\\r\\ntwo'
    """

    def __init__(self) -> None:
        self._breaks: dict[int, str] = {}
        self._bom = False
        self._raw16: bytes | None = None  # the raw text while there are breaks to follow
        # Undo gives a deleted break back as a plain one: so each undo command that dropped
        # some is kept (by the undo depth after it) with its changes, to follow back.
        self._undone: dict[int, _Command] = {}
        self._command: _Command | None = None  # the command the edits go into
        self._command_added = False
        self._depth = 0  # the undo depth last followed

    def given(self, text: str, raw16: Callable[[], bytes] | None = None) -> None:
        """A new text, just set in the document (whose raw UTF-16 ``raw16`` gives, when
        there are breaks to follow); undo history starts again."""
        self._bom = text.startswith("\ufeff")
        self._breaks, self._raw16 = {}, None
        self._undone, self._command, self._command_added, self._depth = {}, None, False, 0
        if "\r" not in text and _PARAGRAPH not in text:
            return
        astral = [m.start() for m in _ASTRAL.finditer(text)]
        dropped = 1 if self._bom else 0  # characters before here the document lacks
        a = 0
        for m in _BREAKS.finditer(text):
            while a < len(astral) and astral[a] < m.start():
                a += 1
            self._breaks[m.start() - dropped + a] = m.group()
            dropped += len(m.group()) - 1
        if raw16 is not None:
            self._raw16 = raw16()

    def command_added(self, depth: int) -> None:
        """Qt added an undo command, reaching ``depth``; it reports the change after."""
        self._command_added = True
        self._command = _Command(depth, self._bom)

    def edited(
        self,
        position: int,
        removed: int,
        added: int,
        *,
        depth: int,
        whole: bool,
        raw16: Callable[[], bytes],
    ) -> None:
        """Follow a change Qt reported, the undo depth after it, and whether it replaced the
        whole text; ``raw16`` gives the document's raw text after it, in UTF-16."""
        new_command, self._command_added = self._command_added, False
        # An undo or redo moves the depth by the command's steps (an edit block is several).
        undone = depth < self._depth and not new_command
        redone = depth > self._depth and not new_command
        before, self._depth = self._depth, depth
        command = self._command
        if undone and before in self._undone:
            # The document is again as it was before that command: so are its breaks, those
            # it moved followed back, those it dropped given back.
            done = self._undone[before]
            self._breaks = {
                q: s for p, s in self._breaks.items() if (q := done.before(p)) is not None
            }
            self._breaks.update(done.dropped)
            self._bom = done.bom
            self._raw16 = raw16() if self._breaks else None
            return
        if not (undone or redone):  # an edit: what could have been redone is gone
            for d in [d for d in self._undone if d > before]:
                del self._undone[d]
        if command is not None and (undone or redone or command.depth != depth):
            command = None  # not an edit of the command begun last: none to follow back
        lost = False
        if self._bom and whole:
            # The whole text replaced (select all, then type or delete): the BOM it began
            # with went with it (an editor audit: it stayed, an invisible 3 bytes, for good).
            self._bom, lost = False, True
        if self._breaks:
            new16 = raw16()
            if self._raw16 is not None:
                # subtle: Qt reports more than changed (a paste at 0 as the first paragraph
                # and its break removed and added again), which dropped a kept "\r\n" (an
                # editor audit): the texts before and after narrow it to what did change.
                position, removed, added = narrowed(self._raw16, new16, position, removed, added)
            self._raw16 = new16
            end, delta = position + removed, added - removed
            kept: dict[int, str] = {}
            for p, s in self._breaks.items():
                if p < position or p >= end:
                    kept[p if p < position else p + delta] = s
                elif command is not None:
                    command.drop(p, s)
                    lost = True
            self._breaks = kept
            if command is not None:
                command.changes.append((position, removed, added))
        else:
            self._raw16 = None
        if lost and command is not None:
            self._undone[depth] = command

    def text(self, raw: str) -> str:
        """The document's raw text (paragraphs ended by U+2029) with each break as it came."""
        prefix = "\ufeff" if self._bom else ""
        if not self._breaks:
            return prefix + raw.replace(_PARAGRAPH, "\n")
        lines = raw.split(_PARAGRAPH)
        # The position of each paragraph's break -> its paragraph: a character past U+FFFF
        # is two units.
        astral = [m.start() for m in _ASTRAL.finditer(raw)]
        ends: dict[int, int] = {}
        a = 0
        for n, m in enumerate(_PARAGRAPH_RE.finditer(raw)):
            while a < len(astral) and astral[a] < m.start():
                a += 1
            ends[m.start() + a] = n
        breaks = ["\n"] * (len(lines) - 1)
        for position, original in self._breaks.items():
            # subtle: a kept break must still be where a paragraph ends (the bookkeeping
            # follows every edit; this guards against one it could not follow).
            n = ends.get(position, -1)
            if n >= 0:
                breaks[n] = original
        for n in range(1, len(breaks)):
            # subtle: a plain break right after a kept "\r" (Enter at the start of the line
            # after it, or the text between them deleted) would read "\r\n", one break where
            # the document shows two: the colours were a character off from there on, and
            # the count was of a line less. It is written "\r", as the text's breaks are.
            if breaks[n] == "\n" and breaks[n - 1] == "\r" and not lines[n]:
                breaks[n] = "\r"
        parts = [prefix]
        for line, brk in zip(lines, breaks, strict=False):
            parts += (line, brk)
        parts.append(lines[-1])
        return "".join(parts)
