"""The presets' names and settings: GPT-2, cl100k_base (GPT-4) and o200k_base (GPT-4o), with the
pattern and special tokens tiktoken publishes for each.

What it does: :data:`PRESETS` lists them, :func:`preset_name` reads the names users bring
("GPT-4o", "cl100k"), :func:`preset_settings` gives a preset's pattern name and special tokens,
:func:`preset_label` names one for a menu, :data:`PRESET_PREFIX` marks a source as a preset.
What it leaves out: the presets' files (``presets`` reads them).
"""

from __future__ import annotations

from ...pretokenization.names import ALIASES, alias_key

EOT = "<|endoftext|>"
# Each preset's model (the first OpenAI model published with it, as people name it), and its
# pattern name and special tokens as tiktoken_ext/openai_public.py gives them.
_PRESETS: dict[str, tuple[str, str, dict[str, int]]] = {
    "gpt2": ("GPT-2", "gpt2", {EOT: 50256}),
    "cl100k_base": (
        "GPT-4",
        "cl100k",
        {
            EOT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": ("GPT-4o", "o200k", {EOT: 199999, "<|endofprompt|>": 200018}),
}
PRESETS: tuple[str, ...] = tuple(_PRESETS)
# A source written "preset:NAME" names a preset even where a path NAME exists (as "hf:" names
# a Hub model); the app's pickers key presets the same way.
PRESET_PREFIX = "preset:"
# tiktoken's encodings that no preset holds (alias_key spellings): p50k's tokens differ from
# GPT-2's although its pattern is GPT-2's; o200k_harmony (gpt-oss) adds special tokens.
UNBUNDLED = ("p50k", "o200kharmony")
_BY_PATTERN = {pattern: name for name, (_, pattern, _) in _PRESETS.items()}


def preset_name(word: str) -> str | None:
    """The preset a user means by ``word``: a preset's name, or another name of its encoding
    or of a model that uses it, spelt as the patterns take them (``pattern.ALIASES``); else
    None. p50k_base splits text as GPT-2 does but holds other tokens, so it names no preset.

    >>> preset_name("GPT-4o"), preset_name("cl100k"), preset_name("r50k_base"), preset_name("p50k")
    ('o200k_base', 'cl100k_base', 'gpt2', None)
    """
    if word in _PRESETS:
        return word
    key = alias_key(word)
    if key.startswith("p50k"):
        return None
    return _BY_PATTERN.get(ALIASES.get(key, ""))


def checked_preset_name(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f'a preset is named by a str ("gpt2", "o200k_base"), not {name!r}')
    preset = preset_name(name)
    if preset is None:
        unbundled = alias_key(name).startswith(UNBUNDLED)
        raise ValueError(
            (
                f"{name!r} is a tiktoken encoding that is not bundled: load its .tiktoken "
                "rank file instead (Tokenizer.load(path, pattern=...)); "
                if unbundled
                else f"unknown preset {name!r}; "
            )
            + f"the presets are {', '.join(PRESETS)} (also named cl100k, gpt-4, o200k, "
            "gpt-4o, r50k_base)"
        )
    return preset


def preset_settings(name: str) -> tuple[str, dict[str, int]]:
    """The pattern name and the special tokens (token -> id) of the preset ``name``.

    >>> preset_settings("o200k_base")
    ('o200k', {'<|endoftext|>': 199999, '<|endofprompt|>': 200018})
    """
    _, pattern, special_tokens = _PRESETS[checked_preset_name(name)]
    return pattern, dict(special_tokens)


def preset_label(name: str) -> str:
    """The preset ``name`` as a menu offers it: the model it is known by, then the encoding's
    name where that says something more.

    >>> [preset_label(name) for name in PRESETS]
    ['GPT-2', 'GPT-4 (cl100k_base)', 'GPT-4o (o200k_base)']
    """
    name = checked_preset_name(name)
    model = _PRESETS[name][0]
    return model if alias_key(model) == alias_key(name) else f"{model} ({name})"
