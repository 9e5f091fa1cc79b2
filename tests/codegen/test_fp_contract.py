"""The fp_contract option: a real add of a single-use product becomes one fma, rounded once.

Off (the default) every arith instruction rounds as NumPy's does; on, `a*b + c` is the
exact product plus c, rounded once (OpenCL.std fma, 0 ulp on the CPU runtime). The
values make the two differ: (1 + 2^-13)(1 - 2^-13) = 1 - 2^-26 rounds to 1 in f32.
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli
from tinyc.compiler import compile_to_spirv
from tinyc.spirv.tools import disassemble

FMA = """func @k(%A: memref<T x16>, %B: memref<T x16>, %C: memref<T x16>, %D: memref<T x16>) {
  %z = constant 0 : index
  %n = constant 16 : index
  foreach (%i) = (%z), (%n) {
    %a = load %A[%i] : T
    %b = load %B[%i] : T
    %c = load %C[%i] : T
    %p = arith.mul %a, %b : T
    %s = arith.add %c, %p : T
    store %s, %D[%i]
  }
}
"""

TWICE = """func @k(%A: memref<f32x16>, %D: memref<f32x16>) {
  %z = constant 0 : index
  %n = constant 16 : index
  foreach (%i) = (%z), (%n) {
    %a = load %A[%i] : f32
    %p = arith.mul %a, %a : f32
    %s = arith.add %p, %a : f32
    %t = arith.add %s, %p : f32
    store %t, %D[%i]
  }
}
"""


def source(t: str) -> str:
    return FMA.replace("T x16", f"{t}x16").replace(": T", f": {t}")


def fma_count(text: str, **options) -> int:
    return disassemble(compile_to_spirv(text, "k.ir", **options).spirv).count(" fma ")


def test_only_with_the_option_and_only_single_use_real_products():
    for t in ("f32", "f64"):
        assert fma_count(source(t)) == 0
        assert fma_count(source(t), fp_contract=True) == 1       # spirv-val ran on both
    assert fma_count(source("c32"), fp_contract=True) == 0        # complex: NumPy's formulas
    assert fma_count(TWICE, fp_contract=True) == 0                # the product is used twice


@pytest.mark.parametrize("dtype, tiny", [("float32", 2.0**-13), ("float64", 2.0**-27)])
def test_rounded_once_with_the_option_exact_as_numpy_without(device, dtype, tiny):
    t = "f32" if dtype == "float32" else "f64"
    a = np.full(16, 1 + tiny, dtype)
    b = np.full(16, 1 - tiny, dtype)
    c = np.full(16, -1, dtype)
    exact = np.float64(1 + tiny) * np.float64(1 - tiny) - 1 if dtype == "float32" else -tiny * tiny
    for fp_contract, want in ((False, (a * b) + c), (True, np.full(16, exact, dtype))):
        d = np.zeros(16, dtype)
        tinyc.compile(source(t), fp_contract=fp_contract)["k"](a, b, c, d, batch=1)
        np.testing.assert_array_equal(d, want)
    assert not np.array_equal((a * b) + c, np.full(16, exact, dtype))   # the values tell them apart


def test_command_line_option():
    runner = CliRunner()
    with runner.isolated_filesystem():
        with open("k.ir", "w") as f:
            f.write(source("f32"))
        on = runner.invoke(cli, ["compile", "k.ir", "--fp-contract", "-S", "-o", "-"])
        off = runner.invoke(cli, ["compile", "k.ir", "-S", "-o", "-"])
    assert on.exit_code == 0 and off.exit_code == 0, on.output + off.output
    assert " fma " in on.output and " fma " not in off.output
