"""Which tokenizer each pane shows, and whether it is there yet: the choices the views pick.

What it does: a pane is a place that shows one tokenizer the user picks: the editor
(:data:`EDITOR`), Compare's two sides (:data:`COMPARE_LEFT`, :data:`COMPARE_RIGHT`) and the
Report's four columns (:func:`report_pane`). :class:`PaneChoice` is what one pane shows: the
picker's key of the tokenizer (``preset:gpt2``, ``file:...``, ``hf:ORG/NAME``, ``run``,
``none``), its label, and its :class:`LoadStatus`. A pick goes through ``LOADING`` (its
tokenizer is being built or fetched in a background job, the pane still shows the choice
before) to ``READY``; a pick that fails leaves the choice before in place, everywhere, with
the failure kept beside it for the views to say (``PaneChoice.failed``).
What it leaves out: the picking (``AppModel.pick`` and its events) and the building (the
pages' jobs).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

EDITOR = "editor"
COMPARE_LEFT = "compare-left"
COMPARE_RIGHT = "compare-right"
REPORT_SLOTS = 4


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
    failed: tuple[str, str] | None = None  # label, message of the pick that failed

    @property
    def loading(self) -> bool:
        return self.status is LoadStatus.LOADING
