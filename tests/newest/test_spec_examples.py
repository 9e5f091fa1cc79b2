"""Every example of the newest reference document (spec/newest/tensor-ir.rst and
calling_convention.rst) as a test; the preprocessor's examples are in
test_preprocessor.py, foreach_tile's in test_foreach_tile.py.

The view examples are written `<instruction> ; %0: <type>`: each becomes a
function taking %0 of that type and %1, %2 of type index. Examples that
break the document's own grammar (typos, literals where values go) must be
rejected with a message that shows the grammar's form.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.compiler import compile_to_spirv
from tinyc.parser import parse
from tinyc.reference import run
from tinyc.runtime.arguments import abi_arity

from newest_testlib import checked, error, errors


def view_example(example: str) -> str:
    instruction, operand_type = (part.strip() for part in example.split("; %0:"))
    return (f"func @example(%0: {operand_type}, %1: index, %2: index) {{\n"
            f"  %r = {instruction}\n}}\n")


VALID_VIEWS = [
    # expand: shape
    "expand %0[1 -> 2x8]      : memref<f32x32x2x8x8>     ; %0: memref<f32x32x16x8>",
    "expand %0[1 -> 2x2x2x2]  : memref<f32x32x2x2x2x2x8> ; %0: memref<f32x32x16x8>",
    # expand: identifiers
    "expand %0[1 -> %1 x 2]      : memref<f32x32x?x2>   ; %0: memref<f32x32x?>",
    "expand %0[1 -> 2 x %1]      : memref<f32x32x2x?>   ; %0: memref<f32x32x?>",
    "expand %0[1 -> %1 x 2]      : memref<f32x32x?x2>   ; %0: memref<f32x32x16>",
    "expand %0[1 -> %1 x 2]      : memref<f32x32x?x2>   ; %0: memref<f32x32x?>",
    "expand %0[1 -> %1 x %2 x 2] : memref<f32x32x?x?x2> ; %0: memref<f32x32x16>",
    "expand %0[1 -> %2 x 2 x %1] : memref<f32x32x?x2x?> ; %0: memref<f32x32x16>",
    "expand %0[1 -> %1 x %2]     : memref<f32x32x?x?>   ; %0: memref<f32x32x?>",
    "expand %0[1 -> %1 x %2]     : memref<f32x32x?x?>   ; %0: memref<f32x32x16>",
    # expand: stride
    "expand %0[0->4 x 8]  : memref<f32x4x8x7,strided<2,8,64>> ; %0: memref<f32x32x7,strided<2,64>>",
    "expand %0[0->4 x 8]  : memref<f32x4x8x7,strided<2,?,?>>  ; %0: memref<f32x32x7,strided<2,64>>",
    "expand %0[0->%1 x 4] : memref<f32x?x4x7,strided<2,?,?>>  ; %0: memref<f32x?x7,strided<2,?>>",
    "expand %0[0->4 x %1] : memref<f32x4x?x7,strided<2,8,?>>  ; %0: memref<f32x?x7,strided<2,?>>",
    "expand %0[0->4 x %1] : memref<f32x4x?x7,strided<2,?,?>>  ; %0: memref<f32x?x7,strided<2,?>>",
    # fuse: shape and stride
    "fuse %0[1,3] : memref<f32x32x512x42>               ; %0: memref<f32x32x16x8x4x42>",
    "fuse %0[1,2] : memref<f32x32x32x2,strided<1,48,1536>> ; %0: memref<f32x32x16x2x2,strided<1,48,768,1536>>",
    "fuse %0[1,2] : memref<f32x32x32x2,strided<1,?,?>>     ; %0: memref<f32x32x16x2x2,strided<1,48,768,1536>>",
    "fuse %0[0,1] : memref<f32x?x32,strided<1,?>>          ; %0: memref<f32x8x?x32,strided<1,?,?>>",
    # load
    "load %0[] : f32 ; %0: memref<f32>",
    "load %0[%1] : memref<f32x42> ; %0: group<memref<f32x42>x?>",
    "load %0[%1] : memref<f32x42> ; %0: group<memref<f32x42>x?, offset: ?>",
    # subview: invariant stride, rank reduction, output-mode size
    "subview %0[4:8,8:4]  : memref<f32x8x4,strided<1,32>> ; %0: memref<f32x32x16>",
    "subview %0[4:8,8:4]  : memref<f32x8x4,strided<1,?>>  ; %0: memref<f32x32x16>",
    "subview %0[2:4, %1]   : memref<f32x4>                 ; %0: memref<f32x16x8>",
    "subview %0[2:4, %1:0] : memref<f32x4>                 ; %0: memref<f32x16x8>",
    "subview %0[2:4, %1:1] : memref<f64x4x1,strided<1,16>> ; %0: memref<f64x16x8>",
    "subview %0[%1:4]            : memref<f32x4>                      ; %0: memref<f32x16>",
    "subview %0[%2:%2]           : memref<f32x?>                      ; %0: memref<f32x16>",
    # the document drops the closing '>' of these two (see the typo test below)
    "subview %0[2:4, %2:%2, 6:7] : memref<f32x4x?x7,strided<1,16,672>> ; %0: memref<f32x16x42x13>",
    "subview %0[2:4, %2:%2, 6:7] : memref<f32x4x?x7,strided<1,?,?>>    ; %0: memref<f32x16x42x13,strided<1,?,?>>",
]


@pytest.mark.parametrize("example", VALID_VIEWS)
def test_view_examples_check(example):
    checked(view_example(example))


@pytest.mark.parametrize("example, message", [
    # the result has order 1 but two strides
    ("fuse %0[0,1] : memref<f32x128,strided<1,?>> ; %0: memref<f32x8x16,strided<1,?>>",
     "strided layout has 2 entries but the memref has order 1"),
    # stride 16 after a mode of 32 elements of stride 1 is not column-major
    ("fuse %0[1,3] : memref<f32x32x?x42,strided<1,32,?>> ; "
     "%0: memref<f32x32x16x?x4x42,strided<1,16,?,?,?>>",
     "invalid type memref<f32x32x16x?x4x42,strided<1,16,?,?,?>>: the stride 16 of mode 1 is smaller "
     "than stride times size of mode 0 (1*32 = 32); the layout must be column-major"),
])
def test_the_fuse_examples_that_break_the_documents_own_rules(example, message):
    assert errors(view_example(example))[0].message == message


def test_the_illegal_fuse_example_is_rejected():
    """fuse: 'Illegal, modes cannot be fused' (S_0 s_0 = 8 != 10)."""
    d = error(view_example("fuse %0[0,1] : memref<f32x128> ; %0: memref<f32x8x16,strided<1,10>>"))
    assert d.message.startswith("fuse: ")
    assert "10" in d.message and d.line == 2


@pytest.mark.parametrize("example", [
    "subview %0[2:4, %2:%2, 6:7] : memref<f32x4x?x7,strided<1,16,672> ; %0: memref<f32x16x42x13>",
    "subview %0[2:4, %2:%2, 6:7] : memref<f32x4x?x7,strided<1,?,?>    ; %0: memref<f32x16x42x13,strided<1,?,?>>",
])
def test_the_subview_examples_typo_is_a_syntax_error(example):
    d = errors(view_example(example))[0]
    assert d.message == "unexpected '}', expected ','" or "expected" in d.message


def test_the_load_example_with_a_literal_index_shows_the_grammars_form():
    """`load %0[5, %1]`: indices are values in the grammar."""
    d = errors(view_example("load %0[5, %1] : f32 ; %0: memref<f32x10x?>"))[0]
    assert d.message == "unexpected '5', expected a value ('%name') or ']'"
    assert d.hint == "operands are values: define the number first ('%c5 = constant 5 : i32') and " \
                     "use '%c5'"


def test_the_if_example_shows_the_grammars_form():
    """`%1 = cmp.lt %0, 16 : i32`: a literal operand and an i32 result in the document."""
    text = """func @k(%0: i32) {
       %1 = cmp.lt %0, 16 : i32
       %x = if %1 -> (i32) {
           yield (%0)
       } else {
           %c16 = constant 16 : i32
           yield (%c16)
       }
}
"""
    d = errors(text)[0]
    assert d.message == "unexpected '16', expected a value ('%name')"
    assert d.hint.startswith("operands are values")
    fixed = text.replace("%1 = cmp.lt %0, 16 : i32",
                         "%c16a = constant 16 : i32\n       %1 = less_than %0, %c16a : bool")
    checked(fixed)


def test_the_for_example_computes_fibonacci_numbers(device):
    """for: '%fn_1 contains the fourth Fibonacci number and %fn the fifth'."""
    text = """
func @fibonacci(%out: memref<i64x2>) {
    %from = constant 2 : i32
    %to = constant 6 : i32
    %f0 = constant 0 : i64
    %f1 = constant 1 : i64
    %fn_1, %fn = for %n=%from,%to init(%fn_2=%f0,%fn_1=%f1) -> (i64,i64) {
        %fn = add %fn_2, %fn_1 : i64
        yield (%fn_1, %fn)
    }
    parallel {
        %lane = subgroup_local_id : i32
        %zero = constant 0 : i32
        %first = equal %lane, %zero : bool
        if %first {
            %c0 = constant 0 : index
            %c1 = constant 1 : index
            store %fn_1, %out[%c0]
            store %fn, %out[%c1]
        }
    }
}
"""
    program = checked(text)
    loop = program.functions[0].body.instructions[4]
    assert str(loop.loop_type) == "i32"  # the loop type follows the bounds
    fib = [0, 1, 1, 2, 3, 5, 8]
    for where in ("device", "reference"):
        out = np.zeros(2, np.int64)
        if where == "device":
            tinyc.compile(text)["fibonacci"](out, batch=1)
        else:
            run(parse(text)["fibonacci"], [out], 1)
        assert out.tolist() == [fib[4], fib[5]] == [3, 5]


@pytest.mark.parametrize("signature, arity", [
    # calling_convention.rst: the OpenCL C signatures, one kernel argument each
    ("%a: i16", 1),
    ("%a: memref<f32x5x10>", 1),
    ("%a: memref<f64x5x?,strided<1,5>>", 2),
    ("%a: memref<i64x5x?x6,strided<1,7,?>>", 3),
    ("%a: memref<i64x5x?x6>", 3),
    ("%a: group<memref<i16x5x6>x42>", 1),
    ("%a: group<memref<i32x5x?x6>x?>", 4),
    ("%a: group<memref<f32x?>x?, offset: ?>", 4),
    ("%a: group<memref<f32x42>x42, offset: ?>", 2),
    ("%a: bool", 1),
])
def test_calling_convention_examples(signature, arity):
    result = compile_to_spirv(f"func @example({signature}) {{}}")
    (param,) = result.kernels["example"].params
    assert abi_arity(param) == arity


def test_the_math_table_names_twelve_functions():
    from tinyc.ir.instructions import MathUnaryOp

    assert sorted(op.value for op in MathUnaryOp) == sorted(
        ["cos", "sin", "exp", "exp2", "log", "log2", "native_cos", "native_sin", "native_exp",
         "native_exp2", "native_log", "native_log2"])
