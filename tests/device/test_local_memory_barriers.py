"""Local memory written before a loop and read after the barrier inside it.

The kernels: a gemv writes a local `alloca` t (M x J), then a `for` loop of J
iterations runs a ger that reads column j of t. The barrier pass puts the
barrier at the top of the loop body. The CPU runtime used to miscompile this
when the pointer into local memory was formed before that barrier and used
after it: the gemv's store was moved past the loop, and every read saw memory
nobody had written (docs/decisions.md, "Local memory and barriers"). Codegen
now forms a local pointer where it is used, after the last barrier.

The variants (c32/c64/f32, trip counts 1-3, with and without `lifetime_stop`)
are kernels of one module, so the JIT runs once. The control test rebuilds
the old pattern and must read a sentinel written before the gemv: without
that, these tests could not see the bug.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from tinyc.compiler import Program, compile_to_spirv
from tinyc.ir.instructions import Subview
from tinyc.spirv.codegen import dispatch, memref
from tinyc.spirv.codegen.context import LocalSlot
from tinyc.spirv.tools import disassemble

from barrier_scan import values_across_barriers

NUMPY = {"c32": np.complex64, "c64": np.complex128, "f32": np.float32}
M, A_ROWS = 8, 5   # rows of t; rows of the ger's A
CASES = [(t, trips, True) for t in NUMPY for trips in (1, 2, 3)]
CASES += [(t, 2, False) for t in NUMPY]
REPRO = ("c32", 2, True, 1000)   # the kernel random testing found (a 1000-long gemv)


SENTINEL = 1.0e30
"""What the control fills local memory with before the gemv writes it (see below)."""


def kernel(t: str, trips: int, stop: bool, k: int = 64, sentinel: bool = False) -> str:
    """gemv into a local t, then per column j of t a ger into out[:, j, :]; with `sentinel`,
    t is filled with SENTINEL first."""
    one, zero = ("[1.0, 0.0]", "[0.0, 0.0]") if t[0] == "c" else ("1.0", "0.0")
    rows = M * trips
    fill = ""
    if sentinel:
        value = f"[{SENTINEL!r}, 0.0]" if t[0] == "c" else repr(SENTINEL)
        fill = f"""  %sentinel = constant {value} : {t}
  %rows = constant {M} : index
  %cols = constant {trips} : index
  foreach (%fi, %fj) = (%c0, %c0), (%rows, %cols) {{
    store %sentinel, %t0[%fi, %fj]
  }}
"""
    return f"""
func @{name(t, trips, stop, k)}{"_sentinel" if sentinel else ""}(%alpha: {t}, %beta: {t},
    %A: group<memref<{t}x{A_ROWS}>x1>, %B: group<memref<{t}x{k}>x1>,
    %C: group<memref<{t}x{M}x{trips}x{k}>x1>, %out: group<memref<{t}x{A_ROWS}x{trips}x{M}>x1>) {{
  %c0 = constant 0 : index
  %A0 = load %A[%c0] : memref<{t}x{A_ROWS}>
  %B0 = load %B[%c0] : memref<{t}x{k}>
  %C0 = load %C[%c0] : memref<{t}x{M}x{trips}x{k}>
  %out0 = load %out[%c0] : memref<{t}x{A_ROWS}x{trips}x{M}>
  %t0 = alloca : memref<{t}x{M}x{trips},local>
{fill}  %C1 = fuse %C0[0, 1] : memref<{t}x{rows}x{k}>
  %t1 = fuse %t0[0, 1] : memref<{t}x{rows},local>
  %one = constant {one} : {t}
  %zero = constant {zero} : {t}
  gemv.n %one, %C1, %B0, %zero, %t1
  %from = constant 0 : index
  %to = constant {trips} : index
  for %j = %from, %to {{
    %tj = subview %t0[:, %j] : memref<{t}x{M},local>
    %oj = subview %out0[:, %j, :] : memref<{t}x{A_ROWS}x{M},strided<1,{A_ROWS * trips}>>
    ger %alpha, %A0, %tj, %beta, %oj
  }}
{"  lifetime_stop %t0" if stop else ""}
}}
"""


def name(t: str, trips: int, stop: bool, k: int = 64) -> str:
    return f"k_{t}_{trips}_{'stop' if stop else 'keep'}_{k}"


SOURCE = "".join(kernel(*case) for case in CASES) + kernel(*REPRO)


@pytest.fixture(scope="module")
def variants(device) -> Program:
    return Program(compile_to_spirv(SOURCE, "<local-memory-barriers>"), device)


def run(program: Program, t: str, trips: int, stop: bool, k: int = 64,
        sentinel: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Launch one variant: its result and NumPy's."""
    dtype = NUMPY[t]
    rng = np.random.default_rng(trips)

    def rand(*shape: int) -> np.ndarray:
        x = rng.uniform(-1, 1, shape)
        if t[0] == "c":
            x = x + 1j * rng.uniform(-1, 1, shape)
        return np.asfortranarray(x.astype(dtype))

    A, B, C, out = rand(A_ROWS), rand(k), rand(M, trips, k), rand(A_ROWS, trips, M)
    alpha, beta = (dtype(1 + 0.5j), dtype(0.5 - 0.25j)) if t[0] == "c" else (dtype(1.5), dtype(0.5))
    col = np.einsum("mjk,k->mj", C.astype(np.complex128), B)       # t = gemv
    want = alpha * np.einsum("a,mj->ajm", A, col) + beta * out     # ger per column j
    got = out.copy(order="F")
    program[name(t, trips, stop, k) + ("_sentinel" if sentinel else "")](alpha, beta, [A], [B], [C], [got], batch=1)
    return got, want


def close(got: np.ndarray, want: np.ndarray) -> bool:
    tol = 1e-5 if got.real.dtype == np.float32 else 1e-12
    return bool(np.abs(got - want).max() <= tol * np.abs(want).max())


@pytest.mark.parametrize("case", CASES, ids=lambda c: name(*c))
def test_local_memory_written_before_a_loop_is_read_in_it(variants, case):
    got, want = run(variants, *case)
    assert close(got, want), np.abs(got - want).max()


def test_the_kernel_random_testing_found(variants):
    got, want = run(variants, *REPRO)
    assert close(got, want), np.abs(got - want).max()


def _eager_local_views(monkeypatch) -> None:
    """The old codegen: a subview of local memory forms its pointer where it is made."""

    def eager_subview(ctx, inst):
        memref.emit_subview(ctx, inst)
        desc = ctx[inst.result]
        if isinstance(desc.base, LocalSlot):
            ctx[inst.result] = dataclasses.replace(desc, base=memref.first_element(ctx, desc), offset=0)

    monkeypatch.setitem(dispatch.EMITTERS, Subview, eager_subview)


def _complex_products_as_found(ctx, work, a, b, c, K: int, N: int, blocks: int,
                               swapped: bool = False) -> list:
    """The complex products of cooperative_matrix_mul_add as codegen made them when random
    testing found the bug: a complex multiply and a complex add per product (`swapped`, the
    swap knob's mark, did not exist then and changes nothing here). The runtime
    miscompiles the old pointer placement with this code around it; with today's products
    (the parts kept apart, coopmatrix._complex_mul_add) the same kernel happens to run right."""
    from tinyc.ir.instructions import ArithBinaryOp
    from tinyc.spirv.codegen import scalar

    acc = list(c)
    for k in range(K):
        for j in range(N):
            for blk in range(blocks):
                product = scalar.binary(ctx, ArithBinaryOp.MUL, work, a[blk * K + k], b[k * N + j])
                acc[blk * N + j] = scalar.binary(ctx, ArithBinaryOp.ADD, work, acc[blk * N + j], product)
    return acc


def test_the_old_pointer_placement_reads_unwritten_local_memory(device, monkeypatch):
    """Control: with pointers formed before the barrier the ger reads local memory the gemv
    has not written. Local memory is filled with a sentinel first, so what it reads is
    known (without it, it read whatever an earlier kernel left there, sometimes the right
    values); the same kernel with today's codegen is right. The kernel is built with the
    complex products of the time the bug was found, which is what makes the runtime show it."""
    from tinyc.spirv.codegen import coopmatrix

    monkeypatch.setattr(coopmatrix, "_complex_mul_add", _complex_products_as_found)
    current = Program(compile_to_spirv(kernel(*REPRO, sentinel=True), "<sentinel>"), device)
    got, want = run(current, *REPRO, sentinel=True)
    assert close(got, want), np.abs(got - want).max()
    _eager_local_views(monkeypatch)
    program = Program(compile_to_spirv(kernel(*REPRO, sentinel=True), "<eager>"), device)
    got, want = run(program, *REPRO, sentinel=True)
    assert np.abs(got - want).max() > 1e-3 * SENTINEL, (
        "local pointers formed before the barrier did not read the sentinel: the runtime no "
        "longer miscompiles them (docs/decisions.md, 'Local memory and barriers'), or these "
        "tests cannot see it")


def local_pointers_across_barriers(asm: str) -> list[str]:
    """Workgroup-pointer ids defined before an OpControlBarrier and used after it."""
    pointer_types = set(re.findall(r"(%\w+) = OpTypePointer Workgroup", asm))
    return values_across_barriers(asm, lambda _, opcode, kind, __: kind in pointer_types and opcode != "Variable")


def test_no_local_pointer_is_live_across_a_barrier(monkeypatch):
    asm = disassemble(compile_to_spirv(SOURCE).spirv)
    assert asm.count("OpControlBarrier") >= len(CASES)
    assert local_pointers_across_barriers(asm) == []
    _eager_local_views(monkeypatch)   # the checker sees the old pattern
    assert local_pointers_across_barriers(disassemble(compile_to_spirv(kernel(*REPRO)).spirv))
