"""IR types to SPIR-V types, and how values of each type are represented.

Representation (also the kernel ABI for scalars, DESIGN.md):
- bool: OpTypeBool (never stored to memory);
- i8 … i64, index: OpTypeInt of that width (index is 64 bits);
- bf16: a 16-bit int holding the bf16 bits (the runtime has no bf16 type;
  arithmetic converts through f32 with the SPV_INTEL_bfloat16_conversion ops);
- f16, f32, f64: OpTypeFloat;
- c32, c64: a float2 / double2 vector (re, im);
- coopmatrix: a list of component ids (see coopmatrix.py for the layout).
"""

from __future__ import annotations

from tinyc.ir.coopmatrix_layout import row_blocks, vector_length
from tinyc.ir.types import (
    AddressSpace, BoolType, CoopMatrixType, MemrefType, ScalarType, Type, accumulation_type, bf16,
)
from tinyc.spirv.codegen.context import CodegenError, Ctx
from tinyc.spirv.instruction import Id
from tinyc.spirv.module import Module
from tinyc.spirv.spv import StorageClass


def scalar_type(m: Module, t: ScalarType) -> Id:
    """SPIR-V type of a scalar's value (and of a memref element); remembered per module
    (IR types are interned: codegen asks for the same few types hundreds of times)."""
    found = m.memo.get(t)
    if found is None:
        found = m.memo[t] = _scalar_type(m, t)
    return found


def _scalar_type(m: Module, t: ScalarType) -> Id:
    if t.is_int:
        return m.type_int(t.bits)
    if t is bf16:
        return m.type_int(16)
    if t.is_float:
        return m.type_float(t.bits)
    return m.type_vector(m.type_float(t.component.bits), 2)


def value_type(m: Module, t: Type) -> Id:
    """SPIR-V type of a bool or scalar value."""
    if isinstance(t, BoolType):
        return m.type_bool()
    if isinstance(t, ScalarType):
        return scalar_type(m, t)
    raise CodegenError(f"no single SPIR-V type for {t}")


def storage_class(memref: MemrefType) -> StorageClass:
    return StorageClass.Workgroup if memref.space is AddressSpace.LOCAL else StorageClass.CrossWorkgroup


def element_pointer(m: Module, memref: MemrefType) -> Id:
    """Pointer to the memref's element type in its address space."""
    found = m.memo.get(memref)  # (types are interned: their hash is their identity's)
    if found is None:
        found = m.memo[memref] = m.type_pointer(storage_class(memref), scalar_type(m, memref.element))
    return found


def coop_blocks(t: CoopMatrixType, subgroup_size: int) -> int:
    """Rows a lane holds: ceil(R/S) for matrix_a/acc, all R for matrix_b (ir/coopmatrix_layout.py)."""
    return row_blocks(t, subgroup_size)


def coop_components(t: CoopMatrixType, subgroup_size: int) -> int:
    """Number of ids a lane holds for a coopmatrix value."""
    return vector_length(t, subgroup_size)


def flat_types(ctx: Ctx, t: Type) -> list[Id]:
    """SPIR-V types of the ids a value of type `t` lowers to (for Phis)."""
    if isinstance(t, CoopMatrixType):
        return [scalar_type(ctx.m, t.component)] * coop_components(t, ctx.subgroup_size)
    return [value_type(ctx.m, t)]


def flatten(lowered) -> list[Id]:
    """The ids of a lowered value (one for scalars, all components for coopmatrices)."""
    return list(lowered) if isinstance(lowered, list) else [lowered]


def unflatten(t: Type, ids: list[Id]):
    """Inverse of `flatten` for a value of type `t`."""
    return list(ids) if isinstance(t, CoopMatrixType) else ids[0]


def compute_type(t: ScalarType) -> ScalarType:
    """The type a coopmatrix multiply-add on `t` runs in (tinyc.ir.types.accumulation_type)."""
    return accumulation_type(t)
