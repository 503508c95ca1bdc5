"""The encoding engine's modules do not import the tokenizer: ``streaming`` and
``token_spans`` work through ``encoder.Encoder`` (issue #34 removed the circle they made with
``tokenizer``, whose private parts they reached into), and neither does the engine itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENCODE = Path(__file__).resolve().parents[2] / "bpe_studio" / "core" / "encode"
ENGINE = ["streaming.py", "token_spans.py", "encoder.py", "merging/compiled.py",
          "merging/encode_kernel.py", "merging/piece_table.py", "merging/kernel_start.py",
          "merging/pipeline_scan.py", "merging/merger.py"]  # fmt: skip


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at any level (TYPE_CHECKING blocks and functions too),
    relative ones as written (``.tokenizer``; ``from . import tokenizer`` counts as that)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.add(base)
            if node.module is None:
                names.update(base + alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("module", ENGINE)
def test_the_engine_does_not_import_the_tokenizer(module):
    imported = _imported(ENCODE / module)
    assert not {
        n for n in imported if n.lstrip(".") == "tokenizer" or n.endswith("encode.tokenizer")
    }
