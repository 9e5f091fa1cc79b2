"""A kernel that cannot tell its work-groups apart takes `tinyc run --batch 1` only.

A kernel that reads neither `builtin.group_id` nor `builtin.group_size` does the
same work in every work-group; where it writes an argument (not by atomic adds),
more than one work-group only writes the same elements again, racing where the
kernel also reads them (`out = alpha·A·B + beta·out`). `tinyc einsum` prints such
programs for contractions without a batch ("static shapes; launch 1 work-group"):
issue 20 asks that a batch other than the header's be refused. The compiler
names those arguments (`LaunchBounds.repeated_writes`); `tinyc run`, `bench` and
`tune` launch batch 1 by default and refuse `--batch N > 1` (exit 2).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli

SAME_WORK = """func @k(%A: memref<f32x8>, %B: memref<f32x8>) {
  %z = constant 0 : index
  %x = load %A[%z] : f32
  %y = load %B[%z] : f32
  %s = arith.add %x, %y : f32
  store %s, %B[%z]
}
"""
"""B[0] += A[0]: every work-group would add A[0] again."""

COUNTS = """func @k(%B: memref<i32x1>) {
  %z = constant 0 : index
  %one = constant 1 : i32
  store.atomic_add %one, %B[%z]
}
"""
"""Counts its work-groups: atomic adds commute, so any batch is meaningful."""

BY_GROUP = """func @k(%A: memref<f32x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %x = load %A[%g] : f32
  store %x, %B[%g]
}
"""


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_the_compiler_names_what_every_work_group_writes_alike():
    assert tinyc.compile(SAME_WORK)["k"].info.launch.repeated_writes == ("%B",)
    assert tinyc.compile(BY_GROUP)["k"].info.launch.repeated_writes == ()
    assert tinyc.compile(COUNTS)["k"].info.launch.repeated_writes == ()


def test_run_refuses_another_batch_and_defaults_to_one(tmp_path: Path, device):
    path = tmp_path / "same.ir"
    path.write_text(SAME_WORK)
    refused = invoke("run", str(path), "--batch", "3", "--repeat", "1")
    assert refused.exit_code == 2
    assert ("--batch 3: kernel 'k' reads neither its group id nor the group count" in refused.output
            and "write the same elements of %B; launch it with --batch 1" in refused.output)
    assert "Traceback" not in refused.output
    for command in (["run", "--check"], ["bench", "--warmup", "0"]):
        result = invoke(command[0], str(path), *command[1:], "--repeat", "1")
        assert result.exit_code == 0, result.output
        assert "k: batch 1," in result.output
    assert invoke("run", str(path), "--batch", "1", "--check", "--repeat", "1").exit_code == 0


def test_atomic_adds_and_kernels_that_read_the_group_id_take_any_batch(tmp_path: Path, device):
    for name, text in (("counts.ir", COUNTS), ("by_group.ir", BY_GROUP)):
        path = tmp_path / name
        path.write_text(text)
        result = invoke("run", str(path), "--batch", "5", "--repeat", "1")
        assert result.exit_code == 0, result.output
        assert "k: batch 5," in result.output


def test_the_api_still_launches_what_it_is_asked(device):
    """`Kernel.__call__` follows the spec (batch = work-groups): B[0] += A[0] five times."""
    k = tinyc.compile(SAME_WORK)["k"]
    A, B = np.full(8, 2.0, np.float32), np.zeros(8, np.float32)
    k(A, B, batch=5)
    assert B[0] in np.arange(2.0, 11.0, 2.0)   # racing adds: 2 to 10, never outside
    assert (B[1:] == 0).all()


def test_a_printed_program_without_a_batch_runs_only_as_its_header_says(tmp_path: Path):
    printed = subprocess.run([sys.executable, "-m", "tinyc.cli", "einsum", "ij,jk->ik", "--shape", "A=4x5",
                              "--shape", "B=5x3"], capture_output=True, text=True, check=True).stdout
    assert "; static shapes (no batch label); launch 1 work-group" in printed
    path = tmp_path / "static.ir"
    path.write_text(printed)
    run = [sys.executable, "-m", "tinyc.cli", "run", str(path), "--check", "--repeat", "1"]
    ok = subprocess.run(run, capture_output=True, text=True)
    assert ok.returncode == 0 and "results match the NumPy reference" in ok.stdout + ok.stderr, ok.stderr
    refused = subprocess.run(run + ["--batch", "2000"], capture_output=True, text=True)
    assert refused.returncode == 2 and "launch it with --batch 1" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_mpiexec_refuses_it_too(tmp_path: Path):
    """Under mpiexec the batch is split before the harness sees it (cli/mpi_run.py)."""
    import os
    import shutil
    import sysconfig

    path = tmp_path / "same.ir"
    path.write_text(SAME_WORK)
    mpiexec = os.path.join(sysconfig.get_path("scripts"), "mpiexec")
    mpiexec = mpiexec if os.path.exists(mpiexec) else shutil.which("mpiexec")
    assert mpiexec, "the mpich wheel (tinyc[test]) provides mpiexec"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([mpiexec, "-n", "2", sys.executable, "-m", "tinyc.cli", "run", str(path), "--batch", "3"],
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "launch it with --batch 1" in done.stderr and "Traceback" not in done.stderr
