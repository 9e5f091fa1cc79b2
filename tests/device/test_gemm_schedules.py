"""The gemm schedule knobs added for speed, on the device, against NumPy.

`transpose = "shuffles"` (coalesced loads and a register transpose by
subgroup shuffles) in the three places it applies — the staging copy of Aᵀ,
Aᵀ read directly in K steps of S columns, and C's transposed load and store
under `swap` — for every transpose, f32, f64 and complex (which keeps the
per-lane loads), at sizes that leave remainders of every tile (rows of
padding, edge columns, a K tail), and at both usual subgroup sizes. One
program holds every case as a kernel, so each schedule set is one JIT build.
Schedules keep the order of the arithmetic, so the results must also equal
the default schedule's bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinyc
from tinyc.spirv.tools import disassemble, validate

TYPES = {"f32": np.float32, "f64": np.float64, "c32": np.complex64, "c64": np.complex128}
SIZES = [(37, 21, 19), (5, 18, 33), (16, 32, 16)]   # M, N, K


def cases() -> list[tuple[str, str, str, tuple[int, int, int]]]:
    return [(t, ta, tb, size) for t, size in itertools.product(TYPES, SIZES)
            for ta, tb in itertools.product("nt", repeat=2)]


def kernel_name(t: str, ta: str, tb: str, size: tuple[int, int, int]) -> str:
    return f"k_{t}_{ta}{tb}_{'x'.join(map(str, size))}"


def source() -> str:
    out = []
    for t, ta, tb, (M, N, K) in cases():
        a = (K, M) if ta == "t" else (M, K)
        b = (N, K) if tb == "t" else (K, N)
        out.append(f"""func @{kernel_name(t, ta, tb, (M, N, K))}(%alpha: {t}, %A: memref<{t}x{a[0]}x{a[1]}>,
    %B: memref<{t}x{b[0]}x{b[1]}>, %beta: {t}, %C: memref<{t}x{M}x{N}>) {{
  gemm.{ta}.{tb} %alpha, %A, %B, %beta, %C
}}""")
    return "\n".join(out)


SOURCE = source()

SCHEDULES = {
    "staged": {"gemm": {"transpose": "shuffles", "stage": True, "swap": False}},
    "direct": {"gemm": {"transpose": "shuffles", "stage": False, "swap": False, "k_unroll": 16}},
    "swapped": {"gemm": {"transpose": "shuffles", "swap": True, "stage": False, "tile": [1, 16],
                         "k_unroll": 1}},
    "swapped8": {"subgroup_size": 8, "gemm": {"transpose": "shuffles", "swap": True,
                                              "stage": False, "tile": [2, 8]}},
    "loads": {"gemm": {"transpose": "loads"}},
}


def applicable(name: str, t: str, ta: str) -> bool:
    """stage=true needs a transposed A (a verifier error otherwise); the `swapped` tile
    [1, 16] of c64 values keeps 64 vector registers live, more than the CPU has (a
    compilation error that says so)."""
    return not (name == "staged" and ta == "n") and not (name == "swapped" and t == "c64")


def arguments(t: str, ta: str, tb: str, size: tuple[int, int, int]) -> list:
    M, N, K = size
    rng = np.random.default_rng(M * 1000 + N * 10 + K)

    def r(*shape: int) -> np.ndarray:
        x = rng.uniform(-1, 1, shape)
        if t in ("c32", "c64"):
            x = x + 1j * rng.uniform(-1, 1, shape)
        return np.asfortranarray(x.astype(TYPES[t]))

    A = r(K, M) if ta == "t" else r(M, K)
    B = r(N, K) if tb == "t" else r(K, N)
    return [TYPES[t](0.5), A, B, TYPES[t](1.5), r(M, N)]


def expected(t: str, ta: str, tb: str, args: list) -> np.ndarray:
    alpha, A, B, beta, C = args
    opa = (A.T if ta == "t" else A).astype(np.complex128)
    opb = (B.T if tb == "t" else B).astype(np.complex128)
    want = complex(alpha) * (opa @ opb) + complex(beta) * C
    return want if t in ("c32", "c64") else want.real


def run(program: tinyc.Program, name: str, t: str, ta: str, tb: str, size) -> np.ndarray:
    args = arguments(t, ta, tb, size)
    program[name](*args, batch=1)
    return args[4]


@pytest.fixture(scope="module")
def default_results(device) -> dict[str, np.ndarray]:
    program = tinyc.compile(SOURCE, device=device)
    return {kernel_name(*c): run(program, kernel_name(*c), *c) for c in cases()}


@pytest.mark.parametrize("which", list(SCHEDULES))
def test_transpose_knob_gives_numpy_results_and_the_defaults_bits(which, device, default_results):
    schedule = {kernel_name(*c): SCHEDULES[which] for c in cases() if applicable(which, c[0], c[1])}
    program = tinyc.compile(SOURCE, device=device, schedule=schedule)
    validate(program.spirv)
    text = disassemble(program.spirv)
    if which != "loads":
        assert "OpGroupNonUniformShuffleXor" in text, "the register transpose is used"
    for c in cases():
        t, ta, tb, size = c
        name = kernel_name(*c)
        got = run(program, name, *c)
        tol = 1e-12 if t in ("f64", "c64") else 2e-6
        want = expected(t, ta, tb, arguments(*c))
        scale = max(1.0, float(np.max(np.abs(want))))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=name)
        assert got.tobytes() == default_results[name].tobytes(), f"{name}: not the default's bits"
