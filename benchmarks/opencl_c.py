"""Hand-written OpenCL C baselines: variants, builds and launches.

A variant is one kernel of a `benchmarks/opencl/*.cl` file with its `-D`
parameters and work-group shape. Every variant of a case is checked against
NumPy and timed with the rest; the fastest is reported as "OpenCL C" and all
are listed in results.json, so the choice stays visible.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.device import import_dpctl

OPENCL_DIR = Path(__file__).resolve().parent / "opencl"
BUILD_OPTIONS = "-cl-std=CL3.0"
"""No fast-math flags: the baselines keep IEEE semantics like tinyc's SPIR-V.
(OpenCL C contracts a*b+c into FMA by default, FP_CONTRACT ON; SPIR-V from
tinyc is not contracted unless it asks for fma.)"""


@dataclass(frozen=True)
class ClVariant:
    """One hand-written kernel configuration."""

    file: str  # under benchmarks/opencl/
    kernel: str
    local: tuple[int, int]  # (X, Y): OpenCL local size (X, Y, 1)
    defines: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or self.kernel

    @property
    def options(self) -> str:
        defs = " ".join(f"-D{k}={v}" for k, v in sorted(self.defines.items()))
        return f"{BUILD_OPTIONS} {defs}".strip()


_programs: dict[tuple[Any, str, str], Any] = {}


def with_common(source: str) -> str:
    """Paste `common.h` over its `#include` line: the runtime compiles one source text."""
    return source.replace('#include "common.h"', (OPENCL_DIR / "common.h").read_text())


def build(queue: Any, variant: ClVariant) -> tuple[Any, float]:
    """The SYCL kernel of a variant (cached per process) and its build time in s."""
    key = (queue.sycl_context, variant.file, variant.options)
    start = time.perf_counter()
    program = _programs.get(key)
    if program is None:
        dpctl = import_dpctl()
        source = with_common((OPENCL_DIR / variant.file).read_text())
        program = dpctl.program.create_program_from_source(queue, source, variant.options)
        _programs[key] = program
    return program.get_sycl_kernel(variant.kernel), time.perf_counter() - start


def global_range(local: tuple[int, int], batch: int) -> tuple[list[int], list[int]]:
    """dpctl ranges (slowest first) of one work-group per batch instance."""
    x, y = local
    return [batch, y, x], [1, y, x]


def with_subgroup_ids(variants: list[ClVariant]) -> list[ClVariant]:
    """Work-groups of one sub-group (16×1) also as a variant with -DSGID=1.

    Work-item ids from the sub-group ids made the fused kernel's local-memory
    variant ~1.7x faster, but every other variant tried 3-10x slower (most
    with work-groups larger than one sub-group), so it is only tried where
    the work-group is one sub-group.
    """
    out = []
    for v in variants:
        out.append(v)
        if v.local == (16, 1):
            out.append(ClVariant(v.file, v.kernel, v.local, {**v.defines, "SGID": 1}, f"{v.name} sgid"))
    return out


def gemm_variants(n: int, t: str, trans: bool, trans_b: bool) -> list[ClVariant]:
    """The gemm.cl variants of an n×n case of element type `t` (float, double).

    `rows`/`local`: register blocks of NC columns per work-item, A from global
    or local memory. NC = n spills registers at n = 64, so blocks of 32/16/8
    (4 for f64) columns split the row over WGY = n / NC work-items along y.
    Sub-group size 8 is tried at n = 8, where 16 lanes would hold only 8 rows.
    `tiled`: register blocks of every row (MR = n/SG) by NR columns, K unrolled
    by 2 (1 and 2 measured within noise); a transposed A copied to local memory
    both ways (COPY). (Blocks of fewer rows, looping over row tiles, compiled
    to gathers: 5-25x slower in a first run.)
    """
    blocks = [b for b in (32, 16, 8) if b <= n] if n > 8 else [8]
    if t == "double" and n >= 16:
        blocks = [b for b in (16, 8, 4) if b <= n]
    flags = {"TRANS_A": int(trans), "TRANS_B": int(trans_b)}
    out = []
    for kernel in ("gemm_rows", "gemm_local"):
        for sg in ((16, 8) if n == 8 else (16,)):
            for nc in blocks:
                defines = {"T": t, "N": n, "SG": sg, "WGY": n // nc, "KU": n if n <= 8 else 1, **flags}
                out.append(ClVariant("gemm.cl", kernel, (n, n // nc), defines,
                                     f"{kernel[5:]} nc={nc} sg={sg}"))
    out = with_subgroup_ids(out)
    for sg in (16, 8):
        if n < sg or (sg == 8 and t == "float" and n > 8):
            continue
        for nr in (2, 4):
            for copy in ((0, 1) if trans else (0,)):
                defines = {"T": t, "N": n, "SG": sg, "MR": n // sg, "NR": nr, "KU": 2, "COPY": copy,
                           **flags}
                label = f"tiled {n // sg}x{nr}" + (f" copy={copy}" if trans else "") + f" sg={sg}"
                out.append(ClVariant("gemm.cl", "gemm_tiled", (sg, 1), defines, label))
    return out
