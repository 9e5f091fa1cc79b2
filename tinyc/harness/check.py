"""`--check`: the device's results against the NumPy reference interpreter (tinyc.reference).

The reference runs on the same inputs — over every work-group for batches up
to FULL_CHECK_LIMIT whose work-groups it runs quickly enough (PROBE_GROUPS, SAMPLE_SECONDS),
else over up to SAMPLED_GROUPS sampled work-groups, whose slices
of the outputs indexed by the work-group are compared — and the check says
which outputs it compared, over how many elements; it fails when it could
compare nothing. An output that each work-group writes in a chunk of its own
(entries [step·g, step·g + step) of one mode: a contraction's blocks or lanes
of batch entries; launch_bounds.WriteBlock) is compared over the sampled
work-groups' chunks. Any other output cannot be sliced: when the sample's time
says the reference would run every work-group within FULL_CHECK_SECONDS, it
does so and compares them whole.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from tinyc.diagnostics import LaunchError
from tinyc.harness.arguments import group_members
from tinyc.ir.types import GroupType, ScalarType
from tinyc.reference.arguments import copy_argument
from tinyc.runtime.launch_check import write_blocks

FULL_CHECK_LIMIT = 256
SAMPLED_GROUPS = 64
FULL_CHECK_SECONDS = 30.0
"""Beyond FULL_CHECK_LIMIT, how long the reference may take over every work-group (estimated
from the sample) when an output is not partitioned by work-group."""
PROBE_GROUPS = 4
SAMPLE_SECONDS = 10.0
"""A batch of more than PROBE_GROUPS first runs the reference over that many sampled
work-groups: when every work-group would take it longer than FULL_CHECK_SECONDS (a printed
contraction's chunk of 512 entries can take seconds in the interpreter), or the batch is
beyond FULL_CHECK_LIMIT, it compares a sample of as many work-groups as SAMPLE_SECONDS
allows (PROBE_GROUPS at least, SAMPLED_GROUPS at most) instead."""


@dataclass
class Compared:
    """One output of a --check: how much of it was compared, and any difference."""

    name: str
    elements: int
    scope: str
    error: str | None = None


def _tolerance(element: ScalarType) -> float:
    return {"f16": 1e-2, "bf16": 5e-2, "f32": 1e-4, "c32": 1e-4}.get(element.name, 1e-10)


def _difference(element: ScalarType, got: np.ndarray, want: np.ndarray) -> str | None:
    if element.name == "bf16":
        got = (got.astype(np.uint32) << 16).view(np.float32)
        want = (want.astype(np.uint32) << 16).view(np.float32)
    tol = _tolerance(element)
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    if np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True):
        return None
    err = float(np.max(np.abs(got.astype(np.complex128) - want.astype(np.complex128))))
    return f"max abs error {err:.3g}"


def compare_outputs(info: Any, device_args: list[Any], reference_args: list[Any], batch: int,
                    groups: Sequence[int] | None,
                    blocks: dict[int, tuple[tuple[int, ...], int]] | None = None) -> tuple[list[Compared], list[str]]:
    """The written arguments compared (elements, scope, error) and those that could not be.
    `blocks`: the arguments written in a chunk per work-group (launch_check.write_blocks)."""
    compared: list[Compared] = []
    skipped: list[str] = []
    blocks = blocks or {}
    for k, (p, got, want) in enumerate(zip(info.params, device_args, reference_args)):
        if not p.written or isinstance(p.type, ScalarType):
            continue
        element = p.type.memref.element if isinstance(p.type, GroupType) else p.type.element
        if isinstance(p.type, GroupType):  # whole members (with a group's offset: flat buffers)
            got, want = group_members(got), group_members(want)
        if groups is None:
            pairs = list(zip(got, want)) if isinstance(got, list) else [(got, want)]
            scope = f"every work-group of {batch}"
        elif p.batch_mode is None and k in blocks and not isinstance(got, list):
            modes, step = blocks[k]
            got, want, axis = _flattened(got, modes), _flattened(want, modes), min(modes)
            entries = np.concatenate([np.arange(step * g, min(step * g + step, np.shape(got)[axis]))
                                      for g in groups])
            pairs = [(np.take(got, entries, axis=axis), np.take(want, entries, axis=axis))]
            scope = f"the chunks of {step} entries of {len(groups)} sampled work-groups of {batch}"
        elif p.batch_mode is None:
            skipped.append(f"%{p.name} (not partitioned by work-group, so only a check of every "
                           f"work-group compares it: with --batch {FULL_CHECK_LIMIT} or less, or "
                           f"when the reference would take under {FULL_CHECK_SECONDS:g} s)")
            continue
        elif isinstance(got, list):
            pairs = [(got[g], want[g]) for g in groups]
            scope = f"{len(groups)} sampled work-groups of {batch}"
        else:
            pairs = [(np.take(got, groups, axis=p.batch_mode), np.take(want, groups, axis=p.batch_mode))]
            scope = f"{len(groups)} sampled work-groups of {batch}"
        elements = sum(int(np.size(g)) for g, _ in pairs)
        error = next((e for e in (_difference(element, np.asarray(g), np.asarray(w))
                                  for g, w in pairs) if e is not None), None)
        compared.append(Compared(p.name, elements, scope, error))
    return compared, skipped


def _flattened(array: Any, modes: tuple[int, ...]) -> np.ndarray:
    """`array` with its `modes` as one mode in place of the lowest of them (the first of
    `modes` fastest: moved next to each other, a reshape in Fortran order merges them so)."""
    array = np.asarray(array)
    if len(modes) == 1:
        return array
    at, count = min(modes), len(modes)
    moved = np.moveaxis(array, modes, range(at, at + count))
    merged = math.prod(moved.shape[at:at + count])
    return moved.reshape(moved.shape[:at] + (merged,) + moved.shape[at + count:], order="F")


def _unpartitioned(info: Any, blocks: dict[int, tuple[tuple[int, ...], int]]) -> bool:
    """True if some written array is neither indexed by the work-group id nor written in a
    chunk per work-group (no slice to sample)."""
    return any(p.written and p.batch_mode is None and k not in blocks and not isinstance(p.type, ScalarType)
               for k, p in enumerate(info.params))


def _sample(batch: int, count: int, seed: int) -> list[int]:
    return sorted(np.random.default_rng(seed + 1).choice(batch, count, replace=False).tolist())


Reference = Callable[[Sequence[int], "list[Any] | None"], list[Any]]
"""Runs work-groups on a copy of the inputs (None) or on arguments already run in part."""


def _first_groups(batch: int, seed: int, reference: Reference) -> tuple[list[int] | None, list[Any] | None, float | None]:
    """The work-groups to check (None: every one), the reference's arguments with them run
    (None: not run yet), and the reference's time per work-group if measured. A batch of more
    than PROBE_GROUPS runs that many first (module docs); when every work-group is checked,
    the rest run on the same arguments, so no work-group runs twice."""
    if batch <= PROBE_GROUPS:
        return None, None, None
    probe = _sample(batch, PROBE_GROUPS, seed)
    began = time.perf_counter()
    probed = reference(probe, None)
    per_group = (time.perf_counter() - began) / PROBE_GROUPS
    if batch <= FULL_CHECK_LIMIT and per_group * batch <= FULL_CHECK_SECONDS:
        return None, _the_rest(reference, batch, probe, probed), per_group
    count = min(SAMPLED_GROUPS, batch, max(PROBE_GROUPS, int(SAMPLE_SECONDS / max(per_group, 1e-9))))
    if count == PROBE_GROUPS:
        return probe, probed, per_group
    return _sample(batch, count, seed), None, per_group


def _the_rest(reference: Reference, batch: int, done: Sequence[int], args: list[Any]) -> list[Any]:
    """`args` with every work-group run: those not in `done` as well."""
    ran = set(done)
    return reference([g for g in range(batch) if g not in ran], args)


def check_results(program: Any, name: str, inputs: list[Any], results: list[Any], batch: int, seed: int,
                  echo: Callable[[str], None]) -> None:
    """Run the reference on `inputs` and compare with the device's `results` (LaunchError if
    they differ or nothing could be compared)."""
    from tinyc.reference import ReferenceFault, ReferenceUnsupported, run as run_reference

    info = program[name].info
    fn = program.checked_ir()[name]

    def reference(groups: Sequence[int], into: list[Any] | None) -> list[Any]:
        reference_args = [copy_argument(a) for a in inputs] if into is None else into
        run_reference(fn, reference_args, batch, groups, work_group_size=info.work_group_size,
                      subgroup_size=info.subgroup_size)
        return reference_args

    try:
        groups, reference_args, per_group = _first_groups(batch, seed, reference)
        blocks = write_blocks(info, inputs, batch) if groups is not None else {}
        began = time.perf_counter()
        if reference_args is None:
            reference_args = reference(range(batch) if groups is None else groups, None)
            if groups is not None:
                per_group = (time.perf_counter() - began) / len(groups)
        if groups is not None and _unpartitioned(info, blocks):
            whole = (per_group or 0.0) * batch
            if whole <= FULL_CHECK_SECONDS:
                reference_args = _the_rest(reference, batch, groups, reference_args)
                groups = None
    except ReferenceUnsupported as exc:
        raise LaunchError(f"check: nothing was compared: the reference interpreter cannot run "
                                f"this kernel ({exc})") from None
    except ReferenceFault as exc:
        raise LaunchError(f"check: the kernel does something undefined on these inputs: "
                                f"{exc}") from None
    compared, skipped = compare_outputs(info, results, reference_args, batch, groups, blocks)
    if not compared:
        why = "the kernel writes no array argument" if not skipped else \
            "not compared: " + "; ".join(skipped)
        raise LaunchError(f"check: nothing could be compared ({why})")
    listed = ", ".join(f"%{c.name} ({c.elements} elements, {c.scope})" for c in compared)
    failed = [f"%{c.name}: {c.error}" for c in compared if c.error]
    if failed:
        raise LaunchError(f"check failed against the NumPy reference: {'; '.join(failed)} "
                                f"(compared {listed})")
    echo(f"check: compared {listed}")
    if skipped:
        echo("check: not compared: " + "; ".join(skipped))
    echo("check: results match the NumPy reference")
