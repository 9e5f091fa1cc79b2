"""Mixed instructions: valid in collective and SPMD regions alike."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.core import Instruction, Kind, Region, Value
from tinyc.ir.types import DYNAMIC, Type, bool_, index

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer


WHOLE_MODE: int = -2
"""Subview size marker for a bare `:` slice: offset 0, the full mode."""


class ArithBinaryOp(Enum):
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    REM = "rem"
    MIN = "min"
    MAX = "max"
    SHL = "shl"
    SHR = "shr"
    AND = "and"
    OR = "or"
    XOR = "xor"


class ArithUnaryOp(Enum):
    ABS = "abs"
    NEG = "neg"
    NOT = "not"
    CONJ = "conj"
    IM = "im"
    RE = "re"


class CmpCond(Enum):
    EQ = "eq"
    NE = "ne"
    GT = "gt"
    GE = "ge"
    LT = "lt"
    LE = "le"


class MathUnaryOp(Enum):
    EXP = "exp"
    NATIVE_EXP = "native_exp"


class BuiltinName(Enum):
    GROUP_ID = "group_id"
    GROUP_SIZE = "group_size"
    NUM_SUBGROUPS = "num_subgroups"
    SUBGROUP_SIZE = "subgroup_size"
    SUBGROUP_ID = "subgroup_id"
    SUBGROUP_LOCAL_ID = "subgroup_local_id"


SPMD_BUILTINS = frozenset({BuiltinName.SUBGROUP_ID, BuiltinName.SUBGROUP_LOCAL_ID})


class StoreFlag(Enum):
    NONE = ""
    ATOMIC = ".atomic"
    ATOMIC_ADD = ".atomic_add"


class ArithBinary(Instruction):
    """Binary arithmetic on scalars, bools or coopmatrices (component-wise)."""

    opname = "arith"

    def __init__(self, op: ArithBinaryOp, a: Value, b: Value, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([a, b], [type], span=span, result_names=[name])
        self.op = op

    def format(self, p: "Printer") -> str:
        a, b = self.operands
        return f"arith.{self.op.value} {p.v(a)}, {p.v(b)} : {self.result.type}"


class ArithUnary(Instruction):
    """Unary arithmetic; abs/im/re of a complex give its real component type."""

    opname = "arith"

    def __init__(self, op: ArithUnaryOp, a: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op

    def format(self, p: "Printer") -> str:
        return f"arith.{self.op.value} {p.v(self.operands[0])} : {self.result.type}"


class Barrier(Instruction):
    """Work-group control barrier with optional global/local memory fences."""

    opname = "barrier"

    def __init__(self, global_fence: bool = False, local_fence: bool = False,
                 span: Span | None = None):
        super().__init__(span=span)
        self.global_fence = global_fence
        self.local_fence = local_fence

    def format(self, p: "Printer") -> str:
        return "barrier" + (".global" if self.global_fence else "") + (".local" if self.local_fence else "")


class Builtin(Instruction):
    """group_id, group_size, num_subgroups, subgroup_size (mixed)."""

    opname = "builtin"

    def __init__(self, builtin: BuiltinName, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.builtin = builtin

    def format(self, p: "Printer") -> str:
        return f"builtin.{self.builtin.value} : {self.result.type}"


class Cast(Instruction):
    """Conversion of a scalar or coopmatrix to another (component) type."""

    opname = "cast"

    def __init__(self, a: Value, type: Type, span: Span | None = None, name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])

    def format(self, p: "Printer") -> str:
        return f"cast {p.v(self.operands[0])} : {self.result.type}"


class Cmp(Instruction):
    """Scalar comparison giving a bool."""

    opname = "cmp"

    def __init__(self, cond: CmpCond, a: Value, b: Value, span: Span | None = None,
                 name: str | None = None, type: Type = bool_):
        super().__init__([a, b], [type], span=span, result_names=[name])
        self.cond = cond

    def format(self, p: "Printer") -> str:
        a, b = self.operands
        return f"cmp.{self.cond.value} {p.v(a)}, {p.v(b)} : {self.result.type}"


class Constant(Instruction):
    """A constant scalar, bool, or coopmatrix with all entries equal.

    `value` is a Python bool, int, float or complex as written in the source.
    """

    opname = "constant"

    def __init__(self, value: bool | int | float | complex, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.value = value

    def format(self, p: "Printer") -> str:
        return f"constant {format_constant(self.value)} : {self.result.type}"


def format_float(x: float) -> str:
    """A float in the grammar's syntax that reads back to the same double."""
    text = repr(float(x))
    if text in ("inf", "-inf", "nan"):
        raise ValueError(f"{text} has no spelling in the tensor language")
    return text


def format_constant(value: bool | int | float | complex) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, complex):
        return f"[{format_float(value.real)}, {format_float(value.imag)}]"
    return format_float(value)


class Expand(Instruction):
    """A view with one mode split into several.

    `static_shape` holds the expand shape with DYNAMIC where a value is given;
    those values are operands 1.. in order.
    """

    opname = "expand"

    def __init__(self, tensor: Value, mode: int, static_shape: Sequence[int],
                 dynamic_shape: Sequence[Value], type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([tensor, *dynamic_shape], [type], span=span, result_names=[name])
        self.mode = mode
        self.static_shape = list(static_shape)

    @property
    def tensor(self) -> Value:
        return self.operands[0]

    def format(self, p: "Printer") -> str:
        dynamic = iter(self.operands[1:])
        shape = "x".join(p.v(next(dynamic)) if s == DYNAMIC else str(s) for s in self.static_shape)
        return f"expand {p.v(self.tensor)}[{self.mode} -> {shape}] : {self.result.type}"


class For(Instruction):
    """A sequential loop; operands are from, to, [step], then the initial carried values.

    The body's arguments are the loop variable and the carried values; the
    results are the carried values after the last iteration.
    """

    opname = "for"

    def __init__(self, loop_var: Value, lower: Value, upper: Value, step: Value | None,
                 carried: Sequence[Value], init: Sequence[Value], body: Region | None = None,
                 loop_type: Type = index, attrs: dict | None = None, span: Span | None = None,
                 result_names: Sequence[str | None] | None = None):
        region = body if body is not None else Region()
        region.args = [loop_var, *carried]
        for v in region.args:
            v.owner = region
        bounds = [lower, upper] + ([step] if step is not None else [])
        super().__init__([*bounds, *init], [v.type for v in carried], [region], span,
                         result_names=result_names)
        self.has_step = step is not None
        self.loop_type = loop_type
        self.attrs = dict(attrs or {})

    @property
    def lower(self) -> Value:
        return self.operands[0]

    @property
    def upper(self) -> Value:
        return self.operands[1]

    @property
    def step(self) -> Value | None:
        return self.operands[2] if self.has_step else None

    @property
    def init(self) -> list[Value]:
        return self.operands[3 if self.has_step else 2:]

    @property
    def body(self) -> Region:
        return self.regions[0]

    @property
    def loop_var(self) -> Value:
        return self.body.args[0]

    @property
    def carried(self) -> list[Value]:
        return self.body.args[1:]

    def format(self, p: "Printer") -> str:
        ty = "" if self.loop_type is index else f":{self.loop_type}"
        bounds = ", ".join(p.v(v) for v in self.operands[: 3 if self.has_step else 2])
        text = f"for {p.v(self.loop_var)}{ty} = {bounds}"
        if self.carried:
            inits = ", ".join(f"{p.v(c)}={p.v(i)}" for c, i in zip(self.carried, self.init))
            types = ", ".join(str(r.type) for r in self.results)
            text += f" init({inits}) -> ({types})"
        text += " " + p.region(self.body)
        if self.attrs:
            text += " " + p.attrs(self.attrs)
        return text


class Fuse(Instruction):
    """A view with modes from..to (inclusive) merged into one."""

    opname = "fuse"

    def __init__(self, tensor: Value, first: int, last: int, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([tensor], [type], span=span, result_names=[name])
        self.first = first
        self.last = last

    def format(self, p: "Printer") -> str:
        return f"fuse {p.v(self.operands[0])}[{self.first}, {self.last}] : {self.result.type}"


class If(Instruction):
    """Two-way branch; with results, both regions end in a yield."""

    opname = "if"

    def __init__(self, cond: Value, result_types: Sequence[Type], then: Region | None = None,
                 otherwise: Region | None = None, span: Span | None = None,
                 result_names: Sequence[str | None] | None = None):
        super().__init__([cond], result_types,
                         [then if then is not None else Region(),
                          otherwise if otherwise is not None else Region()],
                         span, result_names=result_names)

    @property
    def cond(self) -> Value:
        return self.operands[0]

    @property
    def then(self) -> Region:
        return self.regions[0]

    @property
    def otherwise(self) -> Region:
        return self.regions[1]

    def format(self, p: "Printer") -> str:
        text = f"if {p.v(self.cond)}"
        if self.results:
            text += " -> (" + ", ".join(str(r.type) for r in self.results) + ")"
        text += " " + p.region(self.then)
        if self.otherwise.instructions:
            text += " else " + p.region(self.otherwise)
        return text


class Load(Instruction):
    """A scalar from a memref, or a memref from a group."""

    opname = "load"

    def __init__(self, tensor: Value, indices: Sequence[Value], type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__([tensor, *indices], [type], span=span, result_names=[name])

    @property
    def tensor(self) -> Value:
        return self.operands[0]

    @property
    def indices(self) -> list[Value]:
        return self.operands[1:]

    def format(self, p: "Printer") -> str:
        idx = ", ".join(p.v(v) for v in self.indices)
        return f"load {p.v(self.tensor)}[{idx}] : {self.result.type}"


class MathUnary(Instruction):
    """exp / native_exp of a floating or complex scalar."""

    opname = "math"

    def __init__(self, op: MathUnaryOp, a: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op

    def format(self, p: "Printer") -> str:
        return f"math.{self.op.value} {p.v(self.operands[0])} : {self.result.type}"


class Size(Instruction):
    """The size of a memref mode, or the number of members of a group."""

    opname = "size"

    def __init__(self, tensor: Value, mode: int, span: Span | None = None,
                 name: str | None = None, type: Type = index):
        super().__init__([tensor], [type], span=span, result_names=[name])
        self.mode = mode

    def format(self, p: "Printer") -> str:
        return f"size {p.v(self.operands[0])}[{self.mode}] : {self.result.type}"


class Subview(Instruction):
    """A view on a block of a memref, possibly dropping modes.

    Per mode: `static_offsets[i]` and `static_sizes[i]` hold constants, or
    DYNAMIC when the value is an operand (offsets first, then sizes, in mode
    order, after the tensor). Size 0 drops the mode (a single index); size
    WHOLE_MODE is the bare `:` slice.
    """

    opname = "subview"

    def __init__(self, tensor: Value, static_offsets: Sequence[int], static_sizes: Sequence[int],
                 offsets: Sequence[Value], sizes: Sequence[Value], type: Type,
                 span: Span | None = None, name: str | None = None,
                 single_index: Sequence[bool] | None = None):
        super().__init__([tensor, *offsets, *sizes], [type], span=span, result_names=[name])
        self.static_offsets = list(static_offsets)
        self.static_sizes = list(static_sizes)
        self.n_dynamic_offsets = len(offsets)
        # Whether a mode was written as a bare index (`%i`) rather than `%i:0`.
        self.single_index = list(single_index) if single_index is not None else [
            s == 0 for s in static_sizes]

    @property
    def tensor(self) -> Value:
        return self.operands[0]

    @property
    def offsets(self) -> list[Value]:
        return self.operands[1: 1 + self.n_dynamic_offsets]

    @property
    def sizes(self) -> list[Value]:
        return self.operands[1 + self.n_dynamic_offsets:]

    def mode_slices(self) -> list[tuple[int | Value, int | Value]]:
        """(offset, size) per mode, a Value where dynamic."""
        offs, sizes = iter(self.offsets), iter(self.sizes)
        return [(next(offs) if o == DYNAMIC else o, next(sizes) if s == DYNAMIC else s)
                for o, s in zip(self.static_offsets, self.static_sizes)]

    def format(self, p: "Printer") -> str:
        parts = []
        for i, (off, size) in enumerate(self.mode_slices()):
            if isinstance(size, int) and size == WHOLE_MODE:
                parts.append(":")
                continue
            o = p.v(off) if isinstance(off, Value) else str(off)
            if isinstance(size, int) and size == 0 and self.single_index[i]:
                parts.append(o)
            else:
                parts.append(f"{o}:{p.v(size) if isinstance(size, Value) else size}")
        return f"subview {p.v(self.tensor)}[{', '.join(parts)}] : {self.result.type}"


class Store(Instruction):
    """Writes a scalar to a memref element; .atomic / .atomic_add variants."""

    opname = "store"

    def __init__(self, value: Value, tensor: Value, indices: Sequence[Value],
                 flag: StoreFlag = StoreFlag.NONE, span: Span | None = None):
        super().__init__([value, tensor, *indices], span=span)
        self.flag = flag

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
        idx = ", ".join(p.v(v) for v in self.indices)
        return f"store{self.flag.value} {p.v(self.value)}, {p.v(self.tensor)}[{idx}]"


class Yield(Instruction):
    """Ends a for/if region, handing values to the next iteration or the results."""

    opname = "yield"

    def __init__(self, values: Sequence[Value] = (), span: Span | None = None):
        super().__init__(values, span=span)

    def format(self, p: "Printer") -> str:
        return "yield (" + ", ".join(p.v(v) for v in self.operands) + ")"


class LifetimeStop(Instruction):
    """Marks the end of an alloca's lifetime so its memory can be reused."""

    opname = "lifetime_stop"

    def __init__(self, value: Value, span: Span | None = None):
        super().__init__([value], span=span)

    def format(self, p: "Printer") -> str:
        return f"lifetime_stop {p.v(self.operands[0])}"
