"""The headless commands: each one's name, its line in ``bpe-studio --help`` and its
description. The command line builds its subcommands from this table (``cli.parser``); the
app's no-display message names them (``gui.app``). It sits above both and imports nothing, so
that neither imports the other.
"""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "train": (
        "train a tokenizer headless",
        "Train a byte-level BPE tokenizer on CORPUS (several files count as one corpus) and "
        "write it into DIR: vocab.json + merges.txt by default.",
    ),
    "encode": (
        "encode a text file to a NumPy array of ids",
        "Encode UTF-8 text to a 1-D .npy array of token ids (uint16 when every id fits, "
        "else uint32).",
    ),
    "decode": (
        "decode a NumPy array of ids back to text",
        "Write the exact bytes a 1-D .npy array of ids stands for.",
    ),
    "inspect": (
        "what a tokenizer's vocabulary is made of, how a corpus uses it",
        "Report what the vocabulary of SRC is made of (its tokens by byte length and by "
        "category: partial UTF-8, whitespace, digits, punctuation/symbols, letters by Unicode "
        "script, mixed; its unreachable tokens); with --corpus, how a corpus uses it (each "
        "token's count, the tokens it never uses, under-trained candidates); with --against, "
        "how many tokens another tokenizer shares with it. A readable summary on stdout, or "
        "one JSON object with --json.",
    ),
    "convert": (
        "convert a tokenizer between GPT-2, Hugging Face and tiktoken files",
        "Write the tokenizer SOURCE names in another format, with the same ids for every "
        "text. DIR is checked before anything is read; the files written are named on stderr.",
    ),
}


def headless_commands() -> str:
    """The commands that need no display, as the no-display message lists them."""
    names = [f"`bpe-studio {name}`" for name in COMMANDS]
    return ", ".join(names[:-1]) + f" and {names[-1]}"
