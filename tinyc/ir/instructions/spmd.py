"""SPMD instructions: each work-item executes them with its own values."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from tinyc.diagnostics import Span
from tinyc.ir.core import Instruction, Kind, Value
from tinyc.ir.instructions.mixed import BuiltinName, StoreFlag
from tinyc.ir.types import Type

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer


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


class SubgroupOp(Enum):
    ADD = "add"
    MAX = "max"
    MIN = "min"


class SubgroupMode(Enum):
    EXCLUSIVE_SCAN = "exclusive_scan"
    INCLUSIVE_SCAN = "inclusive_scan"
    REDUCE = "reduce"


class SpmdBuiltin(Instruction):
    """subgroup_id and subgroup_local_id: per-work-item values."""

    opname = "builtin"
    kind = Kind.SPMD

    def __init__(self, builtin: BuiltinName, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.builtin = builtin

    def format(self, p: "Printer") -> str:
        return f"builtin.{self.builtin.value} : {self.result.type}"


class CoopMatrixLoad(Instruction):
    """Loads a coopmatrix block of a 2-D memref at (x, y)."""

    opname = "cooperative_matrix_load"
    kind = Kind.SPMD

    def __init__(self, transpose: bool, checked: CheckedFlag, tensor: Value, x: Value, y: Value,
                 type: Type, span: Span | None = None, name: str | None = None):
        super().__init__([tensor, x, y], [type], span=span, result_names=[name])
        self.transpose = transpose
        self.checked = checked

    def format(self, p: "Printer") -> str:
        M, x, y = (p.v(v) for v in self.operands)
        t = ".t" if self.transpose else ".n"
        return f"cooperative_matrix_load{t}{self.checked.value} {M}[{x}, {y}] : {self.result.type}"


class CoopMatrixMulAdd(Instruction):
    """D := A B + C on coopmatrices."""

    opname = "cooperative_matrix_mul_add"
    kind = Kind.SPMD

    def __init__(self, a: Value, b: Value, c: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a, b, c], [type], span=span, result_names=[name])

    def format(self, p: "Printer") -> str:
        a, b, c = (p.v(v) for v in self.operands)
        return f"cooperative_matrix_mul_add {a}, {b}, {c} : {self.result.type}"


class CoopMatrixScale(Instruction):
    """A scalar times a coopmatrix."""

    opname = "cooperative_matrix_scale"
    kind = Kind.SPMD

    def __init__(self, scalar: Value, matrix: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([scalar, matrix], [type], span=span, result_names=[name])

    def format(self, p: "Printer") -> str:
        s, m = (p.v(v) for v in self.operands)
        return f"cooperative_matrix_scale {s}, {m} : {self.result.type}"


class CoopMatrixStore(Instruction):
    """Stores a coopmatrix into a 2-D memref at (x, y); checked and atomic variants."""

    opname = "cooperative_matrix_store"
    kind = Kind.SPMD

    def __init__(self, checked: CheckedFlag, flag: StoreFlag, value: Value, tensor: Value,
                 x: Value, y: Value, span: Span | None = None):
        super().__init__([value, tensor, x, y], span=span)
        self.checked = checked
        self.flag = flag

    def format(self, p: "Printer") -> str:
        a, M, x, y = (p.v(v) for v in self.operands)
        return f"cooperative_matrix_store{self.checked.value}{self.flag.value} {a}, {M}[{x}, {y}]"


class SubgroupBroadcast(Instruction):
    """The value of one subgroup lane, given to every lane."""

    opname = "subgroup_broadcast"
    kind = Kind.SPMD

    def __init__(self, a: Value, lane: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a, lane], [type], span=span, result_names=[name])

    def format(self, p: "Printer") -> str:
        a, lane = (p.v(v) for v in self.operands)
        return f"subgroup_broadcast {a}, {lane} : {self.result.type}"


class SubgroupOperation(Instruction):
    """subgroup_add/max/min with reduce, inclusive_scan or exclusive_scan."""

    opname = "subgroup"
    kind = Kind.SPMD

    def __init__(self, op: SubgroupOp, mode: SubgroupMode, a: Value, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op
        self.mode = mode

    def format(self, p: "Printer") -> str:
        return f"subgroup_{self.op.value}.{self.mode.value} {p.v(self.operands[0])} : {self.result.type}"
