"""The preprocessor of the newest language (spec/newest/preprocessor.rst)."""

from __future__ import annotations

import pytest

from tinyc.diagnostics import CompilationError
from tinyc.ir.printer import print_program
from tinyc.parser import parse
from tinyc.std import Std

from newest_testlib import at, checked, same_meaning


def errors_of(text: str):
    with pytest.raises(CompilationError) as info:
        parse(text, "test.ir")
    return info.value.diagnostics


def test_the_spec_example_specialises_a_memref():
    """preprocessor.rst: element type and chunk size, directly and through a type definition."""
    text = """
$element_ty = f32
$chunk_size = 64
func @k(%X: memref<f32x256>) {
    %x = subview %X[0:$chunk_size] : memref<$element_ty x $chunk_size>
    ; ... or ...
    $chunk_ty = memref<$element_ty x $chunk_size>
    %y = subview %X[0:$chunk_size] : $chunk_ty
}
"""
    program = checked(text)
    assert program.std is Std.NEWEST
    assert program.version.describe() == "the newest language (inferred from the preprocessor at 2.1)"
    same_meaning(text, """
func @k(%X: memref<f32x256>) {
    %x = subview %X[0:64] : memref<f32x64>
    %y = subview %X[0:64] : memref<f32x64>
}
""")
    assert "$" not in print_program(program)  # resolved at parse time, as in the reference


@pytest.mark.parametrize("a, b, want", [(130, 64, 3), (128, 64, 2), (1, 7, 1), (64, 1, 64)])
def test_the_spec_ceil_division(a, b, want):
    """preprocessor.rst: c = ceil(a/b) = 1 + floor((a-1)/b)."""
    text = f"""
$a = {a}
$b = {b}
$c = !calc($a 1 - $b / 1 +)
func @k() {{
    %c = constant $c : index
}}
"""
    assert parse(text).functions[0].body.instructions[0].value == want


@pytest.mark.parametrize("rpn, value", [
    ("2 10 ^", 1024), ("7 2 -", 5), ("7 2 +", 9), ("7 2 *", 14), ("7 2 /", 3), ("-7 2 /", -3),
    ("7 2 %", 1), ("-7 2 %", -1), ("3 9 min", 3), ("3 9 max", 9), ("1 2 3 + *", 5), ("-5", -5),
])
def test_calc_operators(rpn, value):
    text = f"$v = !calc({rpn})\nfunc @k() {{\n  %c = constant $v : i64\n}}\n"
    assert parse(text).functions[0].body.instructions[0].value == value


def test_definitions_hold_constants_attributes_types_and_aliases():
    text = """
$one = 1.0
$yes = true
$c = [1.0, -2.0]
$shape = [16, 1]
$attrs = {alignment=64}
$name = "note"
$t = c32
$alias = $t
func @k(%A: memref<f32x16> $attrs) attributes {work_group_size=$shape, subgroup_size=16} {
    %a = constant $one : f32
    %b = constant $yes : bool
    %c = constant $c : $alias
    %z = constant 0 : i32
    %n = constant 4 : i32
    for %i = %z, %n {
    } attributes {$name=$yes}
}
"""
    with pytest.raises(CompilationError, match="unknown attribute 'note' on for"):
        checked(text)
    program = parse(text)
    fn = program.functions[0]
    assert fn.args[0].attrs == {"alignment": 64}
    assert fn.attrs == {"work_group_size": [16, 1], "subgroup_size": 16}
    a, b, c = fn.body.instructions[:3]
    assert (a.value, b.value, c.value, str(c.result.type)) == (1.0, True, 1 - 2j, "c32")


def test_a_definition_in_a_region_is_visible_inside_it_only():
    text = """
func @k() {
    $n = 4
    %a = constant $n : i32
    parallel {
        $m = 5
        %b = constant $m : i32
        %c = constant $n : i32
    }
    %d = constant $m : i32
}
"""
    (d,) = errors_of(text)
    assert d.message == "'$m' is not defined; define it before its use with '$m = ...'"
    assert (d.line, d.column) == at(text, "$m : i32\n}")


def test_sibling_regions_may_define_the_same_name_but_not_redefine_an_outer_one():
    siblings = """
func @a() {
    parallel {
        $m = 5
        %b = constant $m : i32
    }
    parallel {
        $m = 6
        %b = constant $m : i32
    }
}
"""
    parse(siblings)
    shadow = """
$m = 1
func @a() {
    parallel {
        $m = 5
    }
}
"""
    (d,) = errors_of(shadow)
    assert d.message == ("'$m' is already defined; a name is defined once in a scope and the scopes "
                         "inside it")
    assert (d.line, d.column) == (5, 9)
    assert d.notes[0].message == "'$m' is defined here" and d.notes[0].span.line == 2


@pytest.mark.parametrize("text, message", [
    ("$a = !calc(1 +)", "!calc: '+' needs two operands"),
    ("$a = !calc(1 2)", "!calc: the expression leaves 2 values, it must leave one"),
    ("$a = !calc(1 0 /)", "!calc: division by zero (1 0 /)"),
    ("$a = !calc(2 -1 ^)", "!calc: negative exponent (2 -1 ^)"),
    ("$a = !calc(2 70 ^)", "!calc: 2 70 ^ is out of the 64-bit range"),
    ("$a = !calc(1 b /)", "!calc: unexpected 'b'; the calculator takes integers, definitions and "
                          "^ - + * / % min max shl shr and or xor"),
    ("$b = f32\n$a = !calc($b 1 +)", "!calc: '$b' is 'f32', not an integer"),
    ("$a = !calc(1 2 +", "'!calc(' is not closed by ')' on its line"),
    ("$a = ,", "',' cannot be the value of '$a'; write a constant, an attribute, a type, a "
               "definition or !calc(...)"),
    ("$a = memref<f32x4", "'<' is not closed by '>'"),
    ("func @k() { %x = constant $nope : i32 }", "'$nope' is not defined; define it before its use "
                                                "with '$nope = ...'"),
    ("$ = 4", "expected a name after '$'"),
    ("func @k() { ! }", "unexpected '!'; the preprocessor's calculator is written '!calc(...)'"),
])
def test_preprocessor_errors(text, message):
    assert errors_of(text)[0].message == message


def test_errors_in_substituted_text_point_at_the_use():
    text = "$t = f32\nfunc @k(%a: i32) {\n  %x = arith.add %a, %a : $t\n}\n"
    from tinyc.ir.verifier import verify

    with pytest.raises(CompilationError) as info:
        verify(parse(text))
    d = info.value.diagnostics[0]
    assert "got i32" in d.message


@pytest.mark.parametrize("rpn, value", [("1 4 shl 1 -", 15), ("256 4 shr", 16), ("12 10 and", 8),
                                        ("12 10 or", 14), ("12 10 xor", 6)])
def test_calc_bit_operators_the_references_examples_use(rpn, value):
    text = f"$v = !calc({rpn})\nfunc @k() {{\n  %c = constant $v : i64\n}}\n"
    assert parse(text).functions[0].body.instructions[0].value == value


def test_definitions_from_outside_the_source(tmp_path):
    """The reference's host code defines names the text uses (`-D`, `defines=`)."""
    from click.testing import CliRunner

    from tinyc.cli import cli

    text = "$n = !calc($m 2 *)\nfunc @k(%A: memref<$ty x $n>) {\n}\n"
    program = parse(text, defines={"ty": "f64", "$m": "4"})
    assert str(program.functions[0].args[0].type) == "memref<f64x8>"
    assert program.std is Std.NEWEST
    with pytest.raises(CompilationError, match="'\\$ty' is not defined"):
        parse(text, defines={"m": "4"})
    with pytest.raises(CompilationError, match="the definition of \\$ty ends at 'x'"):
        parse(text, defines={"ty": "f64 x", "m": "4"})
    clash = errors_of_with("$ty = f32\n" + text, {"ty": "f64", "m": "1"})
    assert clash.notes[0].message == "'$ty' is defined outside the source (-D ty=...)"
    path = tmp_path / "k.ir"
    path.write_text(text)
    runner = CliRunner()
    assert runner.invoke(cli, ["check", "-D", "ty=f32", "-D", "m=2", str(path)]).exit_code == 0
    assert runner.invoke(cli, ["check", "-D", "m=2", str(path)]).exit_code == 1
    assert runner.invoke(cli, ["check", "-D", "ty", str(path)]).exit_code == 2


def errors_of_with(text: str, defines: dict):
    with pytest.raises(CompilationError) as info:
        parse(text, "test.ir", defines=defines)
    return info.value.diagnostics[0]


def test_the_formatter_puts_each_definition_on_its_own_line():
    from tinyc.editor.format import format_source

    text = ("$n = 4  $t = f32\nfunc @k(%A: memref<$t x $n>) {\n  $m = !calc($n 2 *)  "
            "%c = constant $m : index\n}\n")
    formatted = format_source(text)
    assert formatted.splitlines()[:2] == ["$n = 4", "$t = f32"]
    assert "  $m = !calc($n 2 *)\n  %c = constant $m : index\n" in formatted
    assert format_source(formatted) == formatted
    same_meaning(text, formatted)


def test_definitions_that_double_are_bounded():
    lines = ["$d0 = [1, 1]"] + [f"$d{k} = [$d{k - 1}, $d{k - 1}]" for k in range(1, 40)]
    (d,) = errors_of("\n".join(lines) + "\nfunc @k() {}\n")
    assert "a definition may hold at most 100000 tokens" in d.message
