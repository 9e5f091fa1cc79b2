"""The autotuner: measure schedules on the device, keep the fastest, cache it on disk.

    tinyc.compile(src, tune=True)       # tune every kernel without a cached schedule
    tinyc tune k.ir [--kernel K] [--batch N] [--budget S] [--clear]

`$TINYC_TUNE_BUDGET` (seconds per kernel) and `$TINYC_TUNE_BATCH` (the batch
the kernels will run at) set what `tune=True` does, as `--budget` and
`--batch` do for `tinyc tune`.

For each kernel, `space.py` enumerates the free knobs' search spaces
(declared beside the knobs, tinyc/schedule/knobs.py) and prunes them with
the cost model (`cost.py`: registers, local memory, the bandwidth and compute
bound of each candidate); `tuner.py` times the best-ranked on the device with
synthetic data at the batch the user runs, or a representative one
(`measure.py`), and keeps the fastest, never one slower than the default. Results go to the on-disk cache
(`cache.py`) keyed by the kernel's source, the device, its driver and tinyc's
version; every later `tinyc.compile` of the kernel on that device uses them.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

from tinyc.ir.core import Function, Program as IRProgram
from tinyc.tune import cache
from tinyc.tune.cache import CacheKey, Entry, TuningWarning
from tinyc.tune.progress import ProgressBar

__all__ = ["cached_or_tuned", "TuningWarning", "default_budget", "default_batch", "Entry"]

DEFAULT_BUDGET = 30.0
BUDGET_ENV = "TINYC_TUNE_BUDGET"
BATCH_ENV = "TINYC_TUNE_BATCH"


def default_budget() -> float:
    """Seconds of tuning per kernel: $TINYC_TUNE_BUDGET, else 30."""
    try:
        return float(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET))
    except ValueError:
        return DEFAULT_BUDGET


def default_batch() -> int | None:
    """The batch to tune at: $TINYC_TUNE_BATCH if it is a positive integer, else None (the
    program's own batch or a representative one, tinyc/tune/measure.py)."""
    try:
        value = int(os.environ.get(BATCH_ENV, ""))
    except ValueError:
        return None
    return value if value > 0 else None


def cache_key(fn: Function, device: Any, given: dict[str, Any],
              subgroup_size: int | None) -> CacheKey:
    """The cache key of a checked kernel on a dpctl device."""
    from tinyc.ir.printer import print_function

    return CacheKey(fn.name, print_function(fn), str(device.name), str(device.driver_version),
                    {"schedule": given, "subgroup_size": subgroup_size})


def cached_or_tuned(device: Any, request: Any, given: Any, subgroup_size: int | None,
                    tune: bool, budget: float | None = None, batch: int | None = None,
                    sizes: dict[str, str] | None = None, kernels: Iterable[str] | None = None,
                    retune: bool = False, progress: bool | None = None,
                    results: dict[str, Entry] | None = None
                    ) -> Callable[[IRProgram], dict[str, dict]]:
    """The `tuned=` hook of compile_to_spirv: each kernel's cached schedule, tuning on a miss.

    `device` is the dpctl device (the cache key), `request` what the caller
    asked for (where kernels run). With `tune`, kernels without a cached
    schedule (all of `kernels` with `retune`) are tuned and cached; `results`
    receives the entries tuned here.
    """
    from tinyc.target.device_info import DeviceInfo

    info = DeviceInfo.from_sycl_device(device)
    wanted = None if kernels is None else set(kernels)

    def lookup(program: IRProgram) -> dict[str, dict]:
        from tinyc.ir.printer import print_function
        from tinyc.tune.tuner import tune_kernel

        out: dict[str, dict] = {}
        for fn in program.functions:
            entry_given = given.for_kernel(fn.name) if given else {}
            key = cache_key(fn, device, entry_given, subgroup_size)
            selected = wanted is None or fn.name in wanted
            entry = None if (retune and selected) else cache.load(key)
            if entry is None and tune and selected:
                bar = ProgressBar(f"tuning {fn.name}", enabled=progress)
                entry = tune_kernel(fn, print_function(fn), request if request is not None else device,
                                    info, entry_given, subgroup_size, budget or default_budget(),
                                    batch or default_batch(), sizes, bar)
                cache.store(key, entry)
                if results is not None:
                    results[fn.name] = entry
            if entry is not None and entry.schedule:
                out[fn.name] = entry.schedule
        return out

    return lookup
