"""What tiktoken files and tokenizer.json cannot hold is refused, never written to be read
otherwise by the library that owns the format (an audit of conversions: a rank file whose
pattern tiktoken split otherwise, silently; a tokenizer.json this project could not read back
or `tokenizers` could not load).

Each refused construct is first shown to matter: tiktoken or `tokenizers`, run here, splits
the text otherwise than Python's regex or fails on it. What is accepted is checked the other
way: the owning library gives the same ids.
"""

from __future__ import annotations

import json
import warnings

import pytest
import regex
import tiktoken
import tokenizers
from core_helpers import EOT, FIXTURES, SLICES, read_fixture

from bpe_studio.core import Tokenizer, train_bpe
from bpe_studio.core.formats.files import LossyFormatWarning, format_problem
from bpe_studio.core.formats.tiktoken.empty_match import can_match_empty
from bpe_studio.core.pretokenization.scan_patterns import isolated

BYTES = {i: bytes([i]) for i in range(256)}


def tiktoken_pieces(pattern: str, text: str) -> list[str] | str:
    """How tiktoken splits ``text`` with ``pattern``: every substring of the text is a rank,
    so each piece becomes one token; or tiktoken's failure, in words."""
    data = text.encode("utf-8")
    ranks = {bytes([b]): b for b in range(256)}
    for part in sorted(
        {data[i:j] for i in range(len(data)) for j in range(i + 1, len(data) + 1)},
        key=lambda s: (len(s), s),
    ):
        ranks.setdefault(part, len(ranks))
    try:
        enc = tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    except ValueError as e:
        return f"does not compile: {e}"
    try:
        ids = enc.encode_ordinary(text)
    except BaseException as e:  # noqa: BLE001 - tiktoken panics (a Rust panic) on some
        return f"fails: {type(e).__name__}"
    return [enc.decode_single_token_bytes(i).decode("utf-8") for i in ids]


def our_pieces(pattern: str, text: str) -> list[str]:
    return [m.group() for m in regex.finditer(pattern, text) if m.group()]


# A pattern, a text on which tiktoken reads it otherwise, and what the refusal names.
TIKTOKEN_TRAPS = [
    (r"\h+|.|\n", "ab  cD", r"'\h'"),
    (r"[\s&&[^\n]]+|.|\n", "a  b", "'&&'"),
    (r"[\p{L}--\p{Ll}]+|.|\n", "abC", "'--'"),
    (r"[a~~b]+|.|\n", "a~b", "'~~'"),
    (r"[[a-c]d]+|.|\n", "ab", "'['"),
    (r"[[:alpha:]]+|.|\n", "aé1", "'[:'"),
    (r"\p{L}+$|.|\n", "ab\n", "'$'"),
    (r"\p{L}+\Z|.|\n", "ab\n", r"'\Z'"),
    (r"\X", "ab", r"'\X'"),
    (r"(?a)\w+|\W", "aé", "'(?a)'"),
    (r"(?V1)[\w--\d]+|.|\n", "a1", "'(?V1)'"),
    (r"\s*|\S", "a b", "can match empty text"),
    (r"a*?|.|\n", "aa", "can match empty text"),
    (r"\p{InBasicLatin}+|.|\n", "ab", "tiktoken cannot compile it"),
    # Found by the review: word boundaries there, characters here.
    (r"\<\/?\p{L}+\>| ?\p{L}+|\s+|[^\s\p{L}]+", "a <b>x</b>", r"'\<'"),
    # Empty only before a character no sample held: tiktoken dropped every "€".
    (r"(?=\p{Sc})|\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]", "cost 5€, 7%", "can match empty text"),
    (r"\p{N}*(?=%)|\p{L}+|\p{N}+|\s+|[^\s\p{L}\p{N}]", "cost 5€, 7% off", "can match empty"),
    # Found by the patterns audit: empty only in contexts the old check's samples lacked.
    (
        r" ?\p{L}+| ?\p{N}+|\b(?=\p{Sc})|[^\s\p{L}\p{N}]|\s+",
        "It cost US$5, or 4€.",
        "can match empty text",
    ),
    (r"\B(?=€)|\S|\s", "4 €", "can match empty text"),
    # Found by the review: a soft hyphen is Graph there, not here.
    (r"\p{Graph}+|.", "a\u00adb", r"'\p{Graph}'"),
    # Found by the patterns audit: case-insensitive, the regex module also folds "İ" with
    # "i", and folds properties otherwise (U+0345 is a letter there only, "ĸ" here only).
    (r"(?i)[a-z]+|.|\n", "aİb", "the class '[a-z]' inside a case-insensitive group"),
    (r"(?i:[^a-z])+|.|\n", "1İ", "the class '[^a-z]' inside a case-insensitive group"),
    (r"(?i)i+|.|\n", "iİ", "'i' inside a case-insensitive group"),
    (r"(?i)\p{L}+|.|\n", "α\u0345", r"'\p{L}' inside a case-insensitive group"),
    (r"(?i)\p{Lu}+|.|\n", "Aĸ", r"'\p{Lu}' inside a case-insensitive group"),
    (
        r"(?i)'(?:s|t|re|ve|m|ll|d)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
        "it's α\u0345",
        r"'\p{L}' inside a case-insensitive group",
    ),
    # Found by the review: "ı" and "İ" fold with "I" and "i" here only, also as class members
    # or spelt as escapes.
    (r"(?i:ı)+|.|\n", "Iı", "'ı' inside a case-insensitive group"),
    (r"(?i:İ)+|.|\n", "iİ", "'İ' inside a case-insensitive group"),
    (r"(?i:[ı])+|.|\n", "Iı", "the class '[ı]' inside a case-insensitive group"),
    (r"(?i:[İ])+|.|\n", "iİ", "the class '[İ]' inside a case-insensitive group"),
    (r"(?i)\x69+|.|\n", "iİ", r"'\x69' inside a case-insensitive group"),
    (r"(?i:\u0131)+|.|\n", "Iı", r"'\u0131' inside a case-insensitive group"),
    (r"(?i:\U00000130)+|.|\n", "iİ", r"'\U00000130' inside a case-insensitive group"),
    # Found by the conversions audit: \N is any character but a line break there, so
    # "\N{NAME}" is that and the text "{NAME}"; tiktoken dropped "eee" from "eee ab".
    (r"\N{LATIN SMALL LETTER E}+|[^e]+", "eee ab", r"'\N'"),
    (r"[\N{LATIN SMALL LETTER E}]+|[^e]+", "eee ab", r"'\N'"),
    # Found by the conversions audit: "A" here, a back reference to group 101 there (refused
    # as "can match empty text" before).
    (r"\101+|[^A]+", "xAAy", r"'\101' is the character 'A' (an octal escape)"),
    (r"[\101]+|[^A]+", "xAAy", r"'\101' is the character 'A' (an octal escape)"),
]


def test_a_dollar_outside_multi_line_mode_is_refused_naming_the_way_out():
    problem = format_problem("tiktoken", r" ?\p{L}+(?m:$)| ?\p{L}+$|\s+|.", [])
    assert problem is not None and "'$'" in problem and r"\z is the end of the text" in problem
    assert tiktoken_pieces(r"\p{L}+$|.|\n", "ab\n") != our_pieces(r"\p{L}+$|.|\n", "ab\n")
    assert format_problem("tiktoken", r"(?m)\p{L}+$|.|\n", []) is None
    assert tiktoken_pieces(r"(?m)\p{L}+$|.|\n", "ab\ncd\n") == our_pieces(
        r"(?m)\p{L}+$|.|\n", "ab\ncd\n"
    )


@pytest.mark.parametrize(("pattern", "text", "named"), TIKTOKEN_TRAPS)
def test_a_pattern_tiktoken_reads_otherwise_is_refused(tmp_path, pattern, text, named):
    assert tiktoken_pieces(pattern, text) != our_pieces(pattern, text)  # it does matter
    with pytest.raises(ValueError, match="cannot write this tokenizer for tiktoken") as refused:
        Tokenizer(BYTES, [], [], pattern=pattern).save(tmp_path / "out", format="tiktoken")
    assert named in str(refused.value) and not (tmp_path / "out").exists()
    assert named in format_problem("tiktoken", pattern, [])


# Whether a pattern can match empty text somewhere, decided with no text: zero-width
# constructs count as matching empty wherever they stand (over-approximated, never under).
CAN_MATCH_EMPTY = {
    r"\b(?=\p{Sc})|\S|\s": True,
    r"a|\B": True,
    r"(?<=a)|a": True,
    r"a(?(1)b)|(c)": False,
    r"(?(1)b)|(c)": True,
    r"(a)\1|b": False,
    r"(a)?\1|b": True,
    r"a\K|b": True,
    r"a\Kb|c": False,
    r"(?:a\K)b?|c": True,
    r"(?x) a *  # a comment|b\n": True,
    "(?x: a  #) b\n)+|c": False,
    r"(?x:a) *": False,
    r"\x41*": True,
    r"\p{L}{0,3}": True,
    r"\p{L}{1,3}|\pN{,2}x": False,
    r"[)|]+|a": False,
    r"(?#a comment|)a": False,
    r"(?i:)|a": True,
    r"a(?i)|b": False,
    r"(?P<w>\p{L}*)x|y": False,
    r"(?P<w>\p{L}*)|y": True,
    r"(?P=w)|(?P<w>a)": True,
    r"a|(?R)": True,
    # Found by the conversions audit: three octal digits are a character, not a backreference.
    r"\141+|[^a]+": False,
    r"\1410|x": False,
}


@pytest.mark.parametrize("pattern", list(CAN_MATCH_EMPTY))
def test_matching_empty_text_is_decided_on_structure(pattern):
    assert can_match_empty(pattern) is CAN_MATCH_EMPTY[pattern]
    if not CAN_MATCH_EMPTY[pattern]:  # never said of one that does, on any text at hand
        texts = ["", "a", "ab", "abc", " a\n", "ca", "x"]
        assert all(m.group() for t in texts for m in regex.finditer(pattern, t))


ACCEPTED = [
    # Found by the review: multi-line "$" is read alike (a tokenizer.json's "$" loads so).
    r"(?m) ?\p{L}+$| ?\p{L}+| ?\p{N}+|\s+|[^\s\p{L}\p{N}]+",
    r" ?\p{L}+| ?\p{N}+|(?m:\s+$)|\s+|[^\s\p{L}\p{N}]+",
    r" ?\p{L}+| ?\p{N}+|\s+\z|\s+|[^\s\p{L}\p{N}]+",
    "gpt2",
    "cl100k",
    "o200k",
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    r"(?i:'s|'t|'re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+(?!\S)|\s+",
    # Case-insensitive, plain characters other than "i" fold alike (base.case_folds).
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+",
    r"\p{Han}+|\w+|\s+|[^\w\s]+",
    r"(?<=\d)\d|\d|\p{L}+|\s++|[^\s\p{L}\d]",
]


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_an_accepted_pattern_gives_tiktoken_the_same_ids(tmp_path, pattern):
    text = "".join(read_fixture(SLICES[kind])[:4_000] for kind in SLICES)
    (tmp_path / "corpus.txt").write_text(text, encoding="utf-8")
    vocab, merges = train_bpe(tmp_path / "corpus.txt", 600, [EOT], pattern=pattern)
    tok = Tokenizer(vocab, merges, [EOT], pattern=pattern)
    assert format_problem("tiktoken", pattern, [EOT]) is None
    rank_file, sidecar = tok.save(tmp_path / "tt", format="tiktoken")
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    ranks = {vocab[i]: i for i in vocab if vocab[i] != EOT.encode()}
    enc = tiktoken.Encoding("t", pat_str=meta["pat_str"], mergeable_ranks=ranks,
                            special_tokens=meta["special_tokens"])  # fmt: skip
    assert enc.encode(text, allowed_special="all") == tok.encode(text)


def test_special_tokens_tiktoken_takes_otherwise_are_refused_before_any_vocabulary():
    # tiktoken tries special tokens in its hash map's order, not the longest first.
    problem = format_problem("tiktoken", "gpt2", ["<|a|>", "<|a|><|b|>"])
    assert problem is not None and "'<|a|>' begins '<|a|><|b|>'" in problem


def test_a_special_token_a_merge_makes_is_named_for_tiktoken(tmp_path):
    vocab, merges = train_bpe(_corpus(tmp_path), 400, [EOT])
    made = next(a + b for a, b in merges if (a + b).isascii() and (a + b).isalpha())
    word = made.decode()
    tok = Tokenizer(vocab, merges, [EOT, word])
    with pytest.raises(ValueError, match=f"special token '{word}' .* is also what merge"):
        tok.save(tmp_path / "tt", format="tiktoken")


def test_a_special_token_a_merge_makes_is_named_for_tokenizer_json(tmp_path):
    """The conversions audit: the tokenizer.json writer said only "merge 913 (b't', b'he'):
    b'the' is not an ordinary token", where the tiktoken writer names the special token, the
    cause and the files that hold it; it now says likewise."""
    tok = Tokenizer.load(FIXTURES / "gpt2_vocab.json", special_tokens=["the"])
    with pytest.raises(ValueError) as refused:
        tok.save(tmp_path / "hf", format="hf")
    said = str(refused.value)
    assert "special token 'the' (id 1169) is also what merge 913 makes" in said
    assert said.endswith("(GPT-2 files hold it, named again on loading: 'gpt2')")
    assert not (tmp_path / "hf").exists()
    # Which they do: tokenizers' GPT-2 reader, naming it, gives the same ids.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossyFormatWarning)
        tok.save(tmp_path / "g", format="gpt2")
    reader = tokenizers.ByteLevelBPETokenizer(
        str(tmp_path / "g" / "vocab.json"), str(tmp_path / "g" / "merges.txt")
    )
    reader.add_special_tokens(["the"])
    text = "other the theory"
    assert reader.encode(text).ids == tok.encode(text)


def test_a_special_token_opened_as_text_is_named_for_tiktoken(tmp_path):
    """The conversions audit: a tokenizer opened with no_specials saved as tiktoken was
    refused with "id 256: token b'<|endoftext|>' cannot be built from lower-ranked tokens",
    saying neither the cause nor the format that holds it."""
    from bpe_studio.core import open_tokenizer

    vocab = dict(BYTES) | {256: b"ab", 257: EOT.encode()}
    Tokenizer(vocab, [(b"a", b"b")], [EOT]).save(tmp_path / "src", format="hf")
    tok = open_tokenizer(tmp_path / "src", no_specials=True)
    with pytest.raises(ValueError) as refused:
        tok.save(tmp_path / "tt", format="tiktoken")
    said = str(refused.value)
    assert "id 257: token b'<|endoftext|>' is made by no merge" in said
    assert "a special token read as ordinary text" in said
    assert said.endswith("(save as 'hf', which holds it)")
    (written,) = tok.save(tmp_path / "hf", format="hf")
    text = "ab" + EOT + "b"
    assert tokenizers.Tokenizer.from_file(str(written)).encode(text).ids == tok.encode(text)


def _corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(read_fixture(SLICES["english"])[:20_000], encoding="utf-8")
    return path


@pytest.mark.parametrize("special", ["é", "<|größe|>", "ÿ"])
def test_a_special_token_that_spells_other_bytes_is_not_written_to_tokenizer_json(
    tmp_path, special
):
    """Written, tokenizers decoded it as the bytes its letters spell, and reading the file
    back here was refused."""
    probe = tmp_path / "probe"
    probe.mkdir()
    with pytest.raises(ValueError, match="is also the byte-level spelling of") as refused:
        Tokenizer(BYTES, [], [special]).save(tmp_path / "out", format="hf")
    assert not (tmp_path / "out").exists()
    assert format_problem("hf", "gpt2", [special]) == str(refused.value).split(": ", 2)[-1]
    # What tokenizers does with such a file: its decode gives other text.
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab={}, merges=[]))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.add_special_tokens([special])
    ids = hf.encode(special).ids
    assert hf.decode(ids, skip_special_tokens=False) != special


def test_special_tokens_outside_the_byte_alphabet_still_round_trip(tmp_path):
    tok = Tokenizer(BYTES, [], ["‹|größe|>", "中文", EOT])
    (path,) = tok.save(tmp_path / "out", format="hf")
    text = "a‹|größe|>中文b" + EOT
    assert Tokenizer.load(path).encode(text) == tok.encode(text)
    assert tokenizers.Tokenizer.from_file(str(path)).encode(text).ids == tok.encode(text)


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        (r"\p{Script=Latin}+|\P{Script=Latin}+", r"'\p{Script=Latin}'"),
        (r"[\p{L}--\p{Ll}]+|.|\n", "'--'"),
        (r"[\p{L}&&\p{Ll}]+|.|\n", "'&&'"),
        (r"(?i)ß+|.|\n", "case-insensitive"),
        (r"\p{XDigit}+|.|\n", r"'\p{XDigit}'"),
        (r"[\p{Word}]+|.|\n", r"'\p{Word}'"),
    ],
)
def test_a_pattern_oniguruma_reads_otherwise_or_we_cannot_read_back_is_refused(
    tmp_path, pattern, named
):
    with pytest.raises(ValueError, match="cannot write this tokenizer") as refused:
        Tokenizer(BYTES, [], [], pattern=pattern).save(tmp_path / "out", format="hf")
    assert named in str(refused.value)
    assert named in format_problem("hf", pattern, [])


def test_a_template_dropped_by_tiktoken_files_is_said(tmp_path):
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab={}, merges=[]))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|begin_of_text|>"],
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    hf.train_from_iterator([read_fixture(SLICES["english"])[:20_000]], trainer)
    hf.post_processor = tokenizers.processors.TemplateProcessing(
        single="<|begin_of_text|> $A",
        special_tokens=[("<|begin_of_text|>", hf.token_to_id("<|begin_of_text|>"))],
    )
    hf.save(str(tmp_path / "tokenizer.json"))
    tok = Tokenizer.load(tmp_path / "tokenizer.json")
    assert tok.encode("hi", add_special_tokens=True)[0] == hf.token_to_id("<|begin_of_text|>")
    with pytest.warns(LossyFormatWarning, match="hold no post-processor template"):
        tok.save(tmp_path / "tt", format="tiktoken")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok.save(tmp_path / "hf", format="hf")  # holds it: nothing said


@pytest.mark.parametrize("format", ["gpt2", "hf", "tiktoken"])
def test_the_losses_said_before_saving_are_those_the_save_warns_of(tmp_path, format):
    """An audit: the app asked about some losses of a save and wrote the others (a
    template dropped by tiktoken files) without a word; it now asks about what
    ``save_losses`` names, which must be what the save warns of, or nothing when refused."""
    from foreign_files import llama3_style

    from bpe_studio.core.encode.whole_lookup import data_to_save
    from bpe_studio.core.formats.files import save_losses

    made = [
        Tokenizer.load(llama3_style(tmp_path / "llama", full=True)),  # template, ignore_merges
        Tokenizer(BYTES, [], [], pattern=r"\P{Han}+"),  # leaves Han text unmatched
        Tokenizer(dict(BYTES) | {256: b"my special"}, [], ["my special"]),
    ]
    for i, tok in enumerate(made):
        out = tmp_path / f"out{i}"
        prefix = f"{out / 'tokenizer.json' if format == 'hf' else out}: "
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                tok.save(out, format=format)
            except ValueError:
                assert save_losses(data_to_save(tok, format), format) == [], i
                continue
        said = [str(w.message).removeprefix(prefix) for w in caught]
        assert all(w.category is LossyFormatWarning for w in caught), i
        assert save_losses(data_to_save(tok, format), format) == said, i
    # Each case loses something somewhere.
    assert save_losses(made[0].to_data(), "tiktoken") and save_losses(made[1].to_data(), "hf")


def test_two_ids_of_the_same_bytes_name_them_and_leave_no_folder(tmp_path):
    """And the API audit: where neither id was a special or added token, the refusal said
    "a special or added token sharing an ordinary token's bytes: save as 'hf', which holds
    it", and 'hf' refused the same tokenizer (a vocabulary maps each token to one id)."""
    vocab = dict(BYTES) | {256: b"  ", 257: b"  "}
    tok = Tokenizer(vocab, [(b" ", b" ")], [])
    out = tmp_path / "new" / "gpt2"
    with pytest.raises(ValueError, match=r"ids 256 and 257 hold the same bytes b'  '") as refused:
        tok.save(out, format="gpt2")
    assert not out.exists()
    assert str(refused.value).endswith(
        "(two ordinary entries of one token: no format can save this one)"
    )
    for format in ("hf", "tiktoken"):
        with pytest.raises(ValueError, match="ids 256 and 257 hold the same token"):
            tok.save(tmp_path / format, format=format)


def test_a_token_two_merges_make_is_not_sent_to_a_format_that_refuses_it_too(tmp_path):
    """Found by the API audit: a merge listed twice (a student's trainer) was told "save as
    'hf', which holds it", and 'hf' refused the same tokenizer."""
    vocab = dict(BYTES) | {256: b"ab", 257: b"ab"}
    # That one is now refused when it is built (test_tokenizer_merges); two different pairs
    # making one token are still built, and their files refused so.
    with pytest.raises(ValueError, match=r"merge 1 \(b'a' \+ b'b'\) repeats merge 0"):
        Tokenizer(vocab, [(b"a", b"b"), (b"a", b"b")], [])
    vocab = dict(BYTES) | {256: b"ab", 257: b"bc", 258: b"abc", 259: b"abc"}
    tok = Tokenizer(vocab, [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")], [])
    with pytest.raises(ValueError, match="ranked 2 and 3 both make it") as refused:
        tok.save(tmp_path / "gpt2", format="gpt2")
    assert "'hf'" not in str(refused.value)
    with pytest.raises(ValueError, match="ids 258 and 259 hold the same token"):
        tok.save(tmp_path / "hf", format="hf")


@pytest.mark.parametrize(
    ("pattern", "named"),
    [
        (r"\p{IsHan}+| ?\p{L}+| ?\p{N}+|\s+|\S", r"\p{IsHan}"),
        (r" ?\p{L&}+| ?\p{N}+|\s+|\S", r"\p{L&}"),
        (r"[\d-z]+| ?\p{L}+|\s+|\S", r"[\d-z]"),
        (r" ?[a-\p{N}]+| ?\p{L}+|\s+|\S", r"[a-\p{N}]"),
        # Refused by tokenizers itself, the last check where it is installed.
        (r"\p{Horiz_Space}+| ?\p{L}+| ?\p{N}+|\s+|\S", "tokenizers cannot compile it"),
    ],
)
def test_a_pattern_tokenizers_cannot_load_is_not_written(tmp_path, pattern, named):
    """Found by the patterns audit: such files were written, and read back here, but
    tokenizers.Tokenizer.from_file failed on them ("invalid character property name
    {IsHan}", "unmatched range specifier in char-class")."""
    with pytest.raises(Exception, match="Oniguruma error"):
        tokenizers.Regex(pattern)  # it does matter
    regex.compile(pattern)  # while Python's regex reads it
    with pytest.raises(ValueError, match="cannot write this tokenizer") as refused:
        Tokenizer(BYTES, [], [], pattern=pattern).save(tmp_path / "out", format="hf")
    assert named in str(refused.value) and not (tmp_path / "out").exists()
    assert named in format_problem("hf", pattern, [])


GPT2_ONLY = " (GPT-2 files hold it, loaded with this pattern)"


def _also(fmt: str) -> str:
    return f" (save as {fmt!r}, which holds it; GPT-2 files do too, loaded with this pattern)"


# A refused pattern, what its refusal ends with, and the pattern it says to write instead
# (None: nothing means the same to both engines).
REFUSALS_SAY = [
    ("hf", r"\b\p{L}+\b|\s+|\S", "in Python's regex" + _also("tiktoken"), None),
    (
        "hf",
        r"(?P<w> ?\p{L}+)|(?P<s>\s+)|\S",
        "write (?<name>...) for a named group" + _also("tiktoken"),
        r"(?<w> ?\p{L}+)|(?<s>\s+)|\S",
    ),
    (
        "hf",
        r"\p{IsHan}| ?\p{L}+|\s+|\S",
        r"write \p{Han}, as the regex module reads it" + _also("tiktoken"),
        r"\p{Han}| ?\p{L}+|\s+|\S",
    ),
    (
        "hf",
        r"[\d-z]+| ?\p{L}+|\s+|\S",
        "put the '-' last in the class to mean the character" + GPT2_ONLY,
        r"[\dz-]+| ?\p{L}+|\s+|\S",
    ),
    (
        "hf",
        r"^\s+| ?\p{L}+|\s+|\S",
        r"\A is the start of the text in both" + _also("tiktoken"),
        r"\A\s+| ?\p{L}+|\s+|\S",
    ),  # fmt: skip
    (
        "hf",
        r" ?\p{L}+|\s+\Z|\s+|\S",
        r"\z is the end of the text in both" + GPT2_ONLY,
        r" ?\p{L}+|\s+\z|\s+|\S",
    ),  # fmt: skip
    (
        "tiktoken",
        r" ?\p{L}+|\s+$|\s+|\S",
        r"\z is the end of the text in both" + GPT2_ONLY,
        r" ?\p{L}+|\s+\z|\s+|\S",
    ),  # fmt: skip
    # A tokenizer.json holds it, which tiktoken's check cannot say (the tokenizer.json
    # check names tiktoken's files: asking back would be an import cycle).
    ("tiktoken", r"\p{InBasicLatin}+|\P{InBasicLatin}+", GPT2_ONLY, None),
    (
        "tiktoken",
        r"(?i)[a-z]+|\s+|\S",
        "spelling out both cases where needed ([a-zA-Z])" + GPT2_ONLY,
        r"[a-zA-Z]+|\s+|\S",
    ),  # fmt: skip
    ("tiktoken", r"\s*|\S", "drops the character after it" + GPT2_ONLY, None),
    (
        "tiktoken",
        r"\101+|[^A]+",
        r"group 101 in tiktoken's regex engine (Rust's fancy-regex), which fails on it; write "
        r"\x41, read alike in both" + GPT2_ONLY,
        r"\x41+|[^A]+",
    ),  # fmt: skip
    (
        "tiktoken",
        r"\N{LATIN SMALL LETTER E}+|[^e]+",
        r"its code (\x{65} for 'e'), read alike in both" + GPT2_ONLY,
        r"\x{65}+|[^e]+",
    ),  # fmt: skip
]


@pytest.mark.parametrize(("fmt", "pattern", "ending", "instead"), REFUSALS_SAY)
def test_a_refusal_says_what_to_write_instead_and_which_files_hold_it(
    fmt, pattern, ending, instead
):
    """The patterns audit: the refusals said "has no exact equivalent here" where one
    exists ((?<name>...) for (?P<name>...)), and named no format that holds the pattern
    (tiktoken's files hold '\\b', which a tokenizer.json cannot)."""
    problem = format_problem(fmt, pattern, [])
    assert problem is not None and problem.endswith(ending)
    if instead is not None:
        assert format_problem(fmt, instead, []) is None


@pytest.mark.parametrize(
    ("refused_by", "pattern"),
    [("hf", r"\b\p{L}+\b|\s+|\S"), ("hf", r"(?s) ?\p{L}+| ?\p{N}+|\s+|.")],
)
def test_the_files_a_refusal_names_hold_the_pattern(tmp_path, refused_by, pattern):
    """The files a tokenizer.json refusal names give the same ids: tiktoken's, by tiktoken
    itself, and GPT-2 files loaded with the pattern. (A tiktoken refusal never names a
    tokenizer.json, ``pattern_check.pattern_problem``: no case for it here.)"""
    assert _also("tiktoken") in format_problem(refused_by, pattern, [])
    text = "".join(read_fixture(SLICES[kind])[:3_000] for kind in SLICES)
    (tmp_path / "corpus.txt").write_text(text, encoding="utf-8")
    vocab, merges = train_bpe(tmp_path / "corpus.txt", 400, [EOT], pattern=pattern)
    tok = Tokenizer(vocab, merges, [EOT], pattern=pattern)
    _, sidecar = tok.save(tmp_path / "tiktoken", format="tiktoken")
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    ranks = {vocab[i]: i for i in vocab if vocab[i] != EOT.encode()}
    enc = tiktoken.Encoding("t", pat_str=meta["pat_str"], mergeable_ranks=ranks,
                            special_tokens=meta["special_tokens"])  # fmt: skip
    assert enc.encode(text, allowed_special="all") == tok.encode(text)
    with pytest.warns(LossyFormatWarning, match="hold no pattern"):
        tok.save(tmp_path / "gpt2", format="gpt2")
    again = Tokenizer.load(tmp_path / "gpt2", pattern=pattern, special_tokens=[EOT])
    assert again.encode(text) == tok.encode(text)


def test_an_end_of_text_z_is_written_to_tokenizer_json(tmp_path):
    """The patterns audit: '\\z' was refused for tokenizer.json as meaning "different things
    in Oniguruma and in Python's regex", while the writer writes it for cl100k: it is the end
    of the text in both."""
    pattern = r" ?\p{L}+| ?\p{N}+|\s+\z|\s+(?!\S)|\s+|[^\s\p{L}\p{N}]+"
    text = "".join(read_fixture(SLICES[kind])[:3_000] for kind in SLICES) + "end  \n\n"
    (tmp_path / "corpus.txt").write_text(text, encoding="utf-8")
    vocab, merges = train_bpe(tmp_path / "corpus.txt", 400, [EOT], pattern=pattern)
    tok = Tokenizer(vocab, merges, [EOT], pattern=pattern)
    (path,) = tok.save(tmp_path / "hf", format="hf")
    hf = tokenizers.Tokenizer.from_file(str(path))
    again = Tokenizer.load(path)
    for sample in (text, "a b  \n", "x\n\n  ", "  "):
        assert hf.encode(sample).ids == tok.encode(sample) == again.encode(sample)
    assert again.pattern == pattern  # and so it converts to tiktoken's files as it was
    assert format_problem("tiktoken", again.pattern, [EOT]) is None


def oniguruma_pieces(pattern: str, text: str) -> list[str]:
    """How ``tokenizers`` (Oniguruma) cuts ``text`` with an Isolated Split of ``pattern``."""
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
    return [piece for piece, _ in split.pre_tokenize_str(text)]


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"(?i)i+|.|\n", "iİI"),
        (r"(?i:I)+|.|\n", "Iı"),
        # Found by the review: the dotless and dotted letters, as members of a class, and
        # letters spelt as escapes.
        (r"(?i:ı)+|.|\n", "Iı"),
        (r"(?i:[ı])+|.|\n", "Iı"),
        (r"(?i:[İ])+|.|\n", "iİ"),
        (r"(?i)\x69+|.|\n", "iİ"),
        (r"(?i:\u0131)+|.|\n", "Iı"),
    ],
)
def test_a_case_insensitive_i_is_refused_for_tokenizer_json(tmp_path, pattern, text):
    """Found fixing the tiktoken check: reading a file, a case-insensitive "i" is given
    Oniguruma's meaning ("i" and "I"); writing one, the same pattern means more here (also
    "İ", or "ı" for "I"), and tokenizers gave other ids with no error."""
    assert oniguruma_pieces(pattern, text) != our_pieces(pattern, text)  # it does matter
    with pytest.raises(ValueError, match="cannot write this tokenizer") as refused:
        Tokenizer(BYTES, [], [], pattern=pattern).save(tmp_path / "out", format="hf")
    assert "inside a case-insensitive group" in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_an_isolated_spelling_around_a_backreference_is_not_written_as_that_split(tmp_path):
    """Found by the review: a file's one Isolated Split was read as ``isolated``'s spelling
    of its regex, whose second copy's backreference refers to the first copy's group; such a
    spelling is no Split as read, and tokenizers would cut that Split otherwise."""
    pattern, text = isolated(r"(\p{L})\1"), "xaab ccd"
    assert oniguruma_pieces(r"(\p{L})\1", text) != our_pieces(pattern, text)
    with pytest.raises(ValueError, match="cannot write this tokenizer"):
        Tokenizer(BYTES, [], [], pattern=pattern).save(tmp_path / "out", format="hf")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("prop", "char"), [("XDigit", "\u0660"), ("Word", "\u00b2")])
def test_the_properties_refused_for_tokenizer_json_are_read_otherwise_by_oniguruma(prop, char):
    """Found by the review: \\p{XDigit} takes every script's digits in Oniguruma (Arabic-Indic
    ٠), \\p{Word} the same ² ³ ¹ ¼ ½ ¾ as its \\w."""
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(rf"\p{{{prop}}}"), "isolated")
    matched_there = [piece for piece, _ in split.pre_tokenize_str(f"\x00{char}\x00")] == [
        "\x00",
        char,
        "\x00",
    ]
    matched_here = regex.fullmatch(rf"\p{{{prop}}}", char) is not None
    assert matched_there != matched_here


def test_a_refusal_or_warning_sends_only_to_formats_that_take_the_tokenizer(tmp_path):
    """A docs audit: with "é" both a special token and a merged one (the README's case),
    'hf' refused it saying tiktoken files hold it, tiktoken refused it too (its sentence
    cut short), and the GPT-2 warning said to save as 'hf' or 'tiktoken'. Each now names
    only what holds it: GPT-2 files, named again on loading."""

    path = tmp_path / "fr.txt"
    path.write_text("café été élève déjà " * 300, encoding="utf-8")
    vocab, merges = train_bpe(path, 300, [EOT])
    assert (b"\xc3", b"\xa9") in merges  # é is made by a merge
    tok = Tokenizer(vocab, merges, [EOT, "é"])
    with pytest.raises(ValueError) as hf:
        tok.save(tmp_path / "hf", format="hf")
    assert "tiktoken files hold it where no merge makes it too" in str(hf.value)
    with pytest.raises(ValueError) as tt:
        tok.save(tmp_path / "tt", format="tiktoken")
    assert str(tt.value).endswith(
        "could not be ranked (GPT-2 files hold it, named again on loading: 'gpt2')"
    )
    said = _gpt2_warning(tok, tmp_path / "gpt2")
    assert "neither 'hf' nor 'tiktoken'" in said and "save as" not in said
    again = Tokenizer.from_files(
        tmp_path / "gpt2" / "vocab.json", tmp_path / "gpt2" / "merges.txt", [EOT, "é"]
    )
    text = "café é" + EOT + "été"
    assert again.encode(text) == tok.encode(text)
    # Without the clash both are offered, as before.
    plain = Tokenizer(vocab, merges, [EOT, "@@END@@"])
    said = _gpt2_warning(plain, tmp_path / "plain")
    assert said.endswith("save as 'hf' or 'tiktoken', which hold both")


def test_advice_leaves_out_tiktoken_where_the_ids_do_not_follow_the_merges(tmp_path):
    """The review of the change above: ids that do not grow in merge order (as a
    tokenizer.json may number them) were still sent to tiktoken, which refused them."""

    vocab = dict(BYTES) | {257: b"ab", 256: b"cd"}
    tok = Tokenizer(vocab, [(b"a", b"b"), (b"c", b"d")], [], pattern="cl100k")
    with pytest.raises(ValueError, match="its ids must grow with merge order"):
        tok.save(tmp_path / "tt", format="tiktoken")
    said = _gpt2_warning(tok, tmp_path / "gpt2")
    assert said.endswith("save as 'hf', which holds them")
    tok.save(tmp_path / "hf", format="hf")  # which does
    # Nor a token no merge makes (the second review), which tiktoken cannot build.
    vocab = dict(BYTES) | {256: b"ab", 257: b"xyz"}
    tok = Tokenizer(vocab, [(b"a", b"b")], [], pattern="cl100k")
    with pytest.raises(ValueError, match="token b'xyz' is made by no merge"):
        tok.save(tmp_path / "tt2", format="tiktoken")
    said = _gpt2_warning(tok, tmp_path / "gpt2b")
    assert said.endswith("save as 'hf', which holds them")


def _gpt2_warning(tok: Tokenizer, directory) -> str:
    """The one LossyFormatWarning saving ``tok`` as GPT-2 files into ``directory`` gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok.save(directory, format="gpt2")
    (said,) = [str(w.message) for w in caught if issubclass(w.category, LossyFormatWarning)]
    return said


def test_advice_offers_no_format_for_a_special_token_a_merge_joins(tmp_path):
    """A special token named by a byte's id on loading ({"a": 97}) is a part of merges:
    tokenizer.json refuses it as tiktoken does, so GPT-2 files' warning must not send the
    user to 'hf' (it did, and that save failed)."""

    source = Tokenizer(dict(BYTES) | {256: b"ab"}, [(b"a", b"b")], [])
    source.save(tmp_path / "src", format="gpt2")
    tok = Tokenizer.load(tmp_path / "src", special_tokens={"a": 97})
    with pytest.raises(ValueError, match=r"special token 'a' \(id 97\) is also a part of merge 0"):
        tok.save(tmp_path / "hf", format="hf")
    with pytest.raises(ValueError, match="tiktoken needs all 256 bytes"):
        tok.save(tmp_path / "tt", format="tiktoken")
    said = _gpt2_warning(tok, tmp_path / "gpt2")
    assert "neither 'hf' nor 'tiktoken'" in said and "save as" not in said


def test_advice_offers_no_format_for_a_special_token_an_ordinary_entry_holds(tmp_path):
    """An audit: GPT-2's files given "<|endoftext|>" at 50257 (vocab.json has it at 50256,
    an entry no merge makes) load, as tiktoken would take them; but no format can hold the
    two ids, and the GPT-2 and tiktoken refusals sent the user to 'hf', which refused too."""
    tok = Tokenizer.from_files(
        FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", {EOT: 50257}
    )
    assert tok.vocab[50256] == tok.vocab[50257] == EOT.encode()
    refusals = {}
    for fmt in ("gpt2", "hf", "tiktoken"):
        with pytest.raises(ValueError) as refused:
            tok.save(tmp_path / fmt, format=fmt)
        refusals[fmt] = str(refused.value)
    assert "ids 50256 and 50257 hold the same token" in refusals["hf"]
    for fmt in ("gpt2", "tiktoken"):
        assert "no format holds this tokenizer (neither 'hf' nor 'tiktoken')" in refusals[fmt]
        assert "save as" not in refusals[fmt]
