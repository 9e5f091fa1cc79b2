"""The editor's words come from the grammar and the IR classes, and agree with the parser."""

from __future__ import annotations

import pytest

from tinyc.diagnostics import CompilationError
from tinyc.editor import vocabulary
from tinyc.ir import instructions as ir
from tinyc.ir.core import Instruction
from tinyc.ir.types import SCALAR_TYPES
from tinyc.parser import parse_tree
from tinyc.parser.errors import is_instruction
from tinyc.parser.tables import KEYWORDS

SPELLINGS = [w.spelling for w in vocabulary.instructions()]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_is_an_instruction_to_the_parser(spelling):
    """Followed by garbage, the parser complains about the operands, never the name."""
    with pytest.raises(CompilationError) as err:
        parse_tree(f"func @f() {{\n  {spelling} ~\n}}\n")
    message = err.value.diagnostics[0].message
    assert not message.startswith(("unknown instruction", "unknown modifier")), message


def test_variants_are_all_there():
    assert len(SPELLINGS) == len(set(SPELLINGS))
    expected = {f"gemm.{a}.{b}{c}" for a in "nt" for b in "nt" for c in ("", ".atomic")}
    expected |= {f"{op}.{t}{c}" for op in ("axpby", "sum", "gemv") for t in "nt"
                 for c in ("", ".atomic")}
    expected |= {"store", "store.atomic", "store.atomic_add", "barrier", "barrier.global",
                 "barrier.local", "barrier.global.local", "ger.atomic", "cumsum.atomic"}
    assert expected <= set(SPELLINGS)
    # the newest language: `.atomic` first and transposes optional; never `.atomic` between them
    assert {"gemm", "gemm.n", "gemm.atomic", "gemm.atomic.t.n", "axpby.atomic.t"} <= set(SPELLINGS)
    assert "gemm.t.atomic" not in SPELLINGS and "gemm.atomic.n.n.atomic" not in SPELLINGS


def test_every_instruction_keyword_of_the_grammar_is_a_head():
    keywords = {k for k in KEYWORDS if k[:1].isalpha() and is_instruction(k)}
    assert keywords <= vocabulary.instruction_heads()


def test_every_instruction_class_gives_its_summary():
    classes = {c for c in vars(ir).values() if isinstance(c, type) and issubclass(c, Instruction)
               and c.opname != Instruction.opname and c.__doc__}
    summaries = {w.summary for w in vocabulary.instructions()}
    for cls in classes:
        assert cls.__doc__.strip().splitlines()[0] in summaries, cls.__name__
    assert vocabulary.lookup("builtin.subgroup_id").summary == \
        ir.SpmdBuiltin.__doc__.strip().splitlines()[0]
    assert vocabulary.lookup("arith.neg").summary == ir.ArithUnary.__doc__.strip().splitlines()[0]
    assert vocabulary.lookup("gemm.t.n").kind == "collective"


def test_types_attributes_and_keywords():
    assert set(SCALAR_TYPES) <= vocabulary.type_words()
    assert {"memref", "group", "coopmatrix", "strided", "local", "global", "matrix_acc", "bool",
            "void"} <= vocabulary.type_words()
    assert {"alignment", "shape_gcd", "stride_gcd", "subgroup_size", "unroll",
            "work_group_size"} <= set(vocabulary.attribute_names())
    assert {"func", "attributes", "init", "else"} <= vocabulary.other_keywords()
    assert not vocabulary.other_keywords() & (vocabulary.type_words() | vocabulary.instruction_heads())
    assert {"true", "false"} <= vocabulary.constant_words()
