"""Run one case side by side: check every implementation, then time them interleaved.

Timing method (the same for all implementations): wall clock around one
complete, synchronous execution (`time.perf_counter`): for the device
sides that is submit plus wait, with the data already in USM memory; for
NumPy the call itself. After warm-up runs, the implementations are timed
round-robin (the order rotates every round), so a slow phase of this shared
2-core machine hits them all alike; the median is reported. Raw and OpenCL C
launches also record the device time of their events (profiling queue).
"""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from benchmarks.cases import Arrays, Case, DeviceData
from benchmarks.device import import_dpctl
from benchmarks.opencl_c import build, global_range

FAMILIES = ("tinyc", "tinyc-raw", "opencl", "numpy")


@dataclass
class Config:
    """How much to measure."""

    warmup: int = 2
    repeat: int = 15
    seed: int = 0
    budget_s: float = 4.0  # cap on the timed runs of one slow implementation
    variants: str = "all"  # "all": time every OpenCL C / NumPy variant; "first": only the first


@dataclass
class ImplResult:
    """One implementation (or variant) of a case."""

    family: str
    variant: str
    status: str = "ok"  # "ok", "not available (...)", "wrong result (...)", "failed... (...)"
    max_error: float | None = None
    times: list[float] = field(default_factory=list)  # wall seconds
    device_times: list[float] = field(default_factory=list)  # event seconds (raw, OpenCL C)
    setup_s: float | None = None  # compile/build time

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.times)

    @property
    def median(self) -> float | None:
        return float(np.median(self.times)) if self.times else None

    @property
    def device_median(self) -> float | None:
        return float(np.median(self.device_times)) if self.device_times else None

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        out["median_s"] = self.median
        out["device_median_s"] = self.device_median
        return out


@dataclass
class CaseResult:
    """All implementations of one case, and the best of each family."""

    name: str
    title: str
    batch: int
    flops: float
    bytes: float
    impls: list[ImplResult]

    def best(self, family: str) -> ImplResult | None:
        """The fastest correct variant of a family, else its first (to show why it is missing)."""
        members = [r for r in self.impls if r.family == family]
        good = [r for r in members if r.ok]
        if good:
            return min(good, key=lambda r: r.median)
        return members[0] if members else None


@dataclass
class _Runner:
    result: ImplResult
    run: Callable[[], Any]  # one synchronous execution; may return a profiled event


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}"[:300]


def _check(case: Case, got: Arrays, ref: Arrays) -> tuple[bool, float]:
    """Max abs error relative to the reference's scale, and whether it passes."""
    worst = 0.0
    for name in case.outputs:
        expect = ref[name]
        scale = max(1.0, float(np.max(np.abs(expect))))
        err = float(np.max(np.abs(got[name].astype(np.float64) - expect))) / scale
        if not np.isfinite(err):
            return False, float("inf")
        worst = max(worst, err)
    return worst <= case.tolerance, worst


def _reset_device(case: Case, d: DeviceData, init: Arrays) -> None:
    for name in case.outputs:
        d.arrays[name].upload(init[name])


def _device_outputs(case: Case, d: DeviceData) -> Arrays:
    return {name: d.arrays[name].download() for name in case.outputs}


def _verify_device(case: Case, d: DeviceData, init: Arrays, ref: Arrays, result: ImplResult,
                   run: Callable[[], Any]) -> bool:
    """Run once on fresh outputs and compare with the reference."""
    _reset_device(case, d, init)
    try:
        run()
    except Exception as exc:  # a launch error is a result, not a crash of the suite
        result.status = f"failed ({_short(exc)})"
        return False
    ok, err = _check(case, _device_outputs(case, d), ref)
    result.max_error = err
    if not ok:
        result.status = f"wrong result (max error {err:.3g})"
    return ok


def _numpy_runners(case: Case, init: Arrays, ref: Arrays, config: Config) -> list[_Runner]:
    out = []
    versions = list(case.numpy_versions().items())
    if config.variants == "first":
        versions = versions[:1]
    for name, fn in versions:
        host = {k: v.copy(order="F") for k, v in init.items()}
        result = ImplResult("numpy", name)
        fn(host)
        ok, err = _check(case, host, ref)
        result.max_error = err
        if not ok:
            result.status = f"wrong result (max error {err:.3g})"
        out.append(_Runner(result, lambda fn=fn, host=host: fn(host)))
    return out


def _submitter(queue: Any, kernel: Any, args: list, local: tuple[int, int], batch: int) -> Callable[[], Any]:
    gsize, lsize = global_range(local, batch)

    def run() -> Any:
        event = queue.submit_async(kernel, args, gsize, lsize)
        event.wait()
        return event

    return run


def _opencl_runners(case: Case, queue: Any, d: DeviceData, init: Arrays, ref: Arrays,
                    config: Config) -> list[_Runner]:
    out = []
    variants = case.opencl_variants()
    if config.variants == "first":
        variants = variants[:1]
    for variant in variants:
        result = ImplResult("opencl", variant.name)
        try:
            kernel, result.setup_s = build(queue, variant)
        except Exception as exc:
            result.status = f"failed (build: {_short(exc)})"
            out.append(_Runner(result, lambda: None))
            continue
        run = _submitter(queue, kernel, case.opencl_args(d, variant), variant.local, case.batch)
        _verify_device(case, d, init, ref, result, run)
        out.append(_Runner(result, run))
    return out


def _tinyc_runners(case: Case, queue: Any, d: DeviceData, init: Arrays, ref: Arrays) -> list[_Runner]:
    """tinyc through `compile(...)[name](*args, batch=N)`, and its SPIR-V submitted raw."""
    api = ImplResult("tinyc", "Kernel.__call__")
    raw = ImplResult("tinyc-raw", "dpctl submit")
    try:
        import tinyc

        start = time.perf_counter()
        program = tinyc.compile(case.source, name=f"benchmarks/kernels/{case.ir_file}", device=queue)
        kernel = program[case.kernel]
        api.setup_s = time.perf_counter() - start
    except Exception as exc:  # a tinyc bug: report it, and the baselines anyway
        reason = f"failed to compile ({_short(exc)})"
        api.status = raw.status = reason
        return [_Runner(api, lambda: None), _Runner(raw, lambda: None)]
    args = case.tinyc_args(d)
    batch = case.batch
    runners = [_Runner(api, lambda: kernel(*args, batch=batch))]
    _verify_device(case, d, init, ref, api, runners[0].run)
    try:
        dpctl = import_dpctl()
        start = time.perf_counter()
        raw_program = dpctl.program.create_program_from_spirv(queue, program.spirv)
        sycl_kernel = raw_program.get_sycl_kernel(case.kernel)
        raw.setup_s = time.perf_counter() - start
        local = tuple(kernel.info.work_group_size)
        raw.variant = f"dpctl submit, local {local[0]}×{local[1]}"
        run = _submitter(queue, sycl_kernel, case.raw_args(d), local, batch)
    except Exception as exc:
        raw.status = f"failed ({_short(exc)})"
        return runners + [_Runner(raw, lambda: None)]
    _verify_device(case, d, init, ref, raw, run)
    return runners + [_Runner(raw, run)]


def _time_all(runners: list[_Runner], config: Config) -> None:
    """Warm up, then time the correct implementations round-robin."""
    live = [r for r in runners if r.result.status == "ok"]
    caps: dict[int, int] = {}
    for i, runner in enumerate(live):
        first = time.perf_counter()
        for _ in range(max(config.warmup, 1)):
            runner.run()
        each = (time.perf_counter() - first) / max(config.warmup, 1)
        caps[i] = max(1, min(config.repeat, int(config.budget_s / max(each, 1e-9))))
    for rnd in range(config.repeat):
        shift = rnd % max(len(live), 1)
        for i in list(range(shift, len(live))) + list(range(shift)):
            runner = live[i]
            if len(runner.result.times) >= caps[i]:
                continue
            start = time.perf_counter()
            event = runner.run()
            runner.result.times.append(time.perf_counter() - start)
            if event is not None and hasattr(event, "profiling_info_end"):
                runner.result.device_times.append((event.profiling_info_end - event.profiling_info_start) * 1e-9)


def run_case(case: Case, queue: Any, config: Config, log: Callable[[str], None] = print) -> CaseResult:
    """Check and time every implementation of a case on `queue`."""
    rng = np.random.default_rng(config.seed)
    init = case.inputs(rng)
    ref = case.reference(init)
    d = case.to_device(queue, init)
    runners = _numpy_runners(case, init, ref, config)
    runners += _opencl_runners(case, queue, d, init, ref, config)
    try:
        runners += _tinyc_runners(case, queue, d, init, ref)
    except Exception as exc:  # never let tinyc take the baselines down
        log(traceback.format_exc())
        for family in ("tinyc", "tinyc-raw"):
            runners.append(_Runner(ImplResult(family, "-", f"failed ({_short(exc)})"), lambda: None))
    for runner in runners:
        if runner.result.status != "ok":
            log(f"  {case.name}: {runner.result.family} [{runner.result.variant}]: {runner.result.status}")
    _time_all(runners, config)
    return CaseResult(case.name, case.title, case.batch, case.flops, case.bytes, [r.result for r in runners])
