"""local-memory: alloca offsets, reuse after a lifetime ends, reuse barriers, overflow."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pass_testlib import LAYOUT_ATTRS, check_rewrite, parse_checked, run
from tinyc.diagnostics import CompilationError
from tinyc.ir.instructions import Alloca
from tinyc.passes import PassOptions
from tinyc.passes.barriers import insert_barriers
from tinyc.target.device_info import DeviceInfo
from tinyc.passes.local_memory import DEFAULT_ALIGNMENT, alloca_alignment, alloca_size, \
    assign_local_memory

HEAD = """func @k(%A: memref<f32x16>, %B: memref<f32x16>, %n: index) {
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  %c0 = constant 0 : index
  %cond = cmp.lt %c0, %n : bool
"""


def kernel(body: str) -> str:
    return HEAD + body + "\n}\n"


def layout(body: str, device: DeviceInfo | None = None):
    """(offsets by alloca name, function attributes) after the pass."""
    fn = run(kernel(body), [assign_local_memory], PassOptions(device_info=device)).functions[0]
    offsets = {inst.result.name: inst.attrs["stack_offset"]
               for inst in fn.walk() if isinstance(inst, Alloca)}
    return offsets, fn.attrs


# ---------------------------------------------------------------- placement

def test_offsets_honor_alignment():
    offsets, attrs = layout("""
  %a = alloca : memref<f32x3,local>
  %b = alloca {alignment=8} : memref<f64x2,local>
  %c = alloca {alignment=1} : memref<i8x1,local>
  %d = alloca : memref<i8x1,local>
""")
    # c (alignment 1) fits in the gap a leaves before b.
    assert offsets == {"a": 0, "b": 16, "c": 12, "d": 64}
    assert attrs["local_memory_size"] == 65
    assert attrs["local_memory_alignment"] == DEFAULT_ALIGNMENT


def test_alignment_rules():
    fn = parse_checked(kernel("""
  %a = alloca : memref<c64x2,local>
  %b = alloca {alignment=16} : memref<f32x4,local>
  %s = alloca : memref<f32x4x4,strided<1,8>,local>
""")).functions[0]
    a, b, s = [inst for inst in fn.walk() if isinstance(inst, Alloca)]
    assert (alloca_alignment(a), alloca_alignment(b)) == (64, 16)
    assert (alloca_size(a), alloca_size(b)) == (32, 16)
    assert alloca_size(s) == (1 + 3 + 3 * 8) * 4       # the strided extent, not 16 elements


def test_no_allocas_no_attribute():
    offsets, attrs = layout("  %x = arith.add %one, %one : f32")
    assert offsets == {} and "local_memory_size" not in attrs


def test_live_allocas_do_not_overlap():
    offsets, attrs = layout("""
  %a = alloca : memref<f32x16,local>
  %b = alloca : memref<f32x16,local>
  %c = alloca : memref<f32x16,local>
""")
    assert offsets == {"a": 0, "b": 64, "c": 128}
    assert attrs["local_memory_size"] == 192


def test_reuse_after_lifetime_stop_takes_the_first_gap():
    offsets, attrs = layout("""
  %a = alloca : memref<f32x16,local>
  %b = alloca : memref<f32x64,local>
  %c = alloca : memref<f32x16,local>
  lifetime_stop %b
  %d = alloca : memref<f32x32,local>
  %e = alloca : memref<f32x64,local>
""")
    # b held 64..320; d (128 bytes) fits there, e (256 bytes) does not fit before c at 320.
    assert offsets == {"a": 0, "b": 64, "c": 320, "d": 64, "e": 384}
    assert attrs["local_memory_size"] == 640


def test_region_end_frees_its_allocas():
    offsets, attrs = layout("""
  %a = alloca : memref<f32x16,local>
  for %i = %c0, %n {
    %b = alloca : memref<f32x64,local>
  }
  %c = alloca : memref<f32x32,local>
""")
    assert offsets == {"a": 0, "b": 64, "c": 64}
    assert attrs["local_memory_size"] == 320


def test_branches_share_memory():
    offsets, _ = layout("""
  if %cond {
    %a = alloca : memref<f32x16,local>
  } else {
    %b = alloca : memref<f64x16,local>
  }
""")
    assert offsets == {"a": 0, "b": 0}


def test_lifetime_stop_in_a_nested_region_is_ignored():
    offsets, _ = layout("""
  %a = alloca : memref<f32x16,local>
  if %cond {
    lifetime_stop %a
  }
  %b = alloca : memref<f32x16,local>
""")
    assert offsets == {"a": 0, "b": 64}


# ---------------------------------------------------------------- reuse barriers

def test_reuse_inserts_a_local_barrier_before_the_first_access():
    check_rewrite(kernel("""
  %a = alloca : memref<f32x16,local>
  axpby.n %one, %A, %zero, %a
  barrier.local
  axpby.n %one, %a, %zero, %B
  lifetime_stop %a
  %b = alloca : memref<f32x16,local>
  %x = arith.add %one, %one : f32
  barrier.local                                   ; +
  axpby.n %x, %A, %zero, %b
"""), [assign_local_memory], ignore=LAYOUT_ATTRS)


def test_existing_barrier_is_enough():
    check_rewrite(kernel("""
  %a = alloca : memref<f32x16,local>
  axpby.n %one, %A, %zero, %a
  barrier.local
  axpby.n %one, %a, %zero, %B
  lifetime_stop %a
  barrier.global.local
  %b = alloca : memref<f32x16,local>
  axpby.n %one, %A, %zero, %b
"""), [assign_local_memory], ignore=LAYOUT_ATTRS)


def test_barrier_before_the_first_access_is_widened():
    check_rewrite(kernel("""
  %a = alloca : memref<f32x16,local>
  axpby.n %one, %A, %zero, %a
  barrier.local
  axpby.n %one, %a, %zero, %B
  lifetime_stop %a
  %b = alloca : memref<f32x16,local>
  barrier.global                                  ; => barrier.global.local
  axpby.n %one, %A, %zero, %b
"""), [assign_local_memory], ignore=LAYOUT_ATTRS)


def test_no_barrier_without_overlap():
    check_rewrite(kernel("""
  %a = alloca : memref<f32x16,local>
  axpby.n %one, %A, %zero, %a
  %b = alloca : memref<f32x16,local>
  axpby.n %one, %A, %zero, %b
"""), [assign_local_memory], ignore=LAYOUT_ATTRS)


def test_barrier_goes_before_the_region_instruction_that_first_touches_the_alloca():
    check_rewrite(kernel("""
  %a = alloca : memref<f32x16,local>
  axpby.n %one, %A, %zero, %a
  lifetime_stop %a
  %b = alloca : memref<f32x16,local>
  axpby.n %one, %A, %zero, %B
  barrier.local                                   ; +
  for %i = %c0, %n {
    parallel {
      %x = load %A[%i] : f32
      store %x, %b[%i]
    }
  }
"""), [assign_local_memory], ignore=LAYOUT_ATTRS)


def test_alloca_in_a_loop_reuses_its_memory_every_iteration():
    # Without the barrier pass: the next iteration's write may race the last read.
    check_rewrite(kernel("""
  for %i = %c0, %n {
    %t = alloca : memref<f32x16,local>
    barrier.local                                 ; +
    axpby.n %one, %A, %zero, %t
  }
"""), [assign_local_memory], ignore=LAYOUT_ATTRS)


def test_pipeline_order_reuses_the_barrier_pass_barriers():
    check_rewrite(kernel("""
  for %i = %c0, %n {
    %t = alloca : memref<f32x16,local>
    barrier.local                                 ; +
    axpby.n %one, %A, %zero, %t
    barrier.global.local                          ; +
    axpby.n %one, %t, %one, %B
  }
  %u = alloca : memref<f32x16,local>
  barrier.local                                   ; +
  axpby.n %one, %A, %zero, %u
"""), [insert_barriers, assign_local_memory], ignore=LAYOUT_ATTRS)


def test_reuse_across_branches_in_a_loop():
    check_rewrite(kernel("""
  for %i = %c0, %n {
    if %cond {
      %a = alloca : memref<f32x16,local>
      barrier.local                               ; +
      axpby.n %one, %A, %zero, %a
    } else {
      %b = alloca : memref<f32x16,local>
      barrier.local                               ; +
      axpby.n %one, %B, %zero, %b
    }
  }
"""), [assign_local_memory], ignore=LAYOUT_ATTRS)


def test_alloca_in_an_spmd_region_gets_its_own_memory():
    # The verifier forbids this; the pass must still not share such memory.
    fn = parse_checked(kernel("""
  %a = alloca : memref<f32x16,local>
  lifetime_stop %a
  parallel {
  }
  %b = alloca : memref<f32x16,local>
""")).functions[0]
    body = fn.body.instructions
    parallel = next(inst for inst in body if inst.opname == "parallel")
    a_type = next(inst for inst in body if isinstance(inst, Alloca)).result.type
    inner = parallel.body.append(Alloca(a_type, name="p"))
    assign_local_memory(fn, PassOptions())
    blocks = {inst.result.name: inst.attrs["stack_offset"]
              for inst in fn.walk() if isinstance(inst, Alloca)}
    assert blocks == {"a": 0, "p": 64, "b": 0}
    assert inner.attrs["stack_offset"] == 64


# ---------------------------------------------------------------- overflow

def test_single_alloca_too_large():
    with pytest.raises(CompilationError) as info:
        layout("  %big = alloca : memref<f32x65537,local>")
    (d,) = info.value.diagnostics
    assert d.message == ("alloca of 262148 bytes does not fit in local memory: it would occupy "
                         "bytes 0 to 262147, but the device has 262144 bytes per work-group "
                         "(0 bytes are held by 0 live allocas)")
    assert (d.line, d.column) == (6, 3)


def test_overflow_names_the_live_allocas():
    small = DeviceInfo(local_memory_size=1024)
    with pytest.raises(CompilationError) as info:
        layout("""
  %a = alloca : memref<f32x128,local>
  %b = alloca : memref<f32x128,local>
  %c = alloca : memref<f32x1,local>
""", small)
    (d,) = info.value.diagnostics
    assert d.message.startswith("alloca of 4 bytes does not fit in local memory: it would occupy "
                                "bytes 1024 to 1027, but the device has 1024 bytes")
    assert (d.line, d.column) == (9, 3)
    assert [n.message for n in d.notes] == ["'%a' holds 512 bytes at offset 0 here",
                                            "'%b' holds 512 bytes at offset 512 here"]
    assert [n.span.line for n in d.notes] == [7, 8]


def test_exactly_full_local_memory_fits():
    offsets, attrs = layout("  %a = alloca : memref<f32x65536,local>")
    assert attrs["local_memory_size"] == 262144


def test_reuse_avoids_overflow():
    small = DeviceInfo(local_memory_size=1024)
    offsets, attrs = layout("""
  %a = alloca : memref<f32x256,local>
  lifetime_stop %a
  %b = alloca : memref<f32x256,local>
""", small)
    assert offsets == {"a": 0, "b": 0} and attrs["local_memory_size"] == 1024


# ---------------------------------------------------------------- property: no overlap

ELEMENTS = {"i8": 1, "f16": 2, "f32": 4, "f64": 8, "c64": 16}

alloca_op = st.tuples(st.just("alloca"), st.sampled_from(sorted(ELEMENTS)),
                      st.integers(1, 40), st.sampled_from([None, 1, 16, 32, 128]))


def _program(draw, depth: int) -> list:
    ops = []
    names = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["alloca", "alloca", "stop", "if", "for"] if depth < 2
                                    else ["alloca", "stop"]))
        if kind == "alloca":
            op = draw(alloca_op)
            names.append(len(ops))
            ops.append(op)
        elif kind == "stop" and names:
            ops.append(("stop", draw(st.sampled_from(names))))
        elif kind == "if":
            ops.append(("if", _program(draw, depth + 1), _program(draw, depth + 1)))
        elif kind == "for":
            ops.append(("for", _program(draw, depth + 1)))
    return ops


programs = st.composite(lambda draw: _program(draw, 0))()


def _emit(ops: list, lines: list[str], counter: list[int], indent: str) -> None:
    """Tensor-language text for the generated program; alloca names are %a<k>."""
    local = {}
    for i, op in enumerate(ops):
        if op[0] == "alloca":
            _, ty, count, align = op
            if align is not None and align % ELEMENTS[ty]:
                align = ELEMENTS[ty]
            name = f"a{counter[0]}"
            counter[0] += 1
            local[i] = name
            attrs = f" {{alignment={align}}}" if align else ""
            lines.append(f"{indent}%{name} = alloca{attrs} : memref<{ty}x{count},local>")
        elif op[0] == "stop":
            lines.append(f"{indent}lifetime_stop %{local[op[1]]}")
        elif op[0] == "if":
            lines.append(f"{indent}if %cond {{")
            _emit(op[1], lines, counter, indent + "  ")
            lines.append(f"{indent}}} else {{")
            _emit(op[2], lines, counter, indent + "  ")
            lines.append(f"{indent}}}")
        else:
            lines.append(f"{indent}for %i{counter[0]} = %c0, %n {{")
            counter[0] += 1
            _emit(op[1], lines, counter, indent + "  ")
            lines.append(f"{indent}}}")


def _live_intervals(fn) -> list[tuple[int, int, Alloca]]:
    """(first, last) positions in pre-order of each alloca's lifetime, computed independently."""
    intervals = []
    position = [0]

    def walk(region):
        start = {}
        for inst in region.instructions:
            here = position[0]
            position[0] += 1
            if isinstance(inst, Alloca):
                start[inst.result] = (here, inst)
            elif inst.opname == "lifetime_stop" and inst.operands[0] in start:
                first, alloca = start.pop(inst.operands[0])
                intervals.append((first, here, alloca))
            for sub in inst.regions:
                walk(sub)
        end = position[0]
        intervals.extend((first, end, alloca) for first, alloca in start.values())

    walk(fn.body)
    return intervals


@settings(max_examples=200, deadline=None)
@given(programs)
def test_simultaneously_live_allocas_never_overlap(ops):
    lines: list[str] = []
    _emit(ops, lines, [0], "  ")
    fn = run(kernel("\n".join(lines)), [assign_local_memory]).functions[0]
    intervals = _live_intervals(fn)
    for first, last, inst in intervals:
        offset = inst.attrs["stack_offset"]
        assert offset % alloca_alignment(inst) == 0
        assert offset + alloca_size(inst) <= fn.attrs["local_memory_size"]
    for i, (f1, l1, a1) in enumerate(intervals):
        for f2, l2, a2 in intervals[i + 1:]:
            if f1 < l2 and f2 < l1:   # lifetimes overlap
                o1, o2 = a1.attrs["stack_offset"], a2.attrs["stack_offset"]
                assert o1 + alloca_size(a1) <= o2 or o2 + alloca_size(a2) <= o1, \
                    f"%{a1.result.name} and %{a2.result.name} overlap while both live"
    if intervals:
        assert fn.attrs["local_memory_size"] == max(
            a.attrs["stack_offset"] + alloca_size(a) for _, _, a in intervals)
