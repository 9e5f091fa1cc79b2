"""arith.* binary and unary × every allowed type, on the device against NumPy.

All types live in one program (one JIT build); each type's kernel computes
every operation element-wise over 64 elements (4 work-groups of 16).
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import (
    COMPLEX_TYPES, FLOAT_TYPES, INT_TYPES, NUMPY, bf16_to_f32, compiled, f32_to_bf16,
    fortran, program, random_values, spmd_kernel,
)

INT_BINARY = ["add", "sub", "mul", "div", "rem", "min", "max", "shl", "shr", "and", "or", "xor"]
FLOAT_BINARY = ["add", "sub", "mul", "div", "rem", "min", "max"]
COMPLEX_BINARY = ["add", "sub", "mul", "div"]
INT_UNARY = ["abs", "neg", "not"]
FLOAT_UNARY = ["abs", "neg"]
COMPLEX_UNARY = ["abs", "neg", "conj", "im", "re"]
ALL_TYPES = INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES
N, BATCH = 64, 4


def ops_of(t: str) -> tuple[list[str], list[str]]:
    if t in INT_TYPES:
        return INT_BINARY, INT_UNARY
    if t in FLOAT_TYPES:
        return FLOAT_BINARY, FLOAT_UNARY
    return COMPLEX_BINARY, COMPLEX_UNARY


def unary_result(t: str, op: str) -> str:
    if t in COMPLEX_TYPES and op in ("abs", "im", "re"):
        return {"c32": "f32", "c64": "f64"}[t]
    return t


def kernel_source(t: str) -> str:
    binary, unary = ops_of(t)
    params = [f"%A: memref<{t}x?>", f"%B: memref<{t}x?>", f"%S: memref<{t}x?>"]
    body = [f"%a = load %A[%i] : {t}", f"%b = load %B[%i] : {t}", f"%s = load %S[%i] : {t}"]
    for op in binary:
        rhs = "%s" if op in ("shl", "shr") else "%b"
        params.append(f"%O_{op}: memref<{t}x?>")
        body += [f"%r_{op} = arith.{op} %a, {rhs} : {t}", f"store %r_{op}, %O_{op}[%i]"]
    for op in unary:
        rt = unary_result(t, op)
        params.append(f"%U_{op}: memref<{rt}x?>")
        body += [f"%u_{op} = arith.{op} %a : {rt}", f"store %u_{op}, %U_{op}[%i]"]
    return spmd_kernel(f"arith_{t}", ", ".join(params), "\n".join(body))


SOURCE = "\n".join(kernel_source(t) for t in ALL_TYPES)


def expected_int(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if op == "div":
            q = np.abs(a.astype(object)) // np.abs(b.astype(object))
            return (q * np.sign(a.astype(object)) * np.sign(b.astype(object))).astype(a.dtype)
        return {
            "add": np.add, "sub": np.subtract, "mul": np.multiply, "rem": np.fmod,
            "min": np.minimum, "max": np.maximum, "shl": np.left_shift, "shr": np.right_shift,
            "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
        }[op](a, b)


def expected_float(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                "rem": np.fmod, "min": np.fmin, "max": np.fmax}[op](a, b)


def expected_unary(op: str, a: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return {"abs": np.abs, "neg": np.negative, "not": np.invert, "conj": np.conj,
                "im": np.imag, "re": np.real}[op](a)


def test_compiles_and_validates():
    result = compiled(SOURCE)
    assert set(result.kernels) == {f"arith_{t}" for t in ALL_TYPES}
    info = result.kernels["arith_f32"]
    assert [p.written for p in info.params[:3]] == [False, False, False]
    assert all(p.written for p in info.params[3:])


@pytest.fixture(scope="module")
def results(device):
    """Run every type's kernel once; (inputs, outputs) per type."""
    rng = np.random.default_rng(7)
    out = {}
    for t in ALL_TYPES:
        binary, unary = ops_of(t)
        a = random_values(t, N, rng)
        b = random_values(t, N, rng, nonzero=True)
        if t in INT_TYPES:
            a[a == np.iinfo(NUMPY[t]).min] = 0  # INT_MIN / -1 is undefined
            bits = np.iinfo(NUMPY[t]).bits
            s = rng.integers(0, bits, N).astype(NUMPY[t])
        else:
            s = np.zeros_like(a)
        outs = {op: np.zeros(N, NUMPY[t]) for op in binary}
        uouts = {op: np.zeros(N, NUMPY[unary_result(t, op)]) for op in unary}
        program(SOURCE)[f"arith_{t}"](a, b, s, *outs.values(), *uouts.values(), batch=BATCH)
        out[t] = (a, b, s, outs, uouts)
    return out


@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("op", INT_BINARY)
def test_int_binary(results, t, op):
    a, b, s, outs, _ = results[t]
    rhs = s if op in ("shl", "shr") else b
    np.testing.assert_array_equal(outs[op], expected_int(op, a, rhs))


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
@pytest.mark.parametrize("op", FLOAT_BINARY)
def test_float_binary(results, t, op):
    a, b, _, outs, _ = results[t]
    want = expected_float(op, a, b)
    rtol = {"f16": 1e-3, "f32": 3e-7, "f64": 1e-15}[t] if op == "div" else 0
    np.testing.assert_allclose(outs[op], want, rtol=rtol, atol=0)


@pytest.mark.parametrize("op", FLOAT_BINARY)
def test_bf16_binary(results, op):
    """bf16 computes in f32 and rounds to nearest even."""
    a, b, _, outs, _ = results["bf16"]
    want = f32_to_bf16(expected_float(op, bf16_to_f32(a), bf16_to_f32(b)))
    np.testing.assert_allclose(bf16_to_f32(outs[op]), bf16_to_f32(want), rtol=2**-8)
    if op != "div":
        np.testing.assert_array_equal(outs[op], want)


@pytest.mark.parametrize("t", COMPLEX_TYPES)
@pytest.mark.parametrize("op", COMPLEX_BINARY)
def test_complex_binary(results, t, op):
    a, b, _, outs, _ = results[t]
    rtol = 2e-6 if t == "c32" else 1e-14
    np.testing.assert_allclose(outs[op], expected_float(op, a, b), rtol=rtol)


@pytest.mark.parametrize("t", ALL_TYPES)
def test_unary(results, t):
    a, _, _, _, uouts = results[t]
    for op, got in uouts.items():
        if t == "bf16":
            want = f32_to_bf16(expected_unary(op, bf16_to_f32(a)))
        else:
            want = expected_unary(op, a)
        if t in COMPLEX_TYPES and op == "abs":
            np.testing.assert_allclose(got, want, rtol=1e-6 if t == "c32" else 1e-15, err_msg=op)
        else:
            np.testing.assert_array_equal(got, want, err_msg=op)


BOOL_SOURCE = spmd_kernel("bools", "%A: memref<i32x?>, %B: memref<i32x?>, %O: memref<i32x?x4>", """
    %a = load %A[%i] : i32
    %b = load %B[%i] : i32
    %zero = constant 0 : i32
    %pa = cmp.ne %a, %zero : bool
    %pb = cmp.ne %b, %zero : bool
    %r0 = arith.and %pa, %pb : bool
    %r1 = arith.or %pa, %pb : bool
    %r2 = arith.xor %pa, %pb : bool
    %r3 = arith.not %pa : bool
    %one = constant 1 : i32
    %k0 = constant 0 : index
    %k1 = constant 1 : index
    %k2 = constant 2 : index
    %k3 = constant 3 : index
    %v0 = if %r0 -> (i32) { yield (%one) } else { yield (%zero) }
    %v1 = if %r1 -> (i32) { yield (%one) } else { yield (%zero) }
    %v2 = if %r2 -> (i32) { yield (%one) } else { yield (%zero) }
    %v3 = if %r3 -> (i32) { yield (%one) } else { yield (%zero) }
    store %v0, %O[%i, %k0]
    store %v1, %O[%i, %k1]
    store %v2, %O[%i, %k2]
    store %v3, %O[%i, %k3]
""")


def test_bool_ops(device):
    a = np.tile([0, 0, 1, 1], 4).astype(np.int32)
    b = np.tile([0, 1, 0, 1], 4).astype(np.int32)
    out = fortran(np.zeros((16, 4), np.int32))
    program(BOOL_SOURCE)["bools"](a, b, out, batch=1)
    pa, pb = a != 0, b != 0
    np.testing.assert_array_equal(out, np.stack([pa & pb, pa | pb, pa ^ pb, ~pa], axis=1).astype(np.int32))


NAN_SOURCE = spmd_kernel("nan_minmax", "%A: memref<f32x?>, %B: memref<f32x?>, %O: memref<f32x?x2>", """
    %a = load %A[%i] : f32
    %b = load %B[%i] : f32
    %lo = arith.min %a, %b : f32
    %hi = arith.max %a, %b : f32
    %k0 = constant 0 : index
    %k1 = constant 1 : index
    store %lo, %O[%i, %k0]
    store %hi, %O[%i, %k1]
""")


def test_float_min_max_ignore_nan(device):
    """min/max are OpenCL fmin/fmax: a NaN operand yields the other operand (np.fmin/np.fmax)."""
    nan = np.nan
    a = np.array([nan, 1, nan, -2, 3, -0.0, np.inf, -np.inf] * 2, np.float32)
    b = np.array([1, nan, nan, 5, -3, 0.0, 1, 1] * 2, np.float32)
    out = fortran(np.zeros((16, 2), np.float32))
    program(NAN_SOURCE)["nan_minmax"](a, b, out, batch=1)
    np.testing.assert_array_equal(out[:, 0], np.fmin(a, b))
    np.testing.assert_array_equal(out[:, 1], np.fmax(a, b))


SHIFT_TYPES = ["i8", "i16", "i32", "i64"]
SHIFTS = "\n".join(f"""
func @shift_{t}(%a: memref<{t}x?>, %s: memref<{t}x?>, %l: memref<{t}x?>, %r: memref<{t}x?>) {{
  %c0 = constant 0 : index
  %n = size %a[0] : index
  foreach (%i) = (%c0), (%n) {{
    %x = load %a[%i] : {t}
    %k = load %s[%i] : {t}
    %y = arith.shl %x, %k : {t}
    %z = arith.shr %x, %k : {t}
    store %y, %l[%i]
    store %z, %r[%i]
  }}
}}""" for t in SHIFT_TYPES)


@pytest.mark.parametrize("t", SHIFT_TYPES)
def test_shift_counts_outside_the_width_are_masked_on_device_and_in_the_reference(device, t):
    """docs/decisions.md: counts modulo the bit width (OpenCL C); both sides agree with NumPy."""
    from tinyc.compiler import check_source
    from tinyc.reference import run as run_reference

    dtype = NUMPY[t]
    bits = np.iinfo(dtype).bits
    rng = np.random.default_rng(bits)
    counts = np.array([-1, -bits, bits, bits + 1, 2 * bits - 1, 3, 0, -3], dtype=dtype)
    a = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, counts.size, dtype=dtype)
    masked = counts & (bits - 1)
    want_l, want_r = np.left_shift(a, masked), np.right_shift(a, masked)
    for run in ("device", "reference"):
        left, right = np.zeros_like(a), np.zeros_like(a)
        if run == "device":
            program(SHIFTS)[f"shift_{t}"](a, counts, left, right, batch=1)
        else:
            run_reference(check_source(SHIFTS)[f"shift_{t}"], [a, counts, left, right], 1)
        np.testing.assert_array_equal(left, want_l, err_msg=run)
        np.testing.assert_array_equal(right, want_r, err_msg=run)
