"""Inputs and options a new user tries: each ends in a clear message and the right exit code.

(The issue "Reliability", section 1; bounds-checked launches are in
tests/runtime/test_bounds.py, syntax error recovery in
tests/parser/test_parser_recovery.py.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli

REPO = Path(__file__).resolve().parents[1]


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def write(tmp_path: Path, text: str | bytes, name: str = "k.ir") -> str:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


# ---------------------------------------------------------------- empty programs

EMPTY = ["", "; only a comment\n", "\n\n   \n"]


@pytest.mark.parametrize("text", EMPTY)
def test_api_rejects_a_program_without_function(text):
    with pytest.raises(tinyc.CompilationError) as info:
        tinyc.compile(text)
    [d] = info.value.diagnostics
    assert d.message == "the program defines no function" and (d.line, d.column) == (1, 1)


@pytest.mark.parametrize("command", ["check", "compile", "run", "bench"])
def test_every_command_rejects_an_empty_file(tmp_path, command, device):
    path = write(tmp_path, "; nothing here\n")
    extra = ["-o", str(tmp_path / "k.spv")] if command == "compile" else []
    result = invoke(command, path, *extra)
    assert result.exit_code == 1, result.output
    assert f"{path}:1.1-1: error: the program defines no function" in result.output
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- the source argument

def test_bytes_are_utf8_source():
    program = tinyc.compile(b"func @k(%a: f32) {}\n")
    assert program.kernel_names == ["k"]


@pytest.mark.parametrize("bad", [123, None, 1.5, ["func @k() {}"]])
def test_other_sources_are_type_errors(bad):
    with pytest.raises(TypeError, match="expects the source as str, UTF-8 bytes or a tinyc.builder.Program, got"):
        tinyc.compile(bad)


def test_a_byte_that_is_not_utf8_is_fine_in_a_comment():
    program = tinyc.compile(b"; caf\xe9 \xff\xfe\nfunc @k(%a: f32) { ; \x80\n}\n")
    assert program.kernel_names == ["k"]


def test_a_byte_that_is_not_utf8_outside_a_comment_is_located():
    with pytest.raises(tinyc.CompilationError) as info:
        tinyc.compile(b"func @k(%a: f32) {\n  \xff\n}\n")
    [d] = info.value.diagnostics
    assert (d.line, d.column) == (2, 3) and "not UTF-8" in d.message


# ---------------------------------------------------------------- options

def test_an_unsupported_subgroup_size_is_a_usage_error(tmp_path):
    path = write(tmp_path, "func @k(%a: f32) {}\n")
    result = invoke("compile", path, "--subgroup-size", "7", "-o", str(tmp_path / "k.spv"))
    assert result.exit_code == 2
    assert "subgroup size 7 is not supported" in result.output and "4, 8, 16, 32, 64" in result.output
    with pytest.raises(ValueError, match="subgroup size 7 is not supported"):
        tinyc.compile("func @k(%a: f32) {}", subgroup_size=7)
    with pytest.raises(TypeError):
        tinyc.compile("func @k(%a: f32) {}", subgroup_size="16")


OVERRIDDEN = "func @k(%a: f32) attributes {subgroup_size=8} {}\n"


def test_an_option_overridden_by_an_attribute_says_so(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = tinyc.compile(OVERRIDDEN, subgroup_size=16)
    [w] = [c for c in caught if issubclass(c.category, tinyc.CompilationWarning)]
    assert "subgroup_size attribute (8) overrides the requested subgroup size 16" in str(w.message)
    assert program.warnings[0].severity == "warning"
    path = write(tmp_path, OVERRIDDEN)
    result = invoke("compile", path, "--subgroup-size", "16", "-o", str(tmp_path / "k.spv"))
    assert result.exit_code == 0
    assert f"{path}:1.1-" in result.output and "warning:" in result.output
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tinyc.compile(OVERRIDDEN, subgroup_size=8)  # no conflict, no warning


# ---------------------------------------------------------------- for loops

@pytest.mark.parametrize("step", ["0", "-1"])
def test_a_constant_step_that_is_not_positive_is_rejected(step):
    src = f"""func @k(%n: index) {{
  %z = constant 0 : index
  %s = constant {step} : index
  for %i = %z, %n, %s {{
  }}
}}"""
    with pytest.raises(tinyc.CompilationError) as info:
        tinyc.compile(src)
    [d] = info.value.diagnostics
    assert d.line == 4 and "step of a for loop must be positive" in d.message


def test_a_step_that_is_not_positive_at_run_time_runs_no_iteration(device):
    """Neither hangs: a non-positive step runs no iteration, an overflowing one stops."""
    src = """func @k(%A: memref<i64x2>, %s: i8) {
  %z = constant 0 : index
  %one = constant 1 : index
  %lo = constant 0 : i8
  %hi = constant 127 : i8
  %c = constant 0 : i64
  %n = for %i : i8 = %lo, %hi, %s init(%acc = %c) -> (i64) {
    %inc = constant 1 : i64
    %next = arith.add %acc, %inc : i64
    yield (%next)
  }
  store %n, %A[%z]
}"""
    kernel = tinyc.compile(src)["k"]
    A = np.zeros(2, np.int64)
    kernel(A, 0, batch=1)
    assert A[0] == 0
    kernel(A, 100, batch=1)  # 0, 100, then 200 overflows i8: two iterations, not an endless loop
    assert A[0] == 2
    kernel(A, 1, batch=1)
    assert A[0] == 127


# ---------------------------------------------------------------- tinyc run: sizes

DYNAMIC_GEMM = """func @k(%A: memref<f32x?x?>, %B: memref<f32x?x?>, %C: memref<f32x?x?x?>, %n: index) {
  %g = builtin.group_id : index
  %c = subview %C[:, :, %g] : memref<f32x?x?>
  %one = constant 1.0 : f32
  gemm.n.t %one, %A, %B, %one, %c
}
"""

LOOP = """func @k(%A: memref<f32x?>, %B: memref<f32x?>, %n: index) {
  %c0 = constant 0 : index
  for %i = %c0, %n {
    %x = load %A[%i] : f32
    store %x, %B[%i]
  }
}
"""


def test_run_makes_related_sizes_agree_and_prints_them(tmp_path, device):
    path = write(tmp_path, DYNAMIC_GEMM)
    result = invoke("run", path, "--size", "A=8x4", "--batch", "3", "--check", "--repeat", "1")
    assert result.exit_code == 0, result.output
    assert "arguments: %A: f32 8x4, %B: f32 16x4, %C: f32 8x16x3, %n = " in result.output
    assert "check: compared %C (384 elements, every work-group of 3)" in result.output


def test_run_names_the_arguments_a_size_makes_inconsistent(tmp_path, device):
    path = write(tmp_path, DYNAMIC_GEMM)
    result = invoke("run", path, "--size", "A=8x4", "--size", "B=5x3")
    assert result.exit_code == 2
    assert "--size B=5x3: mode 1 of %B must equal mode 1 of %A, which --size A=8x4 makes 4" in result.output
    assert "columns of op(A) = rows of op(B) in gemm at 5.3" in result.output


def test_run_takes_loop_bounds_from_sizes(tmp_path, device):
    path = write(tmp_path, LOOP)
    result = invoke("run", path, "--size", "n=5", "--check", "--repeat", "1")
    assert result.exit_code == 0, result.output
    assert "%A: f32 5, %B: f32 5, %n = 5" in result.output
    result = invoke("run", path, "--size", "A=7", "--size", "n=5")
    assert result.exit_code == 2 and "%n must equal mode 0 of %A" in result.output


@pytest.mark.parametrize("size, message", [
    ("q=3", "the kernel has no argument 'q'"),
    ("A=8x4x2", "%A has 2 modes, got 3"),
    ("A=8x0", "'0' is not a positive size"),
    ("n=1.5", "%n is index, so the value must be an integer"),
    ("n=99999999999999999999", "is out of range for index"),
    ("A=99999999x99999999", "needs"),
])
def test_run_size_usage_errors(tmp_path, size, message, device):
    path = write(tmp_path, DYNAMIC_GEMM)
    result = invoke("run", path, "--size", size)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_a_static_mode_cannot_be_resized(tmp_path, device):
    path = write(tmp_path, "func @k(%A: memref<f32x4x?>) {}\n")
    result = invoke("run", path, "--size", "A=8x3")
    assert result.exit_code == 2 and "mode 0 of %A is static (4" in result.output


def test_run_builds_arrays_with_the_declared_strides(tmp_path, device):
    src = """func @k(%A: memref<f32x12x6x?,strided<1,16,?>>, %B: memref<f32x12x6x?,strided<1,16,?>>) {
  %one = constant 1.0 : f32
  %g = builtin.group_id : index
  %a = subview %A[:, :, %g] : memref<f32x12x6,strided<1,16>>
  %b = subview %B[:, :, %g] : memref<f32x12x6,strided<1,16>>
  axpby.n %one, %a, %one, %b
}
"""
    result = invoke("run", write(tmp_path, src), "--batch", "3", "--check", "--repeat", "1")
    assert result.exit_code == 0, result.output
    assert "%A: f32 12x6x3 strides 1,16,96" in result.output
    assert "results match" in result.output


def test_memory_check_counts_the_batch(tmp_path):
    from tinyc.diagnostics import UsageError
    from tinyc.harness.arguments import Plan, check_memory
    from tinyc.ir.types import f32, memref_type
    from tinyc.signature import KernelInfo, ParamInfo

    info = KernelInfo("k", (ParamInfo("A", memref_type(f32, (1024, -1))),), (16, 1), 16)
    plan = Plan({"A": (1024, 10**6)}, {}, 4 * 1024 * 10**6)
    with pytest.raises(UsageError, match="the arguments need 4.1 GB"):
        check_memory(plan, info, free_bytes=8 << 30)
    check_memory(plan, info, free_bytes=64 << 30)


# ---------------------------------------------------------------- tinyc run --check

WHOLE = """func @k(%A: memref<f32x8>, %B: memref<f32x8>) {
  %z = constant 0 : index
  %g = builtin.group_id : index
  %first = cmp.ge %g, %z : bool
  if %first {
    %x = load %A[%z] : f32
    store %x, %B[%z]
  }
}
"""
"""Every work-group writes B[0] (the same value): an output the group id does not index. (It
reads the group id: a kernel that does not is launched with batch 1 only, harness/batches.py.)"""


def test_check_fails_when_nothing_can_be_compared(tmp_path, device, monkeypatch):
    import tinyc.harness.check

    path = write(tmp_path, WHOLE)
    small = invoke("run", path, "--batch", "4", "--check", "--repeat", "1")
    assert small.exit_code == 0 and "compared %B (8 elements, every work-group of 4)" in small.output
    monkeypatch.setattr(tinyc.harness.check, "FULL_CHECK_SECONDS", 0.0)  # every work-group: too slow
    large = invoke("run", path, "--batch", "300", "--check", "--repeat", "1")
    assert large.exit_code == 1
    assert "check: nothing could be compared" in large.output
    assert "%B (not partitioned by work-group" in large.output


def test_check_runs_every_work_group_when_the_sample_cannot_be_sliced(tmp_path, device):
    """Beyond 256 work-groups, an output the group id does not index is compared whole when
    the reference is fast enough over every work-group."""
    path = write(tmp_path, WHOLE)
    large = invoke("run", path, "--batch", "300", "--check", "--repeat", "1")
    assert large.exit_code == 0, large.output
    assert "compared %B (8 elements, every work-group of 300)" in large.output


def test_check_with_no_output_fails(tmp_path, device):
    path = write(tmp_path, "func @k(%A: memref<f32x8>) {}\n")
    result = invoke("run", path, "--check", "--repeat", "1")
    assert result.exit_code == 1 and "the kernel writes no array argument" in result.output


def test_run_check_bounds_reports_the_access(tmp_path, device):
    src = """func @k(%A: memref<f32x?>, %B: memref<f32x?>, %n: index) {
  %c0 = constant 0 : index
  %x = load %A[%n] : f32
  store %x, %B[%c0]
}
"""
    path = write(tmp_path, src)
    result = invoke("run", path, "--size", "n=20", "--check-bounds", "--repeat", "1")
    assert result.exit_code == 1
    # the launch check refuses it before anything runs (same access), else the checked run reports it
    assert (f"out-of-bounds access at {path}:3.3: index (20,) is outside the shape (16,)" in result.output
            or "`load` at 3.3 reaches entry 20 of mode 0 of %A (memref<f32x?>), which has 16 entries"
            in result.output), result.output


# ---------------------------------------------------------------- Ctrl-C

SLOW = """func @slow(%A: memref<f32x?>) {
  %c0 = constant 0 : index
  %big = constant 400000000000 : index
  %s = constant 0.0 : f32
  %r = for %i = %c0, %big init(%acc = %s) -> (f32) {
    %x = load %A[%c0] : f32
    %y = arith.mul %acc, %x : f32
    %z = arith.add %y, %x : f32
    yield (%z)
  }
  store %r, %A[%c0]
}
"""


@pytest.mark.parametrize("command", ["run", "bench"])
def test_ctrl_c_stops_a_long_kernel(tmp_path, command, device):
    path = write(tmp_path, SLOW)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "tinyc.cli", command, path, "--repeat", "1",
                             "--batch", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.time() + 120
    line = b""
    while time.time() < deadline and b"arguments:" not in line:  # compiled, built, launching
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
    time.sleep(2)
    assert proc.poll() is None, proc.stderr.read().decode()
    sent = time.time()
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.time() - sent < 10
    assert code == 130
    err = proc.stderr.read().decode()
    assert "Traceback" not in err and "interrupted" in err
