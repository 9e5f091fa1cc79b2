"""work-group-size: defaults per device and element type, attribute overrides, errors."""

from __future__ import annotations

import pytest

from pass_testlib import parse_checked
from tinyc.diagnostics import CompilationError
from tinyc.passes import PassOptions
from tinyc.target.device_info import CPU_DEVICE, DeviceInfo
from tinyc.passes.work_group_size import choose_work_group_size

GPU = DeviceInfo(subgroup_sizes=(8, 16, 32), max_work_group_size=1024,
                 local_memory_size=131072, is_cpu=False)


def gemm_kernel(ty: str = "f32", shape: str = "16x16", attributes: str = "") -> str:
    """C (shape MxN) += A (MxM) B (MxN)."""
    attrs = f" attributes {attributes}" if attributes else ""
    rows = shape.split("x")[0]
    return f"""func @k(%A: memref<{ty}x{rows}x{rows}>, %B: memref<{ty}x{shape}>,
        %C: memref<{ty}x{shape}>){attrs} {{
  %one = constant 1.0 : {ty}
  gemm.n.n %one, %A, %B, %one, %C
}}
"""


def choose(text: str, device: DeviceInfo | None = None, subgroup_size: int | None = None):
    fn = parse_checked(text).functions[0]
    choose_work_group_size(fn, PassOptions(subgroup_size=subgroup_size, device_info=device))
    return fn.attrs["subgroup_size"], fn.attrs["work_group_size"]


def error(text: str, device: DeviceInfo | None = None, subgroup_size: int | None = None):
    with pytest.raises(CompilationError) as info:
        choose(text, device, subgroup_size)
    (diagnostic,) = info.value.diagnostics
    return diagnostic


# ---------------------------------------------------------------- defaults

def test_cpu_default_is_one_subgroup_of_16():
    assert choose(gemm_kernel()) == (16, [16, 1])


def test_cpu_default_without_device_info_is_the_cpu_device():
    assert choose(gemm_kernel(), CPU_DEVICE) == choose(gemm_kernel())


def _typed(ty: str) -> str:
    text = gemm_kernel(ty)
    if ty.startswith("i"):
        return text.replace("constant 1.0", "constant 1")
    if ty.startswith("c"):
        return text.replace("constant 1.0", "constant [1.0, 0.0]")
    return text


@pytest.mark.parametrize("ty", ["i8", "f16", "bf16", "f32", "i64", "c32", "c64"])
def test_cpu_uses_16_for_every_element_type_but_f64(ty):
    # Measured: 32 lanes for f16 were not faster (see the module docstring).
    assert choose(_typed(ty)) == (16, [16, 1])


def test_cpu_uses_8_lanes_for_f64_matmuls():
    # Measured: one AVX-512 register per f64 value, 0.71-0.96x the time of 16 lanes at 32³, 64³.
    assert choose(_typed("f64")) == (8, [8, 1])


def test_kernel_without_memory_uses_16():
    assert choose("func @k() {\n}\n") == (16, [16, 1])


def test_coopmatrix_rows_narrow_the_subgroup_size():
    text = """func @k(%A: memref<f32x8x8>) {
  %c0 = constant 0 : index
  parallel {
    %a = cooperative_matrix_load.n %A[%c0, %c0] : coopmatrix<f32x8x8,matrix_acc>
    cooperative_matrix_store %a, %A[%c0, %c0]
  }
}
"""
    assert choose(text) == (8, [8, 1])


def test_a_column_reduction_result_does_not_hide_the_other_rows():
    """A 1×8 matrix pads at any size; the 8-row matrices still choose 8."""
    text = """func @k(%A: memref<f32x8x8>, %B: memref<f32x1x8>) {
  %c0 = constant 0 : index
  parallel {
    %a = cooperative_matrix_load.n %A[%c0, %c0] : coopmatrix<f32x8x8,matrix_acc>
    %s = cooperative_matrix_reduce_add.column %a : coopmatrix<f32x1x8,matrix_acc>
    cooperative_matrix_store %s, %B[%c0, %c0]
  }
}
"""
    assert choose(text) == (8, [8, 1])


def test_gpu_uses_16_for_f64_and_tiles_columns():
    assert choose(gemm_kernel("f64", "64x64"), GPU) == (16, [16, 4])


def test_gpu_small_output_is_one_subgroup():
    assert choose(gemm_kernel("f32", "16x8"), GPU) == (16, [16, 1])


def test_gpu_columns_tiles():
    assert choose(gemm_kernel("f32", "32x40"), GPU) == (16, [16, 3])


def test_gpu_dynamic_columns_take_the_cap():
    assert choose(gemm_kernel("f32", "16x?"), GPU) == (16, [16, 4])


def test_gpu_respects_max_work_group_size():
    small = DeviceInfo((16,), 32, 65536, False)
    assert choose(gemm_kernel("f32", "64x64"), small) == (16, [16, 2])


def test_device_without_16_takes_nearest_size():
    assert choose(gemm_kernel(), DeviceInfo((8, 32), 256, 65536, False)) == (32, [32, 1])


# ---------------------------------------------------------------- overrides

def test_subgroup_size_attribute():
    assert choose(gemm_kernel(attributes="{subgroup_size=32}")) == (32, [32, 1])


def test_work_group_size_attribute_with_subgroup_size():
    text = gemm_kernel(attributes="{subgroup_size=16, work_group_size=[64, 2]}")
    assert choose(text) == (16, [64, 2])


def test_work_group_size_alone_picks_a_dividing_subgroup_size():
    # The divisor of X nearest to 16, on every device.
    assert choose(gemm_kernel(attributes="{work_group_size=[64, 2]}")) == (16, [64, 2])
    assert choose(gemm_kernel(attributes="{work_group_size=[24, 1]}")) == (8, [24, 1])
    assert choose(gemm_kernel(attributes="{work_group_size=[8, 1]}")) == (8, [8, 1])
    assert choose(gemm_kernel(attributes="{work_group_size=[4, 3]}")) == (4, [4, 3])
    assert choose(gemm_kernel(attributes="{work_group_size=[24, 1]}"), GPU) == (8, [24, 1])


def test_callers_subgroup_size():
    assert choose(gemm_kernel(), subgroup_size=32) == (32, [32, 1])


def test_attribute_wins_over_the_caller():
    assert choose(gemm_kernel(attributes="{subgroup_size=8}"), subgroup_size=32) == (8, [8, 1])


def test_attributes_are_written_back_as_printed_ir():
    from tinyc.ir.printer import print_program

    program = parse_checked(gemm_kernel())
    choose_work_group_size(program.functions[0], PassOptions())
    assert "attributes {subgroup_size=16, work_group_size=[16, 1]}" in print_program(program)


# ---------------------------------------------------------------- errors

def test_unsupported_subgroup_size():
    d = error(gemm_kernel(attributes="{subgroup_size=4}"), GPU)
    assert d.message == ("function '@k': subgroup_size 4 is not supported by the device; "
                         "use one of 8, 16, 32")
    assert (d.line, d.column, d.end_line) == (1, 1, 5)


def test_first_mode_not_a_multiple_of_the_subgroup_size():
    d = error(gemm_kernel(attributes="{subgroup_size=16, work_group_size=[24, 1]}"))
    assert d.message == ("function '@k': the first work_group_size mode (24) must be a multiple "
                         "of the subgroup_size (16)")
    assert (d.line, d.column) == (1, 1)


def test_first_mode_not_a_multiple_of_any_supported_size():
    d = error(gemm_kernel(attributes="{work_group_size=[12, 1]}"), GPU)
    assert d.message == ("function '@k': the first work_group_size mode (12) must be a multiple "
                         "of a subgroup size supported by the device (8, 16, 32)")
    assert (d.line, d.column) == (1, 1)


def test_work_group_too_large_for_the_device():
    d = error(gemm_kernel(attributes="{work_group_size=[64, 32]}"), GPU)
    assert d.message == ("function '@k': work_group_size 64x32 has 2048 work-items; "
                         "the device allows at most 1024")
    assert (d.line, d.column) == (1, 1)


def test_callers_subgroup_size_unsupported():
    d = error(gemm_kernel(), GPU, subgroup_size=64)
    assert d.message == ("function '@k': the subgroup size requested by the caller (64) is not "
                         "supported by the device; use one of 8, 16, 32")


def test_callers_subgroup_size_against_work_group_size():
    d = error(gemm_kernel(attributes="{work_group_size=[8, 1]}"), subgroup_size=16)
    assert d.message == ("function '@k': the first work_group_size mode (8) must be a multiple "
                         "of the subgroup size requested by the caller (16)")


def test_error_renders_with_the_function_excerpt():
    d = error(gemm_kernel(attributes="{subgroup_size=4}"), GPU)
    assert str(d).startswith("test.ir:1.1-5.1: error: function '@k': subgroup_size 4")
