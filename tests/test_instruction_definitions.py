"""Completeness: every instruction class has each piece the toolchain needs.

An instruction is defined once, on its class (tinyc/ir/instructions/); the
layers that turn it into something else register per class. These tests
fail for a class that lacks a keyword and syntax, a builder, a printer, a
memory-effects rule, an addressing and integer-facts answer, a lowering or SPIR-V emitter, a reference evaluator,
or (collectives) a work model. `missing_pieces` is also run on a bare
class, to show that each check can fail.
"""

from __future__ import annotations

import pytest

import tinyc.ir.instructions as instructions
from tinyc.ir.core import Instruction, Kind, Value
from tinyc.ir.instructions import BlasInstruction, instruction_classes, syntax_classes
from tinyc.parser.gen_tables import instruction_rules
from tinyc.parser.instructions import RULES
from tinyc.passes import LOWERED
from tinyc.reference.interpreter import run  # noqa: F401  (registers the evaluators)
from tinyc.reference.state import EVALUATORS
from tinyc.spirv.codegen import generate  # noqa: F401  (registers the emitters)
from tinyc.spirv.codegen.dispatch import EMITTERS

CLASSES = instruction_classes()


def _own(cls: type, name: str, base: type = Instruction) -> bool:
    """Whether `cls` or one of its bases below `base` defines `name` (not just `base`'s default)."""
    below = cls.__mro__[:cls.__mro__.index(base)]
    return any(name in vars(c) for c in below)


def missing_pieces(cls: type[Instruction]) -> list[str]:
    """What `cls` lacks of the pieces every instruction needs."""
    missing = []
    if not cls.keywords or cls.opname == Instruction.opname:
        missing.append("opname and keywords")
    if not any(issubclass(cls, parsed) for parsed in RULES.values()):
        missing.append("syntax (a grammar rule of its own or of a base)")
    if not _own(cls, "from_syntax"):
        missing.append("from_syntax (the parser's builder)")
    if not _own(cls, "format"):
        missing.append("format (the printer)")
    if not _own(cls, "memory_accesses"):
        missing.append("memory_accesses (its memory effects)")
    if not _own(cls, "addressing"):
        missing.append("addressing (where it addresses memory: tinyc/ir/addressing.py)")
    if not _own(cls, "integer_facts"):
        missing.append("integer_facts (the integers it computes: tinyc/ir/addressing.py)")
    if cls not in LOWERED and not any(c in EMITTERS for c in cls.__mro__):
        missing.append("a lowering pass (tinyc/passes) or a SPIR-V emitter (tinyc/spirv/codegen)")
    if cls not in EVALUATORS:
        missing.append("a reference evaluator (tinyc/reference)")
    if issubclass(cls, BlasInstruction) and not _own(cls, "term_flops", BlasInstruction):
        missing.append("term_flops (the work model)")
    if not (cls.__doc__ or "").strip():
        missing.append("a docstring")
    return missing


def test_the_registry_finds_every_exported_instruction():
    exported = {obj for obj in vars(instructions).values()
                if isinstance(obj, type) and issubclass(obj, Instruction) and obj is not Instruction
                and not vars(obj).get("abstract", False)}
    assert exported == set(CLASSES)
    assert len(CLASSES) >= 35


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_instruction_class_is_complete(cls):
    assert missing_pieces(cls) == []


def test_a_bare_class_lacks_every_piece():
    class Bare(Instruction):
        pass

    assert len(missing_pieces(Bare)) == 10  # all but the work model, which only collectives need

    class BareCollective(BlasInstruction):
        """A collective without a work model."""

        opname = keywords = "bare"

    assert "term_flops (the work model)" in missing_pieces(BareCollective)


def test_keywords_belong_to_one_class():
    owner: dict[str, str] = {}
    for cls in syntax_classes():
        for word in cls.keywords:
            assert word not in owner, f"'{word}' is spelled by {owner[word]} and {cls.__name__}"
            owner[word] = cls.__name__


def test_every_syntax_class_has_a_grammar_rule():
    rules = instruction_rules()
    for cls in syntax_classes():
        assert any(RULES[rule] is cls for rule in RULES)
        for word in cls.keywords:
            assert f'"{word}"' in rules


def test_regions_have_a_declared_kind():
    """Instructions with SPMD regions say so; the verifier and passes read `region_kind`."""
    spmd = {cls.__name__ for cls in CLASSES if cls.region_kind is Kind.SPMD}
    assert spmd == {"Foreach", "ForeachTile", "Parallel"}


def test_an_undescribed_instruction_reads_and_writes_its_memory_everywhere():
    """The one answer to "what does this write": barriers and the kernel's copy-back agree."""
    from tinyc.analysis.memory_effects import EffectKind, direct_effects
    from tinyc.ir.core import Function
    from tinyc.ir.types import f32, memref_type
    from tinyc.spirv.codegen.kernel import param_infos

    class Mystery(Instruction):
        """An instruction no analysis knows."""

    A = Value(memref_type(f32, [4]), "A")
    fn = Function("k", [A])
    fn.body.append(Mystery([A]))
    kinds = {e.kind for e in direct_effects(fn.body.instructions[0])}
    assert kinds == {EffectKind.READ, EffectKind.WRITE}
    assert param_infos(fn)[0].written
