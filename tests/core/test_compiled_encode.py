"""The compiled encoder (``encode.encoder``, ``compiled``, ``encode_kernel``) gives the ids of
the Python path and of the peers: on the fixture slices and the shared corpora, on generated
text, for truncations, long pieces, a bounded cache, ``ignore_merges`` and the pipelines of
open models' files; and the choice of path is right (what takes the compiled path, what keeps
the Python one).

Oracles: the Python path of the same tokenizer (``Encoder.packed``, itself checked against
tiktoken and ``tokenizers`` elsewhere), tiktoken built offline from the shipped rank files,
and ``tokenizers`` on files it builds here.
"""

from __future__ import annotations

import pickle
import threading
from itertools import islice

import numpy as np
import pytest
import tokenizers
from core_helpers import EOT, FIXTURES, SLICES, full_corpus, read_fixture
from encode_paths import tiktoken_peer
from gpt2_bytes import token_to_gpt2
from hf_shapes import FAMILIES as HF_FAMILIES
from hf_shapes import GPT_OSS, LLAMA3
from hypothesis import given
from hypothesis import strategies as st
from reference_encoder import ASSIGNED_TEXTS, shipped_tiktoken
from text_strategies import HYPO, TEXTS
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode import encoder as encoder_module
from bpe_studio.core.encode import token_spans
from bpe_studio.core.encode.merging import kernel_start, piece_table
from bpe_studio.core.encode.merging.packed import NUMPY_DTYPE
from bpe_studio.core.encode.streaming import STREAM_BLOCK
from bpe_studio.core.text.surrogates import replace_surrogates

PRESETS = ("gpt2", "cl100k_base", "o200k_base")
FAMILIES = {**HF_FAMILIES, "gpt_oss": GPT_OSS}


@pytest.fixture(autouse=True)
def kernels():
    if not kernel_start.prepare():
        pytest.skip(f"the compiled encoder is unavailable here: {kernel_start.failure()}")


@pytest.fixture(scope="module", params=PRESETS)
def preset(request):
    return Tokenizer.preset(request.param)


def python_ids(tok: Tokenizer, text: str, specials=None) -> list[int]:
    enc = tok._encoder
    packed = enc.packed(text, enc.specials if specials is None else specials)
    return np.frombuffer(packed, dtype=NUMPY_DTYPE).tolist()


def compiled_ids(tok: Tokenizer, text: str, specials=None) -> list[int]:
    enc = tok._encoder
    ids = enc.compiled_array(text, enc.specials if specials is None else specials)
    assert ids is not None, "the compiled path was not taken"
    return ids.tolist()


def assert_same(tok: Tokenizer, text: str) -> None:
    assert compiled_ids(tok, text) == python_ids(tok, text), repr(text[:80])


# ------------------------------------------------------------------- presets
@pytest.mark.parametrize("corpus", list(SLICES))
def test_presets_compiled_equals_python_on_fixture_slices(preset, corpus):
    text = read_fixture(SLICES[corpus])
    assert_same(preset, text)
    assert_same(preset, text[:5000] + EOT + text[5000:9000] + EOT + EOT)


@pytest.mark.parametrize(
    "corpus", ["english_books.txt", "chinese.txt", "code.txt", "mixed_web.txt"]
)
def test_presets_compiled_equals_tiktoken_on_the_shared_corpora(preset, corpus):
    with open(full_corpus(corpus), "rb") as f:
        f.seek(3_000_000)
        f.readline()
        text = f.read(1_500_000).decode("utf-8", errors="ignore")
    if preset.name == "gpt2":
        import tiktoken
        from reference_encoder import published

        ranks = {t: i for i, t in preset.vocab.items() if t != EOT.encode()}
        peer = tiktoken.Encoding("gpt2_ref", pat_str=published("r50k_base")["pat_str"],
                                 mergeable_ranks=ranks, special_tokens={EOT: 50256})  # fmt: skip
    else:
        peer = shipped_tiktoken(preset.name)
    got = compiled_ids(preset, text)
    assert got == peer.encode(text, allowed_special="all")
    assert got == python_ids(preset, text)


@HYPO
@given(text=TEXTS)
def test_presets_compiled_equals_python_on_generated_text(preset, text):
    assert_same(preset, text)


@HYPO
@given(text=ASSIGNED_TEXTS)
def test_presets_compiled_equals_python_on_assigned_characters(preset, text):
    assert_same(preset, text)


@pytest.mark.parametrize(
    "text",
    [
        " " * 5000 + "x",
        "a" * 3000,
        "1234567890" * 300,
        "中文" * 800,
        "😀" * 500,
        "\n" * 700 + " \t" * 300,
        "ab" * 2000 + EOT + "ab" * 2000,
    ],
    ids=["spaces", "letters", "digits", "han", "emoji", "breaks", "special-between"],
)
def test_long_pieces_merge_as_the_python_path(preset, text):
    assert_same(preset, text)


def test_surrogates_are_encoded_as_the_python_path(preset):
    text = "a\ud83d\ude00b \ud800 x\udfff" + EOT + "\ud83d"
    with pytest.raises(UnicodeEncodeError):
        compiled_ids(preset, text)  # the caller replaces them first, on either path
    assert preset.encode(text) == python_ids(preset, replace_surrogates(text))
    assert preset.encode_array(text).tolist() == python_ids(preset, replace_surrogates(text))


# --------------------------------------------------------------- truncations
@pytest.mark.parametrize("k", [0, 1, 257, 5000, 49_999])
def test_truncations_compiled_equal_python(k):
    full = Tokenizer.preset("gpt2")
    tok = full.truncated(k)
    text = read_fixture(SLICES["english"])[:20_000] + read_fixture(SLICES["chinese"])[:3000]
    assert_same(tok, text)


def test_truncations_share_the_full_rank_table_and_keep_their_own_cache():
    full = Tokenizer.preset("gpt2")
    text = read_fixture(SLICES["tinystories"])[:5000]
    full.encode_array(text)
    short = full.truncated(300)
    assert compiled_ids(short, text) == python_ids(short, text)
    assert short.merger.compiled().rank is full.merger.compiled().rank
    assert short.merger.compiled().cache is not full.merger.compiled().cache
    # Every cached piece of the truncation has its ids under 300 merges.
    assert compiled_ids(short, text) != compiled_ids(full, text)


# ---------------------------------------------------------------- the cache
def test_the_cache_persists_across_calls_and_serves_the_same_ids():
    tok = Tokenizer.preset("cl100k_base")
    text = read_fixture(SLICES["mixed_web"])[:30_000]
    first = compiled_ids(tok, text)
    merger = tok.merger.compiled()
    entries = (merger.cache.entries, merger.short.entries)
    assert min(entries) > 500
    assert compiled_ids(tok, text) == first
    assert (merger.cache.entries, merger.short.entries) == entries


def test_the_cache_stays_bounded_and_starts_afresh(monkeypatch):
    for name, value in [("START_ENTRIES", 16), ("START_KEYS", 512), ("START_VALS", 1024),
                        ("MAX_ENTRIES", 64), ("MAX_KEYS", 2048), ("MAX_VALS", 4096),
                        ("START_SHORT_SLOTS", 16), ("MAX_SHORT_SLOTS", 128)]:  # fmt: skip
        monkeypatch.setattr(piece_table, name, value)
    tok = Tokenizer.preset("gpt2")
    text = read_fixture(SLICES["english"])[:40_000]
    assert compiled_ids(tok, text) == python_ids(tok, text)
    cache = tok.merger.compiled().cache
    assert 0 < cache.entries <= 64
    assert len(cache.keys) <= 2048 and len(cache.vals) <= 4096
    short = tok.merger.compiled().short
    assert 0 < short.entries <= 64 and len(short.slots) <= 2 * 128


@pytest.mark.parametrize("where", ["first", "last", "both"])
def test_long_pieces_around_the_stops_where_the_caches_grow(monkeypatch, where):
    # The kernel stops and starts again each time a tiny cache grows; its scratch arrays are
    # sized once for the whole call, so the longest piece may come before or after any stop.
    for name, value in [("START_ENTRIES", 16), ("START_KEYS", 64), ("START_VALS", 64),
                        ("START_SHORT_SLOTS", 16)]:  # fmt: skip
        monkeypatch.setattr(piece_table, name, value)
    tok = Tokenizer.preset("gpt2")
    words = " ".join(f"w{chr(0x3B1 + i % 20)}{i}x{chr(0x430 + i % 30)}" for i in range(3000))
    long_word = " " + "".join(chr(0x61 + i % 26) for i in range(700))
    spaces = " " * 1500
    head = long_word + spaces + "\n" if where in ("first", "both") else ""
    tail = "\n" + spaces + long_word if where in ("last", "both") else ""
    text = head + words + EOT + words[:100] + tail
    assert compiled_ids(tok, text) == python_ids(tok, text)
    assert tok.merger.compiled().cache.entries > 16  # it grew: the kernel stopped


# ----------------------------------------------------------- tokenizer.json
def _gpt2_file(tmp_path, normalizer, pre_tokenizer, *, ignore_merges=False, added=()):
    vocab = {token_to_gpt2(t): i for i, t in Tokenizer.preset("gpt2").vocab.items()}
    lines = (FIXTURES / "gpt2_merges.txt").read_text(encoding="utf-8").splitlines()
    merges = [tuple(line.split(" ")) for line in lines if line and not line.startswith("#")]
    tok = tokenizers.Tokenizer(models.BPE(vocab, merges, ignore_merges=ignore_merges))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(EOT, special=True), *added])
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return path


SHAPES = ["gpt2", "llama3", "qwen2", "deepseek_v3", "starcoder", "gpt_oss"]
TEXT_MIX = (
    read_fixture(SLICES["english"])[:6000] + EOT + read_fixture(SLICES["chinese"])[:2000]
    + read_fixture(SLICES["code"])[:6000] + EOT + read_fixture(SLICES["mixed_web"])[:6000]
    + "e\u0301\u0323a ﬁ Ａ１ ㌀ Ⅻ 我们在2024年 12345 don't\r\n\r\n"
)  # fmt: skip


@pytest.mark.parametrize("shape", SHAPES)
def test_open_model_shapes_take_the_compiled_path_with_tokenizers_ids(tmp_path, shape):
    path = _gpt2_file(tmp_path, *FAMILIES[shape])
    ours = Tokenizer.from_hf(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert ours._encoder.scanner is not None
    assert compiled_ids(ours, TEXT_MIX) == hf.encode(TEXT_MIX, add_special_tokens=False).ids
    assert compiled_ids(ours, TEXT_MIX) == python_ids(ours, TEXT_MIX)


@HYPO
@given(data=st.data())
def test_pipelines_compiled_equal_tokenizers_on_generated_text(tmp_path_factory, data):
    shape = data.draw(st.sampled_from(["qwen2", "deepseek_v3", "starcoder"]))
    ours, hf = _built_shape(tmp_path_factory, shape)
    text = "".join(data.draw(st.lists(st.one_of(ASSIGNED_TEXTS, st.just(EOT)), max_size=4)))
    assert compiled_ids(ours, text) == hf.encode(text, add_special_tokens=False).ids


_BUILT: dict[str, tuple[Tokenizer, tokenizers.Tokenizer]] = {}


def _built_shape(factory, shape):
    if shape not in _BUILT:
        path = _gpt2_file(factory.mktemp(shape), *FAMILIES[shape])
        _BUILT[shape] = Tokenizer.from_hf(path), tokenizers.Tokenizer.from_file(str(path))
    return _BUILT[shape]


def test_ignore_merges_looks_whole_tokens_up_on_the_compiled_path(tmp_path):
    vocab = {token_to_gpt2(bytes([b])): b for b in range(256)}
    vocab |= {"bc": 256, "abc": 257, "ab": 258, "Ġabc": 259}
    hf = tokenizers.Tokenizer(models.BPE(vocab, [("b", "c"), ("a", "b")], ignore_merges=True))
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(LLAMA3), "isolated"),
         pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )  # fmt: skip
    hf.decoder = decoders.ByteLevel()
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    ours = Tokenizer.from_hf(path)
    text = " ".join(["abc", "abcd", "xabc", "ab"] * 50)
    assert compiled_ids(ours, text) == hf.encode(text).ids
    assert compiled_ids(ours, "abc") == [257]


# -------------------------------------------------------- which path is taken
def _scanner_of(tmp_path, normalizer, pre_tokenizer, added=()):
    return Tokenizer.from_hf(_gpt2_file(tmp_path, normalizer, pre_tokenizer, added=added))


def test_what_keeps_the_python_path(tmp_path):
    custom = Tokenizer(Tokenizer.preset("gpt2").vocab, Tokenizer.preset("gpt2").merges,
                       pattern=r"\w+|\s+|[^\w\s]+")  # fmt: skip
    assert custom._encoder.scanner is None
    assert custom._encoder.compiled_array("a b", custom.specials) is None
    for shape in ("bloom", "cl100k_in_json"):  # patterns without a compiled scanner
        other = _scanner_of(tmp_path / shape, *FAMILIES[shape])
        assert other._encoder.scanner is None
    prefix = _scanner_of(tmp_path / "prefix", None, pre_tokenizers.ByteLevel(add_prefix_space=True))
    assert prefix._encoder.scanner is None
    flagged = AddedToken("<|x|>", special=True, lstrip=True)
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False)
    lstrip = _scanner_of(tmp_path / "lstrip", None, byte_level, added=[flagged])
    assert lstrip._encoder.pipeline is not None and lstrip._encoder.scanner is None
    text = "a <|x|> b"
    assert lstrip.encode(text) == tokenizers.Tokenizer.from_file(
        str(tmp_path / "lstrip" / "tokenizer.json")).encode(text).ids  # fmt: skip


def test_what_takes_the_compiled_path(tmp_path):
    for name in PRESETS:
        assert Tokenizer.preset(name)._encoder.scanner is not None
    digits = Tokenizer.from_hf(_gpt2_file(tmp_path, *FAMILIES["starcoder"]))
    assert digits._encoder.scanner is not None and digits._encoder.scanner.label == "starcoder"
    nfc = _scanner_of(tmp_path / "nfc", normalizers.NFC(), FAMILIES["qwen2"][1])
    assert nfc._encoder.pipeline is not None and nfc._encoder.scanner is not None
    deepseek = _scanner_of(tmp_path / "ds", None, FAMILIES["deepseek_v3"][1])
    assert deepseek._encoder.scanner.label == "deepseek_v3"
    llama = _scanner_of(tmp_path / "llama", None, FAMILIES["llama3"][1])
    assert llama._encoder.pipeline is None and llama._encoder.scanner is not None


def test_turned_off_it_takes_the_python_path_with_the_same_ids(monkeypatch):
    tok = Tokenizer.preset("o200k_base")
    text = read_fixture(SLICES["chinese"])[:5000]
    expected = tok.encode(text)
    monkeypatch.setenv(kernel_start.ENV, "python")
    assert tok._encoder.compiled_array(text, tok.specials) is None
    assert tok.encode(text) == expected


def _holding(merger):
    """A thread holding a lane of ``merger`` until the returned event is set."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with merger.hold():
            held.set()
            release.wait()

    worker = threading.Thread(target=hold)
    worker.start()
    held.wait()
    return worker, release


def test_a_busy_lane_gives_another_thread_one_of_its_own():
    """Before lanes, a second thread found the one cache taken and took the Python path,
    2-17 times slower: threads sharing a tokenizer (as tiktoken's users share an Encoding)
    ran slower than one thread alone."""
    tok = Tokenizer.preset("gpt2")
    text = read_fixture(SLICES["english"])[:8000]
    expected = tok.encode(text)
    merger = tok.merger.compiled()
    entries = merger.cache.entries
    worker, release = _holding(merger)
    try:
        got = tok._encoder.compiled_array(text + " more", tok.specials)
        assert got is not None and got.tolist() == python_ids(tok, text + " more")
        assert merger.cache.entries == entries  # the held (first) lane was not written
    finally:
        release.set()
        worker.join()
    assert tok.encode(text) == expected


def test_every_lane_busy_sends_another_caller_to_the_python_path(monkeypatch):
    from bpe_studio.core.encode.merging import compiled

    monkeypatch.setattr(compiled, "MAX_LANES", 1)
    tok = Tokenizer.preset("gpt2")
    text = read_fixture(SLICES["english"])[:8000]
    merger = tok.merger.compiled()
    entries = merger.cache.entries
    worker, release = _holding(merger)
    try:
        assert tok._encoder.compiled_array(text + " more", tok.specials) is None
        assert tok.encode(text + " more") == python_ids(tok, text + " more")
        assert merger.cache.entries == entries
    finally:
        release.set()
        worker.join()


@pytest.mark.parametrize("preset", ["gpt2", "o200k_base"])
def test_threads_encoding_at_once_give_the_ids_of_one_thread(preset):
    """Each thread writes only its own lane's caches, however the texts interleave."""
    from concurrent.futures import ThreadPoolExecutor

    tok = Tokenizer.preset(preset)
    tok.prepare_bulk()
    texts = [read_fixture(SLICES[kind])[i * 3000 : (i + 1) * 3000] for kind in SLICES
             for i in range(6)]  # fmt: skip
    expected = [python_ids(tok, t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(tok.encode, texts)) == expected


def test_a_pickled_tokenizer_encodes_alike_and_builds_its_own_cache():
    tok = Tokenizer.preset("cl100k_base")
    text = read_fixture(SLICES["code"])[:10_000]
    expected = compiled_ids(tok, text)
    copy = pickle.loads(pickle.dumps(tok))
    assert copy.merger._compiled is None
    assert compiled_ids(copy, text) == expected


def test_a_pickled_tokenizer_leaves_its_derived_tables_behind():
    """Found by the API audit: o200k pickled to 54 MB, 41 of them tables rebuilt faster than
    unpickled, so ``pool.map(tok.encode, docs)`` sent them with every task."""
    tok = Tokenizer.preset("o200k_base")
    text = read_fixture(SLICES["chinese"])[:5_000] + read_fixture(SLICES["code"])[:5_000]
    expected = tok.encode(text)
    tok.merger.prepare()  # the tables the Python path merges with, as encode_file builds them
    assert tok.merger._batch is not None and tok.merger._char is not None
    data = pickle.dumps(tok)
    assert len(data) < 20_000_000
    copy = pickle.loads(data)
    assert copy.encode(text) == expected
    long_chinese = [read_fixture(SLICES["chinese"])[:5_000]] * 2
    assert copy.encode_batch(long_chinese) == tok.encode_batch(long_chinese)


# ------------------------------------------------------------ spans, streams
def _python_spans(tok: Tokenizer, text: str) -> list[tuple[int, int, int, bool]]:
    return [tuple(s) for s in token_spans._spans_python(tok._encoder, text)]


@pytest.mark.parametrize("corpus", ["english", "chinese", "mixed_web"])
def test_compiled_spans_equal_the_python_spans(preset, corpus):
    text = read_fixture(SLICES[corpus])[:20_000] + EOT + "😀 e\u0301 中"
    packed = token_spans._packed(preset._encoder, text)
    assert [tuple(row) for row in packed.tolist()] == [
        (i, s, e, int(p)) for i, s, e, p in _python_spans(preset, text)
    ]


@HYPO
@given(text=TEXTS)
def test_compiled_spans_equal_the_python_spans_on_generated_text(preset, text):
    assert [tuple(s) for s in preset.spans(text)] == _python_spans(preset, text)


@HYPO
@given(text=TEXTS, cuts=st.lists(st.integers(0, 400), max_size=6))
def test_a_compiled_stream_gives_the_ids_of_the_whole_text(preset, text, cuts):
    from bpe_studio.core.encode import streaming

    text = text * 20
    bounds = sorted({min(c * 7, len(text)) for c in cuts} | {0, len(text)})
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    monkey = streaming.STREAM_BLOCK
    streaming.STREAM_BLOCK = 64  # several blocks, each decided on the compiled path
    try:
        assert list(preset.encode_iterable(chunks)) == python_ids(preset, text)
    finally:
        streaming.STREAM_BLOCK = monkey


@pytest.mark.parametrize("name", PRESETS)
def test_every_whole_token_is_found_by_the_compiled_lookup(name):
    """The whole-token tables (built in compiled code from the tokens' bytes: the short
    pieces' and the others') find each UTF-8 token of a real vocabulary: pieces that are
    tokens, with no merges to fall back on, come out as their own ids."""
    from bpe_studio.core.encode.encoder import codepoints
    from bpe_studio.core.encode.merging.compiled import CompiledMerger, RankArrays

    kernels = kernel_start.kernels()
    vocab = Tokenizer.preset(name).vocab
    whole = {t: i for i, t in vocab.items()}
    texts, ids = [], []
    for token, idx in whole.items():
        try:
            texts.append(token.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        ids.append(idx)
    no_merges = np.zeros(0, np.int64)
    byte_ids = np.array([whole[bytes([b])] for b in range(256)], np.int64)
    rank = RankArrays.of_lists(kernels, no_merges, no_merges, no_merges, byte_ids)
    for ascii_only in (False, True):
        merger = CompiledMerger(kernels, rank, byte_ids, whole=whole, whole_all=not ascii_only)
        assert merger.short_whole.entries > 1000
        ends = np.cumsum([len(t) for t in texts])
        starts = ends - np.array([len(t) for t in texts])
        items = (starts, ends, np.full(len(texts), -1, np.int64))
        got, item_end = merger.encode(codepoints("".join(texts)), items, record=True)
        per_piece = np.split(got, item_end[:-1])
        looked_up = [(t, i) for t, i in zip(texts, ids) if t.isascii() or not ascii_only]
        assert len(looked_up) > len(texts) // 2
        assert [
            piece.tolist() for piece, t in zip(per_piece, texts) if t.isascii() or not ascii_only
        ] == [[i] for _, i in looked_up]


# Characters of several scripts whose UTF-8 bytes the presets merge in many ways: runs of them
# are merged from their characters' tokens first (``encode_kernel._from_chars``), each result
# checked, the rest from bytes.
MULTIBYTE = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着"
    "去之过家学对可里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行"
    "方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理"
    "美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电"
    "四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼"
    "体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感"
    "金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许"
    "八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管"
    "夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完"
    "革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取"
    "设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专"
    "石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母"
    "调局根曾准团段终乐切级克精哪官示冷域读ひらがなカタカナàéîõüßœñçЖДФЫ"
    "Я"
)


@HYPO
@given(text=st.text(st.sampled_from(MULTIBYTE + " ,.。，1"), max_size=200))
def test_multibyte_runs_compiled_equal_python(preset, text):
    assert_same(preset, text)


@pytest.mark.parametrize("k", [300, 3000, 20_000])
def test_multibyte_runs_of_truncations_compiled_equal_python(k):
    tok = Tokenizer.preset("o200k_base").truncated(k)
    text = read_fixture(SLICES["chinese"])[:20_000] + MULTIBYTE * 3
    assert_same(tok, text)


def test_packed_spans_are_the_spans_as_an_array(preset):
    text = read_fixture(SLICES["mixed_web"])[:5000] + EOT + "😀 e\u0301 中 \ud83d x"
    spans = preset.spans(text)
    packed = preset.packed_spans(text)
    assert packed.dtype == np.int64 and packed.shape == (len(spans), 4)
    assert packed.tolist() == [[i, s, e, int(p)] for i, s, e, p in spans]


def test_a_worker_process_loads_the_kernels_before_encoding_a_file():
    """A worker started clean (spawn) holds no kernels: encode_file's preparation of a
    worker's tokenizer loads them, so its chunks (under PREPARE_CHARS each) take the
    compiled path too."""
    from bpe_studio.core.encode import encode_file

    kernel_start.forget()
    tok = Tokenizer.preset("gpt2")
    assert tok.merger._compiled is None and kernel_start.kernels() is None
    encode_file._prepare(tok, encode_file.PREPARE_MIN_BYTES)
    assert kernel_start.kernels() is not None and tok.merger._compiled is not None
    text = read_fixture(SLICES["english"])[:50_000]
    assert tok._encoder.compiled_array(text, tok.specials) is not None


@pytest.mark.parametrize("piece", ["a", "7", "中", "=", "\U0001f44d\U0001f3fd", " "])
def test_a_text_with_a_long_pre_token_loads_the_kernels(tiktoken_gpt2, piece):
    """Under PREPARE_CHARS a text took the Python path however long its pre-tokens: 2M
    characters of "a" took 8.4 s there, and one character more 0.68 s, loading included
    (tiktoken: 0.4 s). A pre-token of PREPARE_PIECE_CHARS or more loads the kernels."""
    from bpe_studio.core.encode.encoder import PREPARE_PIECE_CHARS

    kernel_start.forget()
    tok = Tokenizer.preset("gpt2")
    text = "Hello" + piece * (PREPARE_PIECE_CHARS // len(piece) + 2) + "x world"
    assert tok.encode(text) == tiktoken_gpt2.encode(text)
    assert kernel_start.kernels() is not None


def test_a_text_of_short_pre_tokens_under_prepare_chars_keeps_the_python_path(tiktoken_gpt2):
    kernel_start.forget()
    tok = Tokenizer.preset("gpt2")
    text = read_fixture(SLICES["english"])[:200_000]
    assert tok.encode(text) == tiktoken_gpt2.encode(text)
    assert kernel_start.kernels() is None


def test_once_the_python_path_has_cost_the_load_the_kernels_are_loaded(tiktoken_gpt2, monkeypatch):
    # A loop over documents each far under PREPARE_CHARS took the Python path for ever, 2.4-17x
    # slower than the compiled one for documents of 1-16K characters. Now the time the Python
    # path takes adds up, and once it reaches what the load costs the next text loads them.
    # The editor's spans do not count. Each Python-path encode is counted as 1/40 s, whatever
    # it took.
    monkeypatch.delenv(kernel_start.ENV, raising=False)
    kernel_start.forget()
    count = kernel_start.tally_python_path
    monkeypatch.setattr(kernel_start, "tally_python_path", lambda seconds: count(1 / 40))
    monkeypatch.setattr(kernel_start, "LOAD_SECONDS", 14 / 40)
    tok = Tokenizer.preset("gpt2")
    text = read_fixture(SLICES["english"])[:5_000]
    tok.spans(text * 3)
    assert kernel_start.kernels() is None
    for _ in range(7):
        assert tok.encode(text) == tiktoken_gpt2.encode(text)
    assert kernel_start.kernels() is None
    for _ in range(7):  # the load's cost reached by the end of the fourteenth
        assert tok.encode(text) == tiktoken_gpt2.encode(text)
    assert kernel_start.kernels() is None
    assert tok.encode(text) == tiktoken_gpt2.encode(text)
    assert kernel_start.kernels() is not None


def test_a_stream_loads_the_kernels_once_its_python_path_has_cost_the_load(monkeypatch):
    # Found by an audit: a stream never loaded them, so encode_iterable over 11.7 MB of
    # Chinese (o200k) took 9.8 s where the compiled path takes 1.0 s, and nothing but
    # docs/encoding.md said to call prepare_bulk first. Its blocks now count as encode's
    # texts do (each Python-path block counted as 1/40 s here), and the ids stay exact
    # across the switch.
    monkeypatch.delenv(kernel_start.ENV, raising=False)
    kernel_start.forget()
    count = kernel_start.tally_python_path
    counted: list[float] = []

    def tally(seconds: float) -> float:
        counted.append(seconds)
        return count(1 / 40)

    monkeypatch.setattr(kernel_start, "tally_python_path", tally)
    monkeypatch.setattr(kernel_start, "LOAD_SECONDS", 6 / 40)
    tok = Tokenizer.preset("o200k_base")
    text = read_fixture(SLICES["chinese"]) * 10
    assert len(text) > 12 * STREAM_BLOCK
    chunks = [text[i : i + 10_000] for i in range(0, len(text), 10_000)]
    ids = tok.encode_iterable(iter(chunks))
    first = list(islice(ids, 1_000))
    assert kernel_start.kernels() is None  # not loaded before the stream has paid for it
    rest = list(ids)
    assert 6 <= len(counted) < 12  # a block after the sixth took the compiled path
    assert kernel_start.kernels() is not None
    assert first + rest == shipped_tiktoken("o200k_base").encode(text, allowed_special="all")


def test_prepare_bulk_loads_the_kernels_and_a_preset_alone_does_not():
    kernel_start.forget()
    tok = Tokenizer.preset("o200k_base")
    assert kernel_start.kernels() is None
    tok.prepare_bulk()
    assert kernel_start.kernels() is not None
    text = read_fixture(SLICES["chinese"])[:3000]
    assert tok.encode(text) == compiled_ids(tok, text)


def test_a_short_latin_text_takes_the_python_path_with_the_kernels_loaded(monkeypatch):
    # The compiled path costs about 14 us a call before any text: more than the Python path
    # takes for a line of English or code. Longer texts, and short ones with many multi-byte
    # characters (whose new pre-tokens the Python path merges slowly), take the compiled path.
    monkeypatch.delenv(kernel_start.ENV, raising=False)
    tok = Tokenizer.preset("cl100k_base")
    enc = shipped_tiktoken("cl100k_base")
    taken = []
    real = tok._encoder.compiled

    def spy(*args, **kwargs):
        taken.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(tok._encoder, "compiled", spy)
    short = "def f(x):\n    return x + 1  # a line of code"
    latin = "\u201cCaf\u00e9,\u201d she said \u2014 and left the r\u00e9sum\u00e9 there."
    for text in (short, latin, "x" * (encoder_module.SHORT_TEXT - 1)):
        assert tok.encode(text) == enc.encode(text)
    assert taken == []
    for text in ("中文" * 3, "Привет, мир", "y" * encoder_module.SHORT_TEXT, short * 5):
        assert tok.encode(text) == enc.encode(text)
    assert taken == [6, 11, encoder_module.SHORT_TEXT, len(short) * 5]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    "corpus", ["english_books.txt", "chinese.txt", "code.txt", "mixed_web.txt"]
)
def test_open_model_shapes_equal_tokenizers_on_the_shared_corpora(tmp_path_factory, shape, corpus):
    # The fixture mix above is 20,000 characters; real text of every kind, at a size where the
    # cache fills with thousands of pieces, is where a shape's scanner or NFC step would slip.
    # test_hf_families reads 2M characters through encode(), whichever path it takes; this
    # holds the compiled path to it, gpt-oss's shape included.
    with open(full_corpus(corpus), "rb") as f:
        f.seek(5_000_000)
        f.readline()
        text = f.read(300_000).decode("utf-8", errors="ignore")
    ours, hf = _built_shape(tmp_path_factory, shape)
    assert ours._encoder.scanner is not None
    assert compiled_ids(ours, text) == hf.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_special_tokens_side_by_side_encode_as_tiktoken_on_both_paths(name):
    # Texts dense with special tokens (a chat transcript, packed short documents) go through
    # one split and arrays of stretches, not a loop per token: the ids must not move.
    tok = Tokenizer.preset(name)
    enc = tiktoken_peer(tok)
    specials = tok.special_tokens
    texts = [
        EOT * 3000,
        (EOT + "a") * 3000,
        "".join(specials[i % len(specials)] + "中 x\n"[: i % 5] for i in range(5000)),
        "x" + EOT + EOT + " y" + EOT,
        EOT + read_fixture(SLICES["english"])[:3000] + EOT,
    ]
    for text in texts:
        expected = enc.encode(text, allowed_special="all")
        assert python_ids(tok, text) == expected
        assert compiled_ids(tok, text) == expected
        assert tok.encode(text) == expected


def test_an_encode_never_waits_for_another_threads_load(monkeypatch):
    # Found by the re-check: with the Python path's cost paid, an encode called prepare()
    # while another thread was loading the kernels from the cache, and waited 0.5 s for it
    # (four threads encoding lines: one call each of 0.83-0.87 s).
    monkeypatch.delenv(kernel_start.ENV, raising=False)
    kernel_start.forget()
    tok = Tokenizer.preset("o200k_base")
    text = "中文字符测试" * 30
    monkeypatch.setattr(kernel_start, "rent_paid", lambda: True)
    monkeypatch.setattr(kernel_start, "preparing", lambda: True)
    calls = []
    monkeypatch.setattr(kernel_start, "prepare", lambda *a, **k: calls.append(a) or False)
    assert tok.encode(text) == shipped_tiktoken("o200k_base").encode(text)
    assert calls == []


def test_short_texts_kept_on_the_python_path_do_not_pay_towards_the_load(monkeypatch):
    # Found by the re-check: 93,471 short English lines loaded the kernels (0.46 s) that only
    # 0.7% of them could use.
    monkeypatch.delenv(kernel_start.ENV, raising=False)
    kernel_start.forget()
    counted: list[float] = []
    monkeypatch.setattr(kernel_start, "tally_python_path", counted.append)
    tok = Tokenizer.preset("cl100k_base")
    tok.encode("A short line of English, with \u201cquotes\u201d \u2014 and a dash.")
    assert counted == []
    tok.encode("一行中文，没有多少字。")
    assert len(counted) == 1


# The tokenizer a forked child uses as the parent left it (a pool's arguments are pickled,
# which would give the child a fresh one).
_INHERITED: dict[str, Tokenizer] = {}


def _in_forked_child(text: str) -> tuple[list[int], bool]:
    tok = _INHERITED["tok"]
    return tok.encode(text), tok._encoder.compiled_array(text, tok.specials) is not None


@pytest.mark.skipif(not hasattr(__import__("os"), "register_at_fork"), reason="needs fork")
def test_a_lanes_lock_held_at_a_fork_is_a_new_one_in_the_child():
    """The list of free lanes is guarded by a lock held for microseconds; one that another
    thread held when the process forked stays held in the child, whose every encode then
    waited a second for it and took the Python path, for the child's whole life."""
    import multiprocessing

    tok = Tokenizer.preset("gpt2")
    tok.prepare_bulk()
    text = read_fixture(SLICES["english"])[:3000]
    expected = python_ids(tok, text)
    merger = tok.merger.compiled()
    _INHERITED["tok"] = tok
    merger._lanes_lock.acquire()  # as another thread inside hold() at the fork
    try:
        pool = multiprocessing.get_context("fork").Pool(1)
    finally:
        merger._lanes_lock.release()
    with pool:
        ids, compiled = pool.apply_async(_in_forked_child, (text,)).get(timeout=120)
    assert ids == expected and compiled
    assert tok.encode(text) == expected
