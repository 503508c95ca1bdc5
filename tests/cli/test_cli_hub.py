"""``--tokenizer hf:ORG/NAME[@REVISION]`` (and convert's SOURCE): never over the network. A
local snapshot in a temporary Hugging Face cache, read offline by the command in a subprocess;
a download's progress and its failures through a stand-in for ``hf_hub_download`` raising
huggingface_hub's own errors, with the command run in this process."""

from __future__ import annotations

import huggingface_hub
import numpy as np
import pytest
from cli_run import cli, cli_bytes, encode_ids, error_line, ok
from foreign_files import own_ids
from hub_snapshot import hub_error, two_models
from huggingface_hub import errors

from bpe_studio.cli import main

TEXT = "Hello world, 中文 and code() 12345\n"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    files = two_models(monkeypatch, tmp_path)
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    return files, text


@pytest.mark.slow
def test_encode_and_decode_a_cached_model_offline(tmp_path, hub):
    files, text = hub
    assert encode_ids(tmp_path, text, "hf:acme/uni") == own_ids(files["uni"], TEXT)
    assert encode_ids(tmp_path, text, "hf:acme/ll@v1") == own_ids(files["ll"], TEXT)
    ids = tmp_path / "ids.npy"
    ok(cli(tmp_path, "encode", text, "--tokenizer", "hf:acme/ll@v1", "--out", ids))
    back = tmp_path / "back.txt"
    ok(cli(tmp_path, "decode", ids, "--tokenizer", "hf:acme/ll@v1", "--out", back))
    assert back.read_text(encoding="utf-8") == TEXT


def test_convert_a_cached_byte_level_model(tmp_path, hub):
    files, text = hub
    out = tmp_path / "gpt2"
    ok(cli(tmp_path, "convert", "hf:acme/ll@v1", "--to", "gpt2", "--out", out))
    assert (out / "vocab.json").is_file() and (out / "merges.txt").is_file()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("hf:acme/absent", "acme/absent: its tokenizer is not in the Hugging Face cache and "),
        ("hf:acme/uni@v7", "acme/uni@v7: its tokenizer is not in the Hugging Face cache and "),
        ("hf:acme", "hf:acme: expected a Hugging Face model as ORG/NAME"),
    ],
)
def test_an_unavailable_model_is_one_line(tmp_path, hub, source, expected):
    files, text = hub
    result = cli(tmp_path, "encode", text, "--tokenizer", source, "--out", tmp_path / "x.npy")
    assert error_line(result).startswith(f"bpe-studio: error: {expected}")
    assert not (tmp_path / "x.npy").exists()


def test_gated_model_says_how_to_log_in(monkeypatch, tmp_path, capsys, hub):
    files, text = hub

    def gated(*args, **kwargs):
        raise hub_error(errors.GatedRepoError)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", gated)
    code = main(["encode", str(text), "--tokenizer", "hf:meta-llama/Llama-3.1-8B", "--out",
                 str(tmp_path / "x.npy")])  # fmt: skip
    assert code != 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1
    assert "meta-llama/Llama-3.1-8B: a gated model" in lines[0]
    assert "`hf auth login`" in lines[0] and "HF_TOKEN" in lines[0]


def test_a_download_shows_progress(monkeypatch, tmp_path, capsys, hub):
    files, text = hub

    def download(repo_id, filename, *, revision=None, tqdm_class=None, **kwargs):
        if filename != "tokenizer.json":
            raise hub_error(errors.RemoteEntryNotFoundError)
        size = files["uni"].stat().st_size
        bar = tqdm_class(total=size, unit="B")
        bar.update(size // 2)
        bar.update(size - size // 2)
        bar.close()
        return str(files["uni"])

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    out = tmp_path / "ids.npy"
    assert main(["encode", str(text), "--tokenizer", "hf:acme/new", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert any(ln.startswith("downloading ") and "100.0%" in ln for ln in err.splitlines()), err
    assert np.load(out).tolist() == own_ids(files["uni"], TEXT)


def test_offline_and_not_cached_is_one_quiet_line(tmp_path):
    """The Hub at a closed port of this machine and an empty cache (what being offline looks
    like to huggingface_hub): one line, with none of its retry warnings (11 lines over ~24 s
    before)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    text = tmp_path / "t.txt"
    text.write_text(TEXT, encoding="utf-8")
    env = {
        "HF_HOME": str(tmp_path / "hf_home"),
        "HF_ENDPOINT": f"http://127.0.0.1:{port}",
        "HF_HUB_OFFLINE": "0",
        "HF_TOKEN": "",
    }
    result = cli_bytes(tmp_path, "encode", text, "--tokenizer", "hf:Qwen/Qwen2.5-7B",
                       "--out", tmp_path / "x.npy", env_update=env)  # fmt: skip
    lines = result.stderr.decode().splitlines()
    assert result.returncode == 1 and len(lines) == 1, lines
    assert lines[0].startswith(
        "bpe-studio: error: Qwen/Qwen2.5-7B: its tokenizer is not in the Hugging Face cache and "
        "the Hub cannot be reached ("
    )


def test_a_revision_with_a_space_is_refused(tmp_path, hub):
    files, text = hub
    result = cli(tmp_path, "encode", text, "--tokenizer", "hf:acme/ll@v1 extra",
                 "--out", tmp_path / "x.npy")  # fmt: skip
    assert error_line(result) == (
        "bpe-studio: error: hf:acme/ll@v1 extra: 'v1 extra' is not a revision (a branch, tag or "
        "commit: no spaces, no '..', none of ~^:?*[\\)"
    )


@pytest.mark.parametrize(
    ("source", "meant"),
    [
        ("acme/uni", "hf:acme/uni"),
        ("https://huggingface.co/acme/ll/tree/v1", "hf:acme/ll@v1"),
        ("absent/vocab.json", None),
    ],
)
def test_a_model_named_without_hf_says_how_to_name_it(tmp_path, hub, source, meant):
    """Found by an audit: ``--tokenizer acme/good`` (or the model's page) was "tokenizer not
    found ... expected a GPT-2 directory ...", with no word of ``hf:``."""
    files, text = hub
    line = error_line(cli(tmp_path, "encode", text, "--tokenizer", source, "--out", "x.npy"))
    said = f"bpe-studio: error: tokenizer not found: {source}"
    if source.endswith(".json"):  # a file's name: said to be no such file, not a wrong kind
        assert line == f"{said}: no such file"
        return
    assert line.startswith(f"{said} (expected ")
    if meant is None:
        assert "Hugging Face" not in line, line
    else:
        assert line.endswith(f" (for a Hugging Face model, write {meant})"), line


@pytest.mark.parametrize("command", ["encode", "inspect", "convert"])
def test_a_cached_tokenizer_damaged_within_is_said_of_the_model(tmp_path, monkeypatch, command):
    """The Hub audit: the command named the snapshot's path alone, neither the model nor how
    to clear it."""
    from foreign_files import llama3_style
    from hub_snapshot import add_snapshot, offline_hub

    cache = offline_hub(monkeypatch, tmp_path)
    whole = llama3_style(tmp_path / "ll", full=False).read_text(encoding="utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text(whole.replace('"merges"', '"merges" "', 1), encoding="utf-8")
    add_snapshot(cache, "acme/bad", {"tokenizer.json": broken})
    text = tmp_path / "t.txt"
    text.write_text(TEXT, encoding="utf-8")
    args = {
        "encode": ("encode", text, "--tokenizer", "hf:acme/bad", "--out", tmp_path / "x.npy"),
        "inspect": ("inspect", "hf:acme/bad"),
        "convert": ("convert", "hf:acme/bad", "--to", "gpt2", "--out", tmp_path / "g"),
    }[command]
    line = error_line(cli(tmp_path, *args))
    assert line.startswith(
        "bpe-studio: error: hf:acme/bad: its tokenizer.json in the Hugging Face cache is not "
        "valid JSON at line "
    )
    assert line.endswith("then load it again to download it afresh")
