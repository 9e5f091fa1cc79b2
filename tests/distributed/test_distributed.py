"""`tinyc.distributed`: one launch over MPI ranks gives what one launch on one device gives.

Runs on any number of ranks (see conftest.py). Root holds the data and
checks the gathered results against NumPy; the other ranks pass None.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest
from sharding_testlib import NOT_SPLIT, ROOT, SHARDED, fortran, sample

import tinyc
from tinyc.runtime import sharding


def kernel(programs, local, source: str, name: str):
    if source not in programs:
        programs[source] = tinyc.compile(source, device=local[0])
    return programs[source][name]


def on_root(comm, root, *values):
    """The values on root, None elsewhere (what non-root ranks pass to run)."""
    return values if comm.Get_rank() == root else (None,) * len(values)


def fused_reference(alpha, A, B, C, D):
    stacked = np.stack(A, -1) if isinstance(A, list) else A
    return D + alpha * np.einsum("ijb,kj,kl->ilb", stacked, B, C)


def test_local_device(comm, local, device):
    labels = comm.allgather(local.labels[0])
    if comm.Get_size() == 1:
        assert labels == [device.filter_string]  # one rank: the whole device
    elif comm.Get_size() == 2:  # two ranks on the node: the two halves of the CPU
        assert labels == [f"{device.filter_string}/0", f"{device.filter_string}/1"]
    assert tinyc.distributed.local_device(comm) == local[0]  # the same device every time


def test_fused_kernel(comm, local, programs):
    k = kernel(programs, local, sample("fused_kernel"), "fused_kernel")
    rng = np.random.default_rng(3)
    n = 77
    A = [fortran(rng, (16, 8)) for _ in range(n)]
    B, C, D = fortran(rng, (8, 8)), fortran(rng, (8, 16)), fortran(rng, (16, 16, n))
    expect = fused_reference(0.25, A, B, C, D)
    one = D.copy(order="F")
    k(0.25, A, B, C, one, batch=n)  # one launch on this rank's device
    info = tinyc.distributed.run(k, 0.25, *on_root(comm, 0, A, B, C, D), batch=n, comm=comm, root=0)
    parts = comm.allgather((info.start, info.count))
    assert [s for s, _ in parts] == list(np.cumsum([0] + [c for _, c in parts])[:-1])
    assert sum(c for _, c in parts) == info.batch == n
    if comm.Get_rank() == 0:
        assert [r[2] for r in info.ranks] == [c for _, c in parts]
        np.testing.assert_array_equal(D, one)
        np.testing.assert_allclose(D, expect, rtol=1e-5, atol=1e-4)


def test_batched_gemm_last_rank_is_root(comm, local, programs):
    k = kernel(programs, local, sample("batched_gemm"), "batched_gemm")
    root = comm.Get_size() - 1
    rng = np.random.default_rng(4)
    n = 19
    A, B = fortran(rng, (32, 32, n + 2)), fortran(rng, (32, 32, n))
    C = np.full((32, 32, n), np.nan, dtype=np.float32, order="F")
    tinyc.distributed.run(k, *on_root(comm, root, A, B, C), batch=n, comm=comm, root=root)
    if comm.Get_rank() == root:
        np.testing.assert_allclose(C, np.einsum("ikb,kjb->ijb", A[:, :, :n], B), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("stacked", [False, True])
def test_group_offset_and_weights(comm, local, programs, stacked):
    k = kernel(programs, local, sample("group_offset"), "group_offset")
    rng = np.random.default_rng(5)
    n, offset = 23, 2
    flat = rng.standard_normal((offset + 64, n)).astype(np.float32, order="F")
    members = flat if stacked else [np.ascontiguousarray(flat[:, g]) for g in range(n)]
    x, y = fortran(rng, (8, n)), fortran(rng, (8, n))
    expect = y + np.einsum("ijb,jb->ib", flat[offset:].reshape(8, 8, n, order="F"), x)
    weights = [3, 1, 1, 1][:comm.Get_size()] + [1] * max(0, comm.Get_size() - 4)
    group, xs, ys = on_root(comm, 0, tinyc.Group(members, offset=offset), x, y)
    info = tinyc.distributed.run(k, group, xs, ys, batch=n, comm=comm, weights=weights)
    counts = comm.allgather(info.count)
    assert counts == sharding.split_counts(n, weights)
    if comm.Get_rank() == 0:
        np.testing.assert_allclose(y, expect, rtol=1e-5, atol=1e-5)


def test_static_sizes_scalars_and_interleaved_slices(comm, local, programs):
    rng = np.random.default_rng(6)
    X, Y = fortran(rng, (4, 10)), fortran(rng, (4, 10))
    expect_y = Y + 3 * X
    tinyc.distributed.run(kernel(programs, local, SHARDED, "static_batch"), 3.0, *on_root(comm, 0, X, Y),
                          batch=10, comm=comm)
    A, Z = [rng.standard_normal(4).astype(np.float32) for _ in range(6)], fortran(rng, (4, 6))
    expect_z = Z + np.stack(A, -1)
    tinyc.distributed.run(kernel(programs, local, SHARDED, "static_group"), *on_root(comm, 0, A, Z),
                          batch=6, comm=comm)
    x, y = rng.standard_normal(9), np.arange(9, dtype=np.int32)
    tinyc.distributed.run(kernel(programs, local, SHARDED, "elements"), *on_root(comm, 0, x, y), -4,
                          batch=9, comm=comm)
    R, S = fortran(rng, (30, 5)), fortran(rng, (30, 5))
    expect_s = S.copy()
    expect_s[:25] = -R[:25]
    tinyc.distributed.run(kernel(programs, local, SHARDED, "scale_rows"), -1.0, *on_root(comm, 0, R, S[:25]),
                          batch=25, comm=comm)
    if comm.Get_rank() == 0:
        np.testing.assert_allclose(Y, expect_y, rtol=1e-6)
        np.testing.assert_allclose(Z, expect_z, rtol=1e-6)
        np.testing.assert_array_equal(y, np.arange(9) - 4)
        np.testing.assert_array_equal(S, expect_s)


def test_members_of_different_sizes(comm, local, programs):
    """A group whose members differ in size travels as pickled lists."""
    k = kernel(programs, local, SHARDED, "ragged")
    rng = np.random.default_rng(11)
    G = [rng.standard_normal(n).astype(np.float32) for n in range(1, 12)]
    s = np.zeros(11, dtype=np.float32)
    tinyc.distributed.run(k, *on_root(comm, 0, G, s), batch=11, comm=comm)
    if comm.Get_rank() == 0:
        np.testing.assert_allclose(s, [g.sum() for g in G], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ragged", [False, True])
def test_written_members(comm, local, programs, ragged):
    """Written members come back into root's arrays: stacked in one buffer, or pickled."""
    k = kernel(programs, local, SHARDED, "scale_members")
    rng = np.random.default_rng(12)
    G = [rng.standard_normal(3 + (n if ragged else 0)).astype(np.float32) for n in range(9)]
    expect = [2 * g for g in G]
    tinyc.distributed.run(k, 2.0, *on_root(comm, 0, G), batch=9, comm=comm)
    if comm.Get_rank() == 0:
        for got, want in zip(G, expect):
            np.testing.assert_array_equal(got, want)


def test_rank_local_data(comm, local, programs):
    """scatter=False: every rank launches on its own elements; gather=True joins them on root."""
    k = kernel(programs, local, sample("batched_gemm"), "batched_gemm")
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng(10 + rank)
    n = 3 + 2 * rank
    A, B = fortran(rng, (32, 32, n)), fortran(rng, (32, 32, n))
    C = np.zeros((32, 32, n), dtype=np.float32, order="F")
    info = tinyc.distributed.run(k, A, B, C, batch=n, comm=comm, scatter=False, gather=True)
    np.testing.assert_allclose(C, np.einsum("ikb,kjb->ijb", A, B), rtol=1e-4, atol=1e-4)
    everything = comm.gather(C, root=0)
    assert info.count == n and info.batch == sum(3 + 2 * r for r in range(size))
    if rank == 0:
        np.testing.assert_array_equal(info.outputs["C"], np.concatenate(everything, axis=2))
        assert set(info.outputs) == {"C"}
    else:
        assert info.outputs is None


def test_shared_output_runs_on_root(comm, local, programs):
    k = kernel(programs, local, NOT_SPLIT, "sum_all")
    rng = np.random.default_rng(8)
    X, s = fortran(rng, (8, 40)), np.zeros(8, dtype=np.float32)
    info = tinyc.distributed.run(k, *on_root(comm, 0, X, s), batch=40, comm=comm)
    assert info.count == (40 if comm.Get_rank() == 0 else 0)
    if comm.Get_rank() == 0:
        np.testing.assert_allclose(s, X.sum(axis=1), rtol=1e-5)


def test_bad_arguments_raise_on_every_rank(comm, local, programs):
    k = kernel(programs, local, sample("batched_gemm"), "batched_gemm")
    A = np.zeros((32, 32, 5), dtype=np.float32, order="F")
    with pytest.raises(tinyc.LaunchError, match=r"argument 'C'.*too small for batch=5"):
        tinyc.distributed.run(k, *on_root(comm, 0, A, A, A[:, :, :4]), batch=5, comm=comm)
    with pytest.raises(tinyc.LaunchError, match="weights has 7 entries"):
        tinyc.distributed.run(k, *on_root(comm, 0, A, A, A), batch=5, comm=comm, weights=[1] * 7)


def test_failure_on_one_rank_changes_nothing(comm, local, programs, monkeypatch):
    k = kernel(programs, local, sample("fused_kernel"), "fused_kernel")
    last = comm.Get_size() - 1
    rng = np.random.default_rng(9)
    n = 12
    A = [fortran(rng, (16, 8)) for _ in range(n)]
    B, C, D = fortran(rng, (8, 8)), fortran(rng, (8, 16)), fortran(rng, (16, 16, n))
    before = D.copy()
    if comm.Get_rank() == last:
        mine = sharding.kernels_on(k, local.queues)[0]
        # every launch of the kernel submits through its Submitter (tinyc/runtime/submit.py)
        monkeypatch.setattr(mine._submitter, "submit_raw", lambda *a: (_ for _ in ()).throw(RuntimeError("device lost")))
    with pytest.raises(tinyc.LaunchError, match=rf"failed on rank {last}: .*device lost.*{local.labels[0] if comm.Get_rank() == last else ''}"):
        tinyc.distributed.run(k, 1.0, *on_root(comm, 0, A, B, C, D), batch=n, comm=comm)
    np.testing.assert_array_equal(D, before)


def test_rank_local_failure_says_whose_outputs_changed(comm, local, programs):
    """scatter=False: ranks whose launches ran have changed their outputs; the message says so
    (and says "no output was changed" only when no launch ran)."""
    k = kernel(programs, local, sample("batched_gemm"), "batched_gemm")
    rank, last = comm.Get_rank(), comm.Get_size() - 1
    rng = np.random.default_rng(20 + rank)
    A, B = fortran(rng, (32, 32, 4)), fortran(rng, (32, 32, 4))
    C = np.zeros((32, 32, 4 if rank != last else 3), dtype=np.float32, order="F")  # too small on the last
    expected = (r"\(no output was changed\)" if last == 0 else
                r"\(the outputs of rank 0 were changed: its launch ran; the other ranks changed no output\)"
                if last == 1 else r"\(the outputs of rank 0, .* were changed")
    refusal = r"argument 'C'.*batch=4.*has 3 entries; the largest batch these arguments take is 3"
    with pytest.raises(tinyc.LaunchError, match=rf"failed on rank {last}: .*{refusal}.*{expected}"):
        tinyc.distributed.run(k, A, B, C, batch=4, comm=comm, scatter=False)
    if rank != last:   # its launch ran: C holds its product
        np.testing.assert_allclose(C, np.einsum("ikb,kjb->ijb", A, B), rtol=1e-4, atol=1e-4)
    else:
        assert not C.any()


class _TwoRanks:
    """A communicator of two ranks for `_agree`: this one, and another that reports `other`."""

    def __init__(self, other):
        self.other = other

    def Ibarrier(self):
        return type("Done", (), {"Test": lambda self: True})()

    def allgather(self, mine):
        return [mine, self.other]


@pytest.mark.parametrize("mine, other, says", [
    ((None, "r", True), (("argument 'C': bad C", "C"), "r", False),
     "failed on rank 1: argument 'C': bad C (the outputs of rank 0 were changed: its launch ran; the other ranks changed no output)"),
    ((("bad C", "C"), "r", False), (("argument 'C': bad C", "C"), "r", False),
     "failed on rank 0, 1: argument 'C': bad C (no output was changed)"),
    ((None, "r", False), (("argument 'C': bad C", "C"), "r", False),
     "failed on rank 1: argument 'C': bad C (no output was changed)"),
    ((None, "r", True), (("lost", None), "r", True),
     "failed on rank 1: lost (the outputs of rank 0, 1 were changed: their launches ran)"),
])
def test_the_failure_message_says_what_changed(mine, other, says):
    from tinyc.distributed.launch import _agree

    error = tinyc.LaunchError(mine[0][0], argument=mine[0][1]) if mine[0] else None
    with pytest.raises(tinyc.LaunchError) as info:
        _agree(_TwoRanks(other), error, "k()", mine[1], changed=mine[2])
    assert str(info.value) == f"k() {says}"


def test_root_writes_an_unsplit_numpy_output_in_place(comm, local, programs):
    """scatter=True keeps outputs unchanged on a failure, but a written argument that is not
    split (here a shared accumulator of a kernel whose batch cannot be split) is root's own."""
    from tinyc.distributed.launch import _writes_in_place
    from tinyc.distributed.transfer import Plan

    k = kernel(programs, local, sample("batched_gemm"), "batched_gemm")
    params = k.info.params
    A = np.zeros((32, 32, 2), np.float32, order="F")
    split = [Plan("slice", written=p.written) for p in params]
    assert not _writes_in_place(params, split, [A, A, A])
    whole = [Plan("whole") for _ in params]
    assert _writes_in_place(params, whole, [A, A, A])
    assert _writes_in_place(params, None, [A, A, A])


def test_tinyc_run_over_ranks(comm, tmp_path):
    """`tinyc run FILE --batch N` under mpiexec: per-rank and total times, checked results."""
    file = str(ROOT / "samples" / "fused_kernel.ir")
    args = ["run", file, "--batch", "300", "--repeat", "2", "--check"]
    if comm.Get_size() > 1:  # this test runs under mpiexec already: every rank runs the command
        from click.testing import CliRunner

        from tinyc.cli import cli

        result = CliRunner().invoke(cli, args)
        outputs = comm.gather(result.output, root=0)
        assert result.exit_code == 0, result.output
        if comm.Get_rank() == 0:
            text = outputs[0]
            assert all(f"rank {r} on " in text for r in range(comm.Get_size())), text
            assert f"over {comm.Get_size()} ranks" in text and "check: results match" in text, text
            assert not any(outputs[1:]), "only root prints"
        return
    mpiexec = os.path.join(sysconfig.get_path("scripts"), "mpiexec")
    mpiexec = mpiexec if os.path.exists(mpiexec) else shutil.which("mpiexec")
    assert mpiexec, "the mpich wheel (tinyc[mpi]) provides mpiexec"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([mpiexec, "-n", "2", sys.executable, "-m", "tinyc.cli", *args], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rank 0 on " in done.stdout and "rank 1 on " in done.stdout, done.stdout
    assert "over 2 ranks" in done.stdout and "check: results match" in done.stdout, done.stdout
