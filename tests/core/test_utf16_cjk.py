"""UTF-16 of Chinese, Japanese and Korean text without a byte-order mark is named as UTF-16.

Found by an audit: ``iconv -t UTF-16LE`` of Chinese text was named "not valid UTF-8 at byte
offset 6", while Latin-script UTF-16 was named with the iconv command that converts it. The
detector looked for one high byte (NUL for ASCII, 0x0E for Thai) in most pairs; Han's run
over 0x4E-0x9F, Hangul's over 0xAC-0xD7 (Korean with its ASCII spaces, a NUL high byte in
a fifth of the pairs, was named already; it is kept here beside the others). Legacy
double-byte encodings of the same texts (GBK, Big5, Shift-JIS, EUC-KR), Latin-1 and random
bytes stay "not valid UTF-8": calling them UTF-16 would send the user to an iconv that
garbles them.
"""

from __future__ import annotations

import codecs
import random
import re

import pytest
from core_helpers import EOT, read_fixture

from bpe_studio.core import CorpusError, Tokenizer, encode_file, train_bpe
from bpe_studio.core.corpus.sources import TAR_BLOCK, not_text

# Windows of the Chinese slice (simplified; Big5 takes the traditional forms it has).
CHINESE = read_fixture("chinese_slice.txt")
# Natsume Soseki's opening lines: kanji, hiragana, katakana and 。、 with no ASCII at all.
JAPANESE = (
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめ"
    "した所でニャーニャー泣いていた事だけは記憶している。吾輩はここで始めて人間というものを"
    "見た。しかもあとで聞くとそれは書生という人間中で一番獰悪な種族であったそうだ。\n"
)
# Articles 1 and 2 of the Constitution of the Republic of Korea: Hangul, ASCII spaces and
# punctuation.
KOREAN = (
    "대한민국은 민주공화국이다. 대한민국의 주권은 국민에게 있고, 모든 권력은 국민으로부터 "
    "나온다. 대한민국의 국민이 되는 요건은 법률로 정한다. 국가는 법률이 정하는 바에 의하여 "
    "재외국민을 보호할 의무를 진다.\n"
)
TEXTS = {"chinese": CHINESE[:3000], "japanese": JAPANESE * 8, "korean": KOREAN * 8}
LEGACY = {
    "chinese": ["gbk", "gb18030", "big5"],
    "japanese": ["shift_jis", "cp932", "euc_jp"],
    "korean": ["euc_kr", "cp949"],
}
ENDS = [("utf-16-le", "little", "UTF-16LE"), ("utf-16-be", "big", "UTF-16BE")]


def _windows(text: str, count: int = 60) -> list[str]:
    """``count`` windows of ``text``, each long enough for a head of TAR_BLOCK bytes."""
    step = max(1, (len(text) - 600) // count)
    return [text[start : start + 600] for start in range(0, len(text) - 600, step)][:count]


def _decodes(head: bytes, codec: str) -> bool:
    try:
        codecs.getincrementaldecoder(codec)().decode(head[: len(head) // 2 * 2])
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("script", list(TEXTS))
@pytest.mark.parametrize(("codec", "end", "form"), ENDS)
def test_cjk_utf16_without_a_byte_order_mark_is_named_with_its_end(
    tmp_path, script, codec, end, form
):
    data = TEXTS[script].encode(codec)
    assert not data.startswith((b"\xff\xfe", b"\xfe\xff"))  # no mark: Python writes none
    expected = (
        f"UTF-16 text ({end}-endian, no byte-order mark), not UTF-8: convert it "
        f"(iconv -f {form} -t UTF-8)"
    )
    assert not_text(data[:TAR_BLOCK]) == expected
    path = tmp_path / f"{script}.txt"
    path.write_bytes(data)
    message = re.escape(f"{script}.txt: {expected}")
    with pytest.raises(CorpusError, match=message):
        train_bpe(path, 300, [EOT])
    with pytest.raises(CorpusError, match=message):
        encode_file(Tokenizer.preset("gpt2"), path, tmp_path / "ids.npy")
    assert not (tmp_path / "ids.npy").exists()


@pytest.mark.parametrize(("codec", "end", "form"), ENDS)
def test_chinese_utf16_is_named_wherever_the_file_begins(codec, end, form):
    """Windows all through the slice: headlines, lists of names with punctuation, dialogue."""
    for window in _windows(CHINESE):
        said = not_text(window.encode(codec)[:TAR_BLOCK])
        assert said is not None and said.startswith(f"UTF-16 text ({end}-endian"), window[:40]


@pytest.mark.parametrize(
    ("script", "codec"),
    [(script, codec) for script, codecs_ in LEGACY.items() for codec in codecs_],
)
def test_legacy_double_byte_encodings_are_not_taken_for_utf16(tmp_path, script, codec):
    """GBK, Big5, Shift-JIS and EUC-KR bytes read in pairs as UTF-16 give Hangul (GB2312's
    lead bytes), Yi (its punctuation's), ideographs (Shift-JIS's), private use and lone
    surrogates: none is UTF-16 text, and each stays "not valid UTF-8"."""
    text = TEXTS[script]
    for window in _windows(text if script == "chinese" else text * 4):
        head = window.encode(codec, errors="replace")[:TAR_BLOCK]
        assert not_text(head) is None, (codec, window[:40])
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode(codec, errors="replace"))
    with pytest.raises(CorpusError, match=r"corpus\.txt: not valid UTF-8 at byte offset"):
        train_bpe(path, 300, [EOT])


@pytest.mark.parametrize("codec", ["shift_jis", "euc_jp"])
def test_japanese_in_a_legacy_encoding_that_decodes_as_utf16_is_not_named_so(codec):
    """A paragraph without ASCII (no line break to shift the pairs): Shift-JIS read as
    UTF-16BE is all ideographs (lead bytes 0x81-0x9F), EUC-JP Yi and Hangul (0xA4, 0xB0-),
    each decoding strictly, neither with a punctuation mark or a space of its own."""
    head = (JAPANESE.strip() * 8).encode(codec)[:TAR_BLOCK]
    assert _decodes(head, "utf-16-be")  # the reading is checked, not a decoding error
    assert not_text(head) is None


def test_gbk_heads_that_decode_as_utf16_are_not_named_so():
    """Some windows of the Chinese slice in GBK decode as UTF-16BE (no lead byte from
    0xD8 to 0xDF, a surrogate's): Hangul and Yi, no punctuation."""
    heads = [w.encode("gbk", errors="replace")[:TAR_BLOCK] for w in _windows(CHINESE, 200)]
    decoding = [head for head in heads if _decodes(head, "utf-16-be")]
    assert decoding  # some do; none is named UTF-16
    assert all(not_text(head) is None for head in decoding)


def test_random_bytes_are_not_taken_for_utf16():
    rng = random.Random(20240607)
    for _ in range(500):
        head = bytes(rng.randrange(256) for _ in range(TAR_BLOCK))
        # (one in 65,536 opens with a byte-order mark, and is named by it)
        assert "no byte-order mark" not in (not_text(head) or ""), head[:16]


@pytest.mark.parametrize("codec", ["latin-1", "cp1252"])
def test_latin1_text_is_not_taken_for_utf16(codec):
    """Latin-1 text reads in pairs as ideographs (two ASCII letters each): with no CJK
    punctuation, and controls where a space meets a letter, it is no UTF-16 text."""
    text = read_fixture("english_books_slice.txt") + read_fixture("german.txt") * 20
    for window in _windows(text, 100):
        head = ("é" + window).encode(codec, errors="replace")[:TAR_BLOCK]
        assert not_text(head) is None, window[:40]


@pytest.mark.parametrize("script", list(TEXTS))
def test_utf8_cjk_text_is_not_flagged(script):
    data = TEXTS[script].encode("utf-8")
    assert not_text(data[:TAR_BLOCK]) is None
    # Windows that begin inside a character are no UTF-8 either: still no UTF-16.
    for start in range(0, 40):
        assert not_text(data[start : start + TAR_BLOCK]) is None


def test_text_both_ends_read_as_is_named_neither():
    """Hangul syllables whose bytes both lie in 0xAC-0xD7 read as Hangul from either end, and
    U+3030 (a wavy dash) is its own swap: there is no telling which end it is."""
    rng = random.Random(7)
    syllables = [chr(a << 8 | b) for a in range(0xAC, 0xD8) for b in range(0xAC, 0xD8)]
    text = "".join(rng.choice(syllables) + ("\u3030" if i % 5 == 4 else "") for i in range(300))
    data = text.encode("utf-16-le")[:TAR_BLOCK]
    assert codecs.decode(data, "utf-16-be")  # reads both ways
    assert not_text(data) is None
