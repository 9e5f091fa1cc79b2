"""cast (every row of the spec's table), cmp, constant and math on the device."""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import (
    COMPLEX_TYPES, FLOAT_TYPES, INT_TYPES, NUMPY, assembly, bf16_to_f32, f32_to_bf16, fortran,
    program, spmd_kernel,
)
from tolerances import assert_within, complex_math_error_bound, math_error_bound
from tinyc.spirv.literals import bf16_bits

ALL = INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES
N, BATCH = 32, 2


def cast_targets(src: str) -> list[str]:
    return [d for d in ALL if src not in COMPLEX_TYPES or d in COMPLEX_TYPES]


def cast_kernel(src: str) -> str:
    params = [f"%A: memref<{src}x?>"] + [f"%O_{d}: memref<{d}x?>" for d in cast_targets(src)]
    body = [f"%a = load %A[%i] : {src}"]
    for d in cast_targets(src):
        body += [f"%c_{d} = cast %a : {d}", f"store %c_{d}, %O_{d}[%i]"]
    return spmd_kernel(f"cast_{src}", ", ".join(params), "\n".join(body))


CAST_SOURCE = "\n".join(cast_kernel(s) for s in ALL)


def cast_inputs(src: str, rng: np.random.Generator) -> np.ndarray:
    """Full-range ints with double-rounding traps; floats in [-100, 100] (valid for i8)."""
    if src in INT_TYPES:
        info = np.iinfo(NUMPY[src])
        vals = rng.integers(info.min, info.max, N, dtype=NUMPY[src], endpoint=True)
        traps = {"i32": [2**30 + 2**22 + 1, -(2**30 + 2**22 + 1), 2**24 + 1],
                 "i64": [2**62 + 2**54 + 1, 2**40 + 2**32 + 1], "index": [2**62 + 2**54 + 1]}
        vals[: len(traps.get(src, []))] = traps.get(src, [])
        vals[-4:] = [0, 1, -1, 100]
        return vals
    if src in COMPLEX_TYPES:
        return (rng.uniform(-100, 100, N) + 1j * rng.uniform(-100, 100, N)).astype(NUMPY[src])
    vals = rng.uniform(-100, 100, N)
    if src == "f64":
        vals[:3] = [1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30), 1 + 2**-11 + 2**-40]
    if src == "bf16":
        return f32_to_bf16(vals.astype(np.float32))
    return vals.astype(NUMPY[src])


def int_to_8_bits(v: int) -> float:
    """v rounded to 8 significant bits, nearest even (exact, unlike float(v) for big v)."""
    m = abs(v)
    shift = m.bit_length() - 8
    if shift > 0:
        q, r = divmod(m, 1 << shift)
        half = 1 << (shift - 1)
        q += r > half or (r == half and q & 1)
        m = q << shift
    return float(m if v >= 0 else -m)


def reference_cast(src: str, dst: str, a: np.ndarray) -> np.ndarray:
    x = bf16_to_f32(a) if src == "bf16" else a
    if dst == "bf16":
        if src == "f64":  # correctly rounded from the exact value
            return np.array([bf16_bits(float(v)) for v in x], np.uint16)
        if src in INT_TYPES:
            return np.array([bf16_bits(int_to_8_bits(int(v))) for v in x], np.uint16)
        return f32_to_bf16(x.astype(np.float32))
    if dst in INT_TYPES and src in FLOAT_TYPES:
        return np.trunc(x).astype(NUMPY[dst])
    with np.errstate(all="ignore"):
        return x.astype(NUMPY[dst])


@pytest.fixture(scope="module")
def cast_results(device):
    rng = np.random.default_rng(3)
    results = {}
    for src in ALL:
        a = cast_inputs(src, rng)
        outs = {d: np.zeros(N, NUMPY[d]) for d in cast_targets(src)}
        program(CAST_SOURCE)[f"cast_{src}"](a, *outs.values(), batch=BATCH)
        results[src] = (a, outs)
    return results


@pytest.mark.parametrize("src", ALL)
def test_cast_row(cast_results, src):
    a, outs = cast_results[src]
    for dst, got in outs.items():
        want = reference_cast(src, dst, a)
        np.testing.assert_array_equal(got, want, err_msg=f"cast {src} -> {dst}")


def test_cast_spirv_ops():
    asm = assembly(CAST_SOURCE)
    for opcode in ("OpSConvert", "OpFConvert", "OpConvertSToF", "OpConvertFToS",
                   "OpConvertFToBF16INTEL", "OpConvertBF16ToFINTEL"):
        assert opcode in asm
    assert 'OpExtension "SPV_INTEL_bfloat16_conversion"' in asm


# -- cmp ------------------------------------------------------------------------------------------
CONDS = ["eq", "ne", "gt", "ge", "lt", "le"]


def cmp_kernel(t: str) -> str:
    conds = CONDS[:2] if t in COMPLEX_TYPES else CONDS
    body = [f"%a = load %A[%i] : {t}", f"%b = load %B[%i] : {t}",
            "%one = constant 1 : i32", "%zero = constant 0 : i32"]
    for k, c in enumerate(conds):
        body += [f"%p{k} = cmp.{c} %a, %b : bool",
                 f"%v{k} = if %p{k} -> (i32) {{ yield (%one) }} else {{ yield (%zero) }}",
                 f"%k{k} = constant {k} : index", f"store %v{k}, %O[%i, %k{k}]"]
    params = f"%A: memref<{t}x?>, %B: memref<{t}x?>, %O: memref<i32x?x{len(conds)}>"
    return spmd_kernel(f"cmp_{t}", params, "\n".join(body))


CMP_SOURCE = "\n".join(cmp_kernel(t) for t in ALL)


@pytest.mark.parametrize("t", ALL)
def test_cmp(device, t):
    rng = np.random.default_rng(11)
    conds = CONDS[:2] if t in COMPLEX_TYPES else CONDS
    if t in INT_TYPES:
        a = rng.integers(-3, 3, N).astype(NUMPY[t])
        b = rng.integers(-3, 3, N).astype(NUMPY[t])
    elif t in COMPLEX_TYPES:
        a = (rng.integers(-1, 2, N) + 1j * rng.integers(-1, 2, N)).astype(NUMPY[t])
        b = (rng.integers(-1, 2, N) + 1j * rng.integers(-1, 2, N)).astype(NUMPY[t])
        a[:2], b[:2] = complex(np.nan, 0), complex(np.nan, 0)
    else:
        fa = rng.integers(-2, 3, N).astype(np.float32)
        fb = rng.integers(-2, 3, N).astype(np.float32)
        fa[:3], fb[1:4] = np.nan, np.nan
        a, b = (f32_to_bf16(fa), f32_to_bf16(fb)) if t == "bf16" else (fa.astype(NUMPY[t]), fb.astype(NUMPY[t]))
    out = fortran(np.zeros((N, len(conds)), np.int32))
    program(CMP_SOURCE)[f"cmp_{t}"](a, b, out, batch=BATCH)
    x, y = (bf16_to_f32(a), bf16_to_f32(b)) if t == "bf16" else (a, b)
    funcs = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
             "lt": np.less, "le": np.less_equal}
    for k, c in enumerate(conds):
        np.testing.assert_array_equal(out[:, k], funcs[c](x, y).astype(np.int32), err_msg=c)


# -- constants -------------------------------------------------------------------------------------
CONSTANTS = [
    ("i8", "-128", -128), ("i8", "127", 127), ("i16", "-300", -300), ("i32", "-123456789", -123456789),
    ("i64", "9223372036854775807", 2**63 - 1), ("index", "-5", -5),
    ("bf16", "1.00390625", 1.00390625), ("bf16", "-3.5", -3.5), ("f16", "0.1", 0.1),
    ("f32", "0x1.8p1", 3.0), ("f32", "1e-40", 1e-40), ("f64", "-2.5e300", -2.5e300),
    ("c32", "[1.5, -2.0]", 1.5 - 2j), ("c64", "[0.1, 1e-300]", 0.1 + 1e-300j),
]
CONST_SOURCE = spmd_kernel("consts", ", ".join(f"%O{k}: memref<{t}x?>" for k, (t, _, _) in enumerate(CONSTANTS)),
                           "\n".join(f"%c{k} = constant {text} : {t}\nstore %c{k}, %O{k}[%i]"
                                     for k, (t, text, _) in enumerate(CONSTANTS)))


def test_constants(device):
    outs = [np.zeros(16, NUMPY[t]) for t, _, _ in CONSTANTS]
    program(CONST_SOURCE)["consts"](*outs, batch=1)
    for (t, text, value), got in zip(CONSTANTS, outs):
        want = bf16_bits(value) if t == "bf16" else NUMPY[t](value)
        np.testing.assert_array_equal(got, np.full(16, want, got.dtype), err_msg=f"{text} : {t}")


# -- math ------------------------------------------------------------------------------------------
MATH_TYPES = FLOAT_TYPES + COMPLEX_TYPES
MATH_SOURCE = "\n".join(spmd_kernel(
    f"exp_{t}", f"%A: memref<{t}x?>, %E: memref<{t}x?>, %F: memref<{t}x?>",
    f"""%a = load %A[%i] : {t}
    %e = math.exp %a : {t}
    %f = math.native_exp %a : {t}
    store %e, %E[%i]
    store %f, %F[%i]""") for t in MATH_TYPES)


@pytest.mark.parametrize("t", MATH_TYPES)
def test_exp(device, t):
    rng = np.random.default_rng(5)
    if t in COMPLEX_TYPES:
        a = (rng.uniform(-5, 5, N) + 1j * rng.uniform(-5, 5, N)).astype(NUMPY[t])
    else:
        a = rng.uniform(-8, 8, N).astype(np.float32)
        a = f32_to_bf16(a) if t == "bf16" else a.astype(NUMPY[t])
    e, f = np.zeros_like(a), np.zeros_like(a)
    program(MATH_SOURCE)[f"exp_{t}"](a, e, f, batch=BATCH)
    if t == "bf16":  # exact results of the bf16 inputs; the outputs as f32
        a, e, f = bf16_to_f32(a), bf16_to_f32(e), bf16_to_f32(f)
    want = np.exp(a.astype(np.complex128 if t in COMPLEX_TYPES else np.float64))
    for got, native in ((e, False), (f, True)):  # OpenCL's ULP bound; native_: implementation-defined
        if t in COMPLEX_TYPES:
            bound = complex_math_error_bound("exp", t, a, want, native)
        else:
            bound = math_error_bound("exp", t, want, native)
        assert_within(got, want, bound, f"{'native_' if native else ''}exp {t}")
