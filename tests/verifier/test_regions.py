"""Region kinds, yield placement, and reporting of several errors at once."""

from __future__ import annotations

import pytest

from tests.verifier.conftest import (
    diagnostics, expect_error, expect_errors, expect_ok, fn, locate,
)


ARGS = "%A: memref<f32x8x8>, %B: memref<f32x8x8>, %C: memref<f32x8x8>, %n: index"


def test_spmd_instructions_inside_foreach_and_parallel():
    expect_ok(fn("""
        %zero = constant 0 : index
        foreach (%i, %j) = (%zero, %zero), (%n, %n) {
          %a = load %A[%i, %j] : f32
          %s = subgroup_add.reduce %a : f32
          %id = builtin.subgroup_local_id : i32
          store %s, %B[%i, %j]
        }
        parallel {
          %sg = builtin.subgroup_id : i32
          %x = constant 0 : index
          %m = cooperative_matrix_load.n %A[%x, %x] : coopmatrix<f32x8x8,matrix_acc>
          cooperative_matrix_store %m, %C[%x, %x]
        }""", ARGS))


def test_for_and_if_take_the_enclosing_kind():
    expect_ok(fn("""
        %zero = constant 0 : index
        %one = constant 1.0 : f32
        %t = constant true : bool
        for %k = %zero, %n {
          gemm.n.n %one, %A, %B, %one, %C
          if %t {
            axpby.n %one, %A, %one, %C
          }
        }
        parallel {
          for %k = %zero, %n {
            if %t {
              %s = builtin.subgroup_id : i32
            }
          }
        }""", ARGS))


def test_mixed_instructions_in_both_kinds():
    expect_ok(fn("""
        %zero = constant 0 : index
        %g = builtin.group_id : index
        %sgs = builtin.subgroup_size : i32
        parallel {
          %g2 = builtin.group_id : index
          %s = arith.add %g2, %g : index
          %v = load %A[%zero, %zero] : f32
          barrier.local
        }""", ARGS))


def test_collective_in_parallel():
    source = fn("""
        %one = constant 1.0 : f32
        parallel {
          gemm.n.n %one, %A, %B, %one, %C
        }""", ARGS)
    d = expect_error(source, "gemm is a collective instruction and cannot appear inside an SPMD "
                             "region (parallel at 3.3)", at="gemm")
    assert d.notes[0].message == "the SPMD region is opened by this parallel"
    assert (d.notes[0].span.line, d.notes[0].span.column) == locate(source, "parallel")


def test_collective_in_for_inside_foreach():
    source = fn("""
        %zero = constant 0 : index
        foreach (%i) = (%zero), (%n) {
          for %k = %zero, %n {
            %tmp = alloca : memref<f32x8,local>
          }
        }""", ARGS)
    expect_error(source, "alloca is a collective instruction and cannot appear inside an SPMD "
                         "region (foreach at 3.3)", at="%tmp")


@pytest.mark.parametrize("inner", [
    "foreach (%j) = (%zero), (%n) {\n}",
    "parallel {\n}",
    "%x = constant 1.0 : f32\nsum.n %x, %A, %x, %zv",
])
def test_collective_regions_do_not_nest_in_spmd(inner):
    body = "%zero = constant 0 : index\nparallel {\n" + \
        "\n".join("  " + line for line in inner.splitlines()) + "\n}"
    source = fn(body, ARGS + ", %zv: memref<f32x8>")
    name = inner.split()[0] if not inner.startswith("%") else "sum"
    at = name if name != "sum" else "sum.n"
    expect_error(source, f"{name} is a collective instruction and cannot appear inside an SPMD "
                         f"region (parallel at 3.3)", at=at, occurrence=2 if name == "parallel" else 1)


@pytest.mark.parametrize("inst, name", [
    ("%s = subgroup_add.reduce %x : f32", "subgroup_add.reduce"),
    ("%s = subgroup_max.inclusive_scan %x : f32", "subgroup_max.inclusive_scan"),
    ("%s = subgroup_broadcast %x, %lane : f32", "subgroup_broadcast"),
    ("%s = builtin.subgroup_id : i32", "builtin.subgroup_id"),
    ("%s = builtin.subgroup_local_id : i32", "builtin.subgroup_local_id"),
    ("%s = cooperative_matrix_load.n %A[%zero, %zero] : coopmatrix<f32x8x8,matrix_a>",
     "cooperative_matrix_load"),
])
def test_spmd_in_collective_region(inst, name):
    source = fn(f"""
        %x = constant 1.0 : f32
        %lane = constant 0 : i32
        %zero = constant 0 : index
        {inst}""", ARGS)
    expect_error(source, f"{name} is an SPMD instruction and cannot appear in a collective region; "
                         f"place it inside a foreach or parallel region", at="%s")


def test_spmd_in_for_at_function_level():
    source = fn("""
        %zero = constant 0 : index
        for %k = %zero, %n {
          %s = builtin.subgroup_id : i32
        }""", ARGS)
    expect_error(source, "builtin.subgroup_id is an SPMD instruction", at="%s", exact=False)


def test_coopmatrix_instructions_in_collective_region():
    source = fn("""
        %a = constant 1.0 : coopmatrix<f32x8x8,matrix_a>
        %b = constant 1.0 : coopmatrix<f32x8x8,matrix_b>
        %c = constant 1.0 : coopmatrix<f32x8x8,matrix_acc>
        %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<f32x8x8,matrix_acc>
        %zero = constant 0 : index
        cooperative_matrix_store %d, %C[%zero, %zero]""", ARGS)
    expect_errors(source, [("cooperative_matrix_mul_add is an SPMD instruction", "%d ="),
                           ("cooperative_matrix_store is an SPMD instruction", "cooperative_matrix_store")])


# ---------------------------------------------------------------- yield placement

def test_yield_at_function_level():
    source = fn("yield ()")
    expect_error(source, "yield can only appear as the last instruction of a for, if or "
                         "cooperative_matrix_apply region",
                 at="yield")


def test_yield_in_parallel_region():
    source = fn("""
        parallel {
          yield ()
        }""")
    expect_error(source, "yield can only appear as the last instruction of a for, if or "
                         "cooperative_matrix_apply region",
                 at="yield")


def test_yield_not_last():
    source = fn("""
        %zero = constant 0 : index
        for %k = %zero, %n {
          yield ()
          %x = constant 1 : i32
        }""", ARGS)
    expect_error(source, "yield must be the last instruction of its region", at="yield")


# ---------------------------------------------------------------- several errors, one run

def test_independent_errors_are_all_reported_in_source_order():
    source = fn("""
        %one = constant 1.0 : f64
        %bad = constant 300 : i8
        gemm.n.n %one, %A, %B, %one, %C
        %s = subgroup_add.reduce %one : f64
        %f = constant 1.0 : f32
        parallel {
          axpby.n %f, %A, %f, %C
        }
        %c = cmp.lt %one, %n : bool""", ARGS)
    found = expect_errors(source, [
        ("the constant 300 does not fit in i8 (-128..127)", "i8"),
        ("gemm: type of alpha (f64) does not promote to f32", "%one, %A, %B"),
        ("gemm: type of beta (f64) does not promote to the element type of C (f32)", "%one, %C"),
        ("subgroup_add.reduce is an SPMD instruction", "%s ="),
        ("axpby is a collective instruction", "axpby"),
        ("cmp.lt: second operand must have type f64 (the type of the first operand), got index", "%n : bool"),
    ])
    assert [(d.line, d.column) for d in found] == sorted((d.line, d.column) for d in found)


def test_gemm_shape_mismatch_notes_point_at_definitions():
    source = fn("""
        %one = constant 1.0 : f32
        %T = alloca : memref<f32x8x16,local>
        gemm.n.n %one, %A, %T, %one, %C""",
                "%A: memref<f32x8x8>, %B: memref<f32x8x8>,\n        %C: memref<f32x8x8>")
    d = expect_error(source, "gemm: columns of C (8) do not match columns of op(B) (16)", at="gemm")
    assert [n.message for n in d.notes] == [
        "'%A' is defined here with type memref<f32x8x8>",
        "'%T' is defined here with type memref<f32x16x8,local>".replace("16x8", "8x16"),
        "'%C' is defined here with type memref<f32x8x8>",
    ]
    assert [(n.span.line, n.span.column) for n in d.notes] == [
        locate(source, "%A"), locate(source, "%T"), locate(source, "%C")]
    text = str(d)
    assert "test.ir:5.3-" in text and "note: '%T' is defined here" in text


def test_diagnostic_renders_with_caret():
    source = fn("%x = constant 1 : f32")
    [d] = diagnostics(source)
    assert str(d).splitlines()[1:] == ["  %x = constant 1 : f32", "                    ^^^"]
