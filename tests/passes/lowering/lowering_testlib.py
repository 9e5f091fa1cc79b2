"""Helpers for lowering tests: lower .ir text, inspect it, and run it on the reference.

`lower` runs the real pipeline up to and including elide-barriers, re-verifies
the result, and checks that its printed text parses and verifies again, so
every test also exercises the printer and the verifier on lowered IR.
`same_results` runs a kernel before and after lowering on the reference
interpreter (tinyc.reference, which shares no code with the lowering and
faults on out-of-bounds accesses) and compares the outputs.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from tinyc.compiler import stage_text
from tinyc.ir.core import Instruction, Program
from tinyc.ir.instructions import Alloca, BlasInstruction, Foreach
from tinyc.ir.verifier import verify
from tinyc.parser import parse
from tinyc.passes import PIPELINE, PassOptions
from tinyc.std import Std, Version

LOWERING_STAGES = (
    "work-group-size", "insert-barriers", "lower-collectives", "lower-foreach", "elide-barriers")


def checked(text: str) -> Program:
    program = parse(textwrap.dedent(text), "test.ir")
    verify(program)
    return program


def lower(text: str, subgroup_size: int | None = None) -> Program:
    """Checked IR of `text` after the passes up to elide-barriers, re-verified."""
    program = checked(text)
    options = PassOptions(subgroup_size)
    for name, run_pass in PIPELINE:
        if name in LOWERING_STAGES:
            for fn in program.functions:
                run_pass(fn, options)
    verify(program)
    assert_no_collectives(program)
    printed = stage_text(program)  # in the newest spelling where the seed has none (store.t)
    reparsed = parse(printed, "lowered.ir")
    verify(reparsed, Version(Std.SEED, "lowered"))  # the rules the compiler checks its output by
    assert stage_text(reparsed) == printed, "printing the lowered IR is not stable"
    return program


def lowered_text(text: str, subgroup_size: int | None = None) -> str:
    return stage_text(lower(text, subgroup_size))


def assert_no_collectives(program: Program) -> None:
    """Only alloca may stay of the collective instructions."""
    for fn in program.functions:
        for inst in fn.walk():
            assert not isinstance(inst, (BlasInstruction, Foreach)), \
                f"{inst.opname} left in @{fn.name} after lowering"
            if isinstance(inst, Alloca):
                assert inst.parent is fn.body, "alloca must stay at function level"


def instructions(program: Program, cls: type | tuple[type, ...]) -> list[Instruction]:
    return [inst for fn in program.functions for inst in fn.walk() if isinstance(inst, cls)]


def count_text(text: str, needle: str) -> int:
    return text.count(needle)


def fortran(rng: np.random.Generator, shape: Sequence[int], dtype: Any = np.float32) -> np.ndarray:
    """Random column-major data; NaN-free, small integers for integer types."""
    if np.issubdtype(np.dtype(dtype), np.integer):
        data = rng.integers(-4, 5, size=shape)
    elif np.issubdtype(np.dtype(dtype), np.complexfloating):
        data = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
    else:
        data = rng.uniform(-1, 1, shape)
    return np.array(data.astype(dtype), order="F")


def same_results(text: str, args: Sequence[Any], batch: int = 2, outputs: Sequence[int] = (),
                 rtol: float = 1e-5, subgroup_size: int | None = None) -> None:
    """Original and lowered kernel give the same outputs on the reference interpreter.

    `args` are copied for each run; `outputs` are the positions to compare.
    The original runs with the lowered function's work-group geometry so both
    see the same subgroups.
    """
    from tinyc.reference import run

    original = checked(text).functions[0]
    lowered = lower(text, subgroup_size).functions[0]
    geometry = {"work_group_size": lowered.attrs["work_group_size"],
                "subgroup_size": lowered.attrs["subgroup_size"]}
    before = _copy_args(args)
    after = _copy_args(args)
    run(original, before, batch, **geometry)
    run(lowered, after, batch, **geometry)
    for k in outputs:
        want, got = before[k], after[k]
        if isinstance(want, list):
            for w, g in zip(want, got):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def _copy_args(args: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a.copy(order="F"))
        elif isinstance(a, list):
            out.append([x.copy(order="F") for x in a])
        else:
            out.append(a)
    return out
