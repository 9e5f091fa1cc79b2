"""copy_argument: a copy for a run that must leave the caller's arguments alone (the reference
interpreter's and `tinyc run --check`'s), including tinyc.Group, which it duck-types (the runtime
that defines Group sits above the interpreter: tests/test_layers.py)."""

import numpy as np

import tinyc
from tinyc.reference.arguments import copy_argument


def test_a_group_of_flat_members_is_copied_with_its_layout():
    members = [np.arange(12, dtype=np.float32) + k for k in range(3)]
    group = tinyc.Group(members, offset=2, shape=(3, 2), stride=(1, 3))
    copied = copy_argument(group)
    assert type(copied) is tinyc.Group
    assert (copied.offset, copied.shape, copied.stride) == (group.offset, group.shape, group.stride)
    for mine, theirs in zip(copied.arrays, members):
        np.testing.assert_array_equal(mine, theirs)
        assert not np.shares_memory(mine, theirs)


def test_a_stacked_group_and_a_list_and_a_strided_view():
    stacked = tinyc.Group(np.ones((4, 5), np.float32))
    assert copy_argument(stacked) is stacked  # stacked members: passed as they are (one array)
    base = np.arange(40, dtype=np.float64).reshape(8, 5, order="F")
    view = base[::2, 1:]
    [copied] = copy_argument([view])
    np.testing.assert_array_equal(copied, view)
    assert copied.strides == view.strides and not np.shares_memory(copied, base)
