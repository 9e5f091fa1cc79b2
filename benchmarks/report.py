"""Results as JSON (everything), Markdown tables (the summary) and PNG plots.

Ratios are medians of per-round ratios of times (suite.paired_ratio):
tinyc/OpenCL C = 2.0 means tinyc takes twice as
long as the hand-written kernel (lower is better for tinyc).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.suite import FAMILIES, PEAK, CaseResult, ImplResult, paired_ratio, peak_share

LABELS = {"tinyc": "tinyc", "tinyc-tuned": "tinyc tuned", "opencl": "OpenCL C", "numpy": "NumPy"}
COLORS = {"tinyc": "#1f77b4", "tinyc-tuned": "#9467bd", "opencl": "#ff7f0e", "numpy": "#2ca02c"}


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
    """a's time over b's: the median of their per-round ratios (see _paired)."""
    found = _paired(a, b)
    return "–" if found is None else f"{found[0]:.2f}"


def case_json(c: CaseResult) -> dict[str, Any]:
    best = {f: c.best(f) for f in FAMILIES}

    def metrics(r: ImplResult | None) -> dict[str, Any] | None:
        if r is None:
            return None
        out: dict[str, Any] = {"variant": r.variant, "status": r.status, "median_s": r.median,
                               "device_median_s": r.device_median, "max_error": r.max_error}
        if r.ok:
            out["gflops"] = c.flops / r.median / 1e9
            out["gbs"] = c.bytes / r.median / 1e9
        return out

    def ratio(a: str, b: str) -> float | None:
        found = _paired(best[a], best[b])
        return None if found is None else found[0]

    return {
        "case": c.name, "title": c.title, "batch": c.batch, "flops": c.flops, "bytes": c.bytes,
        "best": {f: metrics(r) for f, r in best.items()},
        "ratios": {"tinyc/opencl": ratio("tinyc", "opencl"), "tinyc/numpy": ratio("tinyc", "numpy"),
                   "tinyc/tinyc-raw": ratio("tinyc", "tinyc-raw"),
                   "tinyc-raw/opencl": ratio("tinyc-raw", "opencl"),
                   "tuned-raw/opencl": ratio("tinyc-tuned-raw", "opencl"),
                   "tuned-raw/tinyc-raw": ratio("tinyc-tuned-raw", "tinyc-raw")},
        "all": [r.summary() for r in c.impls],
    }


def write_json(path: Path, results: list[CaseResult], meta: dict[str, Any]) -> None:
    doc = {"meta": meta, "cases": [case_json(c) for c in results]}
    path.write_text(json.dumps(doc, indent=1) + "\n")


def markdown_table(results: list[CaseResult]) -> str:
    """The summary table: times, rates and ratios of the best variant of each side."""
    head = ("| case | batch | tinyc ms | tinyc raw ms | tuned ms | OpenCL C ms | NumPy ms "
            "| GFLOP/s tuned / OpenCL C / NumPy | GB/s tuned / OpenCL C / NumPy "
            "| tinyc/OpenCL C | tuned/OpenCL C | tuned/NumPy |")
    rows = [head, "|" + "---|" * 12]
    for c in results:
        t, raw, tuned, cl, npy = (c.best(f) for f in ("tinyc", "tinyc-raw", "tinyc-tuned", "opencl",
                                                      "numpy"))
        flops = " / ".join(_rate(r, c.flops) for r in (tuned, cl, npy))
        gbs = " / ".join(_rate(r, c.bytes) for r in (tuned, cl, npy))
        rows.append(f"| {c.title} | {c.batch} | {_ms(t)} | {_ms(raw)} | {_ms(tuned)} | {_ms(cl)} "
                    f"| {_ms(npy)} | {flops} | {gbs} | {_ratio(t, cl)} | {_ratio(tuned, cl)} "
                    f"| {_ratio(tuned, npy)} |")
    return "\n".join(rows)


def _peak(c: CaseResult, ceilings: dict[str, Any]) -> float | None:
    key = "peak_f64" if " f64 " in f" {c.title} " else "peak_f32"
    return ceilings.get(key) or None


def share_of_peak(c: CaseResult, r: ImplResult | None, ceilings: dict[str, Any]) -> float | None:
    """r's GFLOP/s over the FMA peak: per round against the peak kernel timed in the same round
    (the median of those), else against the peak measured at the start."""
    if r is None or not r.ok:
        return None
    timed = [p for p in c.impls if p.family == PEAK and p.ok]
    if timed:
        found = peak_share(r, timed[0], c.flops)
        if found is not None:
            return found
    peak = _peak(c, ceilings)
    return c.flops / r.median / peak if peak else None


def _share_text(c: CaseResult, r: ImplResult | None, ceilings: dict[str, Any]) -> str:
    share = share_of_peak(c, r, ceilings)
    return "–" if share is None else f"{100 * share:.0f}%"


def _geomean(values: list[float]) -> float:
    import math

    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _paired(a: ImplResult | None, b: ImplResult | None) -> tuple[float, float, float] | None:
    if a is None or b is None or not a.ok or not b.ok:
        return None
    return paired_ratio(a, b)


def _versus_default(t: ImplResult | None, d: ImplResult | None) -> tuple[float, float, float] | None:
    """Tuned over default from their back-to-back pairs (suite._pair_with_default), else
    from the interleaved rounds."""
    if t is not None and t.vs_default:
        import numpy as np

        v = t.vs_default
        return float(np.median(v)), float(np.percentile(v, 10)), float(np.percentile(v, 90))
    return _paired(t, d)


def _paired_text(found: tuple[float, float, float] | None) -> str:
    if found is None:
        return "–"
    mid, lo, hi = found
    return f"{mid:.2f} ({lo:.2f}-{hi:.2f})"


def gemm_table(results: list[CaseResult], ceilings: dict[str, Any]) -> str:
    """The gemm suite: default and tuned kernels against the best OpenCL C, all submitted raw.

    Kernel against kernel: each side is one `queue.submit_async(...).wait()` on
    pre-packed arguments (tinyc's Python launch path is in the main table).
    Ratios are the median of the per-round ratios (the sides alternate within
    each round), with their 10th-90th percentile; tuned/default comes from
    41 back-to-back pairs of the two (suite._pair_with_default).
    """
    head = ("| case | batch | default ms | tuned ms | OpenCL C ms | tuned/OpenCL C | default/OpenCL C "
            "| tuned/default | tuned GFLOP/s | % of FMA peak | tuned schedule | tuning s |")
    rows = [head, "|" + "---|" * 12]
    tuned_vs_cl, tuned_vs_default = [], []
    for c in results:
        if not c.name.startswith("gemm"):
            continue
        d, t, cl = c.best("tinyc-raw"), c.best("tinyc-tuned-raw"), c.best("opencl")
        share = _share_text(c, t, ceilings)
        t_cl, d_cl, t_d = _paired(t, cl), _paired(d, cl), _versus_default(t, d)
        if t_cl:
            tuned_vs_cl.append(t_cl[0])
        if t_d:
            tuned_vs_default.append(t_d[0])
        schedule = f"`{t.variant}`" if t is not None else "–"
        if t is not None and t.same_as is not None:
            schedule = "= default"
        setup = f"{t.setup_s:.1f}" if t is not None and t.setup_s is not None else "–"
        rows.append(f"| {c.title} | {c.batch} | {_ms(d)} | {_ms(t)} | {_ms(cl)} "
                    f"| {_paired_text(t_cl)} | {_paired_text(d_cl)} | {_paired_text(t_d)} "
                    f"| {_rate(t, c.flops)} | {share} | {schedule} | {setup} |")
    big = [f"{c.title.split()[0]} {_share_text(c, c.best('tinyc-tuned-raw'), ceilings)}"
           for c in results if c.name.startswith("gemm_") and c.name.endswith("_f32_64")]
    summary = (f"64×64×64 f32, tuned, share of the FMA peak (per round, against the peak kernel "
               f"timed in the same rounds): {', '.join(big) or '–'}.\n\n"
               f"Geometric mean of tuned/OpenCL C over {len(tuned_vs_cl)} gemm cases: "
               f"**{_geomean(tuned_vs_cl):.2f}**; tuned/default from "
               f"{min(tuned_vs_default, default=float('nan')):.2f} to "
               f"{max(tuned_vs_default, default=float('nan')):.2f} (geometric mean "
               f"{_geomean(tuned_vs_default):.2f}).")
    return "\n".join(rows) + "\n\n" + summary


def ceilings_text(ceilings: dict[str, Any]) -> str:
    if not ceilings:
        return "Ceilings not measured."
    streams = ", ".join(f"{k} {v / 1e9:.1f}" for k, v in ceilings.get("streams", {}).items())
    return (f"Ceilings measured in this run (`tinyc/cli/roofline.py`, as `tinyc bench`): memory "
            f"{ceilings.get('bandwidth', 0) / 1e9:.1f} GB/s (best of {streams} GB/s over "
            f"{ceilings.get('footprint', 0) / 1e6:.0f} MB, the gemm cases' footprint); FMA peak "
            f"{ceilings.get('peak_f32', 0) / 1e9:.1f} GFLOP/s f32 ({ceilings.get('peak_f32_config')}), "
            f"{ceilings.get('peak_f64', 0) / 1e9:.1f} GFLOP/s f64 ({ceilings.get('peak_f64_config')}).")


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
    ceilings = meta.get("ceilings", {})
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
        "(each input read once, each output written once). Ratios are medians of per-round ratios of "
        "times (> 1: tinyc is slower). tinyc = `tinyc.compile(src)[name](*args, batch=N)` "
        "on USM arrays; tinyc raw = the same SPIR-V submitted through dpctl with "
        "pre-packed arguments; OpenCL C and NumPy = the fastest of their variants.",
        "",
        markdown_table(results),
        "",
        "## gemm suite: default and tuned against OpenCL C",
        "",
        ceilings_text(ceilings),
        "",
        gemm_table(results, ceilings),
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


def write_roofline(path: Path, results: list[CaseResult], ceilings: dict[str, Any]) -> bool:
    """Every case on the roofline of the measured ceilings: default and tuned side by side."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    bandwidth = ceilings.get("bandwidth")
    if not bandwidth:
        return False
    fig, ax = plt.subplots(figsize=(10, 7))
    xs = [c.flops / c.bytes for c in results if c.bytes]
    lo, hi = min(xs) / 2, max(xs) * 2
    import numpy as np

    grid = np.logspace(np.log10(lo), np.log10(hi), 200)
    for key, style, label in (("peak_f32", "-", "f32"), ("peak_f64", "--", "f64")):
        peak = ceilings.get(key)
        if peak:
            ax.plot(grid, np.minimum(peak, grid * bandwidth) / 1e9, "k" + style, lw=1.2,
                    label=f"roofline {label}: {peak / 1e9:.0f} GFLOP/s, {bandwidth / 1e9:.1f} GB/s")
    for c in results:
        x = c.flops / c.bytes
        d, t, cl = c.best("tinyc-raw"), c.best("tinyc-tuned-raw"), c.best("opencl")
        points = [(r, m, f) for r, m, f in ((d, "o", "none"), (t, "o", COLORS["tinyc-tuned"]),
                                             (cl, "x", COLORS["opencl"])) if r is not None and r.ok]
        ys = {}
        for r, marker, face in points:
            y = c.flops / r.median / 1e9
            ys[id(r)] = y
            if marker == "x":
                ax.scatter([x], [y], marker=marker, color=face, s=36, zorder=3)
            else:
                ax.scatter([x], [y], marker=marker, facecolors=face, s=36, zorder=3,
                           edgecolors=COLORS["tinyc-tuned"] if face == "none" else face)
        if d is not None and t is not None and d.ok and t.ok:
            ax.annotate("", (x, ys[id(t)]), (x, ys[id(d)]),
                        arrowprops={"arrowstyle": "->", "color": "0.5", "lw": 0.8})
        if t is not None and t.ok:
            ax.text(x * 1.04, ys[id(t)], c.title, fontsize=6, va="center")
    from matplotlib.lines import Line2D

    handles = ax.get_legend_handles_labels()[0] + [
        Line2D([], [], marker="o", ls="", mfc="none", mec=COLORS["tinyc-tuned"], label="tinyc default"),
        Line2D([], [], marker="o", ls="", color=COLORS["tinyc-tuned"], label="tinyc tuned"),
        Line2D([], [], marker="x", ls="", color=COLORS["opencl"], label="OpenCL C (best variant)")]
    ax.legend(handles=handles, fontsize=8, loc="lower right")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop per byte of minimum traffic)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("tinyc on the measured roofline: default (hollow) → tuned (filled)")
    ax.grid(which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
