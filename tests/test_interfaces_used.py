"""Analyses ask the instructions (their interfaces), not a list of classes: a ratchet.

Issue 21 counted 108 `isinstance` tests on instruction classes outside
tinyc/ir/instructions (the base class `Instruction` included; 103 without it).
The memory, addressing, collective and fuzz-table interfaces replaced those
an interface answers; what is left dispatches on structure no interface
describes (barriers, yields, allocas, the constants of lowering's tidying, the
coopmatrix layout). The count may only go down.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tinyc
import tinyc.ir.instructions as instructions
from tinyc.ir.core import Instruction

TINYC = Path(tinyc.__file__).parent
CLASSES = {name for name, obj in vars(instructions).items()
           if isinstance(obj, type) and issubclass(obj, Instruction) and obj is not Instruction}
LIMIT = 28


def class_tests() -> list[str]:
    """`file:line` of every isinstance(x, C) with C an instruction class (not the base)."""
    found = []
    for path in sorted(TINYC.rglob("*.py")):
        if "ir/instructions" in path.as_posix():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" \
                    and len(node.args) == 2:
                arg = node.args[1]
                names = [getattr(e, "id", None) or getattr(e, "attr", None)
                         for e in (arg.elts if isinstance(arg, ast.Tuple) else [arg])]
                if CLASSES & set(names):
                    found.append(f"{path.relative_to(TINYC.parent)}:{node.lineno}")
    return found


def test_few_isinstance_tests_on_instruction_classes_remain():
    found = class_tests()
    assert len(found) <= LIMIT, "\n".join(found)


def test_the_count_sees_them():
    assert any("passes/barriers.py" in f for f in class_tests())
