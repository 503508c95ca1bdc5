"""What the app calls a tokenizer's file: the model it is of, not "tokenizer.json".

What it does: :func:`tokenizer_name` names a tokenizer file (or a GPT-2 folder) by the model
it belongs to, found where the file says it most surely: the Hugging Face cache's folder
(``…/models--ORG--NAME/snapshots/COMMIT/tokenizer.json``: "ORG/NAME"), the name the model's
``tokenizer_config.json`` or ``config.json`` beside it gives (``name_or_path``,
``_name_or_path``), the folder holding a file whose name every model shares
("Llama-3.1-8B"), or else the file's own name ("o200k_base.tiktoken"). Every picker, the
Compare and Report columns, the CSV, the status line and the charts name a file this way
(:func:`named_file` adds the file's own name where a message speaks of the file).
:func:`distinct_name` makes a name unique among names taken, with as much of the file's path
as tells them apart ("a/Llama-3.1-8B", "b/Llama-3.1-8B"); :class:`FileNames` (the app model
holds one) gives each file the name it got first, so every view calls it the same.
:func:`tokenizer_source` is what a chosen file stands for (a GPT-2 ``vocab.json`` for its
folder). Plain Python; a file's configs are read once.
What it leaves out: reading the tokenizer (``jobs.loader``, ``core.formats``).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from functools import lru_cache
from pathlib import Path

from ...core.formats.files import GPT2_FILE_NAMES, is_gpt2_vocabulary, tokenizers_in

# File names every model's files share: the folder (or its config) names the model.
GENERIC_NAMES = frozenset(
    {
        "tokenizer.json",
        "vocab.json",
        "merges.txt",
        "tokenizer.model",
        "encoder.json",
        "vocab.bpe",
        "tokenizer.tiktoken",
    }
)
_CONFIGS = (("tokenizer_config.json", "name_or_path"), ("config.json", "_name_or_path"))
_CONFIG_BYTES = 1 << 20  # a model's config is small; a bigger file is not one


def tokenizer_source(path: Path) -> Path:
    """What a chosen file stands for: a GPT-2 ``vocab.json`` (or GPT-2's ``gpt2_vocab.json``)
    for its folder, which holds its merges too and reads as that pair; a folder holding one
    tokenizer of another format (a ``tokenizer.json``, a rank file: as Save writes them) for
    that file, which is what loading the folder reads; any other file for itself. (Any
    ``*vocab*.json`` stood for its folder: a tokenizer.json saved as ``qwen2_vocab.json``
    showed the ``tokenizer.json`` beside it, and ``my_vocab.json`` + ``my_merges.txt``, which
    the folder does not read, failed naming the folder. A folder opened, then the file in
    it, were two tokenizers of two names, "stories-1k" and "runs/stories-1k".)"""
    path = Path(path)
    pair = dict(GPT2_FILE_NAMES).get(path.name)
    if pair is not None and (path.parent / pair).is_file() and is_gpt2_vocabulary(path):
        return path.parent
    if path.is_dir():
        try:
            found = tokenizers_in(path)
        except OSError:  # the load says why it cannot read the folder
            return path
        if len(found) == 1 and tokenizer_source(found[0]) == found[0]:
            return found[0]
    return path


def hub_repo(path: Path) -> str | None:
    """ "ORG/NAME" for a file in the Hugging Face cache (``models--ORG--NAME/snapshots/…``)."""
    parts = path.parts
    for i, part in enumerate(parts[:-1]):
        if part.startswith("models--") and parts[i + 1] == "snapshots":
            org_name = part.removeprefix("models--").split("--")
            if len(org_name) >= 2 and all(org_name):
                return f"{org_name[0]}/{'--'.join(org_name[1:])}"
    return None


def _configured_name(folder: Path) -> str | None:
    """The model's name its configs beside the file give, if one does."""
    for file_name, key in _CONFIGS:
        config = folder / file_name
        try:
            if config.stat().st_size > _CONFIG_BYTES:
                continue
            data = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        name = data.get(key) if isinstance(data, dict) else None
        # A saved model often names the folder it was saved from ("./out", "/tmp/x"): no name.
        if isinstance(name, str) and name.strip() and not name.startswith((".", "/", "~")):
            return name.strip().rstrip("/")
    return None


@lru_cache(maxsize=256)
def tokenizer_name(path: Path) -> str:
    """The name the app shows for the tokenizer in ``path`` (a file, or a GPT-2 folder)."""
    path = Path(path)
    repo = hub_repo(path)
    if repo is not None:
        return repo
    if path.is_dir():
        return _configured_name(path) or path.name or str(path)
    if path.name.lower() not in GENERIC_NAMES:
        return path.name
    folder = path.parent
    return _configured_name(folder) or folder.name or path.name


def named_file(path: Path) -> str:
    """The model's name with the file's own after it, where they differ: "meta-llama/Llama-3.1-8B
    (tokenizer.json)"; for messages that speak of the file."""
    name = tokenizer_name(Path(path))
    own = Path(path).name
    return name if name == own else f"{name} ({own})"


def distinct_name(name: str, path: Path, taken: Collection[str]) -> str:
    """``name``, or, when another file has it already, the shortest end of ``path``'s folders
    that tells it apart ("b/Llama-3.1-8B"); numbered as a last resort."""
    if name not in taken:
        return name
    folders = [p for p in Path(path).parent.parts if p not in ("/", "")]
    if Path(path).name.lower() in GENERIC_NAMES and folders:
        folders = folders[:-1]  # the last folder is the name already
    for n in range(1, len(folders) + 1):
        longer = "/".join([*folders[-n:], name])
        if longer not in taken:
            return longer
    number = 2
    while f"{name} ({number})" in taken:
        number += 1
    return f"{name} ({number})"


class FileNames:
    """Each tokenizer file's name in the app, distinct from every other file's, and the same
    wherever it is shown (the first name a file gets stays its name).

    >>> names = FileNames()
    >>> names.name(Path("/a/Llama/tokenizer.json")), names.name(Path("/b/Llama/tokenizer.json"))
    ('Llama', 'b/Llama')
    """

    def __init__(self) -> None:
        self._names: dict[Path, str] = {}

    def name(self, path: Path) -> str:
        source = tokenizer_source(Path(path))
        name = self._names.get(source)
        if name is None:
            taken = set(self._names.values())
            name = self._names[source] = distinct_name(tokenizer_name(source), source, taken)
        return name
