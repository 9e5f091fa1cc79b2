"""Run one case side by side: check every implementation, then time them interleaved.

Timing method (the same for all implementations): wall clock around one
complete, synchronous execution (`time.perf_counter`): for the device
sides that is submit plus wait, with the data already in USM memory; for
NumPy the call itself. After warm-up runs, the implementations are timed
round-robin (the order rotates every round), so a slow phase of this shared
2-core machine hits them all alike; in each round each one runs 3 times back
to back and the fastest run counts (other work only ever adds time). The
median over the rounds is reported, and a ratio of two implementations is
the median of their per-round ratios. Raw and OpenCL C launches also record
the device time of their events (profiling queue).
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from benchmarks.cases import Arrays, Case, DeviceData
from benchmarks.device import import_dpctl
from benchmarks.opencl_c import build, global_range

FAMILIES = ("tinyc", "tinyc-raw", "tinyc-tuned", "tinyc-tuned-raw", "opencl", "numpy")
PEAK = "fma-peak"
"""The FMA-chain kernel of the roofline, timed in every round with the case's sides:
a share of the peak is then a per-round ratio, like the others."""
STREAM = "copy-stream"
"""A streaming kernel of the roofline over the case's footprint, timed in every round:
a share of the memory bandwidth is then a per-round ratio too."""


@dataclass
class Config:
    """How much to measure."""

    warmup: int = 2
    repeat: int = 15
    seed: int = 0
    budget_s: float = 4.0  # cap on the timed runs of one slow implementation
    variants: str = "all"  # "all": time every OpenCL C / NumPy variant; "first": only the first
    tune_budget: float | None = 30.0  # seconds of autotuning per kernel; None: no tuned side
    launches: int = 3  # launches per implementation and round; the fastest counts
    pair_rounds: int = 41  # tuned against default, alternating, after the interleaved rounds


@dataclass
class ImplResult:
    """One implementation (or variant) of a case."""

    family: str
    variant: str
    status: str = "ok"  # "ok", "not available (...)", "wrong result (...)", "failed... (...)"
    max_error: float | None = None
    times: list[float] = field(default_factory=list)  # wall seconds, one per round
    rounds: list[int] = field(default_factory=list)   # the round of each time
    device_times: list[float] = field(default_factory=list)  # event seconds (raw, OpenCL C)
    setup_s: float | None = None  # compile/build time
    work: float | None = None  # the peak kernel: flops per launch; the stream kernel: bytes
    vs_default: list[float] = field(default_factory=list)  # tuned raw: time over the default's
    setup_spirv: bytes | None = field(default=None, repr=False)  # tinyc: the module timed
    same_as: "ImplResult | None" = field(default=None, repr=False)  # identical kernel timed there

    @property
    def ok(self) -> bool:
        if self.same_as is not None:
            return self.same_as.ok
        return self.status == "ok" and bool(self.times)

    @property
    def median(self) -> float | None:
        if self.same_as is not None:
            return self.same_as.median
        return float(np.median(self.times)) if self.times else None

    @property
    def device_median(self) -> float | None:
        if self.same_as is not None:
            return self.same_as.device_median
        return float(np.median(self.device_times)) if self.device_times else None

    def summary(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ("setup_spirv", "same_as")}
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


def _tinyc_runners(case: Case, queue: Any, d: DeviceData, init: Arrays, ref: Arrays,
                   config: Config) -> list[_Runner]:
    """tinyc through `compile(...)[name](*args, batch=N)`, and its SPIR-V submitted raw;
    then the same for the kernel tuned by `compile(..., tune=True)`.

    When the tuner kept the default schedule, the tuned kernel is the default
    one (the same SPIR-V): its rows are then the default's measurements, not
    a second noisy timing of the same code.
    """
    runners = _compiled_runners(case, queue, d, init, ref, "tinyc", {})
    if config.tune_budget is None:
        return runners
    tuned = _compiled_runners(case, queue, d, init, ref, "tinyc-tuned", {"tune": True},
                              config.tune_budget)
    for default, same in zip(runners, tuned):
        if same.result.status == "ok" and default.result.setup_spirv == same.result.setup_spirv:
            same.result.status = "same kernel"
            same.result.same_as = default.result
    return runners + tuned


def _compiled_runners(case: Case, queue: Any, d: DeviceData, init: Arrays, ref: Arrays,
                      family: str, options: dict[str, Any],
                      tune_budget: float | None = None) -> list[_Runner]:
    api = ImplResult(family, "Kernel.__call__")
    raw = ImplResult(f"{family}-raw", "dpctl submit")
    try:
        import os

        import tinyc

        if tune_budget is not None:  # tuned at the batch the case runs, as a user would ask
            os.environ["TINYC_TUNE_BUDGET"] = str(tune_budget)
            os.environ["TINYC_TUNE_BATCH"] = str(case.batch)
        start = time.perf_counter()
        program = tinyc.compile(case.source, name=f"benchmarks/kernels/{case.ir_file}", device=queue,
                                **options)
        kernel = program[case.kernel]
        api.setup_s = raw.setup_s = time.perf_counter() - start
        api.setup_spirv = raw.setup_spirv = program.spirv
        schedule = program.schedules.get(case.kernel, {})
        api.variant = raw.variant = json.dumps(schedule, separators=(",", ":"))
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
        raw_program = dpctl.program.create_program_from_spirv(queue, program.spirv)
        sycl_kernel = raw_program.get_sycl_kernel(case.kernel)
        local = tuple(kernel.info.work_group_size)
        run = _submitter(queue, sycl_kernel, case.raw_args(d), local, batch)
    except Exception as exc:
        raw.status = f"failed ({_short(exc)})"
        return runners + [_Runner(raw, lambda: None)]
    _verify_device(case, d, init, ref, raw, run)
    return runners + [_Runner(raw, run)]


def _time_all(runners: list[_Runner], config: Config) -> None:
    """Warm up, then time the correct implementations round-robin.

    Each round runs every implementation `config.launches` times back to back
    and keeps the fastest run: other work on this shared machine only ever
    adds time. Round numbers are kept, so two implementations can be compared
    round by round (`paired_ratio`).
    """
    live = [r for r in runners if r.result.status == "ok"]
    caps: dict[int, int] = {}
    for i, runner in enumerate(live):
        first = time.perf_counter()
        for _ in range(max(config.warmup, 1)):
            runner.run()
        each = (time.perf_counter() - first) / max(config.warmup, 1)
        caps[i] = max(1, min(config.repeat, int(config.budget_s / max(each * config.launches, 1e-9))))
    for rnd in range(config.repeat):
        shift = rnd % max(len(live), 1)
        for i in list(range(shift, len(live))) + list(range(shift)):
            runner = live[i]
            if len(runner.result.times) >= caps[i]:
                continue
            best, best_device = float("inf"), None
            for _ in range(config.launches):
                start = time.perf_counter()
                event = runner.run()
                wall = time.perf_counter() - start
                if wall < best:
                    best = wall
                    if event is not None and hasattr(event, "profiling_info_end"):
                        best_device = (event.profiling_info_end - event.profiling_info_start) * 1e-9
            runner.result.times.append(best)
            runner.result.rounds.append(rnd)
            if best_device is not None:
                runner.result.device_times.append(best_device)


def _pair_with_default(runners: list[_Runner], config: Config) -> None:
    """The tuned kernel against the default one, back to back, `pair_rounds` times.

    The interleaved rounds compare every side under the load of the moment;
    tuned against default is the comparison the tuner made, so it gets a
    measurement of its own: the two raw submissions alternate (each the
    fastest of `launches`), within a fraction of a second, and
    `vs_default` keeps their per-pair ratios.
    """
    by_family = {r.result.family: r for r in runners}
    default, tuned = by_family.get("tinyc-raw"), by_family.get("tinyc-tuned-raw")
    if default is None or tuned is None or not default.result.ok:
        return
    if tuned.result.status != "ok":  # the same kernel, or no tuned kernel
        return

    def best(runner: _Runner) -> float:
        fastest = float("inf")
        for _ in range(config.launches):
            start = time.perf_counter()
            runner.run()
            fastest = min(fastest, time.perf_counter() - start)
        return fastest

    for k in range(config.pair_rounds):
        first, second = (default, tuned) if k % 2 == 0 else (tuned, default)
        a, b = best(first), best(second)
        t, d = (b, a) if first is default else (a, b)
        tuned.result.vs_default.append(t / d)


def paired_ratio(a: ImplResult, b: ImplResult) -> tuple[float, float, float] | None:
    """Median, 10th and 90th percentile of a's time over b's, round by round."""
    a, b = a.same_as or a, b.same_as or b
    if a is b:
        return 1.0, 1.0, 1.0
    theirs = dict(zip(b.rounds, b.times))
    ratios = [t / theirs[r] for r, t in zip(a.rounds, a.times) if r in theirs]
    if not ratios:
        return None
    return (float(np.median(ratios)), float(np.percentile(ratios, 10)),
            float(np.percentile(ratios, 90)))


def _ceiling_runner(queue: Any, family: str, launch: Any, work: float) -> _Runner:
    result = ImplResult(family, launch.config, work=work)

    def run() -> Any:
        event = launch.submit(queue)
        event.wait()
        return event

    return _Runner(result, run)


def peak_share(r: ImplResult, peak: ImplResult, amount: float) -> float | None:
    """Median over the rounds of r's rate (`amount` per launch: flops, or bytes against a
    stream kernel) over the ceiling kernel's in the same round."""
    r = r.same_as or r
    theirs = dict(zip(peak.rounds, peak.times))
    shares = [(amount / t) / (peak.work / theirs[k]) for k, t in zip(r.rounds, r.times)
              if k in theirs and peak.work]
    return float(np.median(shares)) if shares else None


def bandwidth_share(r: ImplResult, streams: list[ImplResult], nbytes: float) -> float | None:
    """Median over the rounds of r's bytes/s over the fastest stream kernel's in that round."""
    r = r.same_as or r
    best: dict[int, float] = {}
    for s in streams:
        for k, t in zip(s.rounds, s.times):
            best[k] = max(best.get(k, 0.0), s.work / t)
    shares = [(nbytes / t) / best[k] for k, t in zip(r.rounds, r.times) if best.get(k)]
    return float(np.median(shares)) if shares else None


def run_case(case: Case, queue: Any, config: Config, log: Callable[[str], None] = print,
             peaks: dict[str, Any] | None = None, streams: list[Any] = ()) -> CaseResult:
    """Check and time every implementation of a case on `queue`.

    `peaks` (element type -> roofline.PeakLaunch) adds the FMA-peak kernel of
    the case's precision to every round; `streams` (roofline.StreamLaunch) the
    streaming kernels, for the share of the memory bandwidth (`bandwidth_share`).
    """
    rng = np.random.default_rng(config.seed)
    init = case.inputs(rng)
    ref = case.reference(init)
    d = case.to_device(queue, init)
    runners = _numpy_runners(case, init, ref, config)
    runners += _opencl_runners(case, queue, d, init, ref, config)
    try:
        runners += _tinyc_runners(case, queue, d, init, ref, config)
    except Exception as exc:  # never let tinyc take the baselines down
        log(traceback.format_exc())
        for family in ("tinyc", "tinyc-raw"):
            runners.append(_Runner(ImplResult(family, "-", f"failed ({_short(exc)})"), lambda: None))
    element = "f64" if np.dtype(case.dtype) == np.float64 else "f32"
    if peaks and peaks.get(element) is not None:
        runners.append(_ceiling_runner(queue, PEAK, peaks[element], peaks[element].flops))
    for stream in streams:
        runners.append(_ceiling_runner(queue, STREAM, stream, stream.bytes))
    for runner in runners:
        if runner.result.status != "ok":
            log(f"  {case.name}: {runner.result.family} [{runner.result.variant}]: {runner.result.status}")
    _time_all(runners, config)
    _pair_with_default(runners, config)
    return CaseResult(case.name, case.title, case.batch, case.flops, case.bytes, [r.result for r in runners])
