"""The newest language's math functions and 3-D builtins, on the device against NumPy.

Builtins also pin the launch geometry of each version: a newest program's
batch runs along OpenCL dimension x (group_id.x = WorkgroupId.x), a seed
program's along z, as the reference's runtimes launch them.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.ir.instructions import MathUnaryOp
from tinyc.parser import parse
from tinyc.reference import run
from tinyc.spirv.tools import disassemble

from newest_testlib import error, fn
from tolerances import assert_within, complex_math_error_bound, math_error_bound

REAL = [op for op in MathUnaryOp]
COMPLEX = [op for op in MathUnaryOp if op.takes_complex]
NUMPY = {"cos": np.cos, "sin": np.sin, "exp": np.exp, "exp2": np.exp2, "log": np.log,
         "log2": np.log2}
DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "c32": np.complex64,
          "c64": np.complex128}


def math_kernel(t: str) -> tuple[str, list[MathUnaryOp]]:
    """Y[:, k] = op_k(X) for every function that takes type t."""
    ops = COMPLEX if t.startswith("c") else REAL
    body = "\n".join(f"    %y{k} = {op.value} %x : {t}\n    %k{k} = constant {k} : index\n"
                     f"    store %y{k}, %Y[%i, %k{k}]" for k, op in enumerate(ops))
    text = f"""
func @math(%X: memref<{t}x16>, %Y: memref<{t}x16x{len(ops)}>) attributes {{subgroup_size=16}} {{
  parallel {{
    %l = subgroup_local_id : i32
    %i = cast %l : index
    %x = load %X[%i] : {t}
{body}
  }}
}}
"""
    return text, ops


@pytest.fixture(scope="module")
def math_programs(device):
    return {t: tinyc.compile(math_kernel(t)[0]) for t in DTYPES}


@pytest.mark.parametrize("t", list(DTYPES))
def test_math_functions_against_numpy(math_programs, t):
    text, ops = math_kernel(t)
    rng = np.random.default_rng(3)
    X = rng.uniform(0.25, 2.0, 16)
    if t.startswith("c"):
        X = X + 1j * rng.uniform(-2, 2, 16)
    X = X.astype(DTYPES[t])
    for where in ("device", "reference"):
        Y = np.zeros((16, len(ops)), DTYPES[t], order="F")
        if where == "device":
            math_programs[t]["math"](X, Y)
        else:
            run(parse(text)["math"], [X, Y], 1)
        for k, op in enumerate(ops):  # OpenCL's ULP bounds; native_: implementation-defined
            want = NUMPY[op.function](X.astype(np.complex128 if t.startswith("c") else np.float64))
            if t.startswith("c"):
                bound = complex_math_error_bound(op.function, t, X, want, op.native)
            else:
                bound = math_error_bound(op.function, t, want, op.native)
            assert_within(Y[:, k], want, bound, f"{op.value} {where}")


@pytest.mark.parametrize("op", ["cos", "log2", "native_sin"])
def test_only_exp_and_exp2_take_complex(op):
    d = error(fn(f"%y = {op} %x : c32", "%x: c32"))
    assert d.message == f"{op}: operand must have a floating-point type, got c32"


def test_math_on_integers_is_an_error():
    d = error(fn("%y = exp2 %x : i32", "%x: i32"))
    assert d.message == "exp2: operand must have a floating-point or complex type, got i32"


# ---------------------------------------------------------------- builtins

NEWEST_BUILTINS = """
func @ids(%G: memref<index x 9 x ?>, %L: memref<i32x5x32x?>) attributes {subgroup_size=8, work_group_size=[16, 2]} {
  %g = group_id.x : index
  %values = subview %G[:, %g] : memref<index x 9>
  %v0 = group_id.x : index
  %v1 = group_id.y : index
  %v2 = group_id.z : index
  %v3 = num_groups.x : index
  %v4 = num_groups.y : index
  %v5 = num_groups.z : index
  %n6 = num_subgroups.x : i32
  %n7 = num_subgroups.y : i32
  %n8 = subgroup_size : i32
  %v6 = cast %n6 : index
  %v7 = cast %n7 : index
  %v8 = cast %n8 : index
  parallel {
    %sx = subgroup_id.x : i32
    %sy = subgroup_id.y : i32
    %sz = subgroup_id.z : i32
    %sl = subgroup_linear_id : i32
    %ll = subgroup_local_id : i32
    %nx = num_subgroups.x : i32
    %s = subgroup_size : i32
    %a = mul %sl, %s : i32
    %item = add %a, %ll : i32
    %w = cast %item : index
    %first = equal %item, %ll : bool
    %zero = constant 0 : i32
    %lead = equal %sl, %zero : bool
    %both = and %first, %lead : bool
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %c3 = constant 3 : index
    %c4 = constant 4 : index
    store %sx, %L[%c0, %w, %g]
    store %sy, %L[%c1, %w, %g]
    store %sz, %L[%c2, %w, %g]
    store %sl, %L[%c3, %w, %g]
    store %ll, %L[%c4, %w, %g]
    if %both {
      %c5 = constant 5 : index
      %c6 = constant 6 : index
      %c7 = constant 7 : index
      %c8 = constant 8 : index
      store %v0, %values[%c0]
      store %v1, %values[%c1]
      store %v2, %values[%c2]
      store %v3, %values[%c3]
      store %v4, %values[%c4]
      store %v5, %values[%c5]
      store %v6, %values[%c6]
      store %v7, %values[%c7]
      store %v8, %values[%c8]
    }
  }
}
"""


def expected_builtins(batch: int) -> tuple[np.ndarray, np.ndarray]:
    G = np.zeros((9, batch), np.int64)
    G[0] = np.arange(batch)
    G[3], G[4], G[5], G[6], G[7], G[8] = batch, 1, 1, 2, 2, 8
    item = np.arange(32)  # local linear id: x fastest over X = 16, Y = 2
    L = np.zeros((5, 32, batch), np.int32)
    L[0] = ((item % 16) // 8)[:, None]
    L[1] = (item // 16)[:, None]
    L[3] = (item // 8)[:, None]
    L[4] = (item % 8)[:, None]
    return G, L


@pytest.fixture(scope="module")
def builtin_program(device):
    return tinyc.compile(NEWEST_BUILTINS)


def test_newest_builtins_on_the_device_and_in_the_reference(builtin_program):
    batch = 5
    want_G, want_L = expected_builtins(batch)
    for where in ("device", "reference"):
        G = np.full((9, batch), -1, np.int64, order="F")
        L = np.full((5, 32, batch), -1, np.int32, order="F")
        if where == "device":
            builtin_program["ids"](G, L, batch=batch)
        else:
            run(parse(NEWEST_BUILTINS)["ids"], [G, L], batch)
        np.testing.assert_array_equal(G, want_G, err_msg=where)
        np.testing.assert_array_equal(L, want_L, err_msg=where)


def test_the_reference_runtimes_geometry_launches_a_newest_kernel(builtin_program):
    """Host code written for the newest reference (global (X·N, Y, 1)) launches tinyc's SPIR-V."""
    kernel = builtin_program["ids"]
    assert kernel.info.batch_axis == 0
    assert "BuiltIn WorkgroupId" in disassemble(builtin_program.spirv)
    batch = 3
    G = np.full((9, batch), -1, np.int64, order="F")
    L = np.full((5, 32, batch), -1, np.int32, order="F")
    prepared = kernel.prepare(G, L, batch=batch)
    event = kernel.queue.submit_async(kernel.sycl_kernel, prepared.args, [1, 2, 16 * batch],
                                      [1, 2, 16])
    prepared.finish(event)
    want_G, want_L = expected_builtins(batch)
    np.testing.assert_array_equal(G, want_G)
    np.testing.assert_array_equal(L, want_L)


def test_a_seed_program_batches_along_z(device):
    text = """
func @gid(%G: memref<i64x?>) {
  %g = builtin.group_id : index
  %n = builtin.group_size : index
  %v = cast %g : i64
  %w = cast %n : i64
  %k = arith.mul %v, %w : i64
  parallel {
    %l = builtin.subgroup_local_id : i32
    %zero = constant 0 : i32
    %first = cmp.eq %l, %zero : bool
    if %first {
      store %k, %G[%g]
    }
  }
}
"""
    program = tinyc.compile(text)
    kernel = program["gid"]
    assert kernel.info.batch_axis == 2
    batch = 4
    G = np.zeros(batch, np.int64)
    prepared = kernel.prepare(G, batch=batch)
    x, _ = kernel.info.work_group_size
    prepared.finish(kernel.queue.submit_async(kernel.sycl_kernel, prepared.args, [batch, 1, x],
                                              [1, 1, x]))
    np.testing.assert_array_equal(G, np.arange(batch) * batch)


def test_spmd_builtins_outside_spmd_regions_are_errors():
    d = error(fn("%s = subgroup_id.y : i32"))
    assert d.message.startswith("subgroup_id.y is an SPMD instruction and cannot appear in a "
                                "collective region")


@pytest.mark.parametrize("word, wrong, right", [("group_id.y", "i32", "index"),
                                                ("num_subgroups.z", "index", "i32")])
def test_builtin_result_types(word, wrong, right):
    d = error(fn(f"%s = {word} : {wrong}"))
    assert d.message == f"{word}: result type must be {right}, got {wrong}"


def test_a_newest_program_splits_over_sub_devices_like_one_launch(device):
    """Slices of a newest program's batch launch along x like the whole batch (tinyc.devices)."""
    subs = tinyc.devices("opencl:cpu", split=True)
    text = """
func @scale(%A: memref<f32x16x?>, %B: memref<f32x16x?>) {
  %g = group_id.x : index
  %a = subview %A[:, %g] : memref<f32x16>
  %b = subview %B[:, %g] : memref<f32x16>
  %two = constant 2.0 : f32
  %zero = constant 0.0 : f32
  axpby %two, %a, %zero, %b
}
"""
    kernel = tinyc.compile(text)["scale"]
    assert kernel.info.batch_axis == 0 and kernel.info.batch_split_problem is None
    A = np.asfortranarray(np.random.default_rng(4).random((16, 37)).astype(np.float32))
    B = np.zeros_like(A, order="F")
    kernel(A, B, batch=37, device=list(subs))
    np.testing.assert_array_equal(B, 2 * A)
