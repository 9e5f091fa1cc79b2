"""Cooperative matrices, emulated as one whole matrix per subgroup.

Every operand of a coopmatrix instruction must be dynamically uniform, so a
subgroup holds one matrix however the hardware spreads it over the lanes: a
coopmatrix value is a `CoopMatrix` whose data has shape (subgroups, rows,
cols). Positions, scalars and memrefs are taken from each subgroup's first
lane after checking that its other active lanes agree. This lets the
reference run lowered IR too, to check a lowering against the checked IR.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyc.ir.core import Instruction
from tinyc.ir.instructions import (
    AtomicOp, CheckedFlag, CoopMatrixAtomicLoad, CoopMatrixAtomicStore, CoopMatrixAtomicUpdate,
    CoopMatrixConstruct, CoopMatrixLoad, CoopMatrixMulAdd, CoopMatrixScale, CoopMatrixStore,
    StoreFlag,
)
from tinyc.ir.types import CoopMatrixType, ScalarType, Type
from tinyc.reference.errors import ReferenceFault
from tinyc.reference.memory import Memref, MultiBuffer
from tinyc.reference.ops_atomics import combiner, read_modify_write
from tinyc.reference.scalars import (
    CoopMatrix, coerce, compute_dtype, from_storage, is_varying, register_dtype, to_storage,
)
from tinyc.reference.state import State, evaluates


def per_subgroup(x: Any, st: State, what: str) -> Any:
    """A subgroup-uniform value as one entry per subgroup (a scalar if uniform)."""
    if not is_varying(x):
        return x
    count, size, active = st.subgroups(what)
    lanes = np.asarray(x).reshape(count, size)
    first = lanes[:, 0]
    if bool((active[:, None] & (lanes != first[:, None])).any()):
        raise ReferenceFault(f"{what}: an operand is not uniform across the subgroup")
    return first


def _pick(x: Any, s: int) -> Any:
    return x[s] if is_varying(x) else x


def _subgroup_memrefs(m: Memref, active: np.ndarray, st: State, what: str) -> dict[int, Memref]:
    """Each active subgroup's view of a subgroup-uniform memref, with scalar fields."""
    fields = [per_subgroup(v, st, what) for v in (m.offset, *m.shape, *m.strides)]
    which = per_subgroup(m.buffer.which, st, what) if isinstance(m.buffer, MultiBuffer) else None
    views: dict[int, Memref] = {}
    for s in np.nonzero(active)[0]:
        picked = [int(_pick(v, s)) for v in fields]
        buffer = m.buffer.buffers[int(which[s])] if isinstance(m.buffer, MultiBuffer) else m.buffer
        views[int(s)] = Memref(m.element, buffer, picked[0], tuple(picked[1:1 + m.order]),
                               tuple(picked[1 + m.order:]))
    return views


def _coop_type(t: Type) -> CoopMatrixType:
    assert isinstance(t, CoopMatrixType)
    return t


# ---------------------------------------------------------------- load / store

def _block_indices(m: Memref, rows: np.ndarray, cols: np.ndarray, checked_rows: bool, checked_cols: bool,
                   what: str) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices of M[rows, cols] (2-D grids) and which components are in bounds.

    Out-of-bounds components are allowed where checked (they read 0 / are not
    written) and are a fault elsewhere.
    """
    inside_rows = (rows >= 0) & (rows < m.shape[0])
    inside_cols = (cols >= 0) & (cols < m.shape[1])
    inside = inside_rows & inside_cols
    if bool(((~inside_rows & (not checked_rows)) | (~inside_cols & (not checked_cols))).any()):
        raise ReferenceFault(f"{what}: the block reaches outside the {m.shape[0]}x{m.shape[1]} memref")
    flat = m.offset + np.where(inside, rows, 0) * m.strides[0] + np.where(inside, cols, 0) * m.strides[1]
    return flat, inside


def _block(m: Memref, xs: int, ys: int, t: CoopMatrixType, transpose: bool, checked: CheckedFlag,
           what: str) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices of the matrix entries A_ij in M and which are in bounds (spec: load/store).

    `.t` puts A_ij at M[x + j, y + i]: matrix rows run along M's columns, and
    the checked flags name the matrix's rows and columns.
    """
    i, j = np.meshgrid(np.arange(t.rows), np.arange(t.cols), indexing="ij")
    if transpose:
        return _block_indices(m, xs + j, ys + i, checked.cols, checked.rows, what)
    return _block_indices(m, xs + i, ys + j, checked.rows, checked.cols, what)


def _blocks(inst: Instruction, memref_at: int, t: CoopMatrixType, st: State,
            what: str) -> list[tuple[int, Memref, np.ndarray, np.ndarray]]:
    """(subgroup, its memref, flat indices, in bounds) for each active subgroup, in order."""
    _, _, active = st.subgroups(what)
    x = per_subgroup(st.get(inst.operands[memref_at + 1]), st, what)
    y = per_subgroup(st.get(inst.operands[memref_at + 2]), st, what)
    out = []
    for s, m in _subgroup_memrefs(st.get(inst.operands[memref_at]), active, st, what).items():
        flat, inside = _block(m, int(_pick(x, s)), int(_pick(y, s)), t, inst.transpose,  # type: ignore[attr-defined]
                              inst.checked, what)  # type: ignore[attr-defined]
        out.append((s, m, flat, inside))
    return out


@evaluates(CoopMatrixLoad, CoopMatrixAtomicLoad)
def coop_load(inst: CoopMatrixLoad, st: State) -> None:
    what = f"{inst.opname}{'.t' if inst.transpose else '.n'}{inst.checked.value}"
    t = _coop_type(inst.result.type)
    count, _, _ = st.subgroups(what)
    data = np.zeros((count, t.rows, t.cols), dtype=register_dtype(t.component))
    for s, m, flat, inside in _blocks(inst, 0, t, st, what):
        buffer = m.buffer
        assert isinstance(buffer, np.ndarray)
        data[s] = np.where(inside, from_storage(buffer[flat], m.element), 0)
    st.set(inst.result, CoopMatrix(data))


@evaluates(CoopMatrixStore, CoopMatrixAtomicStore)
def coop_store(inst: CoopMatrixStore, st: State) -> None:
    """Subgroups store one after another."""
    what = f"{inst.opname}{'.t' if inst.transpose else ''}{inst.checked.value}{inst.flag.value}"
    value: CoopMatrix = st.get(inst.operands[0])
    t = _coop_type(inst.operands[0].type)
    for s, m, flat, inside in _blocks(inst, 1, t, st, what):
        buffer = m.buffer
        assert isinstance(buffer, np.ndarray)
        values = value.data[s][inside]
        if inst.flag is StoreFlag.ATOMIC_ADD:
            _add_block(m.element, buffer, flat[inside], values)
        else:
            buffer[flat[inside]] = to_storage(values, m.element)


def _add_block(element: ScalarType, buffer: np.ndarray, flat: np.ndarray, values: np.ndarray) -> None:
    read_modify_write(element, buffer, flat, values, combiner(AtomicOp.ADD, element))


@evaluates(CoopMatrixAtomicUpdate)
def coop_atomic_update(inst: CoopMatrixAtomicUpdate, st: State) -> None:
    """Subgroups update one after another; the result holds the old values (0 where skipped)."""
    what = f"{inst.title}{'.t' if inst.transpose else ''}{inst.checked.value}"
    value: CoopMatrix = st.get(inst.operands[0])
    t = _coop_type(inst.operands[0].type)
    count, _, _ = st.subgroups(what)
    old = np.zeros((count, t.rows, t.cols), dtype=register_dtype(t.component))
    combine = combiner(inst.op, t.component)
    for s, m, flat, inside in _blocks(inst, 1, t, st, what):
        buffer = m.buffer
        assert isinstance(buffer, np.ndarray)
        old[s][inside] = read_modify_write(m.element, buffer, flat[inside], value.data[s][inside], combine)
    st.set(inst.result, CoopMatrix(old))


# ---------------------------------------------------------------- arithmetic

@evaluates(CoopMatrixMulAdd)
def coop_mul_add(inst: CoopMatrixMulAdd, st: State) -> None:
    """D := A·B + C, accumulated in C's component type (16-bit floats in f32)."""
    a, b, c = (st.get(v) for v in inst.operands)
    acc = _coop_type(inst.operands[2].type).component
    dt = compute_dtype(acc)
    product = np.matmul(a.data.astype(dt), b.data.astype(dt)) + c.data.astype(dt)
    st.set(inst.result, coerce(CoopMatrix(coerce(product, acc)), inst.result.type))


@evaluates(CoopMatrixScale)
def coop_scale(inst: CoopMatrixScale, st: State) -> None:
    t = _coop_type(inst.result.type)
    scalar = per_subgroup(st.get(inst.operands[0]), st, "cooperative_matrix_scale")
    matrix: CoopMatrix = st.get(inst.operands[1])
    factor = np.asarray(scalar).reshape(-1, 1, 1) if is_varying(scalar) else scalar
    st.set(inst.result, coerce(CoopMatrix(matrix.data * factor), t))


@evaluates(CoopMatrixConstruct)
def coop_construct(inst: CoopMatrixConstruct, st: State) -> None:
    """Each subgroup's matrix filled with its (subgroup-uniform) number."""
    t = _coop_type(inst.result.type)
    count, _, _ = st.subgroups("cooperative_matrix_construct")
    number = per_subgroup(st.get(inst.operands[0]), st, "cooperative_matrix_construct")
    entries = np.broadcast_to(np.asarray(number).reshape(-1, 1, 1), (count, t.rows, t.cols))
    st.set(inst.result, coerce(CoopMatrix(entries.astype(register_dtype(t.component))), t))


def coop_constant(value: Any, t: CoopMatrixType, st: State) -> CoopMatrix:
    """`constant` of coopmatrix type: every component of every subgroup's matrix."""
    count, _, _ = st.subgroups("constant")
    scalar = coerce(np.asarray(value)[()], t.component)
    return CoopMatrix(np.full((count, t.rows, t.cols), scalar, dtype=register_dtype(t.component)))


def coop_select(cond: np.ndarray, a: CoopMatrix, b: CoopMatrix, st: State) -> CoopMatrix:
    """Per-subgroup choice between two matrices; `cond` must be subgroup-uniform."""
    chosen = per_subgroup(cond, st, "a divergent branch or loop carrying a coopmatrix")
    return CoopMatrix(np.where(np.asarray(chosen).reshape(-1, 1, 1), a.data, b.data))

