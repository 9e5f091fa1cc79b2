"""BLAS-like collectives on whole memrefs: gemm, gemv, ger, axpby, sum, cumsum, hadamard.

Each computes `out := alpha·X(inputs) + beta·out`, where X is the class's own
NumPy meaning (`BlasInstruction.evaluate`, shared with the fuzz oracle), in
the output's compute dtype (see scalars.compute_dtype), and rounds once to
the output element type. When beta is 0 the output is not read, so NaN or
garbage in it does not leak into the result (BLAS convention). `.atomic`
variants behave like the plain ones: one work-group is emulated at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyc.ir.instructions import BlasInstruction, instruction_classes
from tinyc.reference.memory import Memref, read_array, write_array
from tinyc.reference.scalars import compute_dtype
from tinyc.reference.state import State, evaluates

COLLECTIVES = [cls for cls in instruction_classes() if issubclass(cls, BlasInstruction)]


@evaluates(*COLLECTIVES)
def collective(inst: BlasInstruction, st: State) -> None:
    """out := alpha·X + beta·out, beta = 0 not reading out."""
    if st.on_collective is not None:
        st.on_collective(inst, st)
    out: Memref = st.get(inst.output)
    dtype = compute_dtype(out.element)
    what = inst.opname

    def read(value: Any) -> np.ndarray:
        return read_array(st.get(value), dtype, what)

    alpha = np.asarray(st.get(inst.alpha)).astype(dtype)
    beta = np.asarray(st.get(inst.beta)).astype(dtype)
    term = inst.evaluate([read(v) for v in inst.inputs])
    result = alpha * np.asarray(term, dtype=dtype)
    if beta != 0:
        result = result + beta * read(inst.output)
    write_array(out, result, what)
    if st.after_collective is not None:
        st.after_collective(inst, st)
