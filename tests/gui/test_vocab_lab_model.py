"""The Vocabulary lab's model (issue 36) without a window: which results it keeps, what it asks
for, how it follows the run's step, what its lists hold and what its CSV says.

Results are computed here with the core in this process (``token_table``, ``corpus_usage``,
``overlap``), as the lab's process computes them, and handed to the model as messages; each
rule is checked against an independent statement of it (the run's tokenizer rebuilt at each
step and classified anew; the lists recomputed with plain Python from the counts and bytes).
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from gui_helpers import EOT, FIXTURES

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.explain.usage import corpus_usage
from bpe_studio.core.explain.vocabulary import token_table
from bpe_studio.core.train.trainer import MergeStep
from bpe_studio.core.train.vocab import initial_vocab
from bpe_studio.gui.model.app_model import AppModel
from bpe_studio.gui.model.lab_csv import summary_csv, tokens_csv
from bpe_studio.gui.model.lab_lists import SPECIAL, Show, shows, token_rows
from bpe_studio.gui.model.lab_records import (
    CorpusRef,
    Ended,
    Failure,
    MakeupResult,
    Outcome,
    Part,
    Progress,
    TokenizerRef,
    UsageResult,
)
from bpe_studio.gui.model.lab_server import overlap_result
from bpe_studio.gui.model.lab_server import usage_result as lab_usage_result
from bpe_studio.gui.model.run_tokenizer import run_tokenizer_at
from bpe_studio.gui.model.state import RunSettings, TrainingResult
from bpe_studio.gui.model.vocab_lab import LAB, LAB_AGAINST, CorpusKind, LabCorpus

CORPUS = FIXTURES / "tinystories_sample.txt"
GPT2, CL100K = "preset:gpt2", "preset:cl100k_base"


@pytest.fixture(scope="module")
def tables():
    gpt2, cl100k = Tokenizer.preset("gpt2"), Tokenizer.preset("cl100k_base")
    return {GPT2: (gpt2, token_table(gpt2)), CL100K: (cl100k, token_table(cl100k))}


@pytest.fixture(scope="module")
def run():
    return train_bpe(CORPUS, 400, [EOT])


def lab_model(a: str = GPT2, b: str = "none") -> AppModel:
    hub = AppModel()
    hub.define_pane(LAB, a, a)
    hub.define_pane(LAB_AGAINST, b, b)
    return hub


def corpus_ref(path=CORPUS) -> CorpusRef:
    return CorpusRef((str(path),), "text", path.name)


def usage_result(ref, tok, table, corpus: CorpusRef) -> UsageResult:
    """What the lab's process sends for a usage."""
    usage = corpus_usage(tok, list(corpus.paths), table=table, workers=1)
    return lab_usage_result(ref, corpus, usage, table)


def steps_of(vocab, merges) -> list[MergeStep]:
    ids = {tok: i for i, tok in vocab.items()}
    return [MergeStep(r, a, b, ids[a + b], 1) for r, (a, b) in enumerate(merges)]


def trained(run, n: int | None = None, *, finish: bool = True) -> AppModel:
    vocab, merges = run
    hub = lab_model("run")
    hub.begin_run(RunSettings(400, (EOT,)), initial_vocab([EOT]))
    hub.start_merging()
    steps = steps_of(vocab, merges)[:n]
    hub.append_merges(steps)
    hub.publish()
    if finish:
        done = [(s.left, s.right) for s in steps]
        full = dict(initial_vocab([EOT]))
        full.update((s.new_id, s.left + s.right) for s in steps)
        hub.finish(TrainingResult(full, done, (EOT,), 0, False, 0.1))
    return hub


# ------------------------------------------------------------------ keys
def test_only_results_of_the_tokenizer_shown_or_picked_are_kept(tables):
    hub = lab_model()
    lab = hub.lab
    gpt2 = TokenizerRef(GPT2, "GPT-2")
    cl100k = TokenizerRef(CL100K, "GPT-4")
    assert not lab.receive(MakeupResult(cl100k, tables[CL100K][1]))  # not chosen
    assert lab.makeup is None
    assert lab.receive(MakeupResult(gpt2, tables[GPT2][1]))
    corpus = corpus_ref()
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, corpus.paths))
    assert lab.receive(usage_result(gpt2, *tables[GPT2], corpus))
    # A pick under way: the pane still shows GPT-2, whose results stay until GPT-4's come.
    hub.pick(LAB, CL100K, "GPT-4")
    assert lab.makeup is not None and lab.usage is not None
    assert lab.next_job().a.ref.key == CL100K
    assert lab.receive(MakeupResult(cl100k, tables[CL100K][1]))
    assert hub.pane(LAB).key == CL100K and hub.pick_under_way(LAB) is None
    assert lab.makeup.ref.key == CL100K
    assert lab.usage is None  # GPT-2's usage went with its tokenizer
    # A late result of the choice before is dropped.
    assert not lab.receive(usage_result(gpt2, *tables[GPT2], corpus))
    assert not lab.receive(MakeupResult(gpt2, tables[GPT2][1]))
    assert lab.makeup.ref.key == CL100K


def test_a_usage_of_another_corpus_is_dropped_and_a_new_corpus_drops_the_old(tables):
    hub = lab_model()
    lab = hub.lab
    gpt2 = TokenizerRef(GPT2, "GPT-2")
    lab.receive(MakeupResult(gpt2, tables[GPT2][1]))
    german = corpus_ref(FIXTURES / "german.txt")
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    assert not lab.receive(usage_result(gpt2, *tables[GPT2], german))
    assert lab.receive(usage_result(gpt2, *tables[GPT2], corpus_ref()))
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, german.paths))
    assert lab.usage is None
    job = lab.next_job()
    assert job.corpus == german and not job.makeup  # the make-up is there already


def test_the_second_tokenizer_alone_lets_a_usage_under_way_finish(tables):
    hub = lab_model()
    lab = hub.lab
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    job = lab.next_job()
    lab.job_started(job)
    hub.pick(LAB_AGAINST, CL100K, "GPT-4")
    assert lab.running_still_wanted()  # same tokenizer and corpus: not started over
    lab.choose_corpus(LabCorpus())
    assert not lab.running_still_wanted()


def test_a_usage_before_its_scan_is_shown_and_still_due_until_complete(tables):
    hub = lab_model()
    lab = hub.lab
    gpt2 = TokenizerRef(GPT2, "GPT-2")
    tok, table = tables[GPT2]
    lab.receive(MakeupResult(gpt2, table))
    corpus = corpus_ref()
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, corpus.paths))
    job = lab.next_job()
    lab.job_started(job)
    heard: list = []
    usage = corpus_usage(tok, list(corpus.paths), table=table, workers=1, encoded=heard.append)
    first = lab_usage_result(gpt2, corpus, heard[0], table, complete=False)
    assert lab.receive(first) and lab.usage is first
    assert lab.due().usage and lab.running_still_wanted()  # the job under way completes it
    # Cancelled after its first part: shown as it is, not computed again until asked.
    lab.cancel()
    lab.receive(Ended(job.number, Outcome.CANCELLED))
    assert lab.usage is first and lab.next_job() is None
    lab.compute_again()
    job = lab.next_job()
    assert job.corpus == corpus
    lab.job_started(job)
    final = lab_usage_result(gpt2, corpus, usage, table)
    assert lab.receive(final) and lab.usage is final
    lab.receive(Ended(job.number, Outcome.DONE))
    assert not lab.due().usage and lab.next_job() is None


# ------------------------------------------------------------------ the run
def test_the_runs_makeup_follows_the_timelines_step(run):
    hub = trained(run)
    lab = hub.lab
    job = lab.next_job()
    assert job.steps and job.a.ref.run_id == hub.state.run_id
    full = run_tokenizer_at(hub.state, hub.state.published)()
    table = token_table(full, steps=True)
    assert lab.receive(MakeupResult(job.a.ref, table))
    for k in (0, 1, 37, 90, hub.state.published):
        hub.select_step(k)
        makeup, step = lab.shown_makeup()
        # Independent: the run's tokenizer after k merges, classified from scratch.
        expected = token_table(run_tokenizer_at(hub.state, k)()).makeup()
        assert step == k
        assert (makeup.tokens, makeup.special_tokens) == (expected.tokens, expected.special_tokens)
        assert makeup.categories == expected.categories
        assert makeup.length_histogram == expected.length_histogram
        assert makeup.unreachable == expected.unreachable


def test_while_the_run_trains_its_makeup_is_due_and_usage_waits(run):
    hub = trained(run, 50, finish=False)
    lab = hub.lab
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    hub.pick(LAB_AGAINST, GPT2, "GPT-2")
    due = lab.due()
    assert due.makeup and not due.usage and not due.overlap
    ref = lab.wanted_a()
    assert ref.merges == 50
    table = token_table(run_tokenizer_at(hub.state, 50)(), steps=True)
    assert lab.receive(MakeupResult(ref, table))
    assert not lab.due()
    vocab, merges = run
    hub.append_merges(steps_of(vocab, merges)[50:80])
    hub.publish()  # live: the step moves to 80
    assert lab.behind() == 80 and lab.shown_makeup()[1] == 50
    assert lab.due().makeup and lab.makeup is not None  # the earlier step stays meanwhile
    hub.set_paused(True)
    due = lab.due()
    assert due.makeup and due.usage and due.overlap


def test_a_discarded_run_leaves_nothing_in_the_lab(run):
    hub = trained(run)
    lab = hub.lab
    ref = lab.wanted_a()
    lab.receive(MakeupResult(ref, token_table(run_tokenizer_at(hub.state, 10)(), steps=True)))
    assert lab.makeup is not None
    hub.discard_run()
    assert lab.makeup is None and lab.wanted_a() is None
    assert lab.missing is not None and "no run" in lab.missing
    assert not lab.receive(MakeupResult(ref, token_table(Tokenizer.preset("gpt2"))))


def test_the_runs_tokenizer_picked_before_any_run_is_shown_at_once_and_followed(run):
    hub = lab_model()
    lab = hub.lab
    hub.pick(LAB, "run", "The run's tokenizer")
    assert hub.pane(LAB).key == "run" and hub.pick_under_way(LAB) is None
    assert lab.next_job() is None and "no run's tokenizer" in lab.missing
    vocab, merges = run
    hub.begin_run(RunSettings(400, (EOT,)), initial_vocab([EOT]))
    job = lab.next_job()
    assert job is not None and job.a.ref.is_run and job.a.ref.merges == 0


# ------------------------------------------------------------------ jobs
def test_a_failed_pick_is_undone_and_said_once():
    hub = lab_model()
    lab = hub.lab
    said: list[str] = []
    lab.announce.connect(said.append)
    hub.pick(LAB, "hf:acme/missing", "acme/missing")
    job = lab.next_job()
    lab.job_started(job)
    assert lab.receive(Failure(job.number, Part.A, "hf:acme/missing", "acme/missing: offline"))
    assert hub.pane(LAB).key == GPT2 and hub.pick_under_way(LAB) is None
    assert hub.pane(LAB).failed == ("hf:acme/missing", "acme/missing", "acme/missing: offline")
    assert len(said) == 1 and said[0].startswith("Could not load acme/missing: offline")
    # The status line has it on one line, its two sentences apart (they ran together:
    # "...: offline GPT-2 is shown.").
    shown = hub.pane(LAB).label
    assert lab.problem == f"Could not load acme/missing: offline. {shown} is shown."
    # Nothing was given up (the pick was undone): Compute has nothing to compute again.
    assert not lab.can_compute_again
    assert lab.next_job().a.ref.key == GPT2


def test_a_failed_corpus_or_a_cancel_is_not_retried_until_asked(tables):
    hub = lab_model()
    lab = hub.lab
    lab.receive(MakeupResult(TokenizerRef(GPT2, "GPT-2"), tables[GPT2][1]))
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, ("/nowhere/corpus.txt",)))
    job = lab.next_job()
    lab.job_started(job)
    lab.receive(Failure(job.number, Part.CORPUS, "corpus.txt", "/nowhere/corpus.txt: missing"))
    lab.receive(Ended(job.number, Outcome.FAILED))
    assert lab.problem == "/nowhere/corpus.txt: missing"
    assert lab.can_compute_again
    assert lab.next_job() is None  # not again and again
    lab.compute_again()
    assert lab.next_job() is not None and lab.problem is None
    # A cancel: the same until a choice changes.
    job = lab.next_job()
    lab.job_started(job)
    lab.cancel()
    lab.receive(Ended(job.number, Outcome.CANCELLED))
    assert lab.cancelled and lab.problem.startswith("Cancelled: the usage of corpus.txt")
    assert lab.next_job() is None
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    assert lab.next_job() is not None and not lab.cancelled


def test_news_of_a_job_no_longer_awaited_is_dropped():
    hub = lab_model()  # the lab belongs to its model: kept while the lab is used
    lab = hub.lab
    job = lab.next_job()
    lab.job_started(job)
    assert not lab.receive(Progress(job.number + 1, "encoding", 1, 2))
    assert lab.receive(Progress(job.number, "encoding", 1, 2))
    assert lab.progress.done == 1
    assert not lab.receive(Ended(job.number + 1, Outcome.DONE))
    assert lab.running is job
    assert lab.receive(Ended(job.number, Outcome.DONE))
    assert lab.running is None and lab.progress is None


# ------------------------------------------------------------------ lists and CSV
@pytest.fixture(scope="module")
def full_lab(tables):
    hub = lab_model(GPT2, CL100K)
    lab = hub.lab
    a, b = TokenizerRef(GPT2, "GPT-2"), TokenizerRef(CL100K, "GPT-4")
    corpus = corpus_ref()
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, corpus.paths))
    lab.receive(MakeupResult(a, tables[GPT2][1]))
    lab.receive(usage_result(a, *tables[GPT2], corpus))
    lab.receive(overlap_result(a, b, tables[GPT2][1], tables[CL100K][1]))
    return lab


def test_the_lists_hold_what_their_names_say(full_lab, tables):
    lab = full_lab
    assert shows(lab) == list(Show)
    gpt2, table = tables[GPT2]
    _, other = tables[CL100K]
    counts = lab.usage.usage.counts
    specials = set(gpt2.special_tokens)
    ordinary = {i: t for i, t in gpt2.vocab.items() if t.decode("utf-8", "replace") not in specials}
    theirs = {other.tokens[r] for r in range(len(other)) if not other.special[r]}

    def listed(show, category=None):
        rows = token_rows(lab, show, category)
        return [int(rows.table.ids[r]) for r in rows.rows]

    assert listed(Show.NEVER_USED) == sorted(i for i in ordinary if counts[i] == 0)
    used = [i for i in ordinary if counts[i] > 0]
    assert listed(Show.USED) == sorted(used, key=lambda i: (-counts[i], i))
    assert listed(Show.INSIDE) == sorted(lab.usage.usage.inside)
    assert listed(Show.ABSENT) == sorted(lab.usage.usage.absent)
    assert listed(Show.ONLY_THIS) == sorted(i for i, t in ordinary.items() if t not in theirs)
    assert listed(Show.SHARED) == sorted(i for i, t in ordinary.items() if t in theirs)
    mine = set(ordinary.values())
    only_other = [int(other.ids[r]) for r in range(len(other)) if not other.special[r]]
    assert listed(Show.ONLY_OTHER) == [
        i for i in only_other if other.tokens[other.row(i)] not in mine
    ]
    han = [i for i, t in ordinary.items() if t.decode("utf-8", "ignore") and _is_han(t)]
    assert listed(Show.ALL, "Han") == sorted(han)
    assert listed(Show.ALL, SPECIAL) == [50256]


def _is_han(token: bytes) -> bool:
    import unicodedata

    try:
        text = token.decode("utf-8").removeprefix(" ")
    except UnicodeDecodeError:
        return False
    return bool(text) and all(
        "CJK UNIFIED IDEOGRAPH" in unicodedata.name(ch, "") or ch in "〆〇" for ch in text
    )


def test_the_summary_csv_says_the_cores_numbers(full_lab, tables):
    lab = full_lab
    rows = list(csv.DictReader(io.StringIO(summary_csv(lab))))
    value = {(r["section"], r["name"], r["measure"]): r["value"] for r in rows}
    makeup = tables[GPT2][1].makeup()
    assert int(value["makeup", "all", "tokens"]) == makeup.tokens == 50257
    assert int(value["makeup", "ordinary", "tokens"]) == makeup.ordinary_tokens
    for name, count in makeup.categories.items():
        assert int(value["category", name, "tokens"]) == count.tokens
        assert int(value["category", name, "leading_space"]) == count.leading_space
    for length, n in makeup.length_histogram.items():
        assert int(value["length", str(length), "tokens"]) == n
    usage = lab.usage.usage
    assert int(value["corpus", "text", "tokens"]) == usage.tokens
    assert int(value["corpus", "ordinary", "unused"]) == len(usage.unused_ids(tables[GPT2][1]))
    total = lab.overlap.overlap.total
    assert int(value["overlap", "all", "shared"]) == total.shared
    # The tokens CSV: one row per token listed, with its count.
    listed = token_rows(lab, Show.USED)
    table = list(csv.DictReader(io.StringIO(tokens_csv(listed))))
    assert [int(r["id"]) for r in table] == [int(listed.table.ids[r]) for r in listed.rows]
    assert all(int(r["count"]) == usage.count(int(r["id"])) for r in table)
    assert np.all(np.diff([int(r["count"]) for r in table]) <= 0)


def test_the_tokens_csv_gives_a_foreign_token_as_its_file_writes_it(tmp_path):
    """Left by this round's inspect fixes: the lab's CSV gave a SentencePiece file's <0x41>
    and A the same token and bytes, where ``inspect --json`` gives each its own ``text``."""
    import json

    from foreign_files import sentencepiece_bpe

    from bpe_studio.core import open_tokenizer
    from bpe_studio.gui.model.lab_lists import TokenRows

    path = sentencepiece_bpe(tmp_path / "sp")
    table = token_table(open_tokenizer(path))
    listed = TokenRows(table, np.arange(len(table.ids)), None, None)
    rows = list(csv.DictReader(io.StringIO(tokens_csv(listed))))
    vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    assert {int(r["id"]): r["text"] for r in rows if r["special"] == "0"} == {
        i: t for t, i in vocab.items() if i in {int(r["id"]) for r in rows if r["special"] == "0"}
    }
    texts = [r["text"] for r in rows]
    assert len(set(texts)) == len(texts) and "<0x41>" in texts


def test_a_loaded_runs_added_tokens_reach_the_labs_process(tmp_path):
    # Found by an audit: the lab rebuilt a loaded tokenizer.json's run without its added
    # tokens that are not special (Qwen3's <think>), so it counted them as unreachable
    # tokens split into bytes. The run goes to the lab's process as messages; what the
    # process rebuilds must be the tokenizer's own data.
    from types import SimpleNamespace

    import tokenizers
    from core_helpers import SLICES, read_fixture
    from hf_shapes import FAMILIES, trained_bpe

    from bpe_studio.core import Tokenizer
    from bpe_studio.gui.model.lab_process import LabProcess
    from bpe_studio.gui.model.lab_records import RunData
    from bpe_studio.gui.model.lab_server import _Server

    hf = trained_bpe(*FAMILIES["llama3"], [read_fixture(SLICES["english"])[:20_000]], 400)
    hf.add_special_tokens([tokenizers.AddedToken("<|endoftext|>", special=True)])
    hf.add_tokens([tokenizers.AddedToken("<think>", special=False, normalized=False)])
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.from_hf(tmp_path / "tokenizer.json")
    assert tok.added_tokens == {"<think>": hf.token_to_id("<think>")}
    sent: list[tuple] = []
    conn = SimpleNamespace(send=sent.append)
    run = RunData(tok, [], 0, {}, (), "gpt2")
    LabProcess(lambda message: None)._send_run(
        conn, SimpleNamespace(ref=SimpleNamespace(run_id=3)), run
    )
    server = _Server(conn, None)
    for message in sent:
        server.handle(message)
    assert server.loaded_run is not None and server.loaded_run[0] == 3
    rebuilt = server.loaded_run[1]
    assert rebuilt == tok.to_data() and rebuilt.added_tokens == tok.added_tokens


def _lab_job(b: bool = True):
    from bpe_studio.gui.model.lab_records import Kind, LabJob, TokenizerSpec

    def spec(name: str) -> TokenizerSpec:
        return TokenizerSpec(TokenizerRef(f"preset:{name}", name), Kind.PRESET, source=name)

    return LabJob(spec("gpt2"), corpus_ref(), spec("cl100k_base") if b else None)


def _wait(messages: list, test, timeout: float = 120.0) -> None:
    """Until ``test(messages so far)`` holds (they arrive from the lab's thread)."""
    import time

    for _ in range(int(timeout / 0.05)):
        if test(list(messages)):
            return
        time.sleep(0.05)
    raise AssertionError(f"not seen: {messages!r}")


def _waiting_for_compile(message) -> bool:
    from bpe_studio.gui.model.lab_process import WAITING_FOR_COMPILE

    return isinstance(message, Progress) and message.stage == WAITING_FOR_COMPILE


def test_a_usage_waits_for_the_windows_encoder_compile(monkeypatch):
    """An audit of a first run: the lab's process compiled the encoder beside the window's
    first compile (40 s each, at half the machine). Its usage now waits; the make-up and the
    overlap, which need no encoder, come at once."""
    from bpe_studio.gui.model import lab_process
    from bpe_studio.gui.model.lab_records import OverlapResult

    compiling = [True]
    monkeypatch.setattr(lab_process.kernel_start, "preparing", lambda: compiling[0])
    messages: list = []
    lab = lab_process.LabProcess(messages.append)
    try:
        job = lab.submit(_lab_job())
        _wait(messages, lambda m: any(_waiting_for_compile(x) for x in m))
        kinds = [type(x) for x in messages]
        assert MakeupResult in kinds and OverlapResult in kinds
        assert UsageResult not in kinds and Ended not in kinds
        compiling[0] = False
        _wait(messages, lambda m: any(isinstance(x, Ended) for x in m))
        ended = [x for x in messages if isinstance(x, Ended)]
        assert ended == [Ended(job.number, Outcome.DONE)]
        usage = [x for x in messages if isinstance(x, UsageResult)]
        assert usage and usage[-1].complete and usage[-1].ref.key == "preset:gpt2"
        # Each part once: one make-up, one overlap.
        assert kinds.count(MakeupResult) == 1 and kinds.count(OverlapResult) == 1
    finally:
        lab.shutdown()


def test_a_usage_waiting_for_the_compile_is_cancelled_at_once(monkeypatch):
    from bpe_studio.gui.model import lab_process

    monkeypatch.setattr(lab_process.kernel_start, "preparing", lambda: True)
    messages: list = []
    lab = lab_process.LabProcess(messages.append)
    try:
        job = lab.submit(_lab_job(b=False))
        _wait(messages, lambda m: any(_waiting_for_compile(x) for x in m))
        lab.cancel()
        _wait(messages, lambda m: any(isinstance(x, Ended) for x in m), timeout=10)
        assert [x for x in messages if isinstance(x, Ended)] == [
            Ended(job.number, Outcome.CANCELLED)
        ]
        assert not any(isinstance(x, UsageResult) for x in messages)
    finally:
        lab.shutdown()


def trained_with_usage(run) -> tuple[AppModel, int, Tokenizer]:
    """A trained run in the lab with CORPUS's use at its last step: the hub, that step and
    the run's whole tokenizer."""
    hub = trained(run)
    lab = hub.lab
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    job = lab.next_job()
    last = hub.state.published
    full = run_tokenizer_at(hub.state, last)()
    table = token_table(full, steps=True)
    assert lab.receive(MakeupResult(job.a.ref, table))
    usage = corpus_usage(full, [str(CORPUS)], table=table, workers=1)
    assert lab.receive(lab_usage_result(job.a.ref, corpus_ref(), usage, table))
    return hub, last, full


def test_lists_and_csv_of_an_earlier_step_say_which_step_each_number_is_of(run):
    """A real-display audit: with the timeline moved back to step 37, the lists and the CSV's
    category rows mixed the make-up at step 37 with the corpus's use counted at the run's
    last step (more tokens used than there were)."""
    hub, last, full = trained_with_usage(run)
    lab = hub.lab
    hub.select_step(37)
    listed = token_rows(lab, Show.USED)
    assert listed.step == last  # the corpus's own step, not the make-up's
    assert token_rows(lab, Show.ALL).step == 37
    rows = list(csv.DictReader(io.StringIO(summary_csv(lab))))
    value = {(r["section"], r["name"], r["measure"]): r["value"] for r in rows}
    assert value["about", "tokenizer", "step"] == "37"
    assert value["about", "corpus", "tokenizer_step"] == str(last)
    # Independent: the run's tokenizer after 37 merges, and the whole run's use of the corpus.
    at_37 = token_table(run_tokenizer_at(hub.state, 37)()).makeup()
    made = {name: c.tokens for name, c in at_37.categories.items()}
    in_csv = {n: int(v) for (sec, n, m), v in value.items() if sec == "category" and m == "tokens"}
    assert {n: v for n, v in in_csv.items() if v} == made
    used = {
        n: int(v) for (sec, n, m), v in value.items() if sec == "corpus_category" and m == "used"
    }
    assert sum(used.values()) == len(
        set(full.encode(CORPUS.read_text(encoding="utf-8"))) - {full.eot_token}
    )
    assert not any(sec == "category" and m == "used" for sec, n, m in value)


def test_a_list_of_an_earlier_step_shows_no_counts_of_another(run):
    """A scale audit: the timeline moved back, "All tokens" (and "Unreachable", and any
    category) listed that step's tokens with the corpus counts of the run's last step in the
    Count column and in Export CSV, said nowhere. The counts are left out there now, and the
    list says of which step they are; at the corpus's own step they are the encoder's."""
    hub, last, full = trained_with_usage(run)
    lab = hub.lab
    # At the corpus's own step: counts, each the encoder's own.
    listed = token_rows(lab, Show.ALL)
    assert listed.counts is not None and listed.counts_of is None
    ids = full.encode(CORPUS.read_text(encoding="utf-8"))
    some = listed.rows[:: max(1, len(listed.rows) // 50)]
    for r in some:
        assert listed.counts[r] == ids.count(int(listed.table.ids[r]))
    hub.select_step(37)
    for show in (Show.ALL, Show.UNREACHABLE):
        if show not in shows(lab):
            continue
        listed = token_rows(lab, show)
        assert listed.step == 37 and listed.counts is None and listed.counts_of == last
        header = next(csv.reader(io.StringIO(tokens_csv(listed))))
        assert "count" not in header
    # The lists of the corpus's use stay at its step, with its counts.
    used = token_rows(lab, Show.USED)
    assert used.step == last and used.counts is not None and used.counts_of is None


def test_a_loaded_tokenizers_lists_keep_their_counts_at_its_last_step(run, tmp_path):
    """The review of the change above: a loaded tokenizer's use names no step, so every list
    of it lost its counts, unsaid. At its last step they are shown; moved back, left out and
    said, as for a run."""
    from bpe_studio.gui.jobs.loader import prepare

    vocab, merges = run
    tok = Tokenizer(vocab, merges, [EOT])
    tok.save(tmp_path, format="gpt2")
    hub = lab_model("run")
    hub.show_loaded(prepare(tmp_path / "vocab.json", tmp_path / "merges.txt"))
    lab = hub.lab
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    job = lab.next_job()
    table = token_table(tok, steps=True)
    assert lab.receive(MakeupResult(job.a.ref, table))
    usage = corpus_usage(tok, [str(CORPUS)], table=table, workers=1)
    assert lab.receive(lab_usage_result(job.a.ref, corpus_ref(), usage, table))
    listed = token_rows(lab, Show.ALL)
    assert listed.counts is not None and listed.counts_of is None
    hub.select_step(37)
    listed = token_rows(lab, Show.ALL)
    assert listed.counts is None and listed.counts_of == len(merges)


def test_a_cancel_names_only_what_had_not_come(tables):
    """A real-display audit: cancelled after GPT-2's make-up was drawn whole, the lab said
    "Cancelled: the make-up of GPT-2, the usage of *.txt" and offered to compute it again."""
    hub = lab_model(GPT2)
    lab = hub.lab
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    job = lab.next_job()
    assert job.makeup and job.corpus is not None
    lab.job_started(job)
    assert lab.receive(MakeupResult(job.a.ref, tables[GPT2][1]))
    lab.cancel()
    lab.receive(Ended(job.number, Outcome.CANCELLED))
    assert lab.problem == f"Cancelled: the usage of {CORPUS.name}"
    assert lab.makeup is not None and lab.makeup.ref == job.a.ref
    # Computing again asks for the usage alone.
    lab.compute_again()
    again = lab.next_job()
    assert again is not None and again.corpus is not None and not lab.due().makeup


def test_two_globs_are_told_apart_by_their_folder():
    """A real-display audit: /data/big/*.txt and /data/small/*.txt both read "*.txt"."""
    big = LabCorpus(CorpusKind.FILES, ("/data/big/*.txt",))
    small = LabCorpus(CorpusKind.FILES, ("/data/small/*.txt",))
    assert (big.label, small.label) == ("big/*.txt", "small/*.txt")
    assert (
        LabCorpus(CorpusKind.FILES, ("/data/big/a.txt", "/x/b.txt")).label == "a.txt (and 1 more)"
    )


def test_a_message_of_an_unknown_kind_is_an_error_in_both_child_processes():
    """Found by the code review: the lab's process and the curves' ignored a message of a
    kind they did not know, so a misspelt one was silently a no-op."""
    import signal
    from multiprocessing import Pipe
    from types import SimpleNamespace

    from bpe_studio.gui.model.curve_server import serve
    from bpe_studio.gui.model.lab_server import _Server

    server = _Server(SimpleNamespace(send=lambda _m: None), None)
    with pytest.raises(ValueError, match="unknown message 'run-merge'"):
        server.handle(("run-merge", 1, 0, []))
    ours, theirs = Pipe()
    ours.send(("begn", {}, (), "gpt2", []))
    ours.send(("stop",))
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        serve(theirs)  # in this process: it answers, then stops
    finally:
        for sig, handler in handlers.items():  # serve ignores Ctrl-C, as a child does
            signal.signal(sig, handler)
    assert ours.recv() == ("failure", "compression curve: ValueError: unknown command 'begn'")
    assert ours.recv() == ("done",)


def test_a_tokenizer_file_changed_on_disk_is_another_tokenizer(tmp_path, tables):
    """An audit: a tokenizer file retrained into the same folder was the same tokenizer to the
    lab (its key was its path alone): its old make-up and usage stayed under its name."""
    path = tmp_path / "tokenizer.json"
    path.write_text("{}", encoding="utf-8")
    key = f"file:{path}"
    hub = lab_model(key)
    lab = hub.lab
    old = lab.wanted_a()
    assert lab.receive(MakeupResult(old, tables[GPT2][1]))
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    assert lab.receive(usage_result(old, *tables[GPT2], corpus_ref()))
    assert not lab.due()
    path.write_text('{"retrained": true}', encoding="utf-8")
    new = lab.wanted_a()
    assert new.key == old.key and not new.same_tokenizer(old)
    assert lab.due().makeup and lab.due().usage
    job = lab.next_job()
    assert job.a.ref == new and job.a.cache_key != (job.a.kind.value, job.a.source, old.version)
    # A late result of the file as it was is dropped; what was shown of it goes.
    assert not lab.receive(MakeupResult(old, tables[GPT2][1]))
    lab.file_reloaded()
    assert lab.makeup is None and lab.usage is None


def test_a_file_loaded_again_in_any_picker_is_read_again_by_the_lab(tmp_path, tables):
    """An audit: "Load tokenizer file…" of a file in Compare's picker was heard by no other
    page (only the lab's own pickers told the lab). The app model says a file was read again;
    the lab drops what it worked out from that file, and nothing for another file."""
    path = tmp_path / "tokenizer.json"
    path.write_text("{}", encoding="utf-8")
    hub = lab_model(f"file:{path}")
    lab = hub.lab
    assert lab.receive(MakeupResult(lab.wanted_a(), tables[GPT2][1]))
    hub.read_file_again(str(tmp_path / "another.json"))
    assert lab.makeup is not None and not lab.due()
    wanted = []
    lab.wanted_changed.connect(lambda: wanted.append(1))
    hub.read_file_again(str(path))
    assert lab.makeup is None and lab.due().makeup and wanted


def test_a_text_field_is_given_only_for_a_corpus_of_records():
    """An audit: a text field typed for a .jsonl corpus stayed, hidden, when a plain .txt was
    chosen next, whose usage then failed over a field the user could not see."""
    from bpe_studio.gui.model.corpus_source import corpus_source

    hub = lab_model()
    lab = hub.lab
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, ("/data/zh.jsonl.gz",)))
    lab.set_text_field("content")
    assert lab.corpus_holds_records and lab.wanted_corpus().text_field == "content"
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    assert not lab.corpus_holds_records and lab.wanted_corpus().text_field == "text"
    # A .json the user said holds records: its field, and how to read it, go to the job.
    records = LabCorpus(CorpusKind.FILES, ("/data/rows.json",), "jsonl")
    lab.choose_corpus(records)
    wanted = lab.wanted_corpus()
    assert (wanted.text_field, wanted.records) == ("content", "jsonl")
    assert records.label == "rows.json (as records)"
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, ("/data/rows.json",), "text"))
    wanted = lab.wanted_corpus()
    assert (wanted.text_field, wanted.records) == ("text", "text")
    # The corpus opened: plain text gets no field either.
    hub.set_corpus(corpus_source([str(CORPUS)]))
    lab.choose_corpus(LabCorpus(CorpusKind.OPENED))
    assert not lab.corpus_holds_records and lab.wanted_corpus().text_field == "text"
    assert lab.text_field == "content"  # kept for the next records chosen


def test_a_dead_worker_or_lab_process_is_told_in_words_and_asking_again_works(monkeypatch):
    """An audit killed (kill -9) the lab's processes: the status said "BrokenProcessPool: A
    process in the process pool was terminated abruptly…" for a worker, and "the lab's
    process ended ()" for the lab's own."""
    from concurrent.futures.process import BrokenProcessPool

    from bpe_studio.gui.model import lab_process
    from bpe_studio.gui.model.errors import describe_job_error

    pool = describe_job_error(BrokenProcessPool("A process in the process pool was terminated"))
    assert pool.startswith("A worker process ended abruptly (killed, or out of memory)")
    assert "asking again" in pool and "BrokenProcessPool" not in pool

    compiling = [True]
    monkeypatch.setattr(lab_process.kernel_start, "preparing", lambda: compiling[0])
    messages: list = []
    lab = lab_process.LabProcess(messages.append)
    try:
        job = lab.submit(_lab_job(b=False))
        _wait(messages, lambda m: any(_waiting_for_compile(x) for x in m))
        child = lab._process
        child.kill()  # while the job waits, between two exchanges with it
        child.join()
        compiling[0] = False
        _wait(messages, lambda m: any(isinstance(x, Ended) for x in m))
        assert [x for x in messages if isinstance(x, Ended)] == [Ended(job.number, Outcome.FAILED)]
        (failure,) = [x for x in messages if isinstance(x, Failure)]
        assert failure.message == (
            "The lab's process ended abruptly (killed, or out of memory); asking again starts "
            "it anew"
        )
        messages.clear()
        again = lab.submit(_lab_job(b=False))
        _wait(messages, lambda m: any(isinstance(x, Ended) for x in m))
        assert [x for x in messages if isinstance(x, Ended)] == [Ended(again.number, Outcome.DONE)]
    finally:
        lab.shutdown()


_CLOSE_DURING_USAGE = """
import PySide6.QtCore  # as the app's main module, which the fork server imports first

import sys
import time

from bpe_studio.gui.model.lab_process import LabProcess
from bpe_studio.gui.model.lab_records import (
    CorpusRef, Kind, LabJob, Progress, TokenizerRef, TokenizerSpec,
)


def main():
    messages = []
    lab = LabProcess(messages.append)
    spec = TokenizerSpec(TokenizerRef("preset:gpt2", "gpt2"), Kind.PRESET, source="gpt2")
    corpus = CorpusRef((sys.argv[1],), "text", "corpus.txt")
    lab.submit(LabJob(spec, corpus, makeup=False, workers=2))
    while not any(
        isinstance(m, Progress) and m.stage.startswith("encoding") and 0 < m.done < m.total
        for m in list(messages)
    ):
        time.sleep(0.02)
    lab.shutdown()  # the window closing while the usage is computed: the process is ended
    print("shut", flush=True)


if __name__ == "__main__":
    main()
"""


def test_closing_during_a_usage_leaves_no_semaphore_to_warn_of(tmp_path):
    """A real-display audit: switching the lab's tokenizer while a corpus was encoded, then
    closing the window, printed multiprocessing's "leaked semaphore objects" warning as the
    app exited. The lab's process had started its usage's workers through the fork server
    (PySide6, imported by the app's main module, was in its modules), so their queues'
    semaphores were named for the app's resource tracker, and the process was ended before it
    could unname them."""
    import subprocess
    import sys

    script = tmp_path / "close_during_usage.py"
    script.write_text(_CLOSE_DURING_USAGE, encoding="utf-8")
    text = CORPUS.read_text(encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text * max(1, 40_000_000 // len(text)), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(corpus)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and done.stdout == "shut\n", done.stderr
    assert "leaked" not in done.stderr, done.stderr


def test_a_part_that_comes_after_its_cancel_is_no_longer_named(tables):
    """A Vocabulary lab audit (seen once on an X display): Cancel pressed as the make-up was
    on its way said "Cancelled: the make-up of qwens.json, ..." over that make-up, drawn
    whole. A part that comes after all is shown and the message drops it."""
    hub = lab_model()
    lab = hub.lab
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(CORPUS),)))
    job = lab.next_job()
    assert job.makeup and job.corpus is not None and job.b is None
    lab.job_started(job)
    lab.cancel()
    name = job.a.ref.name
    assert lab.problem == f"Cancelled: the make-up of {name}, the usage of {CORPUS.name}"
    assert lab.receive(MakeupResult(job.a.ref, tables[GPT2][1]))  # on its way at the Cancel
    assert lab.makeup is not None and lab.problem == f"Cancelled: the usage of {CORPUS.name}"
    assert lab.can_compute_again and lab.next_job() is None  # the usage is still given up
    assert lab.receive(usage_result(job.a.ref, *tables[GPT2], corpus_ref()))
    assert lab.problem is None and not lab.cancelled and not lab.can_compute_again


def test_the_runs_corpus_of_records_is_read_with_the_field_the_run_trained_with(tmp_path):
    """An audit: a run trained on records' "content" field, the lab on "The run's corpus"
    read their "text" field (the lab's own, shown beside it): a corpus with no such field
    failed, one with both counted text the run never saw."""
    from bpe_studio.gui.model.corpus_source import corpus_source

    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"text": "abc abc", "content": "xyz xyz"}\n{"text": "abc", "content": "xyz"}\n',
        encoding="utf-8",
    )
    hub = lab_model("run")
    lab = hub.lab
    hub.set_corpus(corpus_source([str(path)]))
    settings = RunSettings(400, (EOT,), corpus=(str(path),), text_field="content")
    hub.begin_run(settings, initial_vocab([EOT]))
    lab.choose_corpus(LabCorpus(CorpusKind.RUN))
    wanted = lab.wanted_corpus()
    assert (wanted.paths, wanted.text_field) == ((str(path),), "content")
    assert not lab.asks_text_field  # the lab's own field is not shown for it
    # The same file chosen as the corpus opened, or as files, is read with the lab's field.
    lab.choose_corpus(LabCorpus(CorpusKind.FILES, (str(path),)))
    assert lab.asks_text_field and lab.wanted_corpus().text_field == "text"


def test_a_paused_runs_tokenizer_rebuilt_at_each_step_is_no_news_to_the_lab(run):
    """The X display: a paused run replayed with the lab on its tokenizer, the lab said
    "There is no run's tokenizer yet" until the replay ended. The controller shows the run's
    tokenizer rebuilt at every step moved to while paused; each was a tokenizer_changed the
    lab took for a new choice (wanted_changed), and the view's wait before it computes began
    again every frame, so no job ever started."""
    from bpe_studio.gui.model.run_tokenizer import paused_label
    from bpe_studio.gui.model.tokenizer_source import TokenizerSource

    hub = trained(run, finish=False)
    hub.set_paused(True)
    lab, made = hub.lab, hub.state.published
    asked: list[None] = []
    lab.wanted_changed.connect(lambda: asked.append(None))
    wanted = lab.next_job()
    assert wanted is not None and wanted.a.ref.merges == made > 100
    for k in (10, 11, 12, 100):
        hub.select_step(k)
        source = TokenizerSource.deferred(
            paused_label(k, made), run_tokenizer_at(hub.state, k), k, hub.state.run_id
        )
        hub.show_tokenizer(source)
    assert asked == []
    assert lab.next_job().a.ref == wanted.a.ref  # the run's at all its merges, as before
    # A run's tokenizer that goes (a failed run's, a discard) is news.
    hub.discard_run()
    assert asked and lab.next_job() is None and lab.missing is not None
