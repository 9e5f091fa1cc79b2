"""One IR function -> one OpenCL kernel entry point, with the DESIGN.md ABI.

Parameters, in source order:
- scalar: one parameter of its value type (index: i64, bf16: i16 bits,
  f16: half, c32/c64: float2/double2);
- memref: element pointer, then one i64 per `?` in the shape, then in the stride;
- group: pointer to member pointers, then per `?` in the memref's shape and
  stride a pointer to i64 (one entry per member), then the group size if `?`,
  then the offset if `?`.
"""

from __future__ import annotations

from tinyc.analysis.parameters import param_uses
from tinyc.ir.core import Function as IRFunction
from tinyc.ir.core import Value
from tinyc.ir.types import DYNAMIC, BoolType, GroupType, MemrefType, ScalarType
from tinyc.signature import KernelInfo, ParamInfo
from tinyc.spirv.codegen.bounds import Bounds
from tinyc.spirv.codegen.context import CodegenError, Ctx, GroupDesc, Lowered, MemrefDesc
from tinyc.spirv.codegen.dispatch import emit_region
from tinyc.spirv.codegen.memref import declare_local_memory, plan_local_memory
from tinyc.spirv.codegen.types import element_pointer, scalar_type
from tinyc.spirv.instruction import Id
from tinyc.spirv.module import Module
from tinyc.spirv.spv import Decoration, ExecutionMode, ExecutionModel, Op, StorageClass


def _param_types(m: Module, t) -> list[Id]:
    """The kernel parameters one source argument of type `t` becomes."""
    i64 = m.type_int(64)
    if isinstance(t, ScalarType):
        return [scalar_type(m, t)]
    if isinstance(t, BoolType):  # OpTypeBool, as the reference emits it (docs/decisions.md)
        return [m.type_bool()]
    if isinstance(t, MemrefType):
        return [element_pointer(m, t)] + [i64] * len(t.dynamic_slots())
    if isinstance(t, GroupType):
        member = m.type_pointer(StorageClass.CrossWorkgroup, scalar_type(m, t.memref.element))
        types = [m.type_pointer(StorageClass.CrossWorkgroup, member)]
        types += [m.type_pointer(StorageClass.CrossWorkgroup, i64)] * len(t.memref.dynamic_slots())
        types += [i64] * ((t.size == DYNAMIC) + (t.offset == DYNAMIC))
        return types
    raise CodegenError(f"argument type {t} cannot be passed to a kernel")


def _bind(m: Module, arg: Value, ids: list[Id]) -> Lowered:
    """The lowered value of a source argument from its kernel parameters."""
    t = arg.type
    name = arg.name or "arg"
    m.name(ids[0], name)
    align = int(arg.attrs.get("alignment", 0) or 0)
    if isinstance(t, (ScalarType, BoolType)):
        return ids[0]
    rest = iter(ids[1:])
    if isinstance(t, MemrefType):
        if align:
            m.decorate(ids[0], Decoration.Alignment, align)
        dyn = {slot: next(rest) for slot in t.dynamic_slots()}
        for (kind, k), pid in dyn.items():
            m.name(pid, f"{name}_{kind}{k}")
        shape = [dyn.get(("shape", k), s) for k, s in enumerate(t.shape)]
        stride = [dyn.get(("stride", k), s) for k, s in enumerate(t.stride)]
        return MemrefDesc(ids[0], t, shape, stride)
    g = GroupDesc(ids[0], t)
    for slot in t.memref.dynamic_slots():
        g.dope[slot] = next(rest)
        m.name(g.dope[slot], f"{name}_{slot[0]}{slot[1]}s")
    g.size = next(rest) if t.size == DYNAMIC else t.size
    g.offset = next(rest) if t.offset == DYNAMIC else t.offset
    for label, value in (("size", g.size), ("offset", g.offset)):
        if isinstance(value, Id):
            m.name(value, f"{name}_{label}")
    return g


def emit_kernel(m: Module, fn: IRFunction, batch_axis: int = 2,
                check_bounds: bool = False, fp_contract: bool = False) -> KernelInfo:
    """Emit `fn` as a Kernel entry point and describe it for the runtime.

    The batch of work-groups runs along OpenCL dimension `batch_axis`
    (z for seed programs, x for newest ones: tinyc.std.BATCH_AXIS).
    `check_bounds`: the bounds-checked variant, which takes a report buffer
    (int64 pointer) after the ABI's arguments (codegen/bounds.py).
    `fp_contract`: a real f32/f64 add of a single-use product becomes one fma
    (contracted_products).
    """
    per_arg = [_param_types(m, a.type) for a in fn.args]
    extra = [m.type_pointer(StorageClass.CrossWorkgroup, m.type_int(64))] if check_bounds else []
    spv_fn = m.function(m.type_void(), [t for ts in per_arg for t in ts] + extra, name=fn.name)
    m.entry_point(ExecutionModel.Kernel, spv_fn, fn.name)
    ctx = Ctx(m, spv_fn, fn, batch_axis)
    if fp_contract:
        ctx.products = contracted_products(fn)
    X, Y = ctx.work_group_size
    m.execution_mode(spv_fn, ExecutionMode.LocalSize, X, Y, 1)
    m.execution_mode(spv_fn, ExecutionMode.SubgroupSize, ctx.subgroup_size)

    params = iter(spv_fn.params)
    for arg, types in zip(fn.args, per_arg):
        ctx[arg] = _bind(m, arg, [next(params) for _ in types])
    if check_bounds:
        ctx.bounds = Bounds(ctx, spv_fn.params[-1], dry=getattr(fn, "bounds_dry", False))
        m.name(spv_fn.params[-1], "bounds_report")
    ctx.local_offsets, size = plan_local_memory(fn)
    declare_local_memory(ctx, size)

    emit_region(ctx, fn.body)
    if check_bounds:
        ctx.bounds.finish()
    ctx.do(Op.Return)
    ctx.prologue.op(Op.Branch, ctx.body_label)
    params = param_infos(fn)
    sites = tuple(ctx.bounds.sites) if check_bounds else None
    dry = bool(check_bounds and ctx.bounds.dry)
    launch = getattr(fn, "launch_bounds", None)  # the pipeline's launch-bounds step
    problem = launch.batch_split_problem if launch is not None else "the kernel was not analysed"
    return KernelInfo(fn.name, params, (X, Y), ctx.subgroup_size, problem, sites, dry, batch_axis, launch)


def contracted_products(fn: IRFunction) -> dict:
    """Products a·b (real f32/f64) whose only use is a real add of the same type: the add
    becomes fma(a, b, c), rounded once (OpenCL C's FP_CONTRACT ON; the option fp_contract)."""
    users: dict = {}
    for inst in fn.walk():
        for v in inst.operands:
            users.setdefault(v, []).append(inst)
    found = {}
    for v, used_by in users.items():
        owner = v.owner
        if len(used_by) != 1 or not hasattr(owner, "float_arithmetic"):
            continue
        made, user = owner.float_arithmetic(), used_by[0].float_arithmetic()
        if made is not None and made[0] == "mul" and user is not None and user[0] == "add" \
                and used_by[0].result.type is v.type:
            found[v] = made[1]
    return found


def param_infos(fn: IRFunction) -> tuple[ParamInfo, ...]:
    """The kernel's parameters as the runtime reads them: names, types and their uses
    (tinyc/analysis/parameters.py)."""
    return tuple(ParamInfo(a.name or f"arg{i}", a.type, written=use.written, read=use.read,
                           batch_mode=use.batch_mode, nullable=use.nullable)
                 for i, (a, use) in enumerate(zip(fn.args, param_uses(fn))))
