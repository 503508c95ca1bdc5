"""Training input that cannot be used fails early with an error naming the file and reason:
missing files, non-UTF-8 bytes (at their real byte offset, also through the parallel path),
a vocabulary too small for bytes + special tokens, empty special tokens."""

from __future__ import annotations

import re

import pytest
from core_helpers import EOT, FIXTURES, SLICES, read_fixture, write_text

from bpe_studio.core import CorpusError, Tokenizer, count_file, encode_file, train_bpe
from bpe_studio.core.corpus.counting import IN_PROCESS_LIMIT


def names_offset(message, offset):
    return re.search(rf"(?<![\d,]){offset}(?![\d,])|{offset:,}", message) is not None


def test_missing_corpus(tmp_path):
    missing = tmp_path / "no_such_corpus.txt"
    with pytest.raises(FileNotFoundError, match="no_such_corpus.txt"):
        train_bpe(missing, 300)
    with pytest.raises(FileNotFoundError):
        count_file(missing)


def test_directory_as_corpus(tmp_path):
    with pytest.raises(ValueError, match=re.escape(str(tmp_path))):
        train_bpe(tmp_path, 300)


@pytest.mark.parametrize(
    ("prefix", "bad"),
    [
        ("hello world\n", b"\xff"),
        ("naïve 中文 text\n" * 3, b"\xe4\xb8"),  # a character cut short
        ("", b"\x80"),  # a lone continuation byte at the very start
        ("abc", b"\xc3("),  # lead byte followed by ASCII
        ("x" * 5000 + "\n", b"\xed\xa0\x80"),  # an encoded surrogate is not UTF-8
    ],
)
def test_non_utf8_corpus_names_file_and_offset(tmp_path, prefix, bad):
    path = tmp_path / "latin.txt"
    offset = len(prefix.encode())
    path.write_bytes(prefix.encode() + bad + b" more text\n")
    with pytest.raises(CorpusError) as info:
        train_bpe(path, 300, [EOT])
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert str(path) in message
    assert names_offset(message, offset), message


@pytest.fixture(scope="module")
def big_text():
    text = "".join(read_fixture(name) for name in SLICES.values())
    text = text * (5_000_000 // len(text.encode()) + 1)
    assert len(text.encode()) > IN_PROCESS_LIMIT + 500_000
    return text


@pytest.mark.parametrize("specials", [[EOT], []])
@pytest.mark.parametrize("where", [0.1, 0.77])
def test_non_utf8_offset_in_a_large_file_read_by_workers(tmp_path, big_text, specials, where):
    data = big_text.encode()
    # Insert the bad byte just after a line break (a character boundary) and a bit further on
    # a second one: the first must be reported.
    cut = data.index(b"\n", int(len(data) * where)) + 1
    later = data.index(b"\n", cut + 100_000) + 1
    data = data[:cut] + b"\xff" + data[cut:later] + b"\xfe" + data[later:]
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    with pytest.raises(CorpusError) as info:
        train_bpe(path, 300, specials, workers=2)
    assert str(path) in str(info.value)
    assert names_offset(str(info.value), cut), str(info.value)
    with pytest.raises(CorpusError) as info:
        count_file(path, specials, workers=2)
    assert names_offset(str(info.value), cut), str(info.value)


def test_vocab_size_too_small(tmp_path):
    path = write_text(tmp_path / "c.txt", "some text")
    with pytest.raises(ValueError) as info:
        train_bpe(path, 200)
    assert "200" in str(info.value) and "256" in str(info.value)
    with pytest.raises(ValueError) as info:
        train_bpe(path, 257, [EOT, "<pad>"])
    assert "257" in str(info.value) and "258" in str(info.value)
    # Exactly enough is fine.
    vocab, merges = train_bpe(path, 258, [EOT, "<pad>"])
    assert len(vocab) == 258 and merges == []


def test_vocab_size_check_comes_before_reading(tmp_path):
    # A too-small vocabulary is reported even for a huge or unreadable corpus: no work first.
    path = tmp_path / "bad.txt"
    path.write_bytes(b"\xff" * 10)
    with pytest.raises(ValueError, match="256"):
        train_bpe(path, 10)


def test_empty_special_token(tmp_path):
    path = write_text(tmp_path / "c.txt", "some text")
    with pytest.raises(ValueError, match="empty"):
        train_bpe(path, 300, [EOT, ""])


def _tar_of(tmp_path, name: str, mode: str, big: bool = False):
    import tarfile

    folder = tmp_path / "stories"
    folder.mkdir(exist_ok=True)
    story = read_fixture(SLICES["english"])[:100_000] if big else "Once upon a time " * 40
    for i in range(3):
        (folder / f"{i:05}.txt").write_text(story, encoding="utf-8")
    out = tmp_path / name
    with tarfile.open(out, mode) as tar:
        tar.add(folder, arcname="stories")
    return out


def test_compressed_text_named_as_a_tar_is_told_its_compression(tmp_path):
    """Only what cannot be looked into (bzip2's first block) is taken by its name for a tar:
    gzip-compressed text named .tgz is said to be compressed text (to be named .gz)."""
    import gzip

    path = tmp_path / "stories.tgz"
    path.write_bytes(gzip.compress(read_fixture(SLICES["english"]).encode("utf-8")))
    with pytest.raises(CorpusError, match=r"stories\.tgz: gzip-compressed data, not text"):
        train_bpe(path, 300, [EOT])


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("stories.tar", "w"),
        ("stories.tar.gz", "w:gz"),
        # Named as no compression: read as it is stored, it was called gzip-compressed data
        # to be renamed .gz (the README audit), which then said it was a tar.
        ("stories.tgz", "w:gz"),
        ("stories.tbz2", "w:bz2"),
        ("stories.txz", "w:xz"),
    ],
)
@pytest.mark.parametrize("big", [False, True])
def test_a_tar_archive_is_refused_not_trained_on_headers_and_all(tmp_path, name, mode, big):
    """Found by the first-hour audit: a tar's headers are ASCII and NUL bytes, valid UTF-8,
    so stories.tar.gz was trained on, file names, octal fields and 4,096-byte NUL runs in
    the vocabulary, with exit 0. ``big``: stories whose compressed first block is longer
    than the head read (bzip2's)."""
    archive = _tar_of(tmp_path, name, mode, big)
    with pytest.raises(
        CorpusError, match=rf"{re.escape(name)}: a tar archive, not text: extract it"
    ):
        train_bpe(archive, 300, [EOT])


@pytest.mark.parametrize(
    ("head", "said"),
    [
        (b"PK\x03\x04\x14\x00\x06\x00", "a ZIP archive"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "a PDF document"),
        ("\ufeffhello".encode("utf-16-le"), "UTF-16 text (little-endian), not UTF-8: convert it"),
        ("\ufeffhello".encode("utf-16-be"), "UTF-16 text (big-endian), not UTF-8: convert it"),
    ],
)
def test_documents_and_utf16_are_named_as_what_they_are(tmp_path, head, said):
    path = tmp_path / "corpus.txt"
    path.write_bytes(head + b"x" * 600)
    with pytest.raises(CorpusError, match=re.escape(f"corpus.txt: {said}")):
        train_bpe(path, 300, [])


def test_an_ascii_pdf_is_still_a_pdf(tmp_path):
    """A PDF whose head holds no byte beyond ASCII is known by its objects."""
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n" * 20)
    with pytest.raises(CorpusError, match=re.escape("corpus.txt: a PDF document, not text")):
        train_bpe(path, 300, [])


@pytest.mark.parametrize(
    "text",
    [
        # Found by the training-edges audit: both were refused, with no way to train on them.
        b"%PDF-1.7 is the current version of the Portable Document Format.\n" * 20,
        # 3-digit records each ended by a NUL: a NUL in half the odd bytes, which was called
        # UTF-16, with advice (iconv) that garbles the text into U+3030s.
        b"".join(b"%03d\x00" % (i % 1000) for i in range(3000)),
    ],
    ids=["pdf-note", "nul-records"],
)
def test_valid_utf8_text_that_looks_like_a_format_is_trained_on(tmp_path, text):
    from bpe_studio.core.reference import reference_train

    path = tmp_path / "corpus.txt"
    path.write_bytes(text)
    assert train_bpe(path, 300, []) == reference_train(text.decode("utf-8"), 300, [])


def test_text_that_holds_ustar_where_a_tar_would_is_still_text(tmp_path):
    path = tmp_path / "corpus.txt"
    text = "a" * 257 + "ustar" + " and then some words" * 40
    path.write_text(text, encoding="utf-8")
    vocab, merges = train_bpe(path, 300, [])
    assert merges  # trained: no tar header's checksum holds in it


CYRILLIC = "Привет, мир! Как дела? Всё хорошо, спасибо.\n"
# Scripts whose UTF-16 is all bytes below 0x80, valid UTF-8, with few spaces to give NULs.
THAI = "ภาษาไทยเป็นภาษาราชการของประเทศไทย\n"
MYANMAR = "မြန်မာဘာသာစကားသည်ရုံးသုံးဘာသာစကားဖြစ်သည်။\n"
# Devanagari's high byte is a tab's; compound-heavy Sanskrit has few spaces to give NULs.
SANSKRIT = "अथयोगानुशासनम्।योगश्चित्तवृत्तिनिरोधः।तदाद्रष्टुःस्वरूपेऽवस्थानम्।\n"


@pytest.mark.parametrize(
    "text",
    [
        None,
        "code_slice.txt",
        CYRILLIC * 40,
        THAI * 30,
        MYANMAR * 30,
        SANSKRIT * 20,
        "hello!\n",
        "Привет\n",
    ],
    ids=[
        "english",
        "code",
        "cyrillic",
        "thai",
        "myanmar",
        "sanskrit",
        "seven",
        "short cyrillic",
    ],  # fmt: skip
)
@pytest.mark.parametrize(
    ("encoding", "said"),
    [
        ("utf-16-le", "UTF-16 text (little-endian"),
        ("utf-16-be", "UTF-16 text (big-endian"),
        ("utf-32-le", "UTF-32 text (little-endian"),
        ("utf-32-be", "UTF-32 text (big-endian"),
    ],
)
def test_utf16_and_utf32_without_a_byte_order_mark_are_named_not_trained_on(
    tmp_path, text, encoding, said
):
    """Found by the docs audit and the review after it: UTF-16 of mostly-ASCII text (iconv
    -t UTF-16LE writes no mark) is valid UTF-8, NULs and all, and was trained on: its first
    merges were of NUL bytes. So were Thai's and Myanmar's, all bytes below 0x80 with few
    NULs, and UTF-32."""
    if text is None or text.endswith(".txt"):
        text = (FIXTURES / (text or "english_books_slice.txt")).read_text(encoding="utf-8")[:5000]
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode(encoding))
    message = re.escape(f"corpus.txt: {said}, no byte-order mark), not UTF-8")
    with pytest.raises(CorpusError, match=message):
        train_bpe(path, 300, [EOT])
    with pytest.raises(CorpusError, match=message):
        encode_file(Tokenizer.preset("gpt2"), path, tmp_path / "ids.npy")
    assert not (tmp_path / "ids.npy").exists()


def test_a_zeroed_or_sparse_file_is_refused_not_held_whole(tmp_path):
    """A hostile-machine audit: a run of NULs is one pre-token, held whole, so a sparse
    file ran out of memory (10 GB: 20 GB resident, then the OOM killer)."""
    path = tmp_path / "sparse.bin"
    with open(path, "wb") as f:
        f.truncate(1 << 30)  # sparse: nothing written, nothing read but its head
    with pytest.raises(CorpusError, match="sparse.bin: mostly NUL bytes"):
        train_bpe(path, 300, [EOT])


def test_nul_bytes_are_judged_on_64_kb_at_each_end(tmp_path):
    """A training audit: the NUL rule read the first 512 bytes only. 300 NULs before real
    text were "mostly NUL" (0.01% of the file), while a 1 KB text header before 1 MB of NULs
    trained, the NUL run held as one pre-token (10 MB of them: 1 GB resident)."""
    from bpe_studio.core.encode.encode_file import encode_file as encode_a_file

    text = read_fixture(SLICES["english"])[:200_000].encode("utf-8")
    padded = tmp_path / "padded.txt"
    padded.write_bytes(bytes(300) + text)
    vocab, merges = train_bpe(padded, 300, [EOT])
    assert len(vocab) == 300 and len(merges) == 300 - 257
    encode_a_file(Tokenizer.preset("gpt2"), padded, tmp_path / "padded.npy")
    header = tmp_path / "header.txt"
    header.write_bytes(text[:40_000] + bytes(1 << 20))  # its first 64 KB mostly text
    message = r"header.txt: ends in NUL bytes \(most of its last 65,536\)"
    with pytest.raises(CorpusError, match=message):
        train_bpe(header, 300, [EOT])
    with pytest.raises(CorpusError, match=message):
        encode_a_file(Tokenizer.preset("gpt2"), header, tmp_path / "header.npy")
    assert not (tmp_path / "header.npy").exists()
    # More than half of the first 64 KB is still refused at the start.
    start = tmp_path / "start.txt"
    start.write_bytes(bytes(40_000) + text)
    with pytest.raises(CorpusError, match="start.txt: mostly NUL bytes"):
        train_bpe(start, 300, [EOT])


@pytest.mark.parametrize(
    "fixture",
    ["english_books_slice.txt", "chinese_slice.txt", "code_slice.txt", "mixed_web_slice.txt"],
)
def test_utf8_text_is_never_taken_for_utf16(fixture):
    from bpe_studio.core.corpus.sources import TAR_BLOCK, not_text

    data = (FIXTURES / fixture).read_bytes()
    for start in range(0, len(data) - TAR_BLOCK, 997):
        assert not_text(data[start : start + TAR_BLOCK]) is None
    # Short files too: a head of any length, NUL-free, is no UTF-16 (every 17-byte text was),
    # and short windows anywhere.
    for length in range(TAR_BLOCK):
        assert not_text(data[:length]) is None
    for start in range(0, len(data) - 40, 101):
        for length in (4, 16, 40):
            assert not_text(data[start : start + length]) is None


@pytest.mark.parametrize(
    "text",
    [
        "1\t2\t3\t4\n5\t6\t7\t8\n" * 40,  # tab is Devanagari's high byte in UTF-16
        "a\rb\rc\rd\r" * 80,  # and CR, Malayalam's
        "Installing packages... " + "\b|\b/\b-\b\\" * 60 + " done\n",  # a spinner's log
        "1\x1f0\x1f1\x1f1\x1f0\x1f0\x1f1\x1f0\n" * 200,  # fields apart by US: Greek Extended's
        "\x0cA\x0cB\x0cC\x0cD\x0cE\x0c\n" * 40,  # form feeds: Telugu's high byte
        "\x1ca\x1ca\x1c' s" * 40,  # file separators (the fuzz's case)
    ],
    ids=["tsv of digits", "lone CRs", "spinner log", "unit separators", "form feeds", "FS"],
)
def test_utf8_with_control_characters_in_every_other_byte_is_not_taken_for_utf16(tmp_path, text):
    """The review of the UTF-16 checks: Indic scripts' high bytes are tab, LF and CR, which
    UTF-8 text holds as itself; they count only beside a NUL, which no UTF-8 text holds, and
    a parity of control bytes must read as words."""
    from bpe_studio.core.corpus.sources import TAR_BLOCK, not_text

    assert not_text(text.encode("utf-8")[:TAR_BLOCK]) is None
    path = write_text(tmp_path / "corpus.txt", text)
    train_bpe(path, 260, [])  # trained, not refused


@pytest.mark.parametrize(
    "data",
    [
        b"".join(b"%07d\0" % i for i in range(1, 2001)),  # printf '%07d\0' $(seq 2000)
        b"hello\0world\n" * 100,
    ],
    ids=["numbered records", "words"],
)
def test_utf8_with_nuls_at_a_regular_odd_offset_is_not_taken_for_utf16(tmp_path, data):
    """Found by the terminals audit: valid UTF-8 whose records end in a NUL at an odd
    offset was called UTF-16 ("convert it with iconv", which garbles it). UTF-16 of
    ASCII-range text has a NUL in nearly every high byte; a quarter or a sixth is not it."""
    from bpe_studio.core.corpus.sources import TAR_BLOCK, not_text

    assert not_text(data[:TAR_BLOCK]) is None
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    train_bpe(path, 260, [])  # trained, not refused


def _crlf_codes(width: int) -> bytes:
    letters = "okUSGBdefrZZid"
    codes = (letters[(i * 5) % 13 : (i * 5) % 13 + width].ljust(width, "x") for i in range(200))
    return "".join(code + "\r\n" for code in codes).encode()


def _nul_at(data: bytes, *offsets: int) -> bytes:
    out = bytearray(data)
    for offset in offsets:
        out[offset] = 0
    return bytes(out)


@pytest.mark.parametrize(
    "data",
    [
        _nul_at(_crlf_codes(2), 100, 101),  # the audit's list of two-letter codes
        b"\r\n" * 30 + b"\0" + b"Title\r\n" + b"body text here.\r\n" * 10,
        _nul_at(_crlf_codes(2), 42),  # one NUL in a code: CR LF pairs at even offsets
        _nul_at(_crlf_codes(4), 43, 102),  # six-byte lines: LF CR pairs, read little-endian
        _nul_at(_crlf_codes(2), 62, 142),  # NULs for two CRs: two UTF-16 line breaks
    ],
    ids=["codes", "blank lines", "one in a code", "odd offsets", "nul for cr"],
)
def test_utf8_crlf_lines_with_a_stray_nul_are_not_taken_for_utf16(tmp_path, data):
    """Found by the command-line audit: CR LF pairs at one parity read as U+0D0A (a Malayalam
    letter), and one NUL anywhere let the CR count as the script's high byte, so valid UTF-8
    was called UTF-16 ("convert it with iconv", which garbles it)."""
    from bpe_studio.core.corpus.sources import TAR_BLOCK, not_text

    data.decode("utf-8")  # valid UTF-8
    assert not_text(data[:TAR_BLOCK]) is None
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    train_bpe(path, 260, [])  # trained, not refused
    encode_file(Tokenizer.preset("gpt2"), path, tmp_path / "ids.npy")
    assert (tmp_path / "ids.npy").exists()


@pytest.mark.parametrize("text", [None, SANSKRIT * 20], ids=["english", "sanskrit"])
@pytest.mark.parametrize(
    ("encoding", "said"),
    [("utf-16-le", "UTF-16 text (little-endian"), ("utf-16-be", "UTF-16 text (big-endian")],
)
def test_utf16_with_crlf_lines_is_named_not_trained_on(tmp_path, text, encoding, said):
    """UTF-16 with Windows line ends (CR and LF each a NUL-led pair) is still UTF-16."""
    if text is None:
        text = (FIXTURES / "english_books_slice.txt").read_text(encoding="utf-8")[:5000]
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.replace("\n", "\r\n").encode(encoding))
    with pytest.raises(CorpusError, match=re.escape(f"corpus.txt: {said}, no byte-order mark)")):
        train_bpe(path, 300, [EOT])


def test_encode_file_names_an_archive_as_the_command_does(tmp_path):
    path = tmp_path / "book.txt"
    path.write_bytes(b"PK\x03\x04\x14\x00\x06\x00" + b"x" * 600)
    with pytest.raises(CorpusError, match=r"book\.txt: a ZIP archive"):
        encode_file(Tokenizer.preset("gpt2"), path, tmp_path / "ids.npy")


def _compressed(kind: str, data: bytes) -> bytes:
    import bz2
    import gzip
    import lzma

    if kind == "zst":
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    return {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind](data)


@pytest.mark.parametrize(
    ("kind", "said"),
    [("gz", "gzip"), ("bz2", "bzip2"), ("xz", "xz"), ("zst", "zstd")],
)
def test_compressed_data_under_a_text_name_is_named_as_compressed(tmp_path, kind, said):
    """A hostile-input audit: zstd bytes named .txt were called UTF-16 text ("convert it with
    iconv", which garbles them), gzip, bzip2 and xz bytes "not valid UTF-8": nothing said
    they were compressed, which a name ending in the compression's suffix reads."""
    text = "the cat sat on the mat\n" * 300
    path = tmp_path / "corpus.txt"
    path.write_bytes(_compressed(kind, text.encode("utf-8")))
    message = re.escape(f"corpus.txt: {said}-compressed data, not text: end its name in .{kind}")
    with pytest.raises(CorpusError, match=message):
        train_bpe(path, 300, [EOT])
    with pytest.raises(CorpusError, match=message):
        encode_file(Tokenizer.preset("gpt2"), path, tmp_path / "ids.npy")
    named = path.rename(tmp_path / f"corpus.txt.{kind}")  # as the message says: trained
    assert train_bpe(named, 300, [EOT])[1]


@pytest.mark.parametrize("name", ["ids.npy", "ids.txt"])
def test_a_numpy_array_of_ids_is_named_as_one(tmp_path, name):
    """The same audit: the ids `bpe-studio encode` writes, given as a corpus, were called
    UTF-16 text (their header, then ids whose high bytes read as Latin Extended letters)."""
    import numpy as np

    path = tmp_path / name
    with open(path, "wb") as f:
        np.save(f, np.arange(300, 20_000, dtype=np.uint16))
    message = re.escape(f"{name}: a NumPy array (.npy") + ".*decode` reads it"
    with pytest.raises(CorpusError, match=message):
        train_bpe(path, 300, [EOT])
    with pytest.raises(CorpusError, match=message):
        encode_file(Tokenizer.preset("gpt2"), path, tmp_path / "out.npy")


@pytest.mark.parametrize("dtype", ["<u2", ">u2"])
def test_binary_with_nul_high_bytes_is_not_taken_for_utf16(dtype):
    """The same audit: bytes that are no UTF-8, half of them NUL in one parity (byte-level
    token ids stored as 16-bit numbers), were called UTF-16 text without being read as
    such; their low bytes read as control characters and stray symbols, not words."""
    import numpy as np

    from bpe_studio.core.corpus.sources import TAR_BLOCK, not_text

    head = np.arange(256, dtype=dtype).tobytes()[:TAR_BLOCK]
    assert not_text(head) == "mostly NUL bytes: binary data, or a sparse or zeroed file, not text"
    # UTF-16 of a table of numbers (few letters) is still named as the text it is.
    table = "1,2;3é\r\n" * 40
    encoding = "utf-16-le" if dtype == "<u2" else "utf-16-be"
    said = not_text(table.encode(encoding)[:TAR_BLOCK])
    assert said is not None and said.startswith("UTF-16 text")
