"""vocab.json + merges.txt: save and load give back the same tokenizer (tokens that are not
UTF-8 on their own included), GPT-2's own files load, and bad files fail with errors that name
the file and the place."""

from __future__ import annotations

import json
import warnings

import pytest
from core_helpers import EOT, FIXTURES, is_utf8, slice_head, write_text
from gpt2_bytes import read_gpt2_merges, read_gpt2_vocab, token_to_gpt2

from bpe_studio.core import Tokenizer, TokenizerFileError, load_merges, load_vocab, train_bpe


@pytest.fixture(scope="module")
def chinese_trained(tmp_path_factory):
    path = write_text(tmp_path_factory.mktemp("zh") / "zh.txt", slice_head("chinese", 80_000))
    return train_bpe(path, 700, [EOT, "<pad>"])


def test_save_then_load_gives_identical_vocab_and_merges(tmp_path, chinese_trained):
    vocab, merges = chinese_trained
    broken = [t for t in list(vocab.values())[258:] if not is_utf8(t)]
    assert len(broken) > 10, "expected merged tokens holding part of a character"
    Tokenizer(vocab, merges, [EOT, "<pad>"]).save(tmp_path / "tok")
    loaded = Tokenizer.from_files(
        tmp_path / "tok" / "vocab.json", tmp_path / "tok" / "merges.txt", [EOT, "<pad>"]
    )
    assert loaded.vocab == vocab
    assert loaded.merges == merges
    assert load_vocab(tmp_path / "tok" / "vocab.json") == vocab
    assert load_merges(tmp_path / "tok" / "merges.txt") == merges
    # The files are GPT-2's format as read by an independent reader.
    assert read_gpt2_vocab(tmp_path / "tok" / "vocab.json") == vocab
    assert read_gpt2_merges(tmp_path / "tok" / "merges.txt") == merges
    first = (tmp_path / "tok" / "merges.txt").read_text(encoding="utf-8").split("\n")[0]
    assert first.startswith("#version")
    # And the loaded tokenizer encodes like the original.
    text = slice_head("chinese", 5_000)
    assert loaded.encode(text) == Tokenizer(vocab, merges, [EOT, "<pad>"]).encode(text)


def test_save_overwrites_and_leaves_no_temporary_files(tmp_path, chinese_trained):
    vocab, merges = chinese_trained
    small = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    small.save(tmp_path)
    Tokenizer(vocab, merges, [EOT, "<pad>"]).save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merges.txt", "vocab.json"]
    assert load_merges(tmp_path / "merges.txt") == merges


def test_gpt2_files_load(gpt2_tokenizer):
    assert gpt2_tokenizer.vocab == read_gpt2_vocab(FIXTURES / "gpt2_vocab.json")
    assert gpt2_tokenizer.merges == read_gpt2_merges(FIXTURES / "gpt2_merges.txt")
    assert len(gpt2_tokenizer.vocab) == 50257 and len(gpt2_tokenizer.merges) == 50000
    assert gpt2_tokenizer.vocab[50256] == EOT.encode()
    assert gpt2_tokenizer.merges[0] == (b" ", b"t")


def test_gpt2_round_trip_through_save(tmp_path, gpt2_tokenizer):
    gpt2_tokenizer.save(tmp_path)
    assert load_vocab(tmp_path / "vocab.json") == gpt2_tokenizer.vocab
    assert load_merges(tmp_path / "merges.txt") == gpt2_tokenizer.merges


def test_crlf_merges_file_loads(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_bytes("#version: 0.2\r\nĠ t\r\nh e\r\n".encode())
    assert load_merges(path) == [(b" ", b"t"), (b"h", b"e")]


@pytest.mark.parametrize("header", ["#version: 0.2\n", ""])
def test_merges_file_with_a_byte_order_mark_loads(tmp_path, header):
    # Saved by a Windows editor: the mark is no part of the header or of the first merge.
    path = tmp_path / "merges.txt"
    path.write_bytes(("\ufeff" + header + "Ġ t\nh e\n").encode())
    assert load_merges(path) == [(b" ", b"t"), (b"h", b"e")]


def test_vocab_file_with_a_byte_order_mark_loads(tmp_path, gpt2_tokenizer):
    gpt2_tokenizer.save(tmp_path)
    vocab = tmp_path / "vocab.json"
    vocab.write_bytes(b"\xef\xbb\xbf" + vocab.read_bytes())
    assert load_vocab(vocab) == gpt2_tokenizer.vocab
    loaded = Tokenizer.from_files(vocab, tmp_path / "merges.txt")
    assert loaded.encode("Hello world") == gpt2_tokenizer.encode("Hello world")


# --- bad merges.txt ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad_line", "why"),
    [
        ("Ġ t h", "three tokens"),
        ("Ġt", "one token"),
        ("中 t", "character outside the alphabet"),
        ("Ġ  t", "two spaces"),
        ("a\tb", "tab instead of space"),
    ],
)
def test_malformed_merges_line(tmp_path, bad_line, why):
    path = tmp_path / "merges.txt"
    path.write_text(f"#version: 0.2\nĠ t\nh e\n{bad_line}\ni n\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError) as info:
        load_merges(path)
    assert str(path) in str(info.value), why
    assert "line 4" in str(info.value), why
    assert isinstance(info.value, ValueError)


def test_a_huge_malformed_line_is_quoted_cut(tmp_path):
    """An audit: the line was quoted whole, so a minified tokenizer.json saved as merges.txt
    (or a line of megabytes) made an error message of that size."""
    path = tmp_path / "merges.txt"
    path.write_text("#version: 0.2\nh e\n" + "x" * 20 + "y" * 99_960 + "z" * 20 + "\n")
    with pytest.raises(TokenizerFileError) as info:
        load_merges(path)
    message = str(info.value)
    assert len(message) < len(str(path)) + 200
    assert "line 3" in message and "100,000 characters" in message
    assert "'" + "x" * 20 in message and "z" * 20 + "'" in message


def test_a_huge_vocab_entry_is_quoted_cut(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_text(json.dumps({"a" * 50_000: "0"}), encoding="utf-8")
    with pytest.raises(TokenizerFileError) as info:
        load_vocab(path)
    assert len(str(info.value)) < len(str(path)) + 200
    assert "50,000 characters" in str(info.value) and "got '0'" in str(info.value)


def test_merges_not_utf8(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_bytes(b"#version: 0.2\nh e\n\xff \xfe\ni n\n")
    with pytest.raises(TokenizerFileError) as info:
        load_merges(path)
    assert str(path) in str(info.value)
    assert "line 3" in str(info.value)


def test_merges_not_utf8_far_into_a_long_file(tmp_path):
    # The bad byte sits on line 5002, well past the first buffered read of the file.
    path = tmp_path / "merges.txt"
    path.write_bytes(b"#version: 0.2\n" + b"h e\n" * 5000 + b"\xc3 t\n" + b"i n\n" * 10)
    with pytest.raises(TokenizerFileError) as info:
        load_merges(path)
    assert str(path) in str(info.value)
    assert "line 5002" in str(info.value)


def test_bad_merges_through_from_files(tmp_path):
    (tmp_path / "vocab.json").write_text(
        json.dumps({token_to_gpt2(bytes([i])): i for i in range(256)}), encoding="utf-8"
    )
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b c\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="line 2"):
        Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")


def test_repeated_merge_is_refused_naming_both_lines(tmp_path):
    # Found by fuzzing: tokenizers' BPE ranks the last copy of a repeated merge, this
    # project's encoder the first ("abc": [258] here, [257, 99] there).
    vocab = {token_to_gpt2(bytes([i])): i for i in range(256)}
    vocab |= {"bc": 256, "ab": 257, "abc": 258}
    (tmp_path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\nb c\na b\na bc\nb c\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="line 5: merge 'b' \\+ 'c' repeats line 2"):
        Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")


# --- bad vocab.json --------------------------------------------------------------------------


def write_vocab(tmp_path, text):
    path = tmp_path / "vocab.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_vocab_not_json_names_the_line(tmp_path):
    path = write_vocab(tmp_path, '{\n"a": 0,\n"b": 1,,\n"c": 2\n}\n')
    with pytest.raises(TokenizerFileError) as info:
        load_vocab(path)
    assert str(path) in str(info.value)
    assert "line 3" in str(info.value)


@pytest.mark.parametrize("text", ['["a", "b"]', '"a"', "42", "null"])
def test_vocab_not_an_object(tmp_path, text):
    path = write_vocab(tmp_path, text)
    with pytest.raises(TokenizerFileError, match="vocab.json"):
        load_vocab(path)


@pytest.mark.parametrize("value", ['"0"', "1.5", "true", "null", "[1]", "-3"])
def test_vocab_id_not_an_int(tmp_path, value):
    path = write_vocab(tmp_path, '{"a": 0, "bad": ' + value + "}")
    with pytest.raises(TokenizerFileError) as info:
        load_vocab(path)
    assert str(path) in str(info.value)
    assert "bad" in str(info.value)  # names the entry


def test_vocab_duplicate_ids(tmp_path):
    path = write_vocab(tmp_path, '{"a": 0, "b": 1, "c": 1}')
    with pytest.raises(TokenizerFileError) as info:
        load_vocab(path)
    assert str(path) in str(info.value)
    assert "1" in str(info.value)


def test_vocab_token_outside_the_alphabet(tmp_path):
    path = write_vocab(tmp_path, '{"a": 0, "a b": 1}')  # a raw space is not in the alphabet
    with pytest.raises(TokenizerFileError, match="vocab.json"):
        load_vocab(path)


def test_vocab_not_utf8(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_bytes(b'{"a": 0, "\xff": 1}')
    with pytest.raises(
        TokenizerFileError, match=r"vocab.json: not UTF-8 \(byte 0xff at offset 10\)"
    ):
        load_vocab(path)


def _byte_vocab(tmp_path, *, without=(), extra="") -> object:
    """A vocab.json of the 256 byte tokens (ids 0-255) but those of ``without``, then
    ``extra`` (JSON entries, with a leading comma); its merges.txt beside it, empty."""
    entries = [
        f"{json.dumps(token_to_gpt2(bytes([b])), ensure_ascii=False)}: {b}"
        for b in range(256)
        if b not in without
    ]
    (tmp_path / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    return write_vocab(tmp_path, "{" + ", ".join(entries) + extra + "}")


def test_a_vocab_without_a_byte_names_the_file(tmp_path):
    """The hostile-inputs audit: a vocab.json missing byte 0x00 said "the vocabulary lacks 1
    single-byte token(s)", naming no file."""
    path = _byte_vocab(tmp_path, without={0})
    for load in (lambda: load_vocab(path), lambda: Tokenizer.load(path)):
        with pytest.raises(TokenizerFileError) as info:
            load()
        assert str(info.value) == (
            f"{path}: no token for byte 0x00 (written 'Ā'): a byte-level vocabulary needs all 256"
        )
    path = _byte_vocab(tmp_path, without={0, 1, 2})
    with pytest.raises(TokenizerFileError, match=r"0x00 \(written 'Ā'\) nor for 2 other bytes:"):
        load_vocab(path)


def test_a_token_given_twice_in_a_vocab_is_refused_naming_it(tmp_path):
    """The hostile-inputs audit: a vocab.json giving a token twice loaded with the last id
    (JSON keeps the last), silently: the first id held nothing."""
    path = _byte_vocab(tmp_path, extra=', "Ā": 256')
    with pytest.raises(TokenizerFileError) as info:
        Tokenizer.load(path)
    assert str(info.value) == (
        f"{path}: entry 'Ā' is given twice, with ids 0 and 256: a vocabulary holds each token "
        "once (which id is meant?)"
    )
    # Given twice with the same id, it is the same vocabulary.
    path = _byte_vocab(tmp_path, extra=', "Ā": 0')
    assert load_vocab(path)[0] == b"\x00"


def test_a_vocab_cut_short_says_so_as_a_tokenizer_json_does(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_text('{"a": 0,\n "b": 1, "c', encoding="utf-8")
    with pytest.raises(TokenizerFileError) as info:
        load_vocab(path)
    assert (
        str(info.value)
        == f"{path}: not valid JSON: it ends early, at line 2 column 12 (cut short?)"
    )
    # Cut just after a \u escape: json calls it a bad escape (found cutting GPT-2's vocab.json).
    path.write_text('{"a": 0,\n "\\u0132', encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=r"it ends early, at line 2 column 9 \(cut short"):
        load_vocab(path)
    path.write_text('{"a": 0,\n "b" 1}', encoding="utf-8")
    with pytest.raises(TokenizerFileError, match="not valid JSON at line 2 column 6"):
        load_vocab(path)


def test_missing_files_raise_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_vocab(tmp_path / "nope.json")
    with pytest.raises(FileNotFoundError):
        load_merges(tmp_path / "nope.txt")


# ------------------------------------- a vocabulary its merges do not explain (issue 24, 3)
def _gpt2_pair(tmp_path, merge_lines: int | None):
    """GPT-2's vocab.json with its merges.txt cut after ``merge_lines`` merges (None: whole)."""
    folder = tmp_path / "g"
    folder.mkdir()
    (folder / "vocab.json").write_bytes((FIXTURES / "gpt2_vocab.json").read_bytes())
    data = (FIXTURES / "gpt2_merges.txt").read_bytes()  # one merge a line, no header
    if merge_lines is not None:
        data = b"".join(data.splitlines(keepends=True)[:merge_lines])
    (folder / "merges.txt").write_bytes(data)
    return folder


@pytest.mark.parametrize("merge_lines", [40_000, 0])
def test_merges_cut_short_are_refused_naming_both_files(tmp_path, merge_lines):
    folder = _gpt2_pair(tmp_path, merge_lines)
    vocab, merges = folder / "vocab.json", folder / "merges.txt"
    # By hand: GPT-2's ids 256..50255 are its merges in order, 50256 is <|endoftext|>.
    unexplained = 50_000 - merge_lines
    first = token_to_gpt2(read_gpt2_vocab(FIXTURES / "gpt2_vocab.json")[256 + merge_lines])
    for load in (
        lambda: Tokenizer.load(folder),
        lambda: Tokenizer.load(vocab),
        lambda: Tokenizer.from_files(vocab, merges),
        lambda: Tokenizer.from_files(vocab, merges, [EOT]),
    ):
        with pytest.raises(TokenizerFileError) as err:
            load()
        line = str(err.value)
        assert str(vocab) in line and str(merges) in line and "\n" not in line
        assert f"{unexplained:,} token(s)" in line
        assert f"{first!r} (id {256 + merge_lines})" in line


def test_whole_gpt2_files_infer_only_endoftext(tmp_path):
    folder = _gpt2_pair(tmp_path, None)
    for tok in (
        Tokenizer.load(folder),
        Tokenizer.from_files(folder / "vocab.json", folder / "merges.txt"),
    ):
        assert tok.special_tokens == [EOT] and tok.special_id(EOT) == 50256
        assert len(tok.vocab) == 50257 and len(tok.merges) == 50000
    # Given explicitly, the given list is the special tokens (none here): <|endoftext|> is
    # then ordinary text, as before.
    plain = Tokenizer.from_files(folder / "vocab.json", folder / "merges.txt", [])
    assert plain.special_tokens == [] and 50256 not in plain.encode(EOT)


def test_special_tokens_of_other_forms_must_be_named(tmp_path):
    """A special token not of the form <...> or [...] is not inferred from GPT-2 files: it
    is an error unless named, and named it loads."""
    vocab = {i: bytes([i]) for i in range(256)}
    vocab |= {256: b"END", 257: b"[CLS]", 258: b"</s>", 259: b"ab"}
    (said,) = _saved_as_gpt2(Tokenizer(vocab, [(b"a", b"b")]), tmp_path)  # as if by hand
    assert "hold b'END' (id 256), made by no merge" in said
    with pytest.raises(TokenizerFileError, match=r"1 token\(s\) .* 'END' \(id 256\)"):
        Tokenizer.load(tmp_path)
    tok = Tokenizer.load(tmp_path, special_tokens=["END"])
    assert sorted(tok.special_tokens) == sorted(["END", "</s>", "[CLS]"])
    assert tok.encode("abEND</s>") == [259, 256, 258]
    named = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt", ["END"])
    assert named.special_tokens == ["END"]


def test_load_checks_special_token_ids_given_as_a_dict_as_from_files_does(tmp_path):
    """An API audit: load(..., special_tokens={"<|endoftext|>": 999}) dropped the ids without
    a word, while Tokenizer(...) and from_files refused the same contradictory dict."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: EOT.encode(), 257: b"<pad>", 258: b"ab"}
    Tokenizer(vocab, [(b"a", b"b")], [EOT, "<pad>"]).save(tmp_path)
    files = (tmp_path / "vocab.json", tmp_path / "merges.txt")
    swapped = {EOT: 257, "<pad>": 256}
    loaders = {
        "from_files": lambda given: Tokenizer.from_files(*files, given),
        "load": lambda given: Tokenizer.load(tmp_path, special_tokens=given),
    }
    for load in loaders.values():
        with pytest.raises(ValueError, match=r"'<\|endoftext\|>': id 257 already holds b'<pad>'"):
            load(swapped)
        with pytest.raises(ValueError, match=r"id 258 already holds b'ab'"):
            load({EOT: 258})
        # The ids the files hold, and a new token at a free id, are taken as given.
        tok = load({EOT: 256, "<pad>": 257, "<new>": 259})
        assert {s: tok.special_id(s) for s in tok.special_tokens} == {
            EOT: 256,
            "<pad>": 257,
            "<new>": 259,
        }
        assert tok.encode("ab<new><pad>") == [258, 259, 257]
    with pytest.raises(ValueError, match=r"id 999 already holds"):
        Tokenizer.load("gpt2", special_tokens={EOT: 999})


def test_a_disk_full_at_the_second_file_leaves_the_first_as_it_was(tmp_path, monkeypatch):
    """vocab.json and merges.txt were renamed into place one after the other: a full disk at
    merges.txt left a new vocab.json beside the old (or no) merges.txt, which then loads as
    another tokenizer or not at all. Both now go into place only once both are written."""
    import errno

    from bpe_studio.core.formats.gpt2 import save_files
    from bpe_studio.core.io import atomic

    old_vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    save_files(tmp_path, old_vocab, [(b"a", b"b")])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real = atomic._temp_file
    calls = []

    def full_at_the_second(target):
        calls.append(target.name)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target)

    monkeypatch.setattr(atomic, "_temp_file", full_at_the_second)
    new_vocab = old_vocab | {257: b"abc"}
    with pytest.raises(OSError, match="No space left"):
        save_files(tmp_path, new_vocab, [(b"a", b"b"), (b"ab", b"c")])
    assert calls == ["vocab.json", "merges.txt"]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# ------------------------------------------- what the loader would infer, checked at save
def _saved_as_gpt2(tok: Tokenizer, directory) -> list[str]:
    """The LossyFormatWarnings saving ``tok`` as GPT-2 files into ``directory`` gives."""
    from bpe_studio.core.formats.files import LossyFormatWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok.save(directory)
    return [str(w.message) for w in caught if issubclass(w.category, LossyFormatWarning)]


def test_a_tokenizer_made_without_its_special_token_is_warned_of(tmp_path, chinese_trained):
    """An API audit: CS336's Tokenizer(vocab, merges) (special_tokens=None) after training
    with <|endoftext|> saved silently as GPT-2 files, which load back with <|endoftext|>
    special: other ids for a text holding it."""
    vocab, merges = chinese_trained
    tok = Tokenizer(vocab, merges)
    text = "中文" + EOT + "<pad>x"
    (said,) = _saved_as_gpt2(tok, tmp_path / "g")
    assert "mark no special token, and '<|endoftext|>', '<pad>', ordinary here, would" in said
    assert said.endswith("save as 'hf', which holds them")
    assert "needs them named" not in said  # naming adds special tokens, never takes them away
    assert Tokenizer.load(tmp_path / "g").encode(text) != tok.encode(text)  # it did matter
    tok.save(tmp_path / "h", format="hf")
    assert Tokenizer.load(tmp_path / "h").encode(text) == tok.encode(text)
    # from_files with special_tokens=None infers them (documented); given, the list is all.
    files = (tmp_path / "g" / "vocab.json", tmp_path / "g" / "merges.txt")
    assert Tokenizer.from_files(*files).special_tokens == [EOT, "<pad>"]
    assert Tokenizer.from_files(*files, []).encode(text) == tok.encode(text)


def test_a_special_token_a_merge_makes_too_is_warned_of(tmp_path):
    """An API audit: a special token that a merge also makes (it keeps that token's id) saved
    silently as GPT-2 files, which load back with it ordinary; no other format holds it."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"<x", 257: b"<x>"}
    tok = Tokenizer(vocab, [(b"<", b"x"), (b"<x", b">")], ["<x>"])
    text = "a <x> b<x>c"
    (said,) = _saved_as_gpt2(tok, tmp_path)
    assert "mark no special token, and '<x>' would not be taken for one" in said
    assert said.endswith("no other format holds this tokenizer whole (neither 'hf' nor 'tiktoken')")
    assert Tokenizer.load(tmp_path).special_tokens == []  # it did matter
    assert Tokenizer.load(tmp_path, special_tokens=["<x>"]).encode(text) == tok.encode(text)


def test_naming_is_not_offered_where_it_cannot_bring_the_tokenizer_back(tmp_path):
    """The review: with an ordinary '<y>' the loader takes for a special token beside a
    special '<x>' it misses, the warning said naming brings them back; naming only adds
    special tokens, so '<y>' comes back special whatever is named."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"<x", 257: b"<x>", 258: b"<y>"}
    tok = Tokenizer(vocab, [(b"<", b"x"), (b"<x", b">")], ["<x>"])
    (said,) = _saved_as_gpt2(tok, tmp_path)
    assert "'<y>', ordinary here, would be taken for one" in said
    assert "needs them named" not in said


def test_a_refused_gpt2_save_is_not_also_warned_of(tmp_path):
    """The review: the loss warning came before the refusal of what merges.txt cannot say."""
    from dataclasses import replace

    from bpe_studio.core.formats.files import save_data

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"<y>"}
    data = replace(Tokenizer(vocab, [(b"a", b"b")]).to_data(), ignore_merges=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="ignore_merges"):
            save_data(tmp_path / "g", data, "gpt2")
    assert [str(w.message) for w in caught] == []
    assert not (tmp_path / "g").exists()


def test_an_ordinary_token_no_merge_makes_is_warned_of(tmp_path):
    """An API audit: an entry no merge makes, not written like <...>, saved silently as GPT-2
    files that then could not be loaded."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"hello world"}
    tok = Tokenizer(vocab, [(b"a", b"b")], [EOT])
    (said,) = _saved_as_gpt2(tok, tmp_path / "g")
    assert "hold b'hello world' (id 257), made by no merge and not written like" in said
    assert said.endswith("save as 'hf', which holds them")
    with pytest.raises(TokenizerFileError, match="made by no merge"):
        Tokenizer.load(tmp_path / "g")
    tok.save(tmp_path / "h", format="hf")
    text = "ab hello world" + EOT
    assert Tokenizer.load(tmp_path / "h").encode(text) == tok.encode(text)


def test_files_that_load_back_as_they_were_save_without_a_word(tmp_path, chinese_trained):
    """What the check above must leave alone: GPT-2's own files, a trained tokenizer with its
    special tokens, a byte-level 256+n one without any, the CS336 fixtures' vocabulary."""
    vocab, merges = chinese_trained
    byte_level = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"abc"}
    cs336 = [FIXTURES / f"train-bpe-reference-{n}" for n in ("vocab.json", "merges.txt")]
    tokenizers = {
        "cs336": Tokenizer.from_files(*cs336, [EOT]),
        "cs336_inferred": Tokenizer.from_files(*cs336),
        "gpt2": Tokenizer.preset("gpt2"),
        "trained": Tokenizer(vocab, merges, [EOT, "<pad>"]),
        "byte_level": Tokenizer(byte_level, [(b"a", b"b"), (b"ab", b"c")]),
        "gpt2_files": Tokenizer.from_files(
            FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", [EOT]
        ),
    }
    for name, tok in tokenizers.items():
        assert _saved_as_gpt2(tok, tmp_path / name) == [], name


# A special token whose text is not its own byte-level spelling, and the text around it.
RESPELLED = [
    ("<|中文|>", "a<|中文|>b", None),
    ("<x>\n", "a<x>\nb", None),
    ("  ", "a  b", None),
    ("Ġthe", "xĠthe the", b" the"),  # the spelling of the ordinary b" the"
]


@pytest.mark.parametrize(("special", "text", "ordinary"), RESPELLED)
def test_a_special_token_held_under_another_spelling_is_warned_of(
    tmp_path, special, text, ordinary
):
    """The conversions audit: vocab.json holds a special token under its byte-level spelling
    ('<|中文|>' as '<|ä¸Ńæĸĩ|>'), which tokenizers' GPT-2 reader, naming the special token,
    does not look up: it gave it a new id, or took 'Ġthe' for the ordinary ' the'."""
    import tokenizers

    vocab = {i: bytes([i]) for i in range(256)} | {256: b" t", 257: b" th", 258: b" the"}
    merges = [(b" ", b"t"), (b" t", b"h"), (b" th", b"e")]
    tok = Tokenizer(vocab | {259: special.encode()}, merges, [special])
    said = " ".join(_saved_as_gpt2(tok, tmp_path / "g"))
    g = tmp_path / "g"
    reader = tokenizers.ByteLevelBPETokenizer(
        str(g / "vocab.json"), str(g / "merges.txt"), add_prefix_space=False
    )
    reader.add_special_tokens([special])
    assert reader.encode(text).ids != tok.encode(text)  # it does matter
    assert f"special token {special!r} under its byte-level spelling" in said
    assert "tokenizers, transformers" in said
    if ordinary is not None:
        assert f"the ordinary token {ordinary!r}, id 258" in said
    # An ASCII special token is its own spelling: read alike, nothing said of it.
    plain = Tokenizer(vocab | {259: EOT.encode()}, merges, [EOT])
    assert _saved_as_gpt2(plain, tmp_path / "p") == []
    reader = tokenizers.ByteLevelBPETokenizer(
        str(tmp_path / "p" / "vocab.json"), str(tmp_path / "p" / "merges.txt")
    )
    reader.add_special_tokens([EOT])
    assert reader.encode("a" + EOT + " the").ids == plain.encode("a" + EOT + " the")


def test_an_entry_no_merge_makes_is_refused_naming_both_files_and_the_rule(tmp_path):
    """The streams audit: the refusal said the tokens "do not look like special tokens
    (<...> or [...])" of "<|a b|>", which does: the rule also wants no whitespace inside."""
    vocab = {token_to_gpt2(bytes([b])): b for b in range(256)}
    vocab[token_to_gpt2(b"ab")] = 256
    vocab[token_to_gpt2(b"<|a b|>")] = 257
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab_path.write_text(json.dumps(vocab), encoding="utf-8")
    merges_path.write_text("#version: 0.2\na b\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError) as caught:
        Tokenizer.from_files(vocab_path, merges_path)
    said = str(caught.value)
    assert said.startswith(f"{vocab_path}: 1 token(s) are made by no merge in {merges_path} ")
    assert "(<...> or [...] with no whitespace nor bracket of the kind inside)" in said
    assert "(id 257)" in said
    tok = Tokenizer.from_files(vocab_path, merges_path, special_tokens=["<|a b|>"])
    assert tok.encode("ab<|a b|>") == [256, 257]


def test_the_refusal_of_two_tokens_run_together_says_why(tmp_path):
    """The CLI audit: "<|a|><|b|>", refused as not looking like "<...>", visibly is one;
    the rule also wants no bracket of the kind inside, and the line now says so."""
    vocab = {token_to_gpt2(bytes([b])): b for b in range(256)}
    vocab[token_to_gpt2(b"<|a|><|b|>")] = 256
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab_path.write_text(json.dumps(vocab), encoding="utf-8")
    merges_path.write_text("#version: 0.2\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError, match=r"no whitespace nor bracket of the kind inside"):
        Tokenizer.from_files(vocab_path, merges_path)


def test_a_long_token_no_merge_makes_is_quoted_cut(tmp_path):
    """The re-audit: saving a 12 KB token that no merge makes gave a 12,517-character
    warning; a run's token of megabytes flooded the terminal. Saved as tiktoken, the refusal
    quoted it whole too."""
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"a" * 12_288}
    tok = Tokenizer(vocab, [])
    (said,) = _saved_as_gpt2(tok, tmp_path / "g")
    assert f"hold {b'a' * 53!r}…{b'a' * 27!r} (12,288 bytes) (id 256), made by no merge" in said
    assert len(said) < 600
    with pytest.raises(ValueError) as caught:
        tok.save(tmp_path / "t", format="tiktoken")
    assert "(12,288 bytes) is made by no merge" in str(caught.value)
    assert len(str(caught.value)) < 600


def test_loading_a_long_unmade_token_quotes_it_cut(tmp_path):
    """The stop's CLI check: `convert` of GPT-2 files holding a 12 KB token no merge makes
    printed a 12,666-character line."""
    vocab = {token_to_gpt2(bytes([b])): b for b in range(256)}
    vocab[token_to_gpt2(b"a" * 12_288)] = 256
    (tmp_path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    with pytest.raises(TokenizerFileError) as caught:
        Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    said = str(caught.value)
    assert f"e.g. {'a' * 53!r}…{'a' * 27!r} (12,288 bytes) (id 256)" in said and len(said) < 600
