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
