"""Bounds-checked launches: every access, view and collective shape rule checked on the device.

Each perturbed launch must end in BoundsError (a LaunchError) naming the
instruction's line and column, the work-group and the offending index and
shape, with no output written back (NumPy and USM arrays alike); a valid
launch gives the same results as the plain kernel. All kernels live in one
module, so the plain and the checked variant are built once each.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from runtime_testlib import UsmArray

SOURCE = """\
func @access(%A: memref<f32x?x?>, %B: memref<f32x?>, %i: index, %j: index) {
  %x = load %A[%i, %j] : f32
  store %x, %B[%j]
  store.atomic_add %x, %B[%i]
}
func @subview(%A: memref<f32x16x8>, %B: memref<f32x4x8x?>, %i: index) {
  %g = builtin.group_id : index
  %b = subview %B[:, :, %g] : memref<f32x4x8>
  %a = subview %A[%i:4, :] : memref<f32x4x8,strided<1,16>>
  %one = constant 1.0 : f32
  axpby.n %one, %a, %one, %b
}
func @expand(%A: memref<f32x?>, %B: memref<f32x?x4>, %p: index) {
  %e = expand %A[0 -> %p x 4] : memref<f32x?x4>
  %z = constant 0 : index
  %x = load %e[%z, %z] : f32
  store %x, %B[%z, %z]
}
func @fuse(%A: memref<f32x4x?,strided<1,?>>, %B: memref<f32x?>) {
  %f = fuse %A[0, 1] : memref<f32x?>
  %z = constant 0 : index
  %x = load %f[%z] : f32
  store %x, %B[%z]
}
func @group(%G: group<memref<f32x4>x?>, %B: memref<f32x4x?>, %k: index) {
  %g = builtin.group_id : index
  %m = load %G[%k] : memref<f32x4>
  %b = subview %B[:, %g] : memref<f32x4>
  %one = constant 1.0 : f32
  axpby.n %one, %m, %one, %b
}
func @local(%B: memref<f32x8>, %i: index) {
  %t = alloca : memref<f32x8,local>
  %z = constant 0 : index
  %c8 = constant 8 : index
  %v = constant 2.0 : f32
  foreach (%k) = (%z), (%c8) {
    store %v, %t[%k]
  }
  %x = load %t[%i] : f32
  store %x, %B[%z]
}
func @coop(%A: memref<f32x?x?>, %C: memref<f32x8x8>, %x: index, %y: index) {
  parallel {
    %sg = builtin.subgroup_id : i32
    %zero = constant 0 : i32
    %first = cmp.eq %sg, %zero : bool
    if %first {
      %z = constant 0 : index
      %m = cooperative_matrix_load.n %A[%x, %y] : coopmatrix<f32x8x8,matrix_acc>
      cooperative_matrix_store %m, %C[%z, %z]
    }
  }
}
func @gemm(%A: memref<f32x?x?>, %B: memref<f32x?x?>, %C: memref<f32x?x?>) {
  %one = constant 1.0 : f32
  gemm.n.t %one, %A, %B, %one, %C
}
func @gemv(%A: memref<f32x?x?>, %x: memref<f32x?>, %y: memref<f32x?>) {
  %one = constant 1.0 : f32
  gemv.t %one, %A, %x, %one, %y
}
func @ger(%a: memref<f32x?>, %b: memref<f32x?>, %C: memref<f32x?x?>) {
  %one = constant 1.0 : f32
  ger %one, %a, %b, %one, %C
}
func @axpby_t(%A: memref<f32x?x?>, %B: memref<f32x?x?>) {
  %one = constant 1.0 : f32
  axpby.t %one, %A, %one, %B
}
func @sum(%A: memref<f32x?x?>, %b: memref<f32x?>) {
  %one = constant 1.0 : f32
  sum.n %one, %A, %one, %b
}
func @cumsum(%A: memref<f32x?x?>, %B: memref<f32x?x?>) {
  %one = constant 1.0 : f32
  cumsum %one, %A, 1, %one, %B
}
func @hadamard(%a: memref<f32x?>, %b: memref<f32x?>, %c: memref<f32x?>) {
  %one = constant 1.0 : f32
  hadamard_product %one, %a, %b, %one, %c
}
func @indirect(%I: memref<index x?>, %A: memref<f32x?>, %B: memref<f32x?>) {
  %z = constant 0 : index
  %one = constant 1 : index
  %five = constant 5.0 : f32
  store %five, %B[%one]
  %k = load %I[%z] : index
  store %k, %I[%one]
  %k2 = load %I[%one] : index
  %x = load %A[%k2] : f32
  store %x, %B[%z]
}
"""

LINES = {name: i + 1 for i, line in enumerate(SOURCE.splitlines()) for name in [line.strip()]}


def line_of(text: str) -> int:
    """The source line that starts with `text`."""
    return next(n for line, n in LINES.items() if line.startswith(text))


def line_in(function: str, text: str) -> int:
    """The line of function `function` that starts with `text`."""
    lines = SOURCE.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"func @{function}("))
    return next(i + 1 for i in range(start, len(lines)) if lines[i].strip().startswith(text))


@pytest.fixture(scope="module")
def program(device):
    return tinyc.compile(SOURCE, name="bounds.ir")


def f32(rng, *shape):
    return np.asfortranarray(rng.standard_normal(shape).astype(np.float32))


def expect_error(kernel, args, batch=1, **kw) -> tinyc.BoundsError:
    before = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(tinyc.BoundsError) as info:
        kernel(*args, batch=batch, check_bounds=True, **kw)
    for a, b in zip(args, before):  # no output written back
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    err = info.value
    assert isinstance(err, tinyc.LaunchError)
    assert "no output was written back" in str(err)
    return err


def test_out_of_bounds_load_is_reported_with_its_place_and_values(program):
    rng = np.random.default_rng(0)
    A, B = f32(rng, 8, 4), f32(rng, 8)
    err = expect_error(program["access"], [A, B, 2, 6])
    assert (err.kind, err.line, err.column) == ("access", 2, 3)
    assert err.index == (2, 6) and err.shape == (8, 4) and err.work_group == 0
    assert err.site.file == "bounds.ir" and "load %A[%i, %j]" in err.site.text
    assert "bounds.ir:2.3" in str(err) and "(2, 6)" in str(err) and "(8, 4)" in str(err)


def test_negative_index_and_atomics_are_checked(program):
    rng = np.random.default_rng(1)
    A, B = f32(rng, 8, 4), f32(rng, 8)
    err = expect_error(program["access"], [A, B, -1, 0])
    assert err.index == (-1, 0)
    B2 = f32(rng, 2)  # the store to B[j] fits, the atomic add at B[i] does not
    err = expect_error(program["access"], [A, B2, 5, 1])
    assert err.line == 4 and err.index == (5,) and err.shape == (2,)


def test_valid_launch_matches_the_plain_kernel(program):
    rng = np.random.default_rng(2)
    A = f32(rng, 8, 4)
    B1, B2 = f32(rng, 8), None
    B2 = B1.copy(order="F")
    program["access"](A, B1, 3, 1, batch=1)
    program["access"](A, B2, 3, 1, batch=1, check_bounds=True)
    np.testing.assert_array_equal(B1, B2)
    assert B1[1] == A[3, 1]


@pytest.mark.parametrize("i, ok", [(12, True), (13, False), (2**40, False), (-1, False)])
def test_subview_out_of_its_source(program, i, ok):
    rng = np.random.default_rng(3)
    A, B = f32(rng, 16, 8), np.zeros((4, 8, 3), np.float32, order="F")
    k = program["subview"]
    if ok:
        k(A, B, i, batch=3, check_bounds=True)
        np.testing.assert_allclose(B[:, :, 2], A[i:i + 4])
        return
    err = expect_error(k, [A, B, i], batch=3)
    assert err.kind == "subview" and err.line == line_of("%a = subview")
    assert err.index == (i, 0) and err.shape == (16, 8)


def test_an_invalid_view_blocks_the_collective_that_uses_it(program):
    """The axpby's lowered code trusts its operands; an invalid subview must stop it."""
    A, B = np.ones((16, 8), np.float32, order="F"), np.zeros((4, 8, 2), np.float32, order="F")
    expect_error(program["subview"], [A, B, 13], batch=2)
    assert not B.any()


def test_expand_whose_product_is_not_the_mode_size(program):
    rng = np.random.default_rng(4)
    A, B = f32(rng, 12), f32(rng, 3, 4)
    program["expand"](A, B, 3, check_bounds=True, batch=1)
    assert B[0, 0] == A[0]
    err = expect_error(program["expand"], [A, f32(rng, 4, 4), 4])
    assert err.kind == "expand" and err.index == (16,) and err.shape == (12,)


def test_fuse_of_modes_that_are_not_contiguous(program):
    rng = np.random.default_rng(5)
    base = f32(rng, 6, 3)  # leading dimension 6 > 4: the two modes are not contiguous
    A = base[:4, :]
    err = expect_error(program["fuse"], [A, f32(rng, 12)])
    assert err.kind == "fuse" and err.index == (1, 6) and err.shape == (4, 3)
    packed = np.asfortranarray(base[:4, :])
    B = f32(rng, 12)
    program["fuse"](packed, B, check_bounds=True, batch=1)
    assert B[0] == packed[0, 0]


def test_group_index_outside_the_group(program):
    rng = np.random.default_rng(6)
    G = [f32(rng, 4) for _ in range(3)]
    B = np.zeros((4, 3), np.float32, order="F")
    err = expect_error(program["group"], [G, B, 3], batch=3)
    assert err.kind == "group" and err.index == (3,) and err.shape == (3,)
    program["group"](G, B, 2, batch=3, check_bounds=True)
    np.testing.assert_allclose(B[:, 1], G[2])


def test_local_memory_is_checked(program):
    B = np.zeros(8, np.float32)
    err = expect_error(program["local"], [B, 8])
    assert err.index == (8,) and err.shape == (8,)
    program["local"](B, 7, check_bounds=True, batch=1)
    assert B[0] == 2.0


@pytest.mark.parametrize("x, y, ok", [(0, 0, True), (2, 0, True), (3, 0, False), (0, 1, False)])
def test_coopmatrix_load_outside_its_memref(program, x, y, ok):
    rng = np.random.default_rng(7)
    A, C = f32(rng, 10, 8), np.zeros((8, 8), np.float32, order="F")
    k = program["coop"]
    if ok:
        k(A, C, x, y, check_bounds=True, batch=1)
        np.testing.assert_array_equal(C, A[x:x + 8, y:y + 8])
        return
    err = expect_error(k, [A, C, x, y])
    assert err.kind == "coopmatrix" and err.index == (x, y) and err.shape == (10, 8)


COLLECTIVES = [  # kernel, good shapes, bad shapes, the rule that breaks
    ("gemm", [(4, 3), (5, 3), (4, 5)], [(4, 3), (5, 2), (4, 5)], "columns of op(A) = rows of op(B)"),
    ("gemm", [(4, 3), (5, 3), (4, 5)], [(4, 3), (5, 3), (4, 6)], "columns of C = columns of op(B)"),
    ("gemv", [(3, 4), (3,), (4,)], [(3, 4), (3,), (5,)], "rows of c = rows of op(A)"),
    ("ger", [(4,), (5,), (4, 5)], [(4,), (6,), (4, 5)], "columns of C = rows of b"),
    ("axpby_t", [(3, 4), (4, 3)], [(3, 4), (3, 4)], "mode 0 of B = mode 0 of op(A)"),
    ("sum", [(4, 3), (4,)], [(4, 3), (5,)], "rows of b = rows of op(A)"),
    ("cumsum", [(4, 3), (4, 3)], [(4, 3), (4, 2)], "mode 1 of B = mode 1 of A"),
    ("hadamard", [(5,), (5,), (5,)], [(5,), (4,), (5,)], "mode 0 of b = mode 0 of a"),
]


@pytest.mark.parametrize("name, good, bad, rule", COLLECTIVES)
def test_collective_shape_rules(program, name, good, bad, rule):
    rng = np.random.default_rng(8)
    k = program[name]
    args = [f32(rng, *s) for s in good]
    plain = [a.copy(order="F") for a in args]
    k(*plain, batch=1)
    k(*args, check_bounds=True, batch=1)
    for got, want in zip(args, plain):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    err = expect_error(k, [f32(rng, *s) for s in bad])
    assert err.kind == "shape rule" and err.site.detail == rule
    opname = {"axpby_t": "axpby", "hadamard": "hadamard_product"}.get(name, name)
    assert err.line == line_in(name, opname) and err.column == 3
    assert err.index != err.shape


def test_usm_outputs_are_restored(program, queue):
    """The `indirect` kernel reads back what it stored, so it runs for real (not as a dry
    run) and the USM output must be restored from a snapshot."""
    kernel = program["indirect"]
    assert not kernel._checked_kernel().info.bounds_dry
    assert program["access"]._checked_kernel().info.bounds_dry
    A = np.arange(4, dtype=np.float32)
    B = np.full(2, 7.0, dtype=np.float32)
    I = UsmArray.from_host(queue, np.array([9, -3], np.int64))
    Busm = UsmArray.from_host(queue, B)
    with pytest.raises(tinyc.BoundsError) as info:
        kernel(I, A, Busm, check_bounds=True, batch=1)
    assert info.value.index == (9,) and info.value.line == line_in("indirect", "%x = load")
    np.testing.assert_array_equal(Busm.to_host(), B)  # B[1] = 5 was undone
    np.testing.assert_array_equal(I.to_host(), [9, -3])  # and I[1] = 9
    good = UsmArray.from_host(queue, np.array([2, -3], np.int64))
    kernel(good, A, Busm, check_bounds=True, batch=1)
    np.testing.assert_array_equal(Busm.to_host(), [2.0, 5.0])
    np.testing.assert_array_equal(good.to_host(), [2, 2])


def test_usm_outputs_of_a_dry_run_stay_untouched(program, queue):
    rng = np.random.default_rng(9)
    A = f32(rng, 8, 4)
    B = f32(rng, 8)
    Busm = UsmArray.from_host(queue, B)
    with pytest.raises(tinyc.BoundsError):
        program["access"](A, Busm, 1, 4, check_bounds=True, batch=1)
    np.testing.assert_array_equal(Busm.to_host(), B)


def test_environment_variable_and_explicit_false(program, monkeypatch):
    rng = np.random.default_rng(10)
    A, B = f32(rng, 8, 4), f32(rng, 8)
    monkeypatch.setenv("TINYC_CHECK_BOUNDS", "1")
    with pytest.raises(tinyc.BoundsError):
        program["access"](A, B, 0, 7, batch=1)
    program["access"](A, B, 0, 3, batch=1)  # valid: runs
    monkeypatch.setenv("TINYC_CHECK_BOUNDS", "0")
    program["access"](A, B, 0, 3, batch=1)
    with pytest.raises(tinyc.LaunchError, match="check_bounds must be"):
        program["access"](A, B, 0, 3, check_bounds="yes", batch=1)


def test_the_checked_variant_passes_spirv_val():
    """Every sample, compiled with checks, is valid SPIR-V (compile_to_spirv runs spirv-val)."""
    from pathlib import Path

    from tinyc.compiler import compile_to_spirv

    for sample in sorted((Path(__file__).parents[2] / "samples").glob("*.ir")):
        result = compile_to_spirv(sample.read_text(), str(sample), check_bounds=True)
        for info in result.kernels.values():
            assert info.bounds_sites is not None
