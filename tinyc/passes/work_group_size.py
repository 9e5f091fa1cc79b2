"""Choose each kernel's subgroup size and two-dimensional work-group size.

The attributes `subgroup_size` and `work_group_size` override the choice.
Without collective instructions one subgroup per work-group is enough.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyc.ir.core import Function

if TYPE_CHECKING:
    from tinyc.passes import PassOptions

DEFAULT_SUBGROUP_SIZE = 16
"""The CPU runtime's own choice for every kernel (RUNTIME-NOTES §2)."""


def choose_work_group_size(fn: Function, options: "PassOptions") -> None:
    """Record `subgroup_size` and `work_group_size` in the function's attributes."""
    sgs = fn.attrs.get("subgroup_size") or options.subgroup_size or DEFAULT_SUBGROUP_SIZE
    fn.attrs["subgroup_size"] = sgs
    if "work_group_size" not in fn.attrs:
        fn.attrs["work_group_size"] = [sgs, 1]
