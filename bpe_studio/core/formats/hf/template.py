"""The tokens a ``tokenizer.json``'s post-processor puts around every text.

What it does: :func:`read_template` reads ``TemplateProcessing`` (its ``single`` template),
``BertProcessing`` and ``RobertaProcessing`` (``cls`` text ``sep``), alone or in a
``Sequence`` with ``ByteLevel`` (which only moves offsets), into a :class:`Template`: the ids
before and after the text's own, as ``tokenizers`` adds them with ``add_special_tokens=True``.
What it leaves out: the ``pair`` template (this project encodes one text at a time), type ids,
and truncation and padding (refused by the reader).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Template:
    """Ids a post-processor adds before and after a text's own tokens.

    >>> t = Template((1,), (2,), "<s> $A </s>")
    >>> t.apply([7, 8])
    [1, 7, 8, 2]
    """

    before: tuple[int, ...]
    after: tuple[int, ...]
    text: str  # the template as tokenizers writes it, e.g. "<|begin_of_text|> $A"
    spec: Any = field(default=None, compare=False, repr=False)  # the post_processor object
    # Each id of before and after with the token the post-processor names it by.
    named: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)

    def apply(self, ids: list[int]) -> list[int]:
        return [*self.before, *ids, *self.after]


def _template_processing(obj: Mapping[str, Any], where: str) -> Template:
    specials = obj.get("special_tokens") or {}
    before: list[int] = []
    after: list[int] = []
    words: list[str] = []
    named: list[tuple[str, int]] = []
    seen_text = False
    for i, item in enumerate(obj.get("single") or []):
        if isinstance(item, dict) and "Sequence" in item:
            if seen_text or item["Sequence"].get("id") != "A":
                raise ValueError(f"{where}.single[{i}]: only one sequence, $A, is supported")
            seen_text = True
            words.append("$A")
            continue
        name = item.get("SpecialToken", {}).get("id") if isinstance(item, dict) else None
        entry = specials.get(name) if isinstance(name, str) else None
        ids = entry.get("ids") if isinstance(entry, dict) else None
        if not isinstance(ids, list) or not all(isinstance(x, int) for x in ids):
            raise ValueError(f"{where}.single[{i}]: {item!r} names no special token with ids")
        (after if seen_text else before).extend(ids)
        words.append(str(name))
        tokens = entry.get("tokens") if isinstance(entry, dict) else None
        if not isinstance(tokens, list) or len(tokens) != len(ids):
            tokens = [name] * len(ids)
        named += zip(map(str, tokens), ids)
    if not seen_text:
        raise ValueError(f"{where}.single: has no $A (the text)")
    return Template(tuple(before), tuple(after), " ".join(words), named=tuple(named))


def _cls_sep(obj: Mapping[str, Any], where: str) -> Template:
    try:
        (cls_text, cls_id), (sep_text, sep_id) = obj["cls"], obj["sep"]
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{where}: expected cls and sep as [token, id]") from None
    named = ((str(cls_text), int(cls_id)), (str(sep_text), int(sep_id)))
    return Template((int(cls_id),), (int(sep_id),), f"{cls_text} $A {sep_text}", named=named)


def unknown_id(template: Template, ids: Container[int]) -> str | None:
    """Why ``template`` cannot be held: an id it adds that is none of ``ids`` (the
    vocabulary's); None when each is one. ``tokenizers`` adds such an id all the same,
    which no token decodes."""
    for token, idx in template.named:
        if idx not in ids:
            return (
                f"{token!r} is added as id {idx:,}, which no token of the vocabulary has: "
                "tokenizers would give an id that nothing decodes (set its ids to the token's "
                "own, in model.vocab or added_tokens)"
            )
    return None


def read_template(obj: Any, where: str = "post_processor") -> Template | None:
    """The template of a ``post_processor`` object; None when it adds nothing. Raises
    ValueError naming the component for one that is not reproduced here."""
    template = _read(obj, where)
    return None if template is None else replace(template, spec=obj)


def _read(obj: Any, where: str) -> Template | None:
    if obj is None:
        return None
    kind = obj.get("type") if isinstance(obj, dict) else None
    if kind == "ByteLevel":
        return None
    if kind == "TemplateProcessing":
        template = _template_processing(obj, where)
        return template if template.before or template.after else None
    if kind in ("BertProcessing", "RobertaProcessing"):
        return _cls_sep(obj, where)
    if kind == "Sequence":
        found: Template | None = None
        for i, step in enumerate(obj.get("processors") or []):
            step_template = _read(step, f"{where}.processors[{i}]")
            if step_template is not None:
                if found is not None:
                    raise ValueError(f"{where}.processors[{i}]: a second template")
                found = step_template
        return found
    raise ValueError(f"{where}: {kind or obj!r} is not supported")
