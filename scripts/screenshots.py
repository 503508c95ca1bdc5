"""Screenshots of the real app for the docs, rendered offscreen.

    QT_QPA_PLATFORM=offscreen python scripts/screenshots.py [--out docs/screenshots]

Writes
- ``training.png``: paused mid-way through training on English books (``../shared/corpora``),
  or on the bundled TinyStories sample when those are not there;
- ``trained.png``: after training it to a 3,000-token vocabulary, a merge selected;
- ``gpt2.png``: GPT-2's own tokenizer loaded, the editor showing English, Chinese and emoji;
- ``compare.png``: the Compare page, GPT-2 against GPT-4o on its sample text;
- ``report.png``: the Report page, the three presets on the bundled samples and TinyStories;
- ``timeline.png``: the 3,000-token run scrubbed back to step 60, the step-through on the
  word under the editor's cursor;
- ``picker.png``: the editor showing GPT-4o's (o200k_base) tokens, picked above the editor.
``scripts/screenshot_inspector.py`` makes ``merge_tree.png`` and ``step_through.png``.
GPT-2's files come from ``tests/fixtures``. Chinese text needs a CJK font (e.g. Noto CJK).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from shots import ROOT, new_window, out_folder, settle, trained_on_sample, wait

EDITOR_TEXT = (
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "sunshine with her dog, Max.\n"
    'One day, Lily found a shiny red ball under a big tree. "Look, Max!" she said.\n'
    "\tNumbers like 2024 and 3.14, and   extra   spaces, tokenize too.\n"
    "中文分词：你好，世界！ 今天天气很好。 Emoji: 😀😊 · café, naïve\n"
    "<|endoftext|>\n"
)


def main() -> int:
    out = out_folder(__doc__.split("\n")[0])

    from bpe_studio.gui.app import DEMO_CORPUS, application

    app = application()

    # 1. Paused mid-training, on the 38 MB English books corpus when it is there (its merges
    # are slow enough to stop early; the small sample runs thousands of merges per repaint).
    books = Path(os.environ.get("BPE_STUDIO_CORPORA", ROOT.parent / "shared" / "corpora"))
    books = books / "english_books.txt"
    window = new_window(app, EDITOR_TEXT)
    window.open_corpus(books if books.exists() else DEMO_CORPUS)
    window.panel.vocab_spin.setValue(10_000)
    window.start_training()
    session = window.controller.session
    session.pause_after(599)
    # The worker reaches its pause point and reports the pairs it would merge next.
    wait(app, lambda: session.worker_waiting)
    settle(app, window, 1.0)
    window.grab().save(str(out / "training.png"))
    window.close_without_asking()  # the shot is taken: no question about the run

    # 2. Trained to 3,000 tokens, a merge selected.
    window = trained_on_sample(app, EDITOR_TEXT, 3_000)
    window.editor.whitespace.setChecked(True)
    settle(app, window)
    window.merge_list.select_rank(1200)
    settle(app, window, 0.3)
    window.grab().save(str(out / "trained.png"))
    window.close_without_asking()  # the shot is taken: no question about the run

    # 3. GPT-2's tokenizer loaded to inspect.
    window = new_window(app, EDITOR_TEXT)
    fixtures = ROOT / "tests" / "fixtures"
    outcome: list[bool] = []
    window.controller.load_finished.connect(outcome.append)
    window.load_tokenizer(fixtures / "gpt2_vocab.json", fixtures / "gpt2_merges.txt")
    wait(app, lambda: outcome)
    if not outcome[0]:
        raise SystemExit(f"could not load GPT-2: {window.last_error}")
    window.vocab_table.filter_edit.setText(" token")
    settle(app, window)
    window.grab().save(str(out / "gpt2.png"))
    window.close_without_asking()  # the shot is taken: no question about the run

    # 4. The Compare and Report pages with the presets (emoji need a colour emoji font).
    window = new_window(app, EDITOR_TEXT)
    window.open_corpus(DEMO_CORPUS)
    window.tabs.setCurrentWidget(window.compare)
    wait(app, lambda: window.compare.comparison is not None and not window.compare.busy)
    settle(app, window, 0.5)
    window.grab().save(str(out / "compare.png"))
    window.tabs.setCurrentWidget(window.report)
    wait(app, lambda: window.report.report is not None and not window.report.busy, 180.0)
    settle(app, window, 0.5)
    window.grab().save(str(out / "report.png"))
    window.close_without_asking()  # the shot is taken: no question about the run

    # 5. Back in time: the run scrubbed to step 60, the step-through on the word at the cursor.
    window = trained_on_sample(app, EDITOR_TEXT, 3_000)
    window.hub.select_step(60)
    wait(app, lambda: not window.chart.pending, 60.0)
    settle(app, window)
    cursor = window.editor.edit.textCursor()
    cursor.setPosition(EDITOR_TEXT.index("little") + 2)
    window.editor.edit.setTextCursor(cursor)
    window.inspector.setCurrentIndex(1)
    settle(app, window, 1.0)
    window.grab().save(str(out / "timeline.png"))
    window.close_without_asking()  # the shot is taken: no question about the run

    # 6. A real model's tokenizer picked for the editor.
    window = new_window(app, EDITOR_TEXT)
    window.picker.pick("preset:o200k_base")
    wait(app, lambda: window.state.picked is not None and not window.editor_tokenizer.busy, 60.0)
    settle(app, window, 1.0)
    window.grab().save(str(out / "picker.png"))
    window.close_without_asking()  # the shot is taken: no question about the run
    app.processEvents()
    names = ("training.png", "trained.png", "gpt2.png", "compare.png", "report.png")
    for name in names + ("timeline.png", "picker.png"):
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
