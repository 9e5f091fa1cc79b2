"""`tinyc bench`: kernel time, GFLOP/s, GB/s and the share of the device's bandwidth.

Work is counted by tinyc.analysis.work, the model benchmarks/ uses too:
each collective's flops with the sizes it really has (one work-group
emulated by the reference interpreter), and the minimum memory traffic.
The device's bandwidth is measured in the same run by a tinyc copy kernel
over 2 × 64 MiB.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from tinyc.analysis.work import count_work
from tinyc.cli.errors import UsageError

COPY_KERNEL = """
func @copy(%src: memref<f32x?x?>, %dst: memref<f32x?x?>) {
  %g = builtin.group_id : index
  %x = subview %src[:, %g] : memref<f32x?>
  %y = subview %dst[:, %g] : memref<f32x?>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  axpby.n %one, %x, %zero, %y
}
"""
COPY_ROWS, COPY_COLUMNS = 16384, 1024  # 64 MiB of f32 per array


def copy_bandwidth(device: str | None, repeat: int) -> float:
    """Bytes per second of a tinyc copy kernel (read + write) on the device."""
    import tinyc

    kernel = tinyc.compile(COPY_KERNEL, name="<copy>", device=device)["copy"]
    src = np.ones((COPY_ROWS, COPY_COLUMNS), dtype=np.float32, order="F")
    dst = np.zeros_like(src)
    seconds = float(np.median(kernel.time(src, dst, batch=COPY_COLUMNS, repeat=repeat)))
    return 2.0 * src.nbytes / seconds


def bench_kernel(source: str, file: str, kernel_name: str | None, batch: int,
                 sizes: Sequence[str], repeat: int, warmup: int, seed: int, device: str | None,
                 echo: Callable[[str], None] = print, std: str | None = None,
                 defines: dict[str, str] | None = None) -> dict[str, float]:
    """Time a kernel on random inputs and report its rates; returns the numbers."""
    import tinyc
    from tinyc.reference import ReferenceUnsupported
    from tinyc.cli.run import describe_arguments, device_array_limit, make_arguments, parse_sizes

    program = tinyc.compile(source, name=file, device=device, std=std, defines=defines)
    name = kernel_name or program.kernel_names[0]
    if name not in program.kernel_names:
        raise UsageError(f"no kernel '{name}' in {file}; kernels: {', '.join(program.kernel_names)}")
    kernel = program[name]
    args, _ = make_arguments(program.checked_ir()[name], kernel.info, batch, parse_sizes(sizes), seed,
                             device_array_limit(kernel))
    echo(describe_arguments(kernel.info, args))
    times = kernel.time(*args, batch=batch, repeat=repeat, warmup=warmup)
    seconds = float(np.median(times))
    result = {"seconds": seconds, "min_seconds": float(np.min(times))}
    line = f"{name}: batch {batch}, {seconds * 1e3:.3f} ms (median of {repeat} after {warmup} warm-up, device time)"
    try:
        work = count_work(program.checked_ir()[name], kernel.info, args, batch)
    except ReferenceUnsupported as exc:
        echo(line)
        echo(f"  no work model for this kernel ({exc})")
        return result
    result.update(gflops=work.flops / seconds / 1e9, gbytes=work.bytes / seconds / 1e9)
    echo(line)
    echo(f"  {result['gflops']:.2f} GFLOP/s, {result['gbytes']:.2f} GB/s "
         f"({work.flops / 1e6:.1f} MFLOP, {work.bytes / 1e6:.1f} MB minimum traffic)")
    peak = copy_bandwidth(device, max(3, repeat // 2))
    result["copy_gbytes"] = peak / 1e9
    result["bandwidth_share"] = work.bytes / seconds / peak
    echo(f"  {100 * result['bandwidth_share']:.0f}% of the device's copy bandwidth "
         f"({peak / 1e9:.2f} GB/s measured by a copy kernel in this run)")
    return result
