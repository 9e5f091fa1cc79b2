"""The two ceilings of a roofline, measured on the device in the same run as the kernel.

- **Memory bandwidth**: the best of several streaming kernels — copy (b = a),
  a read-only reduction (Σ a), triad (a = b + s·c) and an in-place update
  (a = s·a, which reads and writes the same lines, as an accumulating kernel
  does: a write to a line not read first costs a read too on this CPU, so a
  copy moves 3 bytes for the 2 it counts). Their footprint matches the
  kernel's minimum traffic (at least `MIN_BYTES`): a kernel whose data stays
  in cache is compared with streams that stay in cache too. Each kernel's
  best of several runs counts; the ceiling is the best kernel.
- **Peak FMA throughput**: a kernel of independent fused multiply-add chains
  per work-item (no memory traffic), for f32 or f64, at a few chain counts
  and subgroup sizes; the best counts.

The ceiling kernels are OpenCL C (built by the device's OpenCL compiler
through dpctl), independent of tinyc's code generation. Where the device has
no OpenCL C compiler the ceilings are reported as unavailable.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MIN_BYTES = 8 << 20
MAX_BYTES = 512 << 20
GROUP_ITEMS = 16
"""Work-items per work-group of the streaming kernels: one subgroup, so each work-group
sweeps its chunk in order, 64 contiguous bytes per step. (With 256 work-items the CPU
runtime runs the 16 subgroups one after another, each striding 1 KB through the chunk:
1.5-2.8x less bandwidth measured at 8 and 256 MB footprints.)"""
GROUP_ELEMENTS = 1 << 14   # elements per work-group (a contiguous chunk)

STREAM_SOURCE = r"""
kernel void copy(global const float *restrict a, global float *restrict b, long chunk) {
    const long base = get_group_id(0) * chunk + get_local_id(0);
    for (long t = 0; t < chunk / LS; ++t) b[base + t * LS] = a[base + t * LS];
}
kernel void read(global const float *restrict a, global float *restrict out, long chunk) {
    const long base = get_group_id(0) * chunk + get_local_id(0);
    float s0 = 0.0f, s1 = 0.0f;
    for (long t = 0; t < chunk / LS; t += 2) {
        s0 += a[base + t * LS];
        s1 += a[base + (t + 1) * LS];
    }
    out[get_global_id(0)] = s0 + s1;
}
kernel void triad(global float *restrict a, global const float *restrict b,
                  global const float *restrict c, float s, long chunk) {
    const long base = get_group_id(0) * chunk + get_local_id(0);
    for (long t = 0; t < chunk / LS; ++t) a[base + t * LS] = fma(s, c[base + t * LS], b[base + t * LS]);
}
kernel void update(global float *restrict a, float s, long chunk) {
    const long base = get_group_id(0) * chunk + get_local_id(0);
    for (long t = 0; t < chunk / LS; ++t) a[base + t * LS] *= s;
}
"""
STREAMS = {  # kernel: (arrays, bytes moved per element)
    "copy": (2, 8), "read": (1, 4), "triad": (3, 12), "update": (1, 8),
}

PEAK_CHAINS = (4, 6, 8, 12)
PEAK_SUBGROUPS = (8, 16)
PEAK_ITERATIONS = 512
PEAK_GROUPS_PER_UNIT = 128
"""Work-groups (of 64 work-items) per compute unit of the FMA-peak kernel: many small ones,
as the kernels it is compared with have, so that the runtime balances them over its threads
when another job holds a core for a while (with 16 per unit, one delayed thread held up the
whole launch, and a gemm timed beside it showed 160% of the "peak")."""


def _peak_source(chains: int) -> str:
    init = " ".join(f"T x{i} = (T)(get_global_id(0) + {i});" for i in range(chains))
    body = " ".join(f"x{i} = fma(x{i}, a, b);" for i in range(chains))
    total = " + ".join(f"x{i}" for i in range(chains))
    return (f"__attribute__((intel_reqd_sub_group_size(SG)))\n"
            f"kernel void peak(global T *out, T a, T b, int n) {{ {init}\n"
            f"  for (int i = 0; i < n; ++i) {{ {body} }}\n"
            f"  out[get_global_id(0)] = {total}; }}\n")


@dataclass
class Ceilings:
    """Measured ceilings; rates in bytes/s and flop/s (0 when unavailable)."""

    bandwidth: float = 0.0
    streams: dict[str, float] = field(default_factory=dict)   # kernel -> bytes/s
    footprint: int = 0
    peak_flops: float = 0.0
    peak_type: str = "f32"
    peak_config: str = ""
    problems: list[str] = field(default_factory=list)

    def attainable(self, intensity: float) -> float:
        """The roofline at `intensity` flop/byte: min(peak, intensity · bandwidth)."""
        return min(self.peak_flops, intensity * self.bandwidth)


def _program(queue: Any, source: str, options: str) -> Any:
    import dpctl.program

    return dpctl.program.create_program_from_source(queue, source, f"-cl-std=CL3.0 {options}")


def _best_seconds(queue: Any, kernel: Any, args: list, gsize: list[int], lsize: list[int],
                  repeat: int) -> float:
    """The fastest run: the events' device time, or the wall clock on a queue without
    profiling (whose events report 0)."""
    queue.submit_async(kernel, args, gsize, lsize).wait()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        event = queue.submit_async(kernel, args, gsize, lsize)
        event.wait()
        wall = time.perf_counter() - start
        device = (event.profiling_info_end - event.profiling_info_start) * 1e-9
        best = min(best, device if device > 0 else wall)
    return best


def measure_bandwidth(queue: Any, footprint: float, repeat: int = 5) -> tuple[float, dict, int]:
    """(best bytes/s, bytes/s per kernel, bytes touched by each kernel)."""
    rates: dict[str, float] = {}
    for name in STREAMS:
        launch = stream_launch(queue, footprint, name)
        seconds = _best_seconds(queue, launch.kernel, launch.args, [launch.groups * GROUP_ITEMS],
                                [GROUP_ITEMS], repeat)
        rates[name] = launch.bytes / seconds
    return max(rates.values()), rates, int(min(max(footprint, MIN_BYTES), MAX_BYTES))


@dataclass
class StreamLaunch:
    """One streaming kernel over `footprint` bytes, ready to launch (bytes moved per launch known),
    so a benchmark can time it in every round beside a kernel (per-round share of bandwidth)."""

    kernel: Any
    args: list
    groups: int
    bytes: float
    name: str
    buffers: list = field(default_factory=list)

    @property
    def config(self) -> str:
        return f"{self.name} over {self.bytes / 1e6:.0f} MB"

    def submit(self, queue: Any) -> Any:
        return queue.submit_async(self.kernel, self.args, [self.groups * GROUP_ITEMS], [GROUP_ITEMS])


def stream_launch(queue: Any, footprint: float, name: str = "copy") -> StreamLaunch:
    """The streaming kernel `name` of STREAM_SOURCE touching about `footprint` bytes."""
    import dpctl.memory

    arrays, moved = STREAMS[name]
    total = int(min(max(footprint, MIN_BYTES), MAX_BYTES))
    groups = max(1, total // (4 * arrays) // GROUP_ELEMENTS)
    elements = groups * GROUP_ELEMENTS
    buffers = [dpctl.memory.MemoryUSMDevice(elements * 4, queue=queue) for _ in range(arrays)]
    for buf in buffers:
        buf.memset(0)
    chunk, scale = ctypes.c_int64(GROUP_ELEMENTS), ctypes.c_float(1.0)
    if name == "read":  # one partial sum per work-item
        buffers.append(dpctl.memory.MemoryUSMDevice(groups * GROUP_ITEMS * 4, queue=queue))
    args = {"copy": lambda: [buffers[0], buffers[1], chunk],
            "read": lambda: [buffers[0], buffers[1], chunk],
            "triad": lambda: [buffers[0], buffers[1], buffers[2], scale, chunk],
            "update": lambda: [buffers[0], scale, chunk]}[name]()
    program = _program(queue, STREAM_SOURCE, f"-DLS={GROUP_ITEMS}")
    return StreamLaunch(program.get_sycl_kernel(name), args, groups, float(moved * elements), name,
                        buffers)


@dataclass
class PeakLaunch:
    """One configuration of the FMA-chain kernel, ready to launch (flops per launch known)."""

    kernel: Any
    args: list
    items: int
    chains: int
    subgroup: int

    @property
    def flops(self) -> float:
        return 2.0 * self.chains * PEAK_ITERATIONS * self.items

    @property
    def config(self) -> str:
        return f"{self.chains} chains, subgroup {self.subgroup}"

    def submit(self, queue: Any) -> Any:
        return queue.submit_async(self.kernel, self.args, [self.items], [64])


def peak_launch(queue: Any, element: str, chains: int, subgroup: int) -> PeakLaunch:
    """The FMA-chain kernel for f32 or f64 with `chains` chains per work-item."""
    import dpctl.memory

    ctype, cname = (ctypes.c_double, "double") if element == "f64" else (ctypes.c_float, "float")
    units = max(1, int(getattr(queue.sycl_device, "max_compute_units", 1)))
    items = 64 * PEAK_GROUPS_PER_UNIT * units
    out = dpctl.memory.MemoryUSMDevice(items * 8, queue=queue)
    program = _program(queue, _peak_source(chains), f"-DT={cname} -DSG={subgroup}")
    args = [out, ctype(0.999), ctype(0.001), ctypes.c_int(PEAK_ITERATIONS)]
    return PeakLaunch(program.get_sycl_kernel("peak"), args, items, chains, subgroup)


def best_peak(queue: Any, element: str = "f32", repeat: int = 3) -> tuple[float, PeakLaunch | None]:
    """(best flop/s, its launch) of the FMA-chain kernel over the configurations tried."""
    best, found = 0.0, None
    for sg in PEAK_SUBGROUPS:
        for chains in PEAK_CHAINS:
            try:
                launch = peak_launch(queue, element, chains, sg)
            except Exception:  # this subgroup size or chain count does not build here
                continue
            seconds = _best_seconds(queue, launch.kernel, launch.args, [launch.items], [64],
                                    repeat)
            if launch.flops / seconds > best:
                best, found = launch.flops / seconds, launch
    return best, found


def measure_peak(queue: Any, element: str = "f32", repeat: int = 3) -> tuple[float, str]:
    """(best flop/s, its configuration) of the FMA-chain kernel for f32 or f64."""
    rate, launch = best_peak(queue, element, repeat)
    return rate, launch.config if launch is not None else ""


def measure(device: Any, footprint: float, element: str = "f32", repeat: int = 5) -> Ceilings:
    """Both ceilings on `device` (a filter string, SyclDevice or queue, or None)."""
    from tinyc.runtime.device import profiling_queue, select_queue

    queue = profiling_queue(select_queue(device))
    found = Ceilings(peak_type="f64" if element == "f64" else "f32")
    try:
        found.bandwidth, found.streams, found.footprint = measure_bandwidth(queue, footprint, repeat)
    except Exception as exc:  # no OpenCL C compiler on this device, out of memory, ...
        found.problems.append(f"memory ceiling unavailable: {type(exc).__name__}: {exc}")
    try:
        found.peak_flops, found.peak_config = measure_peak(queue, found.peak_type)
    except Exception as exc:
        found.problems.append(f"FMA peak unavailable: {type(exc).__name__}: {exc}")
    return found


def numpy_element(arrays: list[Any]) -> str:
    """f64 when the kernel's data is double precision (f64, c64), else f32."""
    for a in arrays:
        members = a if isinstance(a, list) else [a]
        for m in members:
            if isinstance(m, np.ndarray) and m.dtype in (np.float64, np.complex128):
                return "f64"
    return "f32"
