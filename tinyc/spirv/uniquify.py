"""Deduplicated types and constants (the module's "uniquifier").

SPIR-V forbids two OpTypeInt with the same operands and codegen should not
have to remember which types and constants it already declared, so every
type/constant helper returns the existing id for equal arguments.
Each type id also keeps a small structural key (`TypeKey`) that the
capability inference and the constant encoder look at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tinyc.spirv.instruction import Id, Instruction, Operand
from tinyc.spirv.literals import bf16_bits, float_words, int_words
from tinyc.spirv.spv import Op, StorageClass

TypeKey = tuple
"""('void',) ('bool',) ('int', width, signed) ('float', width) ('vector', elem, n)
('array', elem, length_id) ('pointer', StorageClass, pointee) ('function', ret, params)
('struct', members)"""


_BOOL = ("bool",)


class Uniquifier:
    """Types, constants and undefs in the module's global section."""

    def __init__(self, new_id: Callable[[], Id], emit: Callable[[Instruction], None]) -> None:
        self._new_id = new_id
        self._emit = emit
        self._by_key: dict[tuple, Id] = {}
        self._types: dict[TypeKey, Id] = {}
        self._int_constants: dict[tuple[int, int], Id] = {}  # (width, value): const_int's shortcut
        self.type_keys: dict[Id, TypeKey] = {}
        self.constant_types: dict[Id, Id] = {}
        self.memo: dict[tuple, Id] = {}
        """Ids callers derive from their own keys (codegen: the SPIR-V type of an IR type),
        kept with the module because ids mean something in this module only."""

    # -- helpers ---------------------------------------------------------
    def _unique(self, key: tuple, opcode: Op, result_type: Id | None, operands: list[Operand]) -> Id:
        """Return the id for `key`, emitting the instruction the first time."""
        found = self._by_key.get(key)
        if found is None:
            found = self._new_id()
            self._by_key[key] = found
            self._emit(Instruction(opcode, result_type, found, operands))
        return found

    def _type(self, key: TypeKey, opcode: Op, operands: list[Operand]) -> Id:
        tid = self._types.get(key)
        if tid is None:
            tid = self._types[key] = self._new_id()
            self.type_keys[tid] = key
            self._emit(Instruction(opcode, None, tid, operands))
        return tid

    def type_key(self, type_id: Id) -> TypeKey:
        """Structural description of a type id made by this module."""
        return self.type_keys[type_id]

    # -- types -------------------------------------------------------------
    def type_void(self) -> Id:
        return self._type(("void",), Op.TypeVoid, [])

    def type_bool(self) -> Id:
        tid = self._types.get(_BOOL)
        return tid if tid is not None else self._type(_BOOL, Op.TypeBool, [])

    def type_int(self, width: int, signed: int = 0) -> Id:
        """Integer type; OpenCL wants signedness 0 for every width."""
        key = ("int", width, signed)
        tid = self._types.get(key)  # (the common case first: codegen asks for i64 often)
        return tid if tid is not None else self._type(key, Op.TypeInt, [width, signed])

    def type_float(self, width: int) -> Id:
        key = ("float", width)
        tid = self._types.get(key)
        return tid if tid is not None else self._type(key, Op.TypeFloat, [width])

    def type_vector(self, elem: Id, n: int) -> Id:
        key = ("vector", elem, n)
        tid = self._types.get(key)
        return tid if tid is not None else self._type(key, Op.TypeVector, [elem, n])

    def type_array(self, elem: Id, length: int | Id) -> Id:
        """Array type; an int length becomes a uint32 (or uint64) constant."""
        if not isinstance(length, Id):
            width = 32 if length < (1 << 32) else 64
            length = self.constant(self.type_int(width), length)
        return self._type(("array", elem, length), Op.TypeArray, [elem, length])

    def type_pointer(self, storage_class: StorageClass, pointee: Id) -> Id:
        sc = storage_class if storage_class.__class__ is StorageClass else StorageClass(storage_class)
        key = ("pointer", sc, pointee)
        tid = self._types.get(key)
        return tid if tid is not None else self._type(key, Op.TypePointer, [sc, pointee])

    def type_function(self, ret: Id, params: Sequence[Id] = ()) -> Id:
        return self._type(("function", ret, tuple(params)), Op.TypeFunction, [ret, *params])

    def type_struct(self, members: Sequence[Id]) -> Id:
        return self._type(("struct", tuple(members)), Op.TypeStruct, list(members))

    # -- constants ---------------------------------------------------------
    def _const(self, opcode: Op, type_id: Id, operands: list[Operand]) -> Id:
        cid = self._unique(("const", opcode, type_id, tuple(operands)), opcode, type_id, operands)
        self.constant_types[cid] = type_id
        return cid

    def constant(self, type_id: Id, value: object) -> Id:
        """Scalar constant of a bool/int/float type, with the value's exact bits.

        For a vector type, a scalar value is splatted and a sequence gives
        the components.
        """
        key = self.type_keys[type_id]
        match key:
            case ("bool",):
                return self._const(Op.ConstantTrue if value else Op.ConstantFalse, type_id, [])
            case ("int", width, _):
                return self._const(Op.Constant, type_id, list(int_words(int(value), width)))
            case ("float", width):
                return self._const(Op.Constant, type_id, list(float_words(float(value), width)))
            case ("vector", elem, n):
                values = list(value) if isinstance(value, Sequence) else [value] * n
                if len(values) != n:
                    raise ValueError(f"vector of {n} needs {n} values, got {len(values)}")
                return self.constant_composite(type_id, [self.constant(elem, v) for v in values])
        raise TypeError(f"no scalar constants of type {key}")

    def constant_composite(self, type_id: Id, parts: Sequence[Id]) -> Id:
        return self._const(Op.ConstantComposite, type_id, list(parts))

    def constant_null(self, type_id: Id) -> Id:
        return self._const(Op.ConstantNull, type_id, [])

    def undef(self, type_id: Id) -> Id:
        """OpUndef at module scope (deduplicated)."""
        return self._const(Op.Undef, type_id, [])

    # -- shorthands for the most common constants ----------------------------
    def const_int(self, value: int, width: int = 32) -> Id:
        """Integer constant of the (signless) int type of `width` bits."""
        key = (width, value)
        cid = self._int_constants.get(key)
        if cid is None:
            cid = self._int_constants[key] = self.constant(self.type_int(width), value)
        return cid

    def const_float(self, value: float, width: int = 32) -> Id:
        return self.constant(self.type_float(width), value)

    def const_bool(self, value: bool) -> Id:
        return self.constant(self.type_bool(), value)

    def const_bf16(self, value: float) -> Id:
        """bf16 constant, carried as its 16-bit pattern in an int16 (no bf16 type on the runtime)."""
        return self.constant(self.type_int(16), bf16_bits(value))
