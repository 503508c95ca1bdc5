"""``bpe-studio encode --add-special-tokens``: the ids as the model sees them, with the
tokens a ``tokenizer.json``'s template puts around the text.

Oracle: ``tokenizers`` itself (``encode`` with and without ``add_special_tokens``), over the
post-processors of every shape the open models publish.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tokenizers
from cli_run import PROGRESS, cli
from core_helpers import SLICES, read_fixture
from hf_shapes import splits_then_bytes, trained_bpe
from model_shapes import SHAPES
from tokenizers import processors

BOS = "<|begin_of_text|>"


def _llama_like(tmp_path, template: bool) -> tuple[str, tokenizers.Tokenizer]:
    split = splits_then_bytes(r"\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+")
    text = read_fixture(SLICES["english"])[:20_000]
    tok = trained_bpe(None, split, [text], 400, [BOS])
    if template:
        tok.post_processor = processors.TemplateProcessing(
            single=f"{BOS} $A", special_tokens=[(BOS, tok.token_to_id(BOS))]
        )
    path = tmp_path / ("templated" if template else "plain") / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    return str(path), tok


def test_encode_adds_the_template_only_when_asked(tmp_path):
    path, hf = _llama_like(tmp_path, template=True)
    text_path = tmp_path / "text.txt"
    text = read_fixture(SLICES["english"])[:3000]
    text_path.write_text(text, encoding="utf-8", newline="")
    for flag, expected in [((), hf.encode(text, add_special_tokens=False).ids),
                           (("--add-special-tokens",), hf.encode(text).ids)]:  # fmt: skip
        out = tmp_path / f"ids{len(flag)}.npy"
        result = cli(tmp_path, "encode", "--tokenizer", path, text_path, "--out", out, *flag)
        assert result.returncode == 0, result.stderr
        assert np.load(out).tolist() == expected
    assert expected[0] == hf.token_to_id(BOS)
    assert f"added the template's special tokens: {BOS} $A" in result.stderr


def test_encode_adds_the_template_on_the_parallel_path_too(tmp_path):
    # Found by fuzzing the command line: a file of 1 MB or more encoded by two workers built
    # the tokenizer only in them, so the template was never seen: exit 0, no template.
    path, hf = _llama_like(tmp_path, template=True)
    text_path = tmp_path / "text.txt"
    text = read_fixture(SLICES["english"])[:300_000] * 5  # past PARALLEL_MIN_BYTES
    text_path.write_text(text, encoding="utf-8", newline="")
    out = tmp_path / "ids.npy"
    result = cli(tmp_path, "encode", "--tokenizer", path, text_path, "--out", out,
                 "--add-special-tokens", "--workers", 2)  # fmt: skip
    assert result.returncode == 0, result.stderr
    ids = np.load(out)
    assert ids[0] == hf.token_to_id(BOS) and len(ids) == len(hf.encode(text).ids)
    assert ids[1:].tolist() == hf.encode(text, add_special_tokens=False).ids
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".bpe-studio-")]


def test_encode_says_when_the_tokenizer_has_no_template(tmp_path):
    path, hf = _llama_like(tmp_path, template=False)
    text_path = tmp_path / "text.txt"
    text_path.write_text("Hello world", encoding="utf-8")
    out = tmp_path / "ids.npy"
    result = cli(tmp_path, "encode", "--tokenizer", path, text_path, "--out", out,
                 "--add-special-tokens")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert np.load(out).tolist() == hf.encode("Hello world").ids
    assert "added no special tokens: the tokenizer has no template" in result.stderr


@pytest.mark.parametrize("shape", list(SHAPES))
def test_encode_adds_every_shape_of_template(tmp_path, shape):
    """The post-processor of each shape the open models publish (``model_shapes``): Gemma 3's
    TemplateProcessing over a SentencePiece-style BPE, Llama 3.1's and DeepSeek-V3's Sequence
    of ByteLevel and TemplateProcessing, T5's and BERT's, Qwen's none."""
    build, before, after = SHAPES[shape]
    path = build(tmp_path / "model")
    hf = tokenizers.Tokenizer.from_file(str(path))
    text = read_fixture(SLICES["english"])[:2500] + read_fixture(SLICES["chinese"])[:200]
    text_path = tmp_path / "text.txt"
    text_path.write_text(text, encoding="utf-8", newline="")
    out = tmp_path / "ids.npy"
    result = cli(tmp_path, "encode", text_path, "--tokenizer", path, "--out", out,
                 "--add-special-tokens", "--workers", 1)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert np.load(out).tolist() == hf.encode(text).ids
    if before or after:
        shown = " ".join([*before, "$A", *after])
        assert f"added the template's special tokens: {shown}" in result.stderr
    else:
        assert "added no special tokens: the tokenizer has no template" in result.stderr


@pytest.mark.parametrize(("to", "files"), [("tiktoken", "tiktoken files"), ("gpt2", "vocab.json")])
def test_convert_says_when_the_files_drop_the_template(tmp_path, to, files):
    """An audit of conversions: to tiktoken or GPT-2 files, the template was dropped with
    nothing said, and `encode --add-special-tokens` of the result changed."""
    path, _ = _llama_like(tmp_path, template=True)
    result = cli(tmp_path, "convert", path, "--to", to, "--out", tmp_path / to)
    assert result.returncode == 0, result.stderr
    notes = [
        line
        for line in result.stderr.splitlines()
        if line.startswith("note: ") and "template" in line
    ]
    assert notes == [
        f"note: {files}{' + merges.txt' if to == 'gpt2' else ''} hold no post-processor "
        f"template ('{BOS} $A'): encode --add-special-tokens of these files adds nothing; "
        "--to hf keeps it"
    ]
    kept = cli(tmp_path, "convert", path, "--to", "hf", "--out", tmp_path / "hf")
    assert kept.returncode == 0 and "note: " not in kept.stderr  # hf holds all of it


@pytest.mark.parametrize("flag", [("--add-special-tokens",), ()])
def test_encode_refuses_a_tokenizer_replaced_while_it_ran(tmp_path, monkeypatch, capsys, flag):
    # Found by replacing tokenizer.json (mv) during a parallel encode: the workers' ids were
    # the old file's, the template's token and the summary the new one's; exit 0. Here the
    # workers' part is a tokenizer built apart from this process's, and the file is replaced
    # once it has encoded, before this process reads the file again.
    from bpe_studio.cli import encode as encode_cli
    from bpe_studio.cli import main

    path, hf = _llama_like(tmp_path, template=True)
    hf.post_processor = processors.TemplateProcessing(
        single=f"$A {BOS}", special_tokens=[(BOS, hf.token_to_id(BOS))]
    )
    new = tmp_path / "new.json"
    hf.save(str(new))
    real = encode_cli.encode_inputs

    def replaced_meanwhile(load, files, out, **kwargs):
        def in_a_worker():
            return encode_cli.load_tokenizer(path, None)

        result = real(in_a_worker, files, out, **kwargs)
        os.replace(new, path)
        return result

    monkeypatch.setattr(encode_cli, "encode_inputs", replaced_meanwhile)
    text_path = tmp_path / "text.txt"
    text_path.write_text(read_fixture(SLICES["english"])[:3000], encoding="utf-8", newline="")
    out = tmp_path / "ids.npy"
    code = main(["encode", str(text_path), "--tokenizer", path, "--out", str(out),
                 "--workers", "1", *flag])  # fmt: skip
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(PROGRESS)]
    assert code == 1 and len(lines) == 1, err
    assert lines[0] == (
        f"bpe-studio: error: {path}: changed while encoding (another file took its name); "
        "nothing written: run again once it is written whole"
    )
    assert not out.exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_template_id_past_a_foreign_vocabulary_is_written_in_a_dtype_that_holds_it(tmp_path):
    """Audit h_hf63: a post-processor naming id 99999 (a vocabulary of 600): tokenizers gives
    it; encode --add-special-tokens encoded, then failed with "dtype uint16 holds ids up to
    65,535 ... use uint32 (or dtype=None ...)", which no option of the command can follow,
    and with a traceback for records. (A byte-level file is refused for it on reading.)"""
    from foreign_files import wordpiece

    path = wordpiece(tmp_path / "wp")
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", 99_999), ("[SEP]", hf.token_to_id("[SEP]"))],
    )
    hf.save(str(path))
    text = read_fixture(SLICES["english"])[:2000]
    text_path = tmp_path / "text.txt"
    text_path.write_text(text, encoding="utf-8", newline="")
    records = tmp_path / "docs.jsonl"
    records.write_text('{"text": "one"}\n{"text": "two"}\n', encoding="utf-8")
    for source, expected in [
        (text_path, hf.encode(text).ids),
        (records, hf.encode("one").ids + hf.encode("two").ids),
    ]:
        out = tmp_path / f"{source.stem}.npy"
        result = cli(tmp_path, "encode", "--tokenizer", path, source, "--out", out,
                     "--add-special-tokens")  # fmt: skip
        assert result.returncode == 0, result.stderr
        ids = np.load(out)
        assert ids.tolist() == expected and 99_999 in expected
        assert ids.dtype == np.uint32
