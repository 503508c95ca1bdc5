"""The space a pre-tokenizer puts before each piece an earlier step of it cut: text the
model sees that the corpus does not hold (" Zq" where the corpus has "42Zq").

What it does: :func:`own_piece_cut` (a pipeline this project reads: a Sequence whose last
step, ByteLevel, has ``add_prefix_space`` after a step that cuts) and :func:`foreign_piece_cut`
(a Sequence ``tokenizers`` runs with a ByteLevel that adds a prefix space, or a Metaspace
whose ``prepend_scheme`` is "always" or "first", among its steps) give a :data:`Cut`: normalized
text to the runs of it the model is given as text, each piece with the space (or ``▁``) put
before it, the runs apart where the pre-tokenizer drops text between two pieces (as
``encoded_text._kept_runs`` keeps them apart). Such a file's scan pre-tokenizes the text it
reads; a file whose prefix space goes before the whole text (ByteLevel or Metaspace as the
first step to cut, GPT-2's shape) is read without that (``encoded_text``). What it leaves
out: added tokens and normalizers (``encoded_text``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..formats.base.byte_chars import unicode_to_bytes
from ..formats.hf.pipeline import HfPipeline
from ..formats.hf.pre_tokenizers import apply_steps, step_texts

# Normalized text, and whether it starts the text given (a record, a file: where Metaspace's
# "first" puts its mark), to the runs of it a model is given as text.
Cut = Callable[[str, bool], list[str]]
# A piece as the model is given it, and the characters of the normalized text it holds.
ShownPiece = tuple[str, int, int]


def own_piece_cut(pipeline: HfPipeline) -> Cut | None:
    """The runs a pipeline read here gives its model where its ByteLevel (always the last
    step) puts a space before each piece an earlier step cut (None where no step does, or
    no step cuts before it: ``encoded_text.prefixes_stretches`` then)."""
    steps = pipeline.steps
    cutting = [s for s in steps if not s.passes_whole]
    if not steps or not steps[-1].prefix_space or cutting[0] is steps[-1]:
        return None
    before = steps[:-1]
    if not pipeline.removes_text:
        # Every character is in a piece: one run, the pieces' texts (in C, a findall a step).
        def joined(text: str, start: bool) -> list[str]:
            return ["".join(_spaced(p) for p in step_texts(before, text))]

        return joined

    def cut(text: str, start: bool) -> list[str]:
        pieces = apply_steps(before, [(text, 0, 0)])
        return joined_runs(len(text), [(_spaced(p), s, s + len(p)) for p, s, _ in pieces])

    return cut


def _spaced(piece: str) -> str:
    return piece if piece.startswith(" ") else " " + piece


def foreign_piece_cut(pre: Any) -> Cut | None:
    """The runs ``tokenizers`` gives a model whose pre-tokenizer ``pre`` is a Sequence with a
    step that puts a space before each piece it is given (ByteLevel's add_prefix_space,
    Metaspace's "always" or "first"), as its own ``pre_tokenize_str`` gives the pieces: their
    texts joined, ByteLevel's alphabet read back as the bytes it stands for; a Metaspace's
    ``▁`` is left as it is (``encoded_text`` reads it as a space where the file does). None
    for any other pre-tokenizer."""
    if pre is None:
        return None
    spec = json.loads(pre.__getstate__())
    if spec.get("type") != "Sequence":
        return None
    steps = list(_flat(spec.get("pretokenizers") or []))
    first = [s for s in steps if _metaspace(s) == "first"]
    if not first and not any(map(_prefixes, steps)):
        return None
    byte_level = any(s.get("type") == "ByteLevel" for s in steps)
    mark = str(first[0].get("replacement", "\u2581")) if first else ""

    def cut(text: str, start: bool) -> list[str]:
        pieces = [(p, s, e) for p, (s, e) in pre.pre_tokenize_str(text)]
        if mark and not start and pieces:
            # subtle: tokenizers prepends "first"'s mark to the piece at the input's offset
            # 0 only; each text given here starts at 0, so the mark it added there is taken
            # off unless the text starts the input (one character more than the piece holds).
            p, s, e = pieces[0]
            if s == 0 and p.startswith(mark) and len(p) == e - s + 1:
                pieces[0] = (p[1:], s, e)
        runs = joined_runs(len(text), pieces)
        return [_read_bytes(run) for run in runs] if byte_level else runs

    return cut


def _flat(steps: Iterable[Any]) -> Iterable[dict[str, Any]]:
    """The steps of a Sequence's JSON, those of a Sequence inside it in its place."""
    for step in steps:
        if isinstance(step, dict) and step.get("type") == "Sequence":
            yield from _flat(step.get("pretokenizers") or [])
        elif isinstance(step, dict):
            yield step


def _prefixes(step: dict[str, Any]) -> bool:
    """Whether a pre-tokenizer step's JSON puts a space before each piece it is given."""
    if step.get("type") == "ByteLevel":
        return bool(step.get("add_prefix_space"))
    return _metaspace(step) == "always"


def _metaspace(step: dict[str, Any]) -> object:
    """A Metaspace step's prepend_scheme (None for another step)."""
    return step.get("prepend_scheme") if step.get("type") == "Metaspace" else None


def _read_bytes(run: str) -> str:
    """A run of ByteLevel's alphabet as the text its bytes spell (a byte a dropped piece cut
    off its character read as U+FFFD, which no token holds)."""
    table = unicode_to_bytes()
    return bytes(table.get(c, 0x3F) for c in run).decode("utf-8", "replace")


def joined_runs(length: int, pieces: Sequence[ShownPiece]) -> list[str]:
    """The pieces' texts joined into runs, a new run where the characters between two pieces
    (of a normalized text of ``length`` characters) are in none: dropped (one more run than
    stretches dropped, an empty one where the text starts or ends with one, as
    ``encoded_text._kept_runs`` gives them).

    >>> joined_runs(8, [(" ab", 0, 2), (" c", 2, 3), (" 12", 6, 8)])
    [' ab c', ' 12']
    >>> joined_runs(3, [])
    ['', '']
    """
    runs: list[str] = []
    run: list[str] = []
    end = 0  # where the run so far ends
    for shown, s, e in pieces:
        if s > end:  # the text between is dropped
            runs.append("".join(run))
            run = []
        run.append(shown)
        end = max(end, e)
    runs.append("".join(run))
    return runs if end == length else [*runs, ""]
