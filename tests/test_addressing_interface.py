"""The addressing and integer-facts interface (tinyc/ir/addressing.py), asked of real instructions.

Every class answers both questions (tests/test_instruction_definitions.py
checks that it defines them); here the answers are checked against what the
instructions are: on every instruction of the samples and of a few hundred
fuzz programs, the footprints name exactly the operands and effects that
`memory_accesses` names, views and loop ranges refer to the instruction's
own operands and region arguments; and on hand-written instructions, the
spans say what the spec says each instruction touches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tinyc.compiler import check_source
from tinyc.fuzz.programs import kernels
from tinyc.ir.addressing import (
    WHOLE_SPAN, Footprint, Guard, IntOp, LoopRange, MemberView, MergeView, ModeSpan, SliceView,
    SplitView, TileRange,
)
from tinyc.ir.core import EffectKind, Function, Instruction, Value
from tinyc.ir.types import f32, group_type, index, memref_type

SAMPLES = sorted(Path(__file__).resolve().parents[1].joinpath("samples").glob("*.ir"))


def _instructions(text: str, std: str | None = None) -> list[Instruction]:
    program = check_source(text, "<test>", std=std)
    return [inst for fn in program.functions for inst in fn.walk()]


def _corpus() -> list[Instruction]:
    found = []
    for path in SAMPLES:
        found += _instructions(path.read_text())
    for kernel in kernels(seed=1919, count=120):
        found += _instructions(kernel.text)
    return found


def _operands_of(inst: Instruction) -> set[int]:
    return {id(v) for v in inst.operands}


def _check_consistent(inst: Instruction) -> None:
    """What every answer must satisfy, whatever the instruction."""
    answer = inst.addressing()
    described = {(id(f.operand), f.kind) for f in answer.footprints}
    assert described == {(id(v), kind) for v, kind in inst.memory_accesses()}, inst
    for footprint in answer.footprints:
        if footprint.modes is not None:
            assert len(footprint.modes) == footprint.operand.type.order, inst
            for span in footprint.modes:
                for part in (span.start, span.count):
                    assert part is None or isinstance(part, int) or id(part) in _operands_of(inst)
    if answer.view is not None:
        assert id(answer.view.source) in _operands_of(inst)
        assert inst.view_source() is answer.view.source
    assert {id(v) for v in answer.loaded} <= {id(r) for r in inst.results}
    facts = inst.integer_facts()
    if facts.value is not None:
        assert all(isinstance(a, (int, bool)) or id(a) in _operands_of(inst) for a in facts.value.args), inst
    region_args = {id(a) for region in inst.regions for a in region.args}
    for r in facts.ranges:
        assert id(r.var) in region_args
    if facts.guard is not None:
        assert id(facts.guard.condition) in _operands_of(inst)


def test_every_answer_refers_to_the_instruction_itself():
    corpus = _corpus()
    seen = {type(inst) for inst in corpus}
    assert len(seen) >= 25  # the corpus exercises most classes
    for inst in corpus:
        _check_consistent(inst)


def test_element_accesses_name_their_indices():
    load, store = [i for i in _instructions("""
func @k(%A: memref<f32x4x?>, %n: index) {
  %c = constant 1 : index
  %v = load %A[%c, %n] : f32
  store.atomic_add %v, %A[%n, %c]
}""") if i.opname in ("load", "store")]
    (fp,) = load.addressing().footprints
    assert fp.kind is EffectKind.READ and fp.modes == (ModeSpan(load.operands[1]), ModeSpan(load.operands[2]))
    assert load.addressing().loaded == (load.result,)
    (fp,) = store.addressing().footprints
    assert fp.kind is EffectKind.ATOMIC_ADD and [s.start for s in fp.modes] == store.indices
    assert store.addressing().loaded == ()


def test_views_say_how_they_map_their_source():
    insts = {i.opname: i for i in _instructions("""
func @k(%A: memref<f32x8x?x6>, %G: group<memref<f32x4>x?>, %o: index, %s: index) {
  %a = subview %A[2:4, %o:%s, %o] : memref<f32x4x?,strided<1,8>>
  %e = expand %A[0 -> 2 x 4] : memref<f32x2x4x?x6>
  %f = fuse %A[1, 2] : memref<f32x8x?>
  %g = load %G[%o] : memref<f32x4>
}""")}
    sub = insts["subview"].addressing().view
    o, s = insts["subview"].operands[1], insts["subview"].operands[-1]
    assert isinstance(sub, SliceView)
    assert sub.modes == (ModeSpan(2, 4), ModeSpan(o, s), ModeSpan(o, 0)) and sub.extra_modes == 0
    assert insts["expand"].addressing().view == SplitView(insts["expand"].operands[0], 0, (2, 4))
    assert insts["fuse"].addressing().view == MergeView(insts["fuse"].operands[0], 1, 2)
    member = insts["load"].addressing()
    assert member.view == MemberView(insts["load"].operands[0], o) and member.footprints == ()


def test_a_bare_slice_is_the_whole_mode():
    (sub,) = [i for i in _instructions("""
func @k(%A: memref<f32x8x?>) {
  %a = subview %A[:, 3] : memref<f32x8>
}""") if i.opname == "subview"]
    assert sub.addressing().view.modes == (WHOLE_SPAN, ModeSpan(3, 0))


def test_collectives_touch_whole_operands_and_state_their_rules():
    (gemm,) = [i for i in _instructions("""
func @k(%A: memref<f32x8x?>, %B: memref<f32x?x4>, %C: memref<f32x8x4>) {
  %one = constant 1.0 : f32
  gemm.n.n %one, %A, %B, %one, %C
}""") if i.opname == "gemm"]
    answer = gemm.addressing()
    A, B, C = gemm.operands[1], gemm.operands[2], gemm.operands[4]
    assert {(f.operand.name, f.kind) for f in answer.footprints} == {
        ("A", EffectKind.READ), ("B", EffectKind.READ), ("C", EffectKind.READ), ("C", EffectKind.WRITE)}
    assert all(f.modes == (WHOLE_SPAN, WHOLE_SPAN) for f in answer.footprints)
    assert answer.rules == tuple(gemm.size_rules())
    assert Footprint.whole(A, EffectKind.READ) in answer.footprints and B is not C


@pytest.mark.parametrize("modifiers, rows_mode, checked", [
    ("", (16, 8), (False, False)), (".t", (8, 16), (False, False)),
    (".rows_checked", (16, 8), (True, False)), (".t.rows_checked", (8, 16), (False, True)),
])
def test_matrix_blocks_follow_transpose_and_checked_flags(modifiers, rows_mode, checked):
    """`.t` puts A_ij at M[x + j, y + i]; the checked flags name the matrix's rows and columns."""
    text = f"""
func @k(%M: memref<f32x32x32>) {{
  parallel {{
    %x = constant 1 : index
    %a = cooperative_matrix_load{modifiers} %M[%x, %x] : coopmatrix<f32x16x8,matrix_acc>
  }}
}}"""
    (load,) = [i for i in _instructions(text, std="newest") if i.opname == "cooperative_matrix_load"]
    (fp,) = load.addressing().footprints
    assert (fp.modes[0].count, fp.modes[1].count) == rows_mode
    assert (fp.modes[0].clipped, fp.modes[1].clipped) == checked
    assert load.addressing().loaded == (load.result,)


def test_integer_facts_of_arithmetic_builtins_and_sizes():
    insts = _instructions("""
func @k(%A: memref<f32x?>, %n: i32) {
  %g = builtin.group_id : index
  %c = constant 4 : index
  %m = arith.mul %g, %c : index
  %s = size %A[0] : index
  %l = cmp.lt %m, %s : bool
  %i = cast %n : index
  %f = cast %n : f32
}""")
    facts = {(i.results[0].name if i.results else None): i.integer_facts().value for i in insts}
    assert facts["g"] == IntOp("group_id")
    assert facts["c"] == IntOp("constant", (4,))
    assert facts["m"].op == "mul" and facts["s"].op == "size" and facts["s"].args[1] == 0
    assert facts["l"].op == "lt" and facts["i"].op == "cast"
    assert facts["f"] is None  # a float: nothing the index analyses use


def test_loops_and_guards():
    insts = _instructions("""
func @k(%A: memref<f32x?>, %n: index) {
  %c0 = constant 0 : index
  %c2 = constant 2 : index
  for %i = %c0, %n, %c2 {
    %t = cmp.lt %i, %n : bool
    if %t {
      %v = load %A[%i] : f32
    }
  }
  foreach (%j) = (%c0), (%n) {
    %w = load %A[%j] : f32
  }
}""")
    loop = next(i for i in insts if i.opname == "for")
    (r,) = loop.integer_facts().ranges
    assert r == LoopRange(loop.body.args[0], loop.operands[0], loop.operands[1], loop.operands[2])
    branch = next(i for i in insts if i.opname == "if")
    assert branch.integer_facts().guard == Guard(branch.operands[0], 0, 1)
    foreach = next(i for i in insts if i.opname == "foreach")
    (r,) = foreach.integer_facts().ranges
    assert r.var is foreach.body.args[0] and r.upper is foreach.operands[1]


def test_foreach_tile_bounds_offsets_and_sizes():
    (tile,) = [i for i in _instructions("""
func @k(%A: memref<f32x?>) {
  %c0 = constant 0 : index
  %n = size %A[0] : index
  foreach_tile (%o) = (%c0), (%n) as (%s) <= (16) {
  }
}""", std="newest") if i.opname == "foreach_tile"]
    offset, size = tile.integer_facts().ranges
    assert offset == LoopRange(tile.offsets[0], tile.lower[0], tile.upper[0], 16)
    assert size == TileRange(tile.sizes[0], tile.offsets[0], tile.upper[0], 16)


def test_an_undescribed_instruction_is_unbounded_and_loads_its_results():
    class Mystery(Instruction):
        """An instruction no analysis knows."""

    A = Value(memref_type(f32, [4]), "A")
    G = Value(group_type(memref_type(f32, [4]), 2), "G")
    fn = Function("k", [A, G])
    inst = fn.body.append(Mystery([A, G], [index]))
    answer = inst.addressing()
    assert {f.operand.name for f in answer.footprints} == {"A", "G"}
    assert all(f.modes is None for f in answer.footprints)
    assert answer.loaded == (inst.result,) and answer.view is None and answer.rules is None
    assert inst.integer_facts().value is None and inst.view_source() is None
