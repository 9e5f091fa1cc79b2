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
    assert "static shapes (no batch label)" in result.output
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
    assert "the fastest (" in result.output  # the best NumPy-side way, not only its optimizer
    error = float(result.output.split("max error vs NumPy: ")[1].split()[0])
    assert error < 1e-5


def test_the_users_names_fmt_clean_and_the_launch_in_the_header():
    from tinyc.editor.format import format_source

    result = run("dkl,elm,edmn->ekn", "--shape", "K=3x20x20", "--shape", "Q=1000x20x9",
                 "--shape", "A=1000x3x9x9", "--dtype", "f64")
    assert result.exit_code == 0, result.output
    assert "%K: memref<f64x20x20x3>" in result.output and "%Q: memref<f64x9x20x?>" in result.output
    assert "%A: memref<f64x9x9x3x?>" in result.output
    assert format_source(result.output, "k.ir") == result.output        # `tinyc fmt --check` clean
    head = result.output.splitlines()[:4]
    assert head[1] == "; batch label e: `?` modes, one kernel for every batch size"
    assert head[2].startswith("; launch: batch = ne work-groups (1000 at ne = 1000)")
    assert head[3] == "; path: dkl,elm->dkem; edmn,dkem->ekn"
    lanes = run("ikb,kjb->ijb", "--shape", "X=16x8x1000", "--shape", "Y=8x12x1000").output
    assert "%X: memref<f32x?x8x16>" in lanes and "subgroup of 16 lanes" in lanes
    assert "batch = ceil(nb/512) work-groups (2 at nb = 1000)" in lanes
    clash = run("ij,jk->ik", "--shape", "out=4x5", "--shape", "out=5x6").output
    assert "%A: memref" in clash and "%B: memref" in clash      # taken names fall back to A, B


def test_printed_programs_run_under_tinyc_run(device, tmp_path):
    """The printed kernel runs at `tinyc run`'s defaults and at --batch N (N the entry count):
    every work-group past the entries does nothing, so no batch reads or writes outside.
    With --check of every work-group (--batch up to 256) its results match the reference."""
    for args in (["ikb,kjb->ijb", "--shape", "A=16x8x1000", "--shape", "B=8x12x1000"],
                 ["bij,bjk->bik", "--shape", "A=1000x4x4", "--shape", "B=1000x4x4"],
                 ["ikb,kj->ijb", "--shape", "A=4x3x1000", "--shape", "B=3x3", "--dtype", "f64"],
                 ["ijb,jb->ib", "--shape", "A=9x5x1000", "--shape", "x=5x1000", "--dtype", "i8"],
                 ["bij->bj", "--shape", "A=1000x6x5", "--dtype", "f16"]):
        path = tmp_path / "k.ir"
        program = run(*args).output
        path.write_text(program)
        past = str(_header_batch(program) + 1)   # one work-group past the entries: it does nothing
        for extra in ([], ["--batch", "7"], ["--batch", past]):
            done = subprocess.run([sys.executable, "-m", "tinyc.cli", "run", str(path), "--check", *extra],
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, (args, extra, done.stdout, done.stderr)
            assert "results match" in done.stdout
        done = subprocess.run([sys.executable, "-m", "tinyc.cli", "run", str(path), "--batch", "1000"],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (args, done.stdout, done.stderr)


def _header_batch(program: str) -> int:
    """The work-groups the header's launch line gives for the element count it was printed for."""
    launch = next(line for line in program.splitlines() if line.startswith("; launch: batch = "))
    return int(launch.split("work-groups (")[1].split(" at ")[0])


def _tinyc(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tinyc.cli", *args], capture_output=True, text=True,
                          timeout=900, env=env)


def test_printed_programs_run_under_bench_and_tune_at_the_headers_batch(device, tmp_path):
    """At the batch the header names for the element count (N entries): `run --check` compares
    every work-group of it with the reference, `bench` and `tune` run at it and at their
    defaults (a default whose arrays would not fit in memory is lowered: cli/batches.py)."""
    import os

    env = {**os.environ, "TINYC_CACHE_DIR": str(tmp_path / "cache")}
    for args, defaults in ((["bij,bjk->bik", "--shape", "A=1000x4x4", "--shape", "B=1000x4x4"], True),
                           (["ikb,kjb->ijb", "--shape", "A=16x8x1000", "--shape", "B=8x12x1000"], False)):
        program = run(*args).output
        path = tmp_path / "k.ir"
        path.write_text(program)
        batch = str(_header_batch(program))
        done = _tinyc("run", str(path), "--check", "--batch", batch)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert f"every work-group of {batch}" in done.stdout and "results match" in done.stdout
        for extra in (["--batch", batch], []) if defaults else (["--batch", batch],):
            done = _tinyc("bench", str(path), "--repeat", "2", *extra)
            assert done.returncode == 0, (args, extra, done.stdout, done.stderr)
            done = _tinyc("tune", str(path), "--budget", "0.2", *extra, env=env)
            assert done.returncode == 0, (args, extra, done.stdout, done.stderr)
            assert " ms (default) -> " in done.stdout and "inf ms" not in done.stdout   # timed
