"""Warnings (docs/warnings.md): each one's trigger and near misses, the text, JSON and
option forms, and that a program with warnings only checks and compiles.

The situations come from the spec: a subview's slice outside its mode is legal
but an access through it is undefined ("there is no run-time check whether
the indices are within bounds"); a `for` runs from `from` while below `to`;
an SSA value without users and local memory that nothing reads have no effect.
"""

from __future__ import annotations

import json
import warnings as python_warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli
from tinyc.compiler import CompilationWarning, check_source
from tinyc.diagnostics import CompilationError
from tinyc.lint import WARNINGS, UnknownWarning, WarningOptions

SUBVIEW = """\
func @f(%a: memref<i16x8x8>, %b: memref<i16x8x8>) {
  %v = subview %a[4:8, 0:8] : memref<i16x8x8>
  %c0 = constant 0 : index
  %x = load %v[%c0, %c0] : i16
  store %x, %b[%c0, %c0]
}
"""


def warnings_of(text: str, **options) -> list:
    return check_source(text, "t.ir", **options).warnings


def only(text: str, name: str) -> list:
    found = warnings_of(text)
    assert all(w.severity == "warning" for w in found)
    return [w for w in found if w.warning == name]


def view_type(slices: str) -> str:
    """The result type of a subview of memref<f32x8x8> (strides written `?`)."""
    shape = []
    for part in (p.strip() for p in slices.split(",")):
        if part == ":":
            shape.append("8")
        elif ":" in part:
            size = part.split(":")[1]
            shape.append("?" if size.startswith("%") else size)
    return f"memref<f32x{'x'.join(shape)},strided<{','.join(['?'] * len(shape))}>>"


def body(*lines: str, args: str = "%a: memref<f32x8x8>, %x: f32, %n: index") -> str:
    return f"func @f({args}) {{\n" + "".join(f"  {line}\n" for line in lines) + "}\n"


# ---------------------------------------------------------------- subview-bounds

@pytest.mark.parametrize("slices, message", [
    ("4:8, 0:8", "the slice 4:8 ends at 12, past the end of mode 0, whose size is 8"),
    ("0:8, 1:8", "the slice 1:8 ends at 9, past the end of mode 1, whose size is 8"),
    ("%n:9, :", "the slice size 9 is larger than the mode of mode 0, whose size is 8"),
    ("8, :", "the index 8 is past the end of mode 0, whose size is 8"),
    ("9:%n, :", "the offset 9 is past the end of mode 0, whose size is 8"),
])
def test_subview_leaving_its_mode_warns_at_the_subview(slices: str, message: str):
    result = view_type(slices)
    text = body(f"%v = subview %a[{slices}] : {result}", f"%y = size %v[0] : index",
                "store %x, %a[%y, %y]")
    found = only(text, "subview-bounds")
    assert len(found) == 1, found
    w = found[0]
    assert w.message == f"subview: {message}; an access through this part of the view is undefined"
    assert (w.line, w.column) == (2, 3)
    assert [n.message for n in w.notes] == ["'%a' is defined here with type memref<f32x8x8>"]
    assert (w.notes[0].span.line, w.notes[0].span.column) == (1, 9)


@pytest.mark.parametrize("slices", ["4:4, 0:8", "0:8, :", "7, :", "%n:8, :", "8:%n, :", ":, %n:%n"])
def test_subview_within_its_mode_or_unknown_does_not_warn(slices: str):
    result = view_type(slices)
    text = body(f"%v = subview %a[{slices}] : {result}", "%y = size %v[0] : index",
                "store %x, %a[%y, %y]")
    assert only(text, "subview-bounds") == []


def test_subview_of_a_dynamic_mode_does_not_warn():
    text = body("%v = subview %a[100:4] : memref<f32x4>", "%y = size %v[0] : index",
                "store %x, %a[%y]", args="%a: memref<f32x?>, %x: f32")
    assert warnings_of(text) == []


# ---------------------------------------------------------------- empty-loop

def test_for_with_constant_empty_range_warns_at_its_header():
    text = body("%c4 = constant 4 : index", "%c2 = constant 2 : index",
                "for %i = %c4, %c2 {", "  store %x, %a[%i, %i]", "}")
    (w,) = only(text, "empty-loop")
    assert w.message.startswith("for: the range 4..2 is empty")
    assert (w.line, w.column, w.end_line) == (4, 3, 4)  # the header line, not the body
    assert [n.message for n in w.notes] == ["'%c4' is defined here with type index",
                                           "'%c2' is defined here with type index"]


def test_equal_bounds_are_empty_too_and_foreach_is_checked():
    text = body("%c3 = constant 3 : index", "%c0 = constant 0 : index",
                "foreach (%i, %j) = (%c0, %c3), (%c3, %c3) {", "  store %x, %a[%i, %j]", "}")
    (w,) = only(text, "empty-loop")
    assert w.message.startswith("foreach: the range 3..3 in mode 1 is empty")


@pytest.mark.parametrize("lower, upper", [("constant 0 : index", "constant 1 : index"),
                                          ("constant 0 : index", "size %a[0] : index")])
def test_loops_that_may_run_do_not_warn(lower: str, upper: str):
    text = body(f"%lo = {lower}", f"%hi = {upper}", "for %i = %lo, %hi {",
                "  store %x, %a[%i, %i]", "}")
    assert only(text, "empty-loop") == []


# ---------------------------------------------------------------- unused-value

def test_unused_pure_values_warn_at_their_names():
    text = body("%u = arith.add %x, %x : f32", "%c0 = constant 0 : index",
                "%v = load %a[%c0, %c0] : f32", "store %x, %a[%c0, %c0]")
    found = only(text, "unused-value")
    assert [(w.message, w.line, w.column, w.end_column) for w in found] == [
        ("arith.add: '%u' is never used", 2, 3, 4), ("load: '%v' is never used", 4, 3, 4)]


def test_side_effects_loops_and_arguments_are_not_unused():
    text = body("%c0 = constant 0 : index", "%c1 = constant 1 : index",
                "%old = atomic_add %x, %a[%c0, %c0] : f32",  # writes memory
                "%r = for %i = %c0, %c1 init(%s = %x) -> (f32) {",
                "  store %s, %a[%i, %i]", "  yield (%s)", "}",
                args="%a: memref<f32x8x8>, %x: f32, %unused_argument: f32")
    assert only(text, "unused-value") == []


# ---------------------------------------------------------------- unread-alloca

def test_alloca_written_but_never_read_warns_with_the_first_write():
    text = body("%t = alloca : memref<f32x8x8, local>", "%zero = constant 0.0 : f32",
                "%one = constant 1.0 : f32", "axpby.n %one, %a, %zero, %t")
    (w,) = only(text, "unread-alloca")
    assert w.message == "local memory '%t' is written but never read: the writes have no effect"
    assert (w.line, w.column) == (2, 3)
    assert [(n.message, n.span.line) for n in w.notes] == [("it is written here", 5)]


def test_alloca_read_through_a_view_does_not_warn():
    text = body("%t = alloca : memref<f32x8x8, local>", "%zero = constant 0.0 : f32",
                "%one = constant 1.0 : f32", "axpby.n %one, %a, %zero, %t",
                "%c0 = constant 0 : index", "%v = subview %t[%c0, :] : memref<f32x8,strided<8>,local>",
                "%y = load %v[%c0] : f32", "store %y, %a[%c0, %c0]")
    assert only(text, "unread-alloca") == []


# ---------------------------------------------------------------- options and forms

def test_text_form_is_that_of_an_error_with_the_name_in_brackets(tmp_path: Path):
    path = tmp_path / "k.ir"
    path.write_text(SUBVIEW)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        f"{path}:2.3-45: warning: subview: the slice 4:8 ends at 12, past the end of mode 0, whose "
        f"size is 8; an access through this part of the view is undefined [-Wsubview-bounds]",
        "  %v = subview %a[4:8, 0:8] : memref<i16x8x8>",
        "  " + "^" * 43,
        f"{path}:1.9-10: note: '%a' is defined here with type memref<i16x8x8>",
        "func @f(%a: memref<i16x8x8>, %b: memref<i16x8x8>) {",
        "        ^^",
    ]


def test_json_carries_severity_and_name(tmp_path: Path):
    path = tmp_path / "k.ir"
    path.write_text(SUBVIEW)
    result = CliRunner().invoke(cli, ["check", "--format", "json", str(path)])
    assert result.exit_code == 0
    (d,) = json.loads(result.stdout)
    assert (d["severity"], d["warning"], d["line"], d["column"]) == ("warning", "subview-bounds", 2, 3)
    assert d["range"] == {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 45}}


@pytest.mark.parametrize("options, code, shown", [
    ([], 0, "warning: "), (["-W", "error"], 1, "error: "), (["-w"], 0, None),
    (["-W", "no-subview-bounds"], 0, None), (["-W", "error", "-W", "no-error"], 0, "warning: "),
    (["-W", "no-subview-bounds", "-W", "subview-bounds"], 0, "warning: "),
])
def test_options(tmp_path: Path, options: list, code: int, shown: str | None):
    path = tmp_path / "k.ir"
    path.write_text(SUBVIEW)
    result = CliRunner().invoke(cli, ["check", *options, str(path)])
    assert result.exit_code == code, result.output
    if shown is None:
        assert result.stderr == ""
    else:
        first = result.stderr.splitlines()[0]
        assert shown in first
        assert first.endswith("[-Werror,-Wsubview-bounds]" if code else "[-Wsubview-bounds]")


def test_unknown_warning_is_a_usage_error_with_a_suggestion(tmp_path: Path):
    path = tmp_path / "k.ir"
    path.write_text(SUBVIEW)
    result = CliRunner().invoke(cli, ["check", "-W", "no-subview-bound", str(path)])
    assert result.exit_code == 2
    assert "unknown warning 'no-subview-bound' (did you mean 'no-subview-bounds'?)" in result.stderr
    with pytest.raises(UnknownWarning):
        WarningOptions.parse(["unsued-value"])


def test_every_warning_is_documented():
    page = (Path(__file__).resolve().parents[2] / "docs" / "warnings.md").read_text()
    for name in WARNINGS:
        assert f"### `{name}`" in page and f"-W no-{name}" in page


def test_errors_elsewhere_keep_the_warnings_of_clean_functions():
    text = (SUBVIEW  # lines 1-6: a warning
            + "func @g(%a: f32) {\n  %y = arith.add %a, %a : f32\n}\n"  # 7-9: a warning
            + "func @h(%a: memref<f32x4>) {\n  %c = constant 1 : i32\n"  # 10-13: an error
            + "  store %c, %a[%c]\n}\n")
    with pytest.raises(CompilationError) as info:
        check_source(text, "t.ir")
    err = info.value
    assert [(d.warning, d.line) for d in err.warnings] == [("subview-bounds", 2), ("unused-value", 8)]
    assert err.diagnostics and all(d.line == 12 and d.severity == "error" for d in err.diagnostics)
    assert [d.line for d in err.all_diagnostics] == [2, 8] + [12] * len(err.diagnostics)
    assert "[-Wsubview-bounds]" in err.render() and "[-Wsubview-bounds]" in str(err)


def test_a_function_with_an_error_gets_no_warnings():
    text = body("%u = arith.add %x, %x : f32", "%c = constant 1 : i32", "store %c, %a[%c, %c]")
    with pytest.raises(CompilationError) as info:
        check_source(text, "t.ir")
    assert info.value.warnings == []


def test_compile_issues_compilation_warnings_and_lists_them():
    with pytest.warns(CompilationWarning, match=r"\[-Wsubview-bounds\]") as caught:
        program = tinyc.compile(SUBVIEW)
    (w,) = [c.message for c in caught if isinstance(c.message, CompilationWarning)]
    assert w.diagnostic.warning == "subview-bounds"
    assert [d.warning for d in program.warnings] == ["subview-bounds"]
    with python_warnings.catch_warnings():
        python_warnings.simplefilter("error", CompilationWarning)
        assert tinyc.compile(SUBVIEW, warnings=["no-subview-bounds"]).warnings == []
        assert tinyc.compile(SUBVIEW, warnings="none").warnings == []
    with pytest.raises(CompilationError, match=r"error: .*\[-Werror,-Wsubview-bounds\]"):
        tinyc.compile(SUBVIEW, warnings=["error"])
    with pytest.raises(ValueError, match="unknown warning"):
        tinyc.compile(SUBVIEW, warnings=["no-such-thing"])


def test_compile_command_exits_0_with_warnings_and_1_with_werror(tmp_path: Path):
    path = tmp_path / "k.ir"
    path.write_text(SUBVIEW)
    out = tmp_path / "k.spv"
    result = CliRunner().invoke(cli, ["compile", str(path), "-o", str(out)])
    assert result.exit_code == 0 and out.stat().st_size > 0
    assert "[-Wsubview-bounds]" in result.stderr
    result = CliRunner().invoke(cli, ["compile", str(path), "--emit", "ir", "-W", "error"])
    assert result.exit_code == 1 and "[-Werror,-Wsubview-bounds]" in result.stderr


@pytest.mark.parametrize("command", ["run", "bench"])
def test_run_and_bench_exit_0_with_warnings(device, tmp_path: Path, command: str):
    path = tmp_path / "k.ir"
    path.write_text(SUBVIEW)
    options = ["--batch", "1", "--repeat", "1"] + (["--warmup", "0"] if command == "bench" else [])
    result = CliRunner().invoke(cli, [command, str(path), *options])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("[-Wsubview-bounds]") == 1
    assert "CompilationWarning" not in result.stderr
    result = CliRunner().invoke(cli, [command, str(path), *options, "-W", "error"])
    assert result.exit_code == 1 and "[-Werror,-Wsubview-bounds]" in result.stderr
