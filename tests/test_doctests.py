"""Every example in the package's docstrings runs and gives what it shows.

The modules are found by reading the source for ``>>>``, so an example added anywhere is
checked without a list to keep up to date.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import bpe_studio

PACKAGE = Path(bpe_studio.__file__).parent


def modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>> " in path.read_text(encoding="utf-8"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = modules_with_examples()


def test_the_examples_are_found():
    # A floor, so that a broken search (no module found) cannot pass as "nothing failed".
    assert len(MODULES) >= 30
    assert "bpe_studio.core.formats.hf.onig" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
