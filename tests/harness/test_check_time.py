"""`tinyc run --check` keeps to a time budget: a slow reference compares a sample.

The reference interpreter can take seconds per work-group (a printed contraction
with chunks of 128 entries of 2,000-long rows). A batch of more than PROBE_GROUPS
first runs PROBE_GROUPS sampled work-groups; when every work-group would take
longer than FULL_CHECK_SECONDS, the check compares a sample that fits
SAMPLE_SECONDS instead of running them all (found by a campaign of printed
programs: `tinyc run --check --batch 100` of `jlk,bl->kbl` ran for minutes).
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import tinyc.harness.check as check
from tinyc.cli import cli

BY_GROUP = """func @k(%A: memref<f32x4x?>, %B: memref<f32x4x?>) {
  %g = builtin.group_id : index
  %c0 = constant 0 : index
  %c4 = constant 4 : index
  for %i = %c0, %c4 {
    %x = load %A[%i, %g] : f32
    store %x, %B[%i, %g]
  }
}
"""


def run(tmp_path: Path, batch: int):
    path = tmp_path / "k.ir"
    path.write_text(BY_GROUP)
    return CliRunner().invoke(cli, ["run", str(path), "--batch", str(batch), "--check", "--repeat", "1"])


def test_a_quick_reference_checks_every_work_group(tmp_path: Path, device):
    result = run(tmp_path, 40)
    assert result.exit_code == 0, result.output
    assert "compared %B (160 elements, every work-group of 40)" in result.output


def test_a_slow_reference_checks_a_sample(tmp_path: Path, device, monkeypatch):
    monkeypatch.setattr(check, "FULL_CHECK_SECONDS", 0.0)   # every work-group: too slow
    monkeypatch.setattr(check, "SAMPLE_SECONDS", 0.0)       # the probe's sample is all there is time for
    result = run(tmp_path, 40)
    assert result.exit_code == 0, result.output
    assert f"compared %B ({4 * check.PROBE_GROUPS} elements, {check.PROBE_GROUPS} sampled work-groups of 40)" \
        in result.output
    assert "results match the NumPy reference" in result.output


def test_the_sample_grows_with_the_time_there_is(tmp_path: Path, device, monkeypatch):
    monkeypatch.setattr(check, "FULL_CHECK_SECONDS", 0.0)
    result = run(tmp_path, 40)   # SAMPLE_SECONDS (10 s) fits many quick work-groups: 40, all of them
    assert result.exit_code == 0, result.output
    assert "compared %B (160 elements, 40 sampled work-groups of 40)" in result.output


def test_no_work_group_runs_twice_in_the_reference(tmp_path: Path, device, monkeypatch):
    """The probe's work-groups are part of the whole check, not run again."""
    import tinyc.reference

    ran: list[int] = []
    real = tinyc.reference.run

    def counting(fn, args, batch, groups=None, **options):
        groups = list(range(batch) if groups is None else groups)
        ran.extend(groups)
        return real(fn, args, batch, groups, **options)

    monkeypatch.setattr(tinyc.reference, "run", counting)
    result = run(tmp_path, 40)
    assert result.exit_code == 0, result.output
    assert "every work-group of 40" in result.output
    assert sorted(ran) == list(range(40))
