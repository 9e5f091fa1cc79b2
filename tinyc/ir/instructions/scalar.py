"""Mixed scalar instructions: constants, builtins, barrier (arithmetic, comparisons, casts and
math functions are in arith.py)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from tinyc.diagnostics import Span
from tinyc.ir.checks import constant_problem, expect_result, result_error
from tinyc.ir.addressing import NO_INTEGER_FACTS, IntegerFacts, IntOp
from tinyc.ir.core import Instruction, Kind, no_addressing, no_integer_facts, no_memory_access
from tinyc.ir.types import BoolType, ScalarType, Type, i32, index
from tinyc.std import Std

if TYPE_CHECKING:
    from tinyc.ir.printer import Printer
    from tinyc.ir.verifier import VerifyContext
    from tinyc.parser.instructions import Parsed


def is_integral(t: Type) -> bool:
    """An integer scalar or a bool: the types whose values `integer_facts` describe."""
    return isinstance(t, BoolType) or (isinstance(t, ScalarType) and t.is_int)


class BuiltinName(Enum):
    """A builtin value; one member per mode of the newest language's 3-D builtins.

    GROUP_ID and GROUP_SIZE are the seed's `builtin.group_id` and
    `builtin.group_size`: the group id and group count along the batch,
    which the newest language calls `group_id.x` and `num_groups.x`.
    NUM_SUBGROUPS (seed, all subgroups of the work-group) is the newest
    `num_subgroups.x` times `num_subgroups.y`; SUBGROUP_ID (seed) is the
    newest `subgroup_linear_id`.
    """

    GROUP_ID = "group_id"
    GROUP_ID_Y = "group_id_y"
    GROUP_ID_Z = "group_id_z"
    GROUP_SIZE = "group_size"
    NUM_GROUPS_Y = "num_groups_y"
    NUM_GROUPS_Z = "num_groups_z"
    NUM_SUBGROUPS = "num_subgroups"
    NUM_SUBGROUPS_X = "num_subgroups_x"
    NUM_SUBGROUPS_Y = "num_subgroups_y"
    NUM_SUBGROUPS_Z = "num_subgroups_z"
    SUBGROUP_SIZE = "subgroup_size"
    SUBGROUP_ID = "subgroup_id"
    SUBGROUP_ID_X = "subgroup_id_x"
    SUBGROUP_ID_Y = "subgroup_id_y"
    SUBGROUP_ID_Z = "subgroup_id_z"
    SUBGROUP_LOCAL_ID = "subgroup_local_id"

    @property
    def seed(self) -> str | None:
        """The seed spelling (`builtin.group_id`), None for builtins only the newest has."""
        return f"builtin.{self.value}" if self.value in _SEED_BUILTINS else None

    @property
    def newest(self) -> str | None:
        """The newest spelling (`group_id.x`), None for the seed's `builtin.num_subgroups`."""
        return _NEWEST_BUILTINS.get(self)


_SEED_BUILTINS = frozenset({"group_id", "group_size", "num_subgroups", "subgroup_size",
                            "subgroup_id", "subgroup_local_id"})
_NEWEST_BUILTINS = {
    BuiltinName.GROUP_ID: "group_id.x", BuiltinName.GROUP_ID_Y: "group_id.y",
    BuiltinName.GROUP_ID_Z: "group_id.z", BuiltinName.GROUP_SIZE: "num_groups.x",
    BuiltinName.NUM_GROUPS_Y: "num_groups.y", BuiltinName.NUM_GROUPS_Z: "num_groups.z",
    BuiltinName.NUM_SUBGROUPS_X: "num_subgroups.x", BuiltinName.NUM_SUBGROUPS_Y: "num_subgroups.y",
    BuiltinName.NUM_SUBGROUPS_Z: "num_subgroups.z", BuiltinName.SUBGROUP_SIZE: "subgroup_size",
    BuiltinName.SUBGROUP_ID: "subgroup_linear_id", BuiltinName.SUBGROUP_ID_X: "subgroup_id.x",
    BuiltinName.SUBGROUP_ID_Y: "subgroup_id.y", BuiltinName.SUBGROUP_ID_Z: "subgroup_id.z",
    BuiltinName.SUBGROUP_LOCAL_ID: "subgroup_local_id",
}


_INTERIM_BUILTINS = {f"builtin.{spelling}": name for name, spelling in _NEWEST_BUILTINS.items()
                     if "." in spelling or spelling == "subgroup_linear_id"}
"""The reference between the two versions (2024/25) spelled the 3-D builtins with the seed's
prefix (`builtin.group_id.x`, `builtin.subgroup_linear_id`): they mean the newest builtins."""


SPMD_BUILTINS = frozenset({BuiltinName.SUBGROUP_ID, BuiltinName.SUBGROUP_ID_X,
                           BuiltinName.SUBGROUP_ID_Y, BuiltinName.SUBGROUP_ID_Z,
                           BuiltinName.SUBGROUP_LOCAL_ID})


BUILTIN_TYPES: dict[BuiltinName, Type] = {
    name: index if name.value.startswith(("group_", "num_groups")) else i32 for name in BuiltinName
}
"""The result type of each builtin (spec: builtin tables): group ids and counts are index."""


class Barrier(Instruction):
    """Work-group control barrier with optional global/local memory fences."""

    opname = "barrier"
    keywords = ("barrier",)
    syntax = "global_fence? local_fence?"
    memory_accesses = no_memory_access
    addressing = no_addressing
    integer_facts = no_integer_facts

    def __init__(self, global_fence: bool = False, local_fence: bool = False,
                 span: Span | None = None):
        super().__init__(span=span)
        self.global_fence = global_fence
        self.local_fence = local_fence

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Barrier":
        return cls(global_fence=".global" in s.modifiers, local_fence=".local" in s.modifiers)

    def format(self, p: "Printer") -> str:
        return "barrier" + (".global" if self.global_fence else "") + (".local" if self.local_fence else "")


class Builtin(Instruction):
    """Group ids and counts, subgroup counts and size (mixed); see BuiltinName."""

    opname = "builtin"
    keywords = {**{name.seed: name for name in BuiltinName if name.seed},
                **{name.newest: name for name in BuiltinName if name.newest},
                **{name: builtin for name, builtin in _INTERIM_BUILTINS.items()}}
    versions = {**{name.seed: Std.SEED for name in BuiltinName if name.seed},
                **{name.newest: Std.NEWEST for name in BuiltinName if name.newest},
                **{name: Std.NEWEST for name in _INTERIM_BUILTINS}}
    syntax = '":" integer_type'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """The builtin by its name (BuiltinName values)."""
        return IntegerFacts(IntOp(self.builtin.value))

    def __init__(self, builtin: BuiltinName, type: Type, span: Span | None = None,
                 name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.builtin = builtin

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Builtin":
        """subgroup_id and subgroup_local_id are SPMD: their class is SpmdBuiltin."""
        name = s.selected(cls.keywords)
        return (SpmdBuiltin if name in SPMD_BUILTINS else Builtin)(name, s.type)

    @property
    def title(self) -> str:
        return self.spelling or self.builtin.seed or str(self.builtin.newest)

    def format(self, p: "Printer") -> str:
        t = self.result.type
        if p.newest and self.builtin is BuiltinName.NUM_SUBGROUPS:
            # the seed's count of all subgroups: the newest language counts per mode
            x, y = p.fresh("num_subgroups_x"), p.fresh("num_subgroups_y")
            p.prelude(f"{x} = num_subgroups.x : {t}")
            p.prelude(f"{y} = num_subgroups.y : {t}")
            return f"mul {x}, {y} : {t}"
        return f"{p.spell(self, self.builtin.seed, self.builtin.newest)} : {t}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The result type is fixed by the builtin (index or i32)."""
        expect_result(ctx, self, BUILTIN_TYPES[self.builtin])


class SpmdBuiltin(Builtin):
    """subgroup_id and subgroup_local_id: per-work-item values (spelled, and parsed, as `builtin`)."""

    kind = Kind.SPMD


class Constant(Instruction):
    """A constant scalar, bool, or coopmatrix with all entries equal.

    `value` is a Python bool, int, float or complex as written in the source.
    """

    opname = "constant"
    keywords = ("constant",)
    syntax = 'literal ":" value_type'
    memory_accesses = no_memory_access
    addressing = no_addressing

    def integer_facts(self) -> IntegerFacts:
        """An integer or bool constant."""
        if isinstance(self.value, (bool, int)) and is_integral(self.result.type):
            return IntegerFacts(IntOp("constant", (self.value,)))
        return NO_INTEGER_FACTS

    def __init__(self, value: bool | int | float | complex, type: Type,
                 span: Span | None = None, name: str | None = None):
        super().__init__((), [type], span=span, result_names=[name])
        self.value = value

    @classmethod
    def from_syntax(cls, s: "Parsed") -> "Constant":
        return cls(s.literals[0], s.type)

    def format(self, p: "Printer") -> str:
        try:
            text = format_constant(self.value, newest=p.newest)
        except ValueError as err:
            p.cannot(self, str(err))
            text = format_constant(self.value, newest=True)
        return f"constant {text} : {self.result.type}"

    def verify(self, ctx: "VerifyContext") -> None:
        """The literal's kind and range fit the (component) type."""
        problem = constant_problem(self.value, self.result.type)
        if problem:
            result_error(ctx, self, problem)


def format_float(x: float, newest: bool = True) -> str:
    """A float in the grammar's syntax that reads back to the same double.

    Infinities and NaN are `inf`, `-inf`, `nan` in the newest language; the
    seed has no spelling for them (ValueError).
    """
    text = repr(float(x))
    if text in ("inf", "-inf", "nan") and not newest:
        raise ValueError(f"the constant '{text}'")
    return text


def format_constant(value: bool | int | float | complex, newest: bool = True) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, complex):
        return f"[{format_float(value.real, newest)}, {format_float(value.imag, newest)}]"
    return format_float(value, newest)
