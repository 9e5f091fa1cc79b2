"""`tinyc check`: exit codes, rendered diagnostics, JSON output."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tinyc.cli import cli

SAMPLES = sorted((Path(__file__).resolve().parents[1] / "samples").glob("*.ir"))

GEMM_MISMATCH = """\
; C (8x8) cannot hold A (8x4) times B (8x8)
func @bad(%A: memref<f32x8x4>, %B: memref<f32x8x8>, %C: memref<f32x8x8>) {
  %one = constant 1.0 : f32
  gemm.n.n %one, %A, %B, %one, %C
}
"""

SYNTAX_ERROR = """\
func @bad(%A: memref<f32x8x8>) {
  %x = constant 2 -> i32
}
"""


def run(*args: str):
    return CliRunner().invoke(cli, ["check", *args])


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_all_samples_check():
    assert len(SAMPLES) >= 9
    result = run(*map(str, SAMPLES))
    assert result.exit_code == 0, result.output
    assert result.output == ""


def test_syntax_error_prints_location_excerpt_and_exits_1(tmp_path):
    path = write(tmp_path, "syntax.ir", SYNTAX_ERROR)
    result = run(path)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{path}:2.19-20: error: unexpected '->', expected ':'",
        "  %x = constant 2 -> i32",
        "                  ^^",
        "hint: the type follows ':', as in '%x = constant 2 : i32'",
    ]


def test_gemm_shape_mismatch_prints_location_excerpt_and_exits_1(tmp_path):
    path = write(tmp_path, "gemm.ir", GEMM_MISMATCH)
    result = run(path)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    # spec (gemm): op(A) is M×K and op(B) is K×N; A is 8×4, B 8×8
    assert lines[:3] == [
        f"{path}:4.3-33: error: gemm: columns of op(A) (4) do not match rows of op(B) (8)",
        "  gemm.n.n %one, %A, %B, %one, %C",
        "  " + "^" * 31,
    ]
    assert f"{path}:2.11-12: note: '%A' is defined here with type memref<f32x8x4>" in lines
    assert f"{path}:2.32-33: note: '%B' is defined here with type memref<f32x8x8>" in lines


def test_missing_file_is_a_usage_error(tmp_path):
    result = run(str(tmp_path / "nope.ir"))
    assert result.exit_code == 2
    assert "nope.ir" in result.output


def test_no_file_is_a_usage_error():
    assert run().exit_code == 2


def test_json_format_lists_diagnostics(tmp_path):
    path = write(tmp_path, "syntax.ir", SYNTAX_ERROR)
    result = run("--format", "json", path)
    assert result.exit_code == 1
    diagnostics = json.loads(result.stdout)
    assert isinstance(diagnostics, list) and len(diagnostics) == 1
    d = diagnostics[0]
    assert (d["file"], d["line"], d["column"], d["end_column"]) == (path, 2, 19, 20)
    assert d["message"] == "unexpected '->', expected ':'"
    assert d["hints"] == ["the type follows ':', as in '%x = constant 2 : i32'"]
    assert d["severity"] == "error"


def test_json_format_for_valid_files_is_an_empty_list():
    result = run("--format", "json", str(SAMPLES[0]))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []


def test_name_errors_are_all_reported_with_notes(tmp_path):
    path = write(tmp_path, "names.ir", "func @f(%a: f32) {\n"
                                        "  %x = arith.add %a, %b : f32\n"
                                        "  %a = arith.add %a, %a : f32\n"
                                        "}\n")
    result = run("--format", "json", path)
    assert result.exit_code == 1
    got = [(d["line"], d["column"], d["message"]) for d in json.loads(result.stdout)]
    assert got == [(2, 22, "undefined value '%b'"), (3, 3, "redefinition of '%a'")]
    note = json.loads(result.stdout)[1]["notes"][0]
    assert (note["line"], note["column"], note["message"]) == (1, 9, "'%a' is first defined here")


def test_good_and_bad_files_together_exit_1(tmp_path):
    bad = write(tmp_path, "bad.ir", SYNTAX_ERROR)
    result = run(str(SAMPLES[0]), bad)
    assert result.exit_code == 1
    assert bad in result.stderr and str(SAMPLES[0]) not in result.stderr


def test_binary_garbage_is_reported_not_crashed(tmp_path):
    path = tmp_path / "garbage.ir"
    path.write_bytes(b"\xff\xfe\x00func")
    result = run(str(path))
    assert result.exit_code in (1, 2)
    assert "Traceback" not in result.output


TEARDOWN_PROBE = """
import atexit, sys
atexit.register(lambda: print("teardown ran", file=sys.stderr))
sys.argv = ["tinyc"] + sys.argv[1:]
from tinyc.cli import main
main()
"""


def _console(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", TEARDOWN_PROBE, *args], capture_output=True, text=True,
                          timeout=120)


def test_check_ends_without_the_interpreter_teardown_and_its_output_complete(tmp_path):
    """`tinyc check` skips the teardown (2 s after a 40,000-instruction check); what it printed
    is all there and the exit code is kept."""
    bad = tmp_path / "bad.ir"
    bad.write_text("func @k(%a: memref<f32x4>) {\n  %x = load %a[%i] : f32\n}\n")
    good = tmp_path / "good.ir"
    good.write_text("func @k() {}\n")
    done = _console("check", str(bad))
    assert done.returncode == 1
    assert "bad.ir:2.16-17: error: undefined value '%i'" in done.stderr
    assert "teardown ran" not in done.stderr
    done = _console("check", "--format", "json", str(bad), str(good))
    assert done.returncode == 1 and json.loads(done.stdout)[0]["line"] == 2
    assert _console("check", str(good)).returncode == 0
    assert _console("check", str(tmp_path / "missing.ir")).returncode == 2


def test_other_commands_keep_the_teardown(tmp_path):
    good = tmp_path / "good.ir"
    good.write_text("func @k() {}\n")
    done = _console("compile", str(good), "-o", str(tmp_path / "good.spv"))
    assert done.returncode == 0 and "teardown ran" in done.stderr
