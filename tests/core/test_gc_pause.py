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
