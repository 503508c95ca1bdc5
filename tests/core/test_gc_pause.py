"""``gc_paused``: the cyclic collector is off inside the block and as it was after, or frozen
for a process about to end; an error inside the block changes nothing of that."""

from __future__ import annotations

import gc

import pytest

from bpe_studio.core.io.gc_pause import gc_paused


@pytest.fixture
def collector_state():
    """The collector as each test sets it, put back after (it is the process's: other tests
    in this worker may have turned it off)."""
    was_on = gc.isenabled()
    yield
    gc.unfreeze()
    (gc.enable if was_on else gc.disable)()


@pytest.mark.parametrize("on_before", [True, False])
def test_off_inside_and_as_it_was_after(collector_state, on_before):
    (gc.enable if on_before else gc.disable)()
    # tests/conftest.py freezes what outlives each module; some of it may be freed meanwhile.
    frozen = gc.get_freeze_count()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled() is on_before
    assert gc.get_freeze_count() <= frozen  # none more


def test_an_error_inside_still_restores_it(collector_state):
    gc.enable()
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("inside")
    assert gc.isenabled()


def test_freeze_leaves_it_off_with_what_is_alive_frozen(collector_state):
    gc.enable()
    kept = [[i] for i in range(1000)]  # tracked containers alive at the end of the block
    with gc_paused(freeze=True):
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


def test_blocks_overlapping_on_threads_leave_the_collector_on(collector_state, monkeypatch):
    """Found by the audit of threaded batches: each block looked at the collector for itself,
    so a block starting while another held it off read "off", and when its look and its own
    turning off were split by the other block's end, it left the collector off for good. The
    look is made slow here, where the old code let the other block end inside it."""
    import threading
    import types

    from bpe_studio.core.io import gc_pause

    first_in, first_may_end, first_ended = threading.Event(), threading.Event(), threading.Event()

    def slow_isenabled() -> bool:
        on = gc.isenabled()
        if not on:
            first_may_end.set()
            first_ended.wait(timeout=0.5)  # the old code's window; the new one holds a lock
        return on

    fake = types.SimpleNamespace(
        isenabled=slow_isenabled, disable=gc.disable, enable=gc.enable, freeze=gc.freeze
    )
    monkeypatch.setattr(gc_pause, "gc", fake)
    gc.enable()

    def first() -> None:
        with gc_paused():
            first_in.set()
            first_may_end.wait(timeout=0.5)
        first_ended.set()

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait()
    with gc_paused():
        pass
    thread.join()
    assert gc.isenabled()


@pytest.mark.skipif(not hasattr(__import__("os"), "register_at_fork"), reason="needs fork")
def test_a_child_forked_during_another_threads_block_collects(collector_state):
    """Found by the same audit: the blocks of threads that do not live on in a forked child
    stayed counted there, so a pool's worker forked during a long encode never collected."""
    import multiprocessing
    import threading

    inside, leave = threading.Event(), threading.Event()
    gc.enable()

    def long_block() -> None:
        with gc_paused():
            inside.set()
            leave.wait(timeout=60)

    thread = threading.Thread(target=long_block)
    thread.start()
    inside.wait()
    try:
        with multiprocessing.get_context("fork").Pool(1) as pool:
            assert pool.apply(gc.isenabled)
    finally:
        leave.set()
        thread.join()
    assert gc.isenabled()
