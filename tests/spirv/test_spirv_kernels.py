"""Kernels built with the module builder: spirv-val, disassembly, and runs on the CPU device vs NumPy."""

import ctypes

import numpy as np
import pytest

from spirv_testlib import DTYPES, global_ptr, kernel, scalar_type
from tinyc.spirv.literals import bf16_bits
from tinyc.spirv.spv import (
    BuiltIn, GroupOperation, LoopControl, MemoryAccess, MemorySemantics, Op, OpenCLStd, Scope, StorageClass,
)
from tinyc.spirv.tools import disassemble

RNG = np.random.default_rng(1234)


def build_axpy() -> bytes:
    """kernel void axpy(float a, global float* x, global float* y): y[i] += a * x[i]."""
    k = kernel("axpy", local_size=(16, 1, 1), subgroup_size=16,
               params=lambda m: [m.type_float(32), global_ptr(m, m.type_float(32)), global_ptr(m, m.type_float(32))])
    m, blk, f32 = k.m, k.entry, k.m.type_float(32)
    a, x, y = k.f.params
    m.name(a, "a"), m.name(x, "x"), m.name(y, "y")
    px, py = k.elem_ptr(blk, x, global_ptr(m, f32)), k.elem_ptr(blk, y, global_ptr(m, f32))
    ax = blk.op(Op.FMul, f32, a, blk.op(Op.Load, f32, px, MemoryAccess.Aligned, 4))
    blk.op(Op.Store, py, blk.op(Op.FAdd, f32, ax, blk.op(Op.Load, f32, py, MemoryAccess.Aligned, 4)),
           MemoryAccess.Aligned, 4)
    return k.finish(blk)


def test_axpy_disassembly():
    text = disassemble(build_axpy())
    for line in ['OpEntryPoint Kernel %axpy "axpy" %gl_GlobalInvocationID',
                 "OpExecutionMode %axpy LocalSize 16 1 1",
                 "OpExecutionMode %axpy SubgroupSize 16",
                 "OpCapability SubgroupDispatch",
                 "OpMemoryModel Physical64 OpenCL",
                 "OpDecorate %gl_GlobalInvocationID BuiltIn GlobalInvocationId",
                 "OpDecorate %gl_GlobalInvocationID Constant",
                 "%v3ulong = OpTypeVector %ulong 3",
                 "OpInBoundsPtrAccessChain %_ptr_CrossWorkgroup_float %x",
                 "OpFMul %float %a"]:
        assert line in text


@pytest.mark.parametrize("n", [16, 256, 4096])
def test_axpy_runs(device, n):
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    (mx, _), (my, vy) = device.array(x), device.array(y)
    device.run(build_axpy(), "axpy", [ctypes.c_float(2.5), mx, my], n, 16)
    np.testing.assert_array_equal(vy, np.float32(2.5) * x + y)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_typed_affine_runs(device, dtype):
    """y[i] = x[i] * c + d with constants of every scalar type (exact bits, wrap-around)."""
    np_type, is_float, _ = DTYPES[dtype]
    c, d = (0.1, -2.5) if is_float else (-3, 7)
    k = kernel("affine", params=lambda m: [global_ptr(m, scalar_type(m, dtype))] * 2)
    m, blk, t = k.m, k.entry, scalar_type(k.m, dtype)
    mul, add = (Op.FMul, Op.FAdd) if is_float else (Op.IMul, Op.IAdd)
    v = blk.op(Op.Load, t, k.elem_ptr(blk, k.f.params[0], global_ptr(m, t)))
    r = blk.op(add, t, blk.op(mul, t, v, m.constant(t, c)), m.constant(t, d))
    blk.op(Op.Store, k.elem_ptr(blk, k.f.params[1], global_ptr(m, t)), r)
    binary = k.finish(blk)
    n = 256
    if is_float:
        x = (RNG.standard_normal(n) * 100).astype(np_type)
    else:
        info = np.iinfo(np_type)
        x = RNG.integers(info.min, info.max, n, dtype=np_type, endpoint=True)
    (mx, _), (my, vy) = device.array(x), device.array(np.zeros_like(x))
    device.run(binary, "affine", [mx, my], n, 16)
    np.testing.assert_array_equal(vy, x * np_type(c) + np_type(d))


def build_row_sum() -> bytes:
    """out[i] = sum(x[i*n : i*n+n]) with a structured loop, Phi nodes and LoopMerge."""
    k = kernel("row_sum", params=lambda m: [global_ptr(m, m.type_float(32))] * 2 + [m.type_int(32)])
    m, f = k.m, k.f
    f32, u64, gptr = m.type_float(32), m.type_int(64), global_ptr(m, m.type_float(32))
    x, out, n = f.params
    entry = k.entry
    n64 = entry.op(Op.UConvert, u64, n)
    base = entry.op(Op.IMul, u64, k.gid, n64)
    header, body, cont, merge = f.block(), f.block(), f.block(), f.block()
    entry.op(Op.Branch, header.label)
    acc_next = m.new_id()  # forward reference: defined in the body
    i = header.phi(u64, (m.const_int(0, 64), entry.label))
    acc = header.op(Op.Phi, f32, m.const_float(0.0), entry.label, acc_next, cont.label)
    more = header.op(Op.ULessThan, m.type_bool(), i.result, n64)
    header.op(Op.LoopMerge, merge.label, cont.label, LoopControl.Unroll | LoopControl.PartialCount, 4)
    header.op(Op.BranchConditional, more, body.label, merge.label)
    v = body.op(Op.Load, f32, body.op(Op.InBoundsPtrAccessChain, gptr, x, body.op(Op.IAdd, u64, base, i.result)))
    body.op(Op.FAdd, f32, acc, v, result=acc_next)
    body.op(Op.Branch, cont.label)
    i_next = cont.op(Op.IAdd, u64, i.result, m.const_int(1, 64))
    i.operands += [i_next, cont.label]  # patch the Phi with the back edge
    cont.op(Op.Branch, header.label)
    merge.op(Op.Store, k.elem_ptr(merge, out, gptr), acc)
    return k.finish(merge)


def test_loop_with_phi_validates_and_runs(device):
    binary = build_row_sum()
    text = disassemble(binary)
    assert "OpLoopMerge" in text and "Unroll|PartialCount 4" in text and text.count("OpPhi") == 2
    rows, n = 64, 37
    x = RNG.integers(-50, 50, (rows, n)).astype(np.float32)
    (mx, _), (mo, vo) = device.array(x), device.array(np.zeros(rows, np.float32))
    device.run(binary, "row_sum", [mx, mo, ctypes.c_uint32(n)], rows, 16)
    np.testing.assert_array_equal(vo, x.sum(axis=1))


def build_reverse(version: tuple[int, int]) -> bytes:
    """Reverse each work-group's 64 values through a module-scope Workgroup array."""
    from tinyc.spirv import Module

    k = kernel("reverse", m=Module(version), local_size=(64, 1, 1),
               params=lambda m: [global_ptr(m, m.type_float(32))] * 2)
    m, blk = k.m, k.entry
    f32, u64 = m.type_float(32), m.type_int(64)
    local = m.variable(m.type_pointer(StorageClass.Workgroup, m.type_array(f32, 64)), StorageClass.Workgroup)
    lptr = m.type_pointer(StorageClass.Workgroup, f32)
    lids = blk.op(Op.Load, m.type_vector(u64, 3), m.builtin_variable(BuiltIn.LocalInvocationId))
    lid = blk.op(Op.CompositeExtract, u64, lids, 0)
    v = blk.op(Op.Load, f32, k.elem_ptr(blk, k.f.params[0], global_ptr(m, f32)))
    blk.op(Op.Store, blk.op(Op.InBoundsAccessChain, lptr, local, lid), v)
    sem = MemorySemantics.WorkgroupMemory | MemorySemantics.SequentiallyConsistent
    wg = m.const_int(Scope.Workgroup)
    blk.op(Op.ControlBarrier, wg, wg, m.const_int(sem))
    mirror = blk.op(Op.ISub, u64, m.const_int(63, 64), lid)
    w = blk.op(Op.Load, f32, blk.op(Op.InBoundsAccessChain, lptr, local, mirror))
    blk.op(Op.Store, k.elem_ptr(blk, k.f.params[1], global_ptr(m, f32)), w)
    return k.finish(blk)


@pytest.mark.parametrize("version", [(1, 3), (1, 4)])
def test_workgroup_array(device, version):
    binary = build_reverse(version)
    entry_line = next(ln for ln in disassemble(binary).splitlines() if "OpEntryPoint" in ln)
    listed = len(entry_line.split('"reverse"')[1].split())
    assert listed == (3 if version >= (1, 4) else 2)  # the Workgroup array only from 1.4 on
    x = np.arange(256, dtype=np.float32)
    (mx, _), (my, vy) = device.array(x), device.array(np.zeros_like(x))
    device.run(binary, "reverse", [mx, my], 256, 64)
    np.testing.assert_array_equal(vy, x.reshape(-1, 64)[:, ::-1].ravel())


def build_subgroup(op: GroupOperation, sg_size: int) -> bytes:
    """y[i] = sub-group <op> of x over OpGroupNonUniformFAdd (SPIR-V 1.4)."""
    k = kernel("sg", local_size=(64, 1, 1), subgroup_size=sg_size,
               params=lambda m: [global_ptr(m, m.type_float(32))] * 2)
    m, blk, f32 = k.m, k.entry, k.m.type_float(32)
    v = blk.op(Op.Load, f32, k.elem_ptr(blk, k.f.params[0], global_ptr(m, f32)))
    r = blk.op(Op.GroupNonUniformFAdd, f32, m.const_int(Scope.Subgroup), op, v)
    blk.op(Op.Store, k.elem_ptr(blk, k.f.params[1], global_ptr(m, f32)), r)
    return k.finish(blk)


@pytest.mark.parametrize("sg_size", [8, 16, 32])
@pytest.mark.parametrize("op", [GroupOperation.Reduce, GroupOperation.InclusiveScan, GroupOperation.ExclusiveScan])
def test_subgroup_reduce_runs(device, op, sg_size):
    binary = build_subgroup(op, sg_size)
    assert "OpCapability GroupNonUniformArithmetic" in disassemble(binary)
    x = RNG.integers(-100, 100, 256).astype(np.float32)
    (mx, _), (my, vy) = device.array(x), device.array(np.zeros_like(x))
    device.run(binary, "sg", [mx, my], 256, 64)
    groups = x.reshape(-1, sg_size)
    if op == GroupOperation.Reduce:
        expected = np.repeat(groups.sum(axis=1), sg_size)
    elif op == GroupOperation.InclusiveScan:
        expected = groups.cumsum(axis=1).ravel()
    else:
        expected = (groups.cumsum(axis=1) - groups).ravel()
    np.testing.assert_array_equal(vy, expected)


@pytest.mark.parametrize("dtype", ["f32", "f64", "i64"])
def test_atomic_add_runs(device, dtype):
    """out[0] += x[i] by every work-item (OpAtomicFAddEXT / 64-bit OpAtomicIAdd)."""
    np_type, is_float, _ = DTYPES[dtype]
    k = kernel("atomic_sum", params=lambda m: [global_ptr(m, scalar_type(m, dtype))] * 2)
    m, blk, t = k.m, k.entry, scalar_type(k.m, dtype)
    v = blk.op(Op.Load, t, k.elem_ptr(blk, k.f.params[0], global_ptr(m, t)))
    opcode = Op.AtomicFAddEXT if is_float else Op.AtomicIAdd
    blk.op(opcode, t, k.f.params[1], m.const_int(Scope.Device), m.const_int(MemorySemantics.Relaxed), v)
    binary = k.finish(blk)
    text = disassemble(binary)
    assert ("SPV_EXT_shader_atomic_float_add" in text) == is_float
    assert ("OpCapability Int64Atomics" in text) == (not is_float)
    n = 8192
    x = RNG.integers(-1000, 1000, n).astype(np_type)
    (mx, _), (mo, vo) = device.array(x), device.array(np.zeros(1, np_type))
    device.run(binary, "atomic_sum", [mx, mo], n, 64)
    assert vo[0] == x.sum()


def test_bf16_conversions_run(device):
    """f32 -> bf16 -> f32 on the device matches literals.bf16_bits; a bf16 constant too."""
    k = kernel("bf16", params=lambda m: [global_ptr(m, m.type_float(32)), global_ptr(m, m.type_int(16)),
                                         global_ptr(m, m.type_float(32))])
    m, blk = k.m, k.entry
    f32, i16 = m.type_float(32), m.type_int(16)
    x, bits_out, back_out = k.f.params
    b = blk.op(Op.ConvertFToBF16INTEL, i16, blk.op(Op.Load, f32, k.elem_ptr(blk, x, global_ptr(m, f32))))
    blk.op(Op.Store, k.elem_ptr(blk, bits_out, global_ptr(m, i16)), b)
    const = blk.op(Op.ConvertBF16ToFINTEL, f32, m.const_bf16(0.1))
    back = blk.op(Op.FAdd, f32, blk.op(Op.ConvertBF16ToFINTEL, f32, b), const)
    blk.op(Op.Store, k.elem_ptr(blk, back_out, global_ptr(m, f32)), back)
    binary = k.finish(blk)
    n = 256
    x = (RNG.standard_normal(n) * 10.0 ** RNG.integers(-40, 38, n)).astype(np.float32)
    x[:4] = [np.inf, -0.0, 1e-40, 1.0 + 2 ** -8]
    (mx, _), (mb, vb), (mk, vk) = (device.array(x), device.array(np.zeros(n, np.uint16)),
                                   device.array(np.zeros(n, np.float32)))
    device.run(binary, "bf16", [mx, mb, mk], n, 16)
    expected = np.array([bf16_bits(float(v)) for v in x], np.uint16)
    np.testing.assert_array_equal(vb, expected)
    to_f32 = (expected.astype(np.uint32) << 16).view(np.float32)
    const_value = np.array([bf16_bits(0.1) << 16], np.uint32).view(np.float32)[0]
    assert const_value == np.float32(0.10009765625)
    np.testing.assert_array_equal(vk, to_f32 + const_value)


def test_opencl_std_ext_inst_runs(device):
    k = kernel("root", params=lambda m: [global_ptr(m, m.type_float(32))] * 2)
    m, blk, f32 = k.m, k.entry, k.m.type_float(32)
    v = blk.op(Op.Load, f32, k.elem_ptr(blk, k.f.params[0], global_ptr(m, f32)))
    r = blk.ext(OpenCLStd.fma, f32, blk.ext(OpenCLStd.sqrt, f32, v), m.const_float(2.0), m.const_float(1.0))
    blk.op(Op.Store, k.elem_ptr(blk, k.f.params[1], global_ptr(m, f32)), r)
    binary = k.finish(blk)
    assert 'OpExtInstImport "OpenCL.std"' in disassemble(binary)
    x = RNG.uniform(0, 100, 64).astype(np.float32)
    (mx, _), (my, vy) = device.array(x), device.array(np.zeros_like(x))
    device.run(binary, "root", [mx, my], 64, 16)
    np.testing.assert_array_equal(vy, np.sqrt(x) * np.float32(2) + np.float32(1))
