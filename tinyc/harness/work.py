"""The work model: flops and minimum memory traffic of one kernel launch.

`tinyc bench` and benchmarks/ both count with it. Flops come from the
collectives' own `flops(shape_of)` (tinyc/ir/instructions/blas.py:
the term X of alpha·X + beta·C, plus the update where alpha and beta are
not the constants that make it free), evaluated with the sizes the
collectives really have, and from every other instruction's `run_flops()`
(floating-point arithmetic, coopmatrix multiply-adds) times the lanes that
ran it: the reference interpreter runs work-group 0 and shows each
instruction to the counter; the batch multiplies it.
Memory traffic is the minimum: every byte of every memref or group
argument the kernel reads is read once, every byte it writes is written
once (tinyc.analysis.memory_effects says which). It lives here, above the
reference interpreter it runs, not in tinyc/analysis/ (below it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyc.analysis.memory_effects import EffectKind, effects
from tinyc.ir.core import Function, Value
from tinyc.ir.instructions import BlasInstruction
from tinyc.ir.types import CoopMatrixType, GroupType, MemrefType


@dataclass
class Work:
    """Flops of one launch and the minimum bytes it moves."""

    flops: float
    bytes: float


def group_flops(fn: Function, args: Sequence[Any], batch: int,
                work_group_size: Sequence[int] | None = None,
                subgroup_size: int | None = None) -> float:
    """Flops of work-group 0 of `fn` (checked, unlowered IR) on `args` (left unchanged)."""
    from tinyc.reference import run as run_reference
    from tinyc.reference.arguments import copy_argument

    copies = [copy_argument(a) for a in args]
    total = [0.0]

    def count(inst: BlasInstruction, st: Any) -> None:
        def shape_of(value: Value) -> tuple[int, ...]:
            return tuple(st.get(value).shape)

        total[0] += inst.flops(shape_of)

    def count_run(inst: Any, st: Any) -> None:
        flops = inst.run_flops()
        if flops:
            total[0] += flops * _runs(inst, st)

    run_reference(fn, copies, batch, [0], work_group_size=work_group_size,
                  subgroup_size=subgroup_size, on_collective=count, after_instruction=count_run)
    return total[0]


def _runs(inst: Any, st: Any) -> int:
    """How many times an instruction just ran: once per active lane of an SPMD region (per
    active subgroup for a coopmatrix result), once in the collective part of a work-group."""
    if st.lanes is None:
        return 1
    if inst.results and isinstance(inst.results[0].type, CoopMatrixType):
        return int(np.count_nonzero(st.subgroups(inst.opname)[2]))
    return st.lanes.count if st.mask is None else int(np.count_nonzero(st.mask))


def count_work(fn: Function, info: Any, args: Sequence[Any], batch: int) -> Work:
    """Flops (one emulated work-group, times the batch) and minimum bytes of a launch.

    `info` is the kernel's KernelInfo (its work-group and subgroup size).
    """
    flops = group_flops(fn, args, batch, info.work_group_size, info.subgroup_size)
    read: set[int] = set()
    written: set[int] = set()
    positions = {id(a): i for i, a in enumerate(fn.args)}
    for inst in fn.body.instructions:
        for effect in effects(inst):
            root = effect.obj.root
            if id(root) not in positions:
                continue
            (read if effect.kind is EffectKind.READ else written).add(positions[id(root)])
    moved = 0.0
    for i, (param, arg) in enumerate(zip(fn.args, args)):
        if isinstance(param.type, (MemrefType, GroupType)):
            moved += _nbytes(arg) * ((i in read) + (i in written))
    return Work(flops * batch, moved)


def _nbytes(arg: Any) -> float:
    if isinstance(arg, np.ndarray):
        return float(arg.nbytes)
    if isinstance(arg, (list, tuple)):
        return float(sum(_nbytes(a) for a in arg))
    members = getattr(arg, "arrays", None)
    return _nbytes(members) if members is not None else 0.0
