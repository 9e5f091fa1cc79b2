"""Collective instructions: the work-group executes them together.

Their operands are uniform; the compiler distributes the work (see
tinyc/passes for the lowering of each).
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING, Any, ClassVar, Callable, Sequence

from tinyc.diagnostics import Span
from tinyc.ir import attr_checks
from tinyc.ir import knobs as k
from tinyc.ir.knobs import Knob, MatmulShape
from tinyc.ir.checks import (
    blas_memrefs, check_shapes_equal, check_size_match, expect_order, expect_type, inst_error,
    is_int, op_shape, result_error,
)
from tinyc.ir.addressing import (  # noqa: F401 (SizeRule: re-exported)
    Addressing, Footprint, IntegerFacts, LoopRange, SizeRule, TileRange,
)
from tinyc.ir.core import (
    Accesses, EffectKind, Instruction, Kind, Region, Value, no_addressing, no_integer_facts,
    no_memory_access,
)
from tinyc.ir.instructions.control import check_seed_loop_type, loop_type_of
from tinyc.ir.instructions.scalar import Constant
from tinyc.ir.types import DYNAMIC, AddressSpace, MemrefType, Type, index
from tinyc.lint.rules import empty_range
from tinyc.std import Std

if TYPE_CHECKING:
    import numpy as np

    from tinyc.ir.printer import Printer
    from tinyc.lint import LintContext
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed

ShapeOf = Callable[[Value], Sequence[int]]
"""The run-time shape of a memref operand (the work model counts with real sizes)."""


def _static(t: MemrefType, mode: int) -> int | None:
    """A mode's size, None when it is known only at run time."""
    return None if t.shape[mode] == DYNAMIC else t.shape[mode]


def _op(x: "np.ndarray", transposed: bool) -> "np.ndarray":
    """op(X) of a NumPy array: its transpose for `.t` (a vector stays as it is)."""
    return x.T if transposed and x.ndim == 2 else x


def _transpose_suffix(transposed: bool) -> str:
    return ".t" if transposed else ".n"


def _op_mode(transposed: bool, mode: int) -> int:
    """The mode of a matrix X that is mode `mode` of op(X)."""
    return 1 - mode if transposed else mode


def _transposes(s: "Parsed", count: int) -> list[bool]:
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


def _atomic(s: "Parsed") -> bool:
    return ".atomic" in s.modifiers


SCHEDULE_SYNTAX = ' ("attributes" dictionary)?'
"""A BLAS-like collective may end in its schedule knobs, `attributes {"tile"=[2, 4]}`
(tinyc's extension; tinyc/schedule/knobs.py, docs/schedules.md)."""


def _scheduled(inst: "BlasInstruction", s: "Parsed") -> "BlasInstruction":
    inst.attrs = dict(s.attributes)
    return inst


def is_constant(value: Value, number: int) -> bool:
    """A `constant` instruction's result equal to `number` (so `beta * C` with 0 reads nothing)."""
    owner = value.owner
    return isinstance(owner, Constant) and not isinstance(owner.value, bool) and owner.value == number


class Alloca(Instruction):
    """Work-group local scratch memory, freed at the end of its region."""

    opname = "alloca"
    kind = Kind.COLLECTIVE
    keywords = ("alloca",)
    syntax = 'dictionary? ":" memref_type'
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, type: Type, attrs: dict | None = None, span: Span | None = None,
                 name: str | None = None):
        super().__init__((), (type,), span=span, result_names=[name])
        self.attrs = dict(attrs or {})

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Alloca":
        return cls(s.type, s.attributes)

    def format(self, p: "Printer") -> str:
        attrs = f" {p.attrs(self.attrs)}" if self.attrs else ""
        return f"alloca{attrs} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """A local memref of static size; alignment fits the element type."""
        t = self.result.type
        if not isinstance(t, MemrefType):
            result_error(ctx, self, f"result type must be a memref, got {t}")
            return
        if DYNAMIC in t.shape or DYNAMIC in t.stride:
            result_error(ctx, self, f"the size of {t} must be known at compile time "
                                    f"(no '?' in shape or stride)")
        if t.space is not AddressSpace.LOCAL:
            result_error(ctx, self, f"the result must be in the local address space, got {t}")
        problems = attr_checks.unknown_names(self.attrs, attr_checks.ALLOCA_ATTRIBUTES, "alloca")
        if "alignment" in self.attrs:
            problems += attr_checks.alignment_problems(self.attrs["alignment"], t.element)
        for problem in problems:
            inst_error(ctx, self, problem)


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
        return _scheduled(cls(_transposes(s, 1)[0], *s.operands, atomic=_atomic(s)), s)

    def modifiers(self, newest: bool = False) -> str:
        t = _transpose_suffix(self.transpose)
        return super().modifiers() + t if newest else t + super().modifiers()


class Axpby(TransposedUpdate):
    """B := alpha op(A) + beta B."""

    opname = "axpby"
    keywords = ("axpby",)
    syntax = transpose_syntax(1) + ' LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.ELEMENTWISE
    fixed_defaults = k.ONE_PER_LANE

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """op(A)."""
        return _op(inputs[0], self.transpose)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """op(A) itself costs nothing; the update does the work."""
        return 0.0

    def verify(self, ctx: "VerifyContext") -> None:
        """B := alpha op(A) + beta B with shape(B) = shape(op(A)), order(B) <= 2."""
        types = blas_memrefs(ctx, self, ("A", "B"))
        if types is None:
            return
        A, B = types
        if expect_order(ctx, self, 3, "B", B, (0, 1, 2)):
            check_shapes_equal(ctx, self, "B", B.shape, "op(A)", op_shape(A, self.transpose),
                               [self.operands[1], self.operands[3]])

    def size_rules(self) -> list[SizeRule]:
        """shape(B) = shape(op(A))."""
        order = self.output.type.order
        transposed = self.transpose and order == 2
        return [SizeRule((3, k), (1, _op_mode(transposed, k)), f"mode {k} of B = mode {k} of op(A)")
                for k in range(order)]


class Cumsum(BlasInstruction):
    """B := alpha A ×_n L + beta B: inclusive prefix sum along mode n."""

    opname = "cumsum"
    keywords = ("cumsum",)
    syntax = 'atomic? LOCAL_ID "," LOCAL_ID "," INTEGER "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.knobs(
        k.tile("[chunks of S elements scanned per loop step along mode 0, 1] (the carry runs "
               "through them in order)", k.TILE_ROWS, k.ONE),
        k.fixed("k_unroll", "a scan step depends on the previous one", 1),
        k.NOTHING_TO_STAGE, k.NEIGHBOURS)
    fixed_defaults = k.ONE_PER_LANE

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """Inclusive prefix sums of A along mode n."""
        return inputs[0].cumsum(axis=self.mode)

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        return shapes[0][self.mode]

    def accumulators(self, tile: Sequence[int]) -> int:
        """The running sum and the scan of each line."""
        return 2 * tile[1]

    def __init__(self, alpha: Value, A: Value, mode: int, beta: Value, B: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A], beta, B, atomic, span)
        self.mode = mode

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Cumsum":
        alpha, A, beta, B = s.operands
        return _scheduled(cls(alpha, A, s.literals[0], beta, B, atomic=_atomic(s)), s)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """One add per element of A."""
        return float(prod(shape_of(self.inputs[0])))

    def format(self, p: "Printer") -> str:
        a, A, beta, B = (p.v(v) for v in self.operands)
        return f"cumsum{self.modifiers(p.newest)} {a}, {A}, {self.mode}, {beta}, {B}{self.schedule_text(p)}"

    def verify(self, ctx: "VerifyContext") -> None:
        """order(A) >= 1, shape(A) = shape(B), summation mode in range (from 0)."""
        types = blas_memrefs(ctx, self, ("A", "B"))
        if types is None:
            return
        A, B = types
        if A.order < 1:
            inst_error(ctx, self, f"A must have order 1 or more, got order 0 ({A})", [self.operands[1]])
            return
        if not 0 <= self.mode < A.order:
            inst_error(ctx, self, f"summation mode {self.mode} is out of range for A of order "
                                  f"{A.order} (modes count from 0)", [self.operands[1]])
        check_shapes_equal(ctx, self, "B", B.shape, "A", A.shape, [self.operands[1], self.operands[3]])

    def size_rules(self) -> list[SizeRule]:
        """shape(B) = shape(A)."""
        return [SizeRule((3, k), (1, k), f"mode {k} of B = mode {k} of A")
                for k in range(self.output.type.order)]


class Gemm(BlasInstruction):
    """C := alpha op1(A) op2(B) + beta C."""

    opname = "gemm"
    keywords = ("gemm",)
    syntax = (transpose_syntax(2) + ' LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID'
              + SCHEDULE_SYNTAX)
    knobs = k.knobs(
        k.tile("register tile of C per subgroup step: [row blocks of S rows, columns]",
               k.TILE_ROWS, k.IntRange(1, 32)),
        k.k_unroll("K step: columns of op(A) per multiply-add step (the K loop unrolled by it)",
                   16, (1, 2, 4, 8)),
        k.MATMUL_STAGE, k.MATMUL_VECTOR,
        Knob("swap", "compute Cᵀ = op(B)ᵀ op(A)ᵀ and store it transposed (then `tile`, `stage` "
                     "and `vector_width` apply to that product, whose rows are C's columns); "
                     "stage must be false", k.Choice((False, True)), (False, True)))

    def matmul(self, swap: bool = False) -> MatmulShape:
        """C (M×N) += op(A) op(B); with `swap`, the product the lowering computes instead:
        Cᵀ = op(B)ᵀ op(A)ᵀ, whose rows are C's columns and whose first operand is B."""
        (a, b), c = (v.type for v in self.inputs), self.output.type
        if swap:
            return MatmulShape(_static(c, 1), _static(c, 0), _static(b, 1 if self.transpose_b else 0),
                               c.element, b.element, not self.transpose_b, b, not self.transpose_a)
        return MatmulShape(_static(c, 0), _static(c, 1), _static(a, 0 if self.transpose_a else 1),
                           c.element, a.element, self.transpose_a, a, self.transpose_b)

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """op(A) op(B)."""
        A, B = inputs
        return _op(A, self.transpose_a) @ _op(B, self.transpose_b)

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        return shapes[0][0 if self.transpose_a else 1]

    def __init__(self, transpose_a: bool, transpose_b: bool, alpha: Value, A: Value, B: Value,
                 beta: Value, C: Value, atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A, B], beta, C, atomic, span)
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Gemm":
        ta, tb = _transposes(s, 2)
        return _scheduled(cls(ta, tb, *s.operands, atomic=_atomic(s)), s)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """2·M·N·K."""
        a = shape_of(self.inputs[0])
        return 2.0 * prod(shape_of(self.output)) * (a[0] if self.transpose_a else a[1])

    def modifiers(self, newest: bool = False) -> str:
        t = _transpose_suffix(self.transpose_a) + _transpose_suffix(self.transpose_b)
        return super().modifiers() + t if newest else t + super().modifiers()

    def verify(self, ctx: "VerifyContext") -> None:
        """Matrices whose shapes chain: op(A) is MxK, op(B) is KxN, C is MxN."""
        types = blas_memrefs(ctx, self, ("A", "B", "C"))
        if types is None:
            return
        ok = all([expect_order(ctx, self, 1, "A", types[0], (2,)),
                  expect_order(ctx, self, 2, "B", types[1], (2,)),
                  expect_order(ctx, self, 4, "C", types[2], (2,))])
        if not ok:
            return
        (m, k), (k2, n) = op_shape(types[0], self.transpose_a), op_shape(types[1], self.transpose_b)
        rows, cols = types[2].shape
        mats = [self.operands[1], self.operands[2], self.operands[4]]
        check_size_match(ctx, self, "columns of op(A)", k, "rows of op(B)", k2, mats)
        check_size_match(ctx, self, "rows of C", rows, "rows of op(A)", m, mats)
        check_size_match(ctx, self, "columns of C", cols, "columns of op(B)", n, mats)

    def size_rules(self) -> list[SizeRule]:
        """op(A) is MxK, op(B) KxN, C MxN."""
        ta, tb = self.transpose_a, self.transpose_b
        return [SizeRule((1, _op_mode(ta, 1)), (2, _op_mode(tb, 0)), "columns of op(A) = rows of op(B)"),
                SizeRule((4, 0), (1, _op_mode(ta, 0)), "rows of C = rows of op(A)"),
                SizeRule((4, 1), (2, _op_mode(tb, 1)), "columns of C = columns of op(B)")]


class Gemv(BlasInstruction):
    """c := alpha op(A) b + beta c."""

    opname = "gemv"
    keywords = ("gemv",)
    syntax = (transpose_syntax(1) + ' LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID'
              + SCHEDULE_SYNTAX)
    knobs = k.knobs(
        k.tile("register tile of c per subgroup step: [row blocks of S rows, 1]", k.TILE_ROWS, k.ONE),
        k.k_unroll("K step: columns of op(A) per multiply-add step", 16, (1, 2, 4, 8, 16)),
        k.MATMUL_STAGE, k.MATMUL_VECTOR)

    def matmul(self, swap: bool = False) -> MatmulShape:
        """c (M×1) += op(A) (M×K) b (K×1)."""
        (a, _), c = (v.type for v in self.inputs), self.output.type
        return MatmulShape(_static(c, 0), 1, _static(a, 0 if self.transpose else 1), c.element,
                           a.element, self.transpose, a)

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """op(A) b."""
        A, b = inputs
        return _op(A, self.transpose) @ b

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        return shapes[0][0 if self.transpose else 1]

    def __init__(self, transpose: bool, alpha: Value, A: Value, b: Value, beta: Value,
                 c: Value, atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [A, b], beta, c, atomic, span)
        self.transpose = transpose

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Gemv":
        return _scheduled(cls(_transposes(s, 1)[0], *s.operands, atomic=_atomic(s)), s)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """2·M·K: a multiply-add per element of A."""
        return 2.0 * prod(shape_of(self.inputs[0]))

    def modifiers(self, newest: bool = False) -> str:
        t = _transpose_suffix(self.transpose)
        return super().modifiers() + t if newest else t + super().modifiers()

    def verify(self, ctx: "VerifyContext") -> None:
        """op(A) is MxK, b has K rows, c has M rows."""
        types = blas_memrefs(ctx, self, ("A", "b", "c"))
        if types is None:
            return
        ok = all([expect_order(ctx, self, 1, "A", types[0], (2,)),
                  expect_order(ctx, self, 2, "b", types[1], (1,)),
                  expect_order(ctx, self, 4, "c", types[2], (1,))])
        if not ok:
            return
        m, k = op_shape(types[0], self.transpose)
        vals = [self.operands[1], self.operands[2], self.operands[4]]
        check_size_match(ctx, self, "columns of op(A)", k, "rows of b", types[1].shape[0], vals)
        check_size_match(ctx, self, "rows of c", types[2].shape[0], "rows of op(A)", m, vals)

    def size_rules(self) -> list[SizeRule]:
        """op(A) is MxK, b has K rows, c M rows."""
        t = self.transpose
        return [SizeRule((1, _op_mode(t, 1)), (2, 0), "columns of op(A) = rows of b"),
                SizeRule((4, 0), (1, _op_mode(t, 0)), "rows of c = rows of op(A)")]


class Ger(BlasInstruction):
    """C := alpha a b^T + beta C."""

    opname = "ger"
    keywords = ("ger",)
    syntax = 'atomic? LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.knobs(
        k.tile("register tile of C per subgroup step: [row blocks of S rows, columns]",
               k.TILE_ROWS, k.IntRange(1, 32)),
        k.fixed("k_unroll", "K is 1 in a rank-1 update", 1),
        k.fixed("stage", "a is a vector read once per tile: nothing to stage", False),
        k.fixed("vector_width", "a is read across lanes (contiguous), b as uniform values", 1))

    def matmul(self, swap: bool = False) -> MatmulShape:
        """C (M×N) += a (M×1) bᵀ (1×N)."""
        (a, _), c = (v.type for v in self.inputs), self.output.type
        return MatmulShape(_static(c, 0), _static(c, 1), 1, c.element, a.element, False, a)

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """a bᵀ."""
        a, b = inputs
        return a[:, None] * b[None, :]

    def __init__(self, alpha: Value, a: Value, b: Value, beta: Value, C: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [a, b], beta, C, atomic, span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Ger":
        return _scheduled(cls(*s.operands, atomic=_atomic(s)), s)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """One multiply a_i·b_j per element of C."""
        return float(prod(shape_of(self.output)))

    def verify(self, ctx: "VerifyContext") -> None:
        """Vectors a (M) and b (N), matrix C (MxN)."""
        types = blas_memrefs(ctx, self, ("a", "b", "C"))
        if types is None:
            return
        ok = all([expect_order(ctx, self, 1, "a", types[0], (1,)),
                  expect_order(ctx, self, 2, "b", types[1], (1,)),
                  expect_order(ctx, self, 4, "C", types[2], (2,))])
        if not ok:
            return
        vals = [self.operands[1], self.operands[2], self.operands[4]]
        rows, cols = types[2].shape
        check_size_match(ctx, self, "rows of C", rows, "rows of a", types[0].shape[0], vals)
        check_size_match(ctx, self, "columns of C", cols, "rows of b", types[1].shape[0], vals)

    def size_rules(self) -> list[SizeRule]:
        """C is MxN for a of M rows and b of N rows."""
        return [SizeRule((4, 0), (1, 0), "rows of C = rows of a"),
                SizeRule((4, 1), (2, 0), "columns of C = rows of b")]


class HadamardProduct(BlasInstruction):
    """c := alpha a ∘ b + beta c (element-wise product)."""

    opname = "hadamard_product"
    keywords = ("hadamard_product", "hadamard")
    versions = {"hadamard_product": Std.SEED}
    syntax = 'atomic? LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.ELEMENTWISE
    fixed_defaults = k.ONE_PER_LANE

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """a ∘ b."""
        a, b = inputs
        return a * b

    def __init__(self, alpha: Value, a: Value, b: Value, beta: Value, c: Value,
                 atomic: bool = False, span: Span | None = None):
        super().__init__(alpha, [a, b], beta, c, atomic, span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "HadamardProduct":
        return _scheduled(cls(*s.operands, atomic=_atomic(s)), s)

    @property
    def title(self) -> str:
        return self.spelling or self.opname

    def format(self, p: "Printer") -> str:
        """`hadamard` in the newest language; the seed spec's `hadamard_product` otherwise
        (the seed's implementation read `hadamard` too, and so does tinyc)."""
        word = "hadamard" if p.newest else "hadamard_product"
        return f"{word}{self.modifiers()} " + ", ".join(p.v(v) for v in self.operands)

    def term_flops(self, shape_of: ShapeOf) -> float:
        """One multiply per element."""
        return float(prod(shape_of(self.output)))

    def verify(self, ctx: "VerifyContext") -> None:
        """a, b, c of one order (1 or 2) and one shape."""
        types = blas_memrefs(ctx, self, ("a", "b", "c"))
        if types is None:
            return
        a, b, c = types
        if not expect_order(ctx, self, 1, "a", a, (1, 2)):
            return
        vals = [self.operands[1], self.operands[2], self.operands[4]]
        check_shapes_equal(ctx, self, "b", b.shape, "a", a.shape, vals)
        check_shapes_equal(ctx, self, "c", c.shape, "a", a.shape, vals)

    def size_rules(self) -> list[SizeRule]:
        """a, b and c of one shape."""
        order = self.output.type.order
        return ([SizeRule((2, k), (1, k), f"mode {k} of b = mode {k} of a") for k in range(order)]
                + [SizeRule((4, k), (1, k), f"mode {k} of c = mode {k} of a") for k in range(order)])


class Sum(TransposedUpdate):
    """b := alpha op(A) 1 + beta b (row sums, or the sum of a vector)."""

    opname = "sum"
    keywords = ("sum",)
    syntax = transpose_syntax(1) + ' LOCAL_ID "," LOCAL_ID "," LOCAL_ID "," LOCAL_ID' + SCHEDULE_SYNTAX
    knobs = k.knobs(
        k.tile("[independent partial sums per lane, 1] (more than 1 changes the order of the "
               "additions)", k.TILE_ROWS, k.ONE),
        k.k_unroll("elements added to each partial sum per loop step (in order)", 8, (1, 2, 4, 8)),
        k.NOTHING_TO_STAGE, k.NEIGHBOURS)
    fixed_defaults = k.ONE_PER_LANE
    order_changing = ("tile",)

    def evaluate(self, inputs: Sequence["np.ndarray"]) -> "np.ndarray":
        """The row sums of op(A), or the sum of a vector."""
        (A,) = inputs
        return A.sum() if A.ndim == 1 else _op(A, self.transpose).sum(axis=1)

    def summed_terms(self, shapes: Sequence[tuple[int, ...]]) -> int:
        (shape,) = shapes
        return shape[0] if len(shape) == 1 else shape[0 if self.transpose else 1]

    def accumulators(self, tile: Sequence[int]) -> int:
        """One partial sum per tile row."""
        return tile[0]

    def term_flops(self, shape_of: ShapeOf) -> float:
        """One add per element of A."""
        return float(prod(shape_of(self.inputs[0])))

    def verify(self, ctx: "VerifyContext") -> None:
        """b of order 0 or 1, A of order(b) + 1, rows(b) = rows(op(A))."""
        types = blas_memrefs(ctx, self, ("A", "b"))
        if types is None:
            return
        A, b = types
        if not expect_order(ctx, self, 3, "b", b, (0, 1)):
            return
        if not expect_order(ctx, self, 1, "A", A, (b.order + 1,)):
            return
        if b.order == 1:
            check_size_match(ctx, self, "rows of b", b.shape[0], "rows of op(A)",
                             op_shape(A, self.transpose)[0], [self.operands[1], self.operands[3]])

    def size_rules(self) -> list[SizeRule]:
        """rows(b) = rows(op(A)) when b is a vector."""
        if self.output.type.order != 1:
            return []
        transposed = self.transpose and self.inputs[0].type.order == 2
        return [SizeRule((3, 0), (1, _op_mode(transposed, 0)), "rows of b = rows of op(A)")]


class RangeLoop(Instruction):
    """Operands: the lower bounds, then the upper bounds of a multi-dimensional range; one SPMD
    region (foreach, foreach_tile)."""

    abstract = True
    kind = Kind.COLLECTIVE
    region_kind = Kind.SPMD

    @property
    def dims(self) -> int:
        return len(self.operands) // 2

    @property
    def lower(self) -> list[Value]:
        return self.operands[: self.dims]

    @property
    def upper(self) -> list[Value]:
        return self.operands[self.dims:]

    @property
    def body(self) -> Region:
        return self.regions[0]

    def lint(self, ctx: "LintContext") -> None:
        empty_range(ctx, self, list(zip(self.lower, self.upper)))


class Foreach(RangeLoop):
    """A multi-dimensional loop whose iterations are spread over the work-items.

    Operands are the lower bounds then the upper bounds; the body is an SPMD
    region whose arguments are the loop variables.
    """

    opname = "foreach"
    keywords = ("foreach",)
    syntax = '"(" new_values ")" (":" integer_type)? "=" "(" values ")" "," "(" values ")" region'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """Each loop variable runs from its lower bound up to (excluding) its upper bound."""
        return IntegerFacts(ranges=tuple(LoopRange(var, lo, hi)
                                         for var, lo, hi in zip(self.body.args, self.lower, self.upper)))

    def __init__(self, loop_vars: Sequence[Value], lower: Sequence[Value], upper: Sequence[Value],
                 body: Region | None = None, loop_type: Type = index, span: Span | None = None):
        region = body if body is not None else Region()
        region.args = list(loop_vars)
        for v in loop_vars:
            v.owner = region
        super().__init__([*lower, *upper], regions=[region], span=span)
        self.loop_type = loop_type

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Foreach":
        names, lower_part, upper_part = s.parts
        lower, upper, n_vars = lower_part.values, upper_part.values, len(s.names)
        if not n_vars == len(lower) == len(upper):
            s.error(f"foreach has {n_vars} loop variables, {len(lower)} lower and {len(upper)} "
                    "upper bounds; the three lists must have the same length",
                    names.span.join(upper_part.span))
        n = min(len(lower), len(upper))
        loop_type = loop_type_of(s, lower[0] if lower else None)
        loop_vars = [Value(loop_type) for _ in range(n_vars)]
        loop = cls(loop_vars, lower[:n], upper[:n], s.region(0, loop_vars), loop_type)
        loop.loop_type_written = s.type is not None
        return loop

    def format(self, p: "Printer") -> str:
        loop_vars = ", ".join(p.v(v) for v in self.body.args)
        ty = "" if self.loop_type is index or p.newest else f":{self.loop_type}"
        lower = ", ".join(p.v(v) for v in self.lower)
        upper = ", ".join(p.v(v) for v in self.upper)
        return f"foreach ({loop_vars}){ty} = ({lower}), ({upper}) {p.region(self.body)}"

    def verify(self, ctx: "VerifyContext") -> None:
        """As many lower and upper bounds as loop variables, all of the integer loop type."""
        n_vars, n_bounds = len(self.body.args), len(self.operands)
        if n_vars == 0 or n_bounds != 2 * n_vars:
            inst_error(ctx, self, f"the loop has {n_vars} variables and {n_bounds} bounds; it needs "
                                  f"one lower and one upper bound per variable")
            return
        ty = self.loop_type
        if not is_int(ty):
            inst_error(ctx, self, f"the loop type must be an integer type, got {ty}")
            return
        if not check_seed_loop_type(ctx, self, ty, "foreach (%i, ...)"):
            return
        for k, var in enumerate(self.body.args):
            if var.type is not ty:
                ctx.error(f"foreach: loop variable {k} must have the loop type {ty}, got {var.type}",
                          var.span or self.span)
        for k in range(n_vars):
            expect_type(ctx, self, k, f"lower bound {k}", ty, " (the loop type)")
            expect_type(ctx, self, n_vars + k, f"upper bound {k}", ty, " (the loop type)")


class ForeachTile(RangeLoop):
    """A loop over tiles of a range, one tile per subgroup at a time (newest language).

    Operands are the lower bounds then the upper bounds; `tile_shape` holds
    the constant tile shape. The body is an SPMD region whose arguments are
    the tile offsets, then the tile sizes (the shape, clipped at the range's
    end). Offsets are dynamically uniform: a subgroup runs the body for one
    tile with all its work-items.
    """

    opname = "foreach_tile"
    keywords = ("foreach_tile",)
    versions = {"foreach_tile": Std.NEWEST}
    syntax = ('"(" new_values ")" "=" "(" values ")" "," "(" values ")" '
              '"as" "(" new_values ")" "<=" "(" INTEGER ("," INTEGER)* ")" region')
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """Tile offsets step by the tile shape below the upper bounds; a tile's size is at
        least 1 and at most the shape, clipped at the upper bound."""
        dims = range(min(len(self.offsets), len(self.sizes), len(self.tile_shape), self.dims))
        ranges = [LoopRange(self.offsets[k], self.lower[k], self.upper[k], self.tile_shape[k]) for k in dims]
        ranges += [TileRange(self.sizes[k], self.offsets[k], self.upper[k], self.tile_shape[k]) for k in dims]
        return IntegerFacts(ranges=tuple(ranges))

    def __init__(self, offsets: Sequence[Value], sizes: Sequence[Value], lower: Sequence[Value],
                 upper: Sequence[Value], tile_shape: Sequence[int], body: Region | None = None,
                 span: Span | None = None):
        region = body if body is not None else Region()
        region.args = [*offsets, *sizes]
        for v in region.args:
            v.owner = region
        super().__init__([*lower, *upper], regions=[region], span=span)
        self.tile_shape = list(tile_shape)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "ForeachTile":
        """Offsets and sizes take the type of their mode's lower bound."""
        names, lower_part, upper_part, sizes_part = s.parts[:4]
        lower, upper = lower_part.values, upper_part.values
        n_vars, n_sizes = len(names.names_here), len(sizes_part.names_here)
        shape = [s.nonnegative(k, "tile shape entry") for k in range(len(s.literals))]
        if not n_vars == len(lower) == len(upper) == n_sizes == len(shape):
            s.error(f"foreach_tile has {n_vars} tile offsets, {len(lower)} lower and {len(upper)} "
                    f"upper bounds, {n_sizes} tile sizes and a tile shape of {len(shape)} modes; "
                    f"all must have the same length", s.span)
        types = [v.type if is_int(v.type) else index for v in lower]
        types += [index] * (max(n_vars, n_sizes) - len(types))
        offsets = [Value(types[k]) for k in range(n_vars)]
        sizes = [Value(types[k]) for k in range(n_sizes)]
        n = min(len(lower), len(upper))
        return cls(offsets, sizes, lower[:n], upper[:n], shape, s.region(0, offsets + sizes))

    @property
    def offsets(self) -> list[Value]:
        return self.body.args[: len(self.body.args) // 2]

    @property
    def sizes(self) -> list[Value]:
        return self.body.args[len(self.body.args) // 2:]

    def format(self, p: "Printer") -> str:
        if not p.newest:
            p.cannot(self, "'foreach_tile'")
        offsets = ", ".join(p.v(v) for v in self.offsets)
        sizes = ", ".join(p.v(v) for v in self.sizes)
        lower = ", ".join(p.v(v) for v in self.lower)
        upper = ", ".join(p.v(v) for v in self.upper)
        shape = ", ".join(map(str, self.tile_shape))
        return (f"foreach_tile ({offsets}) = ({lower}), ({upper}) as ({sizes}) <= ({shape}) "
                f"{p.region(self.body)}")

    def subgroup_multiples(self, std: Std) -> list[tuple[int, str]]:
        """The first mode of the tile shape is a multiple of the subgroup size."""
        return [(self.tile_shape[0], "the first mode of the tile shape")] if self.tile_shape else []

    def verify(self, ctx: "VerifyContext") -> None:
        """Lists of one length; a from/to pair of one integer type; a positive tile shape."""
        n = self.dims
        if n == 0 or len(self.body.args) != 2 * n or len(self.tile_shape) != n:
            inst_error(ctx, self, f"the loop has {len(self.offsets)} tile offsets, {n} lower and "
                                  f"upper bounds, {len(self.sizes)} tile sizes and a tile shape of "
                                  f"{len(self.tile_shape)} modes; it needs the same number of each")
            return
        for k in range(n):
            lo = self.lower[k].type
            if not is_int(lo):
                inst_error(ctx, self, f"lower bound {k} must have an integer type, got {lo}",
                           [self.lower[k]])
                continue
            expect_type(ctx, self, n + k, f"upper bound {k}", lo, f" (the type of lower bound {k})")
            for var, what in ((self.offsets[k], "tile offset"), (self.sizes[k], "tile size")):
                if var.type is not lo:
                    ctx.error(f"foreach_tile: {what} {k} must have type {lo}, got {var.type}",
                              var.span or self.span)
        for k, size in enumerate(self.tile_shape):
            if size < 1:
                inst_error(ctx, self, f"the tile shape must be positive, got {size} in mode {k}")


class Parallel(Instruction):
    """Runs its SPMD region on every work-item of the work-group."""

    opname = "parallel"
    kind = Kind.COLLECTIVE
    region_kind = Kind.SPMD
    keywords = ("parallel",)
    syntax = "region"
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, body: Region | None = None, span: Span | None = None):
        super().__init__(regions=[body if body is not None else Region()], span=span)

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Parallel":
        return cls(s.region())

    @property
    def body(self) -> Region:
        return self.regions[0]

    def format(self, p: "Printer") -> str:
        return f"parallel {p.region(self.body)}"
