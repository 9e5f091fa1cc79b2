"""Conformance with the reference on the seed language: bool arguments, empty yield lists,
and `associated` (null memrefs and groups), on the device against expected values."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli
from tinyc.parser import parse
from tinyc.reference import run
from tinyc.spirv.tools import disassemble

from newest_testlib import checked, fn

SELECT = """
func @select(%flag: bool, %a: f32, %b: f32, %out: memref<f32x16>) {
  %v = if %flag -> (f32) { yield (%a) } else { yield (%b) }
  if %flag -> () { yield () } else { yield () }
  parallel {
    %i = builtin.subgroup_local_id : i32
    %j = cast %i : index
    store %v, %out[%j]
  }
}
"""


@pytest.fixture(scope="module")
def select(device):
    return tinyc.compile(SELECT)["select"]


def test_bool_arguments_and_empty_yields_check():
    program = checked(SELECT)
    assert str(program.functions[0].args[0].type) == "bool"


@pytest.mark.parametrize("flag", [True, False, np.bool_(True), np.bool_(False)])
def test_bool_arguments_on_the_device(select, flag):
    out = np.zeros(16, np.float32)
    select(flag, np.float32(1.5), np.float32(-2.0), out, batch=1)
    np.testing.assert_array_equal(out, 1.5 if flag else -2.0)
    ref = np.zeros(16, np.float32)
    run(parse(SELECT)["select"], [flag, np.float32(1.5), np.float32(-2.0), ref], 1)
    np.testing.assert_array_equal(ref, out)


def test_a_bool_parameter_is_an_optypebool_as_the_reference_emits_it(select):
    text = disassemble(tinyc.compile(SELECT).spirv)
    assert "OpFunctionParameter %bool" in text


@pytest.mark.parametrize("value", [1, 0, 1.0, "true", None])
def test_only_bools_go_to_bool_parameters(select, value):
    with pytest.raises(tinyc.LaunchError, match="argument 'flag': expected a bool"):
        select(value, np.float32(1), np.float32(2), np.zeros(16, np.float32))


def test_tinyc_run_takes_bool_arguments(device, tmp_path):
    path = tmp_path / "select.ir"
    path.write_text(SELECT)
    for value in ("true", "false"):
        result = CliRunner().invoke(cli, ["run", str(path), "--check", "--repeat", "1",
                                          "--size", f"flag={value}"])
        assert result.exit_code == 0, result.output
        assert "results match" in result.output
    result = CliRunner().invoke(cli, ["run", str(path), "--size", "flag=maybe"])
    assert result.exit_code == 2 and "'maybe' is not a bool" in result.output


def test_empty_yield_lists_in_for_and_if():
    checked(fn("""
    %z = constant 0 : index
    %n = constant 4 : index
    %c = constant true : bool
    if %c -> () {
      yield ()
    }
    for %i = %z, %n {
      yield ()
    }
    """))


# ---------------------------------------------------------------- associated

ASSOCIATED = """
func @associated(%A: memref<f32x4x?>, %G: group<memref<f32x4>x?>, %out: memref<i32x2>) {
  %a = associated %A : bool
  %g = associated %G : bool
  %one = constant 1 : i32
  %zero = constant 0 : i32
  %x = if %a -> (i32) { yield (%one) } else { yield (%zero) }
  %y = if %g -> (i32) { yield (%one) } else { yield (%zero) }
  parallel {
    %l = subgroup_local_id : i32
    %first = equal %l, %zero : bool
    if %first {
      %i0 = constant 0 : index
      %i1 = constant 1 : index
      store %x, %out[%i0]
      store %y, %out[%i1]
    }
  }
}
"""


@pytest.fixture(scope="module")
def associated(device):
    return tinyc.compile(ASSOCIATED)["associated"]


@pytest.mark.parametrize("memref, group", [(True, True), (False, True), (True, False),
                                           (False, False)])
def test_associated_tells_null_arguments_apart(associated, memref, group):
    A = np.zeros((4, 3), np.float32, order="F") if memref else None
    G = [np.zeros(4, np.float32)] if group else None
    want = [int(memref), int(group)]
    out = np.full(2, -1, np.int32)
    associated(A, G, out, batch=1)
    assert out.tolist() == want
    ref = np.full(2, -1, np.int32)
    run(parse(ASSOCIATED)["associated"], [A, G, ref], 1)
    assert ref.tolist() == want


def test_none_is_refused_where_the_kernel_does_not_check_it(device):
    kernel = tinyc.compile(fn("""
    %z = constant 0 : index
    %x = load %A[%z] : f32
    """, "%A: memref<f32x4>"))["k"]
    with pytest.raises(tinyc.LaunchError, match="argument 'A': got None; only arguments the kernel "
                                                "checks with 'associated' may be None"):
        kernel(None)


def test_the_reference_faults_on_a_null_memref():
    from tinyc.reference import ReferenceFault

    text = ASSOCIATED.replace("%a = associated %A : bool",
                              "%a = associated %A : bool\n  %c0 = constant 0 : index\n"
                              "  %v = load %A[%c0, %c0] : f32")
    with pytest.raises(ReferenceFault, match="'%A' is not associated"):
        run(parse(text)["associated"], [None, None, np.zeros(2, np.int32)], 1)


@pytest.mark.parametrize("divisor, op", [("%zero", "div"), ("%zero", "rem"), ("%product", "div"),
                                         ("%difference", "rem")])
def test_integer_division_by_a_known_zero_is_an_error(divisor, op):
    """As the reference's constant propagation rejects it (the CPU would trap at run time)."""
    from newest_testlib import at, error

    text = fn(f"""
    %zero = constant 0 : i32
    %two = constant 2 : i32
    %product = mul %x, %zero : i32
    %difference = sub %two, %two : i32
    %q = {op} %y, {divisor} : i32
    """, "%x: i32, %y: i32")
    d = error(text)
    assert d.message == f"{op}: second operand: integer division by zero (the divisor is always 0)" \
        or d.message == f"{op}: integer division by zero (the divisor is always 0)"
    line, column = at(text, f"{op} %y, {divisor}")
    assert (d.line, d.column) == (line, column + len(f"{op} %y, "))


def test_division_by_a_value_or_a_float_zero_is_fine():
    checked(fn("""
    %zero = constant 0.0 : f32
    %q = div %a, %zero : f32
    %r = div %x, %y : i32
    """, "%a: f32, %x: i32, %y: i32"))
