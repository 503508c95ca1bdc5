"""What a tokenizer source names, where more than one file could answer (issue 24, items 4
and 11): a folder holding two tokenizers is an error naming both; the tiktoken export's
sidecar has a name of its own and a folder written by ``convert --to tiktoken`` loads back;
OpenAI's own rank files load with their pattern and special tokens whatever their name.

Oracles: tiktoken built offline from the rank files with the settings tiktoken_ext publishes
(``reference_encoder.published``), and the fixtures' GPT-2 files read by the tests' reader.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
from core_helpers import EOT, FIXTURES, REPO_ROOT, SLICES, read_fixture
from reference_encoder import published, read_rank_file

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.formats.files import load_data

RESOURCES = REPO_ROOT / "resources" / "tokenizers"
TEXT = read_fixture(SLICES["english"])[:3000] + EOT + " <|endofprompt|> x" + EOT


def _gpt2_folder(folder):
    folder.mkdir(exist_ok=True)
    for name in ("vocab.json", "merges.txt"):
        (folder / name).write_bytes((FIXTURES / f"gpt2_{name}").read_bytes())
    return folder


@pytest.fixture(scope="module")
def other(tmp_path_factory) -> Tokenizer:
    """A small tokenizer of another run."""
    corpus = tmp_path_factory.mktemp("other") / "c.txt"
    corpus.write_text(read_fixture(SLICES["tinystories"])[:20_000], encoding="utf-8")
    vocab, merges = train_bpe(corpus, 300, [EOT])
    return Tokenizer(vocab, merges, [EOT])


# ------------------------------------------------------------ two tokenizers in one folder
@pytest.mark.parametrize(
    ("fmt", "second"),
    [("hf", "tokenizer.json"), ("tiktoken", "tokenizer.tiktoken")],
)
def test_a_folder_holding_two_tokenizers_is_an_error_naming_both(tmp_path, other, fmt, second):
    folder = _gpt2_folder(tmp_path / "both")
    other.save(folder, format=fmt)
    with pytest.raises(ValueError) as err:
        Tokenizer.load(folder)
    line = str(err.value)
    assert str(folder) in line and "\n" not in line
    assert "vocab.json + merges.txt" in line and second in line
    # Each one is still there to be named.
    assert Tokenizer.load(folder / "vocab.json").vocab[50256] == EOT.encode()
    assert Tokenizer.load(folder / second).vocab == other.vocab


def test_two_rank_files_in_a_folder_are_an_error(tmp_path, other):
    other.save(tmp_path, format="tiktoken", name="a")
    Tokenizer.preset("gpt2").save(tmp_path, format="tiktoken", name="b")
    with pytest.raises(ValueError, match=r"2 tokenizers \(a.tiktoken, b.tiktoken\), not one"):
        load_data(tmp_path)


def test_the_same_tokenizer_in_two_formats_is_one_tokenizer(tmp_path):
    """A Hugging Face download holds vocab.json + merges.txt and tokenizer.json of the same
    tokenizer: that loads, with what tokenizer.json says (its pattern, its special tokens)."""
    cl100k = Tokenizer.preset("cl100k_base")
    cl100k.save(tmp_path)  # vocab.json + merges.txt: no pattern, loaded as gpt2's
    cl100k.save(tmp_path, format="hf")
    tok = Tokenizer.load(tmp_path)
    assert tok.pattern_name == "cl100k"
    assert tok.encode(TEXT) == cl100k.encode(TEXT)
    # A download's vocab.json may leave out the added tokens tokenizer.json holds.
    data = load_data("cl100k_base")
    ordinary = {i: t for i, t in data.vocab.items() if i not in data.special_tokens.values()}
    Tokenizer(ordinary, data.merges).save(tmp_path)
    tok = Tokenizer.load(tmp_path)
    assert tok.special_tokens == cl100k.special_tokens
    assert tok.encode(TEXT) == cl100k.encode(TEXT)


# ----------------------------------------------------------------- the tiktoken sidecar
def test_the_tiktoken_sidecar_is_not_named_like_a_hugging_face_file(tmp_path, other):
    written = other.save(tmp_path, format="tiktoken")
    assert sorted(p.name for p in written) == ["tokenizer.tiktoken", "tokenizer.tiktoken.json"]
    assert not (tmp_path / "tokenizer.json").exists()
    # Beside a Hugging Face file of the same run, it is still one tokenizer.
    other.save(tmp_path, format="hf")
    assert Tokenizer.load(tmp_path).encode(TEXT) == other.encode(TEXT)


def test_a_folder_written_by_convert_to_tiktoken_loads_back(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    run = subprocess.run(
        [sys.executable, "-m", "bpe_studio", "convert", "gpt2", "--to", "tiktoken", "--out", out],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr.decode()
    assert sorted(p.name for p in out.iterdir()) == ["gpt2.tiktoken", "gpt2.tiktoken.json"]
    gpt2 = Tokenizer.preset("gpt2")
    back = Tokenizer.load(out)
    assert back.encode(TEXT) == gpt2.encode(TEXT) and back.special_tokens == [EOT]


# --------------------------------------------------------------- OpenAI's own rank files
@pytest.mark.parametrize(
    ("encoding", "pattern"), [("cl100k_base", "cl100k"), ("o200k_base", "o200k")]
)
def test_openai_rank_files_load_with_their_pattern_and_special_tokens(tmp_path, encoding, pattern):
    # Under a name that says nothing (the file is recognised by its bytes), plain and gzip.
    raw = gzip.decompress((RESOURCES / f"{encoding}.tiktoken.gz").read_bytes())
    plain = tmp_path / "ranks.tiktoken"
    plain.write_bytes(raw)
    settings = published(encoding)
    enc = tiktoken.Encoding(
        encoding,
        pat_str=settings["pat_str"],
        mergeable_ranks=read_rank_file(RESOURCES / f"{encoding}.tiktoken.gz"),
        special_tokens=settings["special_tokens"],
    )
    expected = enc.encode(TEXT, allowed_special="all")
    for source, given in (
        (plain, None),
        (plain, pattern),
        (RESOURCES / f"{encoding}.tiktoken.gz", None),
    ):
        tok = Tokenizer.load(source, given)
        assert tok.pattern_name == pattern
        assert {s: tok.special_id(s) for s in tok.special_tokens} == settings["special_tokens"]
        assert tok.encode(TEXT) == expected
        assert tok.encode(EOT) == [settings["special_tokens"][EOT]]


def test_an_empty_source_is_not_read_as_the_current_folder():
    """Found by the API audit: ``Tokenizer.load("")`` said ". : a directory without
    vocab.json + merges.txt, ...", naming a folder the user never gave."""
    for empty in ("", "  "):
        with pytest.raises(ValueError, match="no tokenizer named: the source is"):
            Tokenizer.load(empty)


# ------------------------------------------------ GPT-2 files beside the model's tokenizer.json
def test_naming_the_vocab_json_beside_a_tokenizer_json_that_encodes_otherwise_is_said(tmp_path):
    """Audit h_hf63: Qwen2's Hub snapshot holds tokenizer.json and vocab.json + merges.txt;
    naming the vocab.json gave GPT-2's pattern, no NFC and "<|im_end|>" as text, other ids
    than the model's, and nothing said so."""
    from hf_shapes import hub_folder

    from bpe_studio.core.formats.beside import tokenizer_json_beside

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    model = hub_folder(tmp_path / "qwen", "qwen2", specials, ["<think>"])
    vocab = tmp_path / "qwen" / "vocab.json"
    text = "Caf\u0065\u0301 12345 it's <|im_end|> <think>"
    assert Tokenizer.load(vocab).encode(text) != model.encode(text).ids  # what is warned of
    note = tokenizer_json_beside(vocab, load_data(vocab))
    assert note is not None
    assert note.startswith(f"{vocab}: the model's tokenizer.json beside it encodes otherwise")
    assert "normalizer (NFC)" in note and "another pattern, not gpt2" in note
    assert "'<|im_end|>'" in note and "'<think>'" in note
    hf = tmp_path / "qwen" / "tokenizer.json"
    assert note.endswith(f"to load it, name it ({hf}) or the folder")
    # What the folder loads is the model's.
    assert Tokenizer.load(tmp_path / "qwen").encode(text) == model.encode(text).ids


def test_gpt2_files_beside_a_tokenizer_json_that_encodes_alike_are_said_nothing_of(tmp_path):
    from hf_shapes import hub_folder

    from bpe_studio.core.formats.beside import tokenizer_json_beside

    hub_folder(tmp_path / "gpt2", "gpt2", trained=[EOT])
    vocab = tmp_path / "gpt2" / "vocab.json"
    assert tokenizer_json_beside(vocab, load_data(vocab)) is None
    # Another tokenizer beside it (another run): naming one of the two was the choice.
    hub_folder(tmp_path / "qwen", "qwen2", [EOT])
    other = tmp_path / "other"
    other.mkdir()
    (other / "tokenizer.json").write_bytes((tmp_path / "qwen" / "tokenizer.json").read_bytes())
    Tokenizer.preset("gpt2").save(other)
    assert tokenizer_json_beside(other / "vocab.json", load_data(other / "vocab.json")) is None


# ------------------------------------------------------- a preset's name that is also a path
@pytest.mark.parametrize(("name", "preset"), [("gpt2", "gpt2"), ("GPT-4o", "o200k_base")])
def test_a_presets_name_that_is_also_a_folder_is_refused_naming_both(
    tmp_path, monkeypatch, other, name, preset
):
    """Found by the CLI audit: in a folder where ``train --out gpt2`` had run, ``--tokenizer
    gpt2`` encoded with that 300-token run and said "pattern: gpt2"."""
    other.save(tmp_path / name)  # what `train --out gpt2` leaves
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError) as err:
        Tokenizer.load(name)
    folder = os.path.join(os.curdir, name)
    assert str(err.value) == (
        f"{name!r} names both the preset {preset} and the folder {folder}: write {folder} "
        f"for the folder, or preset:{preset} for the preset"
    )
    # Each one is still there to be named: a path written as one, a Path, or the preset.
    for path in (folder, name + os.sep, tmp_path / name, Path(name)):
        assert Tokenizer.load(path).vocab == other.vocab
    assert load_data(f"preset:{preset}").vocab == load_data(_preset_files(preset)).vocab
    assert (
        load_data(f"preset:{name}").special_tokens == load_data(f"preset:{preset}").special_tokens
    )


def _preset_files(preset: str) -> Path:
    """The preset's rank file or GPT-2 files, loaded as files (the preset read another way)."""
    if preset == "gpt2":
        return FIXTURES / "gpt2_vocab.json"
    return RESOURCES / f"{preset}.tiktoken.gz"


def test_any_path_named_like_a_preset_is_refused_and_preset_form_is_checked(tmp_path, monkeypatch):
    # A folder of anything, or a file: each hid the preset ("o200k: a directory without...").
    (tmp_path / "o200k").mkdir()
    (tmp_path / "cl100k_base").write_text("notes\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        ValueError, match=r"^'o200k' names both the preset o200k_base and the folder"
    ):
        load_data("o200k")
    with pytest.raises(
        ValueError, match=r"^'cl100k_base' names both the preset cl100k_base and the file"
    ):
        load_data("cl100k_base")
    with pytest.raises(ValueError, match=r"unknown preset 'o300k'; the presets are gpt2"):
        load_data("preset:o300k")


def test_a_pre_tokenizer_that_splits_otherwise_is_said_once(tmp_path):
    """Review h_rev63: StarCoder's shape (Digits, then ByteLevel) was warned of as both "its
    pre_tokenizer (Sequence of Digits, ByteLevel) splits text otherwise" and "another pattern,
    not gpt2": one difference, said once."""
    from hf_shapes import hub_folder

    from bpe_studio.core.formats.beside import tokenizer_json_beside

    hub_folder(tmp_path / "starcoder", "starcoder")
    vocab = tmp_path / "starcoder" / "vocab.json"
    note = tokenizer_json_beside(vocab, load_data(vocab))
    assert note is not None and "pre_tokenizer (Sequence of Digits, ByteLevel)" in note
    assert "pattern" not in note


def test_a_normalizer_beside_gpt2_files_is_said_without_another_pattern(tmp_path):
    """The docs audit: a tokenizer.json that adds only NFC to GPT-2's files was warned of as
    "its normalizer (NFC) changes the text first; another pattern, not gpt2", though its
    regex is GPT-2's."""
    from hf_shapes import hub_folder

    from bpe_studio.core.formats.beside import tokenizer_json_beside

    hub_folder(tmp_path / "nfc", "gpt2")
    hf = tmp_path / "nfc" / "tokenizer.json"
    obj = json.loads(hf.read_text(encoding="utf-8"))
    obj["normalizer"] = {"type": "NFC"}
    hf.write_text(json.dumps(obj), encoding="utf-8")
    vocab = tmp_path / "nfc" / "vocab.json"
    note = tokenizer_json_beside(vocab, load_data(vocab))
    assert note is not None and "normalizer (NFC)" in note
    assert "pattern" not in note


def test_a_path_named_like_a_missing_preset_says_it_is_a_path(tmp_path, monkeypatch):
    """The third review: Tokenizer.load(Path("gpt2")) where no such path is said "gpt2: a
    tiktoken encoding that is not bundled (the presets are gpt2, ...)"."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as missing:
        Tokenizer.load(Path("gpt2"))
    assert str(missing.value) == (
        "gpt2: no such file or folder (a Path names a path: for the preset, write preset:gpt2)"
    )
    assert Tokenizer.load("gpt2").n_vocab == 50257  # the name as a string is the preset
