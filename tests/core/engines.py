"""Run a test module's trainer tests once per merge engine.

``from engines import each_engine`` in a test module makes every test in it run twice: with
``trainer.COMPILED_FROM`` at 0 (``engine="auto"`` takes the compiled engine for any corpus) and
far above any corpus (it takes the Python engine), so the default path of every caller
(``BpeTrainer``, ``trainer_from_file``, ``train_bpe``) is covered with each engine.
"""

from __future__ import annotations

import pytest

from bpe_studio.core.train import trainer

ENGINES = ("python", "compiled")


@pytest.fixture(params=ENGINES, autouse=True)
def each_engine(request, monkeypatch):
    monkeypatch.setattr(trainer, "COMPILED_FROM", 0 if request.param == "compiled" else 1 << 62)
    return request.param
