"""The public imports keep working: every name ``bpe_studio.core`` lists (its stub,
``__init__.pyi``, read by ``lazy_loader``) comes with ``from bpe_studio.core import *`` and on
its own, every name its docstring writes down exists, every ``from bpe_studio... import ...``
written in README.md and docs/ runs, and the facade still loads a name's module only when the
name is first used."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bpe_studio
import bpe_studio.core as core

REPO = Path(__file__).resolve().parent.parent
STUB = REPO / "bpe_studio" / "core" / "__init__.pyi"
# Other projects the core's docstring names.
OTHERS = {"tokenizers", "lazy_loader"}


def stub_names() -> set[str]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def documented_imports() -> list[str]:
    """Each ``from bpe_studio... import a, b`` statement of README.md and docs/*.md."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"^\s*from (bpe_studio[\w.]*) import ([\w, ]+)$", text, re.M):
            names = [n.strip() for n in match.group(2).split(",") if n.strip()]
            found.append(f"from {match.group(1)} import {', '.join(names)}")
    return found


def test_the_stub_lists_what_the_package_exports():
    assert set(core.__all__) == stub_names()
    assert len(core.__all__) >= 30
    assert set(dir(core)) >= set(core.__all__)


def test_star_import_gives_every_listed_name():
    namespace: dict[str, object] = {}
    exec("from bpe_studio.core import *", namespace)
    assert set(core.__all__) <= set(namespace)
    for name in core.__all__:
        value = namespace[name]
        assert value is getattr(core, name)
        assert not isinstance(value, type(sys)), f"{name} is a module, not the documented name"


@pytest.mark.parametrize("name", sorted(stub_names()))
def test_each_name_imports_on_its_own(name):
    namespace: dict[str, object] = {}
    exec(f"from bpe_studio.core import {name}", namespace)
    assert namespace[name] is getattr(core, name)


def test_the_top_package_names():
    assert set(bpe_studio.__all__) == {"MergeStep", "Tokenizer", "train_bpe"}
    for name in bpe_studio.__all__:
        assert getattr(bpe_studio, name) is getattr(core, name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        core.no_such_name  # noqa: B018


def test_every_name_the_core_docstring_writes_exists():
    assert core.__doc__
    words = set(re.findall(r"``(\w+)``", core.__doc__))
    missing = []
    for word in sorted(words):
        if word in core.__all__ or hasattr(core.Tokenizer, word) or word in OTHERS:
            continue
        try:
            __import__(f"bpe_studio.core.{word}")
        except ImportError:
            missing.append(word)
    assert not missing, f"bpe_studio.core's docstring names what it does not have: {missing}"


def test_documented_imports_run():
    statements = documented_imports()
    assert any("from bpe_studio import" in s for s in statements), statements
    for statement in statements:
        exec(statement, {})


def test_names_load_their_module_on_first_use():
    """Training from a small corpus never loads NumPy (docs/training.md, "Memory")."""
    code = (
        "import sys\n"
        "import bpe_studio.core as core\n"
        "from bpe_studio.core import train_bpe, pretokenize\n"
        "assert 'numpy' not in sys.modules, 'the facade imported NumPy'\n"
        "assert 'bpe_studio.core.encode.tokenizer' not in sys.modules\n"
        "core.Tokenizer\n"
        "assert 'bpe_studio.core.encode.tokenizer' in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
