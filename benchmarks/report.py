"""Results as JSON (everything), a Markdown table (the summary) and a PNG plot.

Ratios are ratios of times: tinyc/OpenCL C = 2.0 means tinyc takes twice as
long as the hand-written kernel (lower is better for tinyc).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.suite import CaseResult, ImplResult

LABELS = {"tinyc": "tinyc", "opencl": "OpenCL C", "numpy": "NumPy"}
COLORS = {"tinyc": "#1f77b4", "opencl": "#ff7f0e", "numpy": "#2ca02c"}


def _ms(r: ImplResult | None) -> str:
    if r is None:
        return "–"
    if not r.ok:
        return "n/a"
    return f"{r.median * 1e3:.2f}"


def _rate(r: ImplResult | None, amount: float, unit: float = 1e9) -> str:
    if r is None or not r.ok:
        return "–"
    return f"{amount / r.median / unit:.1f}"


def _ratio(a: ImplResult | None, b: ImplResult | None) -> str:
    if a is None or b is None or not a.ok or not b.ok:
        return "–"
    return f"{a.median / b.median:.2f}"


def case_json(c: CaseResult) -> dict[str, Any]:
    best = {f: c.best(f) for f in ("tinyc", "tinyc-raw", "opencl", "numpy")}

    def metrics(r: ImplResult | None) -> dict[str, Any] | None:
        if r is None:
            return None
        out: dict[str, Any] = {"variant": r.variant, "status": r.status, "median_s": r.median,
                               "device_median_s": r.device_median, "max_error": r.max_error}
        if r.ok:
            out["gflops"] = c.flops / r.median / 1e9
            out["gbs"] = c.bytes / r.median / 1e9
        return out

    ratio = lambda a, b: (best[a].median / best[b].median  # noqa: E731
                          if best[a] and best[b] and best[a].ok and best[b].ok else None)
    return {
        "case": c.name, "title": c.title, "batch": c.batch, "flops": c.flops, "bytes": c.bytes,
        "best": {f: metrics(r) for f, r in best.items()},
        "ratios": {"tinyc/opencl": ratio("tinyc", "opencl"), "tinyc/numpy": ratio("tinyc", "numpy"),
                   "tinyc/tinyc-raw": ratio("tinyc", "tinyc-raw"),
                   "tinyc-raw/opencl": ratio("tinyc-raw", "opencl")},
        "all": [r.summary() for r in c.impls],
    }


def write_json(path: Path, results: list[CaseResult], meta: dict[str, Any]) -> None:
    doc = {"meta": meta, "cases": [case_json(c) for c in results]}
    path.write_text(json.dumps(doc, indent=1) + "\n")


def markdown_table(results: list[CaseResult]) -> str:
    """The summary table: times, rates and ratios of the best variant of each side."""
    head = ("| case | batch | tinyc ms | tinyc raw ms | OpenCL C ms | NumPy ms "
            "| GFLOP/s tinyc / OpenCL C / NumPy | GB/s tinyc / OpenCL C / NumPy "
            "| tinyc/OpenCL C | tinyc/NumPy |")
    rows = [head, "|" + "---|" * 10]
    for c in results:
        t, raw, cl, npy = (c.best(f) for f in ("tinyc", "tinyc-raw", "opencl", "numpy"))
        flops = " / ".join(_rate(r, c.flops) for r in (t, cl, npy))
        gbs = " / ".join(_rate(r, c.bytes) for r in (t, cl, npy))
        rows.append(f"| {c.title} | {c.batch} | {_ms(t)} | {_ms(raw)} | {_ms(cl)} | {_ms(npy)} "
                    f"| {flops} | {gbs} | {_ratio(t, cl)} | {_ratio(t, npy)} |")
    return "\n".join(rows)


def variants_table(results: list[CaseResult]) -> str:
    """Every variant tried, with its median, so the choice of baseline is visible."""
    rows = ["| case | side | variant | median ms | device ms | status |", "|---|---|---|---|---|---|"]
    for c in results:
        for r in c.impls:
            med = f"{r.median * 1e3:.2f}" if r.median else "–"
            dev = f"{r.device_median * 1e3:.2f}" if r.device_median else "–"
            rows.append(f"| {c.name} | {LABELS.get(r.family, r.family)} | {r.variant} | {med} | {dev} | {r.status} |")
    return "\n".join(rows)


def unavailable(results: list[CaseResult]) -> list[str]:
    """One line per case whose tinyc side did not run, with the reason."""
    out = []
    for c in results:
        r = c.best("tinyc")
        if r is not None and not r.ok:
            out.append(f"- {c.title}: tinyc: {r.status}")
    return out


def write_markdown(path: Path, results: list[CaseResult], meta: dict[str, Any], compile_md: str = "") -> None:
    lines = [
        "# tinyc benchmark results",
        "",
        f"Measured {meta.get('date', '')} on {meta['device']['name']} "
        f"({meta['device']['filter_string']}, driver {meta['device']['driver_version']}), "
        f"{meta.get('cpu_count', '?')} CPUs; NumPy {meta['blas'].get('numpy')} "
        f"with {_blas_text(meta['blas'])}.",
        "",
        f"Time: {meta['method'].replace('Timing method (the same for all implementations): ', '(the same method for all implementations) ')}",
        "",
        f"Load average (1/5/15 min) at start {_load(meta.get('load_average_at_start'))}, "
        f"after the cases {_load(meta.get('load_average_after_cases'))}: the machine "
        "(2 cores) is shared with other work, so single numbers can move by 2x "
        "between runs; ratios within a case (measured interleaved) are steadier.",
        "",
        "GFLOP/s counts with tinyc's work model (as `tinyc bench`); GB/s is the minimum traffic "
        "(each input read once, each output written once). Ratios are ratios of "
        "times (> 1: tinyc is slower). tinyc = `tinyc.compile(src)[name](*args, batch=N)` "
        "on USM arrays; tinyc raw = the same SPIR-V submitted through dpctl with "
        "pre-packed arguments; OpenCL C and NumPy = the fastest of their variants.",
        "",
        markdown_table(results),
        "",
    ]
    missing = unavailable(results)
    if missing:
        lines += ["tinyc cases that did not run:", "", *missing, ""]
    lines += ["## Every variant", "", variants_table(results), ""]
    if compile_md:
        lines += [compile_md, ""]
    path.write_text("\n".join(lines))


def _load(values: list[float] | None) -> str:
    return "/".join(f"{v:.1f}" for v in values) if values else "?"


def _blas_text(blas: dict[str, Any]) -> str:
    pools = blas.get("threadpools")
    if isinstance(pools, list) and pools:
        p = pools[0]
        text = f"{p.get('internal_api')} {p.get('version')} ({p.get('architecture')} kernel, {p.get('num_threads')} threads)"
    else:
        text = str(pools)
    env = [f"{k}={blas[k]}" for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if blas.get(k)]
    return text + (f", {' '.join(env)} set" if env else "")


def write_plot(path: Path, results: list[CaseResult]) -> bool:
    """Horizontal bars of GFLOP/s per case for tinyc, OpenCL C and NumPy (log scale)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    families = ("tinyc", "opencl", "numpy")
    n = len(results)
    fig, ax = plt.subplots(figsize=(10, 0.55 * n + 1.8))
    height = 0.26
    for k, fam in enumerate(families):
        for i, c in enumerate(results):
            y = i + (k - 1) * height
            r = c.best(fam)
            if r is not None and r.ok:
                value = c.flops / r.median / 1e9
                ax.barh(y, value, height, color=COLORS[fam])
                ax.text(value * 1.03, y, f"{value:.1f}", va="center", fontsize=7)
            else:
                ax.text(0.12, y, f"{LABELS[fam]}: n/a", va="center", fontsize=7, color=COLORS[fam])
    ax.set_yticks(range(n))
    ax.set_yticklabels([f"{c.title}  (batch {c.batch})" for c in results], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(0.1, None)
    ax.set_xlabel("GFLOP/s (log scale; higher is better)")
    ax.set_title("tinyc vs hand-written OpenCL C vs NumPy — median wall time per batch")
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=COLORS[f], label=LABELS[f]) for f in families],
              loc="lower right", fontsize=8)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
