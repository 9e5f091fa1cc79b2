"""`run`: execute one kernel's checked IR on host NumPy arrays, group by group."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import numpy as np

from tinyc.ir.core import Function
from tinyc.reference import (  # noqa: F401  (importing registers the evaluators)
    ops_atomics, ops_collective, ops_control, ops_coopmatrix, ops_coopmatrix_elements, ops_memory,
    ops_scalar, ops_subgroup,
)
from tinyc.reference.arguments import bind_arguments
from tinyc.reference.state import Geometry, State, execute_region

DEFAULT_SUBGROUP_SIZE = 16
"""Subgroup size when neither run() nor the function's attributes give one (the compiler's default)."""


def geometry_of(fn: Function, work_group_size: Sequence[int] | None = None,
                subgroup_size: int | None = None) -> Geometry:
    """Work-group shape: explicit arguments, else the function's attributes, else (S, 1)."""
    sgs = int(subgroup_size or fn.attrs.get("subgroup_size") or DEFAULT_SUBGROUP_SIZE)
    wgs = work_group_size or fn.attrs.get("work_group_size") or (sgs, 1)
    x, y = (int(v) for v in wgs)
    if sgs < 1 or x < 1 or y < 1 or x % sgs:
        raise ValueError(f"work-group size {x}x{y} does not fit subgroups of {sgs} along x")
    return Geometry(x, y, sgs)


def run(fn: Function, args: Sequence[Any], batch: int, groups: Iterable[int] | None = None, *,
        work_group_size: Sequence[int] | None = None, subgroup_size: int | None = None,
        on_collective: Callable[[Any, State], None] | None = None,
        after_collective: Callable[[Any, State], None] | None = None,
        after_instruction: Callable[[Any, State], None] | None = None) -> None:
    """Run work-groups `groups` (default: all of range(batch)) of `fn` on `args`, in place.

    `fn` is checked, unlowered IR. Arguments follow the kernel's Python API
    (NumPy scalars, column-major arrays, lists of arrays or tinyc.Group for
    groups); arrays are updated in place. Raises ReferenceUnsupported for what
    is not emulated, ReferenceFault for undefined behaviour (out-of-bounds
    access, ...), tinyc.LaunchError for arguments that do not fit.
    `on_collective(inst, state)` sees each BLAS-like collective before it runs
    (`tinyc bench` counts flops with it); `after_collective(inst, state)` sees it
    after it wrote its output (the fuzzer checks the result against NumPy);
    `after_instruction(inst, state)` sees every other instruction after it ran, with
    the lanes that ran it still active (`tinyc bench` counts their `run_flops`).
    """
    geometry = geometry_of(fn, work_group_size, subgroup_size)
    values = bind_arguments(fn, args)
    if batch < 0:
        raise ValueError(f"batch must be non-negative, got {batch}")
    with np.errstate(all="ignore"):
        for group_id in range(batch) if groups is None else groups:
            if not 0 <= group_id < batch:
                raise ValueError(f"group {group_id} is outside the batch 0..{batch - 1}")
            st = State(int(group_id), batch, geometry, on_collective=on_collective,
                       after_collective=after_collective, after_instruction=after_instruction)
            st.env.update(zip(fn.args, values))
            execute_region(fn.body, st)
