"""The reference interpreter's collectives, checked against NumPy while it runs.

The interpreter computes each collective with its class's NumPy meaning
(`BlasInstruction.evaluate`) in the output's compute type, reading and
writing memrefs through its memory model. Before each one runs,
`CollectiveOracle.before` takes its operands as plain arrays; after it wrote
its output, `after` recomputes alpha·X + beta·out with the same meaning in
float64/complex128 (one derivation of what a collective means, not two) and
compares element by element within the output type's rounding (integers
exactly, modulo their width): what it checks is the reference's strides,
views, types, rounding and scalars. A disagreement is recorded, not raised,
so the fuzzer reports it with the program.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
        term = inst.evaluate(inputs)
        magnitude = inst.evaluate([np.abs(x) for x in inputs])  # Σ|products| (multilinear)
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
        terms = max(1, inst.summed_terms([x.shape for x in inputs]))
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
