"""Schedules in the source and apart from it, without a device: syntax, checks, precedence.

Error tests assert the message and the location (docs/schedules.md says
what each knob accepts); fit tests use explicit device descriptions, so they
do not depend on the machine.
"""

from __future__ import annotations

import json
import re

import pytest

from tinyc.compiler import compile_to_spirv
from tinyc.diagnostics import CompilationError
from tinyc.ir.printer import print_program
from tinyc.ir.verifier import verify
from tinyc.parser import parse
from tinyc.target.device_info import DeviceInfo
from tinyc.schedule import Schedule
from tinyc.ir.knobs import FUNCTION_KNOBS, KNOB_NAMES
from tinyc.schedule.knobs import COLLECTIVE_KNOBS

AVX512 = DeviceInfo()
AVX2 = DeviceInfo(vector_bytes=32, vector_registers=16)

GEMM = """func @k(%A: memref<f32x64x64>, %B: memref<f32x64x64>, %C: memref<f32x64x64>) {
  %one = constant 1.0 : f32
  gemm.TA.n %one, %A, %B, %one, %C ATTRS
}
"""


def gemm(attrs: str = "", ta: str = "n") -> str:
    return GEMM.replace(" ATTRS", f" attributes {attrs}" if attrs else "").replace("TA", ta)


def used(source: str, schedule=None, device=AVX512, tuned=None) -> dict:
    return compile_to_spirv(source, "k.ir", device_info=device, schedule=schedule,
                            tuned=tuned, validate=False).schedules["k"]


def error_of(source: str, **kwargs) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        compile_to_spirv(source, "k.ir", validate=False, **kwargs)
    return info.value


def test_every_collective_declares_the_four_knobs_with_a_search_space_in_range():
    for opname, knobs in COLLECTIVE_KNOBS.items():
        assert tuple(knobs)[:4] == KNOB_NAMES, opname
        assert tuple(knobs)[4:] == (("swap",) if opname == "gemm" else ()), opname
        for knob in knobs.values():
            assert knob.doc and knob.space, (opname, knob.name)
            assert all(knob.problem(v) is None for v in knob.space), (opname, knob.name)
    assert FUNCTION_KNOBS["subgroup_size"].problem(3) is not None


def test_attributes_on_an_instruction_round_trip_through_the_printer():
    program = parse(gemm('{"tile"=[2, 4], "k_unroll"=2, "stage"=false, "vector_width"=4}'))
    verify(program)
    text = print_program(program)
    assert 'gemm.n.n %one, %A, %B, %one, %C attributes {"tile"=[2, 4], "k_unroll"=2, ' \
           '"stage"=false, "vector_width"=4}' in text
    assert print_program(parse(text)) == text


def test_source_attributes_are_the_schedule_used():
    got = used(gemm('{"tile"=[2, 4], "k_unroll"=2}'))
    assert got["gemm#0"]["tile"] == [2, 4] and got["gemm#0"]["k_unroll"] == 2
    assert got["subgroup_size"] == 16 and got["work_group_size"] == [16, 1]


@pytest.mark.parametrize("attrs, message", [
    ('{"tiel"=[2, 4]}', "unknown schedule knob 'tiel' on gemm (did you mean 'tile'?)"),
    ('{"tile"=[9, 4]}', "'tile' first entry must lie in 1..8, got 9"),
    ('{"tile"=[1, 2, 3]}', "'tile' must be an array of 2 integers, got [1, 2, 3]"),
    ('{"k_unroll"=0}', "'k_unroll' must lie in 1..16, got 0"),
    ('{"stage"=1}', "'stage' must be one of false, true, got 1"),
    ('{"vector_width"=5}', "'vector_width' must be one of 1, 2, 3, 4, 8, 16, got 5"),
])
def test_bad_knobs_in_the_source_are_errors_at_the_instruction(attrs, message):
    err = error_of(gemm(attrs))
    (diag,) = err.diagnostics
    assert message in diag.message
    assert (diag.line, diag.column) == (3, 3)


def test_knobs_a_collective_has_no_choice_for_accept_only_their_one_value():
    src = """func @k(%A: memref<f32x8x8>, %B: memref<f32x8x8>) {
  %one = constant 1.0 : f32
  axpby.n %one, %A, %one, %B attributes {"stage"=true}
}
"""
    (diag,) = error_of(src).diagnostics
    assert "'stage' must be one of false, got true on axpby" in diag.message


def test_a_schedule_apart_from_the_source_overrides_its_attributes():
    src = gemm('{"tile"=[2, 4], "k_unroll"=2}')
    got = used(src, schedule={"k": {"subgroup_size": 8, "gemm": {"tile": [4, 2]}}})
    assert got["subgroup_size"] == 8
    assert got["gemm#0"]["tile"] == [4, 2] and got["gemm#0"]["k_unroll"] == 2


def test_tuned_knobs_yield_to_the_source():
    src = gemm('{"tile"=[2, 4]}')
    got = used(src, tuned={"k": {"subgroup_size": 8, "gemm#0": {"tile": [1, 1], "k_unroll": 3}}})
    assert got["gemm#0"]["tile"] == [2, 4] and got["gemm#0"]["k_unroll"] == 3
    assert got["subgroup_size"] == 8


def test_instruction_keys_count_per_opname_in_source_order():
    src = """func @k(%A: memref<f32x16x16>, %B: memref<f32x16x16>, %C: memref<f32x16x16>) {
  %one = constant 1.0 : f32
  gemm.n.n %one, %A, %B, %one, %C
  axpby.n %one, %A, %one, %B
  gemm.n.t %one, %A, %B, %one, %C
}
"""
    got = used(src, schedule={"k": {"gemm": {"k_unroll": 2}, "gemm#1": {"k_unroll": 4}}})
    assert [key for key in got if "#" in key] == ["gemm#0", "axpby#0", "gemm#1"]
    assert got["gemm#0"]["k_unroll"] == 2 and got["gemm#1"]["k_unroll"] == 4


@pytest.mark.parametrize("schedule, message", [
    ({"kk": {}}, "schedule: no kernel 'kk' (did you mean 'k'?); kernels: k"),
    ({"k": {"gemm#3": {}}}, "schedule: kernel 'k' has no collective 'gemm#3'"),
    ({"k": {"gemn": {}}}, "unknown key 'gemn' (did you mean 'gemm'?)"),
    ({"k": {"gemm": {"tile": [2]}}}, "'tile' must be an array of 2 integers, got [2]"),
    ({"k": {"subgroup_size": 12}}, "subgroup_size 12 is not supported by any target device"),
    ({"k": {"gemm": [1]}}, "'gemm' expects a dictionary of knobs"),
])
def test_bad_schedules_are_compilation_errors_naming_the_problem(schedule, message):
    err = error_of(gemm(), schedule=schedule)
    assert message in str(err)


def test_schedule_files_are_read_and_a_bad_file_is_named(tmp_path):
    good = tmp_path / "s.json"
    good.write_text(json.dumps({"k": {"gemm": {"tile": [1, 8]}}}))
    assert used(gemm(), schedule=str(good))["gemm#0"]["tile"] == [1, 8]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert f"cannot read the schedule {bad}" in str(error_of(gemm(), schedule=str(bad)))


def test_a_tile_too_large_for_the_registers_is_rejected_on_that_device_only():
    src = gemm('{"tile"=[4, 6]}')      # 24 values of 16 f32 lanes
    assert used(src, device=AVX512)["gemm#0"]["tile"] == [4, 6]  # 24 of 32 zmm registers
    err = error_of(src, device_info=AVX2)                        # 48 of 16 ymm registers
    (diag,) = err.diagnostics
    assert diag.message == ("gemm: the schedule does not fit the device: tile [4, 6] keeps 48 "
                            "vector registers live (24 values of 16 lanes × f32, 2 register(s) "
                            "each); the device has 16 of 32 bytes")
    assert (diag.line, diag.column) == (3, 3)


def test_staging_needs_a_transposed_a_and_room_in_local_memory():
    err = error_of(gemm('{"stage"=true}'))
    assert "stage=true needs a transposed A of static size in global memory" in str(err)
    small = DeviceInfo(local_memory_size=8192)
    err = error_of(gemm('{"stage"=true}', ta="t"), device_info=small)
    assert "stage=true copies op(A) into 16384 bytes of local memory; 8192 bytes are left" in str(err)


def test_subgroup_sizes_the_device_lacks_are_rejected():
    device = DeviceInfo(subgroup_sizes=(8, 16, 32))
    err = error_of(gemm(), schedule={"k": {"subgroup_size": 4}}, device_info=device)
    assert "subgroup_size 4 is not supported by the device; use one of 8, 16, 32" in str(err)


def test_lowered_ir_shows_the_schedule_used_as_a_reusable_schedule():
    result = compile_to_spirv(gemm('{"tile"=[1, 8]}', ta="t"), "k.ir", device_info=AVX512)
    first = result.stages["lowered"].splitlines()[0]
    match = re.fullmatch(r"; schedule: (\{.*\})", first)
    assert match, first
    shown = json.loads(match.group(1))
    assert shown == {"k": result.schedules["k"]}
    assert shown["k"]["gemm#0"] == {"tile": [1, 8], "k_unroll": 8, "stage": True,
                                    "vector_width": 2, "swap": False}
    again = compile_to_spirv(gemm(ta="t"), "k.ir", device_info=AVX512, schedule=shown)
    assert again.spirv == result.spirv, "the shown schedule reproduces the kernel"


def test_schedule_objects_accept_tuples_and_serialise_to_json():
    s = Schedule({"k": {"work_group_size": (16, 1), "gemm": {"tile": (2, 2)}}})
    assert json.loads(s.to_json()) == {"k": {"gemm": {"tile": [2, 2]}, "work_group_size": [16, 1]}}
