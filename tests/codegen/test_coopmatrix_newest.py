"""The newest language's changes to coopmatrix instructions, on the device and in the reference
interpreter, against NumPy: the load's transpose may be left out, the store takes a transpose
(and checked flags with it), a matrix_acc may be cast to matrix_a or matrix_b, and every
arithmetic operation works on coopmatrices, component-wise.

Shapes include rows that do not fill the last subgroup block (padding in the layout).
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import NUMPY, bf16_to_f32, checked, f32_to_bf16, fortran, program, random_values
from test_codegen_arith import expected_float, expected_int, expected_unary, ops_of, unary_result
from tinyc.reference import run as run_reference

BATCH = 2


def head(name: str, params: str, S: int) -> str:
    return f"func @{name}({params}) attributes {{subgroup_size={S}, work_group_size=[{S}, 1]}} {{"


def both(source: str, name: str, args: list, batch: int = BATCH) -> None:
    """Run on the device, then the reference on copies; they must agree with each other exactly
    for integers and the caller checks NumPy on `args`."""
    copies = [a.copy(order="A") if isinstance(a, np.ndarray) else a for a in args]
    program(source)[name](*args, batch=batch)
    run_reference(checked(source)[name], copies, batch)
    for a, c in zip(args, copies):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(as_float(a), as_float(c), rtol=2e-3, atol=2e-3)


def as_float(a: np.ndarray) -> np.ndarray:
    return bf16_to_f32(a) if a.dtype == np.uint16 else a


# ---------------------------------------------------------------- store.t, load without .n

# (type, R, C, S, row position, column position, checked flag); the memref is C×R (+1 padding row)
STORES = [("f32", 16, 8, 16, 0, 0, ""), ("f32", 5, 3, 4, 1, 0, ""), ("f64", 8, 4, 8, 1, 0, ""),
          ("i16", 6, 5, 4, 0, 3, ".rows_checked"), ("c32", 8, 8, 8, 3, 2, ".both_checked"),
          ("f16", 8, 12, 4, 4, 0, ".cols_checked")]


def store_t_kernel(k: int) -> str:
    t, R, C, S, x, y, flag = STORES[k]
    rows, cols = C + 1, R  # M is (C+1)×R; checked cases reach past it
    coop = f"coopmatrix<{t}x{R}x{C},matrix_acc>"
    return f"""
{head(f"st{k}", f"%A: memref<{t}x{R}x{C}x?>, %M: memref<{t}x{rows}x{cols}x?>", S)}
  %gid = builtin.group_id : index
  %a = subview %A[:, :, %gid] : memref<{t}x{R}x{C}>
  %m = subview %M[:, :, %gid] : memref<{t}x{rows}x{cols}>
  parallel {{
    %z = constant 0 : index
    %x = constant {x} : index
    %y = constant {y} : index
    %v = cooperative_matrix_load %a[%z, %z] : {coop}
    cooperative_matrix_store.t{flag} %v, %m[%x, %y]
  }}
}}
"""


STORE_SOURCE = "\n".join(store_t_kernel(k) for k in range(len(STORES)))


@pytest.mark.parametrize("k", range(len(STORES)), ids=[f"{s[0]}_{s[1]}x{s[2]}{s[6]}" for s in STORES])
def test_transposed_store(device, k):
    """M[x + j, y + i] = A[i, j] (spec), skipping what a checked flag says is outside M."""
    t, R, C, S, x, y, flag = STORES[k]
    rng = np.random.default_rng(k)
    A = fortran(random_values(t, R * C * BATCH, rng).reshape(R, C, BATCH))
    M = fortran(np.zeros((C + 1, R, BATCH), NUMPY[t]))
    want = M.copy()
    for i in range(R):
        for j in range(C):
            inside_rows = 0 <= y + i < R if "rows" in flag or "both" in flag else True
            inside_cols = 0 <= x + j < C + 1 if "cols" in flag or "both" in flag else True
            if inside_rows and inside_cols:
                want[x + j, y + i] = A[i, j]
    both(STORE_SOURCE, f"st{k}", [A, M])
    np.testing.assert_array_equal(M, want)


# ---------------------------------------------------------------- casts acc -> a / b, then mul_add

CASTS = [("f32", 16, 4, 8, 16), ("f32", 8, 8, 4, 4), ("i32", 12, 3, 6, 4), ("f64", 8, 16, 2, 8)]
"""(type, M, K, N, S): A (M×K) and B (K×N) loaded as matrix_acc, cast to matrix_a / matrix_b.
The casts are the newest language's, whose mul_add wants M a multiple of S; K = 3 with S = 4
pads."""


def cast_kernel(k: int) -> str:
    t, M, K, N, S = CASTS[k]
    return f"""
{head(f"cast{k}", f"%A: memref<{t}x{M}x{K}>, %B: memref<{t}x{K}x{N}>, %C: memref<{t}x{M}x{N}>", S)}
  parallel {{
    %z = constant 0 : index
    %a = cooperative_matrix_load.n %A[%z, %z] : coopmatrix<{t}x{M}x{K},matrix_acc>
    %b = cooperative_matrix_load.n %B[%z, %z] : coopmatrix<{t}x{K}x{N},matrix_acc>
    %c = cooperative_matrix_load.n %C[%z, %z] : coopmatrix<{t}x{M}x{N},matrix_acc>
    %ca = cast %a : coopmatrix<{t}x{M}x{K},matrix_a>
    %cb = cast %b : coopmatrix<{t}x{K}x{N},matrix_b>
    %d = cooperative_matrix_mul_add %ca, %cb, %c : coopmatrix<{t}x{M}x{N},matrix_acc>
    cooperative_matrix_store %d, %C[%z, %z]
  }}
}}
"""


CAST_SOURCE = "\n".join(cast_kernel(k) for k in range(len(CASTS)))


@pytest.mark.parametrize("k", range(len(CASTS)), ids=[f"{c[0]}_{c[1]}x{c[2]}x{c[3]}_S{c[4]}" for c in CASTS])
def test_accumulators_cast_to_a_and_b_multiply(device, k):
    t, M, K, N, S = CASTS[k]
    rng = np.random.default_rng(10 + k)
    A, B, C = (fortran(rng.integers(-4, 5, shape).astype(NUMPY[t])) for shape in ((M, K), (K, N), (M, N)))
    want = A @ B + C
    both(CAST_SOURCE, f"cast{k}", [A, B, C], batch=1)
    np.testing.assert_array_equal(C, want)


# ---------------------------------------------------------------- every arith op on coopmatrices

ARITH_TYPES = [("i32", 5, 3, 4), ("i8", 8, 2, 8), ("f32", 16, 4, 16), ("f16", 6, 3, 4),
               ("bf16", 4, 4, 4), ("c64", 5, 2, 4)]


def arith_kernel(t: str, R: int, C: int, S: int) -> str:
    binary, unary = ops_of(t)
    coop = f"coopmatrix<{t}x{R}x{C},matrix_acc>"
    params = [f"%{n}: memref<{t}x{R}x{C}>" for n in ("A", "B", "H")]
    body = [f"%{n.lower()} = cooperative_matrix_load %{n}[%z, %z] : {coop}" for n in ("A", "B", "H")]
    for op in binary:
        rhs = "%h" if op in ("shl", "shr") else "%b"
        params.append(f"%O_{op}: memref<{t}x{R}x{C}>")
        body += [f"%r_{op} = arith.{op} %a, {rhs} : {coop}", f"cooperative_matrix_store %r_{op}, %O_{op}[%z, %z]"]
    for op in unary:
        rt = f"coopmatrix<{unary_result(t, op)}x{R}x{C},matrix_acc>"
        params.append(f"%U_{op}: memref<{unary_result(t, op)}x{R}x{C}>")
        body += [f"%u_{op} = arith.{op} %a : {rt}", f"cooperative_matrix_store %u_{op}, %U_{op}[%z, %z]"]
    lines = "\n    ".join(body)
    return f"""
{head(f"arith_{t}", ", ".join(params), S)}
  parallel {{
    %z = constant 0 : index
    {lines}
  }}
}}
"""


ARITH_SOURCE = "\n".join(arith_kernel(*case) for case in ARITH_TYPES)


@pytest.mark.parametrize("t, R, C, S", ARITH_TYPES, ids=[c[0] for c in ARITH_TYPES])
def test_every_arith_operation_on_coopmatrices(device, t, R, C, S):
    binary, unary = ops_of(t)
    rng = np.random.default_rng(len(t) * R)
    n = R * C
    A = fortran(random_values(t, n, rng).reshape(R, C))
    B = fortran(random_values(t, n, rng, nonzero=True).reshape(R, C))
    if t.startswith("i"):
        A = fortran((A // 4).astype(A.dtype))  # no overflow in abs/neg of the smallest integer
        B = fortran(np.where(B == np.iinfo(B.dtype).min, 1, B).astype(B.dtype))
    H = fortran(rng.integers(0, 40, (R, C)).astype(NUMPY[t])) if t.startswith("i") else A.copy(order="F")
    outs = {op: fortran(np.zeros((R, C), NUMPY[t])) for op in binary}
    units = {op: fortran(np.zeros((R, C), NUMPY[unary_result(t, op)])) for op in unary}
    both(ARITH_SOURCE, f"arith_{t}", [A, B, H, *outs.values(), *units.values()], batch=1)
    a, b = as_float(A), as_float(B)
    for op, got in outs.items():
        if t.startswith("i"):
            rhs = H if op in ("shl", "shr") else B
            want = expected_int(op, A, (rhs % (8 * A.itemsize)).astype(A.dtype) if op in ("shl", "shr") else rhs)
            np.testing.assert_array_equal(got, want, err_msg=op)
        else:
            want = expected_float(op, a, b) if t not in ("c32", "c64") else {
                "add": a + b, "sub": a - b, "mul": a * b, "div": a / b}[op]
            want = f32_to_bf16(want) if t == "bf16" else want.astype(NUMPY[t])
            np.testing.assert_allclose(as_float(got), as_float(want), rtol=1e-2 if t in ("f16", "bf16")
                                       else 1e-6, err_msg=op)
    for op, got in units.items():
        want = expected_unary(op, a)
        np.testing.assert_allclose(as_float(got), want, rtol=1e-6, err_msg=op)
