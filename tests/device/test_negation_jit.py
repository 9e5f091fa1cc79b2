"""Negation of a work-group-uniform value inside a loop with a barrier.

The CPU runtime's JIT segfaulted (X86 instruction selection) on an LLVM `fneg` of a
value every work-item shares, loaded before a `for` whose body holds a barrier and
used in the branch of a `foreach` only some work-items take, at sub-group size 32
(fuzz seed 4242, program 207; docs/runtime-notes.md). tinyc now emits negation as
copysign with the opposite sign (scalar.flip_signs), also for `x * -1`, `x / -1` and
`-0.0 - x`, which LLVM would turn back into an `fneg`.

Each kernel negates both the shared value (a[0]) and each work-item's own (a[j]), so
the results cover signed zeros, infinities, NaN and subnormals. They are built and
run in a child process: a regression kills the child, not the test run.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tinyc.compiler import compile_to_spirv
from tinyc.spirv.tools import disassemble, validate

NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
         "c32": np.complex64, "c64": np.complex128}
N, TRIPS = 16, 3

# name: (type, body computing %r from %v, NumPy of it, sub-group size, work-group size)
CASES = {
    "neg_c64": ("c64", "%r = arith.neg %v : c64", np.negative, 32, 64),  # the fuzz program's
    "neg_f32": ("f32", "%r = arith.neg %v : f32", np.negative, 32, 64),
    "neg_f16": ("f16", "%r = arith.neg %v : f16", np.negative, 32, 64),
    "conj_c32": ("c32", "%r = arith.conj %v : c32", np.conj, 32, 64),
    "mul_minus_one_f16": ("f16", "%m = constant -1.0 : f16\n%r = arith.mul %v, %m : f16",
                          lambda x: x * np.float16(-1), 32, 64),
    "div_minus_one_f64": ("f64", "%m = constant -1.0 : f64\n%r = arith.div %v, %m : f64",
                          lambda x: x / -1.0, 32, 64),
    "minus_zero_minus_c32": ("c32", "%m = constant [-0.0, -0.0] : c32\n%r = arith.sub %m, %v : c32",
                             lambda x: np.complex64(complex(-0.0, -0.0)) - x, 32, 64),
}


def kernel(name: str) -> str:
    """a[0] (the same for every work-item) loaded before the loop; the op on it and on a[j]."""
    t, body, _, sg, wg = CASES[name]

    def op(value: str, result: str) -> str:
        return "\n      ".join(body.replace("%v", value).replace("%m", f"%m_{result[1:]}")
                               .replace("%r", result).splitlines())

    return f"""
func @{name}(%a: memref<{t}x{N}>, %shared: memref<{t}x{N}x{TRIPS}>, %own: memref<{t}x{N}x{TRIPS}>) attributes {{subgroup_size={sg}, work_group_size=[{wg}, 1]}} {{
  %zero = constant 0 : index
  %trips = constant {TRIPS} : index
  %n = constant {N} : index
  %x = load %a[%zero] : {t}
  for %i = %zero, %trips {{
    foreach (%j) = (%zero), (%n) {{
      %v = load %a[%j] : {t}
      {op("%x", "%y")}
      {op("%v", "%w")}
      store %y, %shared[%j, %i]
      store %w, %own[%j, %i]
    }}
  }}
}}
"""


SOURCE = "".join(kernel(name) for name in CASES)

RUN_IN_CHILD = """
import json, sys
import numpy as np
import tinyc
source, names, path = sys.stdin.read(), json.loads(sys.argv[1]), sys.argv[2]
program = tinyc.compile(source)
inputs = dict(np.load(path + ".in.npz"))
outputs = {}
for name in names:
    a = inputs[name]
    shared = np.zeros((len(a), %d), a.dtype, order="F")
    own = np.zeros_like(shared)
    program[name](a, shared, own, batch=1)
    outputs[name + ".shared"], outputs[name + ".own"] = shared, own
np.savez(path + ".out.npz", **outputs)
""" % TRIPS


def special_values(t: str) -> np.ndarray:
    """Signed zeros, infinities, NaNs of both signs, a subnormal, the largest finite value."""
    dtype = np.dtype(NUMPY[t])
    real = np.float32 if t == "c32" else np.float64 if t == "c64" else dtype.type
    info = np.finfo(real)
    nan = np.array(np.nan, real)
    values = np.array([-0.0, 0.0, 1.5, -2.25, np.inf, -np.inf, 0.0, 0.0, info.smallest_subnormal,
                       -info.smallest_subnormal, info.max, -info.max, 3.0, -7.0, 0.5, 1.0], real)
    values[6], values[7] = nan, -nan
    if dtype.kind != "c":
        return values
    pairs = np.empty(len(values), dtype)
    pairs.real, pairs.imag = values, values[::-1]   # every pairing of signs and kinds
    return pairs


def same_values(got: np.ndarray, want: np.ndarray, nan_sign: bool) -> None:
    """Equal with the sign of zeros; NaN where NaN (with its sign when `nan_sign`)."""
    def parts(x):
        return (x.real, x.imag) if np.iscomplexobj(x) else (x,)
    for g, w in zip(parts(got), parts(want)):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        keep = np.ones(g.shape, bool) if nan_sign else ~np.isnan(w)
        np.testing.assert_array_equal(g[keep & ~np.isnan(w)], w[keep & ~np.isnan(w)])
        np.testing.assert_array_equal(np.signbit(g[keep]), np.signbit(w[keep]))


def test_the_kernels_validate_and_never_negate_with_fneg():
    result = compile_to_spirv(SOURCE, "<negation>")
    validate(result.spirv)
    asm = disassemble(result.spirv)
    assert "OpFNegate" not in asm
    assert "OpSignBitSet" not in asm  # its boolean crashed the cross-barrier pass (seed 6161)
    assert asm.count("copysign") >= 2 * len(CASES)  # copysign(v, 0 - copysign(1, v)) per part


@pytest.fixture(scope="module")
def ran(device, tmp_path_factory):
    """Inputs and the device's outputs of every case, built and run in one child process."""
    path = str(tmp_path_factory.mktemp("negation") / "cases")
    inputs = {name: special_values(CASES[name][0]) for name in CASES}
    np.savez(path + ".in.npz", **inputs)
    done = subprocess.run([sys.executable, "-c", RUN_IN_CHILD, json.dumps(list(CASES)), path],
                          input=SOURCE, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"the child died ({done.returncode}):\n{done.stderr[-3000:]}"
    return inputs, dict(np.load(path + ".out.npz"))


@pytest.mark.parametrize("name", CASES)
def test_the_device_negates_like_numpy(ran, name):
    inputs, outputs = ran
    _, _, numpy_op, _, _ = CASES[name]
    a = inputs[name]
    with np.errstate(all="ignore"):
        want_own = numpy_op(a)
        want_shared = np.full_like(a, numpy_op(a[:1])[0])
    nan_sign = name.startswith(("neg", "conj"))   # IEEE leaves a NaN product's sign open
    for i in range(TRIPS):
        same_values(outputs[name + ".own"][:, i], want_own, nan_sign)
        same_values(outputs[name + ".shared"][:, i], want_shared, nan_sign)
