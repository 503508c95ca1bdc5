"""Build the sdist and wheel and check what they hold; install the wheel and read its resources.

Run: ``python scripts/check_wheel.py`` (CI runs it; about 15 s, most of it pip and setuptools).

1. The files git knows (tracked, or new and not ignored) are copied to a temporary directory and
   ``python -m build`` makes the sdist there and the wheel from the sdist, so the build never
   writes into the working tree and sees neither ``__pycache__`` nor the ``bpe_studio/resources``
   symlink of the dev worktrees. Any warning in the build log fails the check.
2. The wheel must hold exactly: every ``bpe_studio/**/*.py``, ``*.pyi`` (the core facade's
   stub, read at run time) and ``py.typed`` of the checkout,
   every file under ``resources/`` as ``bpe_studio/resources/...`` (so files added there later are
   checked without editing this script), and its ``.dist-info`` with LICENSE, the version of
   ``bpe_studio.__version__``, ``License-Expression: MIT`` and the ``bpe-studio`` command.
   A few files are also named outright, so that losing one says which.
3. The wheel is installed (no dependencies: they come from this interpreter's site-packages)
   into a fresh virtual environment, and a child run from outside the repo, without PYTHONPATH,
   imports it from there and reads the style sheet and the sample corpus with importlib.resources.

It leaves out the app itself (the GUI tests cover it) and any upload to an index. Exit status 0
when every check passes, else 1 with one line per problem.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Named outright so that a lost one is reported by name (the exact comparison covers the rest).
REQUIRED = [
    "bpe_studio/__init__.py",
    "bpe_studio/py.typed",
    "bpe_studio/cli/__init__.py",
    "bpe_studio/core/__init__.py",
    "bpe_studio/core/encode/tokenizer.py",
    "bpe_studio/core/train/trainer.py",
    "bpe_studio/resources/__init__.py",
    "bpe_studio/resources/style.qss",
    "bpe_studio/resources/sample/tinystories_sample.txt",
]
# Named once they exist in resources/ (another change adds them), then required like the rest.
REQUIRED_ONCE_PRESENT = ["bpe_studio/resources/icon.svg", "bpe_studio/resources/bpe-studio.desktop"]

# Build log lines that only name a file being copied (a module may be called warnings.py).
FILE_LINES = ("copying ", "adding '", "creating ", "byte-compiling ")

# Run in the installed environment, from a directory outside the repo.
PROBE = """\
import importlib.metadata, importlib.resources, sys
from pathlib import Path
import bpe_studio
where = Path(bpe_studio.__file__).resolve()
if Path(sys.prefix).resolve() not in where.parents:
    sys.exit(f"bpe_studio imported from {where}, not from the wheel in {sys.prefix}")
res = importlib.resources.files("bpe_studio.resources")
assert res.joinpath("style.qss").read_text(encoding="utf-8").strip(), "style.qss is empty"
with res.joinpath("sample", "tinystories_sample.txt").open("rb") as f:
    assert f.read(64), "the sample corpus is empty"
dist = importlib.metadata.version("bpe-studio")
if dist != bpe_studio.__version__:
    sys.exit(f"metadata version {dist} != bpe_studio.__version__ {bpe_studio.__version__}")
"""


def source_files() -> list[str]:
    """Paths (relative, POSIX) of the files a clean clone would have, plus new unignored ones."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    # A tracked file deleted in the working tree is not part of the build.
    return sorted(p for p in out.split("\0") if p and (REPO / p).is_file())


def package_version() -> str:
    """``__version__`` from bpe_studio/__init__.py, read without importing it."""
    tree = ast.parse((REPO / "bpe_studio" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            return str(ast.literal_eval(node.value))
    raise SystemExit("bpe_studio/__init__.py: no __version__ assignment")


def expected_wheel_files(files: list[str]) -> set[str]:
    """The package's files in the wheel, as the checkout says they should be."""
    want = set()
    for p in files:
        if p.startswith("bpe_studio/") and (
            p.endswith((".py", ".pyi")) or p == "bpe_studio/py.typed"
        ):
            want.add(p)
        elif p.startswith("resources/"):
            want.add("bpe_studio/" + p)
    return want


def build(src: Path, out: Path) -> tuple[list[Path], list[str]]:
    """Build sdist and wheel of ``src`` into ``out``; return the wheels and the problems."""
    env = dict(os.environ)
    # Byte-compiling in the throwaway copy is harmless; disabled, setuptools warns about it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(src)],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
    )
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        return [], [f"python -m build failed (exit {proc.returncode}):\n{log[-4000:]}"]
    problems = [
        f"build log: {line.strip()}"
        for line in log.splitlines()
        if re.search(r"warn", line, re.IGNORECASE) and not line.startswith(FILE_LINES)
    ]
    return sorted(out.glob("*.whl")), problems


def check_contents(wheel: Path, files: list[str], version: str) -> list[str]:
    problems = []
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = f"bpe_studio-{version}.dist-info"
    package = {n for n in names if not n.startswith(dist_info + "/")}
    want = expected_wheel_files(files)
    required = REQUIRED + [p for p in REQUIRED_ONCE_PRESENT if p in want]
    problems += [f"wheel misses {p}" for p in required if p not in package]
    problems += [
        f"wheel misses {p} (from the checkout)" for p in sorted(want - package) if p not in required
    ]
    for n in sorted(package - want):
        problems.append(f"wheel holds a file the checkout does not ship: {n}")
    for n in names:
        if "__pycache__" in n or n.endswith((".pyc", ".pyo")) or n.startswith("tests/"):
            problems.append(f"wheel holds junk: {n}")
    zf = zipfile.ZipFile(wheel)
    meta_names = set(names)
    for need in ("METADATA", "RECORD", "entry_points.txt", "licenses/LICENSE"):
        if f"{dist_info}/{need}" not in meta_names:
            problems.append(f"wheel misses {dist_info}/{need}")
    if f"{dist_info}/METADATA" in meta_names:
        meta = zf.read(f"{dist_info}/METADATA").decode("utf-8")
        for line in (f"Version: {version}", "License-Expression: MIT", "License-File: LICENSE"):
            if line not in meta.splitlines():
                problems.append(f"{dist_info}/METADATA lacks the line {line!r}")
    if f"{dist_info}/entry_points.txt" in meta_names:
        entry = zf.read(f"{dist_info}/entry_points.txt").decode("utf-8")
        if "bpe-studio = bpe_studio.cli:program" not in entry:
            problems.append(f"{dist_info}/entry_points.txt lacks the bpe-studio command")
    return problems


def check_install(wheel: Path, tmp: Path) -> list[str]:
    env_dir = tmp / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # This interpreter's pip installs into the new environment (--prefix would miss its layout;
    # --python asks pip to act for that interpreter).
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        + ["--no-deps", "--no-index", "--ignore-installed", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
    )
    if install.returncode != 0:
        return [f"pip could not install the wheel:\n{install.stderr[-3000:]}"]
    outside = tmp / "elsewhere"
    outside.mkdir()
    probe = subprocess.run(
        [str(python), "-c", PROBE], cwd=outside, env=env, capture_output=True, text=True
    )
    if probe.returncode != 0:
        return [f"the installed wheel fails: {(probe.stderr or probe.stdout).strip()[-3000:]}"]
    return []


def main() -> int:
    files = source_files()
    version = package_version()
    with tempfile.TemporaryDirectory(prefix="bpe_studio_wheel_") as tmp_name:
        tmp = Path(tmp_name)
        src = tmp / "src"
        for rel in files:
            dest = src / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest, follow_symlinks=False)
        wheels, problems = build(src, tmp / "dist")
        if len(wheels) != 1 and not problems:
            problems.append(f"expected one wheel, got {[w.name for w in wheels]}")
        if not problems:
            problems += check_contents(wheels[0], files, version)
        if not problems:
            problems += check_install(wheels[0], tmp)
        name = wheels[0].name if wheels else "no wheel"
    for p in problems:
        print(f"check_wheel: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check_wheel: {name} OK (contents, metadata, install and resources)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
