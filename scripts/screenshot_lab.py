"""Screenshots of the Vocabulary lab tab (issue 36), rendered offscreen.

    QT_QPA_PLATFORM=offscreen BPE_STUDIO_CORPORA=... python scripts/screenshot_lab.py
        [--out docs/screenshots]

Writes
- ``lab-english.png``: GPT-4o (o200k_base) against a Llama-3-style file, on English books;
- ``lab-chinese.png``: GPT-4o against a Qwen-style file, on the Chinese corpus, a never-used
  token clicked ("Why this token");
- ``lab-english-dark.png``, ``lab-chinese-dark.png``: the same windows after switching to the
  dark scheme (the charts restyled live, nothing computed again).

The two files are built here, offline, with Hugging Face ``tokenizers``: byte-level BPE
trained with Llama 3's pre-tokenizer regex on English books and Python code (``ignore_merges``,
as Llama 3's file has it), and with Qwen2's regex and NFC normalizer on Chinese and English
text, 32,000 tokens each. They have those models' shapes, not their vocabularies (those are
downloads). The corpora are the shared ones (``BPE_STUDIO_CORPORA``). Chinese text needs a CJK
font (e.g. Noto CJK).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from shots import ROOT, new_window, out_folder, settle, wait

VOCAB = 32_000
LLAMA3_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
TRAIN_BYTES = 12_000_000  # of each corpus the files are trained on


def _lines(path: Path, most: int = TRAIN_BYTES) -> Iterator[str]:
    seen = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            seen += len(line)
            if seen > most:
                return
            yield line


def build(path: Path, regex: str, corpora: list[Path], specials: list[str], nfc: bool) -> Path:
    """A byte-level BPE ``tokenizer.json`` trained with ``regex`` on ``corpora``."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(ignore_merges=not nfc))
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(regex), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator((line for c in corpora for line in _lines(c)), trainer)
    tok.save(str(path))
    return path


def main() -> int:
    out = out_folder(__doc__.split("\n")[0])
    corpora = Path(os.environ.get("BPE_STUDIO_CORPORA", ROOT.parent / "shared" / "corpora"))
    books, chinese, code = (corpora / n for n in ("english_books.txt", "chinese.txt", "code.txt"))
    if not all(p.exists() for p in (books, chinese, code)):
        raise SystemExit(f"the shared corpora are not in {corpora} (set BPE_STUDIO_CORPORA)")
    scratch = Path(tempfile.mkdtemp(prefix="bpe-lab-shots-"))
    llama = build(
        scratch / "llama3-style.json",
        LLAMA3_REGEX,
        [books, code],
        ["<|begin_of_text|>", "<|end_of_text|>"],
        nfc=False,
    )
    qwen = build(
        scratch / "qwen-style.json",
        QWEN2_REGEX,
        [chinese, books],
        ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        nfc=True,
    )

    from bpe_studio.gui.app import application
    from bpe_studio.gui.model.lab_lists import Show
    from bpe_studio.gui.views.picker import preset_key
    from bpe_studio.gui.views.theme import DARK, LIGHT, apply_scheme

    app = application(LIGHT)
    for name, other, corpus in (
        ("lab-english.png", llama, books),
        ("lab-chinese.png", qwen, chinese),
    ):
        window = new_window(app, "")
        lab = window.lab
        window.tabs.setCurrentWidget(lab)
        lab.picker.pick(preset_key("o200k_base"))
        lab.against.add_file(str(other))
        lab.choose_corpus(str(corpus))
        done = lab.lab
        wait(
            app,
            lambda done=done, lab=lab: (
                not lab.busy and done.usage is not None and done.overlap is not None
            ),
            900.0,
        )
        if corpus is chinese:
            lab.tokens.choose_show(Show.NEVER_USED)
            lab.tokens.choose_category("Han")
            settle(app, window, 0.5)
            model = lab.tokens.model
            if model.rowCount():
                lab.tokens.table.selectRow(0)
                lab.tokens.token_clicked.emit(False, model.token_id(0))
                wait(app, lambda lab=lab: lab.why.explanation is not None and not lab.why.busy)
        settle(app, window, 1.0)
        window.grab().save(str(out / name))
        print(out / name)
        apply_scheme(app, DARK)
        settle(app, window, 1.0)
        dark = name.replace(".png", "-dark.png")
        window.grab().save(str(out / dark))
        print(out / dark)
        apply_scheme(app, LIGHT)
        window.close_without_asking()
        app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())
