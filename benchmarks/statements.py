"""Several statements in one kernel: `tinyc.contract([...])` against the same statements as
separate `tinyc.einsum` calls and against NumPy, on discontinuous-Galerkin kernels.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.statements

The kernels are SeisSol-like (56 basis functions, 9 quantities, f64, the
element batch last in Fortran order):

  * **volume** — the DESIGN.md example: the volume term through a temporary, then an update;
  * **ader** — an ADER-DG predictor step: three time derivatives (temporaries, each
    from the one before) summed into the time integral with scalar factors;
  * **volume+flux** — the volume term and the local flux over four faces (a chain of four
    tensors) accumulated into the element's degrees of freedom.

Per example and batch size, on the same NumPy arrays (results compared with a NumPy
float64 reference first):

  * **one kernel** — `c(**arrays, **scalars)` with `c = tinyc.contract(statements, shapes=...)`;
  * **einsum calls** — each term of each statement as one `tinyc.einsum(..., out=target,
    alpha=coefficient, beta=0 or 1)` call, temporaries as NumPy arrays (kernels cached);
  * **np.einsum** — each term as `np.einsum(..., optimize=True)`, accumulated with NumPy;
  * **fastest NumPy** — the fastest of: np.einsum per term without optimize, opt_einsum per
    term, and a hand-written formulation (BLAS GEMMs on the shared matrices, `np.matmul`
    stacks for the per-element products).

Wall clock around each complete call, the sides interleaved (rotating) in `--rounds`
rounds, medians; a side slower than 2 s per call is timed in the first round only, and
one that would take over a minute (np.einsum on the four-tensor flux term, whose
optimizer keeps the product whole) is extrapolated from a batch of 64. Kernels run with
their default schedules (a fresh TINYC_CACHE_DIR; `--keep-tuned` uses the cached ones).
Writes statements.md and statements.json next to this file (or to --out).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import string
import sys
import time
from pathlib import Path
from typing import Any, Callable

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
B, N = 56, 9   # basis functions, quantities

EXAMPLES: dict[str, tuple[list[str], dict[str, tuple], dict[str, float]]] = {
    "volume": (
        ["T[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]",
         "Q2[k,q,e] = Q[k,q,e] + dt * T[k,q,e]"],
        {"K": (3, B, B), "Q": (B, N, None), "A": (3, N, N, None), "Q2": (B, N, None)},
        {"dt": 0.01}),
    "ader": (
        ["I[k,q,e] = dt * Q[k,q,e]",
         "D1[k,q,e] = -Kt[d,k,l] * Q[l,a,e] * S[d,a,q,e]",
         "I[k,q,e] += dt**2 / 2 * D1[k,q,e]",
         "D2[k,q,e] = -Kt[d,k,l] * D1[l,a,e] * S[d,a,q,e]",
         "I[k,q,e] += dt**3 / 6 * D2[k,q,e]",
         "D3[k,q,e] = -Kt[d,k,l] * D2[l,a,e] * S[d,a,q,e]",
         "I[k,q,e] += dt**4 / 24 * D3[k,q,e]"],
        {"Kt": (3, B, B), "Q": (B, N, None), "S": (3, N, N, None), "I": (B, N, None)},
        {"dt": 0.01}),
    "volume+flux": (
        ["Q[k,q,e] += Kxi[d,k,l] * I[l,a,e] * S[d,a,q,e]",
         "Q[k,q,e] += R[f,k,m] * F[f,m,l] * I[l,a,e] * AP[f,a,q,e]"],
        {"Kxi": (3, B, B), "I": (B, N, None), "S": (3, N, N, None), "R": (4, B, 21), "F": (4, 21, B),
         "AP": (4, N, N, None), "Q": (B, N, None)},
        {}),
}


def make_arrays(name: str, batch: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random f64 arrays: the batch last in Fortran order, shared matrices in C order; the
    star matrices scaled so that repeated products stay of order one."""
    _, shapes, _ = EXAMPLES[name]
    rng = np.random.default_rng(seed)
    out = {}
    for tensor, shape in shapes.items():
        real = tuple(batch if n is None else n for n in shape)
        data = rng.standard_normal(real) / np.sqrt(max(real[:3]))
        out[tensor] = np.asfortranarray(data) if shape[-1] is None else np.ascontiguousarray(data)
    return out


# -- the statements term by term ---------------------------------------------------------------
def _terms(statements: list[str]):
    """(target, labels, first term of '=', coefficient (scalar names, number), tensors) per term."""
    from tinyc.contractions.statements import parse

    for s in parse(statements):
        for k, term in enumerate(s.terms):
            yield s.target, not s.accumulate and k == 0, term


def _coefficient(term: Any, scalars: dict[str, float]) -> float:
    value = term.number
    for x in term.scalars:
        value = value / scalars[x.name] if x.inverse else value * scalars[x.name]
    return value


def _spec(term: Any, target: Any) -> str:
    letters: dict[str, str] = {}
    for label in [x for a in term.tensors for x in a.labels] + list(target.labels):
        letters.setdefault(label, string.ascii_letters[len(letters)])
    ins = ",".join("".join(letters[x] for x in a.labels) for a in term.tensors)
    return ins + "->" + "".join(letters[x] for x in target.labels)


def by_terms(statements: list[str], arrays: dict[str, np.ndarray], scalars: dict[str, float],
             contract: Callable[..., np.ndarray], into: bool) -> dict[str, np.ndarray]:
    """The statements term by term: `contract(spec, *operands)` (into=False: NumPy adds the
    result) or `contract(spec, *operands, out=target, alpha=, beta=)` (into=True)."""
    env = dict(arrays)
    for target, first, term in _terms(statements):
        spec = _spec(term, target)
        operands = [env[a.name] for a in term.tensors]
        alpha = _coefficient(term, scalars)
        if first and target.name not in env:   # a temporary
            sizes = {x: n for a in term.tensors for x, n in zip(a.labels, env[a.name].shape)}
            shape = tuple(sizes[x] for x in target.labels)
            env[target.name] = np.empty(shape, order="F")
        if into:
            contract(spec, *operands, out=env[target.name], alpha=alpha, beta=0 if first else 1)
        elif first:
            env[target.name][...] = alpha * contract(spec, *operands)
        else:
            env[target.name] += alpha * contract(spec, *operands)
    return env


# -- hand-written NumPy ---------------------------------------------------------------------------
def _shared_times(M: np.ndarray, X: np.ndarray, transpose: bool) -> np.ndarray:
    """Y[d,k,a,e] = Σ_l M[d,k,l] X[l,a,e] (or M[d,l,k] with transpose): one GEMM per d over all
    elements (the batch joined to the columns)."""
    cols = X.reshape(X.shape[0], -1, order="F")
    return np.stack([((M[d].T if transpose else M[d]) @ cols).reshape((M.shape[1],) + X.shape[1:], order="F")
                     for d in range(M.shape[0])])


def _star(Y: np.ndarray, A: np.ndarray) -> np.ndarray:
    """T[k,q,e] = Σ_{d,a} Y[d,k,a,e] A[d,a,q,e] as one np.matmul stack over the elements."""
    d, k, a, e = Y.shape
    left = np.ascontiguousarray(Y.transpose(3, 1, 0, 2)).reshape(e, k, d * a)
    right = np.ascontiguousarray(A.transpose(3, 0, 1, 2)).reshape(e, d * a, A.shape[2])
    return np.matmul(left, right).transpose(1, 2, 0)


def numpy_volume(arrays: dict, scalars: dict) -> dict:
    K, Q, A = arrays["K"], arrays["Q"], arrays["A"]
    T = _star(_shared_times(K, Q, transpose=True), A)
    out = dict(arrays)
    out["Q2"][...] = Q + scalars["dt"] * T
    return out


def numpy_ader(arrays: dict, scalars: dict) -> dict:
    Kt, Q, S, dt = arrays["Kt"], arrays["Q"], arrays["S"], scalars["dt"]
    out, D, factor = dict(arrays), Q, dt
    integral = dt * Q
    for j in range(1, 4):
        D = -_star(_shared_times(Kt, D, transpose=False), S)
        factor *= dt / (j + 1)
        integral += factor * D
    out["I"][...] = integral
    return out


def numpy_volume_flux(arrays: dict, scalars: dict) -> dict:
    Kxi, I, S, R, F, AP = (arrays[n] for n in ("Kxi", "I", "S", "R", "F", "AP"))
    out = dict(arrays)
    volume = _star(_shared_times(Kxi, I, transpose=False), S)
    faces = _shared_times(F, I, transpose=False)                   # [f,m,a,e]: F[f]·I, one GEMM per face
    out["Q"] += volume
    for f in range(R.shape[0]):
        flux = _star(faces[f:f + 1], AP[f:f + 1])                  # [m,q,e]
        out["Q"] += (R[f] @ flux.reshape(R.shape[2], -1, order="F")).reshape(out["Q"].shape, order="F")
    return out


HAND = {"volume": numpy_volume, "ader": numpy_ader, "volume+flux": numpy_volume_flux}


# -- measuring --------------------------------------------------------------------------------------
SLOW = 2.0
"""Seconds per call above which a side is timed in the first round only."""
LONG = 60.0
"""Seconds per call above which a side is not run at the full batch but extrapolated."""


def sides(name: str) -> dict[str, Callable[[dict], dict]]:
    import opt_einsum
    import tinyc

    statements, shapes, scalars = EXAMPLES[name]
    kernel = tinyc.contract(statements, shapes=shapes, dtype="f64")

    def one(arrays: dict) -> dict:
        kernel(**arrays, **scalars)
        return arrays

    return {
        "one kernel": one,
        "einsum calls": lambda a: by_terms(statements, a, scalars, tinyc.einsum, True),
        "np.einsum": lambda a: by_terms(statements, a, scalars,
                                        lambda *x: np.einsum(*x, optimize=True), False),
        "np.einsum (no optimize)": lambda a: by_terms(statements, a, scalars,
                                                      lambda *x: np.einsum(*x, optimize=False), False),
        "opt_einsum": lambda a: by_terms(statements, a, scalars, opt_einsum.contract, False),
        "hand-written NumPy": lambda a: HAND[name](a, scalars),
    }


NUMPY_SIDES = ("np.einsum", "np.einsum (no optimize)", "opt_einsum", "hand-written NumPy")


def outputs(name: str) -> list[str]:
    from tinyc.contractions.statements import parse

    shapes = EXAMPLES[name][1]
    return list(dict.fromkeys(s.target.name for s in parse(EXAMPLES[name][0]) if s.target.name in shapes))


def measure(name: str, batch: int, rounds: int, log: Callable[[str], None], probe: int = 64) -> dict:
    """Every side checked against the reference (at a batch of `probe`), then timed interleaved
    at `batch`; a side whose probe, scaled to `batch`, would take over LONG seconds is not run
    at `batch` but reported as that linear extrapolation."""
    statements, _, scalars = EXAMPLES[name]
    runs = sides(name)
    small = make_arrays(name, min(batch, probe))
    reference = by_terms(statements, {k: v.copy(order="K") for k, v in small.items()}, scalars,
                         lambda *x: np.einsum(*x, optimize=True), False)
    errors, estimates = {}, {}
    for side, run in runs.items():
        run({k: v.copy(order="K") for k, v in small.items()})          # compiles, warms up
        start = time.perf_counter()
        got = run({k: v.copy(order="K") for k, v in small.items()})
        estimates[side] = (time.perf_counter() - start) * batch / min(batch, probe)
        errors[side] = max(float(np.abs(got[o] - reference[o]).max() / np.abs(reference[o]).max())
                           for o in outputs(name))
        if errors[side] > 1e-10:
            raise AssertionError(f"{name}, batch {batch}: {side} is wrong (relative error {errors[side]:.2e})")
    given = make_arrays(name, batch)
    copies = {side: {k: v.copy(order="K") for k, v in given.items()} for side in runs}
    timed = [side for side in runs if estimates[side] <= LONG]
    times: dict[str, list[float]] = {side: [] for side in timed}
    for side in timed:
        runs[side](copies[side])                                          # first touch of the pages
    for r in range(rounds):
        for side in timed[r % len(timed):] + timed[:r % len(timed)]:
            if r and times[side][0] > SLOW:
                continue
            start = time.perf_counter()
            runs[side](copies[side])
            times[side].append(time.perf_counter() - start)
        log(f"  {name} batch {batch} round {r + 1}/{rounds}")
    medians = {side: float(np.median(times[side])) if side in times else estimates[side] for side in runs}
    fastest = min(NUMPY_SIDES, key=lambda side: medians[side])
    return {"example": name, "batch": batch, "seconds": medians, "rounds": {s: len(t) for s, t in times.items()},
            "extrapolated": [side for side in runs if side not in times], "errors": errors,
            "fastest_numpy": fastest}


def markdown(results: list[dict], meta: dict) -> str:
    lines = [
        "# Several statements in one kernel: `tinyc.contract([...])`",
        "",
        f"Measured {meta['date']} on {meta['device']} ({meta['machine']}, {meta.get('cores', '?')} cores, "
        f"load average {meta.get('load', ['?'])[0]} at the start and {meta.get('load', ['?', '?'])[-1]} at the end: "
        f"a shared machine), NumPy {meta['numpy']}. "
        "Wall clock per complete call, NumPy arrays in (f64, the element batch last in Fortran order), "
        f"medians of {meta['rounds']} interleaved rounds (a side slower than {SLOW:.0f} s: one call). "
        "Every side was checked against a NumPy reference first. "
        "`python -m benchmarks.statements` (see its docstring).",
        "",
        "| example | batch | one kernel | einsum calls | np.einsum(optimize=True) | fastest NumPy | |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        s = r["seconds"]
        one = s["one kernel"]

        def cell(side: str) -> str:
            mark = "≈" if side in r.get("extrapolated", ()) else ""
            return f"{mark}{s[side] * 1e3:.1f} ms ({s[side] / one:.1f}×)"

        lines.append(f"| {r['example']} | {r['batch']:,} | {one * 1e3:.1f} ms | {cell('einsum calls')} | "
                     f"{cell('np.einsum')} | {cell(r['fastest_numpy'])} | {r['fastest_numpy']} |")
    lines += ["", "(×): how many times longer than the one kernel. ≈: a side that would take over "
              f"{LONG:.0f} s per call, extrapolated linearly from a batch of 64 (not run at the full batch).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", default="2000,20000", help="batch sizes, comma-separated")
    parser.add_argument("--examples", default=",".join(EXAMPLES))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--keep-tuned", action="store_true",
                        help="use the schedules cached in TINYC_CACHE_DIR (default: a fresh cache, untuned)")
    args = parser.parse_args(argv)
    if not args.keep_tuned:   # every side with the default schedules, whatever was tuned before
        import tempfile

        os.environ["TINYC_CACHE_DIR"] = tempfile.mkdtemp(prefix="tinyc-statements-bench-")
    from tinyc.runtime.device import select_device

    device = select_device()
    load_before = os.getloadavg()[0]
    results = []
    for name in args.examples.split(","):
        for batch in (int(b) for b in args.batch.split(",")):
            results.append(measure(name, batch, args.rounds, lambda text: print(text, flush=True)))
    meta = {"date": datetime.date.today().isoformat(), "device": device.name, "machine": platform.machine(),
            "numpy": np.__version__, "rounds": args.rounds, "cores": os.cpu_count(),
            "load": [round(load_before, 1), round(os.getloadavg()[0], 1)]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "statements.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    (args.out / "statements.md").write_text(markdown(results, meta))
    print(markdown(results, meta))


if __name__ == "__main__":
    main()
