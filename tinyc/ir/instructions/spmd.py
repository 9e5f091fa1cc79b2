"""SPMD instructions: each work-item executes them with its own values."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from tinyc.diagnostics import Span
from tinyc.ir.checks import (
    cast_problem, check_size_match, expect_coop, expect_memref, expect_order, expect_result,
    expect_scalar, expect_type, inst_error, operand_error, result_error,
)
from tinyc.ir.addressing import Addressing, Footprint, ModeSpan
from tinyc.ir.core import (
    Accesses, EffectKind, Instruction, Kind, Value, no_addressing, no_integer_facts, no_memory_access,
)
from tinyc.ir.instructions.arith import ArithBinaryOp, element_flops
from tinyc.ir.instructions.memory import StoreFlag
from tinyc.ir.types import CoopMatrixType, MatrixUse, Type, i32, index, promotable, promote
from tinyc.std import Std

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


class CheckedFlag(Enum):
    NONE = ""
    ROWS = ".rows_checked"
    COLS = ".cols_checked"
    BOTH = ".both_checked"

    @property
    def rows(self) -> bool:
        return self in (CheckedFlag.ROWS, CheckedFlag.BOTH)

    @property
    def cols(self) -> bool:
        return self in (CheckedFlag.COLS, CheckedFlag.BOTH)

    @classmethod
    def of(cls, s: "Parsed") -> "CheckedFlag":
        """The flag among an instruction's modifiers."""
        return next((flag for flag in cls if flag.value and flag.value in s.modifiers), cls.NONE)


def matrix_block(tensor: Value, x: Value, y: Value, t: Type, transpose: bool, checked: CheckedFlag,
                 kind: EffectKind) -> Footprint:
    """The block a cooperative-matrix access touches: rows x cols at (x, y), or with
    `.t` cols x rows (A_ij at M[x + j, y + i]); a checked mode skips entries outside it."""
    if not isinstance(t, CoopMatrixType):
        return Footprint(tensor, kind, None)
    rows, cols = ModeSpan(x, t.rows, checked.rows), ModeSpan(y, t.cols, checked.cols)
    if transpose:
        rows, cols = ModeSpan(x, t.cols, checked.cols), ModeSpan(y, t.rows, checked.rows)
    return Footprint(tensor, kind, (rows, cols))


class SubgroupOp(Enum):
    ADD = "add"
    MAX = "max"
    MIN = "min"


class SubgroupMode(Enum):
    EXCLUSIVE_SCAN = "exclusive_scan"
    INCLUSIVE_SCAN = "inclusive_scan"
    REDUCE = "reduce"


class CoopMatrixLoad(Instruction):
    """Loads a coopmatrix block of a 2-D memref at (x, y) (the transpose may be left out: `.n`)."""

    opname = "cooperative_matrix_load"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_load",)
    syntax = 'transpose? checked_flag? LOCAL_ID "[" LOCAL_ID "," LOCAL_ID "]" ":" coopmatrix_type'

    def __init__(self, transpose: bool, checked: CheckedFlag, tensor: Value, x: Value, y: Value,
                 type: Type, span: Span | None = None, name: str | None = None):
        super().__init__([tensor, x, y], [type], span=span, result_names=[name])
        self.transpose = transpose
        self.checked = checked

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixLoad":
        if not {".n", ".t"} & set(s.modifiers):
            s.mark(Std.NEWEST, f"'{s.keyword}' without its transpose")
        return cls(".t" in s.modifiers, CheckedFlag.of(s), *s.operands, s.type)

    def memory_accesses(self) -> Accesses:
        return [(self.operands[0], EffectKind.READ)]

    def addressing(self) -> Addressing:
        """A block read into the (loaded) matrix."""
        M, x, y = self.operands
        return Addressing((matrix_block(M, x, y, self.result.type, self.transpose, self.checked,
                                        EffectKind.READ),), loaded=(self.result,))

    integer_facts = no_integer_facts

    def format(self, p: "Printer") -> str:
        M, x, y = (p.v(v) for v in self.operands)
        t = ".t" if self.transpose else ".n"
        return f"cooperative_matrix_load{t}{self.checked.value} {M}[{x}, {y}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A matrix memref, index positions, a coopmatrix of the memref's element type."""
        M = expect_memref(ctx, self, 0, "M")
        if M is not None and not expect_order(ctx, self, 0, "M", M, (2,)):
            M = None
        expect_type(ctx, self, 1, "row position", index)
        expect_type(ctx, self, 2, "column position", index)
        t = self.result.type
        if not isinstance(t, CoopMatrixType):
            result_error(ctx, self, f"result type must be a coopmatrix, got {t}")
        elif M is not None and t.component is not M.element:
            result_error(ctx, self, f"the component type of {t} must equal the element type of M "
                                    f"({M.element})", self.operands[:1])


class CoopMatrixConstruct(Instruction):
    """A coopmatrix with every entry equal to a dynamically uniform number (newest language)."""

    opname = "cooperative_matrix_construct"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_construct",)
    versions = {"cooperative_matrix_construct": Std.NEWEST}
    syntax = 'LOCAL_ID ":" coopmatrix_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, number: Value, type: Type, span: Span | None = None, name: str | None = None):
        super().__init__([number], [type], span=span, result_names=[name])

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixConstruct":
        return cls(*s.operands, s.type)

    def format(self, p: "Printer") -> str:
        return f"cooperative_matrix_construct {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A coopmatrix result; a number of its component type (uniformity is not checked)."""
        t = self.result.type
        if not isinstance(t, CoopMatrixType):
            result_error(ctx, self, f"result type must be a coopmatrix, got {t}")
            return
        number = expect_scalar(ctx, self, 0, "number")
        if number is not None and number is not t.component:
            operand_error(ctx, self, 0, f"number must have type {t.component} (the component "
                                        f"type of {t}), got {number}")


class CoopMatrixMulAdd(Instruction):
    """D := A B + C on coopmatrices."""

    opname = "cooperative_matrix_mul_add"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_mul_add",)
    syntax = 'LOCAL_ID "," LOCAL_ID "," LOCAL_ID ":" coopmatrix_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, a: Value, b: Value, c: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a, b, c], [type], span=span, result_names=[name])

    def run_flops(self) -> float:
        """2·M·N·K per subgroup (a complex multiply-add: 8·M·N·K)."""
        a, b = self.operands[0].type, self.operands[1].type
        if not isinstance(a, CoopMatrixType) or not isinstance(b, CoopMatrixType):
            return 0.0
        complex_ = a.component.is_complex or b.component.is_complex
        per_product = element_flops(ArithBinaryOp.MUL, complex_) + element_flops(ArithBinaryOp.ADD, complex_)
        return float(per_product * a.rows * a.cols * b.cols)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixMulAdd":
        return cls(*s.operands, s.type)

    def format(self, p: "Printer") -> str:
        a, b, c = (p.v(v) for v in self.operands)
        return f"cooperative_matrix_mul_add {a}, {b}, {c} : {self.result.type}"

    def subgroup_multiples(self, std: Std) -> list[tuple[int, str]]:
        """The newest language: the rows of A, C and D are multiples of the subgroup size."""
        if std is not Std.NEWEST:
            return []
        found = [(v.type.rows, f"the rows of {role}")
                 for v, role in zip((*self.operands[::2], self.result), ("A", "C", "D"))
                 if isinstance(v.type, CoopMatrixType)]
        return [pair for k, pair in enumerate(found) if pair[0] not in [f[0] for f in found[:k]]]

    def verify(self, ctx: "VerifyContext") -> None:
        """D := A B + C: uses a/b/acc, chained shapes, promotable components, castable result."""
        mats: list[CoopMatrixType | None] = []
        for i, (role, use) in enumerate((("A", MatrixUse.A), ("B", MatrixUse.B), ("C", MatrixUse.ACC))):
            t = expect_coop(ctx, self, i, role)
            if t is not None and t.use is not use:
                operand_error(ctx, self, i, f"{role} must have use {use.value}, got {t}")
                t = None  # its shape would only add follow-on errors
            mats.append(t)
        A, B, C = mats
        vals = self.operands
        if A and B:
            check_size_match(ctx, self, "columns of A", A.cols, "rows of B", B.rows, vals[:2])
        if A and C:
            check_size_match(ctx, self, "rows of C", C.rows, "rows of A", A.rows, [vals[0], vals[2]])
        if B and C:
            check_size_match(ctx, self, "columns of C", C.cols, "columns of B", B.cols, vals[1:])
        common = promote(A.component, B.component) if A and B else None
        if A and B and common is None:
            inst_error(ctx, self, f"component types of A ({A.component}) and B ({B.component}) "
                                  f"cannot be promoted to a common type", vals[:2])
        elif common is not None and C and not promotable(common, C.component):
            inst_error(ctx, self, f"{common}, the promoted component type of A and B, does not "
                                  f"promote to the component type of C ({C.component})", vals)
        D = self.result.type
        if not isinstance(D, CoopMatrixType):
            result_error(ctx, self, f"result type must be a coopmatrix, got {D}")
            return
        if D.use is not MatrixUse.ACC:
            result_error(ctx, self, f"the result must have use matrix_acc, got {D}")
        if C is not None:
            if D.shape != C.shape:
                result_error(ctx, self, f"the result shape {D.rows}x{D.cols} must equal the shape "
                                        f"of C ({C.rows}x{C.cols})", vals[2:])
            problem = cast_problem(C.component, D.component)
            if problem:
                result_error(ctx, self, f"the component type of C must be castable to the result's: "
                                        f"{problem}", vals[2:])



class CoopMatrixScale(Instruction):
    """A scalar times a coopmatrix."""

    opname = "cooperative_matrix_scale"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_scale",)
    syntax = 'LOCAL_ID "," LOCAL_ID ":" coopmatrix_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, scalar: Value, matrix: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([scalar, matrix], [type], span=span, result_names=[name])

    def run_flops(self) -> float:
        """One multiply per element (6 flops for a complex one), per subgroup."""
        t = self.result.type
        if not isinstance(t, CoopMatrixType):
            return 0.0
        return float(t.rows * t.cols * element_flops(ArithBinaryOp.MUL, t.component.is_complex))

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixScale":
        return cls(*s.operands, s.type)

    def format(self, p: "Printer") -> str:
        s, m = (p.v(v) for v in self.operands)
        return f"cooperative_matrix_scale {s}, {m} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A scalar of the matrix's component type; the result has the matrix's type."""
        scalar = expect_scalar(ctx, self, 0, "scalar")
        matrix = expect_coop(ctx, self, 1, "matrix")
        if matrix is None:
            return
        if scalar is not None and scalar is not matrix.component:
            operand_error(ctx, self, 0, f"scalar must have type {matrix.component} (the component "
                                        f"type of {matrix}), got {scalar}")
        expect_result(ctx, self, matrix, " (the type of the matrix)", self.operands[1:])


class CoopMatrixStore(Instruction):
    """Stores a coopmatrix into a 2-D memref at (x, y); transposed, checked and atomic variants.

    `.t` (as in the newest reference language) stores element (i, j) at
    M[x + j, y + i], the inverse of a `.t` load; the checked flags name the
    matrix's rows and columns either way. The seed spells
    `[checked-flag] [store-flag]`, the newest language
    `[transpose] [checked-flag]`; both are accepted, in that order.
    """

    opname = "cooperative_matrix_store"
    kind = Kind.SPMD
    keywords = ("cooperative_matrix_store",)
    syntax = 'transpose? checked_flag? store_flag? LOCAL_ID "," LOCAL_ID "[" LOCAL_ID "," LOCAL_ID "]"'

    def __init__(self, checked: CheckedFlag, flag: StoreFlag, value: Value, tensor: Value,
                 x: Value, y: Value, span: Span | None = None, transpose: bool = False):
        super().__init__([value, tensor, x, y], span=span)
        self.checked = checked
        self.flag = flag
        self.transpose = transpose

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "CoopMatrixStore":
        if {".n", ".t"} & set(s.modifiers):
            s.mark(Std.NEWEST, f"a transpose on '{s.keyword}'")
        flag = StoreFlag.of(s)
        if flag is not StoreFlag.NONE:
            s.mark(Std.SEED, f"'{flag.value}' on '{s.keyword}'")
        return cls(CheckedFlag.of(s), flag, *s.operands, transpose=".t" in s.modifiers)

    def memory_accesses(self) -> Accesses:
        return [(self.operands[1], self.flag.effect)]

    def addressing(self) -> Addressing:
        """The matrix written as a block (or added to atomically)."""
        A, M, x, y = self.operands
        return Addressing((matrix_block(M, x, y, A.type, self.transpose, self.checked, self.flag.effect),))

    integer_facts = no_integer_facts

    def format(self, p: "Printer") -> str:
        """The newest language has no store flags: `.atomic` / `.atomic_add` become its
        coopmatrix atomics (at their default scope, as `store`'s flags migrate)."""
        a, M, x, y = (p.v(v) for v in self.operands)
        t = ".t" if self.transpose else ""
        if self.transpose and not p.newest:
            p.cannot(self, "a transpose on 'cooperative_matrix_store'")
        if p.newest and self.flag is StoreFlag.ATOMIC:
            return f"cooperative_matrix_atomic_store{t}{self.checked.value} {a}, {M}[{x}, {y}]"
        if p.newest and self.flag is StoreFlag.ATOMIC_ADD:
            return (f"{p.fresh('old')} = cooperative_matrix_atomic_add{t}{self.checked.value} {a}, "
                    f"{M}[{x}, {y}] : {self.operands[0].type}")
        return f"cooperative_matrix_store{t}{self.checked.value}{self.flag.value} {a}, {M}[{x}, {y}]"

    def verify(self, ctx: "VerifyContext") -> None:
        """A coopmatrix into a matrix memref of its component type, at index positions."""
        A = expect_coop(ctx, self, 0, "A")
        M = expect_memref(ctx, self, 1, "M")
        if M is not None and not expect_order(ctx, self, 1, "M", M, (2,)):
            M = None
        expect_type(ctx, self, 2, "row position", index)
        expect_type(ctx, self, 3, "column position", index)
        if A is not None and M is not None and A.component is not M.element:
            operand_error(ctx, self, 0, f"the component type of A ({A.component}) must equal the "
                                        f"element type of M ({M.element})", self.operands[1:2])


class SubgroupBroadcast(Instruction):
    """The value of one subgroup lane, given to every lane."""

    opname = "subgroup_broadcast"
    kind = Kind.SPMD
    keywords = ("subgroup_broadcast",)
    syntax = 'LOCAL_ID "," LOCAL_ID ":" scalar_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, a: Value, lane: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a, lane], [type], span=span, result_names=[name])

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "SubgroupBroadcast":
        return cls(*s.operands, s.type)

    def format(self, p: "Printer") -> str:
        a, lane = (p.v(v) for v in self.operands)
        return f"subgroup_broadcast {a}, {lane} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A scalar, an i32 lane, a result of the scalar's type."""
        a = expect_scalar(ctx, self, 0, "value")
        expect_type(ctx, self, 1, "lane", i32)
        if a is not None:
            expect_result(ctx, self, a, " (the type of the value)")


class SubgroupOperation(Instruction):
    """subgroup_add/max/min with reduce, inclusive_scan or exclusive_scan."""

    opname = "subgroup"
    kind = Kind.SPMD
    keywords = {**{f"subgroup_{op.value}.{mode.value}": (op, mode)
                   for op in SubgroupOp for mode in SubgroupMode},
                **{f"subgroup_{mode.value}_{op.value}": (op, mode)
                   for op in SubgroupOp for mode in SubgroupMode}}
    versions = {**{f"subgroup_{op.value}.{mode.value}": Std.SEED
                   for op in SubgroupOp for mode in SubgroupMode},
                **{f"subgroup_{mode.value}_{op.value}": Std.NEWEST
                   for op in SubgroupOp for mode in SubgroupMode}}
    syntax = 'LOCAL_ID ":" scalar_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, op: SubgroupOp, mode: SubgroupMode, a: Value, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op
        self.mode = mode

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "SubgroupOperation":
        return cls(*s.selected(cls.keywords), *s.operands, s.type)

    @property
    def title(self) -> str:
        return self.spelling or f"subgroup_{self.op.value}.{self.mode.value}"

    def format(self, p: "Printer") -> str:
        op, mode = self.op.value, self.mode.value
        word = p.spell(self, f"subgroup_{op}.{mode}", f"subgroup_{mode}_{op}")
        return f"{word} {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A scalar of the result type; max and min have no complex identity."""
        a = expect_scalar(ctx, self, 0, "operand")
        if a is None:
            return
        if a.is_complex and self.op is not SubgroupOp.ADD:
            operand_error(ctx, self, 0, f"operand must not be complex for subgroup_{self.op.value}, "
                                        f"got {a}")
        expect_result(ctx, self, a, " (the operand type)")
