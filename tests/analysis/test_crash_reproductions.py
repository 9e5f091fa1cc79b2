"""The crashes of issue 19, reproduced: each launch now refuses or computes the right result.

`tinyc einsum 'bij,bjk->bik' --shape A=1000x8x8 --shape B=1000x8x8 > k.ir`
printed a kernel that handles 4 batch entries per work-group; `tinyc run k.ir
--batch 1000`, `tinyc bench k.ir` and `k(..., batch=1000)` then read and
wrote far past the arrays (segmentation faults, heap aborts). Each must now
run correctly (checked against NumPy) or be refused before anything runs,
naming the argument, the mode and the largest batch that fits. The commands
run in a child process, so a crash would show as its exit status.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tinyc
from tinyc.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def printed(subscripts: str, *shapes: str) -> str:
    args = ["einsum", subscripts] + [x for s in shapes for x in ("--shape", s)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def kernel_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("einsum") / "k.ir"
    path.write_text(printed("bij,bjk->bik", "A=1000x8x8", "B=1000x8x8"))
    return path


def tinyc_command(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tinyc.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def test_tinyc_run_with_the_element_count_as_batch(device, kernel_file):
    done = tinyc_command("run", str(kernel_file), "--batch", "1000", "--check", "--repeat", "1")
    assert done.returncode in (0, 2), done.stdout + done.stderr  # never 134 or 139
    if done.returncode == 2:
        assert "--batch 1000" in done.stderr and "argument '" in done.stderr and "mode" in done.stderr
        assert "the largest batch these arguments take is" in done.stderr
    else:
        assert "results match the NumPy reference" in done.stdout


def test_tinyc_bench_at_its_defaults(device, kernel_file):
    done = tinyc_command("bench", str(kernel_file), "--repeat", "2", "--warmup", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "batch " in done.stdout


def test_the_kernel_called_from_python(device, kernel_file):
    k = tinyc.compile(kernel_file.read_text())["einsum"]
    rng = np.random.default_rng(0)
    A, B = (rng.standard_normal((1000, 8, 8)).astype(np.float32) for _ in range(2))
    out = np.zeros((1000, 8, 8), np.float32)
    want = np.einsum("bij,bjk->bik", A, B)
    args = (np.float32(1), np.float32(0), A.T, B.T, out.T)  # column-major views; the batch a `?` mode
    try:
        k(*args, batch=1000)  # more work-groups than entries: those past the last do nothing
    except tinyc.LaunchError as err:
        assert err.max_batch == k.info.max_batch(*args) >= 1
        assert "argument '" in str(err) and "mode" in str(err)
        np.testing.assert_array_equal(out, 0)  # nothing ran
        k(*args)  # the batch the arguments take: every entry
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("subscripts, shapes", [
    ("bij,bjk->bik", ("A=7x5x3", "B=7x3x4")),
    ("bij,jk->bik", ("A=33x4x4", "B=4x4")),
    ("ijb,jkb->ikb", ("A=4x4x50", "B=4x4x50")),
    ("bi,bi->b", ("A=13x16", "B=13x16")),
])
@pytest.mark.parametrize("batch", [1, 2, 7, 100, 1000, 10**9])
def test_printed_contractions_at_many_batches(device, tmp_path, subscripts, shapes, batch):
    """`tinyc run --check` of printed programs: exit 0 with matching results, or 2 (refused)."""
    path = tmp_path / "c.ir"
    path.write_text(printed(subscripts, *shapes))
    check = ["--check"] if batch <= 256 else []  # (beyond, --check samples work-groups)
    result = CliRunner().invoke(cli, ["run", str(path), "--batch", str(batch), "--repeat", "1", *check])
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 0 and check:
        assert "results match the NumPy reference" in result.output, result.output
    elif result.exit_code == 2:  # the batch does not fit the arrays, or they would not fit in memory
        assert any(why in result.output for why in ("largest batch", "no batch fits", "free", "the device allows")), result.output


def test_tinyc_tune_refuses_a_batch_the_kernel_cannot_take(device, kernel_file, tmp_path, monkeypatch):
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, ["tune", str(kernel_file), "--batch", "1000", "--budget", "0.1"])
    assert result.exit_code == 2, result.output
    assert "--batch 1000" in result.output and "largest batch these arguments take is 250" in result.output
