"""Result ids, instructions and their binary word encoding.

Ids are a distinct `int` subclass so that an operand list can tell an id
(`Id(5)`) from a literal integer (`5`): both encode as one word, but the
module needs to know which operands reference other definitions (entry-point
interfaces, type lookups for capability inference).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tinyc.spirv.enums import Enumerant
from tinyc.spirv.spv import KINDS, OP_INFO, Op, OpenCLStd


class Id(int):
    """A SPIR-V result id; repr() is like the disassembler (%5), str() the number."""

    __slots__ = ()
    __str__ = int.__repr__

    def __repr__(self) -> str:
        return f"%{int(self)}"


Operand = Id | int | str | Enumerant
"""An operand: an id, a 32-bit literal (ints, enum members) or a literal string."""


def string_words(text: str) -> list[int]:
    """Literal string: UTF-8, nul-terminated, zero-padded to whole words."""
    data = text.encode("utf-8") + b"\0"
    data += b"\0" * (-len(data) % 4)
    return [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]


def literal_word(value: int) -> int:
    """A 32-bit literal word; negative values are two's complement."""
    if not -(1 << 31) <= value < (1 << 32):
        raise ValueError(f"literal {value} does not fit in one 32-bit word; split it into words")
    return value & 0xFFFFFFFF


def operand_words(operand: Operand) -> list[int]:
    """Encode one operand."""
    if isinstance(operand, str):
        return string_words(operand)
    if isinstance(operand, bool) or not isinstance(operand, int):
        raise TypeError(f"bad SPIR-V operand {operand!r} (expected Id, int, enum member or str)")
    return [literal_word(operand)]


class Instruction:
    """One instruction; `operands` is a plain list so Phi nodes can be patched."""

    __slots__ = ("opcode", "result_type", "result", "operands")

    def __init__(self, opcode: Op, result_type: Id | None = None, result: Id | None = None,
                 operands: list[Operand] | None = None) -> None:
        self.opcode = opcode
        self.result_type = result_type
        self.result = result
        self.operands = [] if operands is None else operands

    def words(self) -> list[int]:
        """Binary encoding: (word count << 16 | opcode), type, result, operands."""
        return encode([self])

    def ids(self) -> list[Id]:
        """All ids this instruction references (type, operands; not its result)."""
        refs = [op for op in self.operands if op.__class__ is Id]
        return ([self.result_type] if self.result_type is not None else []) + refs

    def __repr__(self) -> str:
        lhs = f"{self.result!r} = " if self.result is not None else ""
        args = " ".join(repr(a) for a in ([self.result_type] if self.result_type else []) + self.operands)
        return f"{lhs}Op{self.opcode.name} {args}".rstrip()


def encode(instructions: "Iterable[Instruction]") -> list[int]:
    """The words of instructions one after another (a module is encoded in one loop)."""
    words: list[int] = []
    append, one_word = words.append, _ONE_WORD
    for inst in instructions:
        start = len(words)
        append(0)
        if inst.result_type is not None:
            append(inst.result_type)
        if inst.result is not None:
            append(inst.result)
        for operand in inst.operands:
            if operand.__class__ in one_word:  # ids and enumerants: always in range
                append(operand)
            elif operand.__class__ is int and 0 <= operand <= 0xFFFFFFFF:  # a literal word as it is
                append(operand)
            else:
                words += operand_words(operand)
        count = len(words) - start
        if count > 0xFFFF:
            raise ValueError(f"Op{inst.opcode.name} has {count} words, more than 65535")
        words[start] = (count << 16) | inst.opcode
    return words


_ONE_WORD = frozenset({Id, Op, OpenCLStd, *KINDS.values()})
"""Operand classes that encode as themselves (ids, enumerants)."""
_VALID = _ONE_WORD | {int, str}
"""Operand classes that need no check when an instruction is made."""


def make_instruction(opcode: Op, args: tuple[Operand, ...], result: Id | None,
                     new_id: Callable[[], Id]) -> Instruction:
    """Build an instruction from assembler-like arguments.

    Like the assembly text, the result type is the first argument exactly
    when the opcode has one; a result id is allocated with `new_id()` unless
    `result` is given (for forward references such as Phi inputs).
    (Codegen makes one per emitted instruction: no keyword arguments, no
    per-operand isinstance unless an operand's class is unusual.)
    """
    has_type, has_result = _SHAPE[opcode]
    if has_type:
        if not args or args[0].__class__ is not Id:
            raise TypeError(f"Op{opcode.name} needs a result type id as first argument")
        result_type = args[0]
        rest = [*args]
        del rest[0]
    else:
        result_type = None
        rest = [*args]
    if has_result:
        if result is None:
            result = new_id()
    elif result is not None:
        raise TypeError(f"Op{opcode.name} has no result id")
    valid = _VALID
    for operand in rest:
        if operand.__class__ not in valid and (isinstance(operand, bool)
                                               or not isinstance(operand, (int, str))):
            raise TypeError(f"bad operand {operand!r} for Op{opcode.name}")
    inst = _new(Instruction)
    inst.opcode, inst.result_type, inst.result, inst.operands = opcode, result_type, result, rest
    return inst


_SHAPE: dict[Op, tuple[bool, bool]] = {op: (info[0], info[1]) for op, info in OP_INFO.items()}
"""Per opcode: (has a result type, has a result id)."""
_new = object.__new__
