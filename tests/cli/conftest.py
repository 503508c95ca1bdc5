"""Fixtures for the command-line tests: they run ``python -m bpe_studio`` in subprocesses and
share the core tests' independent helpers (reference trainer and encoder, GPT-2 byte tables),
which live in ``tests/core``."""

from __future__ import annotations

import sys
from pathlib import Path

CORE_TESTS = Path(__file__).resolve().parents[1] / "core"
if str(CORE_TESTS) not in sys.path:
    sys.path.insert(0, str(CORE_TESTS))
