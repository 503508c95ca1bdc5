"""``Tokenizer.load`` / ``save`` / ``preset`` / ``from_hf`` / ``from_tiktoken``: every source
the app and the command line accept, each export reloaded by the real library (tiktoken,
Hugging Face ``tokenizers``) with identical ids, and conversions that keep the ids."""

from __future__ import annotations

import gzip
import json
import os

import pytest
import tiktoken
import tiktoken.load
import tokenizers
from core_helpers import EOT, FIXTURES, SLICES, read_fixture
from gpt2_bytes import read_gpt2_vocab
from reference_encoder import ReferenceEncoder, published
from tokenizers import decoders, models, pre_tokenizers, trainers

from bpe_studio.core import Tokenizer
from bpe_studio.core.formats.files import LossyFormatWarning, load_data

TEXT = "".join(read_fixture(SLICES[k])[:4000] for k in SLICES) + EOT + " tail 'll\r\n  x"


def test_gpt2_names_and_preset(tmp_path, gpt2_tokenizer):
    ids = gpt2_tokenizer.encode(TEXT)
    # GPT-2's own file names in a directory, as the fixtures hold them.
    folder = tmp_path / "g"
    folder.mkdir()
    for name in ("gpt2_vocab.json", "gpt2_merges.txt"):
        (folder / name).write_bytes((FIXTURES / name).read_bytes())
    loaded = Tokenizer.load(folder)
    assert loaded.encode(TEXT) == ids and loaded.special_tokens == [EOT]
    assert Tokenizer.load("gpt2").encode(TEXT) == ids
    assert Tokenizer.preset("gpt2").encode(TEXT) == ids


def test_conversions_keep_the_ids(tmp_path, gpt2_tokenizer):
    ids = gpt2_tokenizer.encode(TEXT)
    gpt2_tokenizer.save(tmp_path / "hf", format="hf")
    via_hf = Tokenizer.load(tmp_path / "hf" / "tokenizer.json")
    assert via_hf.encode(TEXT) == ids
    assert Tokenizer.load(tmp_path / "hf").encode(TEXT) == ids  # a directory with one
    paths = via_hf.save(tmp_path / "tt", format="tiktoken", name="mine")
    assert sorted(p.name for p in paths) == ["mine.tiktoken", "mine.tiktoken.json"]
    via_tt = Tokenizer.load(tmp_path / "tt" / "mine.tiktoken")  # pattern from the sidecar
    assert via_tt.encode(TEXT) == ids and via_tt.pattern_name == "gpt2"
    via_tt.save(tmp_path / "back")
    back = Tokenizer.load(tmp_path / "back")
    assert back.encode(TEXT) == ids
    assert back.vocab == gpt2_tokenizer.vocab  # the merge list is the one derived from the ranks


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_exports_reload_in_the_real_libraries(tmp_path, name):
    tok = Tokenizer.preset(name)
    ids = tok.encode(TEXT)
    tok.save(tmp_path, format="hf")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf.encode(TEXT).ids == ids
    tok.save(tmp_path, format="tiktoken", name=name)
    sidecar = json.loads((tmp_path / f"{name}.tiktoken.json").read_text())
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / f"{name}.tiktoken"))
    enc = tiktoken.Encoding(
        name,
        pat_str=sidecar["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=sidecar["special_tokens"],
    )
    assert enc.encode(TEXT, allowed_special="all") == ids
    again = Tokenizer.from_tiktoken(tmp_path / f"{name}.tiktoken")
    assert again.encode(TEXT) == ids and again.pattern == tok.pattern


def _trained_hf(tmp_path, pre_tokenizer) -> tokenizers.Tokenizer:
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([TEXT.replace(EOT, "")], trainer)
    return tok


SPLIT = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+"


@pytest.mark.parametrize(
    "pre",
    [
        pre_tokenizers.ByteLevel(add_prefix_space=False),
        pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(tokenizers.Regex(SPLIT), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        ),
    ],
    ids=["ByteLevel", "Split+ByteLevel"],
)
def test_files_written_by_tokenizers_load_and_encode_the_same(tmp_path, pre):
    hf = _trained_hf(tmp_path, pre)
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.from_hf(tmp_path / "tokenizer.json")
    assert tok.encode(TEXT) == hf.encode(TEXT).ids
    assert Tokenizer.load(tmp_path / "tokenizer.json").encode(TEXT) == hf.encode(TEXT).ids


def test_loaded_tokenizer_matches_the_reference(tmp_path):
    tok = Tokenizer.preset("o200k_base")
    specials = {s: tok.special_id(s) for s in tok.special_tokens}
    ref = ReferenceEncoder(tok.vocab, tok.merges, specials, tok.pattern)
    assert tok.encode(TEXT) == ref.encode(TEXT)


def test_load_errors_name_the_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        Tokenizer.load(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="cl100k_base, o200k_base"):
        Tokenizer.preset("gpt5")
    with pytest.raises(ValueError, match="a directory without"):
        Tokenizer.load(tmp_path)
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(ValueError, match="x.txt: cannot tell the format"):
        Tokenizer.load(tmp_path / "x.txt")
    Tokenizer.preset("gpt2").save(tmp_path / "tt", format="tiktoken")
    (tmp_path / "tt" / "tokenizer.tiktoken.json").unlink()
    with pytest.raises(ValueError, match="tokenizer.tiktoken: a rank file holds no"):
        Tokenizer.load(tmp_path / "tt" / "tokenizer.tiktoken")
    assert Tokenizer.load(tmp_path / "tt" / "tokenizer.tiktoken", "gpt2").pattern_name == "gpt2"
    with pytest.raises(ValueError, match="not a valid regex"):
        Tokenizer.load("gpt2", pattern="(")
    # A preset was said to be "the file", where the user named no file.
    with pytest.raises(ValueError, match="gpt2: the preset gives its own pattern"):
        Tokenizer.load("gpt2", pattern="cl100k")
    with pytest.raises(ValueError, match="unknown format"):
        Tokenizer.preset("gpt2").save(tmp_path, format="sentencepiece")


@pytest.fixture(scope="module")
def gpt2_tiktoken_ids() -> list[int]:
    """The oracle: tiktoken's GPT-2 built from the fixture vocabulary by the tests' reader."""
    vocab = read_gpt2_vocab(FIXTURES / "gpt2_vocab.json")
    enc = tiktoken.Encoding(
        "gpt2_test",
        pat_str=published("r50k_base")["pat_str"],
        mergeable_ranks={tok: i for i, tok in vocab.items() if tok != EOT.encode()},
        special_tokens={EOT: 50256},
    )
    return enc.encode(TEXT, allowed_special="all")


def _sources(tmp_path, gpt2_tokenizer) -> dict[str, object]:
    """One GPT-2 tokenizer written as every kind of source ``load_data`` reads."""
    copies = tmp_path / "gpt2_names"
    copies.mkdir()
    for name in ("gpt2_vocab.json", "gpt2_merges.txt"):
        (copies / name).write_bytes((FIXTURES / name).read_bytes())
    gpt2_tokenizer.save(tmp_path / "ours")
    gpt2_tokenizer.save(tmp_path / "hf", format="hf")
    gpt2_tokenizer.save(tmp_path / "tt", format="tiktoken")  # tokenizer.tiktoken + its sidecar
    rank_bytes = (tmp_path / "tt" / "tokenizer.tiktoken").read_bytes()
    sidecar = (tmp_path / "tt" / "tokenizer.tiktoken.json").read_bytes()
    gz = tmp_path / "gz"
    gz.mkdir()
    (gz / "tokenizer.tiktoken.gz").write_bytes(gzip.compress(rank_bytes))
    (gz / "tokenizer.tiktoken.json").write_bytes(sidecar)
    # As earlier versions wrote it: the sidecar named NAME.json.
    old = tmp_path / "old"
    old.mkdir()
    (old / "tokenizer.tiktoken").write_bytes(rank_bytes)
    (old / "tokenizer.json").write_bytes(sidecar)
    return {
        "preset name": "gpt2",
        "GPT-2 directory": tmp_path / "ours",
        "GPT-2 directory, GPT-2's names": copies,
        "vocab.json named directly": tmp_path / "ours" / "vocab.json",
        "gpt2_vocab.json named directly": os.fspath(copies / "gpt2_vocab.json"),
        "tokenizer.json": tmp_path / "hf" / "tokenizer.json",
        "directory holding tokenizer.json": tmp_path / "hf",
        ".tiktoken file": tmp_path / "tt" / "tokenizer.tiktoken",
        "directory holding tokenizer.tiktoken": tmp_path / "tt",
        "directory holding tokenizer.tiktoken.gz": gz,
        "the sidecar named directly": tmp_path / "tt" / "tokenizer.tiktoken.json",
        "directory holding tokenizer.tiktoken + the old tokenizer.json sidecar": old,
        ".tiktoken with the old sidecar named directly": old / "tokenizer.tiktoken",
    }


def test_load_data_reads_every_source_kind(tmp_path, gpt2_tokenizer, gpt2_tiktoken_ids):
    """The app's Load (``load_data``) takes every source the command line takes."""
    for kind, source in _sources(tmp_path, gpt2_tokenizer).items():
        data = load_data(source)
        tok = Tokenizer.from_data(data)
        assert tok.encode(TEXT) == gpt2_tiktoken_ids, kind
        assert data.special_tokens == {EOT: 50256}, kind
        assert tok.pattern_name == "gpt2", kind


def test_load_data_source_errors(tmp_path, gpt2_tokenizer):
    gpt2_tokenizer.save(tmp_path / "ours")
    (tmp_path / "ours" / "merges.txt").rename(tmp_path / "ours" / "other.txt")
    with pytest.raises(ValueError, match=r"vocab.json: a GPT-2 vocabulary needs .*merges.txt"):
        load_data(tmp_path / "ours" / "vocab.json")
    with pytest.raises(ValueError, match="ours: holds vocab.json but not merges.txt, the merges"):
        load_data(tmp_path / "ours")
    (tmp_path / "ours" / "vocab.json").unlink()
    with pytest.raises(ValueError, match="a directory without .*NAME.tiktoken"):
        load_data(tmp_path / "ours")
    # A rank file's directory whose sidecar is gone: the rank file still decides the kind.
    gpt2_tokenizer.save(tmp_path / "tt", format="tiktoken")
    (tmp_path / "tt" / "tokenizer.tiktoken.json").unlink()
    with pytest.raises(ValueError, match="a rank file holds no"):
        load_data(tmp_path / "tt")


def test_a_rank_files_sidecar_keeps_its_pattern(tmp_path):
    """The patterns audit: a rank file with its sidecar took any --pattern given and split
    text with it, silently, where a tokenizer.json refuses one that differs from its own.
    The sidecar's pattern now stands as a tokenizer.json's does; any spelling of the same
    pattern is that pattern."""
    regex_text = r"\p{L}+|\s+|[^\p{L}\s]+"
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")], pattern=regex_text).save(tmp_path / "re", format="tiktoken")
    Tokenizer(vocab, [(b"a", b"b")], pattern="cl100k").save(tmp_path / "cl", format="tiktoken")
    rank_file, sidecar = tmp_path / "re" / "tokenizer.tiktoken", "tokenizer.tiktoken.json"
    for source in (tmp_path / "re", rank_file, rank_file.with_name(sidecar)):
        with pytest.raises(ValueError) as differs:
            load_data(source, pattern="cl100k")
        assert str(differs.value) == (
            f"{source}: its sidecar {sidecar} gives its own pattern, '{regex_text}'; a "
            "different one, cl100k, cannot be applied"
        )
        assert load_data(source, pattern=regex_text).pattern == regex_text
    cl100k_regex = published("cl100k_base")["pat_str"]
    for spelling in ("cl100k", "cl100k_base", "gpt-4", cl100k_regex):
        assert load_data(tmp_path / "cl", pattern=spelling).pattern == "cl100k", spelling
    # Without its sidecar a rank file holds no pattern: the one given is used.
    rank_file.with_name(sidecar).unlink()
    assert load_data(rank_file, pattern="cl100k").pattern == "cl100k"


@pytest.mark.parametrize("fmt", ["hf", "tiktoken"])
def test_a_one_letter_property_is_the_same_pattern_with_braces_or_without(tmp_path, fmt):
    r"""Found by the review: a tokenizer.json holds \p{L} for \pL, a sidecar the pattern as
    given, so the same pattern given the other way was refused as a different one."""
    bare, braced = r" ?\pL+| ?\pN+|\s+|\S", r" ?\p{L}+| ?\p{N}+|\s+|\S"
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")], pattern=bare).save(tmp_path / "out", format=fmt)
    for given in (bare, braced):
        assert load_data(tmp_path / "out", pattern=given).pattern in (bare, braced)
    with pytest.raises(ValueError, match="gives its own pattern"):
        load_data(tmp_path / "out", pattern=r" ?\pL+|\s+|\S")


def test_a_tokenizer_jsons_own_split_regex_given_back_is_its_pattern(tmp_path):
    r"""Found by the review: Llama 3's regex given back as the pattern of its own file was
    refused as "a different one", compared with the reader's translation of it (in an
    Isolated Split's spelling there). The ids are tokenizers' own; a pattern that differs is
    still refused, naming the file's regex."""
    from foreign_files import LLAMA3_REGEX, llama3_style, own_ids

    path = llama3_style(tmp_path / "l3", full=False)
    expected = own_ids(path, TEXT)
    for source in (path, path.parent):
        assert Tokenizer.load(source, pattern=LLAMA3_REGEX).encode(TEXT) == expected
    # Saved with a sidecar, its pattern given back is that pattern too.
    Tokenizer.load(path).save(tmp_path / "tt", format="tiktoken")
    assert Tokenizer.load(tmp_path / "tt", pattern=LLAMA3_REGEX).encode(TEXT) == expected
    other = LLAMA3_REGEX.replace(r"\p{N}{1,3}", r"\p{N}")
    for source in (path, tmp_path / "tt"):
        with pytest.raises(ValueError, match="gives its own pattern") as differs:
            load_data(source, pattern=other)
        assert r"|\p{N}{1,3}|" in str(differs.value) and "(?s:" not in str(differs.value)


def test_gpt2_files_read_with_the_regex_of_the_tokenizer_json_beside_them_are_not_warned_of(
    tmp_path,
):
    """The same comparison in ``formats.beside``: a Hub download's vocab.json named with
    --pattern set to its tokenizer.json's own regex was said to encode "with another
    pattern" than that tokenizer.json; a pattern that differs still is."""
    import shutil

    from foreign_files import LLAMA3_REGEX, llama3_style, own_ids

    from bpe_studio.core.formats.beside import tokenizer_json_beside

    path = llama3_style(tmp_path / "l3", full=False)
    with pytest.warns(LossyFormatWarning, match="hold no pattern"):
        Tokenizer.load(path).save(tmp_path / "hub", format="gpt2")
    shutil.copy(path, tmp_path / "hub" / "tokenizer.json")
    vocab = tmp_path / "hub" / "vocab.json"
    data = load_data(vocab, pattern=LLAMA3_REGEX)
    assert Tokenizer.from_data(data).encode(TEXT) == own_ids(path, TEXT)
    assert tokenizer_json_beside(vocab, data) is None
    other = load_data(vocab, pattern=LLAMA3_REGEX.replace(r"\p{N}{1,3}", r"\p{N}"))
    assert "another pattern" in (tokenizer_json_beside(vocab, other) or "")


@pytest.mark.parametrize("name", ["my_vocab.json", "vocab.json"])
@pytest.mark.parametrize("model_first", [False, True])
def test_a_tokenizer_json_named_like_a_vocabulary_is_read_as_one(tmp_path, name, model_first):
    """Found by the review: a whole tokenizer.json saved as my_vocab.json was read as a
    GPT-2 vocabulary, "needs its merges file beside it"; its start tells it apart (as
    tokenizers writes it, "version" first, or by hand with "model" first). GPT-2's own
    vocabulary is still one, and one without its merges still says so."""
    from foreign_files import llama3_style, own_ids

    from bpe_studio.core.formats.gpt2 import holds_vocabulary

    path = llama3_style(tmp_path / "l3", full=False)
    obj = json.loads(path.read_text(encoding="utf-8"))
    if model_first:
        obj = {"model": obj.pop("model"), **obj}
    named = tmp_path / "named" / name
    named.parent.mkdir()
    named.write_text(json.dumps(obj), encoding="utf-8")
    expected = own_ids(path, TEXT)
    assert Tokenizer.load(named).encode(TEXT) == expected
    own_regex = obj["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    assert Tokenizer.load(named, pattern=own_regex).encode(TEXT) == expected
    assert holds_vocabulary(FIXTURES / "gpt2_vocab.json")
    assert load_data(FIXTURES / "gpt2_vocab.json").pattern == "gpt2"
    (tmp_path / "x_vocab.json").write_text('{"version": 0, "model": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match="needs its merges file beside it"):
        load_data(tmp_path / "x_vocab.json")


# A file Python's json cannot parse though it is JSON: nested past the recursion limit, or
# holding an integer longer than Python converts.
_DEEP = "[" * 100_000 + "]" * 100_000
_LONG_NUMBER = '{"model": {"type": "BPE", "vocab": {"a": 1' + "0" * 5_000 + '}, "merges": []}}'


@pytest.mark.parametrize("where", ["tokenizer.json", "vocab.json", "gpt2.tiktoken.json"])
def test_json_too_deep_or_too_long_for_python_is_refused_naming_the_file(
    tmp_path, gpt2_tokenizer, where
):
    """The hostile-inputs audit: a tokenizer.json, vocab.json or sidecar nested 100,000 deep
    failed encode, inspect and convert with a RecursionError traceback; a 5,001-digit
    integer with Python's advice to raise sys.set_int_max_str_digits, naming no file."""
    from bpe_studio.core.encode.foreign import open_tokenizer

    gpt2_tokenizer.save(tmp_path, format="tiktoken", name="gpt2")
    gpt2_tokenizer.save(tmp_path)  # vocab.json + merges.txt
    path = tmp_path / where
    source = tmp_path / "gpt2.tiktoken" if where.endswith("tiktoken.json") else path
    path.write_text(_DEEP, encoding="utf-8")
    deep = f"{path}: its arrays or objects nest deeper than Python's JSON parser goes"
    for load in (Tokenizer.load, open_tokenizer):
        with pytest.raises(ValueError) as info:
            load(source)
        assert str(info.value).startswith(deep), load
    path.write_text(_LONG_NUMBER, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        Tokenizer.load(source)
    assert str(info.value) == (
        f"{path}: an integer of 5,001 digits at line 1 column 42, longer than the 4,300 read "
        "here: no tokenizer file holds one (a damaged file?)"
    )


def test_readers_that_only_look_pass_over_json_python_cannot_parse(tmp_path, gpt2_tokenizer):
    """What looks at a file before it is read (its kind, the tokenizer.json beside a
    vocab.json, an old sidecar named NAME.json) raised a RecursionError of its own."""
    from bpe_studio.core.formats.beside import tokenizer_json_beside
    from bpe_studio.core.formats.hf.kind import foreign_kind, unknown_model
    from bpe_studio.core.formats.tiktoken import sidecar_beside

    gpt2_tokenizer.save(tmp_path)
    hf = tmp_path / "tokenizer.json"
    for text in (_DEEP, _LONG_NUMBER.replace('"BPE"', '"Other"')):
        hf.write_text(text, encoding="utf-8")
        assert foreign_kind(hf) is None
        assert unknown_model(hf) is None
        assert tokenizer_json_beside(tmp_path / "vocab.json", gpt2_tokenizer.to_data()) is None
        assert sidecar_beside(tmp_path / "tokenizer.tiktoken") is None


@pytest.mark.parametrize(
    ("fmt", "first"), [("gpt2", "vocab.json"), ("hf", "tokenizer.json"), ("tiktoken", "t.tiktoken")]
)
def test_a_folder_that_refuses_new_files_is_said_of_the_file_saved(
    tmp_path, monkeypatch, fmt, first
):
    """The hostile-inputs audit: Tokenizer.save into an immutable folder (chattr +i) named
    the hidden temporary file it could not make, .vocab.json.xgknpx6p.tmp. The refusal
    mkstemp gives there is made here, as a test run as root may write anywhere."""
    import errno

    from bpe_studio.core.io import atomic

    def refused(dir, prefix, suffix):  # mkstemp's keywords
        hidden = os.path.join(dir, f"{prefix}xgknpx6p{suffix}")
        raise PermissionError(errno.EPERM, "Operation not permitted", hidden)

    monkeypatch.setattr(atomic.tempfile, "mkstemp", refused)
    with pytest.raises(PermissionError) as info:
        Tokenizer.preset("gpt2").save(tmp_path, format=fmt, name="t" if fmt == "tiktoken" else None)
    assert info.value.filename == os.fspath(tmp_path / first)
    assert str(info.value) == f"[Errno 1] Operation not permitted: '{tmp_path / first}'"
    assert list(tmp_path.iterdir()) == []


def test_ranks_that_skip_a_number_say_where(tmp_path):
    """The streams audit: a rank out of place on line 300 (or that line left blank) was
    reported at line 464, whose token needed the one out of place, and nothing else."""
    Tokenizer.preset("gpt2").truncated(1_000).save(tmp_path, format="tiktoken", name="t")
    lines = (tmp_path / "t.tiktoken").read_bytes().split(b"\n")
    assert lines[299].endswith(b" 299")  # line 300 holds rank 299
    for bad, said in (
        (
            lines[299].replace(b" 299", b" 99999"),
            "(line 299 holds 298, the next, line 300, 99,999)",
        ),
        (b"", "(line 299 holds 298, the next, line 301, 300)"),
    ):
        path = tmp_path / "bad.tiktoken"
        path.write_bytes(b"\n".join([*lines[:299], bad, *lines[300:]]))
        with pytest.raises(ValueError, match="cannot be built") as caught:
            Tokenizer.from_tiktoken(path, pattern="gpt2")
        assert str(caught.value).endswith(f"; no line holds rank 299 {said}")


@pytest.mark.parametrize("fmt", ["gpt2", "hf", "tiktoken"])
def test_a_folder_to_save_into_named_like_a_file_is_refused(tmp_path, fmt):
    """An audit: Tokenizer.save("x.json") made a folder named x.json holding
    x.json/vocab.json, where the user meant the file. A folder of that name made beforehand
    is taken as given."""
    tok = Tokenizer.preset("gpt2")
    for name in ("x.json", "x.tiktoken", "merges.txt"):
        with pytest.raises(
            ValueError, match="names a file, but a tokenizer is saved into a folder"
        ):
            tok.save(tmp_path / name, fmt)
        assert not (tmp_path / name).exists()
    made = tmp_path / "kept.json"
    made.mkdir()
    assert all(p.parent == made for p in tok.save(made, fmt))


def test_a_tokenizer_file_gone_is_said_to_be_no_such_file(tmp_path):
    """An audit: a tokenizer.json deleted after it was picked was said "not found ...
    (expected a GPT-2 directory ..., a tokenizer.json, a .tiktoken file or a preset)", as
    if it were of a wrong kind."""
    for name in ("gone.json", "gone.tiktoken", "gone.tiktoken.gz"):
        with pytest.raises(FileNotFoundError) as caught:
            Tokenizer.load(tmp_path / name)
        assert str(caught.value) == f"tokenizer not found: {tmp_path / name}: no such file"
