"""Shared test setup: Qt renders offscreen unless told otherwise (no display needed)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
