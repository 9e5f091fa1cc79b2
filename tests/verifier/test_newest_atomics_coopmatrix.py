"""Verifier rules of the newest language's atomics and coopmatrix instructions (spec:
spec/newest/tensor-ir.rst): each accepted form compiles (spirv-val), each violation is one
error with its message and location."""

from __future__ import annotations

import pytest

from conftest import expect_error, expect_ok, fn, locate

ARGS = ("%A: memref<f32x16x8>, %I: memref<i32x16>, %C: memref<c32x4>, %G: group<memref<f32x4>x?>, "
        "%B: memref<f32x8x16>, %V: memref<f32x4x4x4>")
PRELUDE = """\
%z = constant 0 : index
%f = constant 1.0 : f32
%i = constant 1 : i32
%c = constant [1.0, 2.0] : c32
parallel {
  %m = constant 1.0 : coopmatrix<f32x16x8,matrix_acc>
  %mb = constant 1.0 : coopmatrix<f32x8x16,matrix_b>
  %mc = constant [1.0, 0.0] : coopmatrix<c32x16x4,matrix_acc>
"""


def src(line: str, attrs: str = "{subgroup_size=16}") -> str:
    return fn(PRELUDE + "  " + line + "\n}", ARGS, attrs)


def ok(line: str, attrs: str = "{subgroup_size=16}") -> None:
    expect_ok(src(line, attrs))


def rejected(line: str, message: str, at: str, attrs: str = "{subgroup_size=16}") -> None:
    expect_error(src(line, attrs), message, at=at, after=line.splitlines()[0])


# ---------------------------------------------------------------- scalar atomics

@pytest.mark.parametrize("line", [
    "%r = atomic_load %A[%z, %z] : f32",
    "%r = atomic_load.device.acquire %I[%z] : i32",
    "atomic_store %f, %A[%z, %z]",
    "atomic_store.subgroup.release %c, %C[%z]",
    "%r = atomic_add %c, %C[%z] : c32",
    "%r = atomic_max.cross_device.acquire_release %i, %I[%z] : i32",
    "%r = atomic_min.work_group.sequentially_consistent %f, %A[%z, %z] : f32",
    "%r = atomic_add.relaxed %f, %A[%z, %z] : f32",
])
def test_atomics_accepted(line):
    ok(line)


def test_atomics_are_mixed_instructions():
    expect_ok(fn("%z = constant 0 : index\n%i = constant 1 : i32\n%r = atomic_add %i, %I[%z] : i32\n"
                 "atomic_store %r, %I[%z]", ARGS))


@pytest.mark.parametrize("line, message, at", [
    ("%r = atomic_load %A[%z] : f32", "atomic_load: memref<f32x16x8> needs 2 indices, got 1", "%r"),
    ("%r = atomic_load %A[%z, %z] : f64",
     "atomic_load: result type must be f32 (the element type of memref<f32x16x8>), got f64", "f64"),
    ("%r = atomic_load %G[%z] : f32", "atomic_load: the tensor must be a memref, got group<memref<f32x4>x?>",
     "%G"),
    ("%r = atomic_load %A[%i, %z] : f32", "atomic_load: index 0 must have type index, got i32", "%i,"),
    ("atomic_store %i, %A[%z, %z]",
     "atomic_store: the value must have type f32 (the element type of memref<f32x16x8>), got i32", "%i"),
    ("atomic_store %f, %f[%z]", "atomic_store: the tensor must be a memref, got f32", "%f["),
    ("%r = atomic_add %f, %I[%z] : i32",
     "atomic_add: the value must have type i32 (the element type of memref<i32x16>), got f32", "%f"),
    ("%r = atomic_add %i, %I[%z] : i64",
     "atomic_add: result type must be i32 (the element type of memref<i32x16>), got i64", "i64"),
    ("%r = atomic_max %c, %C[%z] : c32",
     "atomic_max: complex elements (c32) have no order; only atomic_add takes complex types", "%C"),
    ("%r = atomic_min %c, %C[%z] : c32",
     "atomic_min: complex elements (c32) have no order; only atomic_add takes complex types", "%C"),
])
def test_atomics_rejected(line, message, at):
    rejected(line, message, at)


def test_an_atomic_has_one_scope_and_one_semantics():
    from tinyc.compiler import check_source
    from tinyc.diagnostics import CompilationError

    with pytest.raises(CompilationError) as info:
        check_source(src("%r = atomic_add.device.subgroup %i, %I[%z] : i32"))
    assert "unexpected '.subgroup'" in info.value.diagnostics[0].message


# ---------------------------------------------------------------- coopmatrix: per component

@pytest.mark.parametrize("line", [
    "%r = cooperative_matrix_extract %m[7] : f32",
    "%r = cooperative_matrix_extract %mb[127] : f32",     # every work-item holds all of matrix_b
    "%r = cooperative_matrix_insert %f, %m[0] : coopmatrix<f32x16x8,matrix_acc>",
    "%r = cooperative_matrix_apply (%a, %b, %v) = %m -> coopmatrix<f32x16x8,matrix_acc> {\n"
    "    %s = cast %a : f32\n    %w = arith.add %s, %v : f32\n    yield (%w)\n  }",
    "%r = cooperative_matrix_reduce_add.row %m : coopmatrix<f32x16x1,matrix_acc>",
    "%r = cooperative_matrix_reduce_max.column %m : coopmatrix<f32x1x8,matrix_acc>",
    "%r = cooperative_matrix_reduce_add.column %mc : coopmatrix<c32x1x4,matrix_acc>",
    "cooperative_matrix_prefetch 0, %A[%z, %z], 16, 8",
])
def test_coopmatrix_elements_accepted(line):
    ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%r = cooperative_matrix_extract %m[8] : f32",
     "cooperative_matrix_extract: index 8 is outside the work-item vector of "
     "coopmatrix<f32x16x8,matrix_acc>, which has 8 components at subgroup size 16", "%r"),
    ("%r = cooperative_matrix_extract %m[0] : f64",
     "cooperative_matrix_extract: result type must be f32 (the component type of "
     "coopmatrix<f32x16x8,matrix_acc>), got f64", "f64"),
    ("%r = cooperative_matrix_extract %f[0] : f32",
     "cooperative_matrix_extract: the matrix must be a coopmatrix, got f32", "%f"),
    ("%r = cooperative_matrix_insert %i, %m[0] : coopmatrix<f32x16x8,matrix_acc>",
     "cooperative_matrix_insert: the value must have type f32 (the component type of "
     "coopmatrix<f32x16x8,matrix_acc>), got i32", "%i"),
    ("%r = cooperative_matrix_insert %f, %m[0] : coopmatrix<f32x16x8,matrix_a>",
     "cooperative_matrix_insert: result type must be coopmatrix<f32x16x8,matrix_acc> (the type of the "
     "matrix), got coopmatrix<f32x16x8,matrix_a>", "coopmatrix<f32x16x8,matrix_a>"),
    ("%r = cooperative_matrix_apply (%a, %b, %v) = %m -> coopmatrix<f32x16x8,matrix_acc> {\n"
     "    yield (%a)\n  }",
     "yield: value 0 must have type f32 (the type of the new component 0), got i32", "%a)"),
    ("%r = cooperative_matrix_apply (%a, %b, %v) = %m -> coopmatrix<f32x16x8,matrix_acc> {\n"
     "    %s = cast %a : f32\n  }",
     "cooperative_matrix_apply: the region must end with a yield of the new component (f32)", "%r"),
    ("%r = cooperative_matrix_apply (%a, %b, %v) = %mb -> coopmatrix<f32x16x8,matrix_acc> {\n"
     "    yield (%v)\n  }",
     "cooperative_matrix_apply: the matrix must have the result type coopmatrix<f32x16x8,matrix_acc>, "
     "got coopmatrix<f32x8x16,matrix_b>", "%mb"),
    ("%r = cooperative_matrix_reduce_add.row %m : coopmatrix<f32x1x8,matrix_acc>",
     "cooperative_matrix_reduce_add: a row reduction of a 16x8 matrix is 16x1, got 1x8", "coopmatrix<f32x1"),
    ("%r = cooperative_matrix_reduce_add.column %m : coopmatrix<f32x1x8,matrix_a>",
     "cooperative_matrix_reduce_add: result must have the component type and use of the matrix (f32, "
     "matrix_acc), got coopmatrix<f32x1x8,matrix_a>", "coopmatrix<f32x1"),
    ("%r = cooperative_matrix_reduce_max.row %mc : coopmatrix<c32x16x1,matrix_acc>",
     "cooperative_matrix_reduce_max: complex components (c32) have no order; only "
     "cooperative_matrix_reduce_add takes complex types", "%mc"),
    ("cooperative_matrix_prefetch 0, %A[%z, %z], 0, 8",
     "cooperative_matrix_prefetch: the block 0x8 must have positive rows and columns",
     "cooperative_matrix_prefetch"),
    ("cooperative_matrix_prefetch 0, %V[%z, %z], 4, 4",
     "cooperative_matrix_prefetch: M must have order 2, got order 3 (memref<f32x4x4x4>)", "%V"),
    ("cooperative_matrix_prefetch 0, %A[%i, %z], 4, 4",
     "cooperative_matrix_prefetch: row position must have type index, got i32", "%i"),
])
def test_coopmatrix_elements_rejected(line, message, at):
    rejected(line, message, at)


def test_a_matrix_b_reduction_has_the_same_row_rule():
    line = "%r = cooperative_matrix_reduce_min.row %mb : coopmatrix<f32x8x1,matrix_b>"
    ok(line, "{subgroup_size=8}")
    rejected(line, "cooperative_matrix_reduce_min: the rows of the matrix (8) must be a multiple of the "
                   "subgroup size (16); a rule of the newest language (inferred from "
                   "'cooperative_matrix_reduce_min' at 10.10), --std seed lifts it", "%r")


def test_a_negative_index_or_level_is_an_error_where_it_is_written():
    from tinyc.compiler import check_source
    from tinyc.diagnostics import CompilationError

    for line, needle, what in (("%r = cooperative_matrix_extract %m[-1] : f32", "-1", "the component index"),
                               ("cooperative_matrix_prefetch -1, %A[%z, %z], 4, 4", "-1",
                                "the cache level")):
        source = src(line)
        with pytest.raises(CompilationError) as info:
            check_source(source)
        (d,) = info.value.diagnostics
        assert d.message.startswith(what) or what in d.message, d.message
        at = source.index(line) + line.index(needle)
        assert d.column == at - source.rfind("\n", 0, at)


def test_the_index_range_follows_the_subgroup_size():
    """matrix_acc 16x8: each work-item holds 16/S rows of 8 components."""
    line = "%r = cooperative_matrix_extract %m[31] : f32"
    ok(line, "{subgroup_size=4}")
    rejected(line, "cooperative_matrix_extract: index 31 is outside the work-item vector of "
                   "coopmatrix<f32x16x8,matrix_acc>, which has 16 components at subgroup size 8",
             "%r", "{subgroup_size=8}")


def test_without_a_subgroup_size_the_index_is_checked_once_the_compiler_chose_it():
    from tinyc.compiler import check_source, compile_to_spirv
    from tinyc.diagnostics import CompilationError

    source = src("%r = cooperative_matrix_extract %m[31] : f32", attrs="")
    check_source(source)  # S = 4 would allow it
    with pytest.raises(CompilationError) as info:
        compile_to_spirv(source, "k.ir")  # the compiler picks 16
    assert info.value.diagnostics[0].message == (
        "cooperative_matrix_extract: index 31 is outside the work-item vector of "
        "coopmatrix<f32x16x8,matrix_acc>, which has 8 components at subgroup size 16")
    with pytest.raises(CompilationError):
        check_source(src("%r = cooperative_matrix_extract %m[32] : f32", attrs=""))  # no S allows it


# ---------------------------------------------------------------- coopmatrix: memory

@pytest.mark.parametrize("line", [
    "%r = cooperative_matrix_load %A[%z, %z] : coopmatrix<f32x16x8,matrix_acc>",
    "cooperative_matrix_store.t.rows_checked %m, %B[%z, %z]",
    "cooperative_matrix_store.t %m, %B[%z, %z]",
    "cooperative_matrix_store.rows_checked.atomic_add %m, %A[%z, %z]",  # the seed's flags
    "%r = cooperative_matrix_atomic_load.t.both_checked.device.acquire %B[%z, %z] : "
    "coopmatrix<f32x16x8,matrix_acc>",
    "cooperative_matrix_atomic_store.cols_checked.subgroup %m, %A[%z, %z]",
    "%r = cooperative_matrix_atomic_add %m, %A[%z, %z] : coopmatrix<f32x16x8,matrix_acc>",
    "%r = cooperative_matrix_atomic_max.t.sequentially_consistent %m, %B[%z, %z] : "
    "coopmatrix<f32x16x8,matrix_acc>",
    "%r = cooperative_matrix_atomic_min %mb, %B[%z, %z] : coopmatrix<f32x8x16,matrix_b>",
])
def test_coopmatrix_memory_accepted(line):
    ok(line)


@pytest.mark.parametrize("line, message, at", [
    ("%r = cooperative_matrix_atomic_add %m, %I[%z, %z] : coopmatrix<f32x16x8,matrix_acc>",
     "cooperative_matrix_atomic_add: M must have order 2, got order 1 (memref<i32x16>)", "%I"),
    ("%r = cooperative_matrix_atomic_add %m, %A[%z, %z] : coopmatrix<f32x16x8,matrix_a>",
     "cooperative_matrix_atomic_add: result type must be coopmatrix<f32x16x8,matrix_acc> (the type of "
     "A), got coopmatrix<f32x16x8,matrix_a>", "coopmatrix<f32x16x8,matrix_a>"),
    ("%r = cooperative_matrix_atomic_min %f, %A[%z, %z] : coopmatrix<f32x16x8,matrix_acc>",
     "cooperative_matrix_atomic_min: A must be a coopmatrix, got f32", "%f"),
    ("cooperative_matrix_atomic_store %mb, %I[%z, %z]",
     "cooperative_matrix_atomic_store: M must have order 2, got order 1 (memref<i32x16>)", "%I"),
    ("%r = cooperative_matrix_atomic_load %I[%z, %z] : coopmatrix<f32x16x8,matrix_acc>",
     "cooperative_matrix_atomic_load: M must have order 2, got order 1 (memref<i32x16>)", "%I"),
])
def test_coopmatrix_memory_rejected(line, message, at):
    rejected(line, message, at)


def test_complex_coopmatrix_atomic_max_is_rejected():
    source = fn("parallel {\n  %z = constant 0 : index\n"
                "  %mc = constant [1.0, 0.0] : coopmatrix<c32x16x4,matrix_acc>\n"
                "  %r = cooperative_matrix_atomic_max %mc, %C[%z, %z] : coopmatrix<c32x16x4,matrix_acc>\n}",
                "%C: memref<c32x16x4>")
    expect_error(source, "cooperative_matrix_atomic_max: complex components (c32) have no order; only "
                         "cooperative_matrix_atomic_add takes complex types", at="%mc,", after="%r")


@pytest.mark.parametrize("line", [
    "%r = cooperative_matrix_extract %m[0] : f32",
    "%r = cooperative_matrix_reduce_add.row %m : coopmatrix<f32x16x1,matrix_acc>",
    "cooperative_matrix_prefetch 0, %A[%z, %z], 16, 8",
    "%r = cooperative_matrix_atomic_add %m, %A[%z, %z] : coopmatrix<f32x16x8,matrix_acc>",
])
def test_coopmatrix_instructions_are_spmd(line):
    source = fn("%z = constant 0 : index\n%f = constant 1.0 : f32\n"
                "%m = constant 1.0 : coopmatrix<f32x16x8,matrix_acc>\n" + line, ARGS)
    title = (line.split("=")[-1] if "=" in line else line).split()[0].split(".")[0]
    d = expect_error(source, f"{title} is an SPMD instruction and cannot appear in a collective region",
                     at=line.split()[0], exact=False, after=line)
    assert d.line == 5


# ---------------------------------------------------------------- newest: rows and subgroup size

def _newest_diagnostics(source: str, std: str = "newest") -> list:
    """The errors of the source checked as the newest language (--std newest)."""
    from tinyc.compiler import check_source
    from tinyc.diagnostics import CompilationError

    try:
        check_source(source, "k.ir", std=std)
    except CompilationError as err:
        return err.diagnostics
    return []


MUL_ADD = """\
parallel {
  %a = constant 1.0 : coopmatrix<f32xRx4,matrix_a>
  %b = constant 1.0 : coopmatrix<f32x4x8,matrix_b>
  %c = constant 1.0 : coopmatrix<f32xRx8,matrix_acc>
  %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<f32xRx8,matrix_acc>
  %r = cooperative_matrix_reduce_add.column %c : coopmatrix<f32x1x8,matrix_acc>
}"""


def test_newest_rows_of_mul_add_and_reduce_are_a_multiple_of_the_subgroup_size():
    source = fn(MUL_ADD.replace("R", "8"), attrs="{subgroup_size=16}")
    seed = "; std: seed\n" + source
    assert _newest_diagnostics(seed, std=None) == []  # the seed has no such rule
    found = _newest_diagnostics(source)
    rule = "; a rule of the newest language (--std newest), --std seed lifts it"
    assert [d.message for d in found] == [
        f"cooperative_matrix_mul_add: the rows of A (8) must be a multiple of the subgroup size (16){rule}",
        "cooperative_matrix_reduce_add: the rows of the matrix (8) must be a multiple of the subgroup "
        f"size (16){rule}",
    ]
    assert [(d.line, d.column) for d in found] == [locate(source, "%d ="), locate(source, "%r =")]
    assert [d.message for d in _newest_diagnostics(seed)] == [d.message for d in found]  # --std wins
    assert _newest_diagnostics(fn(MUL_ADD.replace("R", "32"), attrs="{subgroup_size=16}")) == []


def test_newest_rows_without_a_subgroup_size_need_some_size_that_divides_them():
    assert _newest_diagnostics(fn(MUL_ADD.replace("R", "8"))) == []  # the compiler may choose 8 or 4
    found = _newest_diagnostics(fn(MUL_ADD.replace("R", "6")))
    assert found[0].message.startswith(
        "cooperative_matrix_mul_add: the rows of A (6) must be a multiple of the subgroup size, and no "
        "subgroup size (4, 8, 16, 32 or 64) divides it")
