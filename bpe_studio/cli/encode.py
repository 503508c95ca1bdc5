"""``bpe-studio encode`` (text -> ids ``.npy``) and ``bpe-studio decode`` (ids ``.npy`` -> text).

What it does: ``encode`` reads what ``train`` reads: files, globs, compressed files, URLs,
records (``encode_inputs``: each document alone), standard input or a pipe (copied to a
temporary file first, ``inputs``); one plain text file is encoded in parallel
(``encode_file.encode_file``). It writes a 1-D ``.npy`` of ids to a file or, for ``--out -``, the
same ``.npy`` bytes to standard output; ``decode``
reads such an array (a file or ``-``) and writes the exact bytes the ids stand for to a file
or standard output (``-``, the default). So ``encode x --out - | decode - --out -`` gives x
back. Outputs follow the rule in ``output``. Progress and the summary go to stderr, so stdout
carries only data. What it leaves out: loading ``--tokenizer`` (``sources``), the encoding
itself (core).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..core import Tokenizer
from ..core.corpus.errors import CorpusNotFound
from ..core.corpus.sources import CorpusFile, changes_first, check_text_field, check_text_files
from ..core.corpus.tasks import corpus_files
from ..core.encode.foreign import AnyTokenizer, ForeignTokenizer
from ..core.explain.usage import WHOLE_INPUT
from ..core.formats.base.data import TokenizerData
from ..core.formats.files import foreign_file
from ..core.formats.hf.template import Template
from ..core.formats.tiktoken.reading import PatternNeeded
from ..core.io.atomic import atomic_open, folder_for, new_files_only, place, write_target
from ..core.io.gc_pause import gc_paused
from ..core.io.interrupts import held_interrupts
from ..core.text.display import plural, readable_size
from .encode_inputs import encode_inputs
from .ids_files import DecodedBlocks, IdsFile
from .inputs import (
    STDIN,
    check_input,
    check_not_records,
    check_once,
    check_stdin_once,
    input_files,
    local_inputs,
    records,
    stdin_input,
)
from .kept_text import deleted_notes, dropped_note, drops_text, drops_uncounted, kept_bytes
from .output import (
    EXIT_CLOSED_PIPE,
    EXIT_INTERRUPTED,
    STDOUT,
    CliError,
    Compiles,
    check_out_file,
    check_stdout_open,
    check_stdout_takes_bytes,
    is_stream,
    numba_interrupts,
    one_line,
    os_error_line,
    os_error_message,
    out_of_memory,
    stream_name,
    write_stream,
    writes_to_terminal,
)
from .progress import ProgressBar
from .sources import (
    check_sources_unchanged,
    fetch_hub,
    load_source,
    load_tokenizer,
    source_files,
    split_line,
    stamp_sources,
    warn_of_tokenizer_json_beside,
)


def _loader(
    args: argparse.Namespace, built: list[AnyTokenizer]
) -> Callable[[], Tokenizer] | ForeignTokenizer:
    """What builds ``--tokenizer`` (in this process, and in the workers forked before it is
    built: see ``encode_file``); a tokenizer of another kind than byte-level BPE, built now
    (it encodes the whole file in one call). Each tokenizer built here is appended to
    ``built``. Its errors name the tokenizer's source, never ``--out``."""

    def load() -> AnyTokenizer:
        try:
            tok = load_tokenizer(
                args.tokenizer,
                args.special_token,
                no_specials=args.no_special_tokens,
                pattern=args.pattern,
            )
        except OSError as e:
            raise CliError(os_error_line(e)) from None
        built.append(tok)
        return tok

    if foreign_file(args.tokenizer) is not None:
        foreign = load()
        assert isinstance(foreign, ForeignTokenizer)
        return foreign

    def byte_level() -> Tokenizer:
        tok = load()
        assert isinstance(tok, Tokenizer)
        return tok

    return byte_level


def _add_template(path: str, before: tuple[int, ...], after: tuple[int, ...]) -> int:
    """Put ``before`` and ``after`` around the ids of the ``.npy`` at ``path`` (replaced
    whole, through a file beside it); returns how many ids it holds then."""
    ids = np.load(path, mmap_mode="r")
    # The file's dtype holds the template's ids too (encode_file.ids_dtype); checked all the
    # same, as a wrapped id would be a silent wrong one: one that did not fit is a bug.
    largest = max((*before, *after), default=0)
    if largest > np.iinfo(ids.dtype).max:
        raise AssertionError(f"{path}: its {ids.dtype} does not hold the template's id {largest}")
    total = len(before) + len(ids) + len(after)
    part = f"{path}.part"
    out = np.lib.format.open_memmap(part, mode="w+", dtype=ids.dtype, shape=(total,))
    out[: len(before)] = before
    out[len(before) : len(before) + len(ids)] = ids
    out[len(before) + len(ids) :] = after
    out.flush()
    del out, ids
    os.replace(part, path)
    return total


def _check_out(
    args: argparse.Namespace, given: str | Sequence[str | os.PathLike[str]], *, binary: bool
) -> None:
    """``--out`` by the output rule (``output``), the inputs and the tokenizer's files being
    the inputs; binary data is not written to a terminal."""
    named = [given] if isinstance(given, str) else list(given)
    inputs: list[str | os.PathLike[str]] = [
        *(p for p in named if p != STDIN),
        *stdin_input([p for p in named if isinstance(p, str)]),
        *source_files(args.tokenizer),
    ]
    check_out_file(args.out, force=args.force, inputs=inputs)
    check_stdout_open(args.out)
    if binary:
        check_stdout_takes_bytes(args.out, "the ids are binary (.npy bytes)")
    if binary and writes_to_terminal(args.out):
        where = "standard output is a terminal" if args.out == STDOUT else "is a terminal"
        raise CliError(
            f"--out {args.out}: {where}, and the ids are binary (.npy bytes); "
            "redirect it (> ids.npy, | bpe-studio decode - ...) or name a file"
        )


def _unless_forced(args: argparse.Namespace) -> AbstractContextManager[None]:
    """Without ``--force``, ``--out`` (checked free before any work) is written only where
    no file is: one another run put there meanwhile fails this run, and stays."""
    return new_files_only(() if args.force else (args.out,))


def _wrote(where: str, closed_after: int | None, size: int) -> tuple[str, int]:
    """The summary's last line and the exit status: a stream may have been closed early by
    its reader (``| head``)."""
    if closed_after is None:
        return f"wrote {stream_name(where)}", 0
    return (
        f"{stream_name(where)} was closed after {closed_after:,} of {size:,} bytes; the rest "
        "was not written",
        EXIT_CLOSED_PIPE,
    )


def _os_error_line(
    error: OSError, out: str, files: list[CorpusFile], copies: dict[str, str]
) -> str:
    """An OS error while encoding as one line: reading an input names the input; anything
    else is the output's (the ids and their spill files are written beside it)."""
    if isinstance(error, CorpusNotFound):
        return str(error)  # it names the input
    culprit = os.fspath(error.filename) if error.filename is not None else None
    for f in files:
        if culprit in (f.url, f.name):
            name = copies.get(f.url, f.name)
            return f"{name}: cannot read it: {error.strerror or error}"
    return os_error_message(out, error)


def cmd_encode(args: argparse.Namespace) -> int:
    # subtle: building a tokenizer and encoding make millions of objects and no reference
    # cycles, so the cyclic collector, set off again and again by them, only walks them (a
    # sixth of o200k's load): it is off for the command and the workers it forks. It comes
    # back on after, unless the process then ends (``args.exiting``): turned on, it would
    # walk them all at once, and the collection at exit too; frozen, they are left out.
    with gc_paused(freeze=args.exiting):
        return _encode(args)


def _identity(path: str) -> tuple[int, int, int] | None:
    """What tells whether the file at ``path`` was replaced: device, inode, modification."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns


def _template(tok: AnyTokenizer) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The ids a tokenizer's template puts before and after a text, or None."""
    template = tok.template
    return None if template is None else (template.before, template.after)


def _encode(args: argparse.Namespace) -> int:
    given: list[str] = list(args.input)
    for name in given:
        check_input(name, globs=True)
    check_stdin_once(given)
    _check_out(args, given, binary=True)
    args.tokenizer = fetch_hub(args.tokenizer)
    # subtle: on the parallel path each worker builds the tokenizer from its files, and this
    # process reads them again for the template and the summary; stamped before the first
    # load and checked after the last, a file replaced meanwhile fails the run.
    stamps = stamp_sources(args.tokenizer)
    # GPT-2 files read for the warning are the summary's, not read a second time.
    read = warn_of_tokenizer_json_beside(args.tokenizer, args.pattern, args.special_token)
    built: list[AnyTokenizer] = []
    load = _loader(args, built)
    bars: list[ProgressBar] = []

    compiles = Compiles()

    def progress(done: int, total: int) -> None:
        # The bar starts with the encoding, once the tokenizer is built, so that its rate and
        # elapsed time are the encoding's.
        if not bars:
            compiles.over()
            bars.append(ProgressBar("encoding", total, unit="B", eager=True))
        bars[0].update(done, total)

    closed_after = None
    with ExitStack() as stack:
        stack.enter_context(_unless_forced(args))
        paths = stack.enter_context(input_files(given, args.records))
        files = corpus_files(paths, records(args.records))
        # Files a glob matched are inputs too, which the ids must not replace: said before
        # any file is looked into (a second run's glob matches the first run's ids).
        _check_out(args, local_inputs(paths, files), binary=True)
        check_once(files, "an input", "encoded")
        check_not_records(files, args.records, paths.copies)
        check_text_field(files, args.text_field)
        check_text_files(files)
        out, streamed = args.out, is_stream(args.out)
        # subtle: with the template to add afterwards, or the tokenizer's files to check once
        # done, the ids go to a folder beside --out and are moved into place once whole and
        # checked, so that neither Ctrl-C nor an error leaves ids without the template, or
        # of a tokenizer that changed, where --out names.
        staged = (args.add_special_tokens or bool(stamps)) and not streamed
        # A link at --out is written through, as the shell's ">" writes: the ids go where it
        # points, staged beside that file (one file system), and the link stays.
        destination = write_target(args.out) if staged else Path(args.out)
        if streamed or staged:
            beside = os.path.dirname(os.path.abspath(destination)) if staged else None
            if staged:
                stack.enter_context(folder_for(destination))
            folder = tempfile.TemporaryDirectory(prefix=".bpe-studio-", dir=beside)
            out = os.path.join(stack.enter_context(folder), "ids.npy")
        around = _template if args.add_special_tokens else None
        before = _identity(args.out)
        try:
            with numba_interrupts(), changes_first(files):
                stats, each = encode_inputs(load, files, out, workers=args.workers,
                                            progress=progress, text_field=args.text_field,
                                            template=around, status=compiles.say)  # fmt: skip
        except OSError as e:
            raise CliError(_os_error_line(e, args.out, files, paths.copies)) from None
        except MemoryError as e:
            raise CliError(out_of_memory(e, args, "encoding")) from None
        except KeyboardInterrupt:
            where = stream_name(args.out)
            if not streamed and _identity(args.out) != before:
                # Ctrl-C came as the whole file was put in place.
                raise CliError(
                    f"interrupted; {where} was written whole", EXIT_INTERRUPTED
                ) from None
            raise CliError(f"interrupted; {where} not written", EXIT_INTERRUPTED) from None
        # Ctrl-C or SIGTERM from here on comes once the ids are whole, written in place or
        # in the stage (removed with it) until placed: the message says which, as a user
        # told only "interrupted" took a whole file left at --out for a partial one.
        placed = not staged and not streamed
        try:
            for bar in bars:
                bar.close()
            if args.add_special_tokens and not built and not isinstance(load, ForeignTokenizer):
                load()  # built only in the workers: the template is read from one built here
            template = built[-1].template if built else None
            added = ""
            if args.add_special_tokens:
                if template is None:
                    added = "added no special tokens: the tokenizer has no template for them"
                elif each:
                    added = (
                        f"added the template's special tokens around each document: {template.text}"
                    )
                else:
                    tokens = _add_template(out, template.before, template.after)
                    added = f"added the template's special tokens: {template.text}"
                    stats = replace(stats, tokens=tokens)
            # subtle: with workers each building its own, this process built none: its data says.
            described = built[-1] if built else read
            if described is None:
                described = load_source(args.tokenizer, args.pattern, args.special_token)
            wrapped = template if args.add_special_tokens else None
            dropped = _dropped(described, out, stats.input_bytes, wrapped, each)
            check_sources_unchanged(stamps, "encoding")
            if staged:
                try:
                    with held_interrupts():
                        place(out, destination, args.out)
                        placed = True
                except OSError as e:
                    raise CliError(os_error_message(args.out, e)) from None
                out = args.out
            if streamed:
                with open(out, "rb") as f:
                    closed_after = write_stream(args.out, f)
            written = os.path.getsize(out)
        except KeyboardInterrupt:
            if streamed:
                raise  # part of the ids may have gone out: the one line says interrupted
            done = "was written whole" if placed else "not written"
            raise CliError(f"interrupted; {args.out} {done}", EXIT_INTERRUPTED) from None
    rate = stats.mb_per_second
    lines = [
        f"loaded the tokenizer in {stats.load_seconds + stats.setup_seconds:.2f} s",
        split_line(described),
        f"encoded {readable_size(stats.input_bytes)} into {plural(stats.tokens, 'token')} "
        f"({stats.dtype}) in {stats.seconds:.2f} s",
    ]
    compiled = compiles.summary()
    if compiled:
        lines.insert(1, compiled)
    lines += [f"note: {note}" for note in described.notes]
    if added:
        lines.append(added)
    if dropped:
        lines.append(dropped_note(described, dropped, stats.input_bytes))
        if stats.tokens:
            per_token = (stats.input_bytes - dropped) / stats.tokens
            lines.append(f"compression ratio: {per_token:.2f} bytes/token (of the text kept)")
    else:
        # subtle: one that drops text its ids' bytes cannot count (a WordPiece's spaces; a
        # normalizer's file), or whose normalizer deletes characters, says so, and has the
        # ratio over every input byte, said so.
        uncounted = stats.input_bytes > 0 and drops_uncounted(described)
        if uncounted:
            lines.append(dropped_note(described, None, stats.input_bytes))
        deleted = deleted_notes(described) if stats.input_bytes else []
        lines += deleted
        if stats.tokens:
            shown = f" ({WHOLE_INPUT})" if uncounted or deleted else ""
            lines.append(f"compression ratio: {stats.bytes_per_token:.2f} bytes/token{shown}")
    if stats.input_bytes:
        lines.append(f"throughput: {rate:.2f} MB/s")
    last, code = _wrote(args.out, closed_after, written)
    print("\n".join(map(one_line, [*lines, last])), file=sys.stderr)
    return code


def _dropped(
    tok: AnyTokenizer | TokenizerData,
    ids_path: str,
    input_bytes: int,
    template: Template | None,
    documents: int,
) -> int:
    """How many of the input's bytes ``tok`` dropped (``kept_text``; 0 for a tokenizer that
    keeps every byte), from the ids at ``ids_path``: the bytes its ids stand for, less those
    of ``template``'s tokens, put around ``documents`` documents (0: once, around all)."""
    if not input_bytes or not drops_text(tok):
        return 0
    kept = kept_bytes(tok.vocab, ids_path)
    if template is not None:
        ids = (*template.before, *template.after)
        kept -= max(documents, 1) * sum(len(tok.vocab[i]) for i in ids)
    return max(input_bytes - kept, 0)


def cmd_decode(args: argparse.Namespace) -> int:
    check_input(args.ids, "ids file", ids=True)
    _check_out(args, args.ids, binary=False)
    given = args.tokenizer
    args.tokenizer = fetch_hub(given)
    if args.tokenizer != given:  # a Hub model's files may have just been downloaded
        _check_out(args, args.ids, binary=False)
    ids = IdsFile(args.ids)
    try:
        try:
            tok = load_tokenizer(args.tokenizer, args.special_token, pattern=args.pattern)
        except PatternNeeded:
            # A bare rank file: decoding reads only its tokens, so any pattern serves.
            tok = load_tokenizer(args.tokenizer, args.special_token, pattern="gpt2")
        blocks = DecodedBlocks(tok, ids)
        bar = ProgressBar("decoding", blocks.total, unit="B")
        blocks.progress = bar.update
        closed_after = None
        if is_stream(args.out):
            closed_after = write_stream(args.out, blocks)
        else:
            before = _identity(args.out)
            try:
                # Missing folders are made, as encode makes them, and removed if it fails.
                with _unless_forced(args), folder_for(args.out), atomic_open(args.out, "wb") as f:
                    for block in iter(blocks.read, b""):
                        f.write(block)
            except OSError as e:
                raise CliError(os_error_message(args.out, e)) from None
            except KeyboardInterrupt:
                # As encode says it: the temporary file is gone, unless the whole was in place.
                done = "was written whole" if _identity(args.out) != before else "not written"
                raise CliError(f"interrupted; {args.out} {done}", EXIT_INTERRUPTED) from None
    finally:
        ids.close()
    bar.close()
    last, code = _wrote(args.out, closed_after, blocks.total)
    print(
        one_line(f"decoded {plural(len(ids), 'id')} into {plural(blocks.total, 'byte')}; {last}"),
        file=sys.stderr,
    )
    # As encode's summary ends: what is done otherwise than the file says (a decoder that
    # does not give the text back, most of all).
    for note in tok.notes:
        print(one_line(f"note: {note}"), file=sys.stderr)
    return code
