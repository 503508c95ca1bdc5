"""Screenshots of the app at the sizes and in the colour schemes it is checked at (issue 33).

    QT_QPA_PLATFORM=offscreen python scripts/screenshot_sizes.py [--out docs/screenshots]

Trains on TinyStories (``tinystories.txt`` of ``../shared/corpora``, or the bundled sample
when that is not there) to a 5,000-token vocabulary, scrubs back to step 1,500 with a merge
selected, and writes
- ``app-1600x1000.png``: the light scheme at 1600×1000;
- ``app-1280x800.png``: the same at 1280×800 (nothing cut or overlapping);
- ``app-dark.png``: the dark scheme at 1600×1000 (as a system in dark mode gets it).
The scheme is put on for the shots only (the user's saved choice is not touched).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from shots import ROOT, out_folder, settle, wait

EDITOR_TEXT = (
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "sunshine with her dog, Max.\n"
    'One day, Lily found a shiny red ball under a big tree. "Look, Max!" she said.\n'
    "中文分词：你好，世界！ Emoji: 😀 · café, naïve\n"
)


def main() -> int:
    out = out_folder(__doc__.split("\n")[0])

    from bpe_studio.gui.app import DEMO_CORPUS, application
    from bpe_studio.gui.main_window import MainWindow
    from bpe_studio.gui.model.state import Phase
    from bpe_studio.gui.views import theme

    app = application(theme.LIGHT)
    corpora = Path(os.environ.get("BPE_STUDIO_CORPORA", ROOT.parent / "shared" / "corpora"))
    corpus = corpora / "tinystories.txt"
    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    window.editor.set_text(EDITOR_TEXT)
    window.open_corpus(corpus if corpus.exists() else DEMO_CORPUS)
    window.panel.vocab_spin.setValue(5_000)
    window.start_training()
    wait(app, lambda: window.state.phase is Phase.FINISHED, 600.0)
    window.hub.select_step(1_500)
    wait(app, lambda: not window.chart.pending, 60.0)
    window.merge_list.select_rank(1_200)
    settle(app, window, 1.5)
    shots = []
    for name, size, scheme in (
        ("app-1600x1000.png", (1600, 1000), theme.LIGHT),
        ("app-1280x800.png", (1280, 800), theme.LIGHT),
        ("app-dark.png", (1600, 1000), theme.DARK),
    ):
        theme.apply_scheme(app, scheme)
        window.resize(*size)
        settle(app, window, 1.0)
        window.grab().save(str(out / name))
        shots.append(out / name)
    window.close_without_asking()  # the shots are taken: no question about the run
    app.processEvents()
    for shot in shots:
        print(shot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
