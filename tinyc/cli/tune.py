"""`tinyc tune FILE.ir [--kernel K] [--batch N] [--budget S] [--clear]`.

Tunes each kernel of FILE on the device (tinyc/tune/) and caches the
fastest schedule, which every later `tinyc.compile` / `tinyc run` of the
kernel on that device then uses. `--clear` empties the cache first — tuned
schedules, stored program binaries (tinyc/runtime/binary_cache.py), device
facts (runtime/device_cache.py) and compiled modules (tinyc/compile_cache.py) —
alone, it only empties it. Kernels are always tuned again, even when a
schedule is cached for them.
"""

from __future__ import annotations

import json
import sys

import click


@click.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--kernel", "kernels", multiple=True, help="Kernel to tune (repeatable; default: all).")
@click.option("--batch", type=click.IntRange(min=1), default=None,
              help="Work-groups per timed launch: the batch the kernel will run at (default: "
                   "the program's own, else at least 10000 work-groups, at most 1 GB of data).")
@click.option("--budget", type=click.FloatRange(min=0.1), default=None,
              help="Seconds of tuning per kernel (default: $TINYC_TUNE_BUDGET or 30).")
@click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
              help="Shape of a memref argument with '?' sizes for the timing (as in tinyc run; "
                   "default: 32 for each '?' but the batch).")
@click.option("--schedule", "schedule_file", type=click.Path(dir_okay=False), default=None,
              help="JSON schedule whose knobs stay fixed while tuning the others.")
@click.option("--device", default=None, help="SYCL filter string, e.g. opencl:cpu:0.")
@click.option("--clear", is_flag=True, help="Empty the cache of tuned schedules first.")
def tune(file: str | None, kernels: tuple[str, ...], batch: int | None, budget: float | None,
         sizes: tuple[str, ...], schedule_file: str | None, device: str | None,
         clear: bool) -> None:
    """Tune the kernels of FILE on the device and cache the fastest schedules."""
    from tinyc.cli.common import EXIT_INPUT, print_diagnostics, read_one
    from tinyc.cli.errors import UsageError
    from tinyc.diagnostics import CompilationError, LaunchError
    from tinyc.tune import cache

    if clear:
        from tinyc import compile_cache
        from tinyc.runtime import binary_cache, device_cache

        removed = cache.clear()
        binaries = binary_cache.clear()
        others = device_cache.clear() + compile_cache.clear()
        click.echo(f"removed {removed} cached schedule(s) and {binaries} program binaries "
                   f"(and {others} device and compiled-module entries) from {cache.cache_dir()}")
    if file is None:
        if not clear:
            raise click.UsageError("give FILE.ir to tune, or --clear to empty the cache")
        return
    source = read_one(file)
    try:
        entries = tune_source(source, file, kernels, batch, budget, sizes, schedule_file, device)
    except CompilationError as err:
        print_diagnostics(err)
        sys.exit(EXIT_INPUT)
    except LaunchError as err:
        click.echo(str(err), err=True)
        sys.exit(EXIT_INPUT)
    except UsageError as err:
        raise click.UsageError(str(err)) from None
    for name, entry in entries.items():
        speedup = entry.default_seconds / entry.tuned_seconds if entry.tuned_seconds else 1.0
        click.echo(f"{name}: {entry.default_seconds * 1e3:.3f} ms (default) -> "
                   f"{entry.tuned_seconds * 1e3:.3f} ms (tuned), {speedup:.2f}x; "
                   f"{entry.candidates} of {entry.space} candidates timed at batch {entry.batch} "
                   f"in {entry.tuning_seconds:.1f} s")
        shown = json.dumps({name: entry.schedule}) if entry.schedule else "the default schedule"
        click.echo(f"  schedule: {shown}")
    click.echo(f"cached in {cache.schedules_dir()}", err=True)


def tune_source(source: str, file: str, kernels: tuple[str, ...], batch: int | None,
                budget: float | None, sizes: tuple[str, ...], schedule_file: str | None,
                device: str | None) -> dict:
    """Tune (again) the selected kernels of `source`; returns their cache entries."""
    from tinyc.harness.arguments import parse_sizes
    from tinyc.compiler import compile_to_spirv, target_device
    from tinyc.compiler import check_source
    from tinyc.schedule import Schedule
    from tinyc.tune import cached_or_tuned

    from tinyc.cli.errors import UsageError

    names = [fn.name for fn in check_source(source, file).functions]
    unknown = [k for k in kernels if k not in names]
    if unknown:
        raise UsageError(f"no kernel '{unknown[0]}' in {file}; kernels: {', '.join(names)}")
    found, info = target_device(device)
    if found is None:
        raise UsageError("tinyc tune needs a SPIR-V capable device to measure on")
    given = Schedule.load(schedule_file) if schedule_file else None
    results: dict = {}
    lookup = cached_or_tuned(found, device, given, None, True, budget, batch,
                             parse_sizes(sizes), kernels or None, retune=True,
                             progress=True, results=results)
    compile_to_spirv(source, file, device_info=info, schedule=given, tuned=lookup)
    return {name: results[name] for name in names if name in results}
