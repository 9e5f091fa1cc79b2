"""Perturbed launches of every sample: a correct result, or a refusal before anything runs.

For each kernel of samples/*.ir, `tinyc run`'s generator makes valid
arguments; then one argument at a time is perturbed as a user might get it
wrong: an array shrunk by a row or by one batch entry, transposed, a group
one member short, an integer scalar out of range. Each perturbed launch
must either raise LaunchError (BoundsError included) and leave every array
as it was, or compute what the NumPy reference interpreter computes on the
same inputs, without the reference finding an out-of-bounds access, and
without touching the memory around a shrunk view (its parent's other
entries hold a sentinel that must survive).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc.harness.arguments import make_arguments
from tinyc.harness.check import compare_outputs
from tinyc.ir.types import GroupType, MemrefType, ScalarType
from tinyc.reference import ReferenceFault, ReferenceUnsupported
from tinyc.reference import run as run_reference
from tinyc.reference.arguments import copy_argument

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "samples").glob("*.ir"))
BATCH = 5
SENTINEL = 7.25


def _shrunk(array: np.ndarray, mode: int, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """(a view of `array` with `keep` entries of `mode`, its parent holding `array` and
    sentinels around the view's entries)."""
    parent = np.empty_like(array, order="F")
    if np.issubdtype(parent.dtype, np.integer):
        parent[...] = 77
    else:
        parent[...] = SENTINEL
    index = (slice(None),) * mode + (slice(0, keep),)
    parent[index] = array[index]
    return parent[index], parent


def perturbations(info, args):
    """(description, perturbed arguments, parent arrays whose other entries must survive)."""
    for p, (param, value) in enumerate(zip(info.params, args)):
        t = param.type
        if isinstance(t, MemrefType) and isinstance(value, np.ndarray) and value.ndim:
            for mode in {0, value.ndim - 1}:
                if value.shape[mode] == 0:
                    continue
                view, parent = _shrunk(value, mode, value.shape[mode] - 1)
                yield f"%{param.name} one entry short in mode {mode}", _with(args, p, view), [(parent, view)]
            if value.ndim >= 2:
                yield f"%{param.name} transposed", _with(args, p, value.T), []
        elif isinstance(t, GroupType) and isinstance(value, list) and value:
            yield f"%{param.name} one member short", _with(args, p, value[:-1]), []
        elif isinstance(t, ScalarType) and t.is_int:
            for bad in (-1, value + 1000, 2**31 - 1):
                yield f"%{param.name} = {bad}", _with(args, p, bad), []


def _with(args, p, value):
    out = [copy_argument(a) for a in args]
    out[p] = value
    return out


def _snapshot(args):
    return [copy_argument(a) for a in args]


def _same(a, b) -> bool:
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return True


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_perturbed_launches_are_refused_or_correct(device, path):
    program = tinyc.compile(path.read_text(), name=str(path))
    checked = program.checked_ir()
    for name in program.kernel_names:
        kernel, fn = program[name], checked[name]
        args, _ = make_arguments(fn, kernel.info, BATCH, {}, seed=3)
        outcomes = []
        for what, perturbed, parents in perturbations(kernel.info, args):
            before = _snapshot(perturbed)
            around = [parent.copy() for parent, _ in parents]
            try:
                kernel(*perturbed, batch=BATCH)
            except tinyc.LaunchError:
                assert all(_same(a, b) for a, b in zip(perturbed, before)), f"{name}, {what}: changed"
                outcomes.append("refused")
                continue
            for (parent, view), old in zip(parents, around):
                outside = np.ones(parent.shape, bool)
                outside[tuple(slice(0, n) for n in view.shape)] = False
                assert np.array_equal(parent[outside], old[outside], equal_nan=True), \
                    f"{name}, {what}: the launch wrote outside the argument"
            reference = before
            try:
                run_reference(checked[name], reference, BATCH, work_group_size=kernel.info.work_group_size,
                              subgroup_size=kernel.info.subgroup_size)
            except ReferenceUnsupported:
                outcomes.append("ran")
                continue
            except ReferenceFault as fault:
                pytest.fail(f"{name}, {what}: the launch ran, but the reference finds {fault}")
            compared, _ = compare_outputs(kernel.info, perturbed, reference, BATCH, None)
            failed = [c for c in compared if c.error]
            assert not failed, f"{name}, {what}: {failed}"
            outcomes.append("correct")
        assert outcomes  # every sample has something to perturb
