"""A stacked group given batch-first (`(N, rows, cols)`, as NumPy code stacks matrices) is refused
with a message that says members go along the last mode and how to pass the array; the advice
works."""

from __future__ import annotations

import numpy as np
from test_errors import raises

from runtime_testlib import rand

HINT = ("a stacked array holds its members along its last mode", "looks batch-first",
        "np.asfortranarray(np.moveaxis(array, 0, -1))")


def test_too_few_members_along_the_last_mode(kernels, rng):
    with raises("G", "group has 3 arrays, too few for batch=5", *HINT, "(5, 4, 3) array", "a (4, 3, 5) array"):
        kernels["gscale"](rand(rng, (5, 4, 3)), 1.0, batch=5)


def test_members_of_the_wrong_shape(kernels, rng):
    with raises("G", "(stacked) member", "expected shape (4, ?)", *HINT):
        kernels["gscale"](rand(rng, (6, 4, 3), order="C"), 1.0, batch=2)


def test_the_advice_works(kernels, rng):
    batch_first = rand(rng, (5, 4, 3), order="C")
    stacked = np.asfortranarray(np.moveaxis(batch_first, 0, -1))
    kernels["gscale"](stacked, 2.0, batch=5)
    np.testing.assert_array_equal(np.moveaxis(stacked, -1, 0), batch_first * np.float32(2))


def test_arrays_that_do_not_look_batch_first_get_no_hint(kernels, rng):
    with raises("G", "group has 2 arrays, too few for batch=5") as info:
        kernels["gscale"](rand(rng, (4, 3, 2)), 1.0, batch=5)
    assert "batch-first" not in str(info.value)
