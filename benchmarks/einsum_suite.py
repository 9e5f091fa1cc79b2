"""tinyc.einsum against every NumPy-side way, on contractions of every kind, at two batch sizes.

    python -m benchmarks.einsum_suite [--batch 2000,20000] [--cases a,b] [--random 12] [--repeat 15]

The user's path on both sides: NumPy arrays in, a new array out, the kernel
already compiled (the first call at the first batch size compiles it and is
timed apart; the first call at the second batch size shows what a new batch
size costs: no compile). Per case and batch size, interleaved rounds (the
order rotating), medians:

  * tinyc.einsum(subscripts, *operands)
  * np.einsum(..., optimize=True) and np.einsum(...) (optimize=False)
  * opt_einsum.contract(...)
  * np.matmul / np.tensordot where they apply (one formulation per case,
    returning a new array of the result's shape)

Each side is also timed "settled" (settled_times): a pause, then a block of its own calls,
as a loop of time steps would run it. "best NumPy" is the fastest of those. Every result is checked against
np.einsum in float64 first. Cases cover batched matmuls in every transpose
and batch position, shared operands, chains of 3 and 4, mat-vec, outer
products, permutations (NumPy returns a view: so does tinyc), reductions,
tensor-times-matrix on 3-D tensors, two batch modes and complex types, in C
order (NumPy's default), Fortran order and mixed; `--random K` adds K
contractions drawn with a fixed seed from the same families with other
sizes (cases nobody tuned for). Writes einsum_suite.md and .json here.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from benchmarks.contractions import time_interleaved  # noqa: E402

HERE = Path(__file__).resolve().parent
Way = Callable[..., np.ndarray]


@dataclass
class Case:
    """A contraction: subscripts, operand shapes with N for the batch, dtype, memory order."""

    name: str
    family: str
    subscripts: str
    shapes: list[str]                  # "16x8xN"
    dtype: str = "float32"
    order: str = "C"                   # C, F, or mixed (operands alternate C, F)
    matmul: Way | None = None          # the np.matmul/tensordot formulation, if one applies
    extra: dict = field(default_factory=dict)

    def operand_shapes(self, n: int) -> list[tuple[int, ...]]:
        return [tuple(n if d == "N" else int(d) for d in s.split("x")) if s else () for s in self.shapes]


def _mm_batched_last(a, b):      # ijb,jkb->ikb
    return np.matmul(a.transpose(2, 0, 1), b.transpose(2, 0, 1)).transpose(1, 2, 0)


def cases() -> list[Case]:
    """The suite (hand-picked: the issue's families, NumPy's strong cases included)."""
    mm = np.matmul
    c = [
        # batched matmuls: every transpose, batch first / last / middle
        Case("bmm_first", "batched matmul", "bij,bjk->bik", ["Nx16x8", "Nx8x12"], matmul=mm),
        Case("bmm_last", "batched matmul", "ikb,kjb->ijb", ["16x8xN", "8x12xN"], matmul=_mm_batched_last),
        Case("bmm_tn_last", "batched matmul", "kib,kjb->ijb", ["8x16xN", "8x12xN"],
             matmul=lambda a, b: np.matmul(a.transpose(2, 1, 0), b.transpose(2, 0, 1)).transpose(1, 2, 0)),
        Case("bmm_nt_first", "batched matmul", "bij,bkj->bik", ["Nx16x8", "Nx12x8"],
             matmul=lambda a, b: np.matmul(a, b.transpose(0, 2, 1))),
        Case("bmm_tt_first_f64", "batched matmul", "bji,bkj->bik", ["Nx8x16", "Nx12x8"], "float64",
             matmul=lambda a, b: np.matmul(a.transpose(0, 2, 1), b.transpose(0, 2, 1))),
        Case("bmm_middle", "batched matmul", "ibk,kbj->ibj", ["16xNx8", "8xNx12"],
             matmul=lambda a, b: np.matmul(a.transpose(1, 0, 2), b.transpose(1, 0, 2)).transpose(1, 0, 2)),
        Case("bmm_last_F", "batched matmul", "ikb,kjb->ijb", ["16x8xN", "8x12xN"], order="F",
             matmul=_mm_batched_last),
        Case("bmm_first_F", "batched matmul", "bij,bjk->bik", ["Nx16x8", "Nx8x12"], order="F", matmul=mm),
        Case("bmm_last_mixed", "batched matmul", "ikb,kjb->ijb", ["16x8xN", "8x12xN"], order="mixed",
             matmul=_mm_batched_last),
        Case("bmm_8_f64", "batched matmul", "ijb,jkb->ikb", ["8x8xN", "8x8xN"], "float64",
             matmul=_mm_batched_last),
        # shared operands
        Case("shared_right", "shared operand", "ikb,kj->ijb", ["16x8xN", "8x12"],
             matmul=lambda a, s: np.tensordot(a, s, axes=([1], [0])).transpose(0, 2, 1)),
        Case("shared_left", "shared operand", "ik,kjb->ijb", ["16x8", "8x12xN"],
             matmul=lambda s, b: np.tensordot(s, b, axes=([1], [0]))),
        Case("shared_first", "shared operand", "bik,kj->bij", ["Nx16x8", "8x12"], matmul=mm),
        Case("shared_right_F", "shared operand", "ikb,kj->ijb", ["16x8xN", "8x12"], order="F",
             matmul=lambda a, s: np.tensordot(a, s, axes=([1], [0])).transpose(0, 2, 1)),
        Case("shared_c64", "shared operand", "ikb,kj->ijb", ["12x12xN", "12x12"], "complex64",
             matmul=lambda a, s: np.tensordot(a, s, axes=([1], [0])).transpose(0, 2, 1)),
        # chains
        Case("chain3_dg", "chain", "kl,lmb,mn->knb", ["20x20", "20x9xN", "9x9"], "float64",
             matmul=lambda k, q, a: np.tensordot(np.tensordot(k, q, axes=([1], [0])), a,
                                                 axes=([1], [0])).transpose(0, 2, 1)),
        Case("chain4", "chain", "ij,jk,kl,lmb->imb", ["32x24", "24x16", "16x12", "12x8xN"],
             matmul=lambda a, b, c, x: np.tensordot(a @ b @ c, x, axes=([1], [0]))),
        Case("chain3_first", "chain", "bik,jk,jl->bil", ["Nx16x8", "8x8", "8x16"], matmul=lambda a, b, c: a @ (b.T @ c)),
        Case("chain3_batched", "chain", "ijb,jkb,klb->ilb", ["8x8xN", "8x8xN", "8x8xN"],
             matmul=lambda a, b, c: _mm_batched_last(_mm_batched_last(a, b), c)),
        Case("dg_volume", "chain", "dkl,elm,edmn->ekn", ["3x20x20", "Nx20x9", "Nx3x9x9"], "float64"),
        # mat-vec
        Case("matvec_first", "mat-vec", "bij,bj->bi", ["Nx16x16", "Nx16"], matmul=lambda a, x: np.matmul(a, x[..., None])[..., 0]),
        Case("matvec_last", "mat-vec", "ijb,jb->ib", ["16x16xN", "16xN"],
             matmul=lambda a, x: np.matmul(a.transpose(2, 0, 1), x.T[..., None])[..., 0].T),
        Case("matvec_mixed", "mat-vec", "ijb,jb->ib", ["16x16xN", "16xN"], "float64", "mixed",
             matmul=lambda a, x: np.matmul(a.transpose(2, 0, 1), x.T[..., None])[..., 0].T),
        # outer products
        Case("outer_first", "outer product", "bi,bj->bij", ["Nx16", "Nx12"],
             matmul=lambda x, y: np.matmul(x[:, :, None], y[:, None, :])),
        Case("outer_last", "outer product", "ib,jb->ijb", ["16xN", "12xN"],
             matmul=lambda x, y: np.matmul(x.T[:, :, None], y.T[:, None, :]).transpose(1, 2, 0)),
        # permutations (views on both sides)
        Case("perm_first", "permutation", "bij->bji", ["Nx16x12"]),
        Case("perm_last", "permutation", "ijb->bji", ["16x12xN"]),
        # reductions
        Case("reduce_last", "reduction", "ijb->b", ["16x12xN"]),
        Case("reduce_first", "reduction", "bij->b", ["Nx16x12"]),
        Case("reduce_keep", "reduction", "ijb->ib", ["16x12xN"]),
        Case("reduce_keep_first", "reduction", "bij->bj", ["Nx16x12"]),
        # sums over the batch (a label every operand holds, the output not: chunked.py)
        Case("batch_sum", "batch reduction", "bij->ij", ["Nx16x12"], matmul=lambda x: x.sum(axis=0)),
        Case("batch_sum_last", "batch reduction", "ijb->ij", ["16x12xN"], matmul=lambda x: x.sum(axis=2)),
        Case("weight_grad", "batch reduction", "bi,bj->ij", ["Nx16", "Nx12"], matmul=lambda x, y: x.T @ y),
        Case("weight_grad_last", "batch reduction", "ib,jb->ij", ["16xN", "12xN"], matmul=lambda x, y: x @ y.T),
        Case("bmm_batch_sum", "batch reduction", "bij,bjk->ik", ["Nx16x8", "Nx8x12"],
             matmul=lambda x, y: x.transpose(1, 0, 2).reshape(x.shape[1], -1) @ y.reshape(-1, y.shape[2])),
        Case("frobenius", "batch reduction", "bi,bi->", ["Nx16", "Nx16"],
             matmul=lambda x, y: np.dot(x.ravel(), y.ravel())),
        # tensor times matrix on 3-D tensors
        Case("ttm_mode0", "ttm", "ijkb,li->ljkb", ["8x8x8xN", "12x8"],
             matmul=lambda x, m: np.tensordot(m, x, axes=([1], [0]))),
        Case("ttm_mode2", "ttm", "ijkb,lk->ijlb", ["8x8x8xN", "12x8"],
             matmul=lambda x, m: np.tensordot(x, m, axes=([2], [1])).transpose(0, 1, 3, 2)),
        Case("ttm_first", "ttm", "bijk,lj->bilk", ["Nx8x8x8", "12x8"],
             matmul=lambda x, m: np.tensordot(x, m, axes=([2], [1])).transpose(0, 1, 3, 2)),
        # two batch modes
        Case("two_batch_last", "two batch modes", "ijab,jkab->ikab", ["8x8x20xN", "8x8x20xN"],
             matmul=lambda a, b: np.matmul(a.transpose(2, 3, 0, 1), b.transpose(2, 3, 0, 1)).transpose(2, 3, 0, 1)),
        Case("two_batch_first", "two batch modes", "abij,abjk->abik", ["20xNx8x8", "20xNx8x8"], matmul=mm),
        # complex
        Case("bmm_c64_last", "complex", "ikb,kjb->ijb", ["8x8xN", "8x8xN"], "complex64", matmul=_mm_batched_last),
        Case("bmm_c128_first", "complex", "bij,bjk->bik", ["Nx8x8", "Nx8x8"], "complex128", matmul=mm),
    ]
    for case in c:   # the batch size of a two-batch-mode case counts entries of both labels
        if case.family == "two batch modes":
            case.extra["batch_divisor"] = 20
    return c


def static_cases() -> list[Case]:
    """Contractions without a batch (`--set static`): single large products, where NumPy
    hands the work to its multi-threaded BLAS, returns a view, or runs a tight loop of its
    own — the cases where the baseline is strongest."""
    mm = np.matmul
    return [
        Case("gemm_nn", "static GEMM", "ij,jk->ik", ["512x512", "512x512"], matmul=mm),
        Case("gemm_nt", "static GEMM", "ij,kj->ik", ["512x256", "512x256"], matmul=lambda a, b: a @ b.T),
        Case("gemm_tn", "static GEMM", "ji,jk->ik", ["256x512", "256x512"], matmul=lambda a, b: a.T @ b),
        Case("gemm_out_t", "static GEMM", "ij,jk->ki", ["512x384", "384x512"], matmul=lambda a, b: (a @ b).T),
        Case("gemm_f64", "static GEMM", "ij,jk->ik", ["512x512", "512x512"], "float64", matmul=mm),
        Case("gemm_1024", "static GEMM", "ij,jk->ik", ["1024x1024", "1024x1024"], matmul=mm),
        Case("gemm_256", "static GEMM", "ij,jk->ik", ["256x256", "256x256"], matmul=mm),
        Case("gemm_long_sum", "static GEMM", "ij,jk->ik", ["64x2048", "2048x64"], matmul=mm),
        Case("gemm_wide", "static GEMM", "ij,jk->ik", ["2048x64", "64x2048"], matmul=mm),
        Case("gemm_skinny", "static GEMM", "ij,jk->ik", ["1000x300", "300x520"], matmul=mm),
        Case("gemm_c64", "static GEMM", "ij,jk->ik", ["256x256", "256x256"], "complex64", matmul=mm),
        Case("gemv", "static mat-vec", "ij,j->i", ["4096x4096", "4096"], matmul=mm),
        Case("gemv_t", "static mat-vec", "ji,j->i", ["4096x4096", "4096"], matmul=lambda a, x: x @ a),
        Case("row_dots", "static mat-vec", "ij,ij->i", ["4096x512", "4096x512"],
             matmul=lambda a, b: np.einsum("ij,ij->i", a, b)),
        Case("outer", "static outer", "i,j->ij", ["2048", "2048"], matmul=np.outer),
        Case("scale_cols", "static elementwise", "ij,j->ij", ["2048x2048", "2048"], matmul=lambda a, x: a * x),
        Case("transpose", "static permutation", "ij->ji", ["2048x2048"]),
        Case("perm4", "static permutation", "ijkl->lkji", ["32x32x32x32"]),
        Case("full_dot", "static reduction", "ijkl,ijkl->", ["32x32x32x32", "32x32x32x32"],
             matmul=lambda a, b: np.dot(a.ravel(), b.ravel())),
        Case("trace_stack", "static reduction", "bii->b", ["20000x16x16"],
             matmul=lambda a: np.trace(a, axis1=1, axis2=2)),
        Case("diagonal_stack", "static permutation", "bii->bi", ["20000x16x16"]),
        Case("ttm", "static ttm", "abc,cd->abd", ["200x100x50", "50x60"],
             matmul=lambda x, m: np.tensordot(x, m, axes=([2], [0]))),
    ]


def dtype_cases() -> list[Case]:
    """The language's other number types (`--set dtypes`): integers, whose sums wrap as
    NumPy's, and f16. Kept out of the main suite's geometric means: NumPy has no BLAS for them."""
    mm = np.matmul
    return [
        Case("i32_bmm_first", "integers and f16", "bij,bjk->bik", ["Nx16x8", "Nx8x12"], "int32", matmul=mm),
        Case("i8_bmm_last", "integers and f16", "ikb,kjb->ijb", ["16x8xN", "8x12xN"], "int8",
             matmul=_mm_batched_last),
        Case("i64_shared_left", "integers and f16", "ik,kjb->ijb", ["16x8", "8x12xN"], "int64",
             matmul=lambda s, a: np.matmul(s, a.transpose(2, 0, 1)).transpose(1, 2, 0)),
        Case("u8_reduce_last", "integers and f16", "ijb->b", ["16x12xN"], "uint8"),
        Case("u16_matvec_last", "integers and f16", "ijb,jb->ib", ["16x12xN", "12xN"], "uint16"),
        Case("f16_bmm_first", "integers and f16", "bij,bjk->bik", ["Nx16x8", "Nx8x12"], "float16", matmul=mm),
        Case("f16_shared_right", "integers and f16", "ikb,kj->ijb", ["16x8xN", "8x12"], "float16",
             matmul=lambda a, s: np.tensordot(a, s, axes=([1], [0])).transpose(0, 2, 1)),
    ]


FAMILIES = [
    ("batched matmul", ["{i}{k}b,{k}{j}b->{i}{j}b", "b{i}{k},b{k}{j}->b{i}{j}", "{k}{i}b,{j}{k}b->{i}{j}b"]),
    ("shared operand", ["{i}{k}b,{k}{j}->{i}{j}b", "{i}{k},{k}{j}b->{i}{j}b", "b{i}{k},{j}{k}->b{i}{j}"]),
    ("chain", ["{i}{k},{k}{l}b,{l}{j}->{i}{j}b", "b{i}{k},{k}{l},{l}{j}->b{i}{j}"]),
    ("mat-vec", ["{i}{k}b,{k}b->{i}b", "b{i}{k},b{i}->b{k}"]),
    ("reduction", ["{i}{k}b->{k}b", "b{i}{k}->b"]),
    ("ttm", ["{i}{k}{l}b,{j}{k}->{i}{j}{l}b"]),
]


def random_cases(count: int, seed: int = 20) -> list[Case]:
    """Contractions of the same families with random sizes, orders and dtypes (fixed seed)."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        family, templates = FAMILIES[n % len(FAMILIES)]
        text = rng.choice(templates).format(i="i", j="j", k="k", l="l")
        size = {label: rng.choice([3, 5, 6, 7, 9, 10, 12, 15, 20]) for label in "ijkl"}
        size["b"] = "N"
        lhs = text.split("->")[0].split(",")
        shapes = ["x".join(str(size[c]) for c in term) for term in lhs]
        dtype = rng.choice(["float32", "float32", "float64", "complex64"])
        order = rng.choice(["C", "C", "F", "mixed"])
        out.append(Case(f"random{n}", family, text, shapes, dtype, order))
    return out


def make_operands(case: Case, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    shapes = case.operand_shapes(max(1, n // case.extra.get("batch_divisor", 1)))
    out = []
    for k, shape in enumerate(shapes):
        if np.dtype(case.dtype).kind in "iu":
            info = np.iinfo(case.dtype)
            out.append(rng.integers(info.min, info.max, size=shape, dtype=case.dtype, endpoint=True))
            continue
        values = rng.standard_normal(shape)
        if np.dtype(case.dtype).kind == "c":
            values = values + 1j * rng.standard_normal(shape)
        values = values.astype(case.dtype)
        fortran = case.order == "F" or (case.order == "mixed" and k % 2 == 1)
        out.append(np.asfortranarray(values) if fortran else np.ascontiguousarray(values))
    return out


def _error(got: Any, want: np.ndarray) -> float:
    got = np.asarray(got)
    return float(np.abs(got - want).max(initial=0)) / max(1.0, float(np.abs(want).max(initial=0)))


def run_case(case: Case, batches: list[int], repeat: int, warmup: int) -> list[dict[str, Any]]:
    import opt_einsum

    import tinyc
    import tinyc.contractions.api

    rows = []
    rng = np.random.default_rng(0)
    for index, n in enumerate(batches):
        ops = make_operands(case, n, rng)
        s = case.subscripts
        exact = np.dtype(case.dtype).kind in "iu"   # integers wrap: NumPy's own result is the reference
        wide = [o.astype(np.complex128 if o.dtype.kind == "c" else np.float64) for o in ops]
        with np.errstate(over="ignore"):
            want = np.einsum(s, *(ops if exact else wide), optimize=True)
        kernels = tinyc.contractions.api.cache_info()["entries"]
        start = time.perf_counter()
        got = tinyc.einsum(s, *ops)
        first = time.perf_counter() - start
        new_kernels = tinyc.contractions.api.cache_info()["entries"] - kernels
        tol = {"float32": 2e-4, "complex64": 2e-4, "float16": 1e-2}.get(case.dtype, 1e-10)
        error = (0.0 if np.array_equal(got, want) else np.inf) if exact else _error(got, want)
        row = {"case": case.name, "family": case.family, "subscripts": s, "dtype": case.dtype,
               "order": case.order, "batch": n, "shapes": [list(x.shape) for x in ops], "error": error,
               "first_call_s": first, "first_at": "compile" if index == 0 else "new batch size",
               "new_kernels": new_kernels,
               "view": isinstance(got, np.ndarray) and any(np.shares_memory(got, o) for o in ops)}
        if not error <= tol:
            row["wrong"] = True
            rows.append(row)
            continue
        sides = {
            "tinyc": lambda: tinyc.einsum(s, *ops),
            "np.einsum opt": lambda: np.einsum(s, *ops, optimize=True),
            "np.einsum": lambda: np.einsum(s, *ops),
            "opt_einsum": lambda: opt_einsum.contract(s, *ops),
        }
        if case.matmul is not None:
            with np.errstate(over="ignore"):
                formulated = case.matmul(*ops)
            assert (np.array_equal(formulated, want) if exact else _error(formulated, want) <= tol), \
                f"{case.name}: the matmul formulation is wrong"
            sides["matmul"] = lambda: case.matmul(*ops)
        medians = time_interleaved(sides, repeat, warmup, budget=3.0)
        cpu = cpu_times(sides, max(3, repeat // 3))
        settled = settled_times(sides, rounds=3, calls=5)
        settled_numpy = {k: v for k, v in settled.items() if k != "tinyc"}
        numpy_sides = {k: v for k, v in medians.items() if k != "tinyc"}
        best_name = min(numpy_sides, key=numpy_sides.get)
        numpy_cpu = {k: v for k, v in cpu.items() if k != "tinyc"}
        row.update(median_s=medians, best_numpy=best_name, cpu_s=cpu,
                   vs_opt=medians["np.einsum opt"] / medians["tinyc"],
                   vs_best=numpy_sides[best_name] / medians["tinyc"],
                   cpu_vs_opt=cpu["np.einsum opt"] / cpu["tinyc"],
                   cpu_vs_best=min(numpy_cpu.values()) / cpu["tinyc"],
                   settled_s=settled, settled_vs_opt=settled["np.einsum opt"] / settled["tinyc"],
                   settled_vs_best=min(settled_numpy.values()) / settled["tinyc"])
        rows.append(row)
    return rows


def cpu_times(sides: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Median CPU seconds per call of each side (every thread of the process: the device's
    workers, BLAS's): what a call costs the machine, which other jobs on a shared machine
    change far less than they change the wall clock. Interleaved, `rounds` rounds."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, run in sides.items():
            if times[name] and sum(times[name]) > 3.0:
                continue
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


PAUSE = 0.2
"""Seconds of quiet before each block of `settled_times`: OpenBLAS's idle threads spin for
2^28 cycles (about 0.1 s) after a call, and the device's workers for a while after a kernel."""


def settled_times(sides: dict[str, Callable[[], Any]], rounds: int, calls: int,
                  budget: float = 3.0) -> dict[str, float]:
    """Median seconds per call when each side runs as a loop of its own calls would (a user's
    time steps): per round (the order rotating), each side after a pause of PAUSE seconds, one
    untimed call, then `calls` timed calls. Per-call interleaving (time_interleaved) instead
    starts every call while the previous side's threads still spin: on 2 cores a BLAS call
    leaves a thread spinning on one of the two cores a device kernel would use."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for r in range(rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            if times[name] and sum(times[name]) > budget:
                continue
            time.sleep(PAUSE)
            sides[name]()
            for _ in range(calls):
                start = time.perf_counter()
                sides[name]()
                times[name].append(time.perf_counter() - start)
                if sum(times[name]) > budget:
                    break
    return {name: float(np.median(t)) for name, t in times.items()}


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def summary(rows: list[dict[str, Any]], batch: int) -> dict[str, Any]:
    ok = [r for r in rows if r["batch"] == batch and "median_s" in r]
    worst = min(ok, key=lambda r: r["vs_best"]) if ok else None
    return {"batch": batch, "cases": len(ok), "geomean_vs_opt": geomean([r["vs_opt"] for r in ok]),
            "geomean_vs_best": geomean([r["vs_best"] for r in ok]),
            "cpu_geomean_vs_opt": geomean([r["cpu_vs_opt"] for r in ok]),
            "cpu_geomean_vs_best": geomean([r["cpu_vs_best"] for r in ok]),
            "worst_vs_best": worst["vs_best"] if worst else float("nan"),
            "worst_case": worst["case"] if worst else "",
            "below_0.8": [r["case"] for r in ok if r["vs_best"] < 0.8],
            "settled_geomean_vs_opt": geomean([r["settled_vs_opt"] for r in ok]),
            "settled_geomean_vs_best": geomean([r["settled_vs_best"] for r in ok]),
            "settled_below_0.8": [r["case"] for r in ok if r["settled_vs_best"] < 0.8]}


def report(rows: list[dict[str, Any]], meta: dict[str, Any], batches: list[int],
           title: str = "contractions of every kind, two batch sizes") -> str:
    lines = [
        f"# tinyc.einsum against NumPy: {title}",
        "",
        f"Measured {meta['date']} on {meta['cpu']} ({meta['device']}), {meta['cpus']} CPUs, NumPy "
        f"{meta['numpy']}, opt_einsum {meta['opt_einsum']}; load average {meta['load_before']} before, "
        f"{meta['load_after']} after (a shared machine: ratios measured interleaved are steadier than times).",
        "NumPy arrays in, a new array out, kernels compiled (`python -m benchmarks.einsum_suite`). "
        "\"vs opt\" = np.einsum(optimize=True) time / tinyc time; \"vs best\" = the fastest NumPy-side way "
        "(np.einsum with or without optimize, opt_einsum, np.matmul/tensordot) / tinyc time (wall clock, "
        "medians of interleaved rounds). \"CPU\" columns: the same ratios of CPU time per call (every "
        "thread of the process), which a loaded machine distorts far less; on an idle machine the wall "
        "clock ratio of a kernel that keeps both cores busy approaches twice its CPU ratio against "
        "single-threaded NumPy. \"settled\" columns: the same ratios when each way runs as a loop of "
        "its own calls (a pause, then a block of calls; rounds interleaved): per-call interleaving "
        "starts each tinyc call while the previous NumPy call's BLAS thread still spins on one of the "
        "two cores (about 0.1 s), which a loop of tinyc calls never meets.",
        "",
    ]
    for b in batches:
        s = summary(rows, b)
        lines.append(f"**{f'Batch {b}' if b else 'Static shapes'}: geomean {s['geomean_vs_opt']:.2f}x np.einsum(optimize=True), "
                     f"{s['geomean_vs_best']:.2f}x the fastest NumPy-side way; slowest case "
                     f"{s['worst_case']} at {s['worst_vs_best']:.2f}x; below 0.8x: "
                     f"{', '.join(s['below_0.8']) or 'none'} ({s['cases']} cases). In CPU time: "
                     f"{s['cpu_geomean_vs_opt']:.2f}x and {s['cpu_geomean_vs_best']:.2f}x. Settled "
                     f"(each way as its own loop): {s['settled_geomean_vs_opt']:.2f}x and "
                     f"{s['settled_geomean_vs_best']:.2f}x; below 0.8x: "
                     f"{', '.join(s['settled_below_0.8']) or 'none'}.**")
        lines.append("")
    lines += ["| case | family | einsum | dtype | order | batch | tinyc ms | np.einsum opt ms | np.einsum ms | "
              "opt_einsum ms | matmul ms | best NumPy | vs opt | vs best | CPU vs opt | CPU vs best | "
              "settled tinyc ms | settled vs opt | settled vs best | first call ms |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        head = f"| {r['case']} | {r['family']} | `{r['subscripts']}` | {r['dtype']} | {r['order']} | {r['batch']} |"
        if "median_s" not in r:
            lines.append(head + f" wrong result (error {r['error']:.1e}) | | | | | | | | | | | | | |")
            continue
        m = r["median_s"]

        def ms(k: str) -> str:
            return f"{m[k] * 1e3:.3f}" if k in m else "-"
        view = " (view)" if r["view"] else ""
        lines.append(head + f" {ms('tinyc')}{view} | {ms('np.einsum opt')} | {ms('np.einsum')} | {ms('opt_einsum')} | "
                     f"{ms('matmul')} | {r['best_numpy']} | {r['vs_opt']:.2f} | {r['vs_best']:.2f} | "
                     f"{r['cpu_vs_opt']:.2f} | {r['cpu_vs_best']:.2f} | "
                     f"{r['settled_s']['tinyc'] * 1e3:.3f} | {r['settled_vs_opt']:.2f} | {r['settled_vs_best']:.2f} | "
                     f"{r['first_call_s'] * 1e3:.0f} ({r['first_at']}{_kernels(r)}) |")
    return "\n".join(lines) + "\n"


def _kernels(row: dict[str, Any]) -> str:
    """How many kernels the first call compiled (a new batch size: none)."""
    count = row.get("new_kernels")
    return "" if count is None else f", {count} new kernel{'s' if count != 1 else ''}"


SETS: dict[str, tuple[str, Callable[[], list[Case]], str]] = {
    "main": ("einsum_suite", cases, "contractions of every kind, two batch sizes"),
    "dtypes": ("einsum_dtypes", dtype_cases, "integer and float16 contractions, two batch sizes"),
    "static": ("einsum_static", static_cases, "single products without a batch (NumPy's strongest cases)"),
}
"""--set: (the tables' file stem, the cases, the title)."""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.einsum_suite", description=__doc__.splitlines()[0])
    p.add_argument("--batch", default="2000,20000")
    p.add_argument("--cases", default="all")
    p.add_argument("--random", type=int, default=12, help="contractions drawn at random (fixed seed)")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--list", action="store_true")
    p.add_argument("--out", type=Path, default=HERE)
    p.add_argument("--set", choices=list(SETS), default="main",
                   help="main: the suite (einsum_suite.md); dtypes: integers and f16 (einsum_dtypes.md); "
                        "static: single products without a batch, NumPy's strongest (einsum_static.md)")
    args = p.parse_args(argv)
    everything = SETS[args.set][1]() + (random_cases(args.random) if args.set == "main" else [])
    stem, title = SETS[args.set][0], SETS[args.set][2]
    if args.list:
        print("\n".join(f"{c.name:18s} {c.family:16s} {c.subscripts:24s} {c.dtype:10s} {c.order}"
                        for c in everything))
        return 0
    wanted = set(args.cases.split(",")) if args.cases != "all" else None
    chosen = [c for c in everything if wanted is None or c.name in wanted]
    batches = [int(b) for b in args.batch.split(",")] if args.set != "static" else [0]   # (no N)
    import opt_einsum

    from tinyc.runtime.device import select_queue

    queue = select_queue()
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "cpu": platform.processor() or platform.machine(), "device": queue.sycl_device.name,
            "cpus": os.cpu_count(), "numpy": np.__version__, "opt_einsum": opt_einsum.__version__,
            "load_before": "/".join(f"{x:.1f}" for x in os.getloadavg())}
    rows: list[dict[str, Any]] = []
    for case in chosen:
        for r in run_case(case, batches, args.repeat, args.warmup):
            rows.append(r)
            if "median_s" in r:
                print(f"{r['case']:18s} {r['batch']:6d} tinyc {r['median_s']['tinyc'] * 1e3:8.3f} ms  "
                      f"vs opt {r['vs_opt']:6.2f}  vs best {r['vs_best']:5.2f} ({r['best_numpy']})  "
                      f"CPU {r['cpu_vs_opt']:6.2f} {r['cpu_vs_best']:5.2f}  "
                      f"settled {r['settled_vs_opt']:6.2f} {r['settled_vs_best']:5.2f}  "
                      f"first {r['first_call_s'] * 1e3:.0f} ms", flush=True)
            else:
                print(f"{r['case']:18s} {r['batch']:6d} WRONG error {r['error']:.2e}", flush=True)
    meta["load_after"] = "/".join(f"{x:.1f}" for x in os.getloadavg())
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(json.dumps(
        {"meta": meta, "summary": [summary(rows, b) for b in batches], "rows": rows}, indent=1, default=str))
    text = report(rows, meta, batches, title)
    (args.out / f"{stem}.md").write_text(text)
    print(text)
    return 0 if all("wrong" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
