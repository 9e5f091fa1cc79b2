"""`tinyc run --check` beyond 256 work-groups on outputs written in a chunk per work-group.

A kernel that gives work-group g the entries [step·g, step·g + step) of its
output's batch mode (what `tinyc einsum` prints: blocks of entries, or lanes
of a subgroup over a chunk of 512) has no mode the group id indexes alone;
the check samples work-groups and compares their chunks
(launch_bounds.WriteBlock). Writes that reach into a neighbour's chunk are
not such a partition: those outputs are compared whole or not at all.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import tinyc
import tinyc.harness.check
from tinyc.cli import cli
from tinyc.harness.check import compare_outputs
from tinyc.runtime.launch_check import write_blocks


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def chunked(width: int) -> str:
    """Work-group g writes B[4g + i] for i < width: its own chunk when width <= 4."""
    return f"""func @k(%A: memref<f32x?>, %B: memref<f32x?>) {{
  %g = builtin.group_id : index
  %c4 = constant 4 : index
  %base = arith.mul %g, %c4 : index
  %n = size %B[0] : index
  %c0 = constant 0 : index
  %w = constant {width} : index
  for %i = %c0, %w {{
    %e = arith.add %base, %i : index
    %inside = cmp.lt %e, %n : bool
    if %inside {{
      %x = load %A[%e] : f32
      %y = arith.add %x, %x : f32
      store %y, %B[%e]
    }}
  }}
}}
"""


@pytest.fixture
def sampled(monkeypatch):
    """Every --check beyond 256 work-groups samples (the reference never runs them all)."""
    monkeypatch.setattr(tinyc.harness.check, "FULL_CHECK_SECONDS", 0.0)


def test_a_chunk_per_work_group_is_found_at_the_launch(device):
    kernel = tinyc.compile(chunked(4))["k"]
    a, b = np.zeros(4 * 300, np.float32), np.zeros(4 * 300, np.float32)
    assert write_blocks(kernel.info, [a, b], 300) == {1: ((0,), 4)}
    wide = tinyc.compile(chunked(6))["k"]  # g also writes 4(g+1), 4(g+1) + 1
    assert write_blocks(wide.info, [a, b], 300) == {}


def test_check_compares_the_chunks_of_sampled_work_groups(tmp_path, device, sampled):
    path = tmp_path / "k.ir"
    path.write_text(chunked(4))
    result = invoke("run", str(path), "--batch", "300", "--size", "A=1200", "--size", "B=1200",
                    "--check", "--repeat", "1")
    assert result.exit_code == 0, result.output
    assert "compared %B (256 elements, the chunks of 4 entries of 64 sampled work-groups of 300)" in result.output
    path.write_text(chunked(6))
    wide = invoke("run", str(path), "--batch", "300", "--size", "A=1200", "--size", "B=1200",
                  "--check", "--repeat", "1")
    assert wide.exit_code == 1 and "%B (not partitioned by work-group" in wide.output


def test_a_difference_inside_a_sampled_chunk_fails_the_check(device):
    kernel = tinyc.compile(chunked(4))["k"]
    want = np.arange(1200, dtype=np.float32)
    groups = [3, 250]
    inside, outside = want.copy(), want.copy()
    inside[4 * 250 + 3] += 1
    outside[4 * 251] += 1  # work-group 251 was not sampled
    blocks = {1: ((0,), 4)}
    (found,), _ = compare_outputs(kernel.info, [None, inside], [None, want], 300, groups, blocks)
    assert found.elements == 8 and found.error is not None
    (found,), _ = compare_outputs(kernel.info, [None, outside], [None, want], 300, groups, blocks)
    assert found.error is None


def split_entries(sized_by: str) -> str:
    """Work-group g writes B[g rem d, g div d] with d = max(size of `sized_by` mode 0, 1): an
    entry's number split into two modes (what `tinyc einsum` prints for two batch labels)."""
    return f"""func @k(%A: memref<f32x?x?>, %B: memref<f32x?x?>) {{
  %g = builtin.group_id : index
  %n = size %{sized_by}[0] : index
  %c1 = constant 1 : index
  %small = cmp.lt %n, %c1 : bool
  %d = if %small -> (index) {{
    yield (%c1)
  }} else {{
    yield (%n)
  }}
  %i = arith.rem %g, %d : index
  %j = arith.div %g, %d : index
  %x = load %A[%i, %j] : f32
  %y = arith.add %x, %x : f32
  store %y, %B[%i, %j]
}}
"""


def test_an_entry_split_into_two_modes_is_a_chunk_of_both_flattened(device):
    kernel = tinyc.compile(split_entries("B"))["k"]
    a, b = np.zeros((7, 50), np.float32, order="F"), np.zeros((7, 50), np.float32, order="F")
    assert write_blocks(kernel.info, [a, b], 350) == {1: ((0, 1), 1)}
    other = tinyc.compile(split_entries("A"))["k"]  # split by another argument's size: not B's chunk
    assert write_blocks(other.info, [a, b], 350) == {}
    want = np.arange(350, dtype=np.float32).reshape(7, 50, order="F")
    inside, outside = want.copy(), want.copy()
    inside[3, 36] += 1   # entry 3 + 7 * 36 = 255: a sampled work-group
    outside[4, 36] += 1  # entry 256: not sampled
    blocks = {1: ((0, 1), 1)}
    (found,), _ = compare_outputs(kernel.info, [None, inside], [None, want], 350, [3, 255], blocks)
    assert found.elements == 2 and found.error is not None
    (found,), _ = compare_outputs(kernel.info, [None, outside], [None, want], 350, [3, 255], blocks)
    assert found.error is None


@pytest.mark.parametrize("subscripts, shapes", [
    ("ijb,jb->ib", ["A=16x16x1000", "B=16x1000"]),               # lanes: chunks of 512 entries
    ("bij,bjk->bik", ["A=1000x8x8", "B=1000x8x12"]),              # blocks of entries
    ("lik,jkb,ljb->jlb", ["A=1x16x17", "B=1x17x100", "C=1x1x100"]),
    ("abij,abjk->abik", ["A=10x30x4x5", "B=10x30x5x6"]),         # an entry split by %nb
    ("aibj,ajbk->aibk", ["A=20x8x100x8", "B=20x8x100x8"]),
])
def test_printed_einsum_programs_check_at_a_large_batch(tmp_path, device, sampled, subscripts, shapes):
    printed = invoke("einsum", subscripts, *[x for s in shapes for x in ("--shape", s)])
    assert printed.exit_code == 0, printed.output
    path = tmp_path / "e.ir"
    path.write_text(printed.output)
    checked = invoke("check", str(path))
    assert checked.exit_code == 0 and ": note: " not in checked.output, checked.output  # all bounded
    result = invoke("run", str(path), "--batch", "300", "--check", "--repeat", "1")
    assert result.exit_code == 0, result.output
    assert "sampled work-groups of 300" in result.output and "results match" in result.output
