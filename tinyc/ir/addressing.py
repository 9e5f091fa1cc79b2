"""Where an instruction addresses memory, and which integers it computes: what analyses ask.

Two questions every instruction class answers (tests/test_instruction_definitions.py
checks that each class does, in its own body or through a base):

    inst.addressing() -> Addressing
        footprints  per memref operand it reads or writes, the entries it touches:
                    per mode a start and a count, in the operand's own modes
                    (an element: (index, 1); a collective's operand: every entry)
        view        how its result views an operand's memory: a subview's offsets and
                    sizes, an expand's split, a fuse's merge, a group's member index
        loaded      the results whose values were read from memory (so anything
                    computed from them depends on the data, not on the launch)
        rules       collectives: the operand sizes that must agree (SizeRule)

    inst.integer_facts() -> IntegerFacts
        value       the integer (or bool) its result computes, as an IntOp
        ranges      region arguments with known bounds (loop variables, tiles)
        guard       the region that runs only when a condition holds (`if`)
        chooses     its results are the values yielded by the region that ran (`if`)

The defaults on Instruction are conservative: an instruction that does not
describe itself touches its memory operands "somewhere" (footprint modes
None: an analysis cannot bound it, so a launch checks it), loads every result
if it touches memory, views nothing and computes no known integer.

An analysis is a walk that asks these questions; it never tests instruction
classes. A new instruction answers once, here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from tinyc.ir.core import EffectKind, Value

Operand = Union["Value", int]
"""An index-typed value, or a constant known when the instruction was made."""


@dataclass(frozen=True, init=False)
class ModeSpan:
    """Entries start .. start + count - 1 of one mode.

    `count` None: every entry from `start` to the end of the mode (a whole mode
    when start is 0). `clipped`: entries outside the mode are skipped, not
    touched (a checked cooperative-matrix access), so the span cannot leave it.
    """

    start: Operand
    count: Operand | None = 1
    clipped: bool = False

    def __init__(self, start: Operand, count: Operand | None = 1, clipped: bool = False):
        # (one per index of every access: a frozen dataclass's own __init__ takes 3x as long;
        # fields at their defaults are the class's)
        fields = self.__dict__
        fields["start"] = start
        if count != 1:
            fields["count"] = count
        if clipped:
            fields["clipped"] = clipped


WHOLE_SPAN = ModeSpan(0, None)
"""Every entry of a mode."""


@dataclass(frozen=True, init=False)
class Footprint:
    """The entries of one memref operand an instruction touches, and how.

    `modes` holds one ModeSpan per mode of the operand; None when the
    instruction does not say (somewhere in the operand)."""

    operand: "Value"
    kind: "EffectKind"
    modes: tuple[ModeSpan, ...] | None

    def __init__(self, operand: "Value", kind: "EffectKind", modes: tuple[ModeSpan, ...] | None):
        self.__dict__.update(operand=operand, kind=kind, modes=modes)  # (as ModeSpan's)

    @classmethod
    def element(cls, operand: "Value", kind: "EffectKind", indices: "list[Value]") -> "Footprint":
        """One element: an index per mode."""
        return cls(operand, kind, tuple([ModeSpan(i) for i in indices]))

    @classmethod
    def whole(cls, operand: "Value", kind: "EffectKind") -> "Footprint":
        """Every element of the operand (a collective's operand)."""
        return cls(operand, kind, (WHOLE_SPAN,) * getattr(operand.type, "order", 0))


@dataclass(frozen=True, init=False)
class SliceView:
    """A subview: per mode of `source`, the entries kept (count 0: one entry, the mode dropped).

    `extra_modes` > 0: the result has that many more modes than the slices keep,
    with strides of their own (newest language); they address memory in no mode
    of the source."""

    source: "Value"
    modes: tuple[ModeSpan, ...]
    extra_modes: int = 0

    def __init__(self, source: "Value", modes: tuple[ModeSpan, ...], extra_modes: int = 0):
        self.__dict__.update(source=source, modes=modes, extra_modes=extra_modes)  # (as ModeSpan's)


@dataclass(frozen=True)
class SplitView:
    """An expand: mode `mode` of `source` split into modes of sizes `shape` (first fastest)."""

    source: "Value"
    mode: int
    shape: tuple[Operand, ...]


@dataclass(frozen=True)
class MergeView:
    """A fuse: modes first .. last of `source` merged into one (first fastest)."""

    source: "Value"
    first: int
    last: int


@dataclass(frozen=True)
class MemberView:
    """A group's member: entry `index` of the group's table of memrefs."""

    source: "Value"
    index: Operand


View = Union[SliceView, SplitView, MergeView, MemberView]


@dataclass(frozen=True)
class SizeRule:
    """Mode `left[1]` of operand `left[0]` must equal mode `right[1]` of operand `right[0]`.

    A collective's shape rule as (operand index, mode) pairs: the verifier
    checks the sizes known at compile time; launches check the `?` ones, and
    `tinyc run` makes related `?` sizes agree.
    """

    left: tuple[int, int]
    right: tuple[int, int]
    what: str  # e.g. "columns of op(A) = rows of op(B)"


@dataclass(frozen=True, init=False)
class Addressing:
    """An instruction's answer to "where do you address memory" (module docs)."""

    footprints: tuple[Footprint, ...] = ()
    view: View | None = None
    loaded: tuple["Value", ...] = ()
    rules: tuple[SizeRule, ...] | None = None

    def __init__(self, footprints: tuple[Footprint, ...] = (), view: View | None = None,
                 loaded: tuple["Value", ...] = (), rules: tuple[SizeRule, ...] | None = None):
        fields = self.__dict__  # (as ModeSpan's: only the fields given)
        if footprints:
            fields["footprints"] = footprints
        if view is not None:
            fields["view"] = view
        if loaded:
            fields["loaded"] = loaded
        if rules is not None:
            fields["rules"] = rules


NO_ADDRESSING = Addressing()


@dataclass(frozen=True, init=False)
class IntOp:
    """The integer (or bool) an instruction's result computes from its operands.

    `op` is one of:
      "constant" (value,)
      "add" "sub" "mul" "div" "rem" "min" "max" "shl" "shr" "and" "or" "xor"  (a, b)
          C semantics on the result type (div truncates, rem takes the dividend's sign);
          on bools, and/or/xor are logical
      "neg" "abs" "not"  (a,)
      "cast"  (a,): a converted to the result type (an integer type: wraps if it does not fit)
      "lt" "le" "gt" "ge" "eq" "ne"  (a, b): a bool
      "size"  (tensor, mode): a memref's mode size, or a group's member count (mode 0)
      a builtin's name (tinyc.ir.instructions.BuiltinName values, e.g. "group_id",
          "group_size", "subgroup_local_id")  ()
    """

    op: str
    args: tuple = ()

    def __init__(self, op: str, args: tuple = ()):
        self.__dict__.update(op=op, args=args)  # (as ModeSpan's)


@dataclass(frozen=True)
class LoopRange:
    """A region argument that runs over lower, lower + step, ... below upper (step None: 1).

    The loop runs no iteration when lower >= upper (or when the step is not positive)."""

    var: "Value"
    lower: "Value"
    upper: "Value"
    step: "Value | int | None" = None


@dataclass(frozen=True)
class TileRange:
    """A tile size of foreach_tile: between 1 and min(tile, upper - offset)."""

    var: "Value"
    offset: "Value"
    upper: "Value"
    tile: int


@dataclass(frozen=True)
class Guard:
    """Region `then` runs only when `condition` is true; region `otherwise` (if any) when false."""

    condition: "Value"
    then: int = 0
    otherwise: int | None = 1


@dataclass(frozen=True, init=False)
class IntegerFacts:
    """An instruction's answer to "which integers do you compute" (module docs)."""

    value: IntOp | None = None
    ranges: tuple[LoopRange | TileRange, ...] = ()
    guard: Guard | None = None
    chooses: bool = False  # result k is value k of the `yield` ending the region that ran

    def __init__(self, value: IntOp | None = None, ranges: tuple[LoopRange | TileRange, ...] = (),
                 guard: Guard | None = None, chooses: bool = False):
        self.__dict__.update(value=value, ranges=ranges, guard=guard, chooses=chooses)  # (as IntOp's)


NO_INTEGER_FACTS = IntegerFacts()
