"""Kernels of `tinyc.contract(einsum)` and of the recipes run under `tinyc.distributed`:
`c.bind(...)` gives the kernel, its arguments and the work-groups; root launches them over
the ranks (whole on one rank where the kernel's batch cannot be split); results against NumPy."""

from __future__ import annotations

import numpy as np

import tinyc


def test_a_contraction_kernel_over_the_ranks(comm, local):
    c = tinyc.contract("ikb,kjb->ijb", (8, 6, None), (6, 5, None), dtype="f64", device=local[0])
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((8, 6, 300)), rng.standard_normal((6, 5, 300))
    if comm.Get_rank() == 0:
        bound = c.bind(A, B, alpha=0.5)
        assert bound.kernel is c.program["einsum"]    # the kernel c compiled: every rank has it
        args, groups = bound.args, bound.groups
    else:
        args, groups = [None] * len(c.program["einsum"].info.params), 0
    info = tinyc.distributed.run(c.program["einsum"], *args, batch=groups, comm=comm, root=0)
    assert info.batch == comm.bcast(groups, root=0)
    if comm.Get_rank() == 0:
        want = 0.5 * np.einsum("ikb,kjb->ijb", A, B)
        bound_error = 8 * 2.0 ** -53 * 0.5 * np.einsum("ikb,kjb->ijb", np.abs(A), np.abs(B))
        assert np.all(np.abs(bound.written["out"] - want) <= bound_error)


def test_a_recipe_kernel_over_the_ranks(comm, local):
    r = tinyc.recipes.small_gemm_batched("f64", "n", "n", 6, 5, 4, 6, 24, 4, 20, 6, 30, device=local[0])
    rng = np.random.default_rng(4)
    A = np.asfortranarray(rng.standard_normal((6, 4, 40)))
    B = np.asfortranarray(rng.standard_normal((4, 5, 40)))
    C = np.asfortranarray(rng.standard_normal((6, 5, 40)))
    before = C.copy()
    kernel = r.kernel(1.0)
    info = tinyc.distributed.run(kernel, 2.0, A, B, 1.0, C, batch=40, comm=comm, root=0)
    assert sum(comm.allgather(info.count)) == 40
    if comm.Get_rank() == 0:
        want = 2.0 * np.einsum("mkb,knb->mnb", A, B) + before
        magnitude = 2.0 * np.einsum("mkb,knb->mnb", np.abs(A), np.abs(B)) + np.abs(before)
        assert np.all(np.abs(C - want) <= 6 * 2.0 ** -53 * magnitude)
