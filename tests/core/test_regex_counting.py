"""Counting on the regex path (no compiled scanner): the named patterns' fast ``re`` forms
(``re_split``) are built before a long corpus is counted."""

from __future__ import annotations

from core_helpers import EOT, SLICES, read_fixture, write_text

from bpe_studio.core import count_file, count_text
from bpe_studio.core.corpus import counting as corpus
from bpe_studio.core.corpus import tasks as corpus_tasks
from bpe_studio.core.corpus.sources import resolve_corpus
from bpe_studio.core.corpus.tasks import CountTask, count_task


def test_a_long_corpus_counts_gpt2_on_re_with_the_same_counts(tmp_path, monkeypatch):
    """GPT-2's fast ``re`` pattern (``re_split``) is built before counting a corpus of
    ``FAST_PATTERNS_FROM`` characters or more, in this process and in a spawned worker:
    the pieces of a chunk are each too short for ``re_split`` to build it on its own, so
    every non-ASCII piece went to ``regex``, at half the speed. The counts are the regex's."""
    from bpe_studio.core.pretokenization import re_split

    text = read_fixture(SLICES["english"])[:60_000] + "\u2019s caf\u00e9 " + EOT
    path = write_text(tmp_path / "c.txt", text * 3)
    monkeypatch.setattr(corpus, "FAST_PATTERNS_FROM", len(text))
    monkeypatch.setattr(corpus, "IN_PROCESS_CHUNK", len(text) // 4)
    # The regex path whatever this process loaded: once another test has loaded the compiled
    # scanners here, they count any size (``counting.counting_scanner``).
    monkeypatch.setattr(corpus_tasks, "counting_scanner", lambda pattern, size: None)
    re_split._bmp_regex.cache_clear()
    counts = count_file(path, [EOT], workers=1)
    assert re_split._bmp_regex.cache_info().currsize == 1
    assert counts == count_text(text * 3, [EOT])
    # A worker that starts clean (spawn) builds them for a task that long, of any kind.
    f = resolve_corpus(path)[0]
    nbytes = len(text.encode())
    for task in [CountTask(f, 0, nbytes, nbytes=nbytes), CountTask(f, nbytes=nbytes)]:
        for at_least, built in [(nbytes, 1), (nbytes + 1, 0)]:
            monkeypatch.setattr(corpus, "FAST_PATTERNS_FROM", at_least)
            re_split._bmp_regex.cache_clear()
            count_task(task, [EOT], "gpt2")
            assert re_split._bmp_regex.cache_info().currsize == built
