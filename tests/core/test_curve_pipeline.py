"""CompressionCurve of a ``tokenizer.json`` that normalizes: the text is cut as the file's
pipeline cuts it (normalizers, ByteLevel with its prefix space, added tokens), so the count
after ``k`` merges is what ``tokenizers`` itself encodes with a copy of the file cut to its
first ``k`` merges, and after the last merge what it encodes with the file.

Both oracles are ``tokenizers``: the files are trained and encoded by it, and the cut copies
are written here from the file's JSON (its merges and the vocabulary entries they make).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from core_helpers import EOT, FIXTURES

from bpe_studio.core import CompressionCurve, MergeStep, Tokenizer

tokenizers = pytest.importorskip("tokenizers")

ADDED = "once upon"  # an added token that is not special, looked for in normalized text
# Text the normalizers change: capitals, compatibility forms NFKC folds ("ﬁ", full-width
# letters, circled digits), a decomposed "é" it composes; the added token in capitals.
ODD = "Ｈｅｌｌｏ ﬁne ① café Once Upon a TIME\nONCE UPON "


def _measured() -> str:
    stories = (FIXTURES / "tinystories_slice.txt").read_text(encoding="utf-8")
    return stories[200_000:260_000] + EOT + ODD * 20 + EOT + stories[260_000:262_000]


def _normalizer(kind: str):
    n = tokenizers.normalizers
    return {
        "lowercase": n.Lowercase(),
        "nfkc": n.NFKC(),
        "sequence": n.Sequence([n.NFKC(), n.Lowercase()]),
    }[kind]


def _train(kind: str, path: Path) -> None:
    text = (FIXTURES / "tinystories_slice.txt").read_text(encoding="utf-8")[:200_000]
    pre = tokenizers.pre_tokenizers
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.normalizer = _normalizer(kind)
    tok.pre_tokenizer = pre.ByteLevel(add_prefix_space=True)
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=700, special_tokens=[EOT], initial_alphabet=pre.ByteLevel.alphabet()
    )
    tok.train_from_iterator([text], trainer)
    tok.add_tokens([tokenizers.AddedToken(ADDED, normalized=True)])
    tok.save(str(path))


def _cut_to(path: Path, k: int, out: Path) -> Path:
    """A copy of the file at ``path`` with its first ``k`` merges only, and without the
    vocabulary entries the later merges make."""
    obj = json.loads(path.read_text(encoding="utf-8"))
    model = obj["model"]
    merges = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
    made = {a + b: rank for rank, (a, b) in enumerate(merges)}
    model["merges"] = merges[:k]
    model["vocab"] = {t: i for t, i in model["vocab"].items() if made.get(t, -1) < k}
    out.write_text(json.dumps(obj), encoding="utf-8")
    return out


@pytest.mark.parametrize("kind", ["lowercase", "nfkc", "sequence"])
def test_curve_counts_what_tokenizers_encodes_through_the_normalizer(kind, tmp_path):
    path = tmp_path / "tokenizer.json"
    _train(kind, path)
    text = _measured()
    tok = Tokenizer.load(path)
    assert tok.hf_pipeline is not None and ADDED in tok.added_tokens
    merges = [MergeStep(r, a, b, -1, 0) for r, (a, b) in enumerate(tok.merges)]
    n = len(merges)
    assert n > 300

    curve = CompressionCurve.of_tokenizer(text, tok)
    assert curve.bytes == len(text.encode("utf-8"))
    counts = [curve.tokens] + [curve.apply(step) for step in merges]

    whole = tokenizers.Tokenizer.from_file(str(path))
    assert counts[n] == len(whole.encode(text, add_special_tokens=False).ids)
    for k in (0, 1, 7, 60, n // 2, n - 1):
        cut = tokenizers.Tokenizer.from_file(str(_cut_to(path, k, tmp_path / f"cut{k}.json")))
        assert counts[k] == len(cut.encode(text, add_special_tokens=False).ids), k


def test_curve_without_a_pipeline_is_cut_by_the_pattern(gpt2_tokenizer):
    # GPT-2's files: no pipeline; the tokenizer's curve is the pattern's, as before.
    text = (FIXTURES / "mixed_web_slice.txt").read_text(encoding="utf-8")[:20_000] + EOT
    tok = gpt2_tokenizer
    assert tok.hf_pipeline is None
    ours = CompressionCurve.of_tokenizer(text, tok)
    plain = CompressionCurve(text, [EOT])
    steps = [MergeStep(r, a, b, -1, 0) for r, (a, b) in enumerate(tok.merges[:3000])]
    assert ours.extend(steps) == plain.extend(steps) == len(tok.truncated(3000).encode(text))


def test_curve_reads_an_ordinary_tokens_match_as_text():
    # "<|x<t>" is matched (ordinary) before the special "<t>" inside it can be: its six
    # bytes are text, then one special token (no merges: one token a byte).
    curve = CompressionCurve("<|x<t><t>", ["<t>"], ordinary=["<|x<t>"])
    assert curve.tokens == 6 + 1
    assert CompressionCurve("<|x<t><t>", ["<t>"]).tokens == 3 + 2
