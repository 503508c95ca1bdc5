"""Every name and path the docs write down exists: in the docstrings of ``bpe_studio`` and in
README.md and docs/*.md, each dotted name (``bpe_studio.x.y``, ``core.x.y``, a backticked
``module.name``), each path (``core/x/y.py``, ``formats/hf/``, ``tests/core/test_x.py``) and
each file name (``x.py``, ``x.md``) resolves to a module, an attribute or a file of the
project. When code moves, the text that names it fails here instead of going stale.

How a name resolves: its longest leading part that names a module of the package (in full, or
as the tail of one: ``encode.tokenizer`` is ``bpe_studio.core.encode.tokenizer``) is imported
and the rest is looked up as attributes; the last one may be an attribute that a class of that
module sets on its instances (``state.step``). A name whose head names no module of the package
is not ours (``str.replace``, ``regex.findall``) and is not checked, except one that starts
with ``bpe_studio``, ``core``, ``gui`` or ``cli``, which must resolve. A path resolves when a
file or folder of the project ends with it; a file name, when a file of the project has it.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Written in the docs but not the project's own: each with what it is.
NOT_OURS = {
    # Keys of a tokenizer.json ("model": {"merges": ..., "ignore_merges": ...}).
    "model.merges",
    "model.ignore_merges",
    # Files of Hugging Face's tokenizers repository, whose behaviour formats/hf/ follows.
    "tokenizers/src/normalizers/",
    "tokenizers/src/tokenizer/",
    "normalizer.rs",
    # minbpe's readable trainer, the model of core/reference.py.
    "basic.py",
    # CPython's module the bundled code sample is (resources/samples/); OpenAI's name for
    # GPT-2's merges file.
    "fractions.py",
    "vocab.bpe",
    # tokenizers' decoder of <0xNN> tokens; pyqtgraph's method that redraws a curve in place.
    "ByteFallback",
    "setData",
}

# A name in backticks, as Markdown (`x.y`) and reST (``x.y``, :func:`x.y`) write it; a name
# that starts with one of the package's own top names, anywhere.
TICKED = re.compile(r"`~?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?`")
# reST's names relative to the module the docstring is in (:class:`~..jobs.latest.LatestJob`).
RELATIVE = re.compile(r":[a-z]+:`~?(\.+[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)`")
OWN = re.compile(r"(?<![\w./-])(?:bpe_studio|core|gui|cli)(?:\.[A-Za-z_]\w*)+")
# A path with at least one folder: ends with a file name or with the folder's slash.
PATH = re.compile(
    r"(?<![\w./~:-])((?:[\w.-]+/)+(?:[\w-]+\.(?:py|pyi|md|toml|txt|json)\b)?)(?![\w/])"
)
FILE_NAME = re.compile(r"(?<![\w./-])([\w-]+\.(?:py|md))\b(?!/)")
# "(``tokenizer``, ``char_bpe``)": a parenthesized list of bare names says where something
# lives (a module, or a function or class of one), as "What it leaves out" paragraphs do.
WHERE_LIST = re.compile(r"\(((?:``[A-Za-z_]\w*``(?:, )?)+)\)")
# Names ending in a file extension are file names (``tokenizer.json``), not attributes.
FILE_SUFFIXES = {"json", "en", "txt", "tiktoken", "md", "py", "pyi", "toml", "model", "npy"}


def tracked_files() -> list[Path]:
    skip = {".git", "__pycache__", ".pytest_cache", "build", "dist", ".hypothesis"}
    found = []
    for path in REPO.rglob("*"):
        parts = path.relative_to(REPO).parts
        if any(p in skip or p.endswith(".egg-info") for p in parts):
            continue
        found.append(path)
    return found


@cache
def project_paths() -> tuple[set[str], set[str], set[str]]:
    """Every file's and folder's path relative to the repository, every file name and every
    folder name."""
    paths, names, folders = set(), set(), set()
    for path in tracked_files():
        rel = path.relative_to(REPO).as_posix()
        if path.is_dir():
            paths.add(rel + "/")
            folders.add(path.name)
        else:
            paths.add(rel)
            names.add(path.name)
    return paths, names, folders


@cache
def package_modules() -> list[str]:
    modules = []
    for path in (REPO / "bpe_studio").rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules.append(".".join(parts))
    return sorted(modules)


def texts() -> list[tuple[str, str]]:
    """(where, text) for every docstring of the package and every Markdown document (the
    README, docs/, and those in resources/ and tests/; benchmarks/RESULTS.md is a log, whose
    older sections name files as they were then)."""
    found = []
    for path in sorted((REPO / "bpe_studio").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(REPO).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    line = node.body[0].lineno
                    found.append((f"{rel}:{line}", doc))
    documents = [
        REPO / "README.md",
        *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "resources").rglob("*.md")),
        *sorted((REPO / "tests").rglob("*.md")),
    ]
    for path in documents:
        found.append((path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")))
    return found


def references(text: str) -> set[tuple[str, str]]:
    refs = set()
    for match in TICKED.finditer(text):
        name = match.group(1)
        if name.rpartition(".")[2] not in FILE_SUFFIXES:
            refs.add(("name", name))
    refs.update(("name", m.group(0)) for m in OWN.finditer(text))
    refs.update(("relative", m.group(1)) for m in RELATIVE.finditer(text))
    _, _, folders = project_paths()
    for match in PATH.finditer(text):
        path = match.group(1)
        # A path starts with a folder of the project: others are prose ("yes/no"), examples
        # (my_tokenizer/vocab.json) or other projects' files.
        if path.split("/")[0] in folders:
            refs.add(("path", path))
    refs.update(("file", m.group(1)) for m in FILE_NAME.finditer(text))
    for match in WHERE_LIST.finditer(text):
        refs.update(
            ("word", w) for w in re.findall(r"``(\w+)``", match.group(1)) if w not in NOT_OURS
        )
    return refs - {(kind, name) for kind, name in refs if name in NOT_OURS}


def attribute_of_instances(module: object, name: str) -> bool:
    """Whether a class defined in ``module`` (or the class ``module``) has ``name``, as a
    class attribute, an annotated field or an attribute its methods set on ``self``."""
    if inspect.isclass(module):
        classes = [module]
    elif inspect.ismodule(module):
        classes = [
            c
            for c in vars(module).values()
            if inspect.isclass(c) and c.__module__ == module.__name__
        ]
    else:
        return False
    for cls in classes:
        if hasattr(cls, name) or name in getattr(cls, "__annotations__", {}):
            return True
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):
            continue
        if re.search(rf"self\.{re.escape(name)}\b", source):
            return True
    return False


def resolves(module_name: str, rest: list[str]) -> bool:
    try:
        obj: object = importlib.import_module(module_name)
    except ImportError:
        return False
    for i, part in enumerate(rest):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        if inspect.ismodule(obj):
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")
                continue
            except ImportError:
                pass
        return i == len(rest) - 1 and attribute_of_instances(obj, part)
    return True


def name_resolves(name: str) -> bool | None:
    """True or False for a name of the package; None for a name that is not ours."""
    parts = name.split(".")
    modules = package_modules()
    for k in range(len(parts), 0, -1):
        head = ".".join(parts[:k])
        matches = [m for m in modules if m == head or m.endswith("." + head)]
        if matches:
            return any(resolves(m, parts[k:]) for m in matches)
    return False if parts[0] in {"bpe_studio", "core", "gui", "cli"} else None


@cache
def defined_names() -> set[str]:
    """Every module's last name, and every name a module of the package defines: functions,
    classes and methods, their parameters, names assigned at the top of a module or a class,
    attributes set on ``self``; and Python's builtins."""
    found = {m.rpartition(".")[2] for m in package_modules()} | set(dir(builtins))
    for path in (REPO / "bpe_studio").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bodies = [tree.body]
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(node.name)
            if isinstance(node, ast.arg):
                found.add(node.arg)
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                found.add(node.attr)
            if isinstance(node, ast.ClassDef):
                bodies.append(node.body)
        for body in bodies:
            for statement in body:
                targets = (
                    statement.targets
                    if isinstance(statement, ast.Assign)
                    else [statement.target]
                    if isinstance(statement, ast.AnnAssign)
                    else []
                )
                found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


def path_resolves(path: str) -> bool:
    paths, _, _ = project_paths()
    return any(p == path or p.endswith("/" + path) for p in paths)


def absolute(relative: str, where: str) -> str:
    """``..jobs.latest.LatestJob`` written in bpe_studio/gui/views/report.py is
    ``bpe_studio.gui.jobs.latest.LatestJob``, as a relative import would read it."""
    dots = len(relative) - len(relative.lstrip("."))
    package = where.partition(":")[0].removesuffix(".py").split("/")[:-1]
    base = package[: len(package) - (dots - 1)]
    return ".".join([*base, relative.lstrip(".")])


def stale_references() -> list[str]:
    _, names, _ = project_paths()
    stale = []
    for where, text in texts():
        for kind, ref in sorted(references(text)):
            if kind == "relative" and not ref.startswith(".."):
                # Sphinx reads ``.name`` as any object whose full name ends with it.
                ok = name_resolves(ref[1:]) is True
            elif kind == "relative":
                ok = ".py:" in where and name_resolves(absolute(ref, where)) is True
            elif kind == "name":
                ok = name_resolves(ref) is not False
            elif kind == "path":
                ok = path_resolves(ref)
            elif kind == "word":
                ok = ref in defined_names()
            else:
                ok = ref in names
            if not ok:
                stale.append(f"{where}: {ref}")
    return stale


def test_finds_references_of_each_kind():
    text = (
        "``core.encode.tokenizer.Tokenizer`` and `state.step`, bpe_studio.core.train; "
        "core/encode/merging/merger.py, formats/hf/, DIR/vocab.json, ``tokenizer.json``, "
        "tests/conftest.py and architecture.md, str.replace"
    )
    assert references(text) == {
        ("name", "core.encode.tokenizer.Tokenizer"),
        ("name", "state.step"),
        ("name", "bpe_studio.core.train"),
        ("path", "core/encode/merging/merger.py"),
        ("path", "formats/hf/"),
        ("file", "architecture.md"),
        ("path", "tests/conftest.py"),
    }


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bpe_studio.core.encode.tokenizer.Tokenizer.encode", True),
        ("encode.tokenizer.Tokenizer", True),
        ("core.Tokenizer", True),  # the facade's lazy names
        ("tokenizer.Tokenizer.encode", True),
        ("state.step", True),  # a field of the app's state
        ("core.pattern.PATTERNS", False),  # a module that is gone
        ("core.encode.tokenizer.Tokeniser", False),
        ("bpe_studio.trainer", False),
        ("str.replace", None),
    ],
)
def test_names_resolve_or_not(name, expected):
    assert name_resolves(name) is expected


def test_relative_names_are_read_from_their_module():
    where = "bpe_studio/gui/views/report.py:1"
    assert absolute("..jobs.latest.LatestJob", where) == "bpe_studio.gui.jobs.latest.LatestJob"
    assert absolute(".table_models.VocabTableModel", where) == (
        "bpe_studio.gui.views.table_models.VocabTableModel"
    )
    assert references(":class:`~..jobs.latest.LatestJob` and :meth:`.x`") == {
        ("relative", "..jobs.latest.LatestJob"),
        ("relative", ".x"),
    }


def test_paths_resolve_or_not():
    assert path_resolves("core/encode/merging/merger.py") and path_resolves("formats/hf/")
    assert path_resolves("tests/conftest.py") and path_resolves("docs/architecture.md")
    assert not path_resolves("core/pattern.py") and not path_resolves("gui/spans.py")


def test_every_reference_in_the_docs_resolves():
    stale = stale_references()
    assert not stale, f"{len(stale)} stale references:\n" + "\n".join(stale)
