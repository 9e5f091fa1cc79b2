"""Atomic element access of the newest language: atomic_load, atomic_store, atomic_add/max/min.

Each names a memory scope (which work-items the atomicity and ordering are
guaranteed against) and memory semantics (how other accesses are ordered
around it), written as modifiers after the keyword; the defaults are
`.work_group` and `.relaxed`. They are mixed instructions: in a collective
region every work-item executes them (an `atomic_add` there adds once per
work-item, as the seed's `store.atomic_add` does).

Complex elements are updated "pseudo-atomically", the real and imaginary
parts each by its own atomic operation, as the spec allows. `atomic_add`,
`atomic_max` and `atomic_min` return the element's value before the update.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.checks import (
    expect_index_count, expect_indices, expect_memref, expect_result, expect_type, operand_error,
)
from tinyc.ir.addressing import Addressing, Footprint
from tinyc.ir.core import Accesses, EffectKind, Instruction, Value, no_integer_facts
from tinyc.ir.types import MemrefType, Type
from tinyc.std import Std

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


class MemoryScope(Enum):
    """The work-items an atomic operation is atomic (and ordered) with respect to."""

    CROSS_DEVICE = ".cross_device"
    DEVICE = ".device"
    WORK_GROUP = ".work_group"
    SUBGROUP = ".subgroup"

    @classmethod
    def of(cls, s: "Parsed") -> "MemoryScope":
        """The scope among an instruction's modifiers; `.work_group` when none is written."""
        return next((m for m in cls if m.value in s.modifiers), cls.WORK_GROUP)


class MemorySemantics(Enum):
    """The memory order of an atomic operation (C++ memory_order)."""

    RELAXED = ".relaxed"
    ACQUIRE = ".acquire"
    RELEASE = ".release"
    ACQUIRE_RELEASE = ".acquire_release"
    SEQUENTIALLY_CONSISTENT = ".sequentially_consistent"

    @classmethod
    def of(cls, s: "Parsed") -> "MemorySemantics":
        """The semantics among an instruction's modifiers; `.relaxed` when none is written."""
        return next((m for m in cls if m.value in s.modifiers), cls.RELAXED)


def format_ordering(scope: MemoryScope, semantics: MemorySemantics) -> str:
    """The modifiers as written: the defaults (`.work_group`, `.relaxed`) are left out."""
    return ((scope.value if scope is not MemoryScope.WORK_GROUP else "")
            + (semantics.value if semantics is not MemorySemantics.RELAXED else ""))


def has_uses(inst: Instruction) -> bool:
    """Whether any instruction of the enclosing function uses one of `inst`'s results."""
    node = inst
    while getattr(node, "parent", None) is not None:
        node = node.parent
    mine = {id(r) for r in inst.results}
    return any(id(v) in mine for other in node.walk() for v in other.operands)


class AtomicOp(Enum):
    ADD = "add"
    MAX = "max"
    MIN = "min"


class AtomicInstruction(Instruction):
    """Shared by the atomic element instructions: scope, semantics, a memref and its indices."""

    abstract = True

    def __init__(self, operands: Sequence[Value], result_types: Sequence[Type],
                 scope: MemoryScope, semantics: MemorySemantics, tensor_at: int,
                 span: Span | None = None, name: str | None = None):
        super().__init__(operands, result_types, span=span,
                         result_names=[name] if result_types else None)
        self.scope = scope
        self.semantics = semantics
        self._tensor_at = tensor_at

    @property
    def tensor(self) -> Value:
        return self.operands[self._tensor_at]

    @property
    def indices(self) -> list[Value]:
        return self.operands[self._tensor_at + 1:]

    def addressing(self) -> Addressing:
        """One element, as `memory_accesses` says; a result holds the (loaded) value before."""
        return Addressing(tuple(Footprint.element(v, kind, self.indices) for v, kind in self.memory_accesses()),
                          loaded=tuple(self.results))

    integer_facts = no_integer_facts

    @property
    def ordering(self) -> str:
        return format_ordering(self.scope, self.semantics)

    def _indexed(self, p: "Printer") -> str:
        return f"{p.v(self.tensor)}[{', '.join(p.v(v) for v in self.indices)}]"

    def _check_tensor(self, ctx: "VerifyContext") -> MemrefType | None:
        """A memref (not a group) with one index per mode."""
        t = expect_memref(ctx, self, self._tensor_at, "the tensor")
        if t is None:
            return None
        expect_index_count(ctx, self, len(self.indices), t.order, self.tensor)
        expect_indices(ctx, self, self._tensor_at + 1, len(self.indices))
        return t


class AtomicLoad(AtomicInstruction):
    """Reads a memref element atomically."""

    opname = "atomic_load"
    keywords = ("atomic_load",)
    versions = {"atomic_load": Std.NEWEST}
    syntax = 'memory_scope? memory_semantics? LOCAL_ID "[" indices? "]" ":" scalar_type'

    def __init__(self, tensor: Value, indices: Sequence[Value], type: Type,
                 scope: MemoryScope = MemoryScope.WORK_GROUP,
                 semantics: MemorySemantics = MemorySemantics.RELAXED,
                 span: Span | None = None, name: str | None = None):
        super().__init__([tensor, *indices], [type], scope, semantics, 0, span, name)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "AtomicLoad":
        tensor, *indices = s.operands
        return cls(tensor, indices, s.type, MemoryScope.of(s), MemorySemantics.of(s))

    def memory_accesses(self) -> Accesses:
        return [(self.tensor, EffectKind.READ)]

    def format(self, p: "Printer") -> str:
        if not p.newest:
            p.cannot(self, "'atomic_load'")
        return f"atomic_load{self.ordering} {self._indexed(p)} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A memref with one index per mode; the result has its element type."""
        t = self._check_tensor(ctx)
        if t is not None:
            expect_result(ctx, self, t.element, f" (the element type of {t})", [self.tensor])


class AtomicStore(AtomicInstruction):
    """Writes a memref element atomically."""

    opname = "atomic_store"
    keywords = ("atomic_store",)
    versions = {"atomic_store": Std.NEWEST}
    syntax = 'memory_scope? memory_semantics? LOCAL_ID "," LOCAL_ID "[" indices? "]"'

    def __init__(self, value: Value, tensor: Value, indices: Sequence[Value],
                 scope: MemoryScope = MemoryScope.WORK_GROUP,
                 semantics: MemorySemantics = MemorySemantics.RELAXED, span: Span | None = None):
        super().__init__([value, tensor, *indices], [], scope, semantics, 1, span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "AtomicStore":
        value, tensor, *indices = s.operands
        return cls(value, tensor, indices, MemoryScope.of(s), MemorySemantics.of(s))

    @property
    def value(self) -> Value:
        return self.operands[0]

    def memory_accesses(self) -> Accesses:
        return [(self.tensor, EffectKind.WRITE)]

    def format(self, p: "Printer") -> str:
        """The seed spells a relaxed atomic store `store.atomic` (at device scope)."""
        if not p.newest:
            if self.semantics is not MemorySemantics.RELAXED:
                p.cannot(self, f"'atomic_store{self.semantics.value}'")
            return f"store.atomic {p.v(self.value)}, {self._indexed(p)}"
        return f"atomic_store{self.ordering} {p.v(self.value)}, {self._indexed(p)}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A value of the element type of a memref with one index per mode."""
        t = self._check_tensor(ctx)
        if t is not None:
            expect_type(ctx, self, 0, "the value", t.element, f" (the element type of {t})")


class AtomicUpdate(AtomicInstruction):
    """atomic_add / atomic_max / atomic_min: update a memref element, return its old value."""

    opname = "atomic"
    keywords = {f"atomic_{op.value}": op for op in AtomicOp}
    versions = {keyword: Std.NEWEST for keyword in keywords}
    syntax = 'memory_scope? memory_semantics? LOCAL_ID "," LOCAL_ID "[" indices? "]" ":" scalar_type'

    def __init__(self, op: AtomicOp, value: Value, tensor: Value, indices: Sequence[Value],
                 type: Type, scope: MemoryScope = MemoryScope.WORK_GROUP,
                 semantics: MemorySemantics = MemorySemantics.RELAXED,
                 span: Span | None = None, name: str | None = None):
        super().__init__([value, tensor, *indices], [type], scope, semantics, 1, span, name)
        self.op = op

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "AtomicUpdate":
        value, tensor, *indices = s.operands
        return cls(s.selected(cls.keywords), value, tensor, indices, s.type, MemoryScope.of(s),
                   MemorySemantics.of(s))

    @property
    def title(self) -> str:
        return f"atomic_{self.op.value}"

    @property
    def value(self) -> Value:
        return self.operands[0]

    def memory_accesses(self) -> Accesses:
        """A read-modify-write whose result depends on the order: a write for barriers."""
        return [(self.tensor, EffectKind.WRITE)]

    def format(self, p: "Printer") -> str:
        """The seed spells a relaxed add whose result is unused `store.atomic_add`."""
        if not p.newest:
            if self.op is AtomicOp.ADD and self.semantics is MemorySemantics.RELAXED \
                    and not has_uses(self):
                p.without_results()
                return f"store.atomic_add {p.v(self.value)}, {self._indexed(p)}"
            p.cannot(self, f"'{self.title}{self.ordering}' with its result used (the seed's "
                           f"store.atomic_add returns nothing)" if self.op is AtomicOp.ADD else
                     f"'{self.title}'")
        return f"{self.title}{self.ordering} {p.v(self.value)}, {self._indexed(p)} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Value and result of the element type; max and min have no complex order."""
        t = self._check_tensor(ctx)
        if t is None:
            return
        why = f" (the element type of {t})"
        expect_type(ctx, self, 0, "the value", t.element, why)
        expect_result(ctx, self, t.element, why, [self.tensor])
        if t.element.is_complex and self.op is not AtomicOp.ADD:
            operand_error(ctx, self, 1, f"complex elements ({t.element}) have no order; only "
                                        f"atomic_add takes complex types")
