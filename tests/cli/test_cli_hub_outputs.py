"""The output rule for an ``hf:`` source: ``--out`` never replaces a file of the model in the
Hub's cache, even with ``--force``. The cache is laid out as huggingface_hub lays it out (a
snapshot's files are links into ``blobs/``, each named by its SHA-256), so a file written
through a link would replace the blob; the blob's hash against its name, and ``tokenizers``
reading the file with its own ids, say that it was left alone."""

from __future__ import annotations

import hashlib
from pathlib import Path

import huggingface_hub
import numpy as np
import pytest
from foreign_files import llama3_style, own_ids
from hub_snapshot import COMMIT, add_snapshot, hub_error, offline_hub
from huggingface_hub import errors

from bpe_studio.cli import main

TEXT = "Hello world, 中文 and code() 12345\n"
MODEL = "acme/ll"


@pytest.fixture
def cached(monkeypatch, tmp_path):
    """A text, its ids, the model's files and their snapshot (a Llama-3-style tokenizer.json
    and a tokenizer_config.json) in an offline cache."""
    cache = offline_hub(monkeypatch, tmp_path)
    config = tmp_path / "tokenizer_config.json"
    config.write_text('{"bos_token": "<|begin_of_text|>"}', encoding="utf-8")
    files = {"tokenizer.json": llama3_style(tmp_path / "model", full=False),
             "tokenizer_config.json": config}  # fmt: skip
    snapshot = add_snapshot(cache, MODEL, files)
    text = tmp_path / "text.txt"
    text.write_text(TEXT, encoding="utf-8")
    ids = tmp_path / "ids.npy"
    np.save(ids, np.array(own_ids(files["tokenizer.json"], TEXT), dtype=np.int64))
    return text, ids, files, snapshot


def _left_alone(snapshot: Path, files: dict[str, Path], capsys) -> None:
    """The command failed with one line saying why, and every file of the model is still
    the one downloaded: its blob's hash is its name and ``tokenizers`` gives its ids."""
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.endswith("an output never replaces an input, even with --force"), err
    for name, original in files.items():
        blob = (snapshot / name).resolve()
        assert blob.read_bytes() == original.read_bytes(), name
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name, name
    assert own_ids(snapshot / "tokenizer.json", TEXT) == own_ids(files["tokenizer.json"], TEXT)


def _out(snapshot: Path, where: str) -> Path:
    """The path ``where`` names: a file of the snapshot (a link), or the blob it names."""
    if where == "blob":
        return (snapshot / "tokenizer.json").resolve()
    return snapshot / where


@pytest.mark.parametrize("where", ["tokenizer.json", "tokenizer_config.json", "blob"])
@pytest.mark.parametrize("command", ["encode", "decode"])
def test_encode_and_decode_never_write_over_the_cached_model(cached, capsys, command, where):
    text, ids, files, snapshot = cached
    given = text if command == "encode" else ids
    out = _out(snapshot, where)
    args = [command, str(given), "--tokenizer", f"hf:{MODEL}", "--out", str(out), "--force"]
    assert main(args) != 0
    _left_alone(snapshot, files, capsys)


def test_convert_never_writes_over_the_cached_model(cached, capsys):
    text, ids, files, snapshot = cached
    assert main(["convert", f"hf:{MODEL}", "--to", "hf", "--out", str(snapshot), "--force"]) != 0
    _left_alone(snapshot, files, capsys)


@pytest.mark.parametrize("command", ["decode", "convert"])
def test_a_model_downloaded_by_the_command_is_an_input_too(monkeypatch, tmp_path, capsys, command):
    """Not cached when ``--out`` is first checked: the download makes the snapshot that
    ``--out`` names, and the check once it is fetched refuses to write there."""
    cache = offline_hub(monkeypatch, tmp_path)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr("bpe_studio.core.io.hf_hub.hub_reachable", lambda model: None)
    files = {"tokenizer.json": llama3_style(tmp_path / "model", full=False)}
    ids = tmp_path / "ids.npy"
    np.save(ids, np.array(own_ids(files["tokenizer.json"], TEXT), dtype=np.int64))
    snapshot = cache / "models--acme--ll" / "snapshots" / COMMIT

    def download(repo_id, filename, **kwargs):
        if filename not in files:
            raise hub_error(errors.RemoteEntryNotFoundError)
        return str(add_snapshot(cache, repo_id, {filename: files[filename]}) / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    assert not snapshot.exists()
    if command == "decode":
        out = snapshot / "tokenizer.json"
        args = ["decode", str(ids), "--tokenizer", f"hf:{MODEL}", "--out", str(out), "--force"]
    else:
        args = ["convert", f"hf:{MODEL}", "--to", "hf", "--out", str(snapshot), "--force"]
    assert main(args) != 0
    _left_alone(snapshot, files, capsys)
