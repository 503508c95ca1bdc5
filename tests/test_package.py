"""The package as shipped: one version source, the licence, the data files read through
importlib.resources, and a test run that writes nothing into the working tree.

What the built wheel holds is checked by ``scripts/check_wheel.py`` (CI runs it); these tests
check the checkout that is being tested.
"""

from __future__ import annotations

import importlib.resources
import re
import sys
from pathlib import Path

import pytest

import bpe_studio

REPO = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the suite also runs on 3.10
    tomllib = pytest.importorskip("tomli")


@pytest.fixture(scope="module")
def project() -> dict:
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def test_the_version_has_one_source(project):
    assert "version" not in project["project"], "pyproject.toml must not repeat the version"
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "bpe_studio.__version__"}
    # A PEP 440 release number (what setuptools accepts as a version).
    assert re.fullmatch(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?", bpe_studio.__version__)


def test_license_is_mit_and_ships_its_text(project):
    meta = project["project"]
    assert meta["license"] == "MIT"
    assert meta["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 BPE Studio contributors" in text
    # SPDX says it all: a licence classifier alongside would be a second, conflicting source.
    assert not [c for c in meta["classifiers"] if c.startswith("License ::")]


def _files_under(root) -> set[str]:
    """Relative POSIX paths of the files under an importlib.resources Traversable."""
    found, todo = set(), [(root, "")]
    while todo:
        node, prefix = todo.pop()
        for child in node.iterdir():
            rel = prefix + child.name
            if child.is_dir():
                if child.name != "__pycache__":
                    todo.append((child, rel + "/"))
            else:
                found.add(rel)
    return found


def test_resources_are_read_through_the_package():
    res = importlib.resources.files("bpe_studio.resources")
    assert res.joinpath("style.qss").read_text(encoding="utf-8").strip()
    with res.joinpath("sample", "tinystories_sample.txt").open("rb") as f:
        assert f.read(1 << 10).decode("utf-8")
    on_disk = {
        p.relative_to(REPO / "resources").as_posix()
        for p in (REPO / "resources").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    # Every file of the top-level resources/ folder, and only those, is in the package.
    assert _files_under(res) == on_disk


def test_package_data_takes_every_resource_file(project):
    """The wheel's glob for resources/ is recursive, so files added later ship unlisted."""
    setuptools = project["tool"]["setuptools"]
    assert setuptools["package-dir"]["bpe_studio.resources"] == "resources"
    assert "bpe_studio.resources" in setuptools["packages"]
    assert setuptools["package-data"]["bpe_studio.resources"] == ["**/*"]


def test_every_subpackage_is_listed_for_the_wheel(project):
    """pyproject lists the packages (resources/ needs its mapping), so a new one must be added."""
    root = REPO / "bpe_studio"
    on_disk = {
        ".".join(("bpe_studio", *init.parent.relative_to(root).parts))
        for init in root.rglob("__init__.py")
        # The dev worktrees' bpe_studio/resources is a symlink to resources/.
        if init.relative_to(root).parts[0] != "resources"
    }
    listed = set(project["tool"]["setuptools"]["packages"]) - {"bpe_studio.resources"}
    assert not on_disk - listed, "add to [tool.setuptools] packages in pyproject.toml"
    assert not listed - on_disk, "listed in [tool.setuptools] packages but absent"


def test_hypothesis_stores_outside_the_tree():
    from hypothesis.configuration import storage_directory

    home = storage_directory(intent_to_write=False).path.resolve()
    assert REPO != home and REPO not in home.parents, home


def test_pytest_keeps_its_cache_where_git_ignores_it(pytestconfig):
    """The cache is kept (``--lf`` and ``--ff`` work), in a folder outside the tree or one
    that git ignores: a test run leaves ``git status`` clean."""
    import shutil
    import subprocess

    assert pytestconfig.pluginmanager.has_plugin("cacheprovider")
    folder = pytestconfig.cache._cachedir.resolve()
    if REPO not in folder.parents:
        return
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("no git checkout to ask")
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(folder / "v")], cwd=REPO, check=False
    )
    assert ignored.returncode == 0, f"{folder} is in the tree and not git-ignored"


def test_the_top_level_names_are_listed_and_typed_as_themselves():
    """Found by the API audit: ``help(bpe_studio)`` and tab completion listed neither
    ``Tokenizer`` nor ``train_bpe`` (imported on first use), and a type checker read the
    module-level ``__getattr__`` as the type of any name imported from the package, so
    ``from bpe_studio import Tokeniser`` type-checked."""
    import ast

    assert {"Tokenizer", "train_bpe", "MergeStep"} <= set(dir(bpe_studio))
    tree = ast.parse(Path(bpe_studio.__file__).read_text(encoding="utf-8"))
    top_level = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "__getattr__" not in top_level  # only under `if not TYPE_CHECKING:`
    guarded = [
        n
        for n in tree.body
        if isinstance(n, ast.If) and ast.unparse(n.test) == "not TYPE_CHECKING"
        for f in n.body
        if isinstance(f, ast.FunctionDef) and f.name == "__getattr__"
    ]
    assert guarded
