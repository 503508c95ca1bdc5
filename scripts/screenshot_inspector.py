"""Screenshots of the inspector for the docs, rendered offscreen after a real training run.

    QT_QPA_PLATFORM=offscreen python scripts/screenshot_inspector.py [--out docs/screenshots]

Trains on the bundled TinyStories sample to a 3,000-token vocabulary, then writes
- ``merge_tree.png``: the whole window, the token `` every`` selected: its merge tree, what it
  grew into, its occurrences highlighted in the editor;
- ``step_through.png``: the inspector alone, replaying the encoder on `` everything`` at the
  step where its second merge is chosen.
"""

from __future__ import annotations

import sys

from shots import out_folder, settle, trained_on_sample, wait

TOKEN = " every"
PIECE = " everything"
EDITOR_TEXT = (
    "Once upon a time, there was a little girl named Lily. Everyone loved her, and she "
    "loved everyone.\n"
    "Every day she looked everywhere for shiny things, and every evening she showed "
    "everything she found to her dog, Max.\n"
    '"Look, Max!" she said. "Every stone is a treasure."\n'
    "中文分词：你好，世界！ Emoji: 😀😊 · café, naïve\n"
    "<|endoftext|>\n"
)


def main() -> int:
    out = out_folder(__doc__.split("\n")[0])

    from bpe_studio.gui.app import application

    app = application()
    window = trained_on_sample(app, EDITOR_TEXT, 3_000)
    settle(app, window)

    tokenizer = window.state.shown.get()
    (token_id,) = tokenizer.encode(TOKEN)
    window.vocab_table.select_token(token_id)
    window.hub.select_token(token_id)
    why = window.inspector.why
    wait(app, lambda: why.explanation is not None and why.explanation.token_id == token_id)
    settle(app, window, 0.4)
    window.grab().save(str(out / "merge_tree.png"))

    inspector = window.inspector
    inspector.setCurrentIndex(1)
    steps = inspector.step_through
    steps.show_piece(PIECE)
    wait(app, lambda: steps.walkthrough is not None and not steps.busy)
    steps.show_step(1)
    settle(app, window, 0.3)
    inspector.grab().save(str(out / "step_through.png"))
    window.close_without_asking()  # the shot is taken: no question about the run
    app.processEvents()
    for name in ("merge_tree.png", "step_through.png"):
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
