"""`tinyc einsum`: the generated program (checks), the lowered IR, --bench, and its errors."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from tinyc.cli import cli
from tinyc.compiler import check_source


def run(*args: str):
    return CliRunner().invoke(cli, ["einsum", *args])


def test_emit_ir_is_a_program_tinyc_checks(tmp_path):
    result = run("ikb,jk,jl->ilb", "--shape", "A=16x8x100", "--shape", "B=8x8", "--shape", "C=8x16")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("; einsum 'ikb,jk,jl->ilb' with A=16x8x100, B=8x8, C=8x16")
    check_source(result.output, "einsum.ir")
    assert result.output.count("func @einsum") == 1 and "alloca" in result.output
    path = tmp_path / "k.ir"
    path.write_text(result.output)
    checked = subprocess.run([sys.executable, "-m", "tinyc.cli", "check", str(path)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_emit_lowered_and_dtype():
    result = run("ij,jk->ik", "--shape", "4x5", "--shape", "5x6", "--dtype", "f64", "--emit", "lowered")
    assert result.exit_code == 0, result.output
    assert "memref<f64x5x4>" in result.output and "cooperative_matrix_mul_add" in result.output
    assert "gemm" not in result.output.split("func", 1)[1]       # lowered: no collectives left


def test_errors_name_the_subscript():
    result = run("ij,jk->ik", "--shape", "4x5", "--shape", "6x6")
    assert result.exit_code == 1
    assert "size of subscript 'j' is 5 in operand 0 but 6 in operand 1" in result.output
    assert run("ij,jk->ik", "--shape", "4x5").exit_code == 1
    bad_shape = run("ij->ji", "--shape", "4x5y")
    assert bad_shape.exit_code == 2 and "NAME=D1xD2x" in bad_shape.output


def test_bench_against_numpy(device):
    result = run("bij,bjk->bik", "--shape", "50x4x4", "--shape", "50x4x4", "--bench", "--repeat", "2")
    assert result.exit_code == 0, result.output
    assert "path: bij,bjk->bik" in result.output
    assert "np.einsum(optimize=True)" in result.output and "speedup over NumPy" in result.output
    error = float(result.output.split("max error vs NumPy: ")[1].split()[0])
    assert error < 1e-5
