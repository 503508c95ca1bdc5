"""Ctrl-C held while a pool runs (``core.io.interrupts``): noted by the handler, raised where
the caller checks or when the block ends, never inside the pool's machinery; and
``encode_file`` interrupted between two chunks stops its workers and writes nothing. The
signal is sent with ``signal.raise_signal``: its handler runs in this thread before the next
line, so nothing waits on a clock."""

from __future__ import annotations

import multiprocessing
import signal
import threading
from contextlib import contextmanager

import pytest
from core_helpers import read_fixture

from bpe_studio.core import Tokenizer
from bpe_studio.core.encode.encode_file import encode_file
from bpe_studio.core.io.interrupts import checked, held_interrupts, no_check


@contextmanager
def python_sigint():
    """Python's own SIGINT handler for the test (a test runner may have its own)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_is_noted_then_raised_where_checked():
    with python_sigint():
        with held_interrupts() as check:
            check()  # nothing came yet
            signal.raise_signal(signal.SIGINT)  # noted, not raised here
            with pytest.raises(KeyboardInterrupt):
                check()
            check()  # raised once
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_not_yet_raised_is_raised_when_the_block_ends():
    with python_sigint():
        reached = False
        with pytest.raises(KeyboardInterrupt):
            with held_interrupts():
                signal.raise_signal(signal.SIGINT)
                reached = True
        assert reached
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_checked_raises_before_the_next_item():
    with python_sigint():
        seen = []
        with pytest.raises(KeyboardInterrupt):
            with held_interrupts() as check:
                for item in checked([1, 2, 3], check):
                    seen.append(item)
                    if item == 1:
                        signal.raise_signal(signal.SIGINT)
        assert seen == [1]


def test_nothing_is_held_off_the_main_thread_or_under_another_handler():
    got = []
    thread = threading.Thread(target=lambda: got.append(held_interrupts().__enter__()))
    thread.start()
    thread.join()
    assert got == [no_check]
    came = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        with held_interrupts() as check:
            assert check is no_check
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_encode_file_interrupted_between_chunks_stops_its_workers(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text(read_fixture("english_books_slice.txt") * 12, encoding="utf-8")
    out = tmp_path / "ids.npy"
    sent = []

    def progress(done: int, total: int) -> None:
        if done and not sent:  # the first chunk is in: the workers are under way
            sent.append(done)
            signal.raise_signal(signal.SIGINT)

    with python_sigint(), pytest.raises(KeyboardInterrupt):
        encode_file(lambda: Tokenizer.preset("gpt2"), text, out, workers=2, progress=progress)
    assert sent
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [text]  # no chunk folder, no temporary output
    assert multiprocessing.active_children() == []
