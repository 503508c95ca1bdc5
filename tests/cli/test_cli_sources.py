"""``bpe-studio encode --tokenizer SRC`` for every kind of source (#10): a preset name, a GPT-2
directory, a GPT-2 ``vocab.json`` named directly (GPT-2's own ``gpt2_vocab.json`` too), a
Hugging Face ``tokenizer.json`` and a ``.tiktoken`` rank file, with ``--pattern`` where the
format has none; the ids are checked against tiktoken built offline from the rank files and
GPT-2's files read by the tests' own readers. Bad sources give one-line errors.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest
import tiktoken
from cli_run import cli, encode_ids, error_line, ok
from core_helpers import EOT, FIXTURES, REPO_ROOT, slice_head, write_text
from gpt2_bytes import read_gpt2_vocab
from reference_encoder import published, read_rank_file

RANK_FILES = REPO_ROOT / "resources" / "tokenizers"


def tiktoken_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's encoding ``name`` built from files on disk, without a download."""
    if name == "gpt2":
        vocab = read_gpt2_vocab(FIXTURES / "gpt2_vocab.json")
        ranks = {tok: i for i, tok in vocab.items() if tok != EOT.encode()}
        pub = published("r50k_base")
    else:
        ranks = read_rank_file(RANK_FILES / f"{name}.tiktoken.gz")
        pub = published(name)
    return tiktoken.Encoding(
        f"{name}_test",
        pat_str=pub["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=pub["special_tokens"],
    )


@pytest.fixture(scope="module")
def text() -> str:
    """Prose, Chinese, code and web text, with special tokens between them."""
    parts = [slice_head(k, 6_000) for k in ("english", "chinese", "code", "mixed_web")]
    return EOT.join(parts) + " <|endofprompt|>\r\n  tail  "


@pytest.fixture(scope="module")
def text_path(tmp_path_factory, text) -> Path:
    return write_text(tmp_path_factory.mktemp("text") / "text.txt", text)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_preset_name_encodes_as_tiktoken(tmp_path, text, text_path, name):
    enc = tiktoken_encoding(name)
    expected = enc.encode(text, allowed_special="all")
    assert encode_ids(tmp_path, text_path, name) == expected


def test_gpt2_vocab_json_named_directly(tmp_path, text, text_path):
    """GPT-2's own gpt2_vocab.json, its gpt2_merges.txt beside it; and a vocab.json."""
    expected = tiktoken_encoding("gpt2").encode(text, allowed_special="all")
    assert encode_ids(tmp_path, text_path, FIXTURES / "gpt2_vocab.json") == expected
    mine = tmp_path / "mine"
    mine.mkdir()
    shutil.copy(FIXTURES / "gpt2_vocab.json", mine / "vocab.json")
    shutil.copy(FIXTURES / "gpt2_merges.txt", mine / "merges.txt")
    assert encode_ids(tmp_path, text_path, mine / "vocab.json") == expected
    assert encode_ids(tmp_path, text_path, mine) == expected


def test_vocab_json_without_its_merges_file(tmp_path, text_path):
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    shutil.copy(FIXTURES / "gpt2_vocab.json", lonely / "vocab.json")
    line = error_line(cli(tmp_path, "encode", text_path, "--tokenizer", lonely / "vocab.json",
                          "--out", tmp_path / "ids.npy"))  # fmt: skip
    assert str(lonely / "vocab.json") in line and "merges.txt" in line
    assert not (tmp_path / "ids.npy").exists()


def test_gpt2_files_with_another_pattern(tmp_path, text, text_path):
    """GPT-2 files hold no pattern; --pattern o200k splits as o200k does (checked against
    tiktoken given GPT-2's ranks and o200k's regex)."""
    vocab = read_gpt2_vocab(FIXTURES / "gpt2_vocab.json")
    enc = tiktoken.Encoding(
        "gpt2_o200k_split",
        pat_str=published("o200k_base")["pat_str"],
        mergeable_ranks={tok: i for i, tok in vocab.items() if tok != EOT.encode()},
        special_tokens={EOT: 50256},
    )
    ids = encode_ids(tmp_path, text_path, FIXTURES / "gpt2_vocab.json", "--pattern", "o200k")
    assert ids == enc.encode(text, allowed_special="all")
    assert ids != tiktoken_encoding("gpt2").encode(text, allowed_special="all")


def test_openai_rank_file_needs_no_pattern_and_another_does(tmp_path, text, text_path):
    # OpenAI's own file, whatever its name, comes with its pattern and special tokens.
    ranks = tmp_path / "downloaded.tiktoken.gz"
    shutil.copy(RANK_FILES / "cl100k_base.tiktoken.gz", ranks)
    enc = tiktoken_encoding("cl100k_base")
    assert encode_ids(tmp_path, text_path, ranks) == enc.encode(text, allowed_special="all")
    # One rank short, it is a rank file like any other: its pattern must be given, and it has
    # no special tokens (<|endoftext|> is ordinary text then).
    other = tmp_path / "other.tiktoken"
    lines = gzip.decompress(ranks.read_bytes()).splitlines(keepends=True)
    other.write_bytes(b"".join(lines[:-1]))
    line = error_line(cli(tmp_path, "encode", text_path, "--tokenizer", other,
                          "--out", tmp_path / "ids.npy"))  # fmt: skip
    assert str(other) in line and "pattern" in line
    short = tiktoken.Encoding(
        "short",
        pat_str=enc._pat_str,
        mergeable_ranks={t: r for t, r in enc._mergeable_ranks.items() if r < len(lines) - 1},
        special_tokens={},
    )
    ids = encode_ids(tmp_path, text_path, other, "--pattern", "cl100k")
    assert ids == short.encode_ordinary(text)


def test_hf_tokenizer_json_written_by_tokenizers(tmp_path, text, text_path):
    """A tokenizer.json saved by Hugging Face tokenizers itself (GPT-2's files, ByteLevel
    pre-tokenizer) encodes as that library does; --pattern must agree with it."""
    from tokenizers import Tokenizer as HfTokenizer
    from tokenizers import decoders, models, pre_tokenizers

    model = models.BPE.from_file(
        str(FIXTURES / "gpt2_vocab.json"), str(FIXTURES / "gpt2_merges.txt")
    )
    hf = HfTokenizer(model)
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([EOT])
    saved = tmp_path / "tokenizer.json"
    hf.save(str(saved))
    assert encode_ids(tmp_path, text_path, saved) == hf.encode(text).ids
    line = error_line(cli(tmp_path, "encode", text_path, "--tokenizer", saved,
                          "--pattern", "cl100k", "--out", tmp_path / "ids.npy"))  # fmt: skip
    assert str(saved) in line and "cl100k" in line


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        ("o300k_base", "o300k_base"),  # neither a preset nor a file
        ("{here}/notes.txt", "notes.txt"),  # a file of no tokenizer format
        ("{here}/empty_dir", "empty_dir"),  # a directory without tokenizer files
    ],
)
def test_bad_sources_are_one_line(tmp_path, text_path, source, needle):
    (tmp_path / "notes.txt").write_text("hello\n", encoding="utf-8")
    (tmp_path / "empty_dir").mkdir()
    result = cli(tmp_path, "encode", text_path, "--tokenizer", source.format(here=tmp_path),
                 "--out", tmp_path / "ids.npy")  # fmt: skip
    line = error_line(result)
    assert needle in line
    assert not (tmp_path / "ids.npy").exists()


@pytest.mark.parametrize(
    ("vocab", "merges"), [("vocab.json", "merges.txt"), ("gpt2_vocab.json", "gpt2_merges.txt")]
)
def test_a_directory_missing_its_merges_file_names_it(tmp_path, text_path, vocab, merges):
    """The inspect audit: a folder holding vocab.json alone was "a directory without
    vocab.json + merges.txt, ...", as if it held nothing."""
    folder = tmp_path / "half"
    folder.mkdir()
    shutil.copy(FIXTURES / "gpt2_vocab.json", folder / vocab)
    line = error_line(cli(tmp_path, "encode", text_path, "--tokenizer", folder,
                          "--out", tmp_path / "ids.npy"))  # fmt: skip
    assert line == (
        f"bpe-studio: error: {folder}: holds {vocab} but not {merges}, the merges file it "
        "needs beside it"
    )


@pytest.mark.parametrize("beside", [False, True])
def test_a_merges_file_named_as_the_tokenizer_says_what_to_name(tmp_path, text_path, beside):
    """The Compare/Report audit: a merges.txt named alone was "cannot tell the format from
    the name", the GPT-2 pair among the formats expected."""
    shutil.copy(FIXTURES / "gpt2_merges.txt", tmp_path / "merges.txt")
    if beside:
        shutil.copy(FIXTURES / "gpt2_vocab.json", tmp_path / "vocab.json")
    merges = tmp_path / "merges.txt"
    line = error_line(cli(tmp_path, "encode", text_path, "--tokenizer", merges,
                          "--out", tmp_path / "ids.npy"))  # fmt: skip
    assert line == (
        f"bpe-studio: error: {merges}: the merges of GPT-2's files: name the vocabulary beside "
        "it, vocab.json, or the folder holding both"
        if beside
        else f"bpe-studio: error: {merges}: GPT-2's merges alone, without vocab.json beside it "
        "(name the folder holding both, or the vocab.json)"
    )


def test_bad_pattern_is_refused_before_reading(tmp_path, text_path):
    result = cli(tmp_path, "encode", text_path, "--tokenizer", "gpt2", "--pattern", "[a-",
                 "--out", tmp_path / "ids.npy")  # fmt: skip
    assert result.returncode == 2
    line = error_line(result)
    assert "--pattern" in line and "'[a-'" in line


@pytest.mark.parametrize("name", ["p50k_base", "p50k_edit", "o200k_harmony"])
def test_a_tiktoken_encoding_that_is_not_bundled_says_so(tmp_path, text_path, name):
    # --pattern p50k_base is GPT-2's pattern; --tokenizer p50k_base needs tokens not shipped.
    line = error_line(cli(tmp_path, "encode", text_path, "--tokenizer", name,
                          "--out", tmp_path / "ids.npy"))  # fmt: skip
    assert line == (
        f"bpe-studio: error: {name}: a tiktoken encoding that is not bundled (the presets are "
        "gpt2, cl100k_base, o200k_base); name its .tiktoken rank file"
    )


@pytest.mark.parametrize("settings", ["tokenizer_config.json", "special_tokens_map.json"])
def test_a_models_settings_file_is_not_its_tokenizer(tmp_path, text_path, settings):
    model = tmp_path / "model"
    model.mkdir()
    (model / settings).write_text('{"bos_token": "<s>", "tokenizer_class": "LlamaTokenizer"}')
    line = error_line(cli(tmp_path, "encode", text_path, "--tokenizer", model / settings,
                          "--out", tmp_path / "ids.npy"))  # fmt: skip
    assert line == (
        f"bpe-studio: error: {model / settings}: a model's {settings} holds its settings, not "
        "a tokenizer: the tokenizer is the model's tokenizer.json"
    )
    shutil.copy(FIXTURES / "gpt2_vocab.json", model / "vocab.json")  # no tokenizer.json yet
    (model / "tokenizer.json").write_text("{}")
    line = error_line(cli(tmp_path, "convert", model / settings, "--to", "hf", "--out", "-"))
    assert line.endswith(
        f"name the tokenizer.json beside it ({model / 'tokenizer.json'}) or its folder"
    )


def test_a_rank_files_sidecar_pattern_is_not_replaced(tmp_path, text_path):
    """The patterns audit: encode (and convert) of a folder holding a rank file and its
    sidecar took --pattern cl100k and split with it, silently; --help says --pattern is for
    a rank file without its sidecar, and a tokenizer.json refuses a different one."""
    from bpe_studio.core import Tokenizer

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")], pattern="o200k").save(tmp_path / "tt", format="tiktoken")
    for command in (["encode", text_path, "--tokenizer", "tt"], ["convert", "tt", "--to", "hf"]):
        line = error_line(cli(tmp_path, *command, "--pattern", "cl100k", "--out", "out"))
        assert line == (
            "bpe-studio: error: tt: its sidecar tokenizer.tiktoken.json gives its own pattern, "
            "o200k; a different one, cl100k, cannot be applied"
        )
        assert not (tmp_path / "out").exists()
    assert encode_ids(tmp_path, text_path, "tt", "--pattern", "o200k_base") == encode_ids(
        tmp_path, text_path, "tt"
    )


def test_a_vocab_json_beside_a_tokenizer_json_that_encodes_otherwise_is_warned_of_once(tmp_path):
    """Audit h_hf63: --tokenizer …/vocab.json of a Qwen2-like Hub snapshot encoded with GPT-2's
    pattern, no NFC and "<|im_end|>" as text, and only "pattern: gpt2" hinted at it."""
    from hf_shapes import hub_folder

    folder = tmp_path / "qwen"
    hub_folder(folder, "qwen2", ["<|endoftext|>", "<|im_end|>"])
    text = write_text(tmp_path / "t.txt", slice_head("english", 20_000) + "<|im_end|>")
    for command in (
        ("encode", text, "--tokenizer", folder / "vocab.json", "--out", tmp_path / "ids.npy"),
        ("convert", folder / "vocab.json", "--to", "hf", "--out", tmp_path / "converted"),
        ("inspect", folder / "vocab.json"),
    ):
        stderr = ok(cli(tmp_path, *command))
        warned = [ln for ln in stderr.splitlines() if ln.startswith("bpe-studio: warning: ")]
        assert len(warned) == 1, stderr
        assert f"name it ({folder / 'tokenizer.json'}) or the folder" in warned[0]
    stderr = ok(cli(tmp_path, "encode", text, "--tokenizer", folder, "--out", tmp_path / "f.npy"))
    assert "warning" not in stderr


def test_a_presets_name_that_is_also_a_folder_is_one_line_and_preset_form_works(
    tmp_path, text, text_path
):
    """Found by the CLI audit: after ``train ... --out gpt2``, ``encode --tokenizer gpt2``
    read that folder and said "pattern: gpt2"; a folder of anything named o200k hid o200k."""
    (tmp_path / "gpt2").mkdir()
    result = cli(tmp_path, "encode", text_path, "--tokenizer", "gpt2", "--out", tmp_path / "a.npy")
    folder = os.path.join(os.curdir, "gpt2")
    assert error_line(result) == (
        f"bpe-studio: error: 'gpt2' names both the preset gpt2 and the folder {folder}: "
        f"write {folder} for the folder, or preset:gpt2 for the preset"
    )
    assert not (tmp_path / "a.npy").exists()
    expected = tiktoken_encoding("gpt2").encode(text, allowed_special="all")
    assert encode_ids(tmp_path, text_path, "preset:gpt2") == expected


def test_the_working_folder_named_as_dot_is_a_source(tmp_path):
    """The second review: `inspect .` in a tokenizer's folder said "PosixPath('.') has an
    empty name" (the vocab.json-beside check ran before the name was looked at)."""
    folder = tmp_path / "tok"
    folder.mkdir()
    shutil.copy(FIXTURES / "gpt2_vocab.json", folder / "vocab.json")
    shutil.copy(FIXTURES / "gpt2_merges.txt", folder / "merges.txt")
    for source in (".", "./"):
        result = cli(folder, "inspect", source)
        ok(result)
        assert "50,257" in result.stdout
