"""What the reference compiler accepts beyond the letter of the specs (docs/newest.md,
"Conformance with the reference's own tests"): the builtins it spelled between the two
versions, subview results with extra trailing modes, and gcd attributes longer than the
memref's order. Each program here is written from the spec's rules; the expected numbers
come from NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli
from tinyc.parser import parse
from tinyc.reference import ReferenceFault, run
from tinyc.std import Std

from newest_testlib import checked, error, fn, migrated, same_meaning

# ---------------------------------------------------------------- builtin.<name>.x


@pytest.mark.parametrize("interim, newest, type", [
    ("builtin.group_id.x", "group_id.x", "index"), ("builtin.group_id.z", "group_id.z", "index"),
    ("builtin.num_groups.y", "num_groups.y", "index"),
    ("builtin.num_subgroups.x", "num_subgroups.x", "i32"),
])
def test_prefixed_3d_builtins_are_the_newest_builtins(interim, newest, type):
    text = fn(f"%v = {interim} : {type}")
    program = checked(text)
    assert program.version.std is Std.NEWEST
    assert program.version.describe() == f"the newest language (inferred from '{interim}' at 2.8)"
    same_meaning(text, fn(f"%v = {newest} : {type}"))
    assert f"%v = {newest} : {type}" in migrated(text, Std.NEWEST)


def test_prefixed_spmd_builtins_stay_spmd():
    text = fn("%v = builtin.subgroup_id.y : i32")
    assert error(text).message == ("builtin.subgroup_id.y is an SPMD instruction and cannot appear "
                                   "in a collective region; place it inside a foreach or parallel "
                                   "region")
    checked(fn("""
    parallel {
      %v = builtin.subgroup_id.x : i32
      %w = builtin.subgroup_linear_id : i32
    }
    """))


def test_an_unknown_mode_of_a_prefixed_builtin_is_reported_at_the_mode():
    text = fn("%v = builtin.group_id.w : index")
    d = error(text)
    assert "'.w'" in d.message and (d.line, d.column) == (2, text.split("\n")[1].index(".w") + 1)


# ---------------------------------------------------------------- subview: extra modes

# The newest spec's rank reduction drops a mode given by an offset alone; the reference
# compiler also takes result modes beyond the kept ones (its own tests write
# `subview %a[%x,0] : memref<i16x8>`): they view the memory from the offset on with the
# shape and stride the type declares.
COPY_COLUMN = """
parallel {
  %i = subgroup_local_id : i32
  %j = cast %i : index
  %c8 = constant 8 : index
  %in = less_than %j, %c8 : bool
  if %in {
    %v = load %col[%j] : f32
    store %v, %b[%j]
  }
}
"""
COLUMN = fn("%col = subview %a[%x, 0] : memref<f32x8>\n" + COPY_COLUMN,
            "%a: memref<f32x8x8>, %b: memref<f32x8>, %x: index")


def test_extra_result_modes_check_in_the_newest_language():
    program = checked(COLUMN)
    assert program.version.std is Std.NEWEST


def test_extra_result_modes_are_an_error_in_the_seed_language():
    d = error(COLUMN, Std.SEED)
    assert d.message == "subview: result shape 8 does not match the expected shape ()"
    assert (d.line, d.column) == (2, COLUMN.split("\n")[1].index("memref") + 1)


@pytest.mark.parametrize("result", ["memref<f32x?>", "memref<f32x8,strided<?>>"])
def test_extra_result_modes_must_be_static(result):
    text = fn(f"%col = subview %a[%x, 0] : {result}", "%a: memref<f32x8x8>, %x: index")
    d = error(text, Std.NEWEST)
    assert d.message == (f"subview: the result has 1 mode(s) after the 0 the slices keep; their "
                         f"sizes and strides must be static and positive, got {result}")


def test_kept_modes_still_follow_the_rank_reduction_rule():
    text = fn("%v = subview %a[2:4, %x] : memref<f32x5x8>", "%a: memref<f32x16x8>, %x: index")
    assert "result shape 5x8" in error(text, Std.NEWEST).message


def test_extra_result_modes_printed_in_the_seed_language_are_its_error():
    seed = migrated(COLUMN, Std.SEED)
    assert "subview %a[%x, 0] : memref<f32x8>" in seed
    assert error(seed).message == "subview: result shape 8 does not match the expected shape ()"


@pytest.fixture(scope="module")
def column(device):
    return tinyc.compile(COLUMN)["k"]


@pytest.mark.parametrize("x", [0, 3, 7])
def test_extra_result_modes_view_the_memory_from_the_offset(column, x):
    a = np.asfortranarray(np.arange(64, dtype=np.float32).reshape(8, 8))
    want = a.ravel(order="F")[x: x + 8]
    b = np.zeros(8, np.float32)
    column(a, b, x, batch=1)
    np.testing.assert_array_equal(b, want)
    ref = np.zeros(8, np.float32)
    run(parse(COLUMN)["k"], [a, ref, np.int64(x)], 1)
    np.testing.assert_array_equal(ref, want)


# Columns %x and %x+1 of an 8x8 matrix as a 8x2 view: past the matrix for %x = 7.
TWO_COLUMNS = fn("""
%cols = subview %a[0, %x] : memref<f32x8x2>
parallel {
  %i = subgroup_local_id : i32
  %j = cast %i : index
  %c8 = constant 8 : index
  %c1 = constant 1 : index
  %in = less_than %j, %c8 : bool
  if %in {
    %v = load %cols[%j, %c1] : f32
    store %v, %b[%j]
  }
}
""", "%a: memref<f32x8x8>, %b: memref<f32x8>, %x: index")


def test_a_view_past_the_operand_is_undefined_in_the_reference_interpreter():
    a = np.zeros((8, 8), np.float32, order="F")
    run(parse(TWO_COLUMNS)["k"], [a, np.zeros(8, np.float32), np.int64(6)], 1)
    with pytest.raises(ReferenceFault, match="subview: the view reaches element 71 of an operand "
                                             "with 64"):
        run(parse(TWO_COLUMNS)["k"], [a, np.zeros(8, np.float32), np.int64(7)], 1)


@pytest.mark.parametrize("x, ok", [(6, True), (7, False)])
def test_a_view_past_the_operand_is_a_bounds_violation(device, tmp_path, x, ok):
    path = tmp_path / "cols.ir"
    path.write_text(TWO_COLUMNS)
    result = CliRunner().invoke(cli, ["run", str(path), "--check-bounds", "--check", "--repeat", "1",
                                      "--size", f"x={x}"])
    if ok:
        assert result.exit_code == 0 and "results match" in result.output, result.output
    else:
        assert result.exit_code == 1, result.output
        assert "subview out of bounds at" in result.output


# ---------------------------------------------------------------- gcd attributes


@pytest.mark.parametrize("name", ["shape_gcd", "stride_gcd"])
def test_gcd_entries_beyond_the_order_are_ignored_in_the_newest_language(name):
    text = fn("%v = add %x, %x : f32", f"%A: memref<f32x?x?> {{{name}=[1,8,8]}}, %x: f32")
    checked(text)
    seed = text.replace("add %x", "arith.add %x")
    assert error(seed).message == f"argument '%A': {name} has 3 entries but the memref has order 2"


def test_gcd_entries_within_the_order_are_still_checked():
    text = fn("%v = add %x, %x : f32", "%A: memref<f32x12x?> {shape_gcd=[8,2,2]}, %x: f32")
    assert error(text).message == "argument '%A': shape_gcd entry 8 does not divide the size 12 of mode 0"


# ---------------------------------------------------------------- before the seed

def test_function_and_parameter_attributes_of_the_reference_before_the_seed():
    old = ("func @k(%A: memref<f32x16> align(64), %x: f32) subgroup_size(16) "
           "work_group_size(32, 2) {\n}\n")
    new = ("func @k(%A: memref<f32x16> {alignment=64}, %x: f32) "
           "attributes {subgroup_size=16, work_group_size=[32, 2]} {\n}\n")
    same_meaning(old, new)
    program = checked(old)
    assert program.functions[0].attrs == {"subgroup_size": 16, "work_group_size": [32, 2]}
    assert program.functions[0].args[0].attrs == {"alignment": 64}


def test_the_old_attributes_are_checked_as_the_new_ones():
    d = error("func @k(%A: memref<f32x16> align(12)) {\n}\n")
    assert d.message == "argument '%A': alignment must be a positive power of two, got 12"
    d = error("func @k() subgroup_size(16) attributes {subgroup_size=8} {\n}\n")
    assert d.message == "attribute 'subgroup_size' is given twice"


def test_align_is_no_attribute_name():
    d = error("func @k(%A: memref<f32x16> {align=64}) {\n}\n")
    assert d.message == ("unknown attribute name 'align' (did you mean 'alignment'?); other names "
                         "must be quoted")


# ---------------------------------------------------------------- tinyc run

OFFSET_GROUP = fn("""
%gid = group_id.x : index
%m = load %g[%gid] : memref<f32x?>
%c0 = constant 0 : index
%v = load %m[%c0] : f32
%two = constant 2.0 : f32
%w = mul %v, %two : f32
parallel {
  %l = subgroup_local_id : i32
  %z = constant 0 : i32
  %first = equal %l, %z : bool
  if %first {
    store %w, %m[%c0]
    store %w, %out[%gid]
  }
}
""", "%g: group<memref<f32x?>x?, offset: 3>, %out: memref<f32x?>")


def test_tinyc_run_makes_the_members_of_a_group_with_a_static_offset(device, tmp_path):
    """The reference's calling-convention test has `group<memref<c64x?>x?, offset: 42>`."""
    path = tmp_path / "offset.ir"
    path.write_text(OFFSET_GROUP)
    result = CliRunner().invoke(cli, ["run", str(path), "--batch", "3", "--check", "--repeat", "1",
                                      "--size", "g=5"])
    assert result.exit_code == 0, result.output
    assert "arguments: %g: 3 x f32 5 at offset 3, %out: f32 3" in result.output
    assert "compared %g (24 elements, every work-group of 3)" in result.output
    assert "results match" in result.output


def test_extra_gcd_entries_and_result_modes_survive_the_passes():
    """The lowered IR is checked again after the passes (a regression: it was checked with
    the seed's rules)."""
    from tinyc.compiler import compile_to_spirv

    compile_to_spirv(fn("%v = add %x, %x : f32", "%A: memref<f32x?x?> {stride_gcd=[1,8,8]}, %x: f32"),
                     "gcd.ir", validate=True)
    compile_to_spirv(COLUMN, "column.ir", validate=True)


OUT_OF_BOUNDS = fn("""
parallel {
  %l = subgroup_local_id : i32
  %z = constant 0 : i32
  %first = equal %l, %z : bool
  if %first {
    %one = constant 1.0 : f32
    store %one, %A[%i]
  }
}
""", "%A: memref<f32x2>, %i: index")


def test_tinyc_run_check_reports_sizes_that_reach_outside_the_arrays(device, tmp_path):
    """Random sizes can make a kernel reach outside its arrays (the reference's gemm example
    assumes sizes that are multiples of its tiles): --check bounds-checks the first launch."""
    path = tmp_path / "oob.ir"
    path.write_text(OUT_OF_BOUNDS)
    result = CliRunner().invoke(cli, ["run", str(path), "--check", "--repeat", "1", "--size", "i=5"])
    assert result.exit_code == 1  # refused before anything runs (tinyc/runtime/launch_check.py)
    assert "argument 'A'" in result.output and "reaches entry 5 of mode 0 of %A" in result.output \
        and "which has 2 entries; no batch fits" in result.output
    result = CliRunner().invoke(cli, ["run", str(path), "--check", "--repeat", "2", "--size", "i=1"])
    assert result.exit_code == 0 and "results match" in result.output, result.output


LOCAL_COLUMN = fn("""
%L = alloca : memref<f32x8x8,local>
%one = constant 1.0 : f32
%zero = constant 0.0 : f32
axpby %one, %a, %zero, %L
%col = subview %L[%x, 0] : memref<f32x8,local>
""" + COPY_COLUMN, "%a: memref<f32x8x8>, %b: memref<f32x8>, %x: index")


def test_extra_result_modes_of_local_memory(device):
    kernel = tinyc.compile(LOCAL_COLUMN)["k"]
    a = np.asfortranarray(np.arange(64, dtype=np.float32).reshape(8, 8))
    b = np.zeros(8, np.float32)
    kernel(a, b, 5, batch=1)
    np.testing.assert_array_equal(b, a.ravel(order="F")[5:13])
