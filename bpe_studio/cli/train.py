"""``bpe-studio train``: train a tokenizer headless and write it (``vocab.json`` +
``merges.txt`` by default, or ``--format hf|tiktoken``).

What it does: checks the corpus files, the vocabulary size (room for one merge at least) and
the output location (the rule in ``output``) first, so a bad ``--out`` fails in a second, not
after the whole run (the pattern is checked by the parser); copies a corpus given as ``-`` or
a pipe to a temporary file (``inputs``); pre-tokenizes the corpus files as one corpus and
merges, with progress bars on stderr, refuses to write
anything when nothing was learned (an empty corpus, one without pairs, an interrupt before the
first merge), and ends with a summary on stderr. Ctrl-C during merging keeps the merges made
so far and writes them (exit 130). Merges that ``--out`` cannot take once they are learned (a
full disk) are saved in a private folder in the temporary folder instead, which the error
names. What it leaves out: the training itself (``core.train.trainer``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ..core import BpeTrainer, Tokenizer, trainer_from_file
from ..core.corpus.cluster_address import ClusterError
from ..core.corpus.records import nothing_to_merge
from ..core.corpus.sources import (
    CorpusFile,
    changes_first,
    check_counted_once,
    is_glob_or_url,
    twice_said,
)
from ..core.corpus.tasks import corpus_files
from ..core.formats.files import DEFAULT_NAME, format_problem
from ..core.formats.hf.tokenizer_json import (
    TOKEN_HELD_ELSEWHERE,
    braced_properties,
    split_problem,
)
from ..core.formats.tiktoken.pattern_check import held_elsewhere
from ..core.io.interrupts import held_interrupts, raise_dropped
from ..core.pretokenization.names import pattern_name, shown_pattern
from ..core.pretokenization.specials import (  # the app's default too
    DEFAULT_SPECIAL_TOKEN,
    refuse_single_bytes,
)
from ..core.text.display import plural, quoted, readable_cut
from ..core.train.merge_engine import CompiledEngineUnavailable
from ..core.train.vocab import BYTE_TOKENS, first_merge_id, merge_budget, vocab_size_problem
from .convert import (
    NotWritten,
    check_tokenizer_out,
    files_for,
    gpt2_notes,
    others_note,
    save,
)
from .inputs import (
    STDIN,
    check_input,
    check_not_records,
    check_stdin_once,
    input_files,
    input_name,
    is_regular,
    local_inputs,
    records,
    stdin_input,
)
from .output import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CliError,
    in_cli_words,
    is_stream,
    numba_interrupts,
    one_line,
    out_of_memory,
    say,
)
from .parser import refuse_empty_special_token
from .progress import ProgressBar
from .termination import came


def peak_memory_mb() -> float | None:
    """Peak resident memory of this process and its finished children, in MB."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale
    return max(own, kids) / 1e6


def special_tokens(args: argparse.Namespace) -> list[str]:
    """``--special-token`` values, else the default; none with ``--no-special-tokens``."""
    if args.no_special_tokens:
        return []
    refuse_empty_special_token(args)
    try:
        refuse_single_bytes(args.special_token)
    except ValueError as e:
        raise CliError(f"--special-token: {e}", EXIT_USAGE) from None
    # A token named twice is one token (as train_bpe counts it), in the order first named.
    if not args.special_token:
        return [DEFAULT_SPECIAL_TOKEN]
    return list(dict.fromkeys(args.special_token))


def _nothing_learned(corpus: str, why: str, code: int = 1) -> CliError:
    return CliError(f"{corpus}: nothing was learned: {why}; no files written", code)


def _check_corpora(paths: list[str]) -> None:
    """Each corpus file exists and is a file; several name the same file (or standard
    input) at most once: a link to a file is that file (device and inode, as
    ``sources.repeated_file`` tells the files globs matched)."""
    check_stdin_once(paths, "a corpus file")
    seen: dict[object, str] = {}
    for path in paths:
        if is_glob_or_url(path):
            check_input(path, "corpus file", globs=True)
            continue  # resolved by the core, then checked by check_counted_once
        if path not in (STDIN, "") and Path(path).is_dir():
            raise CliError(f"{path}: is a directory; CORPUS names text files")
        check_input(path, "corpus file")
        st = None if path == STDIN else os.stat(path)
        same = seen.setdefault(path if st is None else (st.st_dev, st.st_ino), path)
        if same != path or paths.count(path) > 1:
            raise CliError(twice_said(path, same))


def _check_vocab_size(vocab_size: int, specials: list[str]) -> None:
    """The core's one rule (``vocab.vocab_size_problem``), in the option's words."""
    problem = vocab_size_problem(vocab_size, specials)
    if problem is not None:
        raise CliError(f"--vocab-size {vocab_size:,} {problem}", EXIT_USAGE)


def chosen_format(
    given: str | None, pattern: str, specials: list[str], stream: bool = False
) -> tuple[str, str | None]:
    """``--format``, else the default: hf for a ``stream`` (``--out -``: the one format of one
    file) that a ``tokenizer.json`` can hold; gpt2 for GPT-2's pattern, hf for any other that
    a ``tokenizer.json`` can hold, else tiktoken when its sidecar can, else gpt2 (GPT-2 files
    hold no pattern: loaded back without ``--pattern``, they silently split text with
    GPT-2's). With the summary's note saying why, when the default is not gpt2."""
    if given is not None:
        return given, None
    if stream and format_problem("hf", pattern, specials) is None:
        return "hf", None
    if pattern_name(pattern) == "gpt2":
        return "gpt2", None
    shown = shown_pattern(pattern)
    no_hf = format_problem("hf", pattern, specials)
    if no_hf is None:
        # As the file holds it (\p{L} for \pL), which encode and inspect then show.
        written = shown_pattern(braced_properties(pattern))
        return "hf", (
            f"note: written as tokenizer.json (--format hf), which holds the pattern {written}; "
            "vocab.json + merges.txt (--format gpt2) hold none"
        )
    if format_problem("tiktoken", pattern, specials) is None:
        files = " + ".join(files_for("tiktoken", DEFAULT_NAME))
        if split_problem(pattern) is None:
            # A tokenizer.json holds the pattern: a special token is what it cannot hold.
            no_hf = no_hf.removesuffix(TOKEN_HELD_ELSEWHERE)
            return "tiktoken", (
                f"note: written as {files} (--format tiktoken), which hold the pattern {shown} "
                f"and the special tokens; a tokenizer.json holds the pattern but not the "
                f"special tokens ({no_hf}), and vocab.json + merges.txt (--format gpt2) hold "
                "no pattern"
            )
        # The note names the pattern and the files that hold it already.
        no_hf = no_hf.removeprefix(f"pattern {shown}: ").removesuffix(held_elsewhere("tiktoken"))
        return "tiktoken", (
            f"note: written as {files} (--format tiktoken), which hold the pattern {shown}; "
            f"a tokenizer.json cannot ({no_hf}), and vocab.json + merges.txt (--format gpt2) "
            "hold none"
        )
    return "gpt2", None


def cmd_train(args: argparse.Namespace) -> int:
    specials = special_tokens(args)
    corpora: list[str] = list(args.corpus)
    _check_corpora(corpora)
    _check_vocab_size(args.vocab_size, specials)
    args.format, format_note = chosen_format(
        args.format, args.pattern, specials, stream=is_stream(args.out)
    )
    # Before training: found when the files are written, the run was lost.
    problem = format_problem(args.format, args.pattern, specials)
    if problem:
        raise CliError(f"--format {args.format} cannot hold this tokenizer: {problem}", EXIT_USAGE)
    one_file = format_problem("hf", args.pattern, specials) if is_stream(args.out) else None
    if one_file and args.format != "hf":
        # Not check_tokenizer_out's advice to write tokenizer.json there: it cannot hold this.
        raise CliError(
            f"--out {args.out} takes one file, and tokenizer.json (--format hf), the format of "
            f"one file, cannot hold this tokenizer: {one_file}; name a directory",
            EXIT_USAGE,
        )
    regular = [p for p in corpora if not is_glob_or_url(p) and is_regular(p)]
    regular += stdin_input(corpora)
    check_tokenizer_out(args.out, args.format, DEFAULT_NAME, force=args.force, inputs=regular)
    # The corpus named in messages: the file, or all of them when there are several.
    first = input_name(corpora[0])
    named = first if len(corpora) == 1 else f"{first} (and {len(corpora) - 1} more)"
    start = time.perf_counter()
    wanted = merge_budget(args.vocab_size, specials)
    with input_files(corpora, args.records) as paths:
        files = corpus_files(paths, records(args.records))
        check_counted_once(files)
        # Files a glob matched are inputs too, which the tokenizer must not replace: said
        # before any file is looked into (an earlier run's output is no corpus).
        local = local_inputs(paths, files)
        check_tokenizer_out(args.out, args.format, DEFAULT_NAME, force=args.force, inputs=local)
        check_not_records(files, args.records, paths.copies)
        if sum(f.size for f in files) == 0 and wanted:
            raise _nothing_learned(named, nothing_to_merge(files))
        trainer = _count(args, files, specials, named)
        if wanted and not trainer.top_pairs(1):
            # (read while a copied pipe is still there; only when nothing was counted)
            why = nothing_to_merge(files, args.text_field, bool(trainer.pretoken_counts))
            raise _nothing_learned(named, why)
    interrupted = False
    if wanted:
        merging = ProgressBar("merging", trainer.target_merges)
        try:
            with numba_interrupts():
                for step in trainer:
                    raise_dropped()  # one a finalizer dropped stops here, as Ctrl-C does
                    merging.update(step.rank + 1)
        except KeyboardInterrupt:
            interrupted = True
        except MemoryError as e:
            raise CliError(out_of_memory(e, args, "merging")) from None
    stopped_merging = interrupted
    finished = None
    try:
        # subtle: from the last merge until the files are written, Ctrl-C is held: it keeps
        # the merges made, as it does while merging (exit 130 once they are written).
        with held_interrupts():
            finished = _finish(trainer, args, named, wanted, merging if wanted else None)
    except KeyboardInterrupt:
        interrupted = True
    if finished is None:
        # Ctrl-C in the block where nothing held it (a host's own handler for it): the files
        # are written again, whole, rather than the merges lost.
        finished = _finish(trainer, args, named, wanted, None)
    tok, written, code = finished
    # Ctrl-C after the last merge (held while the files were written) stopped nothing: the
    # tokenizer is whole (all merges made, or the pairs ran out), and a script must not take
    # it for a cut-short one.
    late = interrupted and not stopped_merging
    interrupted = stopped_merging
    elapsed = time.perf_counter() - start
    first_learned = first_merge_id(trainer.special_tokens)
    learned = [t for i, t in tok.vocab.items() if i >= first_learned]
    longest = max(learned, key=len, default=b"")
    peak = peak_memory_mb()
    shown = ", ".join(
        f"{_said(t)} (id {BYTE_TOKENS + i})" for i, t in enumerate(trainer.special_tokens)
    )
    lines = [
        f"{'stopped after' if interrupted else 'trained'} {plural(len(trainer.merges), 'merge')} "
        f"(vocabulary {len(tok.vocab):,}) in {elapsed:.2f} s",
        f"special tokens: {shown or 'none'}",
        f"peak memory: {peak:,.0f} MB" if peak is not None else "peak memory: unknown",
        f"longest token: {readable_cut(longest)} ({len(longest):,} bytes)"
        if learned
        else "longest token: none learned",
        f"pattern: {shown_pattern(tok.pattern)}",
        written,
        *filter(None, [others_note(args.out, args.format, DEFAULT_NAME)]),
    ]
    lines += gpt2_notes(tok, args.format)
    if format_note:
        lines.append(format_note)
    if late:
        lines.insert(1, f"note: {came()} came after the last merge: the tokenizer is complete")
    if len(trainer.merges) < trainer.target_merges and not interrupted:
        note = f"note: the corpus ran out of pairs before vocabulary size {args.vocab_size:,}"
        lines.insert(1, note)
    if not wanted:
        note = (
            f"note: --vocab-size {args.vocab_size:,} is the {BYTE_TOKENS} byte tokens and the "
            "special tokens: a byte-level tokenizer, with no merge"
        )
        lines.insert(1, note)
    try:
        # subtle: held while the summary is written too: Ctrl-C there came out between its
        # text and its line end, as "interrupted" (exit 130) glued to the last line, of a
        # tokenizer written whole.
        with held_interrupts():
            print("\n".join(map(one_line, lines)), file=sys.stderr)
    except KeyboardInterrupt:
        if not interrupted:
            print(f"note: {came()} came after the last merge: the tokenizer is complete",
                  file=sys.stderr)  # fmt: skip
    return EXIT_INTERRUPTED if interrupted else code


def _finish(
    trainer: BpeTrainer,
    args: argparse.Namespace,
    named: str,
    wanted: int,
    merging: ProgressBar | None,
) -> tuple[Tokenizer, str, int]:
    """The tokenizer of the merges made, written to ``--out``; the summary's line saying what
    was written, and the exit status. ``merging``: the bar to close first, if any."""
    if merging is not None:
        merging.close()
    if wanted and not trainer.merges:
        raise _nothing_learned(named, "interrupted before the first merge", EXIT_INTERRUPTED)
    # subtle: Ctrl-C can land between a step's new token and its merge: the vocabulary is cut
    # to the merges made, which is what loads back.
    made = first_merge_id(trainer.special_tokens) + len(trainer.merges)
    tok = Tokenizer(
        {i: t for i, t in trainer.vocab.items() if i < made},
        trainer.merges,
        {s: BYTE_TOKENS + i for i, s in enumerate(trainer.special_tokens)},
        args.pattern,
    )
    try:
        written, code = save(tok, args.out, args.format, DEFAULT_NAME, force=args.force)
    except NotWritten as e:
        if not tok.merges:
            raise
        raise CliError(f"{e}; {_saved_elsewhere(tok, args.format)}") from None
    return tok, written, code


def _saved_elsewhere(tok: Tokenizer, fmt: str) -> str:
    """What became of the merges learned when ``--out`` could not take them (a full disk):
    saved instead in a new private folder in the temporary folder, named so that they can be
    moved, or, when they cannot be written there either, not saved at all (said so)."""
    one = len(tok.merges) == 1
    learned = f"the {plural(len(tok.merges), 'merge')} learned {'was' if one else 'were'}"
    they = "it" if one else "they"
    temp = tempfile.gettempdir()
    try:
        folder = tempfile.mkdtemp(prefix="bpe-studio-unsaved-")
    except OSError as e:
        return f"{learned} not saved (nor could {they} be in {temp}: {e.strerror or e})"
    try:
        save(tok, folder, fmt, DEFAULT_NAME, force=False)
    except NotWritten as e:
        shutil.rmtree(folder, ignore_errors=True)
        return f"{learned} not saved (nor could {they} be in {temp}: {e.reason})"
    files = " and ".join(files_for(fmt, DEFAULT_NAME))
    return f"{learned} not saved there but in {folder} (move {files} from there)"


def _count(
    args: argparse.Namespace, files: list[CorpusFile], specials: list[str], named: str
) -> BpeTrainer:
    """Pre-tokenize the corpus ``files`` into a trainer, with a progress bar (on a cluster,
    it moves as each task ends)."""
    bar = ProgressBar("pre-tokenizing", 0, unit="B", eager=True)
    try:
        with numba_interrupts(), changes_first(files):
            trainer = trainer_from_file(
                files,
                args.vocab_size,
                specials,
                workers=args.workers,
                progress=bar.update,
                pattern=args.pattern,
                engine=args.engine,
                status=say,
                cluster=args.cluster,
                text_field=args.text_field,
            )
    except KeyboardInterrupt:
        raise _nothing_learned(
            named, "interrupted during pre-tokenization", EXIT_INTERRUPTED
        ) from None
    except CompiledEngineUnavailable as e:
        raise CliError(in_cli_words(str(e))) from None
    except MemoryError as e:
        raise CliError(out_of_memory(e, args, f"pre-tokenizing {named}")) from None
    except ClusterError as e:
        if e.address is None:
            raise CliError(e.reason) from None
        raise CliError(f"--cluster {e.address}: {e.reason}") from None
    except ValueError as e:
        # Kept a ValueError (a corpus error names a copied pipe, which ``inputs`` renames).
        e.args = (in_cli_words(str(e)),)
        raise
    bar.close()
    return trainer


def _said(special: str) -> str:
    """A special token as the summary lists it: as it is, or quoted where spaces at its ends,
    control characters or the list's own ", " would make it misread ("special tokens:  <s> ")."""
    plain = special == special.strip() and special.isprintable() and ", " not in special
    return special if plain else quoted(special)
