"""Light enumerations and table readers for the generated `spv.py`.

The grammar has about 60 operand kinds with 3000 enumerants and 900
opcodes. As `enum.IntEnum` classes plus Python dict literals they took
~25 ms to import (~100 ms without a bytecode cache), a tenth of a cold
`tinyc compile`. Here an operand kind is a plain class of int constants that
`__init_subclass__` turns into members: ints of the kind's own class, so
requirement inference can still tell a `StorageClass` operand from a literal
number. Members have `.name`, kinds look up by value (`StorageClass(5)`)
and by name (`StorageClass.by_name("Generic")`), aliases are the same object
(`Capability.DotProductKHR is Capability.DotProduct`), and `|` keeps the
kind of bit flags. The requirement tables are text, one entry per line,
read once at import (a string constant costs nothing to compile).
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

Version = tuple[int, int] | None
Requirement = tuple[tuple["Enumerant", ...], tuple[str, ...], Version]
CORE: Requirement = ((), (), (1, 0))  # needs nothing beyond SPIR-V 1.0

_E = TypeVar("_E", bound="Enumerant")


class Enumerant(int):
    """A member of a SPIR-V value enumeration; subclass per operand kind."""

    __slots__ = ()
    _members: ClassVar[dict[int, Enumerant]] = {}
    _names: ClassVar[dict[int, str]] = {}
    _by_name: ClassVar[dict[str, Enumerant]] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        """Replace the int class attributes by members (the first name of a value wins)."""
        super().__init_subclass__(**kwargs)
        members: dict[int, Enumerant] = {}
        names: dict[int, str] = {}
        by_name: dict[str, Enumerant] = {}
        new = int.__new__
        for name, value in list(vars(cls).items()):
            if type(value) is not int or name[0] == "_":
                continue
            member = members.get(value)
            if member is None:
                member = members[value] = new(cls, value)
                names[value] = name
            by_name[name] = member
            setattr(cls, name, member)
        cls._members, cls._names, cls._by_name = members, names, by_name

    def __new__(cls: type[_E], value: int) -> _E:
        """The member with this value (a flag combination for bit enums)."""
        member = cls._members.get(value)
        if member is None or isinstance(value, bool):
            return cls._missing(value)
        return member

    @classmethod
    def _missing(cls: type[_E], value: object) -> _E:
        raise ValueError(f"{value!r} is not a valid {cls.__name__}")

    @classmethod
    def by_name(cls: type[_E], name: str) -> _E:
        """The member spelled `name` (aliases included); KeyError if none."""
        return cls._by_name[name]

    @property
    def name(self) -> str:
        return self._names[self]

    @property
    def value(self) -> int:
        return int(self)

    __str__ = int.__repr__  # like IntEnum: str() and format() give the number

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __reduce__(self):
        return type(self), (int(self),)


class Flags(Enumerant):
    """A member (or a combination of members) of a SPIR-V bit enumeration."""

    __slots__ = ()

    @classmethod
    def _missing(cls: type[_E], value: object) -> _E:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < (1 << 32):
            return int.__new__(cls, value)
        raise ValueError(f"{value!r} is not a valid {cls.__name__}")

    @property
    def name(self) -> str:
        known = self._names.get(self)
        if known is not None:
            return known
        bits = [1 << i for i in range(int(self).bit_length()) if self >> i & 1]
        return "|".join(self._names.get(bit, hex(bit)) for bit in bits)

    def __or__(self, other: object):
        if isinstance(other, int) and not isinstance(other, bool):
            return type(self)(int(self) | int(other))
        return NotImplemented

    __ror__ = __or__

    def __and__(self, other: object):
        if isinstance(other, int) and not isinstance(other, bool):
            return type(self)(int(self) & int(other))
        return NotImplemented

    __rand__ = __and__


# -- table text ------------------------------------------------------------------------
# A requirement is written as words after the entry's name: capability names,
# extension names (they all start with "SPV_") and the first core version as
# "v1.3" ("v-": only the extension provides it). No words: CORE.

class _Requirements:
    """Reads requirement words, sharing equal tuples."""

    def __init__(self, capability: type[Enumerant]) -> None:
        self.capability = capability
        self.seen: dict[tuple[str, ...], Requirement] = {(): CORE}

    def read(self, words: tuple[str, ...]) -> Requirement:
        req = self.seen.get(words)
        if req is None:
            caps, exts, version = [], [], (1, 0)
            for word in words:
                if word.startswith("SPV_"):
                    exts.append(word)
                elif word[0] == "v" and word[1:2] in "-0123456789":
                    version = None if word == "v-" else tuple(int(x) for x in word[1:].split("."))
                else:
                    caps.append(self.capability.by_name(word))
            req = self.seen[words] = (tuple(caps), tuple(exts), version)
        return req


def read_op_info(op: type[Enumerant], capability: type[Enumerant],
                 text: str) -> dict[Enumerant, tuple[bool, bool, Requirement]]:
    """Lines `Name TR requirement...`: T = has a result type, R = has a result id (else -)."""
    reqs = _Requirements(capability)
    table = {}
    for line in text.splitlines():
        name, flags, *words = line.split()
        table[op.by_name(name)] = (flags[0] == "T", flags[1] == "R", reqs.read(tuple(words)))
    return table


def read_enum_requirements(kinds: dict[str, type[Enumerant]], capability: type[Enumerant],
                           text: str) -> dict[type[Enumerant], dict[int, Requirement]]:
    """Lines `Kind.Name requirement...`, for the enumerants that need more than core 1.0."""
    reqs = _Requirements(capability)
    tables: dict[type[Enumerant], dict[int, Requirement]] = {}
    for line in text.splitlines():
        qualified, *words = line.split()
        kind_name, name = qualified.split(".")
        kind = kinds[kind_name]
        tables.setdefault(kind, {})[kind.by_name(name)] = reqs.read(tuple(words))
    return tables


def read_enum_parameters(kinds: dict[str, type[Enumerant]],
                         text: str) -> dict[type[Enumerant], dict[int, tuple[str, ...]]]:
    """Lines `Kind.Name OperandKind...`: the extra operands an enumerant takes."""
    tables: dict[type[Enumerant], dict[int, tuple[str, ...]]] = {}
    for line in text.splitlines():
        qualified, *operand_kinds = line.split()
        kind_name, name = qualified.split(".")
        kind = kinds[kind_name]
        tables.setdefault(kind, {})[kind.by_name(name)] = tuple(operand_kinds)
    return tables
