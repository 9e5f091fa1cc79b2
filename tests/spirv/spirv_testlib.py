"""Helpers shared by the SPIR-V tests: kernel scaffolding and the CPU device."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np
import pytest

from tinyc.spirv import Block, Function, Id, Module
from tinyc.spirv.spv import BuiltIn, ExecutionMode, ExecutionModel, MemoryAccess, Op, StorageClass
from tinyc.spirv.tools import validate

# dtype name -> (numpy dtype, is float, bit width)
DTYPES = {
    "i8": (np.int8, False, 8), "i16": (np.int16, False, 16), "i32": (np.int32, False, 32),
    "i64": (np.int64, False, 64), "f16": (np.float16, True, 16), "f32": (np.float32, True, 32),
    "f64": (np.float64, True, 64),
}


def scalar_type(m: Module, name: str) -> Id:
    """SPIR-V type id for a DTYPES name."""
    _, is_float, width = DTYPES[name]
    return m.type_float(width) if is_float else m.type_int(width)


@dataclass
class Kernel:
    """A kernel under construction: module, function, entry block, global id x."""

    m: Module
    f: Function
    entry: Block
    gid: Id  # GlobalInvocationId.x as ulong

    def elem_ptr(self, blk: Block, base: Id, ptr_type: Id, index: Id | None = None) -> Id:
        """&base[index] (default index: global id x)."""
        return blk.op(Op.InBoundsPtrAccessChain, ptr_type, base, self.gid if index is None else index)

    def finish(self, blk: Block, target_env: str | None = None) -> bytes:
        """Return from `blk`, assemble and run spirv-val."""
        blk.op(Op.Return)
        binary = self.m.assemble()
        validate(binary, target_env or f"spv{self.m.version[0]}.{self.m.version[1]}")
        return binary


def kernel(name: str, param_types: list[Id] | None = None, m: Module | None = None,
           local_size: tuple[int, int, int] | None = None, subgroup_size: int | None = None,
           params=None) -> Kernel:
    """Start `kernel void name(params)` with the global id x already loaded."""
    m = m or Module()
    f = m.function(m.type_void(), params(m) if params else (param_types or []), name=name)
    m.entry_point(ExecutionModel.Kernel, f, name)
    if local_size:
        m.execution_mode(f, ExecutionMode.LocalSize, *local_size)
    if subgroup_size:
        m.execution_mode(f, ExecutionMode.SubgroupSize, subgroup_size)
    entry = f.block()
    ulong = m.type_int(64)
    ids = entry.op(Op.Load, m.type_vector(ulong, 3), m.builtin_variable(BuiltIn.GlobalInvocationId),
                   MemoryAccess.Aligned, 32)
    return Kernel(m, f, entry, entry.op(Op.CompositeExtract, ulong, ids, 0))


def global_ptr(m: Module, elem: Id) -> Id:
    return m.type_pointer(StorageClass.CrossWorkgroup, elem)


# -- device -------------------------------------------------------------------------
class Device:
    """The Intel CPU OpenCL device through dpctl (RUNTIME-NOTES §0)."""

    def __init__(self) -> None:
        os.environ.setdefault("OCL_ICD_FILENAMES", sys.prefix + "/lib/libintelocl.so")
        import dpctl
        import dpctl.memory
        import dpctl.program

        self.dpctl = dpctl
        self.queue = dpctl.SyclQueue("opencl:cpu:0")
        self._keep: list[object] = []

    def kernel(self, binary: bytes, name: str):
        prog = self.dpctl.program.create_program_from_spirv(self.queue, binary)
        return prog.get_sycl_kernel(name)

    def array(self, data: np.ndarray) -> tuple[object, np.ndarray]:
        """USM shared copy of `data`: (memory for kernel args, host view)."""
        mem = self.dpctl.memory.MemoryUSMShared(max(data.nbytes, 1), queue=self.queue)
        view = np.frombuffer(mem, dtype=data.dtype, count=data.size).reshape(data.shape)
        view[...] = data
        return mem, view

    def run(self, binary: bytes, name: str, args: list, global_size: int, local_size: int) -> None:
        """Launch a 1-D kernel and wait."""
        k = self.kernel(binary, name)
        self.queue.submit(k, args, [global_size], [local_size]).wait()


def device_or_skip() -> Device:
    try:
        dev = Device()
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no OpenCL CPU device: {exc}")
    if not dev.queue.sycl_device.driver_version.startswith("2026"):
        pytest.skip("opencl:cpu:0 is not the Intel CPU runtime")
    return dev
