"""Shared checks and the wording of verifier messages.

Instruction `verify` methods call these helpers so that the same rule is
worded the same way everywhere: `<instruction>: <what> must be <expected>,
got <found>`, located at the operand (or the result type), with a note at the
definition of each value involved. Helpers return the checked type (or True)
on success and None (or False) after reporting, so callers can skip checks
that depend on a failed one instead of piling up follow-on errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.attr_checks import SUBGROUP_SIZES
from tinyc.ir.core import Instruction, Value
from tinyc.std import Std
from tinyc.ir.types import (
    DYNAMIC, BoolType, CoopMatrixType, MatrixUse, MemrefType, ScalarType, Type, dim_text, index,
)

if TYPE_CHECKING:
    from tinyc.ir.verifier import VerifyContext


# ---------------------------------------------------------------- wording

def title(inst: Instruction) -> str:
    """The instruction as the user spells it, without modifiers: `arith.add`, `gemm`."""
    return inst.title


def shape_text(shape: Sequence[int]) -> str:
    """A shape as the type syntax writes it (`8x?x4`); `()` for order 0."""
    return "x".join(dim_text(s) for s in shape) if shape else "()"


def one_of(options: Sequence[object]) -> str:
    """`1`, `1 or 2`, `0, 1 or 2`."""
    words = [str(o) for o in options]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def differ(a: int, b: int) -> bool:
    """Two sizes that are both known and different (`?` matches anything)."""
    return a != DYNAMIC and b != DYNAMIC and a != b


def result_span(inst: Instruction) -> Span | None:
    """Where the result type is written, else the instruction."""
    return inst.type_span or inst.span


# ---------------------------------------------------------------- type classes

def is_scalar(t: Type) -> bool:
    return isinstance(t, ScalarType)


def is_int(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_int


def is_float(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_float


def is_complex(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_complex


def is_bool(t: Type) -> bool:
    return isinstance(t, BoolType)


def is_coop(t: Type) -> bool:
    return isinstance(t, CoopMatrixType)


def is_value_type(t: Type) -> bool:
    """Types a for/if may carry or yield: bool, scalar, coopmatrix."""
    return isinstance(t, (BoolType, ScalarType, CoopMatrixType))


# ---------------------------------------------------------------- reporting

def _notes(ctx: "VerifyContext", values: Sequence[Value]) -> list:
    """One `defined here` note per distinct value, in order."""
    seen: list[Value] = []
    for v in values:
        if all(v is not s for s in seen):
            seen.append(v)
    return [ctx.defined_here(v) for v in seen]


def operand_error(ctx: "VerifyContext", inst: Instruction, i: int, message: str,
                  also: Sequence[Value] = ()) -> None:
    """`<title>: message` at operand i, with notes at its definition (and `also`)."""
    ctx.error(f"{title(inst)}: {message}", inst.operand_span(i), _notes(ctx, [inst.operands[i], *also]))


def inst_error(ctx: "VerifyContext", inst: Instruction, message: str,
               values: Sequence[Value] = ()) -> None:
    """`<title>: message` at the instruction, with notes at the given values."""
    ctx.error(f"{title(inst)}: {message}", inst.span, _notes(ctx, values))


def result_error(ctx: "VerifyContext", inst: Instruction, message: str,
                 values: Sequence[Value] = ()) -> None:
    """`<title>: message` at the result type annotation."""
    ctx.error(f"{title(inst)}: {message}", result_span(inst), _notes(ctx, values))


# ---------------------------------------------------------------- operand checks

def expect_memref(ctx: "VerifyContext", inst: Instruction, i: int, role: str) -> MemrefType | None:
    t = inst.operands[i].type
    if isinstance(t, MemrefType):
        return t
    operand_error(ctx, inst, i, f"{role} must be a memref, got {t}")
    return None


def expect_scalar(ctx: "VerifyContext", inst: Instruction, i: int, role: str) -> ScalarType | None:
    t = inst.operands[i].type
    if isinstance(t, ScalarType):
        return t
    operand_error(ctx, inst, i, f"{role} must have a scalar type, got {t}")
    return None


def expect_coop(ctx: "VerifyContext", inst: Instruction, i: int, role: str) -> CoopMatrixType | None:
    t = inst.operands[i].type
    if isinstance(t, CoopMatrixType):
        return t
    operand_error(ctx, inst, i, f"{role} must be a coopmatrix, got {t}")
    return None


def expect_type(ctx: "VerifyContext", inst: Instruction, i: int, role: str, expected: Type,
                why: str = "") -> bool:
    """Operand i has exactly `expected`; `why` explains where that type comes from."""
    t = inst.operands[i].type
    if t is expected:
        return True
    operand_error(ctx, inst, i, f"{role} must have type {expected}{why}, got {t}")
    return False


def expect_indices(ctx: "VerifyContext", inst: Instruction, first: int, count: int,
                   role: str = "index") -> bool:
    """Operands first..first+count-1 are of type index (offsets, sizes, positions)."""
    ok = True
    operands = inst.operands
    for k in range(count):
        if operands[first + k].type is not index:  # (the role's text only for an error)
            ok &= expect_type(ctx, inst, first + k, f"{role} {k}", index)
    return ok


def expect_order(ctx: "VerifyContext", inst: Instruction, i: int, role: str, t: MemrefType,
                 orders: Sequence[int]) -> bool:
    if t.order in orders:
        return True
    operand_error(ctx, inst, i, f"{role} must have order {one_of(orders)}, got order {t.order} ({t})")
    return False


def expect_result(ctx: "VerifyContext", inst: Instruction, expected: Type, why: str = "",
                  values: Sequence[Value] = ()) -> bool:
    """The (single) result has exactly `expected`."""
    got = inst.results[0].type
    if got is expected:
        return True
    result_error(ctx, inst, f"result type must be {expected}{why}, got {got}", values)
    return False


def expect_index_count(ctx: "VerifyContext", inst: Instruction, count: int, expected: int,
                       tensor: Value) -> bool:
    """`load: memref<f32x8x8> needs 2 indices, got 1`."""
    if count == expected:
        return True
    inst_error(ctx, inst, f"{tensor.type} needs {expected} ind{'ex' if expected == 1 else 'ices'}, "
                          f"got {count}", [tensor])
    return False


def check_shapes_equal(ctx: "VerifyContext", inst: Instruction, what: str, shape: Sequence[int],
                       other: str, other_shape: Sequence[int], values: Sequence[Value]) -> bool:
    """`shape of B (4x8) does not match shape of op(A) (8x4)`; `?` matches any size."""
    if len(shape) == len(other_shape) and not any(differ(a, b) for a, b in zip(shape, other_shape)):
        return True
    inst_error(ctx, inst, f"shape of {what} ({shape_text(shape)}) does not match shape of "
                          f"{other} ({shape_text(other_shape)})", values)
    return False


def check_size_match(ctx: "VerifyContext", inst: Instruction, what: str, size: int, other: str,
                     other_size: int, values: Sequence[Value]) -> bool:
    """`columns of op(A) (8) do not match rows of op(B) (16)`; `?` matches any size."""
    if not differ(size, other_size):
        return True
    inst_error(ctx, inst, f"{what} ({size}) do not match {other} ({other_size})", values)
    return False


def op_shape(t: MemrefType, transpose: bool) -> tuple[int, ...]:
    """Shape of op(X): reversed for .t on a matrix (spec: axpby)."""
    return t.shape[::-1] if transpose and t.order == 2 else t.shape


# ---------------------------------------------------------------- views

def check_view_result(ctx: "VerifyContext", inst: Instruction, source: MemrefType,
                      shape: Sequence[int], stride: Sequence[int],
                      dynamic_shape_ok: bool = False) -> None:
    """The result of a view (expand, fuse, subview) against the computed memref.

    The element type and address space must equal the source's; the shape
    must equal `shape` (a `?` there must be `?` in the result); every stride
    must equal `stride` or be `?`.
    """
    got = inst.results[0].type
    values = [inst.operands[0]]
    if not isinstance(got, MemrefType):
        result_error(ctx, inst, f"result type must be a memref, got {got}", values)
        return
    if got.element is not source.element:
        result_error(ctx, inst, f"result element type {got.element} does not match the element "
                                f"type of the operand ({source.element})", values)
    if got.space is not source.space:
        result_error(ctx, inst, f"result address space {got.space.value} does not match the "
                                f"address space of the operand ({source.space.value})", values)
    if tuple(got.shape) != tuple(shape):
        result_error(ctx, inst, f"result shape {shape_text(got.shape)} does not match the expected "
                                f"shape {shape_text(shape)}", values)
        return
    if len(got.stride) != len(stride):
        return  # a malformed layout; the type check reports it
    for mode, (have, want) in enumerate(zip(got.stride, stride)):
        if have != DYNAMIC and have != want:
            expected = "'?'" if want == DYNAMIC else f"{want} or '?'"
            result_error(ctx, inst, f"result stride {have} of mode {mode} does not match the "
                                    f"expected stride {expected}", values)
            return


# ---------------------------------------------------------------- casts

_CAST_PROBLEMS: dict[tuple[Type, Type, bool], str | None] = {}
"""cast_problem's answers: types are interned and immutable, and a large function casts
between the same few types thousands of times (the parser and the verifier both ask)."""


def cast_problem(src: Type, dst: Type, newest: bool = True) -> str | None:
    """Why `cast` from src to dst is not allowed (spec: cast table), or None.

    The seed keeps a coopmatrix's use ("the shape and the use the coopmatrix
    types must match"); the newest language (`newest`) also casts matrix_acc
    to matrix_a or matrix_b.
    """
    key = (src, dst, newest)
    if key not in _CAST_PROBLEMS:
        _CAST_PROBLEMS[key] = _cast_problem(src, dst, newest)
    return _CAST_PROBLEMS[key]


def _cast_problem(src: Type, dst: Type, newest: bool) -> str | None:
    whole = f"cannot cast {src} to {dst}"
    if is_coop(src) or is_coop(dst):
        if not (is_coop(src) and is_coop(dst)):
            return f"{whole}: a coopmatrix can only be cast to a coopmatrix"
        if src.shape != dst.shape:  # type: ignore[union-attr]
            return f"{whole}: the shapes must match"
        if src.use is not dst.use and not newest:  # type: ignore[union-attr]
            return f"{whole}: the shape and the use of the coopmatrix types must match"
        if src.use is not dst.use and not (src.use is MatrixUse.ACC  # type: ignore[union-attr]
                                           and dst.use in (MatrixUse.A, MatrixUse.B)):  # type: ignore[union-attr]
            return (f"{whole}: the use must stay the same or change from matrix_acc to matrix_a or "
                    f"matrix_b")
        src, dst = src.component, dst.component  # type: ignore[union-attr]
    if is_bool(src) or is_bool(dst):
        return f"{whole}: bool cannot be cast"
    if not (is_scalar(src) and is_scalar(dst)):
        return f"{whole}: only scalars and coopmatrices can be cast"
    if src.is_complex and not dst.is_complex:  # type: ignore[union-attr]
        return f"{whole}: casts from complex to non-complex types are forbidden"
    return None


# ---------------------------------------------------------------- constants

_INT_RANGE = (-(2**63) + 1, 2**63 - 1)
"""The spec's range for integer constants."""

_FLOAT_OVERFLOW = {"f16": (2 - 2**-11) * 2.0**15, "bf16": (2 - 2**-8) * 2.0**127,
                   "f32": (2 - 2**-24) * 2.0**127}
"""Magnitudes that round to infinity under round-to-nearest-even."""


def literal_text(value: object) -> str:
    """A constant as the grammar writes it, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, complex):
        return f"[{value.real!r}, {value.imag!r}]"
    return repr(value)


def _float_problem(x: float, t: ScalarType) -> str | None:
    if x != x or x in (float("inf"), float("-inf")):
        return None  # `inf`, `nan` (newest language): the value asked for
    limit = _FLOAT_OVERFLOW.get(t.name)
    if limit is not None and abs(x) >= limit:
        return f"the constant {x!r} is out of the range of {t} (it would round to infinity)"
    return None


def constant_problem(value: object, t: Type) -> str | None:
    """Why `constant value : t` is invalid (spec: constant), or None.

    The literal's kind must match the (component) type: true/false for bool,
    an integer literal for integer types, a floating literal for floating
    types, a complex literal [re, im] for complex types. Integers must lie in
    -2^63+1..2^63-1 and fit the type's width as signed numbers; finite floats
    must not overflow the type (`inf` and `nan` are written as such).
    """
    if isinstance(t, CoopMatrixType):
        t = t.component
    shown = literal_text(value)
    if isinstance(t, BoolType):
        return None if isinstance(value, bool) else f"type bool requires true or false, got {shown}"
    if not isinstance(t, ScalarType):
        return f"the type must be bool, a scalar or a coopmatrix type, got {t}"
    if t.is_int:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"the integer type {t} requires an integer constant, got {shown}"
        lo, hi = _INT_RANGE
        if not lo <= value <= hi:
            return f"the integer constant {value} is outside the range -2^63+1..2^63-1"
        if t.bits < 64:
            lo, hi = -(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1
            if not lo <= value <= hi:
                return f"the constant {value} does not fit in {t} ({lo}..{hi})"
        return None
    if t.is_float:
        if not isinstance(value, float):
            return (f"the floating type {t} requires a floating-point constant (e.g. 1.0), "
                    f"got {shown}")
        return _float_problem(value, t)
    if not isinstance(value, complex):
        return f"the complex type {t} requires a complex constant [re, im], got {shown}"
    return _float_problem(value.real, t.component) or _float_problem(value.imag, t.component)


# ---------------------------------------------------------------- yield

def check_yield(ctx: "VerifyContext", y: Instruction, types: Sequence[Type], owner: str,
                each: str) -> None:
    """The values of a yield against what the enclosing for / if expects.

    `owner` says what expects them ("the for loop carries"), `each` names one
    slot ("carried value", "result").
    """
    got = len(y.operands)
    if got != len(types):
        listed = ", ".join(map(str, types))
        listed = f" ({listed})" if types else ""
        ctx.error(f"yield: {owner} {len(types)} value{'s' if len(types) != 1 else ''}"
                  f"{listed}, but {got} {'is' if got == 1 else 'are'} yielded", y.span)
        return
    for k, (value, t) in enumerate(zip(y.operands, types)):
        if value.type is not t:
            ctx.error(f"yield: value {k} must have type {t} (the type of {each} {k}), got "
                      f"{value.type}", y.operand_span(k), [ctx.defined_here(value)])


# ---------------------------------------------------------------- subgroup multiples

def check_subgroup_multiples(ctx: "VerifyContext", inst: Instruction) -> None:
    """Sizes the newest language wants as multiples of the subgroup size (`subgroup_multiples`).

    Against the function's `subgroup_size` when it gives one; otherwise some
    supported subgroup size must divide them all (the work-group-size pass
    then picks one that does).
    """
    wanted = inst.subgroup_multiples(ctx.version.std)
    if not wanted:
        return
    rule = ctx.version.rule() if inst.subgroup_multiples(Std.SEED) != wanted else ""
    given = ctx.function.attrs.get("subgroup_size") if ctx.function is not None else None
    for size, what in wanted:
        if given in SUBGROUP_SIZES and size % given:
            inst_error(ctx, inst, f"{what} ({size}) must be a multiple of the subgroup size "
                                  f"({given}){rule}")
        elif given not in SUBGROUP_SIZES and not any(size % s == 0 for s in SUBGROUP_SIZES):
            inst_error(ctx, inst, f"{what} ({size}) must be a multiple of the subgroup size, "
                                  f"and no subgroup size ({one_of(SUBGROUP_SIZES)}) divides it{rule}")
