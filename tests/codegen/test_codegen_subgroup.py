"""Subgroup broadcast, reduce and scans for every allowed type at subgroup sizes 8/16/32."""

from __future__ import annotations

import re

import numpy as np
import pytest

from codegen_testlib import (
    COMPLEX_TYPES, INT_TYPES, NUMPY, assembly, bf16_to_f32, f32_to_bf16, fortran, program, spmd_kernel,
)

TYPES = ["i8", "i16", "i32", "i64", "index", "bf16", "f16", "f32", "f64", "c32", "c64"]
MODES = ["reduce", "inclusive_scan", "exclusive_scan"]
SIZES = [8, 16, 32]
BATCH = 3


def ops_for(t: str) -> list[str]:
    return ["add"] if t in COMPLEX_TYPES else ["add", "max", "min"]


def columns(t: str) -> list[tuple[str, str]]:
    return [(op, mode) for op in ops_for(t) for mode in MODES]


def kernel(t: str, S: int) -> str:
    cols = columns(t)
    body = [f"%a = load %A[%i] : {t}"]
    for k, (op, mode) in enumerate(cols):
        body += [f"%r{k} = subgroup_{op}.{mode} %a : {t}", f"%k{k} = constant {k} : index",
                 f"store %r{k}, %O[%i, %k{k}]"]
    body += ["%g32 = cast %gid : i32", f"%cS = constant {S} : i32", "%src = arith.rem %g32, %cS : i32",
             f"%b = subgroup_broadcast %a, %src : {t}", "store %b, %B[%i]"]
    params = f"%A: memref<{t}x?>, %O: memref<{t}x?x{len(cols)}>, %B: memref<{t}x?>"
    return spmd_kernel(f"sg_{t}", params, "\n".join(body), subgroup_size=S, work_group_size=(S, 1))


SOURCES = {S: "\n".join(kernel(t, S) for t in TYPES) for S in SIZES}


def identity(t: str, op: str):
    if op == "add":
        return 0
    if t in INT_TYPES:
        info = np.iinfo(NUMPY[t])
        return info.min if op == "max" else info.max
    return -np.inf if op == "max" else np.inf


def reference(t: str, op: str, mode: str, x: np.ndarray) -> np.ndarray:
    """Per subgroup (rows of x), in exact arithmetic then wrapped/rounded to the type."""
    wide = x.astype(object) if t in INT_TYPES else x.astype(np.complex128 if t in COMPLEX_TYPES else np.float64)
    fn = {"add": np.add, "max": np.maximum, "min": np.minimum}[op]
    inc = fn.accumulate(wide, axis=1)
    if mode == "reduce":
        out = np.repeat(inc[:, -1:], x.shape[1], axis=1)
    elif mode == "inclusive_scan":
        out = inc
    else:
        out = np.concatenate([np.full((x.shape[0], 1), identity(t, op), dtype=inc.dtype), inc[:, :-1]], axis=1)
    if t in INT_TYPES:
        bits = np.iinfo(NUMPY[t]).bits
        return np.array([(int(v) + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1) for v in out.ravel()],
                        NUMPY[t]).reshape(out.shape)
    return out


def inputs(t: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if t in INT_TYPES:
        return rng.integers(-100, 100, n).astype(NUMPY[t])
    if t in COMPLEX_TYPES:
        return (rng.integers(-8, 8, n) + 1j * rng.integers(-8, 8, n)).astype(NUMPY[t])
    v = rng.integers(-4, 5, n).astype(np.float32) * np.float32(0.5)  # exact partial sums
    return f32_to_bf16(v) if t == "bf16" else v.astype(NUMPY[t])


@pytest.mark.parametrize("S", SIZES)
@pytest.mark.parametrize("t", TYPES)
def test_subgroup_operations(device, S, t):
    rng = np.random.default_rng(S)
    n = S * BATCH
    a = inputs(t, n, rng)
    cols = columns(t)
    out = fortran(np.zeros((n, len(cols)), NUMPY[t]))
    b = np.zeros_like(a)
    program(SOURCES[S])[f"sg_{t}"](a, out, b, batch=BATCH)
    x = a.reshape(BATCH, S)
    decode = bf16_to_f32 if t == "bf16" else (lambda v: v)
    for k, (op, mode) in enumerate(cols):
        want = reference(t, op, mode, decode(x))
        got = decode(out[:, k].reshape(BATCH, S))
        np.testing.assert_array_equal(got, want.astype(got.dtype) if t not in INT_TYPES else want,
                                      err_msg=f"subgroup_{op}.{mode}")
    src = np.arange(BATCH) % S
    np.testing.assert_array_equal(b.reshape(BATCH, S), np.repeat(x[np.arange(BATCH), src][:, None], S, 1))


def test_broadcast_uses_32_bit_lane_ids():
    """A 64-bit lane id fails to link on the CPU runtime (RUNTIME-NOTES §8)."""
    asm = assembly(SOURCES[16])
    types = dict(re.findall(r"(%\w+) = Op\w+ (%\w+)", asm))
    lanes = re.findall(r"OpGroupBroadcast %\w+ %\w+ %\w+ (%\w+)", asm)
    assert len(lanes) == 13  # 9 scalar types + both parts of c32 and c64
    assert {types[lane] for lane in lanes} == {"%uint"}
