"""Syntax and name errors: message, location, did-you-mean hints, scoping rules."""

from __future__ import annotations

import pytest
from parser_testlib import error_of, errors_of, where

from tinyc.parser import parse


def wrap(body: str, args: str = "%a: f32, %i: index, %M: memref<f32x8x8>, %flag: bool") -> str:
    """A function whose body starts on line 2, indented by two spaces (column 3)."""
    return f"func @f({args}) {{\n{body}\n}}\n"


# ---------------------------------------------------------------- rendering

def test_error_renders_file_location_line_and_carets():
    text = "func @f() {\n  gemn.n.t %a, %b\n}\n"
    d = error_of(text)
    assert str(d) == ("test.ir:2.3-6: error: unknown instruction 'gemn' (did you mean 'gemm'?)\n"
                      "  gemn.n.t %a, %b\n"
                      "  ^^^^")
    assert d.span.source.name == "test.ir"


@pytest.mark.parametrize("body, hint", [
    ("  %0 = group_id : index", "the grammar writes 'builtin.group_id' (seed language) or "
                                "'group_id.x', 'group_id.y' or 'group_id.z' (newest language)"),
    ("  %x = subgroup_add %a : f32", "the grammar writes 'subgroup_add.exclusive_scan', "
                                     "'subgroup_add.inclusive_scan' or 'subgroup_add.reduce'"),
    ("  %x = cmp.lt %a, 16 : bool", "operands are values: define the number first "
                                    "('%c16 = constant 16 : i32') and use '%c16'"),
    ("  %x = constant 2 -> i32", "the type follows ':', as in '%x = constant 2 : i32'"),
    ("  %x = constant 2.5 -> f32", "the type follows ':', as in '%x = constant 2 : i32'"),
    ("  %x = cmp.lt %a, 1.5 : bool", "operands are values: define the number first "
                                     "('%c15 = constant 1.5 : f32') and use '%c15'"),
])
def test_the_specs_own_examples_get_a_hint_with_the_grammars_form(body, hint):
    d = error_of(wrap(body))
    assert d.hint == hint
    assert str(d).endswith("\nhint: " + hint)


def test_diagnostics_have_line_column_end_column():
    d = error_of(wrap("  %x = constant 2 -> i32"))
    assert d.message.startswith("unexpected '->', expected ':'")
    assert where(d) == (2, 19, 20)


# ---------------------------------------------------------------- syntax errors

@pytest.mark.parametrize("body, message, location", [
    ("  gemn.n.t %a, %a, %a, %a, %a", "unknown instruction 'gemn' (did you mean 'gemm'?)",
     (2, 3, 6)),
    ("  %x = arith.ad %a, %a : f32", "unknown instruction 'arith.ad' (did you mean 'arith.add'?)",
     (2, 8, 15)),
    ("  %0 = group_id : index",  # the spec's own example: the hint shows the grammar's form
     "unknown instruction 'group_id'", (2, 8, 15)),
    ("  %x = subgroup_add %a : f32", "unknown instruction 'subgroup_add'", (2, 8, 19)),
    ("  %x = constant 1.0 : f23", "unknown type 'f23' (did you mean 'f32'?)", (2, 23, 25)),
    ("  %x = alloca : memref<f23x4x4,local>", "unknown type 'f23' (did you mean 'f32'?)",
     (2, 24, 26)),
    ("  %x = builtin.group_id : indx", "unknown type 'indx' (did you mean 'index'?)",
     (2, 27, 30)),
    ("  gemm.x.n %a, %a, %a, %a, %a",
     "unknown modifier '.x', expected a value ('%name'), '.atomic', '.n' or '.t'", (2, 7, 8)),
    ("  store.atomc %a, %M[%i, %i]",
     "unknown modifier '.atomc' (did you mean '.atomic'?), expected a value ('%name'), "
     "'.atomic' or '.atomic_add'", (2, 8, 13)),
    ("  gemm.t.atomic %a, %a, %a, %a, %a",  # seed: both transposes; newest: .atomic first
     "unexpected '.atomic', expected a value ('%name'), '.n' or '.t'", (2, 9, 15)),
    ("  %x = cmp.lt %a, 16 : bool",  # the spec's own example: the hint shows the grammar's form
     "unexpected '16', expected a value ('%name')", (2, 19, 20)),
    ("  %x = constant 2 -> i32",  # the spec's own example
     "unexpected '->', expected ':'", (2, 19, 20)),
    ("  %x = cmp.lt %a, %a : i32", "unexpected 'i32', expected 'bool'", (2, 24, 26)),
    ("  %x = load %M[%i %i] : f32", "unexpected '%i', expected ',' or ']'", (2, 19, 20)),
    ("  %x = alloca : memref<f32x4,globl>",
     "unexpected 'globl', expected 'global', 'local' or 'strided' (did you mean 'global'?)",
     (2, 30, 34)),
    ("  %x = constant [1, 2] : c32", "unexpected '1', expected a floating-point number",
     (2, 18, 18)),
    ("  %x = constant 1.0 : memref<f32>",
     "unexpected 'memref', expected a scalar type, 'bool' or 'coopmatrix'", (2, 23, 28)),
    ("  %x = cooperative_matrix_load.rows_checked.t %M[%i, %i] : coopmatrix<f32x8x8,matrix_a>",
     "unexpected '.t', expected a value ('%name')", (2, 44, 45)),
    ("  %x = constant 1.0 : coopmatrix<f32x8x8,matrix_c>",
     "unexpected 'matrix_c', expected 'matrix_a', 'matrix_acc' or 'matrix_b' "
     "(did you mean 'matrix_a'?)", (2, 42, 49)),
    ("  for %k = %i {\n  }", "unexpected '{', expected ','", (2, 15, 15)),
    ("  %x = subview %M[1:2:3] : memref<f32x2>", "unexpected ':', expected ',' or ']'",
     (2, 22, 22)),
])
def test_syntax_errors(body, message, location):
    d = error_of(wrap(body))
    assert d.message == message
    assert where(d) == location


def test_unknown_type_in_argument():
    d = error_of("func @f(%a: f23) {}")
    assert (d.message, where(d)) == ("unknown type 'f23' (did you mean 'f32'?)", (1, 13, 15))


def test_unknown_attribute_name():
    d = error_of("func @f(%A: memref<f32x4> {alignmnt=4}) {}")
    assert d.message == ("unknown attribute name 'alignmnt' (did you mean 'alignment'?); "
                         "other names must be quoted")
    assert where(d) == (1, 28, 35)


def test_missing_brace_at_end_of_input():
    d = error_of("func @f() {\n  barrier\n")
    assert d.message.startswith("unexpected end of input, expected an instruction")
    assert where(d) == (2, 10, 10)


def test_garbage_at_top_level():
    d = error_of("func @f() {}\nfunk @g() {}")
    assert (d.message, where(d)) == ("unexpected 'funk', expected end of input or 'func' "
                                     "(did you mean 'func'?)",
                                     (2, 1, 4))


@pytest.mark.parametrize("text, message, location", [
    ("func @f() { $ }", "expected a name after '$'", (1, 13, 13)),
    ("func @f() { ~ }", "unexpected character '~'", (1, 13, 13)),
    ("func @f() { % }", "expected a name after '%'", (1, 13, 13)),
    ("func @() {}", "expected a name after '@'", (1, 6, 6)),
    ("func @f() {\n  %_x = constant 1 : i32 }", "expected a name after '%'", (2, 3, 3)),
    ('func @f() attributes {"a\n"=1} {}',
     "unterminated string (strings hold printable ASCII except '\"')", (1, 23, 24)),
    ("func @f() { é }", "unexpected character 'é'", (1, 13, 13)),
    ("func @f() { \x00 }", "unexpected character '\\x00'", (1, 13, 13)),
])
def test_lexical_errors(text, message, location):
    d = error_of(text)
    assert (d.message, where(d)) == (message, location)


# ---------------------------------------------------------------- literals the IR cannot hold

@pytest.mark.parametrize("body, message, location", [
    ("  %x = alloca : memref<f32x-1,local>", "mode size must not be negative, got -1",
     (2, 28, 29)),
    ("  %x = alloca : memref<f32x4,strided<-2>,local>", "stride must not be negative, got -2",
     (2, 38, 39)),
    ("  %x = subview %M[-1:2, %i] : memref<f32x2>",
     "subview offset must not be negative, got -1", (2, 19, 20)),
    ("  %x = subview %M[1:-2, %i] : memref<f32x2>",
     "subview size must not be negative, got -2", (2, 21, 22)),
    ("  %x = expand %M[0 -> -1 x 8] : memref<f32x8x1x8>",
     "expand shape entry must not be negative, got -1", (2, 23, 24)),
    ("  %x = constant 1e999 : f64",
     "floating-point constant '1e999' is out of the range of double precision", (2, 17, 21)),
    ("  %x = constant 0x1p99999 : f64",
     "floating-point constant '0x1p99999' is out of the range of double precision",
     (2, 17, 25)),
    ("  %x = alloca : memref<f32x4x4,strided<1>,local>",
     "strided layout has 1 entries but the memref has order 2", (2, 32, 41)),
])
def test_literals_the_ir_cannot_hold(body, message, location):
    d = error_of(wrap(body))
    assert (d.message, where(d)) == (message, location)


def test_group_size_and_offset_must_not_be_negative():
    d1, d2 = errors_of("func @f(%G: group<memref<f32>x-1, offset: -2>) {}")
    assert d1.message == "group size must not be negative, got -1"
    assert d2.message == "group offset must not be negative, got -2"


def test_huge_integers_are_kept_for_the_verifier():
    prog = parse(wrap("  %x = constant 123456789012345678901234567890 : i64"))
    assert prog.functions[0].body.instructions[0].value == 123456789012345678901234567890


def test_absurdly_long_integer_is_an_error_not_a_crash():
    d = error_of(wrap("  %x = constant " + "9" * 5000 + " : i64"))
    assert d.message == "integer constant with 5000 digits is out of range"


def test_duplicate_attribute():
    d = error_of("func @f() attributes {subgroup_size=16, subgroup_size=32} {}")
    assert (d.message, where(d)) == ("attribute 'subgroup_size' is given twice", (1, 41, 53))
    assert where_note(d) == (1, 23, 35)


def where_note(d):
    note = d.notes[0]
    return note.span.line, note.span.column, note.span.end_column


# ---------------------------------------------------------------- results

@pytest.mark.parametrize("body, message, location", [
    ("  %x = gemm.n.n %a, %M, %M, %a, %M", "'gemm' does not return a value", (2, 3, 4)),
    ("  %x, %y = store %a, %M[%i, %i]", "'store' does not return a value", (2, 3, 8)),
    ("  load %M[%i, %i] : f32", "'load' returns one value; name it with '%name = load ...'",
     (2, 3, 23)),
    ("  %x, %y = arith.add %a, %a : f32", "'arith.add' returns one value but 2 names are given",
     (2, 3, 8)),
    ("  %x = for %k = %i, %i init(%p = %a, %q = %a) -> (f32, f32) {\n"
     "    yield (%p, %q)\n  }", "'for' returns 2 values but 1 name is given", (2, 3, 4)),
    ("  if %flag -> (f32) {\n    yield (%a)\n  } else {\n    yield (%a)\n  }",
     "'if' returns one value; name it with '%name = if ...'", (2, 3, 3)),
    ("  %x = builtin.num_subgroups : i32\n  %y, %z = barrier",
     "'barrier' does not return a value", (3, 3, 8)),
    ("  %r = for %k = %i, %i init(%p = %a, %q = %a) -> (f32) {\n    yield (%p)\n  }",
     "for carries 2 values but 1 type is given after '->'", (2, 50, 54)),
])
def test_result_names_must_match_results(body, message, location):
    d = error_of(wrap(body))
    assert (d.message, where(d)) == (message, location)


def test_missing_result_names_span_several_lines():
    d = error_of(wrap("  if %flag -> (f32) {\n    yield (%a)\n  } else {\n    yield (%a)\n  }"))
    assert (d.span.line, d.span.end_line, d.span.end_column) == (2, 6, 3)
    assert str(d).startswith("test.ir:2.3-6.3: error:")


def test_foreach_lists_must_have_equal_length():
    d = error_of(wrap("  foreach (%x, %y) = (%i), (%i, %i) {\n  }"))
    assert d.message == ("foreach has 2 loop variables, 1 lower and 2 upper bounds; "
                         "the three lists must have the same length")
    assert where(d) == (2, 12, 34)


# ---------------------------------------------------------------- names

def test_undefined_value_with_did_you_mean():
    d = error_of(wrap("  %alpha = constant 1.0 : f32\n  %x = arith.add %alpah, %a : f32"))
    assert d.message == "undefined value '%alpah' (did you mean '%alpha'?)"
    assert where(d) == (3, 18, 23)


def test_undefined_value_without_hint():
    d = error_of(wrap("  %x = arith.add %zzz, %a : f32"))
    assert d.message == "undefined value '%zzz'"


def test_redefinition_points_at_first_definition():
    d = error_of(wrap("  %x = constant 1.0 : f32\n  %x = constant 2.0 : f32"))
    assert (d.message, where(d)) == ("redefinition of '%x'", (3, 3, 4))
    assert d.notes[0].message == "'%x' is first defined here"
    assert where_note(d) == (2, 3, 4)


def test_redefining_an_argument():
    d = error_of(wrap("  %a = constant 1.0 : f32"))
    assert d.message == "redefinition of '%a'" and where_note(d) == (1, 9, 10)


def test_duplicate_argument_names():
    d = error_of("func @f(%a: f32, %a: i32) {}")
    assert (d.message, where(d)) == ("redefinition of '%a'", (1, 18, 19))


def test_all_independent_name_errors_are_reported():
    diagnostics = errors_of(wrap(
        "  %x = arith.add %u, %a : f32\n"      # undefined %u
        "  %y = arith.add %v, %u : f32\n"      # undefined %v (the second %u is not repeated)
        "  %x = arith.add %a, %a : f32\n"      # redefinition of %x
        "  %z = arith.add %a, %w : f32"))      # undefined %w
    assert [(d.message, d.line) for d in diagnostics] == [
        ("undefined value '%u'", 2), ("undefined value '%v'", 3), ("redefinition of '%x'", 4),
        ("undefined value '%w'", 5)]


def test_name_errors_in_several_functions_are_all_reported():
    diagnostics = errors_of("func @f() { lifetime_stop %p }\nfunc @g() { lifetime_stop %q }")
    assert [d.message for d in diagnostics] == ["undefined value '%p'", "undefined value '%q'"]


def test_each_function_has_its_own_names():
    parse("func @f(%a: f32) {}\nfunc @g(%a: f32) {\n  %b = arith.add %a, %a : f32\n}")


def test_duplicate_function_names():
    d = error_of("func @f() {}\nfunc @f() {}")
    assert (d.message, where(d)) == ("redefinition of function '@f'", (2, 6, 7))
    assert d.notes[0].message == "'@f' is first defined here" and where_note(d) == (1, 6, 7)


def test_use_before_definition_is_undefined():
    d = error_of(wrap("  %x = arith.add %y, %a : f32\n  %y = arith.add %a, %a : f32"))
    assert d.message == "undefined value '%y'"


def test_instruction_cannot_use_its_own_result():
    d = error_of(wrap("  %x = arith.add %x, %a : f32"))
    assert (d.message, where(d)) == ("undefined value '%x'", (2, 18, 19))


# ---------------------------------------------------------------- scoping

def test_value_from_a_loop_body_is_not_visible_after_the_loop():
    d = error_of(wrap("  for %k = %i, %i {\n    %inner = arith.add %a, %a : f32\n  }\n"
                      "  %x = arith.add %inner, %a : f32"))
    assert (d.message, where(d)) == ("undefined value '%inner'", (5, 18, 23))


def test_loop_variable_is_not_visible_after_the_loop():
    d = error_of(wrap("  for %k = %i, %i {\n  }\n  %x = arith.add %k, %k : index"))
    assert d.message == "undefined value '%k'"


def test_then_values_are_not_visible_in_else():
    d = error_of(wrap("  if %flag {\n    %t = arith.add %a, %a : f32\n  } else {\n"
                      "    %e = arith.add %t, %a : f32\n  }"))
    assert (d.message, where(d)) == ("undefined value '%t'", (5, 20, 21))


def test_foreach_and_parallel_bodies_are_scopes():
    d1, d2 = errors_of(wrap(
        "  foreach (%x) = (%i), (%i) {\n    %v = load %M[%x, %x] : f32\n  }\n"
        "  parallel {\n    %w = arith.add %v, %v : f32\n  }\n"
        "  lifetime_stop %x"))
    assert (d1.message, d1.line) == ("undefined value '%v'", 6)
    assert (d2.message, d2.line) == ("undefined value '%x'", 8)


def test_sibling_regions_may_reuse_names():
    parse(wrap(
        "  if %flag {\n    %t = arith.add %a, %a : f32\n  } else {\n"
        "    %t = arith.mul %a, %a : f32\n  }\n"
        "  for %k = %i, %i {\n    %t = arith.sub %a, %a : f32\n  }\n"
        "  foreach (%k) = (%i), (%i) {\n    %t = arith.sub %a, %a : f32\n  }\n"
        "  %t = arith.add %a, %a : f32"))


def test_inner_regions_see_outer_values_and_arguments():
    parse(wrap(
        "  %o = arith.add %a, %a : f32\n"
        "  for %k = %i, %i {\n    if %flag {\n      %x = arith.add %o, %a : f32\n"
        "      %y = load %M[%k, %k] : f32\n    }\n  }"))


def test_inner_regions_cannot_shadow_outer_names():
    d = error_of(wrap("  %o = arith.add %a, %a : f32\n  parallel {\n"
                      "    %o = arith.add %a, %a : f32\n  }"))
    assert (d.message, where(d), where_note(d)) == ("redefinition of '%o'", (4, 5, 6), (2, 3, 4))


def test_loop_variable_cannot_shadow():
    d = error_of(wrap("  for %i = %i, %i {\n  }"))
    assert (d.message, where(d), where_note(d)) == ("redefinition of '%i'", (2, 7, 8), (1, 18, 19))
    d = error_of(wrap("  %r = for %k = %i, %i init(%a = %a) -> (f32) {\n    yield (%a)\n  }"))
    assert (d.message, where(d)) == ("redefinition of '%a'", (2, 29, 30))


def test_loop_results_are_defined_after_the_loop():
    d = error_of(wrap("  %r = for %k = %i, %i init(%p = %a) -> (f32) {\n"
                      "    %s = arith.add %r, %p : f32\n    yield (%s)\n  }"))
    assert (d.message, where(d)) == ("undefined value '%r'", (3, 20, 21))


def test_init_values_are_read_outside_the_loop():
    d = error_of(wrap("  %r = for %k = %i, %i init(%p = %p) -> (f32) {\n    yield (%p)\n  }"))
    assert (d.message, where(d)) == ("undefined value '%p'", (2, 34, 35))


def test_deep_nesting_is_an_error_not_a_crash():
    depth = 2000
    text = "func @f() {\n" + "parallel {\n" * depth + "}\n" * depth + "}\n"
    d = errors_of(text)[0]
    assert d.message == "regions nested more than 64 deep"
    deep_attr = "func @f() attributes {\"a\"=" + "[" * 3000 + "]" * 3000 + "} {}"
    assert errors_of(deep_attr)[0].message == "attributes nested more than 64 deep"
