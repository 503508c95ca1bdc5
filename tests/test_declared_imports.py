"""Every third-party module the code imports is declared where a fresh install gets it.

A module imported under ``bpe_studio/`` must come from a ``[project]`` dependency or the
``cluster`` extra (imported only where a feature needs it), one imported
under ``tests/`` from a dependency or the ``test`` extra (what the README's test command
installs), one under ``benchmarks/`` from the ``bench`` extra and one under ``scripts/`` from the
``dev`` extra (those two need not be installed to be checked). Imports inside functions,
``try:`` blocks and ``pytest.importorskip`` count too: a test that skips on a fresh machine is
a test that does not run there.

Which distribution provides a module is read from the installed metadata
(``importlib.metadata.packages_distributions``), not from a table of aliases, and the
declarations from the installed project's own metadata, which pip wrote from pyproject.toml.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Folder -> the extras whose requirements (beside the [project] dependencies) it may import.
# The package may import the cluster extra's modules too: only where a feature needs them,
# saying which extra to install when they are missing (core/sources.py, core/cluster.py).
ROOTS = {
    "bpe_studio": ("cluster",),
    "tests": ("test",),
    "benchmarks": ("bench",),
    "scripts": ("dev",),
}
# Imported only where the standard library lacks them (guarded by a version check).
BACKPORTS = {"tomli"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> dict[str | None, set[str]]:
    """Distribution names required by the installed bpe-studio, by extra (None: dependencies)."""
    found: dict[str | None, set[str]] = {}
    for req in importlib.metadata.requires("bpe-studio") or []:
        name = _norm(re.split(r"[\s<>=!~;\[(]", req.strip(), maxsplit=1)[0])
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", req)
        found.setdefault(extra.group(1) if extra else None, set()).add(name)
    return found


def _imported(path: Path) -> set[str]:
    """Top-level names of the absolute imports in one file, wherever they stand, except under
    ``if TYPE_CHECKING:`` (read by the type checker only, never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    unrun = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in unrun:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "importorskip"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value))
    return {name.split(".")[0] for name in names}


def _local_names() -> set[str]:
    """Modules and packages of the repo itself (tests import their helpers by bare name)."""
    local = {"bpe_studio", "tests", "benchmarks", "scripts", "resources", "conftest"}
    for root in ROOTS:
        for path in (REPO / root).rglob("*"):
            local.add(path.stem if path.suffix == ".py" else path.name)
    return local


def _declaring(extras: tuple[str, ...]) -> str:
    return "the dependencies" + "".join(f" and the {e} extra" for e in extras)


def _undeclared(root: str, extras: tuple[str, ...]) -> list[str]:
    declared = _declared()
    allowed = set(declared.get(None, set()))
    for extra in extras:
        allowed |= declared.get(extra, set())
    providers = importlib.metadata.packages_distributions()
    skip = set(sys.stdlib_module_names) | _local_names() | BACKPORTS
    problems = []
    for path in sorted((REPO / root).rglob("*.py")):
        for module in sorted(_imported(path) - skip):
            # A module not installed here (a benchmark's peer, say) is taken to come from the
            # distribution of its own name, as most do.
            dists = {_norm(d) for d in providers.get(module, [module])}
            where = path.relative_to(REPO).as_posix()
            if not dists & allowed:
                problems.append(
                    f"{where} imports {module!r} (from {', '.join(sorted(dists))}), "
                    f"which {_declaring(extras)} do not declare"
                )
    return problems


def test_the_project_metadata_is_installed():
    # The checks below read the requirements pip installed; without them they would prove nothing.
    assert _declared().get(None), "bpe-studio's metadata lists no dependencies"
    assert _declared().get("test"), "bpe-studio's metadata lists no test extra"


@pytest.mark.parametrize("root", list(ROOTS))
def test_every_imported_module_is_declared(root):
    assert _undeclared(root, ROOTS[root]) == []


def test_the_check_sees_an_undeclared_import(tmp_path, monkeypatch):
    # The check must be able to fail: a file importing a module from a package the project does
    # not declare (pytest itself is declared only for tests, so bpe_studio/ may not import it).
    fake = tmp_path / "bpe_studio"
    fake.mkdir()
    (fake / "m.py").write_text("def f():\n    import pytest\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert _undeclared("bpe_studio", ()) == [
        "bpe_studio/m.py imports 'pytest' (from pytest), which the dependencies do not declare"
    ]
