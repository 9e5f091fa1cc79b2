"""`tinyc bench`: kernel time, GFLOP/s, GB/s, and where the kernel sits on the roofline.

Work is counted by tinyc.harness.work, the model benchmarks/ uses too:
each collective's flops with the sizes it really has (one work-group
emulated by the reference interpreter), and the minimum memory traffic.
Both ceilings of the roofline — the best of several streaming kernels at the
kernel's footprint, and the peak FMA throughput — are measured in the same
run (roofline.py).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyc.harness.work import count_work
from tinyc.harness.batches import fitting
from tinyc.cli.errors import UsageError

BENCH_BATCH = 10000
"""`tinyc bench`'s batch when --batch is not given (lowered to what the kernel takes: batches.py)."""


def bench_kernel(source: str, file: str, kernel_name: str | None, batch: int | None,
                 sizes: Sequence[str], repeat: int, warmup: int, seed: int, device: str | None,
                 echo: Callable[[str], None] = print, std: str | None = None,
                 defines: dict[str, str] | None = None, policy: Any = None,
                 fp_contract: bool = False) -> dict[str, float]:
    """Time a kernel on random inputs and report its rates (`policy`: -W/-w); returns the
    numbers."""
    from tinyc.cli.common import compile_reporting
    from tinyc.reference import ReferenceFault, ReferenceUnsupported
    from tinyc.harness.arguments import describe_arguments, device_array_limit, make_arguments, parse_sizes

    program = compile_reporting(source, policy, name=file, device=device, std=std, defines=defines,
                                fp_contract=fp_contract)
    name = kernel_name or program.kernel_names[0]
    if name not in program.kernel_names:
        raise UsageError(f"no kernel '{name}' in {file}; kernels: {', '.join(program.kernel_names)}")
    kernel = program[name]
    fn, parsed, limit = program.checked_ir()[name], parse_sizes(sizes), device_array_limit(kernel)
    (args, _), batch = fitting(kernel, lambda b: make_arguments(fn, kernel.info, b, parsed, seed, limit),
                               batch, BENCH_BATCH)
    echo(describe_arguments(kernel.info, args))
    times = kernel.time(*args, batch=batch, repeat=repeat, warmup=warmup)
    seconds = float(np.median(times))
    result = {"seconds": seconds, "min_seconds": float(np.min(times))}
    line = f"{name}: batch {batch}, {seconds * 1e3:.3f} ms (median of {repeat} after {warmup} warm-up, device time)"
    try:
        work = count_work(program.checked_ir()[name], kernel.info, args, batch)
    except (ReferenceUnsupported, ReferenceFault) as exc:  # (a fault: undefined on these inputs)
        echo(line)
        echo(f"  no work model for this kernel ({exc})")
        return result
    result.update(gflops=work.flops / seconds / 1e9, gbytes=work.bytes / seconds / 1e9)
    echo(line)
    echo(f"  {result['gflops']:.2f} GFLOP/s, {result['gbytes']:.2f} GB/s "
         f"({work.flops / 1e6:.1f} MFLOP, {work.bytes / 1e6:.1f} MB minimum traffic)")
    from tinyc.cli.roofline import measure, numpy_element

    ceilings = measure(device, work.bytes, numpy_element(args), max(3, repeat // 4))
    for problem in ceilings.problems:
        echo(f"  {problem}")
    intensity = work.flops / work.bytes if work.bytes else float("inf")
    result.update(intensity=intensity, bandwidth_gbytes=ceilings.bandwidth / 1e9,
                  peak_gflops=ceilings.peak_flops / 1e9)
    if ceilings.bandwidth:
        streams = ", ".join(f"{k} {v / 1e9:.1f}" for k, v in ceilings.streams.items())
        result["bandwidth_share"] = work.bytes / seconds / ceilings.bandwidth
        echo(f"  memory ceiling {ceilings.bandwidth / 1e9:.2f} GB/s (best of {streams} GB/s over "
             f"{ceilings.footprint / 1e6:.0f} MB): the kernel moves "
             f"{100 * result['bandwidth_share']:.0f}% of it")
    if ceilings.peak_flops and not work.flops and work.bytes:
        echo("  no floating-point operation counted (integer arithmetic is not): "
             "the memory ceiling is the one that applies")
    elif ceilings.peak_flops:
        result["peak_share"] = work.flops / seconds / ceilings.peak_flops
        echo(f"  FMA peak {ceilings.peak_flops / 1e9:.1f} GFLOP/s ({ceilings.peak_type}, "
             f"{ceilings.peak_config}): the kernel reaches {100 * result['peak_share']:.0f}% of it")
    if not work.flops and not work.bytes:
        echo("  the kernel does no arithmetic and moves no data: nothing to place on the roofline")
    elif ceilings.bandwidth and ceilings.peak_flops and ceilings.attainable(intensity) > 0:
        roof = ceilings.attainable(intensity)   # (no roof without counted flops: a kernel of loads and stores)
        bound = "compute" if roof >= ceilings.peak_flops else "memory"
        result["roofline_share"] = work.flops / seconds / roof
        echo(f"  roofline at {intensity:.2f} flop/byte: {roof / 1e9:.1f} GFLOP/s ({bound} bound); "
             f"the kernel reaches {100 * result['roofline_share']:.0f}% of it")
    return result
