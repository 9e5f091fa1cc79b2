"""The crashes of issue 19, reproduced: each launch now refuses or computes the right result.

`tinyc einsum 'bij,bjk->bik' --shape A=1000x8x8 --shape B=1000x8x8 > k.ir`
printed a kernel that handles 4 batch entries per work-group; `tinyc run k.ir
--batch 1000`, `tinyc bench k.ir` and `k(..., batch=1000)` then read and
wrote far past the arrays (segmentation faults, heap aborts). Each must now
run correctly (checked against NumPy) or be refused before anything runs,
naming the argument, the mode and the largest batch that fits: for the kernel
as printed then (tests/analysis/data/issue19_einsum.ir: refused) and as
printed now (guarded blocks over a `?` batch mode: correct at any batch). The
commands run in a child process, so a crash would show as its exit status.
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
from tinyc.ir.types import GroupType

ROOT = Path(__file__).resolve().parents[2]


def printed(subscripts: str, *shapes: str) -> str:
    args = ["einsum", subscripts] + [x for s in shapes for x in ("--shape", s)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result.output


ISSUE_KERNEL = Path(__file__).parent / "data" / "issue19_einsum.ir"
"""The kernel as `tinyc einsum` printed it when the issue was filed: a group of one
memref<f32x8x8x1000>, 4 entries per work-group, no guard (250 work-groups fit)."""


@pytest.fixture(scope="module")
def printed_now(tmp_path_factory) -> Path:
    """The kernel as `tinyc einsum` prints it today: a `?` batch mode, guarded blocks."""
    path = tmp_path_factory.mktemp("einsum") / "k.ir"
    path.write_text(printed("bij,bjk->bik", "A=1000x8x8", "B=1000x8x8"))
    return path


@pytest.fixture(scope="module", params=["as printed in the issue", "as printed now"])
def kernel_file(request, printed_now) -> Path:
    return ISSUE_KERNEL if request.param == "as printed in the issue" else printed_now


def tinyc_command(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tinyc.cli", *args], env=env, capture_output=True, text=True,
                          timeout=600)


def test_tinyc_run_with_the_element_count_as_batch(device, kernel_file):
    done = tinyc_command("run", str(kernel_file), "--batch", "1000", "--check", "--repeat", "1")
    assert done.returncode in (0, 2), done.stdout + done.stderr  # never 134 or 139
    if kernel_file == ISSUE_KERNEL:  # its arrays hold 1000 entries, 4 per work-group
        assert done.returncode == 2, done.stdout + done.stderr
        assert "--batch 1000" in done.stderr and "argument '" in done.stderr and "mode 2" in done.stderr
        assert "the largest batch these arguments take is 250" in done.stderr
    else:  # `?` sized for the batch; work-groups past the entries do nothing
        assert done.returncode == 0, done.stdout + done.stderr
        assert "results match the NumPy reference" in done.stdout


def test_tinyc_bench_at_its_defaults(device, kernel_file):
    done = tinyc_command("bench", str(kernel_file), "--repeat", "2", "--warmup", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "batch " in done.stdout


def test_tinyc_bench_refuses_a_batch_the_kernel_cannot_take(device):
    result = CliRunner().invoke(cli, ["bench", str(ISSUE_KERNEL), "--batch", "1000", "--repeat", "1",
                                      "--warmup", "0"])
    assert result.exit_code == 2, result.output
    assert "--batch 1000" in result.output and "argument '" in result.output and "mode 2" in result.output
    assert "largest batch these arguments take is 250" in result.output


def python_arguments(k, A, B, out):
    """The arrays as the kernel's parameters take them: a group of one column-major view
    (the issue's kernel), or the column-major view itself (a `?` batch mode)."""
    views = (A.T, B.T, out.T)  # column-major views of C-order arrays
    if isinstance(k.info.params[2].type, GroupType):
        views = tuple([v] for v in views)
    return (np.float32(1), np.float32(0), *views)


def test_the_kernel_called_from_python(device, kernel_file):
    k = tinyc.compile(kernel_file.read_text())["einsum"]
    rng = np.random.default_rng(0)
    A, B = (rng.standard_normal((1000, 8, 8)).astype(np.float32) for _ in range(2))
    want = np.einsum("bij,bjk->bik", A, B)
    for batch in (1000, None):  # None: inferred from the arrays (250 work-groups of 4 entries)
        out = np.zeros((1000, 8, 8), np.float32)
        args = python_arguments(k, A, B, out)
        if kernel_file == ISSUE_KERNEL and batch == 1000:
            with pytest.raises(tinyc.LaunchError) as info:
                k(*args, batch=batch)
            err = info.value
            assert err.max_batch == k.info.max_batch(*args) == 250
            assert "argument '" in str(err) and "mode 2" in str(err)
            np.testing.assert_array_equal(out, 0)  # nothing ran
            continue
        k(*args, **({"batch": batch} if batch else {}))
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    assert k.inferred_batch(*args) == 250


PRINTED = [
    ("bij,bjk->bik", ("A=7x5x3", "B=7x3x4")),
    ("bij,jk->bik", ("A=33x4x4", "B=4x4")),
    ("ijb,jkb->ikb", ("A=4x4x50", "B=4x4x50")),     # the batch fastest: lanes
    ("bi,bi->b", ("A=13x16", "B=13x16")),
    ("kl,lmb,mn->knb", ("A=5x6", "B=6x4x30", "C=4x3")),   # a chain: intermediates in local memory
    ("ijab,jkab->ikab", ("A=3x4x2x9", "B=4x5x2x9")),     # two batch modes
    ("ib,jb->ijb", ("A=5x40", "B=3x40")),
]


@pytest.mark.parametrize("subscripts, shapes, batch", [
    (subscripts, shapes, batch) for k, (subscripts, shapes) in enumerate(PRINTED)
    for batch in ((1, 2, 7, 100, 1000, 10**9) if k < 4 else (1, 7, 1000, 10**9))])  # (CI time)
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
        assert any(why in result.output for why in (
            "largest batch", "no batch fits", "free", "the device allows")), result.output


@pytest.mark.parametrize("subscripts, shapes", PRINTED[2:5])
def test_printed_contractions_benched_at_many_batches(device, tmp_path, subscripts, shapes):
    """`tinyc bench` of printed programs at its default batch and others: timed, or refused
    with exit 2 (never a crash: these run in this process)."""
    path = tmp_path / "c.ir"
    path.write_text(printed(subscripts, *shapes))
    for batch in (None, 3, 64, 5000):
        options = ["--batch", str(batch)] if batch else []
        result = CliRunner().invoke(cli, ["bench", str(path), "--repeat", "1", "--warmup", "0", *options])
        assert result.exit_code in (0, 2), result.output
        if result.exit_code == 0:
            assert "batch " in result.output, result.output
        else:
            assert "--batch" in result.output, result.output


def test_tinyc_tune_refuses_a_batch_the_kernel_cannot_take(device, tmp_path, monkeypatch):
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, ["tune", str(ISSUE_KERNEL), "--batch", "1000", "--budget", "0.1"])
    assert result.exit_code == 2, result.output
    assert "--batch 1000" in result.output and "largest batch these arguments take is 250" in result.output
