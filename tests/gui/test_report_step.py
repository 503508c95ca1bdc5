"""The Report at a paused run's step: only the run's column is worked out again.

A paused run's replay or a drag of its timeline moves the step every frame; the Report encoded
every sample with every tokenizer at each (the corpus's first megabyte with four tokenizers),
though only the run's column changes. Checked here: after the first report, moving the step
encodes nothing with the other tokenizers, and each cell of the run's column equals the count
of a tokenizer built from scratch from the run's first ``k`` merges.
"""

from __future__ import annotations

from pathlib import Path

from gui_helpers import ROOT, paused_in_window

from bpe_studio.core import Tokenizer
from bpe_studio.core.explain.report import SAMPLE_FILES
from bpe_studio.gui.views.report import corpus_row


def _from_prefix(whole: Tokenizer, k: int, specials: list[str]) -> Tokenizer:
    """The oracle: a tokenizer built anew from the first ``k`` merges (no truncation)."""
    merges = list(whole.merges)[:k]
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256 + j: a + b for j, (a, b) in enumerate(merges)})
    return Tokenizer(vocab, merges, specials)


def test_a_paused_step_recomputes_the_runs_column_alone(qtbot, window, monkeypatch):
    from bpe_studio.gui.app import DEMO_CORPUS

    report = window.report
    specials = ["<|endoftext|>"]
    paused_in_window(qtbot, window, DEMO_CORPUS, 600, after=99)
    window.tabs.setCurrentWidget(report)
    texts = {
        name: (ROOT / "resources" / "samples" / file).read_text(encoding="utf-8")
        for name, file in SAMPLE_FILES
    }
    corpus = corpus_row(window.state.corpus_ref)
    texts[corpus.name] = corpus.text

    def computed_at(step: int):
        window.timeline.select_step(step)
        qtbot.waitUntil(
            lambda: report.report is not None
            and report.report.tokenizers[-1].endswith(f"(step {step})")
            and not report.busy, timeout=120_000,
        )  # fmt: skip
        return report.report

    first = computed_at(60)
    others = [c.current().get() for c in report.choices[:-1]]
    run = report.choices[-1].current()
    assert run.run is not None
    whole = run.run.get()
    encoded_with = []
    real_encode = Tokenizer.encode

    def spy(self, *args, **kwargs):
        encoded_with.append(self)
        return real_encode(self, *args, **kwargs)

    monkeypatch.setattr(Tokenizer, "encode", spy)
    for step in (40, 0, 73, 100, 1):
        shown = computed_at(step)
        assert shown.samples == first.samples == tuple(texts)
        column = shown.tokenizers[-1]
        for sample, text in texts.items():
            oracle = len(_from_prefix(whole, step, specials).encode(text))
            assert shown.cell(sample, column).tokens == oracle, (sample, step)
        # The other columns are those of the first report, none of them encoded again.
        for name in shown.tokenizers[:-1]:
            for sample in texts:
                assert shown.cell(sample, name) == first.cell(sample, name)
        assert not any(any(t is o for o in others) for t in encoded_with), step


def test_kept_cells_go_when_the_choice_or_the_corpus_changes(tmp_path, monkeypatch):
    """Cells are kept from one report to the next by tokenizer and sample text: a tokenizer
    chosen instead, or a corpus opened instead, is counted anew (a kept cell of the tokenizer
    before is not taken for it), and the run's step from a source is the oracle's count."""
    from bpe_studio.core import train_bpe
    from bpe_studio.gui.model.lab_records import CorpusRef
    from bpe_studio.gui.model.report_cells import ReportCells
    from bpe_studio.gui.model.tokenizer_source import TokenizerSource
    from bpe_studio.gui.views.picker import Choice
    from bpe_studio.gui.views.report import Computed, build_report

    specials = ["<|endoftext|>"]
    corpus_file = Path(__file__).parents[1] / "fixtures" / "tinystories_sample.txt"
    whole = Tokenizer(*train_bpe(corpus_file, 400, specials), specials)
    source = TokenizerSource("run", tokenizer=whole)
    plain = _from_prefix(whole, 30, specials)
    other = _from_prefix(whole, 60, specials)
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("the cat sat on the mat\n" * 50, encoding="utf-8")
    second.write_text("a dog ran in the park\n" * 50, encoding="utf-8")
    encoded_with = []
    real_encode = Tokenizer.encode

    def spy(self, text, *args, **kwargs):
        encoded_with.append((self, text))
        return real_encode(self, text, *args, **kwargs)

    monkeypatch.setattr(Tokenizer, "encode", spy)
    cells = ReportCells()

    def made(tok, corpus, step):
        chosen = [
            Choice("a", "a", lambda: tok),
            Choice("run", f"run (step {step})", lambda: source.at(step), run=source, step=step),
        ]
        ref = CorpusRef((str(corpus),), "text", corpus.name)
        del encoded_with[:]
        computed = build_report(chosen, ref, cells=cells)
        assert isinstance(computed, Computed)
        texts = [(ROOT / "resources" / "samples" / f).read_text("utf-8") for _, f in SAMPLE_FILES]
        texts.append(corpus.read_text("utf-8"))
        oracle = _from_prefix(whole, step, specials)
        column = computed.report.tokenizers[-1]
        for name, text in zip(computed.report.samples, texts):
            assert computed.report.cell(name, "a").tokens == len(tok.encode(text))
            assert computed.report.cell(name, column).tokens == len(oracle.encode(text))
        # What the report encoded with the tokenizer of slot a (the oracle's are new objects).
        return [text for t, text in encoded_with if t is tok]

    rows = len(SAMPLE_FILES) + 1
    # (each count is checked against the tokenizer's own encode: one more call per row)
    assert len(made(plain, first, 10)) == 2 * rows
    assert len(made(plain, first, 200)) == rows  # the step alone moved: the cells kept
    assert len(made(other, first, 200)) == 2 * rows  # another tokenizer chosen
    assert len(made(plain, first, 200)) == 2 * rows  # and back: the cells before it went
    # Another corpus: its row is counted anew, the bundled samples' cells are kept.
    assert len(made(plain, second, 200)) == rows + 1
