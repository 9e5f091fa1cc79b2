"""Kernels of `tinyc.contract([...statements...])` run under `tinyc.distributed`: `c.bind(...)`
gives the kernel, its arguments and the work-groups; root's arrays are scattered over the
ranks, and the result is NumPy's (statements_reference.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import tinyc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))
from statements_reference import assert_close, bound_terms, run  # noqa: E402

DG = ["T[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]", "Q2[k,q,e] = Q[k,q,e] + dt * T[k,q,e]"]
SHAPES = {"K": (3, 20, 20), "Q": (20, 9, None), "A": (3, 9, 9, None), "Q2": (20, 9, None)}


def test_a_statements_kernel_over_the_ranks(comm, local):
    c = tinyc.contract(DG, shapes=SHAPES, dtype="f64", device=local[0])
    rng = np.random.default_rng(5)
    n = 37
    given = {name: np.array(rng.standard_normal(tuple(n if x is None else x for x in shape)),   # the
                            order="F" if shape[-1] is None else "C")                           # default layouts
             for name, shape in SHAPES.items()}
    arrays = {name: a.copy(order="K") for name, a in given.items()}
    if comm.Get_rank() == 0:
        bound = c.bind(**arrays, dt=0.25)
        assert bound.kernel is c.kernel       # the layouts c was compiled for: every rank has it
        args, groups = bound.args, bound.groups
    else:
        args, groups = [None] * len(c.arguments), 0
    info = tinyc.distributed.run(c.kernel, *args, batch=groups, comm=comm, root=0)
    assert info.batch == n and sum(comm.allgather(info.count)) == n
    if comm.Get_rank() == 0:
        want = run(DG, given, {"dt": 0.25})
        magnitude = run(DG, given, {"dt": 0.25}, absolute=True)
        assert_close(arrays["Q2"], want["Q2"], magnitude["Q2"], bound_terms(DG, given), np.float64)
