"""Function signatures: argument types, type well-formedness, parameter and function attributes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.verifier.conftest import expect_error, expect_ok, fn


SAMPLE = (Path(__file__).resolve().parents[2] / "samples" / "fused_kernel.ir").read_text()
"""The spec's fused-kernel sample, written as the grammar demands."""


def test_spec_sample_verifies():
    expect_ok(SAMPLE)


@pytest.mark.parametrize("args", [
    "%a: f32, %b: i8, %c: index, %d: c64",
    "%A: memref<f32x8x?> {alignment=64, shape_gcd=[4], stride_gcd=[1,8]}",
    "%G: group<memref<f64x?x4>x?, offset: ?> {alignment=8, shape_gcd=[2,4]}",
    "%A: memref<f32x4x4,strided<1,?>>, %B: memref<f32x4x4,strided<2,8>>",
    "%A: memref<f32x0x4>, %B: memref<f32>",
])
def test_accepted_arguments(args):
    expect_ok(fn("", args))


@pytest.mark.parametrize("attrs", [
    "{subgroup_size=16}", "{work_group_size=[32,2]}", "{subgroup_size=32, work_group_size=[64, 4]}",
    "{work_group_size=[12,1]}", "{subgroup_size=4, work_group_size=[4,2048]}",
])
def test_accepted_function_attributes(attrs):
    expect_ok(fn("", "", attrs))


@pytest.mark.parametrize("arg_type, message", [
    ("coopmatrix<f32x8x8,matrix_a>", "argument '%x' cannot have type coopmatrix<f32x8x8,matrix_a>"),
    ("void", "argument '%x' cannot have type void"),
    ("memref<f32x4,local>", "argument '%x' cannot have type memref<f32x4,local>: arguments live in "
                            "the global address space"),
    ("group<memref<f32x4,local>x?>", "argument '%x' cannot have type group<memref<f32x4,local>x?>: "
                                     "arguments live in the global address space"),
])
def test_rejected_argument_types(arg_type, message):
    source = fn("", f"%x: {arg_type}")
    expect_error(source, message, at=arg_type)


@pytest.mark.parametrize("arg_type, problem", [
    ("memref<f32x4x4,strided<1,2>>", "the stride 2 of mode 1 is smaller than stride times size of "
                                     "mode 0 (1*4 = 4); the layout must be column-major"),
    ("memref<f32x4x4,strided<0,4>>", "the stride 0 of mode 0 must be at least 1"),
    ("memref<f32x4x4x2,strided<1,5,20>>", None),
    ("memref<f32x4x3x2,strided<2,8,20>>", "the stride 20 of mode 2 is smaller than stride times "
                                          "size of mode 1 (8*3 = 24); the layout must be column-major"),
    ("group<memref<f32x8x8,strided<1,4>>x?>", "the stride 4 of mode 1 is smaller than stride times "
                                              "size of mode 0 (1*8 = 8); the layout must be column-major"),
])
def test_memref_stride_rules(arg_type, problem):
    source = fn("", f"%x: {arg_type}")
    if problem is None:
        expect_ok(source)
    else:
        expect_error(source, f"invalid type {arg_type}: {problem}", at=arg_type)


def test_dynamic_strides_are_compatible():
    expect_ok(fn("", "%x: memref<f32x4x?x2,strided<1,?,3>>, %y: memref<f32x?x4,strided<2,3>>"))


def test_coopmatrix_shape_must_be_positive():
    source = fn("""
        parallel {
          %c = constant 1.0 : coopmatrix<f32x0x8,matrix_acc>
        }""")
    expect_error(source, "invalid type coopmatrix<f32x0x8,matrix_acc>: the shape 0x8 must have "
                         "positive rows and columns", at="coopmatrix<f32x0")


@pytest.mark.parametrize("arg, message", [
    ("%x: f32 {alignment=4}", "argument '%x': only memref and group parameters take attributes, not f32"),
    ('%x: memref<f32x8> {"alignmnt"=4}', "argument '%x': unknown attribute 'alignmnt' on a parameter "
                                         "(did you mean 'alignment'?); allowed: alignment, shape_gcd, "
                                         "stride_gcd"),
    ("%x: memref<f32x8> {alignment=12}", "argument '%x': alignment must be a positive power of two, got 12"),
    ("%x: memref<f32x8> {alignment=0}", "argument '%x': alignment must be a positive power of two, got 0"),
    ("%x: memref<f32x8> {alignment=2}", "argument '%x': alignment 2 is not a multiple of the size of "
                                        "the element type f32 (4 bytes)"),
    ("%x: group<memref<c64x8>x?> {alignment=8}", "argument '%x': alignment 8 is not a multiple of the "
                                                 "size of the element type c64 (16 bytes)"),
    ("%x: memref<f32x8> {alignment=true}", "argument '%x': alignment must be an integer, got true"),
    ("%x: memref<f32x8x8> {shape_gcd=[4,4,4]}", "argument '%x': shape_gcd has 3 entries but the "
                                                "memref has order 2"),
    ("%x: memref<f32x?> {shape_gcd=[0]}", "argument '%x': shape_gcd entry 0 for mode 0 must be positive"),
    ("%x: memref<f32x8> {shape_gcd=[3]}", "argument '%x': shape_gcd entry 3 does not divide the size "
                                          "8 of mode 0"),
    ("%x: memref<f32x8x4> {stride_gcd=[1,3]}", "argument '%x': stride_gcd entry 3 does not divide "
                                               "the stride 8 of mode 1"),
    ("%x: memref<f32x8> {shape_gcd=4}", "argument '%x': shape_gcd must be an array of integers, got 4"),
    ("%x: memref<f32x8> {stride_gcd=[true]}", "argument '%x': stride_gcd must be an array of "
                                              "integers, got [true]"),
])
def test_rejected_parameter_attributes(arg, message):
    source = fn("", arg)
    type_text = arg.split(": ", 1)[1].split(" {")[0]
    expect_error(source, message, at=type_text)


@pytest.mark.parametrize("attrs, message", [
    ("{subgroup_size=12}", "subgroup_size 12 is not supported by any target device; use one of "
                           "4, 8, 16, 32, 64"),
    ("{subgroup_size=128}", "subgroup_size 128 is not supported by any target device; use one of "
                            "4, 8, 16, 32, 64"),
    ('{subgroup_size="16"}', 'subgroup_size must be an integer, got "16"'),
    ("{work_group_size=[30,1]}", "the first work_group_size mode (30) must be a multiple of a "
                                 "supported subgroup size (4, 8, 16, 32, 64)"),
    ("{subgroup_size=32, work_group_size=[16,1]}", "the first work_group_size mode (16) must be a "
                                                   "multiple of the subgroup_size (32)"),
    ("{work_group_size=[64,256]}", "work_group_size 64x256 has 16384 work-items; the maximum is 8192"),
    ("{work_group_size=[16]}", "work_group_size must be an array of 2 integers, got [16]"),
    ("{work_group_size=[16,1,1]}", "work_group_size must be an array of 2 integers, got [16, 1, 1]"),
    ("{work_group_size=[16,0]}", "work_group_size entries must be positive, got [16, 0]"),
    ("{unroll=true}", "unknown attribute 'unroll' on a function; allowed: subgroup_size, work_group_size"),
    ('{"subgroupsize"=16}', "unknown attribute 'subgroupsize' on a function (did you mean "
                            "'subgroup_size'?); allowed: subgroup_size, work_group_size"),
])
def test_rejected_function_attributes(attrs, message):
    source = fn("", "", attrs)
    expect_error(source, f"function '@k': {message}", at="func")


def test_every_argument_problem_is_reported():
    source = fn("", "%a: void, %b: memref<f32x8> {alignment=3}, %c: coopmatrix<f32x8x8,matrix_a>")
    from tests.verifier.conftest import expect_errors
    expect_errors(source, [("argument '%a' cannot have type void", "void"),
                           ("argument '%b': alignment must be a positive power of two", "memref"),
                           ("argument '%c' cannot have type coopmatrix", "coopmatrix")])
