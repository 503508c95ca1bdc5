"""``bpe-studio convert SRC --to gpt2|hf|tiktoken --out DIR`` (#10): GPT-2's files taken
through Hugging Face and tiktoken and back give the original ids and the original files'
vocabulary and merges; each intermediate file loads in its own library with the same ids;
``--out`` is checked before any work and never overwritten without ``--force``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tiktoken
from cli_run import cli, encode_ids, error_line, ok
from core_helpers import EOT, FIXTURES, slice_head, write_text
from gpt2_bytes import read_gpt2_merges, read_gpt2_vocab
from reference_encoder import published, read_rank_file

from bpe_studio.core import Tokenizer


@pytest.fixture(scope="module")
def text() -> str:
    parts = [slice_head(k, 5_000) for k in ("english", "chinese", "code", "mixed_web")]
    return EOT.join(parts) + "\r\n  \U0001f600 end"


@pytest.fixture(scope="module")
def text_path(tmp_path_factory, text) -> Path:
    return write_text(tmp_path_factory.mktemp("text") / "text.txt", text)


def gpt2_tiktoken() -> tiktoken.Encoding:
    vocab = read_gpt2_vocab(FIXTURES / "gpt2_vocab.json")
    return tiktoken.Encoding(
        "gpt2_test",
        pat_str=published("r50k_base")["pat_str"],
        mergeable_ranks={tok: i for i, tok in vocab.items() if tok != EOT.encode()},
        special_tokens={EOT: 50256},
    )


def test_gpt2_to_hf_to_tiktoken_to_gpt2(tmp_path, text, text_path):
    expected = gpt2_tiktoken().encode(text, allowed_special="all")
    src = FIXTURES / "gpt2_vocab.json"
    assert encode_ids(tmp_path, text_path, src) == expected

    # GPT-2 -> hf: the real library loads it and gives the same ids.
    stderr = ok(cli(tmp_path, "convert", src, "--to", "hf", "--out", "hf"))
    assert f"wrote {Path('hf') / 'tokenizer.json'}" in stderr
    from tokenizers import Tokenizer as HfTokenizer

    assert HfTokenizer.from_file(str(tmp_path / "hf" / "tokenizer.json")).encode(text).ids == (
        expected
    )
    assert encode_ids(tmp_path, text_path, tmp_path / "hf" / "tokenizer.json") == expected

    # hf -> tiktoken: tiktoken given the rank file and the JSON beside it gives the same ids.
    stderr = ok(cli(tmp_path, "convert", "hf/tokenizer.json", "--to", "tiktoken",
                    "--name", "mine", "--out", "tk"))  # fmt: skip
    assert "mine.tiktoken" in stderr and "mine.tiktoken.json" in stderr
    meta = json.loads((tmp_path / "tk" / "mine.tiktoken.json").read_text(encoding="utf-8"))
    enc = tiktoken.Encoding(
        "mine",
        pat_str=meta["pat_str"],
        mergeable_ranks=read_rank_file(tmp_path / "tk" / "mine.tiktoken"),
        special_tokens=meta["special_tokens"],
    )
    assert enc.encode(text, allowed_special="all") == expected

    # tiktoken -> gpt2: the original vocabulary and merges, and the original ids.
    stderr = ok(cli(tmp_path, "convert", "tk/mine.tiktoken", "--to", "gpt2", "--out", "back"))
    assert "vocab.json" in stderr and "merges.txt" in stderr
    back = tmp_path / "back"
    assert read_gpt2_vocab(back / "vocab.json") == read_gpt2_vocab(src)
    assert read_gpt2_merges(back / "merges.txt") == read_gpt2_merges(FIXTURES / "gpt2_merges.txt")
    assert encode_ids(tmp_path, text_path, back) == expected


def test_preset_to_tiktoken_takes_the_presets_name(tmp_path):
    stderr = ok(cli(tmp_path, "convert", "cl100k_base", "--to", "tiktoken", "--out", "o"))
    assert "cl100k_base.tiktoken" in stderr
    from reference_encoder import read_rank_file as read

    shipped = read(Path(__file__).resolve().parents[2] / "resources" / "tokenizers"
                   / "cl100k_base.tiktoken.gz")  # fmt: skip
    assert read(tmp_path / "o" / "cl100k_base.tiktoken") == shipped


def test_an_out_named_like_a_file_is_refused_before_training(tmp_path):
    """An audit: convert --to hf --out w.json wrote w.json/tokenizer.json, a folder named
    like the file meant; train said so only after its merges were learned, were it said."""
    write_text(tmp_path / "c.txt", "low lower lowest " * 50)
    for args in (["convert", "gpt2", "--to", "hf"], ["train", "c.txt", "--vocab-size", "270"]):
        line = error_line(cli(tmp_path, *args, "--out", "w.json"))
        assert "w.json: names a file, but --out is a folder" in line and "e.g. w" in line
        assert not (tmp_path / "w.json").exists()


def test_gpt2_files_of_another_pattern_say_how_to_load_them(tmp_path):
    stderr = ok(cli(tmp_path, "convert", "o200k_base", "--to", "gpt2", "--out", "g"))
    assert "--pattern o200k" in stderr


def test_gpt2_files_with_special_tokens_of_other_forms_convert_when_named(tmp_path):
    # Found by fuzzing: the error asked for --special-token, which convert did not have.
    from tokenizers import Tokenizer as HfTokenizer

    special = "<|end of text|>"
    vocab = {i: bytes([i]) for i in range(256)} | {256: special.encode(), 257: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")], [special]).save(tmp_path / "g", format="gpt2")
    line = error_line(cli(tmp_path, "convert", "g", "--to", "hf", "--out", "h"))
    assert "--special-token" in line
    ok(cli(tmp_path, "convert", "g", "--to", "hf", "--out", "h", "--special-token", special))
    hf = HfTokenizer.from_file(str(tmp_path / "h" / "tokenizer.json"))
    assert hf.encode(f"ab{special}ab", add_special_tokens=False).ids == [257, 256, 257]


def test_gpt2_notes_name_every_flag_loading_needs(tmp_path, text):
    # Found by fuzzing the app: GPT-2 files of special tokens not written like <...> loaded
    # back only when named, and nothing said so.
    import warnings

    from bpe_studio.core.formats.files import LossyFormatWarning

    special = "my special"
    vocab = {i: bytes([i]) for i in range(256)} | {256: special.encode(), 257: b" a"}
    tok = Tokenizer(vocab, [(b" ", b"a")], [special], pattern="cl100k")
    with pytest.warns(LossyFormatWarning, match=r"hold no pattern .*'my special' would not"):
        tok.save(tmp_path / "lib", format="gpt2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok.save(tmp_path / "h", format="hf")  # it holds both
    stderr = ok(cli(tmp_path, "convert", "h", "--to", "gpt2", "--out", "g"))
    assert "load them with --pattern cl100k to split text" in stderr
    assert "load these files with --special-token 'my special'" in stderr
    path = write_text(tmp_path / "t.txt", text + special + " a")
    named = ["--pattern", "cl100k", "--special-token", special]
    assert encode_ids(tmp_path, path, "g", *named) == encode_ids(tmp_path, path, "h")


def test_a_special_token_held_under_another_spelling_is_noted(tmp_path):
    """The conversions audit: '<|中文|>' went to vocab.json as '<|ä¸Ńæĸĩ|>' without a note, and
    tokenizers' GPT-2 reader, naming it, gave it a new id."""
    import tokenizers

    special = "<|中文|>"
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: special.encode()}
    Tokenizer(vocab, [(b"a", b"b")], [special]).save(tmp_path / "h", format="hf")
    stderr = ok(cli(tmp_path, "convert", "h", "--to", "gpt2", "--out", "g"))
    assert (
        "note: vocab.json + merges.txt hold special token '<|中文|>' under its byte-level" in stderr
    )
    assert "--to hf or --to tiktoken keeps it" in stderr
    reader = tokenizers.ByteLevelBPETokenizer(
        str(tmp_path / "g" / "vocab.json"), str(tmp_path / "g" / "merges.txt")
    )
    reader.add_special_tokens([special])
    assert reader.encode("ab" + special).ids != [256, 257]  # it does matter


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        # CS336's Tokenizer(vocab, merges) after training with <|endoftext|>: an ordinary
        # token here, which GPT-2 files would load back special.
        ({256: EOT.encode()}, "would make '<|endoftext|>' (id 256) special (ordinary here)"),
        # An entry no merge makes, not written like <...>: the files would not load.
        ({256: b"hello world"}, "b'hello world' (id 256) is made by no merge"),
    ],
)
def test_convert_to_gpt2_refuses_files_that_would_give_other_ids(tmp_path, extra, named):
    """An API audit: such a tokenizer converted --to gpt2 without a word, and the files gave
    other ids (or none), where convert promises the same ids for every text."""
    vocab = {i: bytes([i]) for i in range(256)} | extra | {257: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")]).save(tmp_path / "h", format="hf")
    line = error_line(cli(tmp_path, "convert", "h", "--to", "gpt2", "--out", "g"))
    assert line.startswith("bpe-studio: error: --to gpt2: vocab.json + merges.txt cannot give h's")
    assert named in line and line.endswith("--to hf keeps its ids")
    assert not (tmp_path / "g").exists()


def test_a_special_token_a_merge_makes_is_noted_with_the_flag_that_loads_it(tmp_path, text):
    """An API audit: a special token a merge also makes was written to GPT-2 files with no
    note, and loaded back ordinary."""
    import warnings

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"<x", 257: b"<x>"}
    tok = Tokenizer(vocab, [(b"<", b"x"), (b"<x", b">")], ["<x>"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # said by the library's own test
        tok.save(tmp_path / "g")
    named = ["--special-token", "<x>"]
    stderr = ok(cli(tmp_path, "convert", "g", "--to", "gpt2", "--out", "g2", *named))
    assert "load these files with --special-token '<x>'" in stderr
    path = write_text(tmp_path / "t.txt", text + "a <x> b<x>c")
    assert encode_ids(tmp_path, path, "g2", *named) == tok.encode(text + "a <x> b<x>c")
    assert encode_ids(tmp_path, path, "g2") != tok.encode(text + "a <x> b<x>c")  # it matters


def test_the_gpt2_note_says_why_two_tokens_run_together_need_naming(tmp_path):
    # The CLI audit: the note said loading takes "those written like <...>", and
    # "<|a|><|b|>", so written, needed naming all the same: it wants no bracket inside.
    special = "<|a|><|b|>"
    vocab = {i: bytes([i]) for i in range(256)} | {256: special.encode()}
    Tokenizer(vocab, [], [special]).save(tmp_path / "h", format="hf")
    stderr = ok(cli(tmp_path, "convert", "h", "--to", "gpt2", "--out", "g"))
    assert "written like <...> or [...] (no whitespace nor bracket of the kind inside)" in stderr
    assert "load these files with --special-token '<|a|><|b|>'" in stderr


def test_gpt2_notes_give_flags_that_read_back_when_a_value_starts_with_a_dash(tmp_path, text):
    """An audit: "--special-token --sep--", pasted as the note gave it, was refused by argparse
    ("expected one argument"); so was "--pattern '-|[^-]+'"."""
    special, pattern = "--sep--", "-|[^-]+"
    vocab = {i: bytes([i]) for i in range(256)} | {256: special.encode()}
    Tokenizer(vocab, [], [special], pattern=pattern).save(tmp_path / "h", format="hf")
    stderr = ok(cli(tmp_path, "convert", "h", "--to", "gpt2", "--out", "g"))
    assert "load them with --pattern='-|[^-]+' to split" in stderr
    assert "load these files with --special-token=--sep--" in stderr
    path = write_text(tmp_path / "t.txt", f"a-b{special}c")
    named = ["--pattern=-|[^-]+", "--special-token=--sep--"]
    assert encode_ids(tmp_path, path, "g", *named) == encode_ids(tmp_path, path, "h")


def test_existing_files_are_not_replaced_without_force(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "tokenizer.json").write_text("precious", encoding="utf-8")
    line = error_line(cli(tmp_path, "convert", "gpt2", "--to", "hf", "--out", out))
    assert str(out) in line and "tokenizer.json" in line and "--force" in line
    assert (out / "tokenizer.json").read_text(encoding="utf-8") == "precious"
    ok(cli(tmp_path, "convert", "gpt2", "--to", "hf", "--out", out, "--force"))
    assert json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))["model"]


def test_out_is_checked_before_the_source_is_read(tmp_path):
    """A bad --out fails first: with a missing source the message is about --out."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file", encoding="utf-8")
    line = error_line(cli(tmp_path, "convert", tmp_path / "missing.tiktoken", "--to", "gpt2",
                          "--out", blocker))  # fmt: skip
    assert str(blocker) in line and "not a directory" in line
    line = error_line(cli(tmp_path, "convert", "o200k_base", "--to", "hf", "--out", "/proc/x"))
    assert "/proc/x" in line


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["missing_dir", "--to", "hf"], "missing_dir"),
        (["gpt2", "--to", "sentencepiece"], "sentencepiece"),
        (["gpt2", "--to", "tiktoken", "--name", "../up"], "../up"),
        (["gpt2", "--to", "hf", "--pattern", "(?<"], "(?<"),
    ],
)
def test_bad_convert_arguments_are_one_line(tmp_path, args, needle):
    line = error_line(cli(tmp_path, "convert", *args, "--out", tmp_path / "o"))
    assert needle in line
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("to", "files"), [("hf", "tokenizer.json"), ("gpt2", "vocab.json")])
def test_a_name_for_a_format_of_fixed_names_is_refused(tmp_path, to, files):
    """The terminals audit: --name with --to hf (or gpt2) was silently ignored."""
    result = cli(tmp_path, "convert", "gpt2", "--to", to, "--name", "foo", "--out", "o")
    assert result.returncode == 2
    line = error_line(result)
    assert line.startswith("bpe-studio: error: --name foo: names the files of --to tiktoken")
    assert files in line and "leave --name out" in line
    assert not (tmp_path / "o").exists()


def test_a_name_given_with_its_suffix_names_the_files_once(tmp_path):
    """An audit: ``--name mytok.tiktoken`` wrote ``mytok.tiktoken.tiktoken`` and
    ``mytok.tiktoken.tiktoken.json``; the library's ``save(name=)`` did the same."""
    ok(cli(tmp_path, "convert", "gpt2", "--to", "tiktoken", "--name", "mytok.tiktoken",
           "--out", "o"))  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "mytok.tiktoken",
        "mytok.tiktoken.json",
    ]
    meta = json.loads((tmp_path / "o" / "mytok.tiktoken.json").read_text(encoding="utf-8"))
    assert meta["name"] == "mytok"
    written = Tokenizer.preset("gpt2").save(tmp_path / "lib", "tiktoken", "lib.tiktoken")
    assert sorted(p.name for p in written) == ["lib.tiktoken", "lib.tiktoken.json"]


def test_the_files_named_are_the_files_written(tmp_path):
    """The files named on stderr are the files in DIR (and nothing else is)."""
    stderr = ok(cli(tmp_path, "convert", "gpt2", "--to", "tiktoken", "--out", "t"))
    written = sorted(p.name for p in (tmp_path / "t").iterdir())
    assert written == ["gpt2.tiktoken", "gpt2.tiktoken.json"]
    for name in written:
        assert name in stderr


def test_a_directory_of_tiktoken_files_is_a_source(tmp_path, text, text_path):
    """convert --to tiktoken writes tokenizer.tiktoken + tokenizer.tiktoken.json by default;
    that directory, as --tokenizer, is read as the rank file."""
    expected = gpt2_tiktoken().encode(text, allowed_special="all")
    ok(cli(tmp_path, "convert", FIXTURES / "gpt2_vocab.json", "--to", "tiktoken", "--out", "tk"))
    assert sorted(p.name for p in (tmp_path / "tk").iterdir()) == [
        "tokenizer.tiktoken",
        "tokenizer.tiktoken.json",
    ]
    assert encode_ids(tmp_path, text_path, tmp_path / "tk") == expected


@pytest.mark.parametrize("style", ["llama3", "qwen2"])
def test_a_tokenizer_json_with_its_own_split_goes_to_tiktoken_and_back(tmp_path, text, text_path,
                                                                      style):  # fmt: skip
    """Found by an audit: tokenizer.json -> tiktoken -> hf was refused ("'(?s:' means
    different things in Oniguruma") for any file with one custom Isolated Split."""
    from foreign_files import llama3_style, own_ids, qwen2_style

    build = llama3_style if style == "llama3" else qwen2_style
    original = build(tmp_path / "original", full=False)
    ok(cli(tmp_path, "convert", original, "--to", "tiktoken", "--out", "tt"))
    ok(cli(tmp_path, "convert", "tt/tokenizer.tiktoken", "--to", "hf", "--out", "back"))
    expected = own_ids(original, text)
    assert own_ids(tmp_path / "back" / "tokenizer.json", text) == expected
    assert encode_ids(tmp_path, text_path, "back/tokenizer.json") == expected
    # An audit: each trip wrapped the regex's intervals in one more group ("\p{N}{1,3}",
    # "(?:\p{N}){1,3}", "(?:(?:\p{N})){1,3}"): a second trip writes the same files.
    ok(cli(tmp_path, "convert", "back/tokenizer.json", "--to", "tiktoken", "--out", "tt2"))
    ok(cli(tmp_path, "convert", "tt2/tokenizer.tiktoken", "--to", "hf", "--out", "back2"))
    for first, second in [("tt", "tt2"), ("back", "back2")]:
        for path in (tmp_path / first).iterdir():
            assert (tmp_path / second / path.name).read_bytes() == path.read_bytes(), path.name


def test_gpt2_files_of_a_split_say_its_own_regex(tmp_path, text, text_path):
    """The --pattern the note names is the file's regex (not the core's spelling of an
    Isolated Split, three times as long), and loading the files with it gives the ids
    tokenizers gives with the original file."""
    import shlex

    from foreign_files import LLAMA3_REGEX, llama3_style, own_ids

    original = llama3_style(tmp_path / "original", full=False)
    stderr = ok(cli(tmp_path, "convert", original, "--to", "gpt2", "--out", "g"))
    (note,) = [ln for ln in stderr.splitlines() if "--pattern" in ln]
    pattern = shlex.split(note.split("--pattern ", 1)[1].rsplit(" to split text", 1)[0])[0]
    assert "(?s:" not in pattern and len(pattern) < 1.2 * len(LLAMA3_REGEX), pattern
    ids = encode_ids(tmp_path, text_path, "g", "--pattern", pattern)
    assert ids == own_ids(original, text)


def test_a_tokenizer_jsons_own_split_regex_is_taken_as_its_pattern(tmp_path, text, text_path):
    """Found by the review: convert and encode refused Llama 3's --pattern for Llama 3's own
    file ("the file gives its own pattern"), compared with the reader's translation of it.
    The ids are tokenizers' own; another regex is still refused in one line."""
    from foreign_files import LLAMA3_REGEX, llama3_style, own_ids

    original = llama3_style(tmp_path / "original", full=False)
    expected = own_ids(original, text)
    assert encode_ids(tmp_path, text_path, original, "--pattern", LLAMA3_REGEX) == expected
    ok(cli(tmp_path, "convert", original, "--pattern", LLAMA3_REGEX, "--to", "hf", "--out", "o"))
    assert own_ids(tmp_path / "o" / "tokenizer.json", text) == expected
    other = LLAMA3_REGEX.replace(r"\p{N}{1,3}", r"\p{N}")
    refused = cli(tmp_path, "convert", original, "--pattern", other, "--to", "hf", "--out", "o2")
    line = error_line(refused)
    assert "the file gives its own pattern" in line and "cannot be applied" in line


def test_a_tokenizer_json_named_like_a_vocabulary_converts(tmp_path, text, text_path):
    """Found by the review: a whole tokenizer.json saved as my_vocab.json was read as a GPT-2
    vocabulary and refused for want of its merges file."""
    from foreign_files import llama3_style, own_ids

    original = llama3_style(tmp_path / "original", full=False)
    named = tmp_path / "my_vocab.json"
    named.write_bytes(original.read_bytes())
    expected = own_ids(original, text)
    assert encode_ids(tmp_path, text_path, named) == expected
    ok(cli(tmp_path, "convert", named, "--to", "tiktoken", "--out", "tt"))
    assert encode_ids(tmp_path, text_path, tmp_path / "tt") == expected


def test_a_flagged_added_token_is_the_reason_said(tmp_path):
    """Found by an audit: gpt-oss's shape with a '<mask>' that strips the spaces before it was
    refused for tiktoken as "normalizes or splits text in ways only a tokenizer.json says",
    naming no file."""
    import tokenizers
    from foreign_files import llama3_style

    original = llama3_style(tmp_path / "original", full=False)
    tok = tokenizers.Tokenizer.from_file(str(original))
    tok.add_special_tokens([tokenizers.AddedToken("<mask>", lstrip=True, special=True)])
    tok.save(str(original))
    line = error_line(cli(tmp_path, "convert", original, "--to", "tiktoken", "--out", "x"))
    assert line == (
        "bpe-studio: error: x/tokenizer.tiktoken: format 'tiktoken' cannot hold this tokenizer: "
        "added token '<mask>' has lstrip: only a tokenizer.json can say that (save it as 'hf')"
    )
    assert not (tmp_path / "x").exists()


def test_a_special_token_to_name_again_is_quoted_so_it_pastes_back(tmp_path):
    """An audit: `--special-token '<line\\nbreak>'` in single quotes is a backslash and an n,
    not the line break the token holds."""
    import subprocess

    special = "<line\nbreak's>"
    vocab = {i: bytes([i]) for i in range(256)}
    Tokenizer(vocab, [], [special]).save(tmp_path / "src", format="hf")
    result = cli(tmp_path, "convert", tmp_path / "src" / "tokenizer.json", "--to", "gpt2",
                 "--out", tmp_path / "gpt2")  # fmt: skip
    assert result.returncode == 0, result.stderr
    (note,) = [line for line in result.stderr.splitlines() if "--special-token" in line]
    word = note.split("--special-token ", 1)[1]
    assert word == "$'<line\\nbreak\\'s>'"
    pasted = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, text=True)
    assert pasted.stdout == special


def test_a_bare_rank_file_decodes_without_a_pattern_and_says_how_to_give_one(
    tmp_path, text, text_path
):
    """A docs audit: decode's help says decoding does not use the pattern, yet a rank file
    without its NAME.tiktoken.json was refused for want of one; encoding still needs it, and
    the message names the option."""
    ok(cli(tmp_path, "convert", FIXTURES / "gpt2_vocab.json", "--to", "tiktoken", "--out", "tk"))
    (tmp_path / "tk" / "tokenizer.tiktoken.json").unlink()
    rank_file = tmp_path / "tk" / "tokenizer.tiktoken"
    line = error_line(cli(tmp_path, "encode", text_path, "--tokenizer", rank_file, "--out", "x"))
    assert "holds no pre-tokenization pattern" in line and "--pattern" in line
    ok(
        cli(
            tmp_path,
            "encode",
            text_path,
            "--tokenizer",
            rank_file,
            "--pattern",
            "gpt2",
            "--out",
            "ids.npy",
        )
    )
    # Without the file beside it, <|endoftext|> is no special token: it is encoded as text.
    assert np.load(tmp_path / "ids.npy").tolist() == gpt2_tiktoken().encode(
        text, disallowed_special=()
    )
    ok(cli(tmp_path, "decode", "ids.npy", "--tokenizer", rank_file, "--out", "back.txt"))
    assert (tmp_path / "back.txt").read_bytes() == text.encode("utf-8")


def test_the_summary_names_the_pattern_as_train_and_encode_do(tmp_path):
    """The patterns audit: convert said "pattern custom" of a custom regex, where train,
    encode and inspect print the regex (as --pattern takes it back)."""
    regex_text = r"\p{L}+|\p{N}|[^\p{L}\p{N}]"
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")], pattern=regex_text).save(tmp_path / "h", format="hf")
    stderr = ok(cli(tmp_path, "convert", "h", "--to", "tiktoken", "--out", "t"))
    assert f"pattern: '{regex_text}'" in stderr.splitlines() and "custom" not in stderr
    stderr = ok(cli(tmp_path, "convert", "cl100k_base", "--to", "hf", "--out", "c"))
    assert "pattern: cl100k" in stderr.splitlines()


def test_an_added_token_not_written_like_a_special_one_is_noted_with_the_flag_that_loads_it(
    tmp_path, text
):
    """An audit: the note said such a token comes back special, but the files did not load
    ("do not look like special tokens") until it was named, and the note named no flag."""
    import tokenizers

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")]).save(tmp_path / "h", format="hf")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "h" / "tokenizer.json"))
    hf.add_tokens([tokenizers.AddedToken(t, normalized=False) for t in ("tool_call", "<tool>")])
    hf.save(str(tmp_path / "h" / "tokenizer.json"))
    stderr = ok(cli(tmp_path, "convert", "h", "--to", "gpt2", "--out", "g"))
    (note,) = [line for line in stderr.splitlines() if "added token" in line]
    # '<tool>' is taken for a special token unnamed: only the other is named.
    assert "(load these files with --special-token tool_call)" in note
    assert note.count("--special-token") == 1
    sample = text + "ab tool_call<tool> ab"
    path = write_text(tmp_path / "t.txt", sample)
    named = ["--special-token", "tool_call"]
    assert encode_ids(tmp_path, path, "g", *named) == hf.encode(sample).ids
