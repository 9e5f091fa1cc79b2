"""cooperative_matrix_extract / _insert / _apply / _reduce_* / _prefetch (newest language) on the
device and in the reference interpreter, against NumPy.

Extract and insert address a work-item's vector of components; the expected values follow the
layout docs/coopmatrix.md describes (written out again here): for matrix_a and matrix_acc,
component k of lane l is row l + S·(k div C), column k mod C; every lane holds all of a
matrix_b, component k being row k div C, column k mod C.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import NUMPY, bf16_to_f32, checked, fortran, program, random_values
from ir_equality import roundtrip
from tolerances import UNIT_ROUNDOFF, assert_within, math_error_bound, sum_error_bound
from tinyc.ir.instructions import CoopMatrixApply, CoopMatrixReduce, ReduceMode
from tinyc.reference import run as run_reference

BATCH = 2
USES = ("matrix_a", "matrix_b", "matrix_acc")


def head(name: str, params: str, S: int) -> str:
    return f"func @{name}({params}) attributes {{subgroup_size={S}, work_group_size=[{S}, 1]}} {{"


def vector_length(use: str, R: int, C: int, S: int) -> int:
    return R * C if use == "matrix_b" else -(-R // S) * C


def position(use: str, C: int, S: int, lane: int, k: int) -> tuple[int, int]:
    return (k // C, k % C) if use == "matrix_b" else (lane + S * (k // C), k % C)


def run_both(source: str, name: str, make_args, batch: int = BATCH) -> list[list]:
    """The arguments after the device run and after the reference run."""
    out = []
    for run in (lambda a: program(source)[name](*a, batch=batch),
                lambda a: run_reference(checked(source)[name], a, batch)):
        args = make_args()
        run(args)
        out.append(args)
    return out


# ---------------------------------------------------------------- extract and insert

ELEMENTS = [(t, R, C, S, use) for (t, R, C, S) in (("f32", 16, 3, 16), ("i32", 5, 2, 4),
                                                    ("c32", 8, 2, 8), ("f16", 4, 3, 4))
            for use in USES]


def extract_kernel(k: int) -> str:
    t, R, C, S, use = ELEMENTS[k]
    V = vector_length(use, R, C, S)
    coop = f"coopmatrix<{t}x{R}x{C},{use}>"
    lines = []
    for c in range(V):
        lines += [f"%e{c} = cooperative_matrix_extract %m[{c}] : {t}", f"%k{c} = constant {c} : index",
                  f"store %e{c}, %o[%l, %k{c}]"]
    # insert: lane-dependent values into a/acc, subgroup-uniform ones into matrix_b
    picks = sorted({0, V // 2, V - 1})
    lines += ["%lf = cast %lane : " + t, "%r0 = cooperative_matrix_load %a[%z, %z] : " + coop]
    for n, c in enumerate(picks):
        value = "%lf" if use != "matrix_b" else f"%u{c}"
        if use == "matrix_b":
            lines.append(f"%u{c} = constant {'[' + str(c) + '.0, 1.0]' if t == 'c32' else str(c) + ('.0' if t[0] == 'f' else '')} : {t}")
        lines.append(f"%r{n + 1} = cooperative_matrix_insert {value}, %r{n}[{c}] : {coop}")
    lines.append(f"cooperative_matrix_store %r{len(picks)}, %b[%z, %z]")
    body = "\n    ".join(lines)
    return f"""
{head(f"el{k}", f"%A: memref<{t}x{R}x{C}x?>, %O: memref<{t}x{S}x{V}x?>, %B: memref<{t}x{R}x{C}x?>", S)}
  %gid = builtin.group_id : index
  %a = subview %A[:, :, %gid] : memref<{t}x{R}x{C}>
  %o = subview %O[:, :, %gid] : memref<{t}x{S}x{V}>
  %b = subview %B[:, :, %gid] : memref<{t}x{R}x{C}>
  parallel {{
    %z = constant 0 : index
    %lane = builtin.subgroup_local_id : i32
    %l = cast %lane : index
    %m = cooperative_matrix_load %a[%z, %z] : {coop}
    {body}
  }}
}}
"""


ELEMENT_SOURCE = "\n".join(extract_kernel(k) for k in range(len(ELEMENTS)))
ELEMENT_IDS = [f"{t}_{R}x{C}_S{S}_{use}" for t, R, C, S, use in ELEMENTS]


def _picks(V: int) -> list[int]:
    return sorted({0, V // 2, V - 1})


@pytest.mark.parametrize("k", range(len(ELEMENTS)), ids=ELEMENT_IDS)
def test_extract_and_insert_follow_the_layout(device, k):
    t, R, C, S, use = ELEMENTS[k]
    V = vector_length(use, R, C, S)
    rng = np.random.default_rng(k)
    A = fortran(random_values(t, R * C * BATCH, rng).reshape(R, C, BATCH))

    def args():
        return [A.copy(order="F"), fortran(np.full((S, V, BATCH), 7, NUMPY[t])),
                fortran(np.zeros((R, C, BATCH), NUMPY[t]))]

    want_O = np.zeros((S, V, BATCH), NUMPY[t])
    want_B = A.copy()
    for lane in range(S):
        for c in range(V):
            row, col = position(use, C, S, lane, c)
            want_O[lane, c] = A[row, col] if row < R else 0  # padding rows load as 0
    for c in _picks(V):
        for lane in range(S):
            row, col = position(use, C, S, lane, c)
            if row < R:
                want_B[row, col] = (lane if use != "matrix_b" else complex(c, 1) if t == "c32" else c)
    for _, O, B in run_both(ELEMENT_SOURCE, f"el{k}", args):
        np.testing.assert_array_equal(O, want_O)
        np.testing.assert_array_equal(B, want_B)


def test_inserting_different_values_into_a_matrix_b_is_a_reference_fault():
    from tinyc.reference.errors import ReferenceFault

    source = f"""
{head("k", "%B: memref<f32x4x4>", 4)}
  parallel {{
    %z = constant 0 : index
    %lane = builtin.subgroup_local_id : i32
    %v = cast %lane : f32
    %m = cooperative_matrix_load %B[%z, %z] : coopmatrix<f32x4x4,matrix_b>
    %n = cooperative_matrix_insert %v, %m[3] : coopmatrix<f32x4x4,matrix_b>
    cooperative_matrix_store %n, %B[%z, %z]
  }}
}}
"""
    with pytest.raises(ReferenceFault, match="every work-item holds all of a matrix_b"):
        run_reference(checked(source)["k"], [fortran(np.zeros((4, 4), np.float32))], 1)


# ---------------------------------------------------------------- apply

APPLY = [(t, R, C, S, use) for (t, R, C, S) in (("f32", 16, 4, 16), ("f32", 5, 3, 4), ("f64", 8, 4, 8))
         for use in USES] + [("i32", 6, 3, 4, "matrix_acc"), ("f16", 8, 2, 8, "matrix_a")]


def apply_kernel(k: int) -> str:
    """The spec's example (exp(v) where i <= j, else 0), then v + X[i, j] + (i - j):
    the second region loads memory at its row, which padding rows must not reach."""
    t, R, C, S, use = APPLY[k]
    coop = f"coopmatrix<{t}x{R}x{C},{use}>"
    zero = "0" if t == "i32" else "0.0"
    first = (f"""
      %mask = cmp.le %i, %j : bool
      %em = if %mask -> ({t}) {{
        %ev = math.native_exp %v : {t}
        yield (%ev)
      }} else {{
        %zero = constant {zero} : {t}
        yield (%zero)
      }}
      yield (%em)""" if t != "i32" else """
      yield (%v)""")
    return f"""
{head(f"ap{k}", f"%A: memref<{t}x{R}x{C}x?>, %X: memref<{t}x{R}x{C}>, %E: memref<{t}x{R}x{C}x?>, %F: memref<{t}x{R}x{C}x?>", S)}
  %gid = builtin.group_id : index
  %a = subview %A[:, :, %gid] : memref<{t}x{R}x{C}>
  %e = subview %E[:, :, %gid] : memref<{t}x{R}x{C}>
  %f = subview %F[:, :, %gid] : memref<{t}x{R}x{C}>
  parallel {{
    %z = constant 0 : index
    %m = cooperative_matrix_load %a[%z, %z] : {coop}
    %n = cooperative_matrix_apply (%i, %j, %v) = %m -> {coop} {{{first}
    }}
    cooperative_matrix_store %n, %e[%z, %z]
    %p = cooperative_matrix_apply (%i, %j, %v) = %m -> {coop} {{
      %ii = cast %i : index
      %jj = cast %j : index
      %x = load %X[%ii, %jj] : {t}
      %d = arith.sub %i, %j : i32
      %df = cast %d : {t}
      %s = arith.add %v, %x : {t}
      %w = arith.add %s, %df : {t}
      yield (%w)
    }}
    cooperative_matrix_store %p, %f[%z, %z]
  }}
}}
"""


APPLY_SOURCE = "\n".join(apply_kernel(k) for k in range(len(APPLY)))


@pytest.mark.parametrize("k", range(len(APPLY)), ids=[f"{t}_{R}x{C}_S{S}_{u}" for t, R, C, S, u in APPLY])
def test_apply_maps_every_entry_with_its_row_and_column(device, k):
    t, R, C, S, use = APPLY[k]
    rng = np.random.default_rng(100 + k)
    if t == "i32":
        A = fortran(rng.integers(-50, 50, (R, C, BATCH)).astype(np.int32))
        X = fortran(rng.integers(-50, 50, (R, C)).astype(np.int32))
    else:
        A = fortran(rng.uniform(-2, 2, (R, C, BATCH)).astype(NUMPY[t]))
        X = fortran(rng.uniform(-2, 2, (R, C)).astype(NUMPY[t]))
    i, j = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    want_E = (A if t == "i32" else np.where((i <= j)[..., None], np.exp(A.astype(np.float64)), 0))
    want_F = A.astype(np.float64) + X[..., None] + (i - j)[..., None]

    def args():
        return [A, X, fortran(np.zeros_like(A)), fortran(np.zeros_like(A))]

    for _, _, E, F in run_both(APPLY_SOURCE, f"ap{k}", args):
        if t == "i32":
            np.testing.assert_array_equal(E, want_E)
            np.testing.assert_array_equal(F, want_F)
            continue
        # native_exp: implementation-defined accuracy (a sanity bound); v + x + (i - j): two
        # roundings in t
        assert_within(E, want_E, math_error_bound("exp", t, want_E, native=True), "native_exp")
        magnitude = np.abs(A) + np.abs(X)[..., None] + np.abs(i - j)[..., None]
        assert_within(F, want_F, sum_error_bound(3, t, magnitude) + UNIT_ROUNDOFF[t] * np.abs(want_F),
                      "v + x + (i - j)")


def test_apply_round_trip_and_region_arguments():
    prog = roundtrip(APPLY_SOURCE)
    applies = [i for i in prog["ap0"].walk() if isinstance(i, CoopMatrixApply)]
    assert len(applies) == 2
    assert [str(a.type) for a in applies[0].body.args] == ["i32", "i32", "f32"]
    assert [a.name for a in applies[0].body.args] == ["i", "j", "v"]


# ---------------------------------------------------------------- reduce

REDUCE = [("f32", 16, 8, 16), ("f32", 5, 3, 4), ("i32", 8, 4, 8), ("f64", 4, 5, 4), ("f16", 8, 4, 4),
          ("c32", 8, 3, 8), ("i8", 6, 2, 4)]
MODES = ("row", "column")
REDUCE_CASES = ([(k, "matrix_acc", "add", mode) for k in range(len(REDUCE)) for mode in MODES]
                + [(k, use, op, mode) for k in (1, 6) for use in USES if use != "matrix_acc" or k == 6
                   for op in ("max", "min") for mode in MODES])
"""Sums of every type along rows and columns; max and min of a padded f32 and of i8, every use."""


def reduce_kernel(n: int) -> str:
    k, use, op, mode = REDUCE_CASES[n]
    t, R, C, S = REDUCE[k]
    shape = f"{R}x1" if mode == "row" else f"1x{C}"
    return f"""
{head(f"red{n}", f"%A: memref<{t}x{R}x{C}x?>, %O: memref<{t}x{shape}x?>", S)}
  %gid = builtin.group_id : index
  %a = subview %A[:, :, %gid] : memref<{t}x{R}x{C}>
  %o = subview %O[:, :, %gid] : memref<{t}x{shape}>
  parallel {{
    %z = constant 0 : index
    %m = cooperative_matrix_load %a[%z, %z] : coopmatrix<{t}x{R}x{C},{use}>
    %r = cooperative_matrix_reduce_{op}.{mode} %m : coopmatrix<{t}x{shape},{use}>
    cooperative_matrix_store %r, %o[%z, %z]
  }}
}}
"""


def _fits(n: int) -> bool:
    """Whether the case's rows are a multiple of its subgroup size (the newest language's rule)."""
    k = REDUCE_CASES[n][0]
    return REDUCE[k][1] % REDUCE[k][3] == 0


REDUCE_SOURCES = {
    # rows a multiple of the subgroup size: the newest language (inferred from the instruction)
    True: "\n".join(reduce_kernel(n) for n in range(len(REDUCE_CASES)) if _fits(n)),
    # padded rows: only the seed's rules allow them (declared; tinyc's layout pads)
    False: "; std: seed\n" + "\n".join(reduce_kernel(n) for n in range(len(REDUCE_CASES)) if not _fits(n)),
}


@pytest.mark.parametrize("n", range(len(REDUCE_CASES)),
                         ids=[f"{REDUCE[k][0]}_{REDUCE[k][1]}x{REDUCE[k][2]}_{u}_{op}_{mode}"
                              for k, u, op, mode in REDUCE_CASES])
def test_reduce_rows_and_columns(device, n):
    k, use, op, mode = REDUCE_CASES[n]
    t, R, C, S = REDUCE[k]
    rng = np.random.default_rng(n)
    if t.startswith("i"):
        A = fortran(rng.integers(-20, 20, (R, C, BATCH)).astype(NUMPY[t]))
    else:
        A = fortran(random_values(t, R * C * BATCH, rng).reshape(R, C, BATCH))
    axis = 1 if mode == "row" else 0
    f = {"add": np.sum, "max": np.max, "min": np.min}[op]
    want = f(A.astype(np.complex128 if t == "c32" else np.float64), axis=axis, keepdims=True)
    out_shape = (R, 1, BATCH) if mode == "row" else (1, C, BATCH)

    def args():
        return [A, fortran(np.zeros(out_shape, NUMPY[t]))]

    for _, O in run_both(REDUCE_SOURCES[_fits(n)], f"red{n}", args):
        if t.startswith("i") or op != "add":  # max, min and integer sums are exact
            np.testing.assert_array_equal(O, want.astype(NUMPY[t]))
            continue
        terms = A.shape[axis]  # a sum in t in any order, per part
        magnitude = (np.abs(A.real).sum(axis=axis, keepdims=True)
                     + np.abs(np.imag(A)).sum(axis=axis, keepdims=True))
        assert_within(O, want, sum_error_bound(terms, t, magnitude), f"red{n}")


def test_reduce_round_trip():
    prog = roundtrip(REDUCE_SOURCES[True])
    reduces = [i for f in prog.functions for i in f.walk() if isinstance(i, CoopMatrixReduce)]
    assert [(r.op.value, r.mode) for r in reduces[:2]] == [("add", ReduceMode.ROW), ("add", ReduceMode.COLUMN)]


# ---------------------------------------------------------------- prefetch

PREFETCH = f"""
{head("pf", "%A: memref<f32x32x8>, %B: memref<f32x32x8>", 16)}
  parallel {{
    %z = constant 0 : index
    %s = constant 16 : index
    cooperative_matrix_prefetch 0, %A[%z, %z], 32, 8
    cooperative_matrix_prefetch 2, %A[%s, %z], 64, 64
    %m = cooperative_matrix_load %A[%s, %z] : coopmatrix<f32x16x8,matrix_acc>
    cooperative_matrix_store %m, %B[%z, %z]
  }}
}}
"""


def test_prefetch_is_a_hint_that_changes_no_result(device):
    """A block reaching past the memref is no error: a prefetch accesses nothing."""
    A = fortran(np.arange(32 * 8, dtype=np.float32).reshape(32, 8))
    for run in (lambda a: program(PREFETCH)["pf"](*a, batch=1),
                lambda a: run_reference(checked(PREFETCH)["pf"], a, 1)):
        B = fortran(np.zeros((32, 8), np.float32))
        run([A, B])
        np.testing.assert_array_equal(B[:16], A[16:])
        np.testing.assert_array_equal(B[16:], 0)
    assert "cooperative_matrix_prefetch 2, %A[%s, %z], 64, 64" in str(
        __import__("tinyc.ir.printer", fromlist=["print_program"]).print_program(roundtrip(PREFETCH)))


def as_float(a: np.ndarray) -> np.ndarray:
    return bf16_to_f32(a) if a.dtype == np.uint16 else a
