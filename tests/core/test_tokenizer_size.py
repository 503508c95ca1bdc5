"""The ``Tokenizer`` class reads in one sitting (issue 35): at most 400 lines, as tiktoken's
``Encoding`` is, with table building in ``building``, the encoding engine's rules in
``encoder`` and tiktoken's thin names in ``tiktoken_names``; and moving them out kept every
public method on the class.
"""

from __future__ import annotations

import ast
import inspect

import bpe_studio.core.encode.tokenizer as tokenizer_module
from bpe_studio.core import Tokenizer, TokenizerLike

LIMIT = 400


def _class_lines(source: str, name: str) -> int:
    tree = ast.parse(source)
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1


def test_the_tokenizer_class_is_at_most_400_lines():
    lines = _class_lines(inspect.getsource(tokenizer_module), "Tokenizer")
    assert lines <= LIMIT, f"Tokenizer is {lines} lines; move helper logic to its module"


def test_the_measure_counts_a_class_from_its_line_to_its_last():
    source = "x = 1\nclass A:\n    def f(self):\n        return 1\n\n    y = 2\nz = 3\n"
    assert _class_lines(source, "A") == 5


def test_every_member_of_the_interface_is_on_the_tokenizer():
    tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<|endoftext|>"])
    wanted = {name for name in vars(TokenizerLike) if not name.startswith("_")} | {"__len__"}
    missing = sorted(name for name in wanted if not hasattr(tok, name))
    assert missing == []
    assert len(wanted) > 25  # the protocol's members were read, not an empty set


def test_the_names_over_encode_and_decode_still_work():
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"ab"}
    tok = Tokenizer(vocab, [(b"a", b"b")], ["<s>"])
    assert tok.encode_ordinary("ab<s>") == [256, 60, 115, 62]
    assert tok.encode_batch(["ab", "<s>"], allowed_special="all") == [[256], [257]]
    assert tok.encode_ordinary_batch(["ab"]) == [[256]]
    assert tok.decode_batch([[256, 99]]) == ["abc"]
    assert tok.decode_tokens_bytes([256, 257]) == [b"ab", b"<s>"]
    assert (tok.n_vocab, tok.max_token_value, len(tok)) == (258, 257, 258)
    assert tok.special_tokens_set == {"<s>"}
    assert tok.encode_single_token("<s>") == 257
