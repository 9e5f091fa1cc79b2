"""lower-foreach: the iteration space spread over lanes, subgroups and loops."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from lowering_testlib import instructions, lower, lowered_text

from tinyc.ir.instructions import (
    ArithBinary, ArithBinaryOp, Builtin, For, Foreach, If, Parallel,
)
from tinyc.passes.lowering.session import constant_value


def test_first_mode_across_lanes_last_across_subgroups() -> None:
    text = lowered_text("""
func @k(%A: memref<f32x40x9x5>) attributes {work_group_size=[32, 2]} {
  %z = constant 0 : index
  %m = constant 40 : index
  %n = constant 9 : index
  %p = constant 5 : index
  foreach (%i, %j, %l) = (%z, %z, %z), (%m, %n, %p) {
    %x = load %A[%i, %j, %l] : f32
    store %x, %A[%i, %j, %l]
  }
}
""")
    assert "%lane = builtin.subgroup_local_id : i32" in text
    assert "%sg = builtin.subgroup_id : i32" in text
    # 5 entries of the last mode over 4 subgroups: a loop with step 4
    assert re.search(r"for %l = %\w+, %c5, %c4 \{", text), text
    assert re.search(r"for %j = %c0, %c9", text), text
    assert re.search(r"for %i = %\w+, %c40, %c16 \{", text), text
    assert "load %A[%i, %j, %l]" in text, "loop variables keep their source names"


def test_static_extent_of_one_subgroup_needs_no_loop() -> None:
    program = lower("""
func @k(%A: memref<f32x16>) {
  %z = constant 0 : index
  %n = constant 16 : index
  foreach (%i) = (%z), (%n) {
    %x = load %A[%i] : f32
    store %x, %A[%i]
  }
}
""")
    assert not instructions(program, For) and not instructions(program, If)
    assert len(instructions(program, Parallel)) == 1


def test_short_static_extent_is_guarded() -> None:
    program = lower("""
func @k(%A: memref<f32x13>) {
  %z = constant 0 : index
  %n = constant 13 : index
  foreach (%i) = (%z), (%n) {
    %x = load %A[%i] : f32
    store %x, %A[%i]
  }
}
""")
    assert not instructions(program, For) and len(instructions(program, If)) == 1


def test_i32_loop_type_stays_i32() -> None:
    text = lowered_text("""
func @k(%A: memref<f32x?>, %n: i32) {
  %z = constant 0 : i32
  foreach (%i):i32 = (%z), (%n) {
    %ii = cast %i : index
    %x = load %A[%ii] : f32
    store %x, %A[%ii]
  }
}
""")
    assert re.search(r"for %i:i32 = %lane, %n, %c16_i32", text), text


def test_parallel_regions_are_kept() -> None:
    src = """
func @k(%A: memref<f32x16>) {
  parallel {
    %l = builtin.subgroup_local_id : i32
    %i = cast %l : index
    %x = load %A[%i] : f32
    store %x, %A[%i]
  }
}
"""
    program = lower(src)
    (p,) = instructions(program, Parallel)
    assert len(p.body.instructions) == 4


def test_short_first_mode_packs_lines_of_the_second() -> None:
    program = lower("""
func @k(%A: memref<f32x3x50>) {
  %z = constant 0 : index
  %m = constant 3 : index
  %n = constant 50 : index
  foreach (%i, %j) = (%z, %z), (%m, %n) {
    %x = load %A[%i, %j] : f32
    store %x, %A[%i, %j]
  }
}
""")
    # 16 lanes hold 5 lines of 3: lane l works on (l mod 3, l / 3 + 5t); lane 15 sits out
    (rem,) = [a for a in instructions(program, ArithBinary) if a.op is ArithBinaryOp.REM]
    (div,) = [a for a in instructions(program, ArithBinary) if a.op is ArithBinaryOp.DIV]
    (lane,) = instructions(program, Builtin)
    assert rem.operands[0] is div.operands[0] and rem.operands[0].owner.operands == [lane.result]
    assert constant_value(rem.operands[1]) == 3 == constant_value(div.operands[1])
    (loop,) = instructions(program, For)
    assert loop.lower is div.result and constant_value(loop.step) == 5
    assert constant_value(loop.upper) == 50 and isinstance(loop.parent.parent, If)


def test_foreach_inside_for_is_lowered_in_place() -> None:
    program = lower("""
func @k(%A: memref<f32x16x4>) {
  %z = constant 0 : index
  %n = constant 16 : index
  %c4 = constant 4 : index
  for %j = %z, %c4 {
    foreach (%i) = (%z), (%n) {
      %x = load %A[%i, %j] : f32
      %y = arith.add %x, %x : f32
      store %y, %A[%i, %j]
    }
  }
}
""")
    (parallel,) = instructions(program, Parallel)
    assert isinstance(parallel.parent.parent, For)


@settings(max_examples=40, deadline=None)
@given(extents=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 40)), min_size=1, max_size=3),
       wg=st.sampled_from(["", "{work_group_size=[32, 2]}", "{subgroup_size=8, work_group_size=[16, 1]}"]),
       dyn=st.booleans())
def test_foreach_visits_every_point_once(extents, wg, dyn) -> None:
    """Each point adds 1 to its element: a skipped or repeated point shows."""
    bounds = [(lo, lo + n) for lo, n in extents]
    shape = [hi + 1 for _, hi in bounds]
    order = len(shape)
    idx = ", ".join(f"%i{k}" for k in range(order))
    if dyn:
        params = ", " + ", ".join(f"%lo{k}: index, %hi{k}: index" for k in range(order))
        consts = ""
    else:
        params = ""
        consts = "\n".join(f"  %lo{k} = constant {lo} : index\n  %hi{k} = constant {hi} : index"
                           for k, (lo, hi) in enumerate(bounds))
    attrs = f" attributes {wg}" if wg else ""
    text = f"""
func @k(%A: memref<f32{''.join('x' + str(s) for s in shape)}>{params}){attrs} {{
{consts}
  %one = constant 1.0 : f32
  foreach ({idx}) = ({', '.join(f'%lo{k}' for k in range(order))}), ({', '.join(f'%hi{k}' for k in range(order))}) {{
    %x = load %A[{idx}] : f32
    %y = arith.add %x, %one : f32
    store %y, %A[{idx}]
  }}
}}
"""
    A = np.zeros(shape, np.float32, order="F")
    args: list = [A]
    if dyn:
        for lo, hi in bounds:
            args += [lo, hi]
    program = lower(text)
    from tinyc.reference import run

    fn = program.functions[0]
    run(fn, args, 1)
    want = np.zeros(shape, np.float32)
    want[tuple(slice(lo, hi) for lo, hi in bounds)] = 1
    np.testing.assert_array_equal(A, want)
    assert not instructions(program, Foreach)
