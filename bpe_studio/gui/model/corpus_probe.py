"""What Train checks of the corpus with the run's settings before the run on screen is
discarded for it.

What it does: :func:`settings_problem` reads the start of each local file of the corpus as
the run would read it, and says in the trainer's own words why training would fail there: the
first record of a JSON Lines file lacks the text field (or is no JSON at all: a plain text
file named ``.jsonl``), or a custom pattern leaves a character of a plain text file's first
``PROBE_BYTES`` (or of that first record, when its line ends there) unmatched, or matches
only empty text there. Train
refuses then, and the tokenizer on screen stays: the question "Discard the trained
tokenizer?" would have been answered for a run that fails at once.
What it leaves out: the rest of each file, the files past the first ``PROBED_FILES`` local
ones, remote files and Parquet (the run reads and checks them all), and UTF-8
(``corpus_source.utf8_problem``, at Open).
"""

from __future__ import annotations

from ...core import pretokenizer
from ...core.corpus.counting import read_head, uncovered_in_file
from ...core.corpus.errors import CorpusError
from ...core.corpus.records import Place, jsonl_documents
from ...core.corpus.sources import CorpusFile, Kind, resolve_corpus
from ...core.pretokenization.pretokenizer import Pretokenizer, UncoveredText
from ...core.pretokenization.specials import Specials
from .corpus_source import PROBE_BYTES, CorpusSource
from .errors import describe_error
from .state import RunSettings

# Local files read before Train starts, at most: a glob of thousands of shards would hold
# the window up while each is opened on the GUI thread.
PROBED_FILES = 16


def _leaves_out(split: Pretokenizer, specials: Specials, text: str) -> str | None:
    """The pattern's error for ``text`` (pre-tokenized between special tokens, as counting
    does), or None when it matches every character."""
    try:
        for a, b, _ in specials.segments(text):
            split.findall(text[a:b])
    except UncoveredText as error:
        return str(error)
    return None


def _first_record(f: CorpusFile, field: str, place: Place) -> str | None:
    """The text field of the first record of the JSON Lines file ``f``, when its line ends
    within the first ``PROBE_BYTES`` (None: it has none, or a longer one, left to the run:
    read here it would hold the window up and its memory); a record without the field, or
    a line that is no JSON record, raises the trainer's error."""
    with f.open() as stream:
        head = stream.read(PROBE_BYTES + 1)
    lines = head.splitlines(keepends=True)
    whole = lines if len(head) <= PROBE_BYTES else lines[:-1]  # the last may go on
    return next(jsonl_documents(whole, f.name, field, place=place), None)


def _file_problem(
    f: CorpusFile, settings: RunSettings, split: Pretokenizer | None, specials: Specials
) -> str | None:
    if f.kind is Kind.JSONL:
        place = Place()
        text = _first_record(f, settings.text_field, place)
        problem = _leaves_out(split, specials, text) if split and text is not None else None
        # As counting records names where it failed (``tasks._count_documents``).
        return f"{f.name}: {place.now}: {problem}" if problem else None
    if f.kind is Kind.TEXT and f.plain_local and split is not None:
        text = read_head(f.url, PROBE_BYTES, whole_lines=True, name=f.name)
        if _leaves_out(split, specials, text) is not None:
            # The trainer's message: the file, the line and the byte offset.
            return str(uncovered_in_file(f.url, 0, text, specials, settings.pattern))
    return None


def settings_problem(source: CorpusSource, settings: RunSettings) -> str | None:
    """Why training ``source`` with ``settings`` would fail at the start of one of its local
    files, in the trainer's words (see the module); None when nothing is found there."""
    try:
        files = resolve_corpus(list(source.paths), source.read_as)
        split = pretokenizer(settings.pattern)
        specials = Specials.of(list(settings.special_tokens))
    except (OSError, ValueError):
        return None  # the panel and Open check these; what changed since, the run says
    # A named pattern matches every character by construction (``pretokenizer``).
    custom = split if split.name is None else None
    for f in [f for f in files if f.local][:PROBED_FILES]:
        try:
            problem = _file_problem(f, settings, custom, specials)
        except CorpusError as error:
            return describe_error(error)
        except OSError:
            continue  # the run names the file and what reading it met
        if problem is not None:
            return describe_error(ValueError(problem))
    return None
