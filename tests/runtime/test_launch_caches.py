"""What the launch keeps across calls: the buffer pool (tinyc/runtime/pool.py) and the packed arguments (submit.py)."""

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


def test_a_relaunched_packing_sends_its_new_addresses():
    """submit.Submitter keeps the value arrays of the last packing: a relaunch rewrites the
    Address slots; a packing with any other object is packed anew (never a stale pointer)."""
    import ctypes

    from tinyc.runtime.submit import Address, Submitter

    submitter = Submitter.__new__(Submitter)
    submitter._last = None
    alpha = ctypes.c_float(1.0)
    packed = [Address(0x1000), alpha, Address(0x2000)]
    values, codes, n = submitter._arrays(packed)
    assert (n, values[0], values[1], values[2]) == (3, 0x1000, ctypes.addressof(alpha), 0x2000)
    packed[0].address, alpha.value = 0x3000, 2.0
    again, _, _ = submitter._arrays(packed)
    assert again is values and (again[0], again[1], again[2]) == (0x3000, ctypes.addressof(alpha), 0x2000)
    beta = ctypes.c_float(0.5)
    packed[1] = beta
    other, _, _ = submitter._arrays(packed)
    assert other is not values and other[1] == ctypes.addressof(beta) and other[0] == 0x3000
