"""Subgroup operations: broadcast, and add/max/min reduce and scans.

In a parallel region lane l is the work-item with local linear id l, so a
subgroup is a run of `subgroup_size` consecutive lanes: the lanes reshape to
(num_subgroups, subgroup_size). Scans fold lane by lane in subgroup-local-id
order, rounding every partial result to the operand type, which is what a
sequential definition of the spec's table gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyc.ir.instructions import (
    SubgroupBroadcast, SubgroupMode, SubgroupOp, SubgroupOperation,
)
from tinyc.ir.types import ScalarType
from tinyc.reference.errors import ReferenceFault, ReferenceUnsupported
from tinyc.reference.scalars import coerce, register_dtype
from tinyc.reference.state import State, evaluates


def _per_lane(x: Any, st: State, t: ScalarType) -> np.ndarray:
    n = st.lanes.count  # type: ignore[union-attr]
    return np.broadcast_to(coerce(x, t), (n,))


def _identity(op: SubgroupOp, t: ScalarType) -> Any:
    dt = register_dtype(t)
    if op is SubgroupOp.ADD:
        return dt.type(0)
    if t.is_int:
        info = np.iinfo(dt)
        return dt.type(info.min if op is SubgroupOp.MAX else info.max)
    return dt.type(-np.inf if op is SubgroupOp.MAX else np.inf)


_COMBINE = {SubgroupOp.ADD: np.add, SubgroupOp.MAX: np.fmax, SubgroupOp.MIN: np.fmin}
_INT_COMBINE = {SubgroupOp.ADD: np.add, SubgroupOp.MAX: np.maximum, SubgroupOp.MIN: np.minimum}


@evaluates(SubgroupOperation)
def subgroup_operation(inst: SubgroupOperation, st: State) -> None:
    what = f"subgroup_{inst.op.value}.{inst.mode.value}"
    count, size, _ = st.subgroups(what)
    t = inst.result.type
    assert isinstance(t, ScalarType)
    if t.is_complex and inst.op is not SubgroupOp.ADD:
        raise ReferenceUnsupported(f"{what} on {t}")
    x = _per_lane(st.get(inst.operands[0]), st, t).reshape(count, size)
    combine = (_INT_COMBINE if t.is_int else _COMBINE)[inst.op]
    identity = _identity(inst.op, t)
    inclusive = np.empty_like(x)
    acc = np.full(count, identity, dtype=x.dtype)
    for k in range(size):
        acc = coerce(combine(acc, x[:, k]), t)
        inclusive[:, k] = acc
    if inst.mode is SubgroupMode.INCLUSIVE_SCAN:
        out = inclusive
    elif inst.mode is SubgroupMode.EXCLUSIVE_SCAN:
        out = np.concatenate([np.full((count, 1), identity, dtype=x.dtype), inclusive[:, :-1]], axis=1)
    else:
        out = np.repeat(inclusive[:, -1:], size, axis=1)
    st.set(inst.result, out.reshape(-1))


@evaluates(SubgroupBroadcast)
def subgroup_broadcast(inst: SubgroupBroadcast, st: State) -> None:
    """Every lane gets the value of lane `id` of its subgroup; `id` must be dynamically uniform."""
    count, size, _ = st.subgroups("subgroup_broadcast")
    t = inst.result.type
    assert isinstance(t, ScalarType)
    x = _per_lane(st.get(inst.operands[0]), st, t).reshape(count, size)
    lane = np.broadcast_to(np.asarray(st.get(inst.operands[1]), dtype=np.int64), (count * size,))
    active = st.active_lanes().reshape(count, size)
    lane = lane.reshape(count, size)
    first = lane[:, :1]
    if bool((active & (lane != first)).any()):
        raise ReferenceFault("subgroup_broadcast: the lane id is not uniform across the subgroup")
    if bool((active & ((first < 0) | (first >= size))).any()):
        raise ReferenceFault(f"subgroup_broadcast: lane id outside 0..{size - 1}")
    chosen = np.take_along_axis(x, np.clip(first, 0, size - 1), axis=1)
    st.set(inst.result, np.repeat(chosen, size, axis=1).reshape(-1))
