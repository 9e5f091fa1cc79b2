"""`tune=True` for contractions: the kernel's knobs measured on the device, cached per device.

A contraction kernel has knobs of its own (knobs.py: lanes or group-id
mapping, entries per work-group, register blocks) and, where it calls
collectives, the lowering's schedule. Tuning one kernel:

1. **Knobs.** Each candidate around the default plan is built (the general
   variant, alpha and beta as arguments) and timed on synthetic operands
   of the kernel's layouts with TUNE_ENTRIES batch entries (so the chunks
   and tiles meet the memory system as a real batch does), launched by
   address like a call, each paired with the default timed just before
   it (a shared machine's slow phases hit both). After a first round the
   best third get more rounds; the best is kept only if it stays at least
   5% faster than the default (MARGIN).
2. **Schedule.** When the chosen kernel has collectives, tinyc's autotuner
   (tinyc.tune) tunes their schedule on the same sizes.

The result is cached on disk per device (`<cache dir>/contractions/`,
keyed by the kernel's key: layouts with the batch as `?`, dtypes,
epilogue; the device's name and driver; tinyc's version), and applies to
every variant its calls compile: alpha and beta as constants or arguments,
and every batch size.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
import json
import os
import tempfile
import time
import warnings
from typing import Any

import numpy as np

from tinyc.contractions.compiled import Analysis, compile_contraction, kernel_spec, signed
from tinyc.contractions.knobs import Knobs, candidates
from tinyc.contractions.running import memref_view

TUNE_ENTRIES = 20000
MAX_ELEMENTS = 1 << 25
"""At most this many elements in the synthetic operands (256 MiB of f64): a kernel whose
entries are large (the partial sums of a long reduction, thousands of elements each) is
timed at fewer entries instead of asking for gigabytes."""
MARGIN = 0.95
FIRST_ROUNDS = 3
MORE_ROUNDS = 6
FORMAT = 1


def _device_of(device: Any) -> Any:
    from tinyc.runtime.device import select_queue

    return select_queue(device).sycl_device


def _path(a: Analysis, epilogue: Any, device: Any):
    from tinyc.tune.cache import cache_dir, tinyc_version

    d = _device_of(device)
    text = json.dumps([repr(a.key(epilogue, False)), d.name, d.driver_version, tinyc_version(), FORMAT])
    return cache_dir() / "contractions" / f"{hashlib.sha256(text.encode()).hexdigest()[:40]}.json"


def cached_knobs(a: Analysis, epilogue: Any, device: Any) -> Knobs | None:
    """The knobs tuned for this kernel on the device, if any (a corrupt file warns, then None)."""
    path = _path(a, epilogue, device)
    try:
        data = json.loads(path.read_text())
        return Knobs.from_dict(data["knobs"])
    except FileNotFoundError:
        return None
    except Exception as exc:
        from tinyc.tune.cache import TuningWarning

        warnings.warn(f"ignoring the corrupt contraction tuning entry {path} ({type(exc).__name__})",
                      TuningWarning, stacklevel=3)
        return None


def knobs_for(a: Analysis, epilogue: Any, device: Any, tune: bool, budget: float | None = None) -> Knobs | None:
    """The cached knobs; with `tune`, tuned and cached on a miss."""
    found = cached_knobs(a, epilogue, device)
    if found is not None or not tune or a.empty:
        return found
    from tinyc.tune import default_budget

    start = time.perf_counter()
    knobs, report = search(a, epilogue, device, (budget or default_budget()) / 2)
    knobs = _with_schedule(a, epilogue, device, knobs, budget or default_budget())
    report["tuning_seconds"] = time.perf_counter() - start
    _store(_path(a, epilogue, device), knobs, report)
    return knobs


def _store(path, knobs: Knobs, report: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"knobs": knobs.as_dict(), "report": report}, f, indent=2, default=str)
    os.replace(tmp, path)


class _Bench:
    """Synthetic operands of an analysis's layouts at TUNE_ENTRIES entries, launched by address
    (each candidate's arguments checked and packed once, then relaunched)."""

    def __init__(self, a: Analysis):
        rng = np.random.default_rng(0)
        entries = max(TUNE_ENTRIES, max((a.sizes[d] for d in a.dynamic), default=1))
        elements = sum(t.representative({d: entries for d in a.dynamic}).extent for t in [*a.inputs, a.output])
        if elements > MAX_ELEMENTS:   # (large entries: fewer of them, as much work as fits)
            entries = max(1, entries * MAX_ELEMENTS // elements)
        self.sizes = {**a.sizes, **{d: entries for d in a.dynamic}}
        rep = {d: entries for d in a.dynamic}
        self.views = []
        for t in [*a.inputs, a.output]:
            layout = t.representative(rep)
            data = rng.standard_normal(max(layout.extent, 1)).astype(signed(a.compute))
            self.views.append(memref_view(data, layout))
        self.prepared: dict[int, Any] = {}

    def run(self, compiled: Any) -> float:
        groups = compiled.spec.plan.groups_for(self.sizes)
        prepared = self.prepared.get(id(compiled))
        if prepared is None:
            views = self.views if compiled.spec.inputs else self.views[-1:]
            if compiled.scratch_per_group:
                views = views + [np.empty((compiled.scratch_per_group, groups), self.views[0].dtype, order="F")]
            prepared = self.prepared[id(compiled)] = (compiled, compiled.kernel.prepare(1, 0, *views,
                                                                                         batch=groups))
        start = time.perf_counter()
        compiled.kernel.launch_raw(prepared[1].args, groups)
        return time.perf_counter() - start


def search(a: Analysis, epilogue: Any, device: Any, budget: float) -> tuple[Knobs, dict]:
    """The fastest knobs found within `budget` seconds (never slower than the default, as measured)."""
    start = time.perf_counter()
    bench = _Bench(a)
    default = compile_contraction(a, epilogue, device, False)
    bench.run(default)
    timed: list[tuple[Knobs, Any, list[float]]] = []
    for knobs in candidates(default.spec.plan):
        if time.perf_counter() - start > 0.6 * budget and timed:
            break
        if kernel_spec(a, epilogue, knobs=knobs).plan == default.spec.plan:
            continue
        try:
            compiled = compile_contraction(a, epilogue, device, False, knobs)
            bench.run(compiled)
        except Exception:   # a candidate that does not build or fit is no candidate
            continue
        timed.append((knobs, compiled, _paired(bench, compiled, default, FIRST_ROUNDS)))
    timed.sort(key=lambda entry: float(np.median(entry[2])))
    for knobs, compiled, ratios in timed[: max(1, len(timed) // 3)]:
        if time.perf_counter() - start > budget:
            break
        ratios += _paired(bench, compiled, default, MORE_ROUNDS)
    best = min(timed, key=lambda entry: float(np.median(entry[2])), default=None)
    report = {"candidates": len(timed), "entries": TUNE_ENTRIES,
              "ranking": [{"knobs": k.describe(), "relative": float(np.median(r))} for k, _, r in timed[:12]]}
    if best is None or float(np.median(best[2])) >= MARGIN:
        return Knobs(), report
    report["speedup"] = 1 / float(np.median(best[2]))
    return best[0], report


def _paired(bench: _Bench, compiled: Any, default: Any, rounds: int) -> list[float]:
    ratios = []
    for _ in range(rounds):
        base = bench.run(default)
        ratios.append(bench.run(compiled) / base)
    return ratios


def _with_schedule(a: Analysis, epilogue: Any, device: Any, knobs: Knobs, budget: float) -> Knobs:
    """The knobs with the collectives' schedule tuned by tinyc's autotuner on the same sizes."""
    from tinyc.compiler import check_source
    from tinyc.contractions.emit import build_kernel, kernel_parameters
    from tinyc.tune import cached_or_tuned

    spec = kernel_spec(a, epilogue, knobs=knobs)
    source = build_kernel(spec).checked_source()
    if not any(word in source for word in ("gemm", "gemv", "ger ", "hadamard_product", "axpby", "sum ")):
        return knobs
    bench = _Bench(a)
    names, _ = kernel_parameters(spec)
    sizes = {}
    for name, layout in zip(names + ["out"], [*spec.inputs, spec.output]):
        full = layout.representative({d: bench.sizes[d] for d in a.dynamic})
        sizes[name] = "x".join(str(n) for n in full.shape)
    hook = cached_or_tuned(_device_of(device), device, None, None, True, budget / 2,
                           spec.plan.groups_for(bench.sizes), sizes, progress=False)
    schedule = hook(check_source(source, "<einsum>")).get(spec.name, {})
    return replace(knobs, schedule=dict(schedule))
