"""The SSA IR: values, instructions with nested regions, functions, programs.

An `Instruction` subclass is the one definition of a tensor-language
instruction: its spelling, kind (collective / SPMD / mixed), operands,
results, regions, printer (`format`) and checks (`verify`). Passes and the
parser build instances; nothing else needs to know an instruction's layout.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.types import Type

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext


class Kind(Enum):
    """Where an instruction may appear (spec: execution model)."""

    COLLECTIVE = "collective"
    SPMD = "spmd"
    MIXED = "mixed"


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
        for inst in instructions:
            self.append(inst)

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


class Instruction:
    """Base of every instruction; subclasses set `opname` and `kind`."""

    opname: ClassVar[str] = "<instruction>"
    kind: ClassVar[Kind] = Kind.MIXED
    lowered_from: "Instruction | None" = None
    """The collective whose lowering made this instruction (set by lower-collectives for
    collectives with a shape rule: such code is in bounds when the rule holds)."""

    def __init__(self, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
                 regions: Sequence[Region] = (), span: Span | None = None,
                 result_names: Sequence[str | None] | None = None):
        self.operands: list[Value] = list(operands)
        names = list(result_names) if result_names is not None else [None] * len(result_types)
        self.results: list[Value] = [Value(t, n, span, self) for t, n in zip(result_types, names)]
        self.regions: list[Region] = list(regions)
        for r in self.regions:
            r.parent = self
        self.span = span
        self.parent: Region | None = None
        self.operand_spans: list[Span | None] = [None] * len(self.operands)
        self.type_span: Span | None = None  # where the result type annotation is written
        self.attrs: dict[str, Any] = {}

    @property
    def result(self) -> Value:
        """The single result of a value instruction."""
        return self.results[0]

    def operand_span(self, i: int) -> Span | None:
        """Where operand i is written, falling back to the whole instruction."""
        if i < len(self.operand_spans) and self.operand_spans[i] is not None:
            return self.operand_spans[i]
        return self.span

    def format(self, p: "Printer") -> str:
        """Text after `results =`; subclasses override."""
        raise NotImplementedError(type(self).__name__)

    def verify(self, ctx: "VerifyContext") -> None:
        """Report violations of the spec's restrictions through `ctx.error`."""

    def __repr__(self) -> str:
        return f"<{self.opname} at {self.span}>"


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
    """A translation unit: an ordered list of functions."""

    def __init__(self, functions: Sequence[Function] = (), source: Any = None):
        self.functions = list(functions)
        self.source = source

    def __getitem__(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(f"no function '{name}'; there are: {', '.join(f.name for f in self.functions)}")


def replace_uses(root: Region, old: Value, new: Value) -> None:
    """Make every operand `old` inside `root` (nested regions included) refer to `new`."""
    for inst in root.walk():
        inst.operands = [new if v is old else v for v in inst.operands]


def erase(inst: Instruction) -> None:
    """Remove an instruction from its region."""
    if inst.parent is not None:
        inst.parent.instructions.remove(inst)
        inst.parent = None
