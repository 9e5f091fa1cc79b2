"""`tinyc bench`: kernel time, GFLOP/s, GB/s and the share of the device's bandwidth.

Work is counted from the kernel's collective instructions with the sizes
they really have: the reference interpreter runs one work-group and shows
each collective to a flop counter first (gemm 2·M·N·K, gemv and ger
2·M·N, axpby and hadamard_product 2 per element, sum and cumsum 1 per
element; complex counts 4 real flops per operation). Memory traffic is the
minimum: every byte of every memref or group argument the kernel reads is
read once, every byte it writes is written once. The device's bandwidth is
measured in the same run by a tinyc copy kernel over 2 × 64 MiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.ir.core import Function
from tinyc.ir.instructions import (
    Axpby, BlasInstruction, Cumsum, Gemm, Gemv, Ger, HadamardProduct, Sum,
)
from tinyc.ir.types import GroupType, MemrefType

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


@dataclass
class Work:
    """Flops of one launch and the minimum bytes it moves."""

    flops: float
    bytes: float


def _flops(inst: BlasInstruction, st: Any) -> float:
    out = st.get(inst.output)
    elements = float(np.prod(out.shape)) if out.shape else 1.0
    factor = 4.0 if out.element.is_complex else 1.0
    if isinstance(inst, Gemm):
        a = st.get(inst.inputs[0])
        k = a.shape[0] if inst.transpose_a else a.shape[1]
        return factor * 2.0 * elements * k
    if isinstance(inst, (Gemv,)):
        a = st.get(inst.inputs[0])
        return factor * 2.0 * float(np.prod(a.shape))
    if isinstance(inst, (Ger, Axpby, HadamardProduct)):
        return factor * 2.0 * elements
    if isinstance(inst, Sum):
        return factor * float(np.prod(st.get(inst.inputs[0]).shape))
    if isinstance(inst, Cumsum):
        return factor * elements
    return 0.0


def _nbytes(arg: Any) -> float:
    if isinstance(arg, np.ndarray):
        return float(arg.nbytes)
    if isinstance(arg, (list, tuple)):
        return float(sum(_nbytes(a) for a in arg))
    members = getattr(arg, "arrays", None)
    return _nbytes(members) if members is not None else 0.0


def count_work(fn: Function, info: Any, args: Sequence[Any], batch: int) -> Work:
    """Flops (from one emulated work-group, times the batch) and minimum bytes."""
    from tinyc.passes.memory_effects import EffectKind, effects
    from tinyc.reference import run as run_reference

    copies = [a.copy(order="A") if isinstance(a, np.ndarray) else
              [m.copy(order="A") for m in a] if isinstance(a, list) else a for a in args]
    total = [0.0]

    def count(inst: BlasInstruction, st: Any) -> None:
        total[0] += _flops(inst, st)

    run_reference(fn, copies, batch, [0], work_group_size=info.work_group_size,
                  subgroup_size=info.subgroup_size, on_collective=count)
    read: set[int] = set()
    written: set[int] = set()
    positions = {id(a): i for i, a in enumerate(fn.args)}
    for inst in fn.body.instructions:
        for effect in effects(inst):
            root = effect.obj.root
            if id(root) not in positions:
                continue
            (read if effect.kind is EffectKind.READ else written).add(positions[id(root)])
    moved = 0.0
    for i, (param, arg) in enumerate(zip(fn.args, args)):
        if isinstance(param.type, (MemrefType, GroupType)):
            moved += _nbytes(arg) * ((i in read) + (i in written))
    return Work(total[0] * batch, moved)


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
                 echo: Callable[[str], None] = print) -> dict[str, float]:
    """Time a kernel on random inputs and report its rates; returns the numbers."""
    import tinyc
    from tinyc.reference import ReferenceUnsupported
    from tinyc.cli.run import describe_arguments, device_array_limit, make_arguments, parse_sizes

    program = tinyc.compile(source, name=file, device=device)
    name = kernel_name or program.kernel_names[0]
    if name not in program.kernel_names:
        raise ValueError(f"no kernel '{name}' in {file}; kernels: {', '.join(program.kernel_names)}")
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
