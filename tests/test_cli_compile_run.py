"""`tinyc compile`, `tinyc run`, `tinyc bench` and `tinyc devices` as a user calls them."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest
from click.testing import CliRunner

from tinyc.cli import cli
from tinyc.spirv.tools import disassemble, validate

SAMPLES = sorted(glob.glob(str(Path(__file__).parent.parent / "samples" / "*.ir")))


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: Path(p).stem)
def test_every_sample_compiles_to_valid_spirv(sample, tmp_path):
    out = tmp_path / "k.spv"
    result = invoke("compile", sample, "-o", str(out))
    assert result.exit_code == 0, result.output
    binary = out.read_bytes()
    validate(binary)  # spirv-val, independently of the compiler's own check
    assert "OpEntryPoint Kernel" in disassemble(binary)


def test_assembly_and_lowered_ir_and_stage_times(tmp_path):
    fused = next(s for s in SAMPLES if s.endswith("fused_kernel.ir"))
    asm = invoke("compile", fused, "-S", "-o", "-")
    assert asm.exit_code == 0 and "OpEntryPoint Kernel" in asm.output
    lowered = invoke("compile", fused, "--emit", "lowered")
    assert lowered.exit_code == 0
    code = "\n".join(line for line in lowered.output.splitlines() if not line.startswith(";"))
    assert "cooperative_matrix_mul_add" in code and "gemm" not in code
    assert lowered.output.startswith('; schedule: {"fused_kernel": {"subgroup_size": 16')
    timed = invoke("compile", fused, "-o", str(tmp_path / "f.spv"), "--time")
    for stage in ("parse", "verify", "passes", "codegen", "total"):
        assert stage in timed.output


def test_compile_error_exits_1_with_location(tmp_path):
    bad = tmp_path / "bad.ir"
    bad.write_text("func @k(%a: memref<f32x4x4>) {\n  %x = arith.add %a, %a : f32\n}\n")
    result = invoke("compile", str(bad), "-o", str(tmp_path / "bad.spv"))
    assert result.exit_code == 1
    assert f"{bad}:2." in result.output and "error:" in result.output


def test_print_after_one_pass_shows_its_ir_on_stderr(tmp_path):
    from tinyc.ir.instructions import Barrier, Gemm
    from tinyc.parser import parse

    fused = next(s for s in SAMPLES if s.endswith("fused_kernel.ir"))
    result = invoke("compile", fused, "-o", str(tmp_path / "f.spv"), "--print-after", "insert-barriers")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    header, _, text = result.stderr.partition("\n")
    assert header == "; IR after insert-barriers"
    after = list(parse(text)["fused_kernel"].walk())  # printed IR reads back
    # the two gemms share tmp0 (written, then read): a local barrier between them, not lowered yet
    kinds = [type(inst) for inst in after if isinstance(inst, (Gemm, Barrier))]
    assert kinds == [Gemm, Barrier, Gemm]


def test_print_after_all_follows_the_pipeline(tmp_path):
    from tinyc.passes import PIPELINE

    fused = next(s for s in SAMPLES if s.endswith("fused_kernel.ir"))
    result = invoke("compile", fused, "-o", str(tmp_path / "f.spv"), "--print-after", "all")
    assert result.exit_code == 0, result.output
    headers = [line for line in result.stderr.splitlines() if line.startswith("; IR after ")]
    assert headers == [f"; IR after {name}" for name, _ in PIPELINE]


def test_print_after_an_unknown_pass_is_a_usage_error(tmp_path):
    fused = next(s for s in SAMPLES if s.endswith("fused_kernel.ir"))
    result = invoke("compile", fused, "-o", str(tmp_path / "f.spv"), "--print-after", "lower-gemm")
    assert result.exit_code == 2
    assert "no pass 'lower-gemm'; passes: apply-schedule, work-group-size," in result.stderr
    assert not (tmp_path / "f.spv").exists()


def test_run_kernel_without_collectives_with_check(device):
    elementwise = next(s for s in SAMPLES if s.endswith("elementwise.ir"))
    result = invoke("run", elementwise, "--batch", "1000", "--check", "--repeat", "2")
    assert result.exit_code == 0, result.output
    assert "ms per launch" in result.output
    assert "results match the NumPy reference" in result.output


def test_run_fused_kernel_large_batch_with_check(device):
    fused = next(s for s in SAMPLES if s.endswith("fused_kernel.ir"))
    result = invoke("run", fused, "--batch", "100000", "--check", "--repeat", "1")
    assert result.exit_code == 0, result.output
    assert "results match the NumPy reference" in result.output


def test_run_usage_errors_exit_2(device):
    fused = next(s for s in SAMPLES if s.endswith("fused_kernel.ir"))
    assert invoke("run", fused, "--kernel", "nope").exit_code == 2
    assert invoke("run", fused, "--size", "oops").exit_code == 2
    assert invoke("run", fused, "--size", "Q=3").exit_code == 2


def test_bench_reports_rates(device):
    batched = next(s for s in SAMPLES if s.endswith("batched_gemm.ir"))
    result = invoke("bench", batched, "--batch", "200", "--repeat", "3", "--warmup", "1")
    assert result.exit_code == 0, result.output
    assert "GFLOP/s" in result.output
    out = result.output
    assert "memory ceiling" in out and "best of copy" in out and "read" in out and "triad" in out
    assert "FMA peak" in out and "(f32," in out and "roofline at" in out


def test_bench_of_a_kernel_without_work_places_nothing_on_the_roofline(device, tmp_path):
    empty = tmp_path / "empty.ir"
    empty.write_text("func @k() {}\n")
    result = invoke("bench", str(empty), "--batch", "10", "--repeat", "2", "--warmup", "1")
    assert result.exit_code == 0, result.output
    assert "nothing to place on the roofline" in result.output and "inf flop/byte" not in result.output


def test_bench_of_an_integer_kernel_claims_no_share_of_the_fma_peak(device, tmp_path):
    """Integer arithmetic is not counted as flops: no "reaches 0% of the FMA peak" line."""
    kernel = tmp_path / "ints.ir"
    kernel.write_text("""func @k(%A: memref<i32x64x?>) {
  %g = builtin.group_id : index
  %b = subview %A[:, %g] : memref<i32x64>
  %two = constant 2 : i32
  %c0 = constant 0 : index
  %c64 = constant 64 : index
  foreach (%i) = (%c0), (%c64) {
    %x = load %b[%i] : i32
    %y = arith.mul %x, %two : i32
    store %y, %b[%i]
  }
}
""")
    result = invoke("bench", str(kernel), "--batch", "100", "--repeat", "2", "--warmup", "1")
    assert result.exit_code == 0, result.output
    assert "memory ceiling" in result.output and "no floating-point operation counted" in result.output
    assert "of the FMA peak" not in result.output and "FMA peak" not in result.output


def test_the_fma_peak_is_measured_on_a_queue_without_profiling(device):
    """Events of a queue made without profiling report 0 ns: the wall clock is taken then
    (a division by that 0 raised ZeroDivisionError)."""
    import dpctl

    from tinyc.cli.roofline import measure_peak

    queue = dpctl.SyclQueue(device)   # (no "enable_profiling" property)
    rate, config = measure_peak(queue, "f32", repeat=1)
    assert 0 < rate < float("inf") and "chains" in config


def test_roofline_ceilings_are_the_best_of_their_kernels(device):
    from tinyc.cli.roofline import STREAMS, measure

    found = measure(device, 4 << 20, "f64", repeat=2)
    assert not found.problems
    assert set(found.streams) == set(STREAMS)
    assert found.bandwidth == max(found.streams.values()) > 0
    assert found.footprint >= 4 << 20
    assert found.peak_flops > 0 and found.peak_type == "f64" and "chains" in found.peak_config
    low = 0.01 * found.peak_flops / found.bandwidth
    assert found.attainable(low) == low * found.bandwidth
    assert found.attainable(1e9) == found.peak_flops


def test_devices_lists_a_spirv_device(device):
    result = invoke("devices")
    assert result.exit_code == 0 and result.output.strip()
