"""Mixed instructions: valid in collective and SPMD regions alike."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir import attr_checks
from tinyc.ir.checks import (
    cast_problem, check_view_result, check_yield, constant_problem, expect_index_count,
    expect_indices, expect_memref, expect_result, expect_scalar, expect_type, inst_error,
    is_bool, is_complex, is_coop, is_float, is_int, is_scalar, is_value_type, operand_error,
    result_error, shape_text,
)
from tinyc.ir.core import Instruction, Kind, Region, Value
from tinyc.ir.instructions.collective import Alloca
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, Type, bool_, i32, index

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext


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


BUILTIN_TYPES: dict[BuiltinName, Type] = {
    BuiltinName.GROUP_ID: index, BuiltinName.GROUP_SIZE: index,
    BuiltinName.NUM_SUBGROUPS: i32, BuiltinName.SUBGROUP_SIZE: i32,
    BuiltinName.SUBGROUP_ID: i32, BuiltinName.SUBGROUP_LOCAL_ID: i32,
}
"""The result type of each builtin (spec: builtin tables)."""

_SCALAR_OR_COOP = (lambda t: is_scalar(t) or is_coop(t), "a scalar or coopmatrix type")
_REAL_SCALAR = (lambda t: is_scalar(t) and not t.is_complex, "a non-complex scalar type")
_INTEGER = (is_int, "an integer type")
_LOGICAL = (lambda t: is_bool(t) or is_int(t), "bool or an integer type")
_COMPLEX = (is_complex, "a complex type")

_BINARY_ALLOWED = {
    ArithBinaryOp.ADD: _SCALAR_OR_COOP, ArithBinaryOp.SUB: _SCALAR_OR_COOP,
    ArithBinaryOp.MUL: _SCALAR_OR_COOP, ArithBinaryOp.DIV: _SCALAR_OR_COOP,
    ArithBinaryOp.REM: _REAL_SCALAR, ArithBinaryOp.MIN: _REAL_SCALAR, ArithBinaryOp.MAX: _REAL_SCALAR,
    ArithBinaryOp.SHL: _INTEGER, ArithBinaryOp.SHR: _INTEGER,
    ArithBinaryOp.AND: _LOGICAL, ArithBinaryOp.OR: _LOGICAL, ArithBinaryOp.XOR: _LOGICAL,
}
"""Spec: arithmetic (binary) table — a predicate and its wording per operation."""

_UNARY_ALLOWED = {
    ArithUnaryOp.ABS: (is_scalar, "a scalar type"), ArithUnaryOp.NEG: _SCALAR_OR_COOP,
    ArithUnaryOp.NOT: _LOGICAL, ArithUnaryOp.CONJ: _COMPLEX, ArithUnaryOp.IM: _COMPLEX,
    ArithUnaryOp.RE: _COMPLEX,
}
"""Spec: arithmetic (unary) table; `not` also takes bool (DESIGN.md)."""

_ORDERED_CONDS = frozenset({CmpCond.GT, CmpCond.GE, CmpCond.LT, CmpCond.LE})


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

    def verify(self, ctx: "VerifyContext") -> None:
        """The type is allowed for the operation; both operands have exactly that type."""
        t = self.result.type
        allowed, wording = _BINARY_ALLOWED[self.op]
        if not allowed(t):
            result_error(ctx, self, f"type must be {wording}, got {t}")
        expect_type(ctx, self, 0, "first operand", t, " (the result type)")
        expect_type(ctx, self, 1, "second operand", t, " (the result type)")


class ArithUnary(Instruction):
    """Unary arithmetic; abs/im/re of a complex give its real component type."""

    opname = "arith"

    def __init__(self, op: ArithUnaryOp, a: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op

    def format(self, p: "Printer") -> str:
        return f"arith.{self.op.value} {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Operand type per the table; abs/im/re of a complex give its component type."""
        a = self.operands[0].type
        allowed, wording = _UNARY_ALLOWED[self.op]
        if not allowed(a):
            operand_error(ctx, self, 0, f"operand must have {wording}, got {a}")
            return
        if is_complex(a) and self.op in (ArithUnaryOp.ABS, ArithUnaryOp.IM, ArithUnaryOp.RE):
            expect_result(ctx, self, a.component, f" (the component type of {a})")
        else:
            expect_result(ctx, self, a, " (the operand type)")


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

    def verify(self, ctx: "VerifyContext") -> None:
        """The result type is fixed by the builtin (index or i32)."""
        expect_result(ctx, self, BUILTIN_TYPES[self.builtin])


class Cast(Instruction):
    """Conversion of a scalar or coopmatrix to another (component) type."""

    opname = "cast"

    def __init__(self, a: Value, type: Type, span: Span | None = None, name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])

    def format(self, p: "Printer") -> str:
        return f"cast {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Spec: cast table; no bool, no complex to real, coopmatrix shape and use kept."""
        problem = cast_problem(self.operands[0].type, self.result.type)
        if problem:
            result_error(ctx, self, problem, [self.operands[0]])


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

    def verify(self, ctx: "VerifyContext") -> None:
        """Two operands of one scalar type (no ordering of complex); a bool result."""
        a = expect_scalar(ctx, self, 0, "first operand")
        if a is not None:
            expect_type(ctx, self, 1, "second operand", a, " (the type of the first operand)")
            if a.is_complex and self.cond in _ORDERED_CONDS:
                inst_error(ctx, self, f"complex operands ({a}) cannot be ordered; only cmp.eq and "
                                      f"cmp.ne accept complex types", self.operands[:1])
        expect_result(ctx, self, bool_)


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

    def verify(self, ctx: "VerifyContext") -> None:
        """The literal's kind and range fit the (component) type."""
        problem = constant_problem(self.value, self.result.type)
        if problem:
            result_error(ctx, self, problem)


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
        # Spaced: `%ix2` would read back as one name.
        shape = " x ".join(p.v(next(dynamic)) if s == DYNAMIC else str(s) for s in self.static_shape)
        return f"expand {p.v(self.tensor)}[{self.mode} -> {shape}] : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Mode in range, shape product = mode size, result memref per the spec's rules."""
        src = expect_memref(ctx, self, 0, "operand")
        if src is None:
            return
        shape, mode, n_dynamic = self.static_shape, self.mode, self.static_shape.count(DYNAMIC)
        if n_dynamic != len(self.operands) - 1:
            inst_error(ctx, self, f"the expand shape has {n_dynamic} dynamic entries but "
                                  f"{len(self.operands) - 1} values")
            return
        if not 0 <= mode < src.order:
            inst_error(ctx, self, f"mode {mode} is out of range for {src} of order {src.order} "
                                  f"(modes count from 0)", self.operands[:1])
            return
        if len(shape) < 2:
            inst_error(ctx, self, f"the expand shape must have at least 2 entries, got {len(shape)}")
        bad = [s for s in shape if s != DYNAMIC and s < 1]
        if bad:
            inst_error(ctx, self, f"expand shape entries must be positive, got {bad[0]}")
            return
        expect_indices(ctx, self, 1, n_dynamic, "expand shape value")
        size, product = src.shape[mode], 1
        for s in shape:
            product *= s if s != DYNAMIC else 1
        if size != DYNAMIC and n_dynamic == 0 and product != size:
            inst_error(ctx, self, f"the product of the expand shape {shape_text(shape)} is {product}, "
                                  f"but mode {mode} has size {size}", self.operands[:1])
            return
        if size != DYNAMIC and size % product:
            inst_error(ctx, self, f"the constant entries of the expand shape {shape_text(shape)} "
                                  f"multiply to {product}, which does not divide the size {size} "
                                  f"of mode {mode}", self.operands[:1])
            return
        if len(src.stride) != src.order:
            return
        strides, current = [], src.stride[mode]
        for s in shape:
            strides.append(current)
            current = DYNAMIC if DYNAMIC in (current, s) else current * s
        check_view_result(ctx, self, src, src.shape[:mode] + tuple(shape) + src.shape[mode + 1:],
                          src.stride[:mode] + tuple(strides) + src.stride[mode + 1:])


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

    def verify(self, ctx: "VerifyContext") -> None:
        """Integer loop type for variable and bounds; carried values typed and yielded."""
        ty = self.loop_type
        if not is_int(ty):
            inst_error(ctx, self, f"the loop type must be an integer type, got {ty}")
        else:
            if self.loop_var.type is not ty:
                ctx.error(f"for: the loop variable must have the loop type {ty}, got "
                          f"{self.loop_var.type}", self.loop_var.span or self.span)
            bounds = ["lower bound", "upper bound", "step"][: 3 if self.has_step else 2]
            for i, role in enumerate(bounds):
                expect_type(ctx, self, i, role, ty, " (the loop type)")
        types = [r.type for r in self.results]
        init_at = 3 if self.has_step else 2
        if len(self.init) != len(types) or len(self.carried) != len(types):
            inst_error(ctx, self, f"the loop has {len(self.init)} initial values for "
                                  f"{len(self.carried)} carried values and {len(types)} results")
            return
        for k, t in enumerate(types):
            if not is_value_type(t):
                result_error(ctx, self, f"carried value {k} must have bool, scalar or coopmatrix "
                                        f"type, got {t}")
            else:
                expect_type(ctx, self, init_at + k, f"initial value {k}", t,
                            f" (the type of carried value {k})")
        last = self.body.instructions[-1] if self.body.instructions else None
        if isinstance(last, Yield):
            check_yield(ctx, last, types, "the for loop carries", "carried value")
        elif types:
            inst_error(ctx, self, f"the loop carries {len(types)} value{'s' if len(types) > 1 else ''}, "
                                  f"so its body must end with a yield")
        problems = attr_checks.unknown_names(self.attrs, attr_checks.FOR_ATTRIBUTES, "for")
        for problem in problems + attr_checks.bool_attr_problems(self.attrs, ["unroll"]):
            inst_error(ctx, self, problem)


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

    def verify(self, ctx: "VerifyContext") -> None:
        """0 <= from < to < order, fusable strides where known, result memref per the spec."""
        src = expect_memref(ctx, self, 0, "operand")
        if src is None:
            return
        first, last = self.first, self.last
        if not 0 <= first < last < src.order:
            inst_error(ctx, self, f"cannot fuse modes {first} to {last} of {src}: need "
                                  f"0 <= from < to < order ({src.order})", self.operands[:1])
            return
        if len(src.stride) != src.order:
            return
        shape, stride = src.shape, src.stride
        for k in range(first, last):
            if DYNAMIC not in (stride[k], shape[k], stride[k + 1]) and \
                    stride[k] * shape[k] != stride[k + 1]:
                inst_error(ctx, self, f"modes {k} and {k + 1} of {src} cannot be fused: the stride "
                                      f"{stride[k + 1]} of mode {k + 1} is not stride times size of "
                                      f"mode {k} ({stride[k]}*{shape[k]} = {stride[k] * shape[k]})",
                           self.operands[:1])
        size = 1
        for s in shape[first:last + 1]:
            size = DYNAMIC if DYNAMIC in (size, s) else size * s
        check_view_result(ctx, self, src, shape[:first] + (size,) + shape[last + 1:],
                          stride[:first + 1] + stride[last + 1:])


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

    def verify(self, ctx: "VerifyContext") -> None:
        """A bool condition; with results, both regions end in a matching yield."""
        expect_type(ctx, self, 0, "condition", bool_)
        types = [r.type for r in self.results]
        for k, t in enumerate(types):
            if not is_value_type(t):
                result_error(ctx, self, f"result {k} must have bool, scalar or coopmatrix type, got {t}")
        n = len(types)
        for region, name in ((self.then, "then"), (self.otherwise, "else")):
            last = region.instructions[-1] if region.instructions else None
            if isinstance(last, Yield):
                check_yield(ctx, last, types, "the if returns", "result")
            elif n and name == "else" and last is None:
                inst_error(ctx, self, f"the if returns {n} value{'s' if n > 1 else ''}, so it needs "
                                      f"an else region that ends with a yield")
            elif n:
                inst_error(ctx, self, f"the if returns {n} value{'s' if n > 1 else ''}, so its "
                                      f"{name} region must end with a yield")


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

    def verify(self, ctx: "VerifyContext") -> None:
        """One index per mode giving the element; one index into a group giving its memref."""
        t = self.tensor.type
        indices = len(self.indices)
        if isinstance(t, MemrefType):
            expect_index_count(ctx, self, indices, t.order, self.tensor)
            expect_indices(ctx, self, 1, indices)
            expect_result(ctx, self, t.element, f" (the element type of {t})", [self.tensor])
        elif isinstance(t, GroupType):
            expect_index_count(ctx, self, indices, 1, self.tensor)
            expect_indices(ctx, self, 1, indices)
            expect_result(ctx, self, t.memref, " (the memref type of the group)", [self.tensor])
        else:
            operand_error(ctx, self, 0, f"operand must be a memref or a group, got {t}")


class MathUnary(Instruction):
    """exp / native_exp of a floating or complex scalar."""

    opname = "math"

    def __init__(self, op: MathUnaryOp, a: Value, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__([a], [type], span=span, result_names=[name])
        self.op = op

    def format(self, p: "Printer") -> str:
        return f"math.{self.op.value} {p.v(self.operands[0])} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A floating or complex operand of the result type."""
        a = self.operands[0].type
        if not (is_float(a) or is_complex(a)):
            operand_error(ctx, self, 0, f"operand must have a floating-point or complex type, got {a}")
            return
        expect_result(ctx, self, a, " (the operand type)")


class Size(Instruction):
    """The size of a memref mode, or the number of members of a group."""

    opname = "size"

    def __init__(self, tensor: Value, mode: int, span: Span | None = None,
                 name: str | None = None, type: Type = index):
        super().__init__([tensor], [type], span=span, result_names=[name])
        self.mode = mode

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

    def verify(self, ctx: "VerifyContext") -> None:
        """One entry per mode, index-typed values, static bounds, result memref per the spec."""
        src = expect_memref(ctx, self, 0, "operand")
        if src is None:
            return
        offsets, sizes = self.static_offsets, self.static_sizes
        if len(offsets) != src.order or len(sizes) != src.order:
            inst_error(ctx, self, f"{src} needs {src.order} entries (one per mode), got "
                                  f"{len(offsets)}", self.operands[:1])
            return
        n_off, n_size = offsets.count(DYNAMIC), sizes.count(DYNAMIC)
        if n_off != self.n_dynamic_offsets or n_off + n_size != len(self.operands) - 1:
            inst_error(ctx, self, f"the subview has {n_off + n_size} dynamic entries but "
                                  f"{len(self.operands) - 1} values")
            return
        expect_indices(ctx, self, 1, n_off, "dynamic offset")
        expect_indices(ctx, self, 1 + n_off, n_size, "dynamic size")
        shape, stride = [], []
        for mode, (off, size) in enumerate(zip(offsets, sizes)):
            problem = _subview_bounds(off, size, src.shape[mode])
            if problem:
                inst_error(ctx, self, f"mode {mode}: {problem}", self.operands[:1])
            if size == WHOLE_MODE:
                shape.append(src.shape[mode])
            elif size != 0:
                shape.append(size)
            else:
                continue
            if len(src.stride) == src.order:
                stride.append(src.stride[mode])
        if len(src.stride) == src.order:
            check_view_result(ctx, self, src, tuple(shape), tuple(stride))


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

    def verify(self, ctx: "VerifyContext") -> None:
        """The value has the element type; one index per mode."""
        t = expect_memref(ctx, self, 1, "the tensor")
        if t is None:
            return
        expect_type(ctx, self, 0, "the value", t.element, f" (the element type of {t})")
        expect_index_count(ctx, self, len(self.indices), t.order, self.tensor)
        expect_indices(ctx, self, 2, len(self.indices))


class Yield(Instruction):
    """Ends a for/if region, handing values to the next iteration or the results."""

    opname = "yield"

    def __init__(self, values: Sequence[Value] = (), span: Span | None = None):
        super().__init__(values, span=span)

    def format(self, p: "Printer") -> str:
        return "yield (" + ", ".join(p.v(v) for v in self.operands) + ")"

    def verify(self, ctx: "VerifyContext") -> None:
        """Only bool, scalar and coopmatrix values can be yielded (count: see for / if)."""
        for k, value in enumerate(self.operands):
            if not is_value_type(value.type):
                operand_error(ctx, self, k, f"value {k} must have bool, scalar or coopmatrix "
                                            f"type, got {value.type}")


class LifetimeStop(Instruction):
    """Marks the end of an alloca's lifetime so its memory can be reused."""

    opname = "lifetime_stop"

    def __init__(self, value: Value, span: Span | None = None):
        super().__init__([value], span=span)

    def format(self, p: "Printer") -> str:
        return f"lifetime_stop {p.v(self.operands[0])}"

    def verify(self, ctx: "VerifyContext") -> None:
        """Only memory from alloca has a lifetime to end."""
        if not isinstance(self.operands[0].owner, Alloca):
            operand_error(ctx, self, 0, "operand must be the result of an alloca")


def _subview_bounds(offset: int, size: int, extent: int) -> str | None:
    """Static problems of one subview entry: signs, and bounds where the mode size is known."""
    if offset != DYNAMIC and offset < 0:
        return f"the offset {offset} is negative"
    if size not in (DYNAMIC, WHOLE_MODE) and size < 0:
        return f"the size {size} is negative"
    if extent == DYNAMIC or size == WHOLE_MODE:
        return None
    if offset == DYNAMIC:
        if size != DYNAMIC and size > extent:
            return f"the size {size} exceeds the mode size {extent}"
        return None
    if size == 0 and offset >= extent:
        return f"the index {offset} is out of bounds for the mode size {extent}"
    if size == DYNAMIC and offset >= extent:
        return f"the offset {offset} is out of bounds for the mode size {extent}"
    if size not in (0, DYNAMIC) and offset + size > extent:
        return f"the slice {offset}:{size} exceeds the mode size {extent}"
    return None
