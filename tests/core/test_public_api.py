"""Every name a package promises in ``__all__`` is what its documentation says it is: present,
not a submodule shadowing it, a function where a function is documented, a class where a class
is, a constant of the documented type. The table below is the documentation's word, written
out by hand; a package that gains ``__all__`` or a name must be added here."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import pytest

import bpe_studio

FUNCTION, CLASS, EXCEPTION = "function", "class", "exception"

DOCUMENTED = {
    "bpe_studio": {"MergeStep": CLASS, "Tokenizer": CLASS, "train_bpe": FUNCTION},
    "bpe_studio.core": {
        "GPT2_PATTERN": str,
        "PATTERNS": dict,
        "BpeTrainer": CLASS,
        "CompressionCurve": CLASS,
        "CorpusError": EXCEPTION,
        "EncodeStep": CLASS,
        "MergeNode": CLASS,
        "MergeStep": CLASS,
        "TokenSpan": CLASS,
        "Tokenizer": CLASS,
        "TokenizerLike": CLASS,
        "TokenNotFound": EXCEPTION,
        "ForeignTokenizer": CLASS,
        "open_tokenizer": FUNCTION,
        "TokenizerFileError": EXCEPTION,
        "TrainingCancelled": EXCEPTION,
        "count_file": FUNCTION,
        "count_text": FUNCTION,
        "encode_file": FUNCTION,
        "encode_steps": FUNCTION,
        "infer_special_tokens": FUNCTION,
        "initial_vocab": FUNCTION,
        "iter_merges": FUNCTION,
        "load_merges": FUNCTION,
        "load_vocab": FUNCTION,
        "merge_budget": FUNCTION,
        "merge_tree": FUNCTION,
        "pretokenize": FUNCTION,
        "pretokenizer": FUNCTION,
        "train_bpe": FUNCTION,
        "trainer_from_file": FUNCTION,
        "unreachable_tokens": FUNCTION,
    },
    "bpe_studio.core.formats": {
        "PATTERNS": dict,
        "TokenizerData": CLASS,
        "derive_merges": FUNCTION,
        "pattern_name": FUNCTION,
        "pattern_regex": FUNCTION,
        "read_hf": FUNCTION,
        "read_ranks": FUNCTION,
        "read_tiktoken": FUNCTION,
        "write_hf": FUNCTION,
        "write_tiktoken": FUNCTION,
    },
}


def qt_free_modules():
    """bpe_studio and its modules outside the GUI (importing the GUI would load Qt)."""
    yield bpe_studio
    for info in pkgutil.walk_packages(bpe_studio.__path__, "bpe_studio."):
        if info.name.startswith(("bpe_studio.gui", "bpe_studio.resources")):
            continue
        if info.name == "bpe_studio.__main__":
            continue
        yield importlib.import_module(info.name)


def test_every_all_is_in_the_table():
    with_all = {m.__name__ for m in qt_free_modules() if hasattr(m, "__all__")}
    assert with_all == set(DOCUMENTED)


@pytest.mark.parametrize("package", list(DOCUMENTED))
def test_names_are_what_the_docs_say(package):
    module = importlib.import_module(package)
    documented = DOCUMENTED[package]
    assert sorted(module.__all__) == sorted(documented)
    assert len(set(module.__all__)) == len(module.__all__)
    for name, kind in documented.items():
        obj = getattr(module, name)
        assert not isinstance(obj, types.ModuleType), f"{package}.{name} is a module"
        if kind == FUNCTION:
            assert inspect.isfunction(obj), f"{package}.{name} is not a function"
        elif kind in (CLASS, EXCEPTION):
            assert inspect.isclass(obj), f"{package}.{name} is not a class"
            assert issubclass(obj, Exception) == (kind == EXCEPTION), f"{package}.{name}"
        else:
            assert isinstance(obj, kind), f"{package}.{name} is not a {kind.__name__}"
        if kind in (FUNCTION, CLASS, EXCEPTION):
            assert obj.__doc__, f"{package}.{name} has no docstring"


def test_star_import_gives_the_names():
    for package, documented in DOCUMENTED.items():
        namespace: dict[str, object] = {}
        exec(f"from {package} import *", namespace)
        assert set(documented) <= set(namespace)


def test_the_shadowing_bug_is_gone():
    # `core/pretokenize.py` once shadowed the function `pretokenize` with a module.
    from bpe_studio.core import pretokenize

    assert pretokenize("Hello world") == ["Hello", " world"]
