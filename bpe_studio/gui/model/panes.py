"""Which tokenizer each pane shows, and whether it is there yet: the choices the views pick.

What it does: a pane is a place that shows one tokenizer the user picks: the editor
(:data:`EDITOR`), Compare's two sides (:data:`COMPARE_LEFT`, :data:`COMPARE_RIGHT`) and the
Report's four columns (:func:`report_pane`). :class:`PaneChoice` is what one pane shows: the
picker's key of the tokenizer (``preset:gpt2``, ``file:...``, ``hf:ORG/NAME``, ``run``,
``none``), its label, and its :class:`LoadStatus`. A pick goes through ``LOADING`` (its
tokenizer is being built or fetched in a background job, the pane still shows the choice
before) to ``READY``; a pick that fails leaves the choice before in place, everywhere, with
the failure kept beside it for the views to say (``PaneChoice.failed``).
:class:`PaneChoices` keeps every pane's choice and pick under way, and the rules of going
from one to the other; the app model emits the events.
What it leaves out: the events (``AppModel.pick`` and the rest) and the building (the pages'
jobs).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

EDITOR = "editor"
COMPARE_LEFT = "compare-left"
COMPARE_RIGHT = "compare-right"


def report_pane(i: int) -> str:
    """The Report's column ``i`` (0-based)."""
    return f"report-{i + 1}"


class LoadStatus(enum.Enum):
    READY = "ready"  # the tokenizer is built: the pane shows it
    LOADING = "loading"  # being built or fetched; the pane still shows the choice before


@dataclass(frozen=True, slots=True)
class PaneChoice:
    """One pane's tokenizer: ``key`` and ``label`` as the picker lists it, its status, and the
    last pick that failed here (its label and message), until the next pick."""

    key: str
    label: str
    status: LoadStatus = LoadStatus.READY
    failed: tuple[str, str, str] | None = None  # key, label, message of the pick that failed

    @property
    def loading(self) -> bool:
        return self.status is LoadStatus.LOADING


class PaneChoices:
    """The choice each pane shows and the pick under way in it; each change returns whether
    anything changed (the owner then says so).

    >>> panes = PaneChoices()
    >>> panes.define("left", "preset:gpt2", "GPT-2")
    >>> panes.pick("left", "hf:acme/x", "acme/x"), panes.shown("left").key
    (True, 'preset:gpt2')
    >>> panes.failed("left", "hf:acme/x", "offline"), panes.shown("left").failed
    (True, ('hf:acme/x', 'acme/x', 'offline'))
    """

    def __init__(self) -> None:
        self._shown: dict[str, PaneChoice] = {}
        self._picks: dict[str, PaneChoice] = {}

    def define(self, pane: str, key: str, label: str) -> None:
        self._shown[pane] = PaneChoice(key, label)
        self._picks.pop(pane, None)

    def shown(self, pane: str) -> PaneChoice:
        return self._shown[pane]

    def under_way(self, pane: str) -> PaneChoice | None:
        return self._picks.get(pane)

    def pick(self, pane: str, key: str, label: str) -> bool:
        """A pick of ``key``: under way until :meth:`ready` or :meth:`failed`; picking the
        choice shown again drops a pick under way."""
        shown = self._shown[pane]
        if key == shown.key:
            dropped = self._picks.pop(pane, None) is not None
            if not dropped and shown.failed is None:
                return False
            self._shown[pane] = dataclasses.replace(shown, failed=None)
            return True
        self._picks[pane] = PaneChoice(key, label, LoadStatus.LOADING)
        self._shown[pane] = dataclasses.replace(shown, failed=None)
        return True

    def ready(self, pane: str, key: str) -> bool:
        """The pick ``key`` is built: it is the pane's choice now (False: not the pick under
        way, nothing changes)."""
        pick = self._picks.get(pane)
        if pick is None or pick.key != key:
            return False
        del self._picks[pane]
        self._shown[pane] = PaneChoice(key, pick.label)
        return True

    def failed(self, pane: str, key: str, message: str) -> bool:
        """The pick ``key`` could not be built: the choice shown stays, the failure kept with
        it (False: not the pick under way, nothing changes)."""
        pick = self._picks.get(pane)
        if pick is None or pick.key != key:
            return False
        del self._picks[pane]
        self._shown[pane] = dataclasses.replace(
            self._shown[pane], failed=(key, pick.label, message)
        )
        return True
