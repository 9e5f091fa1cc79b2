"""Coopmatrix instructions of the newest language (SPMD).

Per component: `cooperative_matrix_apply` (a region over row, column and
value), `_extract` / `_insert` (one component of a work-item's vector, see
tinyc/ir/coopmatrix_layout.py); whole rows or columns:
`cooperative_matrix_reduce_{add,max,min}.row|.column`; memory:
`cooperative_matrix_prefetch` (a cache hint) and the component-wise atomic
load, store and add/max/min, which take the transpose and checked flags of
`cooperative_matrix_load` / `_store` and the memory scope and semantics of
the scalar atomics.

Rules that depend on the subgroup size S (the layout) are checked by the
verifier when the function's `subgroup_size` attribute gives S, and by the
work-group-size pass once the compiler has chosen it (`subgroup_size_problem`).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from tinyc.diagnostics import Span
from tinyc.ir.attr_checks import SUBGROUP_SIZES
from tinyc.ir.checks import (
    check_yield, expect_coop, expect_memref, expect_order, expect_scalar, expect_type, inst_error,
    operand_error, result_error,
)
from tinyc.ir.coopmatrix_layout import known_subgroup_size, vector_length
from tinyc.ir.addressing import Addressing
from tinyc.ir.core import (
    Accesses, EffectKind, Instruction, Kind, Region, Value, no_addressing, no_integer_facts, no_memory_access,
)
from tinyc.ir.instructions.atomics import (
    AtomicOp, MemoryScope, MemorySemantics, format_ordering, has_uses,
)
from tinyc.ir.instructions.spmd import CheckedFlag, CoopMatrixLoad, CoopMatrixStore, matrix_block
from tinyc.ir.instructions.memory import StoreFlag
from tinyc.ir.types import CoopMatrixType, Type, i32, index
from tinyc.std import Std

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


class CoopMatrixApply(Instruction):
    """Maps every component of a coopmatrix through a region over (row, column, value)."""

    opname = "cooperative_matrix_apply"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_apply",)
    versions = {"cooperative_matrix_apply": Std.NEWEST}
    syntax = ('"(" new_value "," new_value "," new_value ")" "=" LOCAL_ID "->" coopmatrix_type '
              'region')
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts
    region_yields = True

    def __init__(self, matrix: Value, type: Type, body: Region | None = None,
                 span: Span | None = None, name: str | None = None):
        region = body if body is not None else Region()
        component = type.component if isinstance(type, CoopMatrixType) else type
        if not region.args:
            region.args = [Value(i32), Value(i32), Value(component)]
        for v in region.args:
            v.owner = region
        super().__init__([matrix], [type], [region], span=span, result_names=[name])

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixApply":
        t = s.type
        component = t.component if isinstance(t, CoopMatrixType) else t
        args = [Value(i32), Value(i32), Value(component)]
        return cls(s.operands[0], t, s.region(0, args))

    @property
    def body(self) -> Region:
        return self.regions[0]

    def format(self, p: "Printer") -> str:
        _newest_only(self, p)
        row, col, val = (p.v(a) for a in self.body.args)
        return (f"cooperative_matrix_apply ({row}, {col}, {val}) = {p.v(self.operands[0])} -> "
                f"{self.result.type} " + p.region(self.body))

    def verify(self, ctx: "VerifyContext") -> None:
        """A coopmatrix of the result type; the region yields one value of its component type."""
        t = self.result.type
        if not isinstance(t, CoopMatrixType):
            result_error(ctx, self, f"result type must be a coopmatrix, got {t}")
            return
        a = expect_coop(ctx, self, 0, "the matrix")
        if a is not None and a is not t:
            operand_error(ctx, self, 0, f"the matrix must have the result type {t}, got {a}")
        last = self.body.instructions[-1] if self.body.instructions else None
        from tinyc.ir.instructions.control import Yield

        if isinstance(last, Yield):
            check_yield(ctx, last, [t.component], "cooperative_matrix_apply takes",
                        "the new component")
        else:
            inst_error(ctx, self, f"the region must end with a yield of the new component "
                                  f"({t.component})")


class _ComponentIndex:
    """The layout rule of extract and insert: 0 <= index < the work-item vector's length."""

    index: int
    matrix_type: Type

    def subgroup_size_problem(self, subgroup_size: int) -> str | None:
        t = self.matrix_type
        if not isinstance(t, CoopMatrixType):
            return None
        n = vector_length(t, subgroup_size)
        if 0 <= self.index < n:
            return None
        return (f"index {self.index} is outside the work-item vector of {t}, which has {n} "
                f"component{'s' if n != 1 else ''} at subgroup size {subgroup_size}")

    def _check_index(self, ctx: "VerifyContext") -> None:
        """At the attribute's subgroup size, else at the largest vector any size gives (S = 4)."""
        sgs = known_subgroup_size(ctx)
        problem = self.subgroup_size_problem(sgs if sgs is not None else min(SUBGROUP_SIZES))
        if problem:
            inst_error(ctx, self, problem)  # type: ignore[arg-type]


class CoopMatrixExtract(_ComponentIndex, Instruction):
    """One component of the work-item's part of a coopmatrix (the layout decides which)."""

    opname = "cooperative_matrix_extract"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_extract",)
    versions = {"cooperative_matrix_extract": Std.NEWEST}
    syntax = 'LOCAL_ID "[" INTEGER "]" ":" scalar_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, matrix: Value, index: int, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([matrix], [type], span=span, result_names=[name])
        self.index = index

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixExtract":
        return cls(s.operands[0], s.nonnegative(1, "the component index"), s.type)

    @property
    def matrix_type(self) -> Type:
        return self.operands[0].type

    def format(self, p: "Printer") -> str:
        _newest_only(self, p)
        return f"cooperative_matrix_extract {p.v(self.operands[0])}[{self.index}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A coopmatrix; the result has its component type; the index is in the vector."""
        t = expect_coop(ctx, self, 0, "the matrix")
        if t is None:
            return
        got = self.result.type
        if got is not t.component:
            result_error(ctx, self, f"result type must be {t.component} (the component type of "
                                    f"{t}), got {got}", self.operands)
        self._check_index(ctx)


class CoopMatrixInsert(_ComponentIndex, Instruction):
    """A copy of a coopmatrix with one component of the work-item's part replaced."""

    opname = "cooperative_matrix_insert"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_insert",)
    versions = {"cooperative_matrix_insert": Std.NEWEST}
    syntax = 'LOCAL_ID "," LOCAL_ID "[" INTEGER "]" ":" coopmatrix_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, value: Value, matrix: Value, index: int, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([value, matrix], [type], span=span, result_names=[name])
        self.index = index

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixInsert":
        value, matrix = s.operands
        return cls(value, matrix, s.nonnegative(2, "the component index"), s.type)

    @property
    def matrix_type(self) -> Type:
        return self.operands[1].type

    def format(self, p: "Printer") -> str:
        _newest_only(self, p)
        value, matrix = (p.v(v) for v in self.operands)
        return f"cooperative_matrix_insert {value}, {matrix}[{self.index}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A coopmatrix of the result type; a value of its component type; the index in range."""
        t = expect_coop(ctx, self, 1, "the matrix")
        if t is None:
            return
        got = self.result.type
        if got is not t:
            result_error(ctx, self, f"result type must be {t} (the type of the matrix), got {got}",
                         self.operands[1:])
        value = expect_scalar(ctx, self, 0, "the value")
        if value is not None and value is not t.component:
            operand_error(ctx, self, 0, f"the value must have type {t.component} (the component "
                                        f"type of {t}), got {value}")
        self._check_index(ctx)


class CoopMatrixPrefetch(Instruction):
    """A hint to bring a rows×cols block of a matrix memref into a cache level."""

    opname = "cooperative_matrix_prefetch"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_prefetch",)
    versions = {"cooperative_matrix_prefetch": Std.NEWEST}
    syntax = 'INTEGER "," LOCAL_ID "[" LOCAL_ID "," LOCAL_ID "]" "," INTEGER "," INTEGER'
    memory_accesses = no_memory_access  # a hint: nothing observable is read
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, cache_level: int, tensor: Value, x: Value, y: Value, rows: int, cols: int,
                 span: Span | None = None):
        super().__init__([tensor, x, y], span=span)
        self.cache_level = cache_level
        self.rows = rows
        self.cols = cols

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixPrefetch":
        _, _, _, _, rows, cols = s.items
        return cls(s.nonnegative(0, "the cache level"), *s.operands, rows, cols)

    def format(self, p: "Printer") -> str:
        _newest_only(self, p)
        M, x, y = (p.v(v) for v in self.operands)
        return f"cooperative_matrix_prefetch {self.cache_level}, {M}[{x}, {y}], {self.rows}, {self.cols}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A matrix memref, index positions, a non-negative level and a positive block."""
        M = expect_memref(ctx, self, 0, "M")
        if M is not None:
            expect_order(ctx, self, 0, "M", M, (2,))
        expect_type(ctx, self, 1, "row position", index)
        expect_type(ctx, self, 2, "column position", index)
        if self.cache_level < 0:
            inst_error(ctx, self, f"the cache level must not be negative, got {self.cache_level}")
        if self.rows <= 0 or self.cols <= 0:
            inst_error(ctx, self, f"the block {self.rows}x{self.cols} must have positive rows and "
                                  f"columns")


class ReduceMode(Enum):
    ROW = ".row"        # each row to one value: M×N -> M×1
    COLUMN = ".column"  # each column to one value: M×N -> 1×N


class CoopMatrixReduce(Instruction):
    """Sum, maximum or minimum of every row (`.row`, M×1) or column (`.column`, 1×N)."""

    opname = "cooperative_matrix_reduce"
    kind = Kind.SPMD
    keywords = {f"cooperative_matrix_reduce_{op.value}": op for op in AtomicOp}
    versions = {keyword: Std.NEWEST for keyword in keywords}
    syntax = 'reduce_mode LOCAL_ID ":" coopmatrix_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, op: AtomicOp, mode: ReduceMode, matrix: Value, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([matrix], [type], span=span, result_names=[name])
        self.op = op
        self.mode = mode

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixReduce":
        mode = ReduceMode.ROW if ReduceMode.ROW.value in s.modifiers else ReduceMode.COLUMN
        return cls(s.selected(cls.keywords), mode, s.operands[0], s.type)

    @property
    def title(self) -> str:
        return f"cooperative_matrix_reduce_{self.op.value}"

    def format(self, p: "Printer") -> str:
        _newest_only(self, p)
        return f"{self.title}{self.mode.value} {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Same component type and use; shape M×1 (.row) or 1×N (.column); no complex max/min."""
        a = expect_coop(ctx, self, 0, "the matrix")
        t = self.result.type
        if not isinstance(t, CoopMatrixType):
            result_error(ctx, self, f"result type must be a coopmatrix, got {t}")
            return
        if a is None:
            return
        if t.component is not a.component or t.use is not a.use:
            result_error(ctx, self, f"result must have the component type and use of the matrix "
                                    f"({a.component}, {a.use.value}), got {t}", self.operands)
        want = (a.rows, 1) if self.mode is ReduceMode.ROW else (1, a.cols)
        if t.shape != want:
            result_error(ctx, self, f"a {self.mode.value[1:]} reduction of a {a.rows}x{a.cols} matrix "
                                    f"is {want[0]}x{want[1]}, got {t.rows}x{t.cols}", self.operands)
        if a.component.is_complex and self.op is not AtomicOp.ADD:
            operand_error(ctx, self, 0, f"complex components ({a.component}) have no order; only "
                                        f"cooperative_matrix_reduce_add takes complex types")

    def subgroup_multiples(self, std: Std) -> list[tuple[int, str]]:
        """The newest language: the rows of the matrix are a multiple of the subgroup size."""
        t = self.operands[0].type
        return [(t.rows, "the rows of the matrix")] if std is Std.NEWEST and isinstance(t, CoopMatrixType) else []


def _newest_only(inst: Instruction, p: "Printer") -> None:
    """The seed has no spelling for the newest language's coopmatrix instructions."""
    if not p.newest:
        p.cannot(inst, f"'{inst.title}'")


def _flags(inst: "CoopMatrixAtomicLoad | CoopMatrixAtomicStore | CoopMatrixAtomicUpdate") -> str:
    """`.t`, the checked flag, the scope and the semantics as written (defaults left out)."""
    return ((".t" if inst.transpose else "") + inst.checked.value
            + format_ordering(inst.scope, inst.semantics))


class CoopMatrixAtomicLoad(CoopMatrixLoad):
    """cooperative_matrix_load with each component read atomically."""

    opname = "cooperative_matrix_atomic_load"
    keywords = ("cooperative_matrix_atomic_load",)
    versions = {"cooperative_matrix_atomic_load": Std.NEWEST}
    syntax = ('transpose? checked_flag? memory_scope? memory_semantics? '
              'LOCAL_ID "[" LOCAL_ID "," LOCAL_ID "]" ":" coopmatrix_type')

    def __init__(self, transpose: bool, checked: CheckedFlag, tensor: Value, x: Value, y: Value,
                 type: Type, scope: MemoryScope = MemoryScope.WORK_GROUP,
                 semantics: MemorySemantics = MemorySemantics.RELAXED,
                 span: Span | None = None, name: str | None = None):
        super().__init__(transpose, checked, tensor, x, y, type, span, name)
        self.scope = scope
        self.semantics = semantics

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixAtomicLoad":
        return cls(".t" in s.modifiers, CheckedFlag.of(s), *s.operands, s.type, MemoryScope.of(s),
                   MemorySemantics.of(s))

    def format(self, p: "Printer") -> str:
        _newest_only(self, p)
        M, x, y = (p.v(v) for v in self.operands)
        return f"cooperative_matrix_atomic_load{_flags(self)} {M}[{x}, {y}] : {self.result.type}"


class CoopMatrixAtomicStore(CoopMatrixStore):
    """cooperative_matrix_store with each component written atomically."""

    opname = "cooperative_matrix_atomic_store"
    keywords = ("cooperative_matrix_atomic_store",)
    versions = {"cooperative_matrix_atomic_store": Std.NEWEST}
    syntax = ('transpose? checked_flag? memory_scope? memory_semantics? '
              'LOCAL_ID "," LOCAL_ID "[" LOCAL_ID "," LOCAL_ID "]"')

    def __init__(self, checked: CheckedFlag, value: Value, tensor: Value, x: Value, y: Value,
                 transpose: bool = False, scope: MemoryScope = MemoryScope.WORK_GROUP,
                 semantics: MemorySemantics = MemorySemantics.RELAXED, span: Span | None = None):
        super().__init__(checked, StoreFlag.ATOMIC, value, tensor, x, y, span, transpose=transpose)
        self.scope = scope
        self.semantics = semantics

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixAtomicStore":
        return cls(CheckedFlag.of(s), *s.operands, transpose=".t" in s.modifiers,
                   scope=MemoryScope.of(s), semantics=MemorySemantics.of(s))

    def format(self, p: "Printer") -> str:
        """The seed spells a relaxed, untransposed one `cooperative_matrix_store.atomic`."""
        a, M, x, y = (p.v(v) for v in self.operands)
        if not p.newest:
            if self.transpose or self.semantics is not MemorySemantics.RELAXED:
                p.cannot(self, f"'cooperative_matrix_atomic_store{_flags(self)}'")
            return f"cooperative_matrix_store{self.checked.value}.atomic {a}, {M}[{x}, {y}]"
        return f"cooperative_matrix_atomic_store{_flags(self)} {a}, {M}[{x}, {y}]"


class CoopMatrixAtomicUpdate(Instruction):
    """Atomic add/max/min of a coopmatrix into a matrix memref, component by component.

    The result holds the values the memory had before (0 where a checked
    flag skipped the component).
    """

    opname = "cooperative_matrix_atomic"
    kind = Kind.SPMD
    keywords = {f"cooperative_matrix_atomic_{op.value}": op for op in AtomicOp}
    versions = {keyword: Std.NEWEST for keyword in keywords}
    syntax = ('transpose? checked_flag? memory_scope? memory_semantics? '
              'LOCAL_ID "," LOCAL_ID "[" LOCAL_ID "," LOCAL_ID "]" ":" coopmatrix_type')

    def __init__(self, op: AtomicOp, value: Value, tensor: Value, x: Value, y: Value, type: Type,
                 transpose: bool = False, checked: CheckedFlag = CheckedFlag.NONE,
                 scope: MemoryScope = MemoryScope.WORK_GROUP,
                 semantics: MemorySemantics = MemorySemantics.RELAXED,
                 span: Span | None = None, name: str | None = None):
        super().__init__([value, tensor, x, y], [type], span=span, result_names=[name])
        self.op = op
        self.transpose = transpose
        self.checked = checked
        self.scope = scope
        self.semantics = semantics

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixAtomicUpdate":
        return cls(s.selected(cls.keywords), *s.operands, s.type, ".t" in s.modifiers,
                   CheckedFlag.of(s), MemoryScope.of(s), MemorySemantics.of(s))

    @property
    def title(self) -> str:
        return f"cooperative_matrix_atomic_{self.op.value}"

    def memory_accesses(self) -> Accesses:
        """A read-modify-write whose result depends on the order: a write for barriers."""
        return [(self.operands[1], EffectKind.WRITE)]

    def addressing(self) -> Addressing:
        """A block updated in place; the result holds the (loaded) values before."""
        A, M, x, y = self.operands
        return Addressing((matrix_block(M, x, y, A.type, self.transpose, self.checked, EffectKind.WRITE),),
                          loaded=(self.result,))

    integer_facts = no_integer_facts

    def format(self, p: "Printer") -> str:
        """The seed spells a relaxed, untransposed add whose result is unused
        `cooperative_matrix_store.atomic_add`."""
        a, M, x, y = (p.v(v) for v in self.operands)
        if not p.newest and self.op is AtomicOp.ADD and not self.transpose \
                and self.semantics is MemorySemantics.RELAXED and not has_uses(self):
            p.without_results()
            return f"cooperative_matrix_store{self.checked.value}.atomic_add {a}, {M}[{x}, {y}]"
        _newest_only(self, p)
        return f"{self.title}{_flags(self)} {a}, {M}[{x}, {y}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """As cooperative_matrix_store; the result has the matrix's type; no complex max/min."""
        A = expect_coop(ctx, self, 0, "A")
        M = expect_memref(ctx, self, 1, "M")
        if M is not None and not expect_order(ctx, self, 1, "M", M, (2,)):
            M = None
        expect_type(ctx, self, 2, "row position", index)
        expect_type(ctx, self, 3, "column position", index)
        if A is None:
            return
        if M is not None and A.component is not M.element:
            operand_error(ctx, self, 0, f"the component type of A ({A.component}) must equal the "
                                        f"element type of M ({M.element})", self.operands[1:2])
        if self.result.type is not A:
            result_error(ctx, self, f"result type must be {A} (the type of A), got "
                                    f"{self.result.type}", self.operands[:1])
        if A.component.is_complex and self.op is not AtomicOp.ADD:
            operand_error(ctx, self, 0, f"complex components ({A.component}) have no order; only "
                                        f"cooperative_matrix_atomic_add takes complex types")
