"""Infer OpCapability / OpExtension from what a module uses.

Sources of requirements, per instruction:
- the opcode's entry in the grammar (`OP_INFO`),
- every enum-member operand (`StorageClass.Generic`, `BuiltIn.SubgroupSize`,
  `GroupOperation.ClusteredReduce`, `LoopControl.PartialCount`, ...),
- facts the grammar cannot express: int/float widths, 8/16-wide vectors,
  atomics on 64-bit integers, and the per-width float atomic capabilities.

The grammar lists alternatives ("any one of"); requirements with a single
choice are settled first, then alternatives count as met if a declared
capability (or one it implicitly declares) is among them, else the first
one the CPU runtime advertises is added (RUNTIME-NOTES §14).
"""

from __future__ import annotations

from collections.abc import Iterable

from tinyc.spirv.enums import Enumerant, Flags
from tinyc.spirv.instruction import Id, Instruction
from tinyc.spirv.spv import CORE, ENUM_REQUIREMENTS, KINDS, OP_INFO, Capability, Op, Requirement
from tinyc.spirv.uniquify import TypeKey

C = Capability
RUNTIME_CAPABILITIES = frozenset({
    C.Addresses, C.Float16Buffer, C.Int16, C.Int8, C.Kernel, C.Linkage, C.Vector16, C.Int64,
    C.GenericPointer, C.Groups, C.Pipes, C.SubgroupDispatch, C.DeviceEnqueue, C.Float16,
    C.Float64, C.Int64Atomics, C.DotProductInput4x8Bit, C.DotProductInput4x8BitPacked,
    C.DotProduct, C.GroupNonUniform, C.GroupNonUniformBallot, C.GroupNonUniformClustered,
    C.GroupNonUniformArithmetic, C.GroupNonUniformVote, C.GroupNonUniformShuffle,
    C.GroupNonUniformShuffleRelative, C.AtomicFloat32AddEXT, C.AtomicFloat64AddEXT,
    C.AtomicFloat16AddEXT, C.AtomicFloat32MinMaxEXT, C.AtomicFloat64MinMaxEXT,
    C.AtomicFloat16MinMaxEXT, C.SubgroupBufferBlockIOINTEL, C.SubgroupShuffleINTEL,
    C.GroupNonUniformRotateKHR, C.BFloat16ConversionINTEL,
})
"""What the Intel CPU runtime lists (plus BFloat16ConversionINTEL, which works)."""

_INT_WIDTH_CAPS = {8: C.Int8, 16: C.Int16, 64: C.Int64}
_FLOAT_WIDTH_CAPS = {16: C.Float16, 64: C.Float64}
_FLOAT_ATOMICS = {Op.AtomicFAddEXT: "AtomicFloat{}AddEXT",
                  Op.AtomicFMinEXT: "AtomicFloat{}MinMaxEXT",
                  Op.AtomicFMaxEXT: "AtomicFloat{}MinMaxEXT"}
_ATOMICS = frozenset(op for name, op in vars(Op).items() if name.startswith("Atomic") and op.__class__ is Op)
_SPECIAL = _ATOMICS | {Op.TypeInt, Op.TypeFloat, Op.TypeVector}
"""Opcodes whose operand types imply capabilities (see `Inference._special`)."""
_ENUM_KINDS = frozenset(kind for kind in KINDS.values() if kind is not Capability)
"""Operand kinds with requirements (Capability operands declare, they need nothing)."""
_enum_cache: dict[tuple[type, int], list[Requirement]] = {}


def enum_requirements(member: Enumerant) -> list[Requirement]:
    """Requirements of one enum operand (each set bit of a flag value)."""
    table = ENUM_REQUIREMENTS.get(type(member), {})
    if isinstance(member, Flags) and int(member):
        bits = [1 << i for i in range(int(member).bit_length()) if int(member) >> i & 1]
        return [table.get(bit, CORE) for bit in bits]
    return [table.get(int(member), CORE)]


class Inference:
    """Collects requirements of instructions, then resolves them.

    Each distinct requirement is kept once, with where it was first needed:
    a repeated one cannot change the outcome, and CORE ones are dropped.
    """

    def __init__(self, version: tuple[int, int], type_keys: dict[Id, TypeKey],
                 value_types: dict[Id, Id]) -> None:
        self.version = version
        self.type_keys = type_keys
        self.value_types = value_types
        self.pending: dict[Requirement, str] = {}
        self._seen: dict[int, Requirement] = {}  # requirements of the tables already looked at, by id

    def _pointee(self, pointer: object) -> TypeKey | None:
        """Type key of what `pointer` points to, if the module knows it."""
        ptr_type = self.value_types.get(pointer) if isinstance(pointer, Id) else None
        key = self.type_keys.get(ptr_type) if ptr_type is not None else None
        if key is None or key[0] != "pointer":
            return None
        return self.type_keys.get(key[2])

    def _special(self, inst: Instruction) -> list[Capability]:
        """Capabilities implied by operand types rather than by the grammar."""
        caps: list[Capability] = []
        match inst.opcode, inst.operands:
            case Op.TypeInt, [width, *_] if width in _INT_WIDTH_CAPS:
                caps.append(_INT_WIDTH_CAPS[width])
            case Op.TypeFloat, [width, *_] if width in _FLOAT_WIDTH_CAPS:
                caps.append(_FLOAT_WIDTH_CAPS[width])
            case Op.TypeVector, [_, n] if n in (8, 16):
                caps.append(C.Vector16)
        if inst.opcode.name.startswith("Atomic") and inst.operands:
            # the value type: the result type, else (OpAtomicStore) the pointee
            value = self.type_keys.get(inst.result_type) if inst.result_type is not None else None
            value = value or self._pointee(inst.operands[0])
            if value is not None and value[0] == "int" and value[1] == 64:
                caps.append(C.Int64Atomics)
            if value is not None and value[0] == "float" and inst.opcode in _FLOAT_ATOMICS:
                caps.append(C.by_name(_FLOAT_ATOMICS[inst.opcode].format(value[1])))
        return caps

    def add(self, instructions: Iterable[Instruction]) -> None:
        """Record everything the instructions need."""
        seen, need = self._seen, self._need
        for inst in instructions:
            opcode = inst.opcode
            req = OP_INFO[opcode][2]
            if opcode in _SPECIAL:
                special = self._special(inst)
                for cap in special:
                    need(((cap,), (), (1, 0)), opcode)
                if special and opcode in _FLOAT_ATOMICS:
                    req = ((), req[1], req[2])  # the width-specific capability replaces the alternatives
            if req is not CORE and id(req) not in seen:
                seen[id(req)] = req  # (the tables share equal tuples: one look at each)
                need(req, opcode)
            for operand in inst.operands:
                if operand.__class__ in _ENUM_KINDS:
                    key = (operand.__class__, operand)
                    reqs = _enum_cache.get(key)
                    if reqs is None:
                        reqs = _enum_cache[key] = [r for r in enum_requirements(operand) if r is not CORE]
                    for r in reqs:
                        if id(r) not in seen:
                            seen[id(r)] = r
                            need(r, opcode, operand)

    def _need(self, req: Requirement, opcode: Op, operand: Enumerant | None = None) -> None:
        if req not in self.pending:
            where = f"Op{opcode.name}"
            if operand is not None:
                where += f" operand {type(operand).__name__}.{operand.name}"
            self.pending[req] = where

    def resolve(self, explicit_caps: Iterable[Capability],
                explicit_exts: Iterable[str]) -> tuple[list[Capability], list[str]]:
        """Declared capabilities and extensions, sorted (stable output)."""
        caps: dict[Capability, None] = dict.fromkeys(explicit_caps)
        exts: dict[str, None] = dict.fromkeys(explicit_exts)
        closure = _closure(caps)
        single = [r for r in self.pending if len(r[0]) == 1]
        multi = [r for r in self.pending if len(r[0]) > 1]
        for cap_choices, _, _ in single + multi:
            if cap_choices and not closure.intersection(cap_choices):
                preferred = [c for c in cap_choices if c in RUNTIME_CAPABILITIES]
                caps[(preferred or list(cap_choices))[0]] = None
                closure = _closure(caps)
        cap_reqs = [(ENUM_REQUIREMENTS[Capability].get(c, CORE), f"Capability {c.name}") for c in caps]
        for req, where in list(self.pending.items()) + cap_reqs:
            self._need_extension(req, where, exts)
        return sorted(caps), sorted(exts)

    def _need_extension(self, req: Requirement, where: str, exts: dict[str, None]) -> None:
        """Add an extension if the module version does not have `req` in core."""
        _, choices, version = req
        if version is not None and version <= self.version:
            return
        if choices:
            if not exts.keys() & set(choices):
                exts[choices[0]] = None
        elif version is not None:
            raise ValueError(f"{where} requires SPIR-V {version[0]}.{version[1]}, "
                             f"module is {self.version[0]}.{self.version[1]}")


def _closure(caps: Iterable[Capability]) -> set[Capability]:
    """Capabilities plus everything they implicitly declare."""
    table = ENUM_REQUIREMENTS[Capability]
    seen: set[Capability] = set()
    todo = list(caps)
    while todo:
        cap = todo.pop()
        if cap not in seen:
            seen.add(cap)
            todo += table.get(cap, CORE)[0]
    return seen
