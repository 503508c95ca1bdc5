"""Writing a tokenizer for tiktoken: ``NAME.tiktoken`` (ranks = ids) and its sidecar
``NAME.tiktoken.json`` (:func:`write_tiktoken`), refusing what tiktoken would encode otherwise.
What it leaves out: reading them back (``reading``).
"""

from __future__ import annotations

import binascii
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ...io.atomic import atomic_write_all, output_folder
from ...pretokenization.names import R50K_PATTERN, pattern_name, pattern_regex
from ...pretokenization.specials import looks_special
from ...text.display import cut_repr
from ..base.data import TokenizerData
from .merges import derive_merges
from .pattern_check import pattern_problem
from .sidecar import RANK_COUNT, SIDECAR_FORMAT, SIDECAR_VERSION, sidecar_name

# Where else to save a tokenizer tiktoken files cannot hold, as advice ends (``files``
# knows which formats hold a given one: ``files.holding_formats``).
Elsewhere = Callable[[], str]


def _in_hf() -> str:
    return "save as 'hf', which holds it"


def _ranks_for_tiktoken(data: TokenizerData, elsewhere: Elsewhere = _in_hf) -> dict[bytes, int]:
    """token bytes -> rank for tiktoken: our ids, special tokens left out (tiktoken keeps them
    apart). Raises ValueError when tiktoken could not encode exactly as ``data`` does;
    ``elsewhere`` says where else to save it, where that depends on the tokenizer."""
    if data.added_tokens:
        shown = ", ".join(map(repr, list(data.added_tokens)[:3]))
        raise ValueError(
            f"tiktoken has no added tokens that are not special, as this tokenizer's {shown} "
            "are (always matched, never by allowed_special): save it as 'hf'"
        )
    problem = pattern_problem(data.pattern) or special_tokens_problem(data.special_tokens)
    if problem is not None:
        raise ValueError(problem)
    special_ids = set(data.special_tokens.values())
    for s, idx in data.special_tokens.items():
        if idx in data.vocab and data.vocab[idx] != s.encode("utf-8"):
            raise ValueError(f"special token {s!r}: id {idx} holds {data.vocab[idx]!r}")
    ranks: dict[bytes, int] = {}
    for idx, tok in sorted(data.vocab.items()):
        if idx in special_ids:
            continue
        if tok in ranks:
            raise ValueError(f"ids {ranks[tok]} and {idx} hold the same token {tok!r}")
        ranks[tok] = idx
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ValueError(f"no id for byte 0x{missing[0]:02x}: tiktoken needs all 256 bytes")
    try:
        derived = derive_merges(ranks, lambda r: f"id {r}")
    except ValueError:
        _refuse_a_special_a_merge_makes(data, ranks)
        _refuse_a_token_no_merge_makes(data, ranks, elsewhere)
        raise
    if derived != list(data.merges):
        _refuse_a_special_a_merge_makes(data, ranks)
        _refuse_a_token_no_merge_makes(data, ranks, elsewhere)
        at = next(
            (i for i, (a, b) in enumerate(zip(derived, data.merges)) if a != tuple(b)),
            min(len(derived), len(data.merges)),
        )
        ours = data.merges[at] if at < len(data.merges) else "nothing"
        theirs = derived[at] if at < len(derived) else "nothing"
        raise ValueError(
            f"tiktoken ranks tokens by id and joins parts by the rank of the result, which would "
            f"make merge {at} {theirs!r} where this tokenizer has {ours!r}: its ids must grow with "
            "merge order and every multi-byte token must come from exactly the merge tiktoken finds"
        )
    return ranks


def _refuse_a_special_a_merge_makes(data: TokenizerData, ranks: dict[bytes, int]) -> None:
    """ValueError naming a special token that is also a merge's result, where the merges
    could not be derived: it keeps that ordinary token's id, which tiktoken's ranks then
    lack, so the merge the message would otherwise name is only the consequence."""
    for s, idx in data.special_tokens.items():
        sb = s.encode("utf-8")
        if sb in ranks:
            continue
        made = next((i for i, (a, b) in enumerate(data.merges) if a + b == sb), None)
        if made is not None:
            raise ValueError(
                f"special token {s!r} (id {idx}) is also what merge {made} makes: tiktoken "
                "keeps special tokens out of its ranks, so that token and those built on it "
                "could not be ranked (GPT-2 files hold it, named again on loading: 'gpt2')"
            )


def _refuse_a_token_no_merge_makes(
    data: TokenizerData, ranks: dict[bytes, int], elsewhere: Elsewhere
) -> None:
    """ValueError naming the first ordinary token of several bytes that no merge makes, where
    the merges could not be derived: tiktoken builds each rank from lower ones, so the merge
    or rank the message would otherwise name is only the consequence. Such a token is most
    often a special token read as text (a tokenizer opened with ``no_specials``)."""
    made = {a + b for a, b in data.merges}
    unmade = [(idx, tok) for tok, idx in ranks.items() if len(tok) > 1 and tok not in made]
    if not unmade:
        return
    idx, tok = min(unmade)
    cause = (
        ": it looks like a special token read as ordinary text (as no_specials opens a "
        "tokenizer), which tiktoken holds only as a special token"
        if looks_special(tok.decode("utf-8", errors="replace"))
        else ""
    )
    raise ValueError(
        f"id {idx}: token {cut_repr(tok)} is made by no merge, and tiktoken builds every token "
        f"from lower-ranked ones{cause} ({elsewhere()})"
    )


def special_tokens_problem(special_tokens: Iterable[str]) -> str | None:
    """Why tiktoken would not match these special tokens as this project does; None when it
    would. Known before training: it needs no vocabulary."""
    tokens = list(special_tokens)
    for s in tokens:
        longer = next((t for t in tokens if t != s and t.startswith(s)), None)
        if longer is not None:
            # subtle: tiktoken tries its special tokens in the order of its own hash map,
            # not the longest first, so where both begin it may take either.
            return (
                f"special token {s!r} begins {longer!r}: this tokenizer takes the longer where "
                "both begin, tiktoken the one its hash map lists first"
            )
    return None


def tiktoken_refusal(data: TokenizerData) -> str | None:
    """Why tiktoken files cannot hold ``data`` with its ids (what :func:`write_tiktoken`
    refuses it for), or None when they can."""
    try:
        _ranks_for_tiktoken(data)
    except ValueError as e:
        return str(e)
    return None


def write_tiktoken(
    directory: str | os.PathLike, name: str, data: TokenizerData, elsewhere: Elsewhere = _in_hf
) -> tuple[Path, Path]:
    """Write ``directory/NAME.tiktoken`` (ranks = ids, special tokens left out) and
    ``directory/NAME.tiktoken.json`` (``pat_str``, ``special_tokens``, format and version, the
    number of ranks: ``rank_count``), each
    atomically. ``tiktoken.Encoding(name, pat_str=..., mergeable_ranks=<the file's ranks>,
    special_tokens=...)`` then gives this tokenizer's ids. Returns both paths.

    Raises ValueError when tiktoken cannot represent the tokenizer with the same ids (see
    ``_ranks_for_tiktoken``) or ``name`` is not a plain file name.
    """
    if not name or name != Path(name).name or name.startswith("."):
        raise ValueError(f"tiktoken name {name!r}: must be a plain file name")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # bytes no character spells (a name from a C locale)
        raise ValueError(
            f"tiktoken name {name!r}: is not valid UTF-8, which the sidecar's JSON holds"
        ) from None
    where = os.fspath(Path(directory) / f"{name}.tiktoken")
    try:
        ranks = _ranks_for_tiktoken(data, elsewhere)
    except ValueError as e:
        raise ValueError(f"{where}: cannot write this tokenizer for tiktoken: {e}") from None
    lines = [
        b"%s %d\n" % (binascii.b2a_base64(tok, newline=False), rank)
        for tok, rank in sorted(ranks.items(), key=lambda item: item[1])
    ]
    name_of = pattern_name(data.pattern)
    sidecar = {
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "name": name,
        # tiktoken's own spelling of GPT-2's pattern (the same splits; see ``pattern``).
        "pat_str": R50K_PATTERN if name_of == "gpt2" else pattern_regex(data.pattern),
        "special_tokens": dict(sorted(data.special_tokens.items(), key=lambda item: item[1])),
        # The rank file's lines: one cut short at a line's end (an interrupted copy) is
        # otherwise a smaller tokenizer that loads without a word.
        RANK_COUNT: len(lines),
    }
    text = json.dumps(sidecar, ensure_ascii=False, indent=2) + "\n"
    with output_folder(directory) as out:
        rank_path, sidecar_path = out / f"{name}.tiktoken", out / sidecar_name(name)
        atomic_write_all([(rank_path, b"".join(lines)), (sidecar_path, text.encode("utf-8"))])
    return rank_path, sidecar_path
