"""A ``tokenizer.json`` that does to text what tiktoken's and GPT-2's files cannot say is
refused for them with its own reason, naming the file that would have been written: a
normalizer, an added token's flag, added tokens looked for in two passes, a pre-tokenizer of
more than one regex. Each file is built by ``tokenizers`` itself, and read back by it."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import tokenizers
from foreign_files import LLAMA3_REGEX, one_split
from tokenizers import AddedToken, Regex, normalizers, pre_tokenizers

from bpe_studio.core import Tokenizer

TEXT = "Hello <mask> world <x>x <n> Ｃａｆé  12345 don't\n"


def _normalizer(tok: tokenizers.Tokenizer) -> None:
    tok.normalizer = normalizers.NFKC()


def _lstrip(tok: tokenizers.Tokenizer) -> None:
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True)])


def _rstrip_single_word(tok: tokenizers.Tokenizer) -> None:
    tok.add_special_tokens([AddedToken("<x>", rstrip=True, single_word=True, special=True)])


def _two_passes(tok: tokenizers.Tokenizer) -> None:
    tok.add_tokens([AddedToken("<n>", normalized=True, special=False)])


def _two_splits(tok: tokenizers.Tokenizer) -> None:
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(r"\p{N}{1,3}"), behavior="isolated"),
            pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


CASES: dict[str, tuple[Callable[[tokenizers.Tokenizer], None], str]] = {
    "normalizer": (_normalizer, "its normalizer (NFKC) changes the text first"),
    "lstrip": (_lstrip, "added token '<mask>' has lstrip"),
    "rstrip": (_rstrip_single_word, "added token '<x>' has rstrip and single_word"),
    "two passes": (
        _two_passes,
        "added tokens '<|endoftext|>' (normalized: false) and '<n>' (normalized: true) are "
        "looked for in two passes",
    ),
    "pre_tokenizer": (
        _two_splits,
        "its pre_tokenizer (Sequence of Split, Split, ByteLevel) splits text otherwise than "
        "one regex does",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("fmt", ["tiktoken", "gpt2"])
def test_each_reason_is_said(tmp_path, case, fmt):
    change, reason = CASES[case]
    plain = one_split(tmp_path / "plain", LLAMA3_REGEX)
    tok = tokenizers.Tokenizer.from_file(str(plain))
    change(tok)
    path = tmp_path / "changed" / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    assert tokenizers.Tokenizer.from_file(str(path)).encode(TEXT).ids  # a file it reads
    loaded = Tokenizer.load(path)
    first = "vocab.json" if fmt == "gpt2" else "tokenizer.tiktoken"
    expected = (
        f"{tmp_path / 'out' / first}: format '{fmt}' cannot hold this tokenizer: {reason}: "
        "only a tokenizer.json can say that (save it as 'hf')"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        loaded.save(tmp_path / "out", format=fmt)
    assert not (tmp_path / "out").exists()
