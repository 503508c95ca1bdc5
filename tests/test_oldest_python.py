"""The oldest Python ``requires-python`` names reads the package: every module's syntax, and
every regular expression written out for the standard ``re`` module.

The suite runs on one Python (CI's); a possessive quantifier (``*+``, Python 3.11+) in a
module-level pattern made every command and ``import bpe_studio`` fail on 3.10, which
pyproject.toml claims. A bare interpreter of that version is enough for these checks (the
package's compiled dependencies are not needed); the test is skipped, saying so, where none
is installed.
"""

from __future__ import annotations

import ast
import glob
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "bpe_studio"
# The functions of ``re`` whose first argument is a pattern.
_TAKES_PATTERN = {"compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall",
                  "finditer"}  # fmt: skip


def _oldest_version() -> tuple[int, int]:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', text, re.M)
    assert found, 'pyproject.toml names no lowest Python (requires-python = ">=3.X")'
    return int(found[1]), int(found[2])


def _interpreter(version: tuple[int, int]) -> str | None:
    name = f"python{version[0]}.{version[1]}"
    candidates = sorted(
        glob.glob(str(Path.home() / f".pyenv/versions/{version[0]}.{version[1]}.*/bin/python"))
    )
    found = shutil.which(name)
    for path in [*candidates, *([found] if found else [])]:
        try:
            said = subprocess.run([path, "-c", "import sys; print(sys.version_info[:2])"],
                                  capture_output=True, text=True, timeout=60)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            continue
        if said.returncode == 0 and said.stdout.strip() == str(version):
            return path
    return None


OLDEST = _oldest_version()
PYTHON = None if sys.version_info[:2] == OLDEST else _interpreter(OLDEST)
pytestmark = pytest.mark.skipif(
    PYTHON is None,
    reason=f"no Python {OLDEST[0]}.{OLDEST[1]} interpreter on this machine (or it runs the suite)",
)


def _patterns(path: Path) -> list[tuple[str, int, str | bytes]]:
    """The constant patterns passed to ``re``'s functions in ``path``: (file, line, pattern)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        func = node.func
        if not (isinstance(func.value, ast.Name) and func.value.id == "re"):
            continue
        if func.attr in _TAKES_PATTERN and node.args and isinstance(node.args[0], ast.Constant):
            value = node.args[0].value
            if isinstance(value, (str, bytes)):
                found.append((str(path.relative_to(REPO)), node.lineno, value))
    return found


# Run by the oldest Python: compile each file's source and each pattern; print what fails.
_CHECK = """
import json, re, sys
failed = []
for path in json.loads(sys.argv[1]):
    try:
        compile(open(path, encoding="utf-8").read(), path, "exec")
    except SyntaxError as e:
        failed.append(f"{path}:{e.lineno}: {e.msg}")
for where, line, text, is_bytes in json.load(sys.stdin):
    try:
        re.compile(text.encode("latin-1") if is_bytes else text)
    except re.error as e:
        failed.append(f"{where}:{line}: {e}")
print(json.dumps(failed))
"""


def test_the_oldest_python_reads_every_module_and_pattern():
    files = sorted(PACKAGE.rglob("*.py"))
    patterns = [p for f in files for p in _patterns(f)]
    assert len(files) > 150 and len(patterns) > 10  # the walk found the package's code
    given = [
        (where, line, text.decode("latin-1") if isinstance(text, bytes) else text,
         isinstance(text, bytes))
        for where, line, text in patterns
    ]  # fmt: skip
    assert PYTHON is not None
    run = subprocess.run(
        [PYTHON, "-I", "-c", _CHECK, json.dumps([str(f) for f in files])],
        input=json.dumps(given), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []
