"""The kernel ABI of one parameter (DESIGN.md; arguments.py packs it): how many OpenCL
arguments it becomes, and the arguments of a null memref or group. Below both packers
(arguments.py for memrefs and scalars, groups.py for groups), which use it."""

from __future__ import annotations

import ctypes

from tinyc.diagnostics import LaunchError
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType
from tinyc.signature import ParamInfo


def abi_arity(param: ParamInfo) -> int:
    """How many kernel arguments the parameter becomes under the ABI."""
    t = param.type
    if isinstance(t, MemrefType):
        return 1 + len(t.dynamic_slots())
    if isinstance(t, GroupType):
        return 1 + len(t.memref.dynamic_slots()) + (t.size == DYNAMIC) + (t.offset == DYNAMIC)
    return 1


def null_arguments(param: ParamInfo, arity: int) -> list:
    """None for a memref or group the kernel checks with `associated`: a null pointer, zero sizes."""
    if not param.nullable:
        raise LaunchError("got None; only arguments the kernel checks with 'associated' may be "
                          "None (a null memref or group)", argument=param.name)
    return [ctypes.c_uint64(0)] + [ctypes.c_int64(0)] * (arity - 1)
