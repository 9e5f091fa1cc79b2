"""Capabilities and extensions are inferred from what a module uses, and spirv-val agrees."""

import pytest

from spirv_testlib import DTYPES, global_ptr, kernel, scalar_type
from tinyc.spirv import Module
from tinyc.spirv.spv import (
    Capability as C, Decoration, ExecutionMode, ExecutionModel, GroupOperation, LoopControl, MemoryAccess, Op, Scope,
    SelectionControl, StorageClass,
)
from tinyc.spirv.tools import disassemble

EXPECTED_TYPE_CAPS = {"i8": {C.Int8}, "i16": {C.Int16}, "i32": set(), "i64": {C.Int64},
                      "f16": {C.Float16}, "f32": set(), "f64": {C.Float64}}


def declared(binary: bytes) -> tuple[set[str], set[str]]:
    """Capability and extension names in a binary's disassembly."""
    caps, exts = set(), set()
    for line in disassemble(binary).splitlines():
        words = line.split()
        if words[:1] == ["OpCapability"]:
            caps.add(words[1])
        elif words[:1] == ["OpExtension"]:
            exts.add(words[1].strip('"'))
    return caps, exts


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_scalar_type_capabilities(dtype):
    k = kernel("copy_const", params=lambda m: [global_ptr(m, scalar_type(m, dtype))])
    t = scalar_type(k.m, dtype)
    k.entry.op(Op.Store, k.elem_ptr(k.entry, k.f.params[0], global_ptr(k.m, t)), k.m.constant(t, -3))
    caps, _ = declared(k.finish(k.entry))
    base = {"Addresses", "Kernel", "Int64"}  # Int64: the ulong global id
    assert caps == base | {c.name for c in EXPECTED_TYPE_CAPS[dtype]}


def _build(what: str) -> bytes:
    """Small kernels that each need one extra capability."""
    k = kernel("k", params=lambda m: [global_ptr(m, m.type_float(32))], subgroup_size=16)
    m, blk, f32, u32 = k.m, k.entry, k.m.type_float(32), k.m.type_int(32)
    x = k.f.params[0]
    if what == "vector16":
        v16 = m.type_vector(f32, 16)
        p = blk.op(Op.Bitcast, global_ptr(m, v16), x)
        blk.op(Op.Store, p, m.constant(v16, 1.0))
    elif what == "generic":
        gp = blk.op(Op.PtrCastToGeneric, m.type_pointer(StorageClass.Generic, f32), x)
        blk.op(Op.Store, gp, m.const_float(1.0))
    elif what == "clustered":
        v = blk.op(Op.Load, f32, x)
        s = blk.op(Op.GroupNonUniformFAdd, f32, m.const_int(Scope.Subgroup), GroupOperation.ClusteredReduce,
                   v, m.const_int(4))
        blk.op(Op.Store, x, s)
    elif what == "int64_atomics":
        u64 = m.type_int(64)
        p = blk.op(Op.Bitcast, global_ptr(m, u64), x)
        blk.op(Op.AtomicIAdd, u64, p, m.const_int(Scope.Device), m.const_int(0), m.const_int(1, 64))
    elif what == "int64_atomic_store":  # no result type: the pointee decides
        u64 = m.type_int(64)
        p = blk.op(Op.Bitcast, global_ptr(m, u64), x)
        blk.op(Op.AtomicStore, p, m.const_int(Scope.Device), m.const_int(0), m.const_int(1, 64))
    elif what in ("atomic_f32", "atomic_f64", "atomic_fmax"):
        t = m.type_float(64 if what == "atomic_f64" else 32)
        p = blk.op(Op.Bitcast, global_ptr(m, t), x)
        opcode = Op.AtomicFMaxEXT if what == "atomic_fmax" else Op.AtomicFAddEXT
        blk.op(opcode, t, p, m.const_int(Scope.Device), m.const_int(0), m.constant(t, 1.0))
    elif what == "bf16":
        b = blk.op(Op.ConvertFToBF16INTEL, m.type_int(16), blk.op(Op.Load, f32, x))
        blk.op(Op.Store, x, blk.op(Op.ConvertBF16ToFINTEL, f32, b))
    elif what == "groups":
        v = blk.op(Op.Load, f32, x, MemoryAccess.Aligned, 4)
        blk.op(Op.Store, x, blk.op(Op.GroupFAdd, f32, m.const_int(Scope.Workgroup), GroupOperation.Reduce, v))
    elif what == "saturate":
        m.decorate(blk.op(Op.ConvertFToS, u32, blk.op(Op.Load, f32, x)), Decoration.SaturatedConversion)
    return k.finish(blk)


@pytest.mark.parametrize("what, caps, exts", [
    ("vector16", {"Vector16"}, set()),
    ("generic", {"GenericPointer"}, set()),
    ("clustered", {"GroupNonUniformClustered"}, set()),
    ("int64_atomics", {"Int64Atomics"}, set()),
    ("int64_atomic_store", {"Int64Atomics"}, set()),
    ("atomic_f32", {"AtomicFloat32AddEXT"}, {"SPV_EXT_shader_atomic_float_add"}),
    ("atomic_f64", {"AtomicFloat64AddEXT", "Float64"}, {"SPV_EXT_shader_atomic_float_add"}),
    ("atomic_fmax", {"AtomicFloat32MinMaxEXT"}, {"SPV_EXT_shader_atomic_float_min_max"}),
    ("bf16", {"BFloat16ConversionINTEL", "Int16"}, {"SPV_INTEL_bfloat16_conversion"}),
    ("groups", {"Groups"}, set()),
    ("saturate", set(), set()),
])
def test_inferred_requirements(what, caps, exts):
    got_caps, got_exts = declared(_build(what))
    assert got_caps == {"Addresses", "Kernel", "Int64", "SubgroupDispatch"} | caps
    assert got_exts == exts


def test_non_uniform_arithmetic_prefers_arithmetic():
    k = kernel("k", params=lambda m: [global_ptr(m, m.type_float(32))])
    m, blk, f32 = k.m, k.entry, k.m.type_float(32)
    v = blk.op(Op.Load, f32, k.f.params[0])
    s = blk.op(Op.GroupNonUniformFAdd, f32, m.const_int(Scope.Subgroup), GroupOperation.Reduce, v)
    blk.op(Op.Store, k.f.params[0], s)
    caps, _ = declared(k.finish(blk))
    assert "GroupNonUniformArithmetic" in caps and "GroupNonUniformClustered" not in caps


def test_version_requirement_is_checked():
    m = Module(version=(1, 3))
    f = m.function(m.type_void(), [], name="k")
    entry, header, body, merge = f.block(), f.block(), f.block(), f.block()
    entry.op(Op.Branch, header.label)
    header.op(Op.LoopMerge, merge.label, body.label, LoopControl.PartialCount, 4)
    header.op(Op.Branch, body.label)
    body.op(Op.Branch, header.label)
    merge.op(Op.Return)
    with pytest.raises(ValueError, match=r"OpLoopMerge operand LoopControl.PartialCount requires SPIR-V 1.4"):
        m.assemble()


def test_explicit_capability_and_extension():
    m = Module()
    m.capability(C.Float16Buffer)
    m.extension("SPV_KHR_no_integer_wrap_decoration")
    f = m.function(m.type_void(), [], name="k")
    blk = f.block()
    blk.op(Op.SelectionMerge, f.block().label, SelectionControl.Flatten)
    caps, exts = declared(_finish_trivial(m, f, blk))
    assert "Float16Buffer" in caps and exts == {"SPV_KHR_no_integer_wrap_decoration"}


def _finish_trivial(m, f, blk):
    merge = f.blocks[-1]
    blk.op(Op.Branch, merge.label)
    merge.op(Op.Return)
    return m.assemble()


def test_subgroup_size_mode_adds_subgroup_dispatch():
    m = Module()
    f = m.function(m.type_void(), [], name="k")
    f.block().op(Op.Return)
    m.entry_point(ExecutionModel.Kernel, f, "k")
    m.execution_mode(f, ExecutionMode.SubgroupSize, 8)
    caps, _ = declared(m.assemble())
    assert "SubgroupDispatch" in caps
