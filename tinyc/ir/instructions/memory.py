"""Mixed memory accesses: load, store, size, associated and lifetime_stop."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.checks import (
    expect_index_count, expect_indices, expect_memref, expect_result, expect_type, inst_error,
    operand_error,
)
from tinyc.ir.addressing import Addressing, Footprint, IntegerFacts, IntOp, MemberView
from tinyc.ir.core import (
    Accesses, EffectKind, Instruction, Kind, Value, no_addressing, no_integer_facts, no_memory_access,
)
from tinyc.ir.instructions.collective import Alloca
from tinyc.ir.types import GroupType, MemrefType, Type, bool_, index
from tinyc.std import Std

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


class StoreFlag(Enum):
    NONE = ""
    ATOMIC = ".atomic"
    ATOMIC_ADD = ".atomic_add"

    @property
    def effect(self) -> EffectKind:
        """An atomic add commutes with other atomic adds; the other stores are writes."""
        return EffectKind.ATOMIC_ADD if self is StoreFlag.ATOMIC_ADD else EffectKind.WRITE

    @classmethod
    def of(cls, s: "Parsed") -> "StoreFlag":
        """The flag among an instruction's modifiers."""
        if not s.modifiers:  # (most stores: no walk over the enum)
            return cls.NONE
        return next((flag for flag in cls if flag.value and flag.value in s.modifiers), cls.NONE)


class Load(Instruction):
    """A scalar from a memref, or a memref from a group."""

    opname = "load"
    keywords = ("load",)
    syntax = 'LOCAL_ID "[" indices? "]" ":" (scalar_type | memref_type)'

    def __init__(self, tensor: Value, indices: Sequence[Value], type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([tensor, *indices], [type], span=span, result_names=[name])

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Load":
        tensor, *indices = s.operands
        return cls(tensor, indices, s.type)

    def memory_accesses(self) -> Accesses:
        """Loading a scalar reads memory; loading a member of a group only forms a pointer."""
        return [] if isinstance(self.tensor.type, GroupType) else [(self.tensor, EffectKind.READ)]

    def addressing(self) -> Addressing:
        """An element read (its value is loaded), or a group's member (a view)."""
        if isinstance(self.tensor.type, GroupType):
            index = self.indices[0] if self.indices else 0
            return Addressing(view=MemberView(self.tensor, index))
        return Addressing((Footprint.element(self.tensor, EffectKind.READ, self.indices),),
                          loaded=(self.result,))

    integer_facts = no_integer_facts

    @property
    def tensor(self) -> Value:
        return self.operands[0]

    @property
    def indices(self) -> list[Value]:
        return self.operands[1:]

    def format(self, p: "Printer") -> str:
        idx = ", ".join(p.v(v) for v in self.indices)
        return f"load {p.v(self.tensor)}[{idx}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """One index per mode giving the element; one index into a group giving its memref."""
        t = self.tensor.type
        indices = len(self.indices)
        if isinstance(t, MemrefType):
            expect_index_count(ctx, self, indices, t.order, self.tensor)
            expect_indices(ctx, self, 1, indices)
            if self.result.type is not t.element:  # (the reason's text only for an error)
                expect_result(ctx, self, t.element, f" (the element type of {t})", [self.tensor])
        elif isinstance(t, GroupType):
            expect_index_count(ctx, self, indices, 1, self.tensor)
            expect_indices(ctx, self, 1, indices)
            expect_result(ctx, self, t.memref, " (the memref type of the group)", [self.tensor])
        else:
            operand_error(ctx, self, 0, f"operand must be a memref or a group, got {t}")


class Size(Instruction):
    """The size of a memref mode, or the number of members of a group."""

    opname = "size"
    keywords = ("size",)
    syntax = 'LOCAL_ID "[" INTEGER "]" ":" index_type'
    memory_accesses = no_memory_access

    def __init__(self, tensor: Value, mode: int, span: Span | None = None,
                 name: str | None = None, type: Type = index):
        super().__init__([tensor], [type], span=span, result_names=[name])
        self.mode = mode

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Size":
        return cls(s.values[0], s.literals[0], type=s.type)

    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """The mode's size (a group's member count)."""
        return IntegerFacts(IntOp("size", (self.operands[0], self.mode)))

    def format(self, p: "Printer") -> str:
        return f"size {p.v(self.operands[0])}[{self.mode}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Mode in range (from 0) for a memref, mode 0 for a group; an index result."""
        t = self.operands[0].type
        if isinstance(t, MemrefType):
            if not 0 <= self.mode < t.order:
                inst_error(ctx, self, f"mode {self.mode} is out of range for {t} of order {t.order} "
                                      f"(modes count from 0)", self.operands)
        elif isinstance(t, GroupType):
            if self.mode != 0:
                inst_error(ctx, self, f"a group has only mode 0, got mode {self.mode}", self.operands)
        else:
            operand_error(ctx, self, 0, f"operand must be a memref or a group, got {t}")
        expect_result(ctx, self, index)


class Store(Instruction):
    """Writes a scalar to a memref element; .atomic / .atomic_add variants."""

    opname = "store"
    keywords = ("store",)
    syntax = 'store_flag? LOCAL_ID "," LOCAL_ID "[" indices? "]"'

    def __init__(self, value: Value, tensor: Value, indices: Sequence[Value],
                 flag: StoreFlag = StoreFlag.NONE, span: Span | None = None):
        super().__init__([value, tensor, *indices], span=span)
        self.flag = flag

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Store":
        value, tensor, *indices = s.operands
        return cls(value, tensor, indices, StoreFlag.of(s))

    def memory_accesses(self) -> Accesses:
        return [(self.tensor, self.flag.effect)]

    def addressing(self) -> Addressing:
        """One element written (or added to atomically)."""
        return Addressing((Footprint.element(self.tensor, self.flag.effect, self.indices),))

    integer_facts = no_integer_facts

    @property
    def value(self) -> Value:
        return self.operands[0]

    @property
    def tensor(self) -> Value:
        return self.operands[1]

    @property
    def indices(self) -> list[Value]:
        return self.operands[2:]

    def format(self, p: "Printer") -> str:
        """The newest language has no store flags: `atomic_store` and a value-returning
        `atomic_add` (at their default work_group scope, as the seed's store.atomic)."""
        idx = ", ".join(p.v(v) for v in self.indices)
        operands = f"{p.v(self.value)}, {p.v(self.tensor)}[{idx}]"
        if p.newest and self.flag is StoreFlag.ATOMIC:
            return f"atomic_store {operands}"
        if p.newest and self.flag is StoreFlag.ATOMIC_ADD:
            return f"{p.fresh('old')} = atomic_add {operands} : {self.value.type}"
        return f"store{self.flag.value} {operands}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The value has the element type; one index per mode."""
        t = expect_memref(ctx, self, 1, "the tensor")
        if t is None:
            return
        if self.operands[0].type is not t.element:  # (the reason's text only for an error)
            expect_type(ctx, self, 0, "the value", t.element, f" (the element type of {t})")
        expect_index_count(ctx, self, len(self.indices), t.order, self.tensor)
        expect_indices(ctx, self, 2, len(self.indices))


class Associated(Instruction):
    """True if a memref's or group's base address is not null (newest language)."""

    opname = "associated"
    keywords = ("associated",)
    versions = {"associated": Std.NEWEST}
    syntax = 'LOCAL_ID ":" bool_type'
    memory_accesses = no_memory_access   # it reads the address, not the memory
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, tensor: Value, span: Span | None = None, name: str | None = None,
                 type: Type = bool_):
        super().__init__([tensor], [type], span=span, result_names=[name])

    def null_checked(self) -> Value:
        return self.operands[0]

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Associated":
        return cls(*s.operands, type=s.type or bool_)

    def format(self, p: "Printer") -> str:
        if not p.newest:
            p.cannot(self, "'associated'")
        return f"associated {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A memref or group operand; a bool result."""
        t = self.operands[0].type
        if not isinstance(t, (MemrefType, GroupType)):
            operand_error(ctx, self, 0, f"operand must be a memref or a group, got {t}")
        expect_result(ctx, self, bool_)


class LifetimeStop(Instruction):
    """Marks the end of an alloca's lifetime so its memory can be reused."""

    opname = "lifetime_stop"
    keywords = ("lifetime_stop",)
    syntax = "LOCAL_ID"
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, value: Value, span: Span | None = None):
        super().__init__([value], span=span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "LifetimeStop":
        return cls(*s.operands)

    def format(self, p: "Printer") -> str:
        return f"lifetime_stop {p.v(self.operands[0])}"

    def kind_in(self, std: Std) -> Kind:
        """Mixed in the seed, collective in the newest language."""
        return Kind.COLLECTIVE if std is Std.NEWEST else self.kind

    def verify(self, ctx: "VerifyContext") -> None:
        """Only memory from alloca has a lifetime to end."""
        if not isinstance(self.operands[0].owner, Alloca):
            operand_error(ctx, self, 0, "operand must be the result of an alloca")
