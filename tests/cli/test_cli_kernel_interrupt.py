"""Ctrl-C that lands while a compiled kernel calls back into Python (numba unpickling a
constant, say) comes out of numba as a SystemError whose causes hold the KeyboardInterrupt.
It is still Ctrl-C: one line, exit 130, nothing written (it was a traceback and exit 1, found
by pressing Ctrl-C while 200 MB were counted by the compiled kernels). Raised here in
process where the core would raise it, so nothing waits on a signal's timing."""

from __future__ import annotations

from core_helpers import SLICES, read_fixture, write_text

from bpe_studio.cli import encode as cli_encode
from bpe_studio.cli import main
from bpe_studio.cli import train as cli_train


def kernel_interrupted(*args, **kwargs):
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as interrupt:
        error = SystemError("CPUDispatcher(tally_add) returned a result with an exception set")
        raise error from interrupt


def test_counting_interrupted_inside_a_kernel(tmp_path, monkeypatch, capsys):
    corpus = write_text(tmp_path / "c.txt", read_fixture(SLICES["tinystories"])[:20_000])
    monkeypatch.setattr(cli_train, "trainer_from_file", kernel_interrupted)
    out = tmp_path / "out"
    assert main(["train", str(corpus), "--vocab-size", "300", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "interrupted during pre-tokenization" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_encoding_interrupted_inside_a_kernel(tmp_path, monkeypatch, capsys):
    corpus = write_text(tmp_path / "c.txt", read_fixture(SLICES["tinystories"])[:20_000])
    monkeypatch.setattr(cli_encode, "encode_inputs", kernel_interrupted)
    out = tmp_path / "ids.npy"
    code = main(["encode", str(corpus), "--tokenizer", "gpt2", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 130 and "interrupted" in err and "Traceback" not in err, err
    assert not out.exists()


def test_other_system_errors_are_not_taken_for_ctrl_c(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise SystemError("a kernel failed")

    corpus = write_text(tmp_path / "c.txt", read_fixture(SLICES["tinystories"])[:20_000])
    monkeypatch.setattr(cli_train, "trainer_from_file", broken)
    try:
        main(["train", str(corpus), "--vocab-size", "300", "--out", str(tmp_path / "o")])
    except SystemError as error:
        assert str(error) == "a kernel failed"
    else:
        raise AssertionError("the SystemError was swallowed")


def test_a_usage_pass_interrupted_inside_a_kernel(tmp_path, monkeypatch, capsys):
    from bpe_studio.cli import inspect as cli_inspect

    corpus = write_text(tmp_path / "c.txt", read_fixture(SLICES["tinystories"])[:20_000])
    monkeypatch.setattr(cli_inspect, "corpus_usage", kernel_interrupted)
    code = main(["inspect", "gpt2", "--corpus", str(corpus), "--json"])
    captured = capsys.readouterr()
    assert code == 130 and "interrupted" in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and captured.out == ""
