"""Scoping of SSA values in IR built without the parser (as passes build it)."""

from __future__ import annotations

import pytest

from tinyc.diagnostics import CompilationError, Span
from tinyc.ir.core import Function, Program, Region, Value
from tinyc.ir.instructions import (
    ArithBinary, ArithBinaryOp, Constant, For, Gemm, If, Parallel, Yield,
)
from tinyc.ir.types import bool_, f32, index, memref_type
from tinyc.ir.verifier import verify


def span(line: int, column: int = 1) -> Span:
    return Span(line, column, line, column + 3)


def errors(fn: Function) -> list:
    try:
        verify(Program([fn]))
    except CompilationError as err:
        return err.diagnostics
    return []


def test_use_before_definition_in_the_same_region():
    a = Value(f32, "a", span(1))
    late = Constant(1.0, f32, span(3), "late")
    add = ArithBinary(ArithBinaryOp.ADD, a, late.result, f32, span(2), "s")
    fn = Function("k", [a], Region(instructions=[add, late]))
    [d] = errors(fn)
    assert d.message.startswith("arith.add: '%late' is used where it is not visible")
    assert (d.line, d.column) == (2, 1)
    assert d.notes[0].message == "'%late' is defined here with type f32"
    assert d.notes[0].span == span(3)


def test_value_of_a_sibling_region_is_not_visible():
    inner = Constant(1.0, f32, span(3), "x")
    par = Parallel(Region(instructions=[inner]), span(2))
    use = ArithBinary(ArithBinaryOp.ADD, inner.result, inner.result, f32, span(5), "y")
    fn = Function("k", [], Region(instructions=[par, use]))
    found = errors(fn)
    assert [d.line for d in found] == [5, 5]
    assert all("'%x' is used where it is not visible" in d.message for d in found)


def test_enclosing_values_and_region_arguments_are_visible():
    lo = Constant(0, index, span(2), "lo")
    hi = Constant(4, index, span(3), "hi")
    x0 = Constant(0.0, f32, span(4), "x0")
    i, acc = Value(index, "i", span(5)), Value(f32, "acc", span(5))
    add = ArithBinary(ArithBinaryOp.ADD, acc, x0.result, f32, span(6), "n")
    loop = For(i, lo.result, hi.result, None, [acc], [x0.result],
               Region(instructions=[add, Yield([add.result], span(7))]), span=span(5))
    fn = Function("k", [], Region(instructions=[lo, hi, x0, loop]))
    assert errors(fn) == []


def test_loop_variable_is_not_visible_after_the_loop():
    lo = Constant(0, index, span(2), "lo")
    i = Value(index, "i", span(3))
    loop = For(i, lo.result, lo.result, None, [], [], Region(), span=span(3))
    use = ArithBinary(ArithBinaryOp.ADD, i, i, index, span(5), "j")
    fn = Function("k", [], Region(instructions=[lo, loop, use]))
    found = errors(fn)
    assert len(found) == 2 and all(d.line == 5 for d in found)


def test_a_result_is_not_visible_inside_its_own_region():
    c = Constant(True, bool_, span(1), "c")
    branch = If(c.result, [f32], span=span(2), result_names=["r"])
    branch.then.append(Yield([branch.results[0]], span(3)))
    branch.otherwise.append(Yield([branch.results[0]], span(4)))
    fn = Function("k", [], Region(instructions=[c, branch]))
    assert [d.line for d in errors(fn)] == [3, 4]


def test_errors_are_sorted_by_location_and_all_reported():
    mem = memref_type(f32, (4, 4))
    A = Value(mem, "A", span(1))
    x = Value(f32, "x", span(1, 20))
    bad_gemm = Gemm(False, False, x, A, A, x, x, span=span(9))      # C is not a memref
    late = Constant(1.0, f32, span(8), "late")
    use = ArithBinary(ArithBinaryOp.ADD, late.result, x, f32, span(2), "u")
    fn = Function("k", [A, x], Region(instructions=[bad_gemm, use, late]))
    found = errors(fn)
    assert [(d.line, d.column) for d in found] == sorted((d.line, d.column) for d in found)
    assert [d.line for d in found] == [2, 9]


def test_function_defined_twice():
    f1, f2 = Function("k", [], span=span(1)), Function("k", [], span=span(5))
    with pytest.raises(CompilationError) as err:
        verify(Program([f1, f2]))
    [d] = err.value.diagnostics
    assert d.message == "function '@k' is defined twice" and d.line == 5
    assert d.notes[0].span == span(1)


@pytest.mark.parametrize("t, problem", [
    (memref_type(f32, (4, 4), (1,)), "the strided layout has 1 entries but the order is 2"),
    (memref_type(f32, (4, -3)), "the size -3 of mode 1 is negative"),
    (memref_type(f32, (4, 4), (1, -4)), "the stride -4 of mode 1 is negative"),
])
def test_malformed_types_built_without_the_parser(t, problem):
    from tinyc.ir.types import group_type
    arg = Value(t, "A", span(1))
    [d] = errors(Function("k", [arg]))
    assert d.message == f"invalid type {t}: {problem}"
    [d] = errors(Function("k", [Value(group_type(t, 4, -1), "G", span(1))]))
    assert d.message.endswith(problem)


def test_negative_group_size_and_offset():
    from tinyc.ir.types import group_type
    g = group_type(memref_type(f32, (4,)), -2, -3)
    found = errors(Function("k", [Value(g, "G", span(1))]))
    assert [d.message for d in found] == [f"invalid type {g}: the group size -2 is negative",
                                          f"invalid type {g}: the offset -3 is negative"]
