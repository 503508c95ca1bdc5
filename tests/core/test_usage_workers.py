"""A corpus's usage is encoded on the compiled path in every worker, as ``encode_file``'s is.

Found measuring ``benchmarks/bench_inspect.py``: ``corpus_usage`` built the tokenizer's bulk
tables before forking but never loaded the encoder's kernels, so a forked worker encoded any
task shorter than ``encoder.PREPARE_CHARS`` characters (2 MB of Chinese or code) on the
Python path, and a clean-started worker (the app's Vocabulary lab, which forks nothing) every
task: the workers spent 60% more CPU than ``encode_file``'s on the same 100 MB.

Each case runs in a new interpreter, where no kernel is loaded yet (this test process has
them loaded by other tests)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from core_helpers import REPO_ROOT, read_fixture, write_text

PROBE = '''
import sys
from bpe_studio.core.corpus.tasks import corpus_files
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.encode.merging import kernel_start
from bpe_studio.core.explain import corpus_pass


def compiled_here(tok, task):
    """In a worker: whether a task's text takes the compiled path, and the task's ids."""
    text = open(task.file.url, "rb").read()[task.start:task.end].decode("utf-8")
    merger = tok._encoder.compiled(len(text))
    return merger is not None, corpus_pass.count_task(tok, task).tokens


def main(path, start_method):
    import multiprocessing

    if start_method != "fork":
        # As in the app, where Qt's threads make forking unsafe (counting.mp_context).
        corpus_pass.mp_context = lambda: multiprocessing.get_context(start_method)
    tok = open_tokenizer("gpt2")
    files = corpus_files(path)
    tasks = corpus_pass.usage_tasks(tok, files, 2, "text")
    assert len(tasks) > 2
    size = sum(f.size for f in files)
    with corpus_pass.Passes(tok, 2, size) as passes:
        assert passes.parallel
        results = list(passes.run(compiled_here, tasks))
    compiled = sorted({c for c, _ in results})
    print(kernel_start.kernels() is not None, compiled, sum(n for _, n in results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
'''


@pytest.mark.parametrize("start_method", ["fork", "forkserver"])
def test_every_task_of_a_usage_pass_takes_the_compiled_path(tmp_path, start_method):
    # 1.2 MB of Chinese: every task is far shorter than PREPARE_CHARS characters.
    text = read_fixture("chinese_slice.txt") * 4
    corpus = write_text(tmp_path / "zh.txt", text)
    script = tmp_path / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run(
        [sys.executable, str(script), str(corpus), start_method],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    ready, compiled, tokens = result.stdout.split(maxsplit=2)
    assert compiled == "[True]"
    assert ready == "True"  # loaded here first: forked workers inherit them
    # The workers' ids are GPT-2's: counted here on the Python path, the same number.
    from bpe_studio.core.encode.foreign import open_tokenizer

    expected = len(open_tokenizer("gpt2").encode(text))
    assert int(tokens) == expected


FIRST_ERROR = """
import sys
from bpe_studio.core.corpus.tasks import corpus_files
from bpe_studio.core.encode.foreign import open_tokenizer
from bpe_studio.core.explain import corpus_pass


def failing(tok, task, last):
    # The first task works longer before it fails: the last one's error comes back first.
    if task.start == 0:
        sum(range(20_000_000))
        raise ValueError("the first task's error")
    if task.start == last:
        raise ValueError("the last task's error")
    return task.start


if __name__ == "__main__":
    tok = open_tokenizer("gpt2")
    files = corpus_files(sys.argv[1])
    tasks = corpus_pass.usage_tasks(tok, files, 2, "text")
    assert len(tasks) > 2
    with corpus_pass.Passes(tok, 2, sum(f.size for f in files)) as passes:
        try:
            list(passes.run(failing, tasks, tasks[-1].start))
        except ValueError as e:
            print(e)
"""


def test_workers_report_the_corpus_first_error_not_the_first_to_finish(tmp_path):
    # A bad-corpus audit: inspect --workers 2 named line 1, then line 7,575, then line 1
    # over three runs of the same file.
    corpus = write_text(tmp_path / "zh.txt", read_fixture("chinese_slice.txt") * 4)
    script = tmp_path / "first_error.py"
    script.write_text(FIRST_ERROR, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run(
        [sys.executable, str(script), str(corpus)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "the first task's error"
