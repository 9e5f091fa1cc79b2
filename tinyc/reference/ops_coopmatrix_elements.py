"""Coopmatrix components one by one (apply, extract, insert), reductions, prefetch.

The reference holds each subgroup's whole matrix (ops_coopmatrix.py); the
work-item vectors of extract and insert are mapped onto it with the layout
of tinyc/ir/coopmatrix_layout.py, as compiled kernels hold them. A padding
component (a row ≥ R of a matrix_a/acc) extracts as 0 here, and inserting
into one changes nothing; compiled kernels keep whatever the padding holds.
Every work-item holds all of a matrix_b, so a value inserted into one must
be the same in the whole subgroup (else the work-items would disagree).

`cooperative_matrix_apply` runs its region once per component index, for
all lanes together (the row and column differ per lane), as codegen does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyc.ir.coopmatrix_layout import vector_length
from tinyc.ir.instructions import (
    AtomicOp, CoopMatrixApply, CoopMatrixExtract, CoopMatrixInsert, CoopMatrixPrefetch,
    CoopMatrixReduce, ReduceMode,
)
from tinyc.ir.types import CoopMatrixType, MatrixUse, ScalarType, i32
from tinyc.reference.errors import ReferenceFault
from tinyc.reference.ops_atomics import combiner
from tinyc.reference.scalars import CoopMatrix, coerce, register_dtype
from tinyc.reference.state import State, evaluates, execute_region


def _positions(t: CoopMatrixType, st: State, k: int, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per lane of the parallel region: subgroup, row and column of component k; rows may be padding."""
    count, size, _ = st.subgroups(what)
    lanes = np.arange(count * size)
    block, col = divmod(k, t.cols)
    row = np.full(lanes.shape, block) if t.use is MatrixUse.B else lanes % size + size * block
    return lanes // size, row, np.full(lanes.shape, col)


def _extract(m: CoopMatrix, t: CoopMatrixType, st: State, k: int, what: str) -> np.ndarray:
    group, row, col = _positions(t, st, k, what)
    real = row < t.rows
    values = m.data[group, np.where(real, row, 0), col]
    return np.where(real, values, 0).astype(m.data.dtype)


def _insert(m: CoopMatrix, t: CoopMatrixType, value: Any, st: State, k: int, what: str,
            lanes: np.ndarray | None = None) -> CoopMatrix:
    """A copy of m with component k of each active lane (or of `lanes`) set to its value."""
    count, size, active = st.subgroups(what)
    group, row, col = _positions(t, st, k, what)
    values = np.broadcast_to(coerce(value, t.component), group.shape)
    if lanes is None:
        lanes = np.repeat(active, size) & (row < t.rows)
    if t.use is MatrixUse.B:
        per = values.reshape(count, size)
        differs = per != per[:, :1]
        if per.dtype.kind in "fc":  # NaN equals NaN here: the lanes agree
            differs &= ~(np.isnan(per) & np.isnan(per[:, :1]))
        if bool((active[:, None] & differs).any()):
            raise ReferenceFault(f"{what}: every work-item holds all of a matrix_b, so the value "
                                 "inserted must be the same in the whole subgroup")
    data = m.data.copy()
    data[group[lanes], row[lanes], col[lanes]] = values[lanes]
    return CoopMatrix(data)


def _index_in_range(t: CoopMatrixType, k: int, st: State, what: str) -> None:
    n = vector_length(t, st.lanes.subgroup_size if st.lanes is not None else 1)
    if not 0 <= k < n:
        raise ReferenceFault(f"{what}: index {k} is outside the work-item vector of {n} components")


@evaluates(CoopMatrixExtract)
def coop_extract(inst: CoopMatrixExtract, st: State) -> None:
    what = "cooperative_matrix_extract"
    t = inst.operands[0].type
    assert isinstance(t, CoopMatrixType)
    st.subgroups(what)
    _index_in_range(t, inst.index, st, what)
    st.set(inst.result, coerce(_extract(st.get(inst.operands[0]), t, st, inst.index, what),
                               inst.result.type))


@evaluates(CoopMatrixInsert)
def coop_insert(inst: CoopMatrixInsert, st: State) -> None:
    what = "cooperative_matrix_insert"
    t = inst.result.type
    assert isinstance(t, CoopMatrixType)
    st.subgroups(what)
    _index_in_range(t, inst.index, st, what)
    st.set(inst.result, _insert(st.get(inst.operands[1]), t, st.get(inst.operands[0]), st,
                                inst.index, what))


@evaluates(CoopMatrixApply)
def coop_apply(inst: CoopMatrixApply, st: State) -> None:
    """The region per component index k, on the lanes whose component k is a real entry."""
    what = "cooperative_matrix_apply"
    t = inst.result.type
    assert isinstance(t, CoopMatrixType)
    count, size, active = st.subgroups(what)
    row_arg, col_arg, value_arg = inst.body.args
    m: CoopMatrix = st.get(inst.operands[0])
    for k in range(vector_length(t, size)):
        _, row, col = _positions(t, st, k, what)
        lanes = np.repeat(active, size) & (row < t.rows)
        if not lanes.any():
            continue
        st.set(row_arg, coerce(row, i32))
        st.set(col_arg, coerce(col, i32))
        st.set(value_arg, _extract(m, t, st, k, what))
        with st.masked(lanes):
            yielded = execute_region(inst.body, st)
        if not yielded:
            raise ReferenceFault(f"{what}: the region must yield the new component")
        m = _insert(m, t, np.broadcast_to(yielded[0], lanes.shape), st, k, what, lanes)
    st.set(inst.result, coerce(m, t))


def fold(op: AtomicOp, t: ScalarType, data: np.ndarray, axis: int) -> np.ndarray:
    """Left-to-right fold along `axis`, rounding every step to t (as the compiled fold)."""
    combine = combiner(op, t)
    moved = np.moveaxis(data, axis, -1)
    acc = moved[..., 0]
    for k in range(1, moved.shape[-1]):
        acc = combine(acc, moved[..., k])
    return np.expand_dims(np.asarray(acc, dtype=register_dtype(t)), axis)


@evaluates(CoopMatrixReduce)
def coop_reduce(inst: CoopMatrixReduce, st: State) -> None:
    """`.row`: each row to one value (M×1); `.column`: each column (1×N)."""
    st.subgroups(inst.title)
    t = inst.operands[0].type
    assert isinstance(t, CoopMatrixType)
    m: CoopMatrix = st.get(inst.operands[0])
    axis = 2 if inst.mode is ReduceMode.ROW else 1
    st.set(inst.result, coerce(CoopMatrix(fold(inst.op, t.component, m.data, axis)), inst.result.type))


@evaluates(CoopMatrixPrefetch)
def coop_prefetch(inst: CoopMatrixPrefetch, st: State) -> None:
    """A cache hint: nothing to do, and (like a hardware prefetch) no access to fault on."""
    st.subgroups("cooperative_matrix_prefetch")
