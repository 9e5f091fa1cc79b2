"""BLAS-like collectives on whole memrefs: gemm, gemv, ger, axpby, sum, cumsum, hadamard.

Each computes `out := alpha·f(inputs) + beta·out` with NumPy in the output's
compute dtype (see scalars.compute_dtype) and rounds once to the output
element type. When beta is 0 the output is not read, so NaN or garbage in it
does not leak into the result (BLAS convention). `.atomic` variants behave
like the plain ones: one work-group is emulated at a time.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyc.ir.instructions import (
    Axpby, BlasInstruction, Cumsum, Gemm, Gemv, Ger, HadamardProduct, Sum,
)
from tinyc.reference.memory import Memref, read_array, write_array
from tinyc.reference.scalars import compute_dtype
from tinyc.reference.state import State, evaluates


def _update(inst: BlasInstruction, st: State, compute: Callable[[np.dtype, Callable], np.ndarray]) -> None:
    """out := alpha·compute(...) + beta·out, beta = 0 not reading out."""
    if st.on_collective is not None:
        st.on_collective(inst, st)
    out: Memref = st.get(inst.output)
    dtype = compute_dtype(out.element)
    what = inst.opname

    def read(value: Any) -> np.ndarray:
        return read_array(st.get(value), dtype, what)

    alpha = np.asarray(st.get(inst.alpha)).astype(dtype)
    beta = np.asarray(st.get(inst.beta)).astype(dtype)
    result = alpha * np.asarray(compute(dtype, read), dtype=dtype)
    if beta != 0:
        result = result + beta * read(inst.output)
    write_array(out, result, what)
    if st.after_collective is not None:
        st.after_collective(inst, st)


def _op(x: np.ndarray, transpose: bool) -> np.ndarray:
    return x.T if transpose and x.ndim == 2 else x


@evaluates(Gemm)
def gemm(inst: Gemm, st: State) -> None:
    A, B = inst.inputs
    _update(inst, st, lambda dt, read: _op(read(A), inst.transpose_a) @ _op(read(B), inst.transpose_b))


@evaluates(Gemv)
def gemv(inst: Gemv, st: State) -> None:
    A, b = inst.inputs
    _update(inst, st, lambda dt, read: _op(read(A), inst.transpose) @ read(b))


@evaluates(Ger)
def ger(inst: Ger, st: State) -> None:
    a, b = inst.inputs
    _update(inst, st, lambda dt, read: np.multiply.outer(read(a), read(b)))


@evaluates(HadamardProduct)
def hadamard_product(inst: HadamardProduct, st: State) -> None:
    a, b = inst.inputs
    _update(inst, st, lambda dt, read: read(a) * read(b))


@evaluates(Axpby)
def axpby(inst: Axpby, st: State) -> None:
    (A,) = inst.inputs
    _update(inst, st, lambda dt, read: _op(read(A), inst.transpose))


@evaluates(Sum)
def sum_(inst: Sum, st: State) -> None:
    """Row sums of op(A) into a vector, or the sum of a vector into a scalar."""
    (A,) = inst.inputs

    def compute(dt: np.dtype, read: Callable) -> np.ndarray:
        a = read(A)
        if a.ndim == 1:
            return a.sum(dtype=dt)
        return _op(a, inst.transpose).sum(axis=1, dtype=dt)

    _update(inst, st, compute)


@evaluates(Cumsum)
def cumsum(inst: Cumsum, st: State) -> None:
    """Inclusive prefix sums along mode n (counting from 0)."""
    (A,) = inst.inputs
    _update(inst, st, lambda dt, read: np.cumsum(read(A), axis=inst.mode, dtype=dt))
