"""Batched small contractions: tinyc.einsum against np.einsum and a hand-written kernel.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.contractions

Per case, three implementations of the same contraction on the same inputs:

  * **tinyc.einsum** — the user's path: C-order NumPy arrays in, a new NumPy
    array out, `tinyc.einsum(subscripts, *operands)`, kernel cached (the first
    call compiles it and is not timed);
  * **np.einsum(optimize=True)** — NumPy on the same arrays;
  * **out=** — the same two into a preallocated output array (no fresh pages to fault in);
  * **hand-written** — a tensor-language kernel written for the contraction
    (`kernels/contractions/*.ir`, the way benchmarks/kernels are written:
    memref arguments, a `?` batch mode), launched with
    `tinyc.compile(src)[name](*args, batch=N)` on USM arrays already on the
    device: the best case of the hand-written side (no copies at all).

All results are checked against a float64 NumPy reference first. Times are
wall clock around one complete call, medians of `--repeat` rounds after two
warm-ups, the three sides interleaved (the order rotating each round) so the
load of this shared machine hits them alike. Reported: each median, the
speedup of tinyc.einsum over NumPy and its time relative to the hand-written
kernel, with geometric means over the cases. Writes contractions.md and
contractions.json next to this file (or to --out).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels" / "contractions"
LITERALS = {"f32": ("1.0", "0.0"), "f64": ("1.0", "0.0"), "c32": ("[1.0, 0.0]", "[0.0, 0.0]"),
            "c64": ("[1.0, 0.0]", "[0.0, 0.0]")}
TYPE_NAMES = {"float32": "f32", "float64": "f64", "complex64": "c32", "complex128": "c64"}


@dataclass
class Case:
    """One contraction: subscripts, C-order operand shapes, dtype, its hand-written kernel."""

    name: str
    title: str
    subscripts: str
    shapes: list[tuple[int, ...]]
    dtype: str
    kernel_file: str
    kernel: str
    n: int = 0          # the N substituted into the kernel file (0: none)

    @property
    def batch(self) -> int:
        return max(s[0] for s in self.shapes if s)

    def source(self) -> str:
        text = (KERNELS / self.kernel_file).read_text()
        t = TYPE_NAMES[self.dtype]
        one, zero = LITERALS[t]
        if self.n:
            text = text.replace("TxNxNx", f"{t}x{self.n}x{self.n}x").replace("TxNxN>", f"{t}x{self.n}x{self.n}>")
            text = text.replace("TxNx", f"{t}x{self.n}x").replace("TxN>", f"{t}x{self.n}>")
        return text.replace("ONE", one).replace("ZERO", zero).replace(": T\n", f": {t}\n")


def cases() -> list[Case]:
    B = 10_000
    return [
        Case("gemm4", "C_b = A_b B_b, 4×4 f32", "bij,bjk->bik", [(10 * B, 4, 4)] * 2, "float32",
             "batched_gemm_nn.ir", "batched_gemm", 4),
        Case("gemm8", "C_b = A_b B_b, 8×8 f32", "bij,bjk->bik", [(5 * B, 8, 8)] * 2, "float32",
             "batched_gemm_nn.ir", "batched_gemm", 8),
        Case("gemm8c", "C_b = A_b B_b, 8×8 complex64", "bij,bjk->bik", [(2 * B, 8, 8)] * 2,
             "complex64", "batched_gemm_nn.ir", "batched_gemm", 8),
        Case("gemm_tn16", "C_b = A_bᵀ B_b, 16×16 f32", "bji,bjk->bik", [(2 * B, 16, 16)] * 2,
             "float32", "batched_gemm_tn.ir", "batched_gemm_tn", 16),
        Case("gemm_nt32", "C_b = A_b B_bᵀ, 32×32 f64", "bij,bkj->bik", [(B, 32, 32)] * 2,
             "float64", "batched_gemm_nt.ir", "batched_gemm_nt", 32),
        Case("gemm64", "C_b = A_b B_b, 64×64 f32", "bij,bjk->bik", [(B, 64, 64)] * 2, "float32",
             "batched_gemm_nn.ir", "batched_gemm", 64),
        Case("ttm16", "C_b = A_b M, shared 16×16 M, f32", "bij,jk->bik", [(5 * B, 16, 16), (16, 16)],
             "float32", "ttm.ir", "ttm", 16),
        Case("gemv32", "y_b = A_b x_b, 32×32 f32", "bij,bj->bi", [(2 * B, 32, 32), (2 * B, 32)],
             "float32", "gemv.ir", "gemv", 32),
        Case("fused", "D_b = A_b Bᵀ C (the spec's fused kernel), f32", "bik,jk,jl->bil",
             [(10 * B, 16, 8), (8, 8), (8, 16)], "float32", "fused.ir", "fused"),
        Case("dg_volume", "DG volume: O_e = Σ_d K_d Q_e A_de, 20×9, f64", "dkl,elm,edmn->ekn",
             [(3, 20, 20), (B, 20, 9), (B, 3, 9, 9)], "float64", "dg_volume.ir", "dg_volume"),
        Case("dg_update", "Q_b K Q_b Aᵀ for every element b (the issue's example), 20×9, f64",
             "kl,blm,nm->bkn", [(20, 20), (B, 20, 9), (9, 9)], "float64", "dg_update.ir", "dg_update"),
        Case("chain", "Y_b = A B C X_b (32×24·24×16·16×12·12×8), f32", "ij,jk,kl,blm->bim",
             [(32, 24), (24, 16), (16, 12), (2 * B, 12, 8)], "float32", "chain.ir", "chain"),
    ]


def random_operands(case: Case, rng: np.random.Generator) -> list[np.ndarray]:
    out = []
    for shape in case.shapes:
        values = rng.standard_normal(shape)
        if np.dtype(case.dtype).kind == "c":
            values = values + 1j * rng.standard_normal(shape)
        out.append(values.astype(case.dtype))
    return out


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max()))


def time_interleaved(sides: dict[str, Callable[[], Any]], repeat: int, warmup: int,
                     budget: float = float("inf")) -> dict[str, float]:
    """Median seconds per side, measured round-robin with a rotating order; a side that has
    spent `budget` seconds gets no more rounds (a pathologically slow one)."""
    for _ in range(warmup):
        for run in sides.values():
            run()
    times: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for r in range(repeat):
        for name in names[r % len(names):] + names[: r % len(names)]:
            if times[name] and sum(times[name]) > budget:
                continue
            start = time.perf_counter()
            sides[name]()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


def run_case(case: Case, repeat: int, warmup: int, queue: Any) -> dict[str, Any]:
    import tinyc
    from benchmarks.device import UsmArray

    rng = np.random.default_rng(0)
    operands = random_operands(case, rng)
    want = np.einsum(case.subscripts, *[o.astype(np.complex128 if o.dtype.kind == "c" else np.float64)
                                         for o in operands], optimize=True)
    tol = 1e-4 if case.dtype in ("float32", "complex64") else 1e-10
    start = time.perf_counter()
    got = tinyc.einsum(case.subscripts, *operands)
    first_call = time.perf_counter() - start
    c = tinyc.contract(case.subscripts, *operands)
    kernel = tinyc.compile(case.source(), name=case.kernel_file, device=queue)[case.kernel]
    usm = [UsmArray(queue, o.T) for o in operands] + [UsmArray(queue, np.zeros(want.shape, case.dtype).T)]
    kernel(*usm, batch=case.batch)
    hand = usm[-1].download().T
    errors = {"tinyc.einsum": relative_error(got, want),
              "np.einsum": relative_error(np.einsum(case.subscripts, *operands, optimize=True), want),
              "hand-written": relative_error(hand, want)}
    wrong = [side for side, e in errors.items() if not e <= tol]
    if wrong:
        return {"case": case.name, "wrong": wrong, "errors": errors}
    out_tinyc, out_numpy = np.empty(want.shape, case.dtype), np.empty(want.shape, case.dtype)
    medians = time_interleaved({
        "tinyc.einsum": lambda: tinyc.einsum(case.subscripts, *operands),
        "np.einsum": lambda: np.einsum(case.subscripts, *operands, optimize=True),
        "tinyc.einsum out=": lambda: tinyc.einsum(case.subscripts, *operands, out=out_tinyc),
        "np.einsum out=": lambda: np.einsum(case.subscripts, *operands, out=out_numpy, optimize=True),
        "hand-written": lambda: kernel(*usm, batch=case.batch),
    }, repeat, warmup)
    errors["tinyc.einsum out="] = relative_error(out_tinyc, want)
    return {
        "case": case.name, "title": case.title, "subscripts": case.subscripts,
        "shapes": [list(s) for s in case.shapes], "dtype": case.dtype, "batch": case.batch,
        "path": c.path, "work_groups": c._main.batch, "flops": c.flops, "first_call_s": first_call,
        "median_s": medians, "errors": errors,
        "speedup_vs_numpy": medians["np.einsum"] / medians["tinyc.einsum"],
        "speedup_vs_numpy_out": medians["np.einsum out="] / medians["tinyc.einsum out="],
        "vs_hand_written": medians["tinyc.einsum out="] / medians["hand-written"],
    }


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def report(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    ok = [r for r in results if "wrong" not in r]
    lines = [
        "# tinyc.einsum: batched small contractions",
        "",
        f"Measured {meta['date']} on {meta['cpu']} ({meta['device']}), {meta['cpus']} CPUs; "
        f"NumPy {meta['numpy']}; load average {meta['load_before']} before, {meta['load_after']} after "
        f"(a shared machine: absolute times move, ratios measured interleaved are steadier).",
        "",
        "| case | einsum | batch | tinyc.einsum ms | np.einsum ms | speedup vs NumPy | "
        "tinyc.einsum out= ms | np.einsum out= ms | speedup (out=) | hand-written ms | "
        "tinyc (out=) / hand-written | GFLOP/s tinyc (out=) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "wrong" in r:
            lines.append(f"| {r['case']} | wrong result: {', '.join(r['wrong'])} | | | | | | | |")
            continue
        m = r["median_s"]
        lines.append(
            f"| {r['title']} | `{r['subscripts']}` | {r['batch']} | {m['tinyc.einsum'] * 1e3:.2f} | "
            f"{m['np.einsum'] * 1e3:.2f} | {r['speedup_vs_numpy']:.2f}× | "
            f"{m['tinyc.einsum out='] * 1e3:.2f} | {m['np.einsum out='] * 1e3:.2f} | "
            f"{r['speedup_vs_numpy_out']:.2f}× | {m['hand-written'] * 1e3:.2f} | "
            f"{r['vs_hand_written']:.2f} | {r['flops'] / m['tinyc.einsum out='] / 1e9:.1f} |")
    lines += [
        "",
        f"**Geometric means over {len(ok)} cases: tinyc.einsum is "
        f"{geomean([r['speedup_vs_numpy'] for r in ok]):.2f}× faster than np.einsum(optimize=True) "
        f"(both returning a new array; {geomean([r['speedup_vs_numpy_out'] for r in ok]):.2f}× with "
        f"out= on both sides), and with out= it takes "
        f"{geomean([r['vs_hand_written'] for r in ok]):.2f}× the time of the hand-written kernel.**",
        "",
        "Paths (per work-group) and first-call cost (compile + JIT):",
        "",
    ]
    for r in ok:
        lines.append(f"- {r['case']}: {'; '.join(r['path'])} — {r['work_groups']} work-groups, "
                     f"first call {r['first_call_s'] * 1e3:.0f} ms")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.contractions", description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="all", help="comma-separated case names (see --list)")
    p.add_argument("--list", action="store_true")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--out", type=Path, default=HERE)
    args = p.parse_args(argv)
    chosen = cases()
    if args.list:
        for c in chosen:
            print(f"{c.name:10s} {c.subscripts:22s} {c.title}")
        return 0
    if args.cases != "all":
        names = args.cases.split(",")
        chosen = [c for c in chosen if c.name in names]
    from tinyc.runtime.device import select_queue

    queue = select_queue()
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": platform.processor() or
            platform.machine(), "device": queue.sycl_device.name, "cpus": os.cpu_count(),
            "numpy": np.__version__, "load_before": "/".join(f"{x:.1f}" for x in os.getloadavg())}
    results = []
    for case in chosen:
        result = run_case(case, args.repeat, args.warmup, queue)
        results.append(result)
        if "wrong" in result:
            print(f"{case.name}: WRONG {result['errors']}", flush=True)
        else:
            m = result["median_s"]
            print(f"{case.name:10s} tinyc {m['tinyc.einsum'] * 1e3:8.2f} ms  numpy {m['np.einsum'] * 1e3:8.2f} ms"
                  f"  out=: tinyc {m['tinyc.einsum out='] * 1e3:8.2f} numpy {m['np.einsum out='] * 1e3:8.2f}"
                  f"  hand {m['hand-written'] * 1e3:8.2f} ms  speedup {result['speedup_vs_numpy']:5.2f}x"
                  f" / {result['speedup_vs_numpy_out']:5.2f}x  vs hand {result['vs_hand_written']:.2f}",
                  flush=True)
    meta["load_after"] = "/".join(f"{x:.1f}" for x in os.getloadavg())
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "contractions.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    text = report(results, meta)
    (args.out / "contractions.md").write_text(text)
    print(text)
    return 0 if all("wrong" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
