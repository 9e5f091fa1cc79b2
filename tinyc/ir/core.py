"""The SSA IR: values, instructions with nested regions, functions, programs.

An `Instruction` subclass is the one definition of a tensor-language
instruction. Its class holds everything about the instruction itself:

    keywords      its spellings (a tuple, or a dict: spelling -> what it selects)
    versions      the spellings of one version only (`arith.add`: seed, `add`: newest)
    syntax        its shape after the keyword, in tensor.lark's notation
    from_syntax   how the parser's reading of that shape becomes an instance
    format        its printer (the text after `results =`)
    kind          where it may appear; `region_kind`: what its regions are
    verify        the spec's restrictions
    memory_accesses   which memref/group operands it reads or writes
    addressing    where it addresses them: footprints, views, loaded results
                  (tinyc/ir/addressing.py; `view_source` is derived from it)
    integer_facts the integers it computes, loop ranges, guards (addressing.py)
    flops         (collectives) its work model, for `tinyc bench` and benchmarks/

The parser's grammar, builders and hint lists, the verifier's region rules,
the memory-effect analysis and the work model are derived from these; the
layers that turn an instruction into something else (lowering passes, SPIR-V
emitters, the reference interpreter) register per class, and
tests/test_instruction_definitions.py checks that every class has each.
See docs/instructions.md for adding one.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.addressing import NO_ADDRESSING, NO_INTEGER_FACTS, Addressing, Footprint, IntegerFacts
from tinyc.ir.types import GroupType, MemrefType, Type
from tinyc.std import DEFAULT, Std, Version

if TYPE_CHECKING:
    from tinyc.ir.knobs import Knob
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.lint import LintContext
    from tinyc.parser.instructions import Parsed


class Kind(Enum):
    """Where an instruction may appear (spec: execution model)."""

    COLLECTIVE = "collective"
    SPMD = "spmd"
    MIXED = "mixed"


class EffectKind(Enum):
    """How an instruction touches the memory of a memref or group operand."""

    READ = "read"
    WRITE = "write"
    ATOMIC_ADD = "atomic_add"   # an atomic accumulation; commutes with other atomic adds


class Value:
    """An SSA value: a function argument, region argument or instruction result."""

    __slots__ = ("type", "name", "span", "owner", "attrs", "type_span")

    def __init__(self, type: Type, name: str | None = None, span: Span | None = None,
                 owner: "Instruction | Region | Function | None" = None):
        self.type = type
        self.name = name          # source name without '%', None for compiler-made values
        self.span = span          # where the value is defined in the source
        self.owner = owner        # defining instruction, region (region args) or function
        self.attrs: dict[str, Any] = {}  # parameter attributes (alignment, shape_gcd, ...)
        self.type_span: Span | None = None  # where a function argument's type is written

    def __repr__(self) -> str:
        return f"%{self.name or '?'}: {self.type}"


class Region:
    """An ordered list of instructions with optional region arguments."""

    __slots__ = ("args", "instructions", "parent", "span")

    def __init__(self, args: Sequence[Value] = (), instructions: Sequence["Instruction"] = (),
                 span: Span | None = None):
        self.args: list[Value] = list(args)
        self.instructions: list[Instruction] = []
        self.parent: Instruction | Function | None = None
        self.span = span
        for a in self.args:
            a.owner = self
        self.instructions += instructions
        for inst in self.instructions:  # (what `append` does, without a call per instruction)
            inst.parent = self

    def append(self, inst: "Instruction") -> "Instruction":
        inst.parent = self
        self.instructions.append(inst)
        return inst

    def insert(self, position: int, inst: "Instruction") -> "Instruction":
        inst.parent = self
        self.instructions.insert(position, inst)
        return inst

    def walk(self) -> Iterator["Instruction"]:
        """All instructions, nested ones after their parent (pre-order)."""
        for inst in self.instructions:
            yield inst
            for region in inst.regions:
                yield from region.walk()

    def __iter__(self) -> Iterator["Instruction"]:
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)


Accesses = list[tuple["Value", EffectKind]]
"""(operand, how it is accessed) pairs: what `Instruction.memory_accesses` returns."""


class Instruction:
    """Base of every instruction; see the module docstring for what a subclass declares."""

    opname: ClassVar[str] = "<instruction>"
    kind: ClassVar[Kind] = Kind.MIXED
    lowered_from: "Instruction | None" = None
    """The collective whose lowering made this instruction (set by lower-collectives for
    collectives with a shape rule: such code is in bounds when the rule holds)."""
    region_kind: ClassVar[Kind | None] = None
    """SPMD for foreach/parallel bodies; None: the regions take the kind of the enclosing one."""
    region_yields: ClassVar[bool] = False
    """True when its regions end in a `yield` handing values back (for, if, cooperative_matrix_apply)."""
    keywords: ClassVar[tuple[str, ...] | dict[str, Any]] = ()
    """The spellings that start the instruction; unique across classes."""
    versions: ClassVar[dict[str, Std]] = {}
    """The keywords that belong to one version of the language only (tinyc.std)."""
    syntax: ClassVar[str | None] = None
    """What follows the keyword, as a tensor.lark rule body (None: spelled by a base class)."""
    abstract: ClassVar[bool] = False
    """True (in the class's own body) for shared bases that are no instruction themselves."""
    knobs: ClassVar[dict[str, "Knob"]] = {}
    """Its schedule knobs (collectives: tinyc/ir/knobs.py); none by default."""

    def __init__(self, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
                 regions: Sequence[Region] = (), span: Span | None = None,
                 result_names: Sequence[str | None] | None = None):
        self.operands: list[Value] = list(operands)
        if type(result_types) is list and len(result_types) == 1 and (
                result_names is None or result_names):  # most instructions: no list comprehension
            self.results: list[Value] = [
                Value(result_types[0], result_names[0] if result_names else None, span, self)]
        else:
            names = list(result_names) if result_names is not None else [None] * len(result_types)
            self.results = [Value(t, n, span, self) for t, n in zip(result_types, names)]
        self.regions: list[Region] = list(regions)
        if regions:
            for r in self.regions:
                r.parent = self
        self.span = span
        self.parent: Region | None = None
        self.operand_spans: list[Span | None] = [None] * len(self.operands)
        self.type_span: Span | None = None  # where the result type annotation is written
        self.attrs: dict[str, Any] = {}
        self.spelling: str | None = None  # the keyword as the source wrote it (parser)

    @property
    def result(self) -> Value:
        """The single result of a value instruction."""
        return self.results[0]

    def operand_span(self, i: int) -> Span | None:
        """Where operand i is written, falling back to the whole instruction."""
        if i < len(self.operand_spans) and self.operand_spans[i] is not None:
            return self.operand_spans[i]
        return self.span

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Instruction":
        """The instance for what the parser read of `syntax` (see tinyc/parser/instructions.py)."""
        raise NotImplementedError(f"{cls.__name__} has no syntax of its own")

    @property
    def title(self) -> str:
        """The instruction as the user spells it, without modifiers: `gemm`, `arith.add`."""
        return self.opname

    def format(self, p: "Printer") -> str:
        """Text after `results =`; subclasses override."""
        raise NotImplementedError(type(self).__name__)

    def verify(self, ctx: "VerifyContext") -> None:
        """Report violations of the spec's restrictions through `ctx.error`."""

    def lint(self, ctx: "LintContext") -> None:
        """Report what is legal but suspicious about this instruction (tinyc.lint; after
        verification, so the operands have the types `verify` checked)."""

    def memory_accesses(self) -> Accesses:
        """The memref and group operands this instruction itself reads and writes.

        Not those of instructions nested in its regions. Every class says
        this in its own body (a completeness test checks it); this default,
        reading and writing every memref or group operand, only keeps an
        undescribed instruction safe (barriers placed, arrays copied back).
        """
        return [(v, kind) for v in self.operands if _has_memory(v)
                for kind in (EffectKind.READ, EffectKind.WRITE)]

    def addressing(self) -> Addressing:
        """Where it addresses memory (tinyc/ir/addressing.py), not counting nested instructions.

        Every class says this in its own body or a base's (a completeness test
        checks it). This default only keeps an undescribed instruction safe:
        it touches each memory operand somewhere (unbounded, so launches check
        it), and every result of an instruction that touches memory is loaded.
        """
        accesses = self.memory_accesses()
        footprints = tuple(Footprint(v, kind, None) for v, kind in dict.fromkeys(accesses))
        return Addressing(footprints, loaded=tuple(self.results) if accesses else ())

    def integer_facts(self) -> IntegerFacts:
        """The integers it computes, its loop ranges and guards (tinyc/ir/addressing.py).

        Every class says this in its own body or a base's; the default knows nothing."""
        return NO_INTEGER_FACTS

    def float_arithmetic(self) -> "tuple[str, tuple[Value, ...]] | None":
        """("mul", (a, b)) or ("add", (a, b)) when the result is that real f32/f64 product or
        sum of two values (what codegen's fp_contract fuses into fma); None otherwise."""
        return None

    def run_flops(self) -> float:
        """Floating-point operations of one execution: per work-item for a scalar result, per
        subgroup for a coopmatrix one (the whole matrix). Collectives count theirs apart
        (`flops(shape_of)`); the work model (harness/work.py) sums both over a work-group."""
        return 0.0

    def allocates(self) -> bool:
        """Whether its result is memory it allocates (`alloca`): a memory object of its own,
        not a view of an argument."""
        return False

    def null_checked(self) -> "Value | None":
        """The memref or group operand whose base address this instruction tests for null
        (`associated`); the runtime then lets None through for that argument."""
        return None

    def view_source(self) -> "Value | None":
        """The operand whose memory the result views (subview, expand, fuse, a group's member)."""
        view = self.addressing().view
        return view.source if view is not None else None

    def kind_in(self, std: Std) -> Kind:
        """Where the instruction may appear in version `std` (`kind` unless the versions differ)."""
        return self.kind

    def subgroup_multiples(self, std: Std) -> list[tuple[int, str]]:
        """(size, what) pairs that must be multiples of the subgroup size in version `std`.

        The newest language requires it of coopmatrix rows in some instructions
        and of foreach_tile's first tile mode; the verifier checks it against a
        given subgroup size and the work-group-size pass chooses one that fits.
        """
        return []

    def __repr__(self) -> str:
        return f"<{self.opname} at {self.span}>"


def no_memory_access(self: Instruction) -> Accesses:
    """`memory_accesses` of instructions that touch no memory (`memory_accesses = no_memory_access`)."""
    return []


def no_addressing(self: Instruction) -> Addressing:
    """`addressing` of instructions that address no memory (`addressing = no_addressing`)."""
    return NO_ADDRESSING


def no_integer_facts(self: Instruction) -> IntegerFacts:
    """`integer_facts` of instructions that compute no integer the analyses use."""
    return NO_INTEGER_FACTS


def _has_memory(value: Value) -> bool:
    return isinstance(value.type, (MemrefType, GroupType))


class Function:
    """A kernel: arguments, attributes and its body region."""

    def __init__(self, name: str, args: Sequence[Value], body: Region | None = None,
                 attrs: dict[str, Any] | None = None, span: Span | None = None):
        self.name = name
        self.args = list(args)
        for a in self.args:
            a.owner = self
        self.body = body if body is not None else Region()
        self.body.parent = self
        self.attrs: dict[str, Any] = dict(attrs or {})
        self.span = span

    def walk(self) -> Iterator[Instruction]:
        return self.body.walk()


class Program:
    """A translation unit: an ordered list of functions, in one version of the language."""

    def __init__(self, functions: Sequence[Function] = (), source: Any = None,
                 version: Version | None = None):
        self.functions = list(functions)
        self.source = source
        self.version: Version = version or Version(DEFAULT, "default")
        self.warnings: list = []  # Diagnostics that are no errors, found by checking (tinyc.lint)

    @property
    def std(self) -> Std:
        """The version whose meaning the program has (tinyc.std)."""
        return self.version.std

    def __getitem__(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(f"no function '{name}'; there are: {', '.join(f.name for f in self.functions)}")


def view_root(value: Value) -> Value:
    """The value whose memory `value` views, through subview, expand, fuse and group members
    (the instructions' `view_source`); `value` itself when it is no view."""
    while True:
        source = getattr(value.owner, "view_source", None)
        found = source() if source is not None else None
        if found is None:
            return value
        value = found


def is_allocated(value: Value) -> bool:
    """Whether `value` is the result of an instruction that allocates it (`allocates()`)."""
    owner = value.owner
    return isinstance(owner, Instruction) and owner.allocates()


def replace_uses(root: Region, old: Value, new: Value) -> None:
    """Make every operand `old` inside `root` (nested regions included) refer to `new`."""
    for inst in root.walk():
        inst.operands = [new if v is old else v for v in inst.operands]


def erase(inst: Instruction) -> None:
    """Remove an instruction from its region."""
    if inst.parent is not None:
        inst.parent.instructions.remove(inst)
        inst.parent = None
