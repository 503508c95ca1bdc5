"""The engine never loads Qt: importing bpe_studio.core (or the bpe_studio package) in a
fresh interpreter leaves PySide6, shiboken6 and pyqtgraph out of sys.modules."""

from __future__ import annotations

import subprocess
import sys

CHECK = (
    "import sys, bpe_studio.core, bpe_studio; "
    "bad = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'pyqtgraph'))); "
    "assert not bad, bad"
)


def run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_core_loads_no_qt():
    result = run(CHECK)
    assert result.returncode == 0, result.stderr


def test_using_core_loads_no_qt(tmp_path):
    code = (
        "import sys, pathlib\n"
        "from bpe_studio import Tokenizer, train_bpe\n"
        "from bpe_studio.core import count_text, BpeTrainer\n"
        f"d = pathlib.Path({str(tmp_path)!r}); p = d / 'c.txt'\n"
        "p.write_text('hello hello world ' * 50, encoding='utf-8')\n"
        "v, m = train_bpe(p, 270); t = Tokenizer(v, m); t.encode('hello'); t.save(d)\n"
        + CHECK.replace("import sys, bpe_studio.core, bpe_studio; ", "")
    )
    result = run(code)
    assert result.returncode == 0, result.stderr


def test_the_check_itself_can_fail():
    # Guard against a check that passes vacuously: importing Qt is detected.
    result = run("import PySide6.QtCore; " + CHECK)
    assert result.returncode != 0 and "PySide6" in result.stderr
