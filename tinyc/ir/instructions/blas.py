"""The BLAS-like collectives' shared shape: output := alpha·X(inputs...) + beta·output.

The work-group executes them together; their operands are uniform and the
compiler distributes the work (tinyc/passes/lowering/, one lowering per
class). The classes are in products.py (gemm, gemv, ger, hadamard_product)
and updates.py (axpby, sum, cumsum); here are their base classes, the
helpers of their syntax (transposes, `.atomic`, schedule attributes) and
their operands' checks (alpha, beta and the promotion chain).
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING, Any, ClassVar, Callable, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.knobs import MatmulShape
from tinyc.ir.checks import expect_memref, expect_scalar, operand_error, inst_error
from tinyc.ir.addressing import Addressing, Footprint, SizeRule
from tinyc.ir.core import Accesses, EffectKind, Instruction, Kind, Value, no_integer_facts
from tinyc.ir.instructions.scalar import Constant
from tinyc.ir.types import DYNAMIC, MemrefType, ScalarType, promotable, promote
from tinyc.std import Std

if TYPE_CHECKING:
    import numpy as np

    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed

ShapeOf = Callable[[Value], Sequence[int]]
"""The run-time shape of a memref operand (the work model counts with real sizes)."""


def static_size(t: MemrefType, mode: int) -> int | None:
    """A mode's size, None when it is known only at run time."""
    return None if t.shape[mode] == DYNAMIC else t.shape[mode]


def op_of(x: "np.ndarray", transposed: bool) -> "np.ndarray":
    """op(X) of a NumPy array: its transpose for `.t` (a vector stays as it is)."""
    return x.T if transposed and x.ndim == 2 else x


def transpose_suffix(transposed: bool) -> str:
    return ".t" if transposed else ".n"


def op_mode(transposed: bool, mode: int) -> int:
    """The mode of a matrix X that is mode `mode` of op(X)."""
    return 1 - mode if transposed else mode


def transposes_of(s: "Parsed", count: int) -> list[bool]:
    """The `count` `.n`/`.t` modifiers, True for `.t`; left out ones are `.n` (newest language).

    Notes the version the modifiers' order belongs to: the seed writes
    every transpose, then `.atomic`; the newest writes `.atomic` first and
    may leave transposes out.
    """
    written = [m for m in s.modifiers if m in (".n", ".t")]
    if ".atomic" in s.modifiers and written:
        if s.modifiers.index(".atomic") == 0:
            s.mark(Std.NEWEST, "'.atomic' before the transposes")
        else:
            s.mark(Std.SEED, "'.atomic' after the transposes")
    if len(written) < count:
        s.mark(Std.NEWEST, f"'{s.keyword}' without {'its' if count == 1 else 'both'} "
                           f"transpose{'s' if count > 1 else ''}")
    return [m == ".t" for m in written] + [False] * (count - len(written))


def transpose_syntax(count: int) -> str:
    """The modifiers of a BLAS instruction with 1 or 2 transposes, in both versions' orders.

    Seed: every transpose, then an optional `.atomic`; newest: an optional
    `.atomic`, then optional transposes. The union, without ambiguity:
    `(atomic T? | T atomic?)?` and `(atomic (T T?)? | T (T atomic?)?)?`.
    """
    if count == 1:
        return "(atomic transpose? | transpose atomic?)?"
    return "(atomic (transpose transpose?)? | transpose (transpose atomic?)?)?"


def is_atomic(s: "Parsed") -> bool:
    return ".atomic" in s.modifiers


SCHEDULE_SYNTAX = ' ("attributes" dictionary)?'
"""A BLAS-like collective may end in its schedule knobs, `attributes {"tile"=[2, 4]}`
(tinyc's extension; tinyc/schedule/knobs.py, docs/schedules.md)."""


def with_schedule(inst: "BlasInstruction", s: "Parsed") -> "BlasInstruction":
    inst.attrs = dict(s.attributes)
    return inst


def is_constant(value: Value, number: int) -> bool:
    """A `constant` instruction's result equal to `number` (so `beta * C` with 0 reads nothing)."""
    owner = value.owner
    return isinstance(owner, Constant) and not isinstance(owner.value, bool) and owner.value == number


class BlasInstruction(Instruction):
    """Shared shape of the BLAS-like collectives: output := alpha·X(inputs...) + beta·output.

    Besides what every instruction says, a collective class declares (and
    tests/test_instruction_definitions.py checks for each one):

        knobs            its schedule knobs (tinyc/ir/knobs.py)
        fixed_defaults   knob defaults that do not depend on shapes (else `matmul()` says)
        order_changing   knobs that change the order of its additions
        matmul()         the product it computes, for gemm, gemv and ger (None otherwise)
        evaluate()       its NumPy meaning (the reference interpreter and the fuzz oracle)
        summed_terms()   how many terms add up in one output element
        accumulators()   the output values a tile keeps live
        term_flops()     its work model

    Its lowering registers by class (tinyc/passes/lowering/, `@lowers`).
    """

    abstract = True
    kind = Kind.COLLECTIVE
    fixed_defaults: ClassVar[dict[str, Any] | None] = None
    """Default knob values that do not depend on the shapes; None: tinyc/schedule/defaults.py
    derives them from `matmul()`."""
    order_changing: ClassVar[tuple[str, ...]] = ()
    """Knobs that change the order of floating-point additions (results then agree with the
    default's to the rounding bounds, not bit for bit)."""

    def __init__(self, alpha: Value, inputs: Sequence[Value], beta: Value, output: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__([alpha, *inputs, beta, output], span=span)
        self.atomic = atomic

    @property
    def alpha(self) -> Value:
        return self.operands[0]

    @property
    def inputs(self) -> list[Value]:
        return self.operands[1:-2]

    @property
    def beta(self) -> Value:
        return self.operands[-2]

    @property
    def output(self) -> Value:
        return self.operands[-1]

    def modifiers(self, newest: bool = False) -> str:
        """The modifiers as the seed (or with `newest`, the newest language) orders them."""
        return ".atomic" if self.atomic else ""

    def schedule_text(self, p: "Printer") -> str:
        """` attributes {...}`: the schedule knobs (tinyc/schedule/knobs.py), if any."""
        return f" attributes {p.attrs(self.attrs)}" if self.attrs else ""

    def format(self, p: "Printer") -> str:
        return (f"{self.opname}{self.modifiers(p.newest)} " + ", ".join(p.v(v) for v in self.operands)
                + self.schedule_text(p))

    def size_rules(self) -> list[SizeRule] | None:
        """The sizes of operands that must agree (None: not described, so nothing
        may rely on them, and bounds-checked launches check the lowered code)."""
        return None

    def memory_accesses(self) -> Accesses:
        """Inputs are read; the output is written, and read too when beta may be non-zero.

        With the atomic flag (beta is 0 or 1) beta = 1 is an atomic accumulation
        and beta = 0 an atomic store, which is an ordinary write here.
        """
        found: Accesses = [(v, EffectKind.READ) for v in self.inputs]
        beta_zero = is_constant(self.beta, 0)
        if self.atomic:
            found.append((self.output, EffectKind.WRITE if beta_zero else EffectKind.ATOMIC_ADD))
        else:
            if not beta_zero:
                found.append((self.output, EffectKind.READ))
            found.append((self.output, EffectKind.WRITE))
        return found

    def addressing(self) -> Addressing:
        """Every element of each memref operand it reads or writes, and its shape rule."""
        footprints = tuple(Footprint.whole(v, kind) for v, kind in dict.fromkeys(self.memory_accesses()))
        rules = self.size_rules()
        return Addressing(footprints, rules=tuple(rules) if rules is not None else None)

    integer_facts = no_integer_facts

    def matmul(self, swap: bool = False) -> MatmulShape | None:
        """The matrix product it computes (gemm, gemv, ger), for the schedule's defaults."""
        return None

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """Its meaning in NumPy: X of alpha·X + beta·output, from the inputs' values (in their
        dtype). The reference interpreter computes with it in the output's compute type and
        the fuzz oracle in float64: one derivation for both. X is multilinear in the inputs
        with non-negative coefficients, so evaluate(|inputs|) bounds |the terms it adds|."""
        raise NotImplementedError(type(self).__name__)

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        """How many terms add up in one output element, for inputs of these shapes (error
        bounds grow with it)."""
        return 1

    def accumulators(self, tile: Sequence[int]) -> int:
        """Values of the output type that a schedule with this `tile` keeps live across its
        inner loop (a matmul's tile is clipped to its shape first: tinyc/schedule/resolve.py)."""
        rows, cols = tile
        return rows * cols

    def term_flops(self, shape_of: ShapeOf) -> float:
        """Flops of the term X in alpha·X + beta·output (a multiply-add is 2)."""
        raise NotImplementedError(type(self).__name__)

    def flops(self, shape_of: ShapeOf) -> float:
        """The work model: X, then per output element a multiply by alpha unless it is the
        constant 1, a multiply by beta unless it is the constant 0 or 1, and the add unless
        beta is the constant 0. A complex operation counts as 4 real flops (a complex
        multiply-add is 8, as in LAPACK's operation counts)."""
        update = (not is_constant(self.alpha, 1)) + (not is_constant(self.beta, 0)) \
            + (not (is_constant(self.beta, 0) or is_constant(self.beta, 1)))
        total = self.term_flops(shape_of) + update * prod(shape_of(self.output))
        return float(total) * (4.0 if self.output.type.element.is_complex else 1.0)


class TransposedUpdate(BlasInstruction):
    """alpha, op(A), beta, B with a `.n`/`.t` modifier: the shape of axpby and sum."""

    abstract = True

    def __init__(self, transpose: bool, alpha: Value, A: Value, beta: Value, B: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A], beta, B, atomic, span)
        self.transpose = transpose

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "TransposedUpdate":
        return with_schedule(cls(transposes_of(s, 1)[0], *s.operands, atomic=is_atomic(s)), s)

    def modifiers(self, newest: bool = False) -> str:
        t = transpose_suffix(self.transpose)
        return super().modifiers() + t if newest else t + super().modifiers()


def blas_memrefs(ctx: "VerifyContext", inst: Instruction, roles: Sequence[str]) -> list[MemrefType] | None:
    """Check alpha, the memref operands and beta of a BLAS-like instruction.

    `roles` names the memref operands (inputs then output). Returns their
    types when all are memrefs; also checks the promotion chain
    type(alpha) ⪯ promote(inputs) ⪯ element(output), type(beta) ⪯
    element(output), and the constant beta of the atomic variant.
    """
    alpha = expect_scalar(ctx, inst, 0, "alpha")
    memrefs = [expect_memref(ctx, inst, 1 + k, role) for k, role in enumerate(roles[:-1])]
    beta_at = len(roles)
    beta = expect_scalar(ctx, inst, beta_at, "beta")
    out = expect_memref(ctx, inst, beta_at + 1, roles[-1])
    memrefs.append(out)
    if beta is not None and getattr(inst, "atomic", False):
        _check_atomic_beta(ctx, inst, beta_at)
    if None in memrefs:
        return None
    _check_blas_promotion(ctx, inst, roles, alpha, [m.element for m in memrefs], beta)
    return memrefs  # type: ignore[return-value]


def _check_blas_promotion(ctx: "VerifyContext", inst: Instruction, roles: Sequence[str],
                          alpha: ScalarType | None, elements: list[ScalarType],
                          beta: ScalarType | None) -> None:
    inputs, out = elements[:-1], elements[-1]
    n_in = len(inputs)
    values = inst.operands
    in_values = values[1:1 + n_in]
    out_value = values[-1]
    common: ScalarType | None = inputs[0]
    if n_in == 2:
        common = promote(inputs[0], inputs[1])
        if common is None:
            inst_error(ctx, inst, f"element types of {roles[0]} ({inputs[0]}) and {roles[1]} "
                                  f"({inputs[1]}) cannot be promoted to a common type", in_values)
        what = f"{common}, the promoted element type of {roles[0]} and {roles[1]},"
    else:
        what = f"the element type of {roles[0]} ({common})"
    if common is not None:
        if alpha is not None and not promotable(alpha, common):
            operand_error(ctx, inst, 0, f"type of alpha ({alpha}) does not promote to {common}, the "
                                        + ("promoted " if n_in == 2 else "")
                                        + f"element type of {' and '.join(roles[:n_in])}", in_values)
        if not promotable(common, out):
            inst_error(ctx, inst, f"{what} does not promote to the element type of "
                                  f"{roles[-1]} ({out})", [*in_values, out_value])
    if beta is not None and not promotable(beta, out):
        operand_error(ctx, inst, n_in + 1, f"type of beta ({beta}) does not promote to the element "
                                           f"type of {roles[-1]} ({out})", [out_value])


def _check_atomic_beta(ctx: "VerifyContext", inst: Instruction, beta_at: int) -> None:
    """Spec: with .atomic, beta must be a constant 0 or 1."""
    owner = inst.operands[beta_at].owner
    if isinstance(owner, Constant) and not isinstance(owner.value, bool) and owner.value in (0, 1):
        return
    operand_error(ctx, inst, beta_at, "with .atomic, beta must be a constant 0 or 1")
