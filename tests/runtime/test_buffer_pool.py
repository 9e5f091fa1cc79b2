"""The launch's buffer pool (tinyc/runtime/pool.py): sizes, reuse and its limit."""

from __future__ import annotations

import numpy as np

from tinyc.runtime.pool import GRAIN, BufferPool


def test_a_size_taken_empty_then_trimming_over_the_limit():
    """A size class emptied by `take` must not stay behind: trimming takes from the oldest
    class, and an empty one raised IndexError inside a launch."""
    pool = BufferPool(lambda n: np.empty(n, np.uint8), 4 * GRAIN)
    first = pool.take(GRAIN)
    pool.give(GRAIN, first)
    assert pool.take(GRAIN) is first          # the class of GRAIN, the oldest, is empty now
    kept = [np.empty(2 * GRAIN, np.uint8) for _ in range(3)]
    for buffer in kept:                        # the third goes over the limit: the oldest goes
        pool.give(2 * GRAIN, buffer)
    assert pool.held_bytes == 4 * GRAIN
    assert pool.take(2 * GRAIN) is kept[2] and pool.take(2 * GRAIN) is kept[1]


def test_sizes_round_up_and_buffers_come_back():
    made = []
    pool = BufferPool(lambda n: made.append(n) or np.empty(n, np.uint8), 10 * GRAIN)
    a = pool.take(GRAIN + 1)
    assert made == [2 * GRAIN] and a.nbytes == 2 * GRAIN
    pool.give(GRAIN + 1, a)
    assert pool.take(2 * GRAIN - 3) is a and pool.held_bytes == 0
    pool.give(20 * GRAIN, np.empty(20 * GRAIN, np.uint8))   # over the limit alone: not kept
    assert pool.held_bytes == 0
