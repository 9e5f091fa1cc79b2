"""The reference interpreter's collectives, checked against NumPy while it runs.

The interpreter computes gemm, gemv, ger, axpby, sum, cumsum and
hadamard_product with `@`, `np.cumsum` and friends in the output's compute
type. Before each one runs, `CollectiveOracle.before` takes its operands; after
it wrote its output, `after` recomputes the result another way (`np.einsum`
in float64/complex128, cumsum as a product with a triangular matrix of ones)
and compares element by element within the output type's rounding (integers
exactly, modulo their width). A disagreement is recorded, not raised, so the
fuzzer reports it with the program.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyc.ir.instructions import Axpby, Cumsum, Gemm, Gemv, Ger, HadamardProduct, Sum
from tinyc.reference.memory import read_array

EPS = {"f16": 2.0**-10, "bf16": 2.0**-7, "f32": 2.0**-23, "f64": 2.0**-52, "c32": 2.0**-23,
       "c64": 2.0**-52}
# The largest finite magnitude of each floating type: past it a partial sum may overflow.
# (bf16 keeps float32's exponent with 8 significant bits: its largest is 0x7F7F0000.)
LARGEST = {"f16": float(np.finfo(np.float16).max),
           "bf16": float(np.array(0x7F7F0000, np.uint32).view(np.float32)),
           "f32": float(np.finfo(np.float32).max), "f64": float(np.finfo(np.float64).max),
           "c32": float(np.finfo(np.float32).max), "c64": float(np.finfo(np.float64).max)}


def _wide(element) -> np.dtype:
    if element.is_complex:
        return np.dtype(np.complex128)
    if element.is_int:
        return np.dtype(np.int64)
    return np.dtype(np.float64)


def _op(x: np.ndarray, transpose: bool) -> np.ndarray:
    return x.T if transpose and x.ndim == 2 else x


class CollectiveOracle:
    """before/after hooks for `tinyc.reference.run`; `failures` lists what disagreed."""

    def __init__(self) -> None:
        self.pending: tuple | None = None
        self.failures: list[str] = []
        self.checked = 0

    def before(self, inst: Any, st: Any) -> None:
        out = st.get(inst.output)
        dtype = _wide(out.element)
        inputs = [read_array(st.get(v), dtype, "oracle").copy() for v in inst.inputs]
        old = read_array(out, dtype, "oracle").copy()  # (read_array may return a view)
        alpha = np.asarray(st.get(inst.alpha)).astype(dtype)[()]
        beta = np.asarray(st.get(inst.beta)).astype(dtype)[()]
        self.pending = (inst, inputs, old, alpha, beta)

    def after(self, inst: Any, st: Any) -> None:
        pending, self.pending = self.pending, None
        if pending is None or pending[0] is not inst:
            return
        _, inputs, old, alpha, beta = pending
        out = st.get(inst.output)
        term, magnitude = _term(inst, inputs)
        expected = alpha * term + (beta * old if beta != 0 else 0)
        got = read_array(out, _wide(out.element), "oracle")
        self.checked += 1
        element = out.element
        if element.is_int:
            bits = element.size * 8
            mask = (1 << bits) - 1

            def wrap(x: np.ndarray) -> np.ndarray:
                u = np.asarray(x).astype(np.int64).astype(np.uint64) & np.uint64(mask)
                return u

            if not np.array_equal(wrap(got), wrap(expected)):
                self.failures.append(f"{inst.opname} at {_where(inst)}: the reference's {element} result "
                                     f"differs from NumPy's")
            return
        expected = _rounded(expected, element)  # overflow to infinity as the output type does
        bound = np.abs(alpha) * magnitude + (np.abs(beta) * np.abs(old) if beta != 0 else 0)
        terms = max(1, _terms(inst, inputs))
        tol = EPS[element.name] * (4 + 2 * terms) * (np.asarray(bound) + 1e-30) + EPS[element.name]
        # Where a product or partial sum may overflow, inf and nan are both right: the reference
        # computes in the output type (inf·x, inf-inf) and NumPy in a wider one.
        with np.errstate(invalid="ignore", over="ignore"):
            may_overflow = ~(np.asarray(bound) * 4 < LARGEST[element.name])
            overflowed = may_overflow & ~np.isfinite(got)
            bad = ~((np.abs(got - expected) <= tol) | (got == expected)) & ~(np.isnan(got) & np.isnan(expected))
            bad &= ~overflowed
        if np.any(bad):
            worst = float(np.max(np.abs(got - expected)[bad])) if np.any(bad) else 0.0
            self.failures.append(f"{inst.opname} at {_where(inst)}: the reference differs from NumPy "
                                 f"by {worst:.3g}")


def _rounded(values: np.ndarray, element: Any) -> np.ndarray:
    """values rounded to the element type and widened again (bf16: to nearest even)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if element.name == "bf16":
            bits = np.asarray(values, dtype=np.float32).view(np.uint32)
            rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) & np.uint32(0xFFFF0000)
            return np.where(np.isnan(values), values, rounded.view(np.float32).astype(np.float64))
        narrow = {"f16": np.float16, "f32": np.float32, "c32": np.complex64}.get(element.name)
        if narrow is None:
            return values
        return np.asarray(values).astype(narrow).astype(values.dtype)


def _where(inst: Any) -> str:
    span = inst.span
    return f"{span.line}.{span.column}" if span is not None else "?"


def _terms(inst: Any, inputs: list[np.ndarray]) -> int:
    """How many products add up in one output element (rounding steps)."""
    if isinstance(inst, Gemm):
        return inputs[0].shape[0 if inst.transpose_a else 1]
    if isinstance(inst, Gemv):
        return inputs[0].shape[0 if inst.transpose else 1]
    if isinstance(inst, Sum):
        a = inputs[0]
        return a.size if a.ndim == 1 else a.shape[0 if inst.transpose else 1]
    if isinstance(inst, Cumsum):
        return inputs[0].shape[inst.mode]
    return 1


def _term(inst: Any, inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The collective's X in alpha·X + beta·out, and Σ|products| (for the error bound)."""
    absolute = [np.abs(x) for x in inputs]
    if isinstance(inst, Gemm):
        formula = "ik,kj->ij"
        ops = [_op(inputs[0], inst.transpose_a), _op(inputs[1], inst.transpose_b)]
        mags = [_op(absolute[0], inst.transpose_a), _op(absolute[1], inst.transpose_b)]
        return np.einsum(formula, *ops), np.einsum(formula, *mags)
    if isinstance(inst, Gemv):
        ops = [_op(inputs[0], inst.transpose), inputs[1]]
        mags = [_op(absolute[0], inst.transpose), absolute[1]]
        return np.einsum("ik,k->i", *ops), np.einsum("ik,k->i", *mags)
    if isinstance(inst, Ger):
        return np.einsum("i,j->ij", *inputs), np.einsum("i,j->ij", *absolute)
    if isinstance(inst, HadamardProduct):
        return inputs[0] * inputs[1], absolute[0] * absolute[1]
    if isinstance(inst, Axpby):
        return _op(inputs[0], inst.transpose), _op(absolute[0], inst.transpose)
    if isinstance(inst, Sum):
        a, m = inputs[0], absolute[0]
        if a.ndim == 1:
            return np.einsum("i->", a), np.einsum("i->", m)
        return np.einsum("ij->i", _op(a, inst.transpose)), np.einsum("ij->i", _op(m, inst.transpose))
    if isinstance(inst, Cumsum):
        a, m = inputs[0], absolute[0]
        n = a.shape[inst.mode]
        lower = np.tril(np.ones((n, n), dtype=a.dtype))
        moved = np.moveaxis(a, inst.mode, 0)
        moved_m = np.moveaxis(m, inst.mode, 0)
        total = np.tensordot(lower, moved, axes=(1, 0))
        total_m = np.tensordot(np.abs(lower), moved_m, axes=(1, 0))
        return np.moveaxis(total, 0, inst.mode), np.moveaxis(total_m, 0, inst.mode)
    raise TypeError(f"no NumPy formula for {inst.opname}")
