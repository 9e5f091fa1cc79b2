"""The reference on lowered IR agrees with itself on checked IR, for every sample kernel.

Lowering rewrites collectives into parallel regions, loops and coopmatrix
code; running both forms through the reference checks a lowering without a
device (and exercises the reference's SPMD and coopmatrix emulation).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc.ir.types import DYNAMIC, GroupType, MemrefType, ScalarType
from tinyc.ir.verifier import verify
from tinyc.parser import parse
from tinyc.passes import run_pipeline
from tinyc.reference import geometry_of, run

SAMPLES = sorted((Path(__file__).parents[2] / "samples").glob("*.ir"))
BATCH = 3

DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64,
          "f16": np.float16, "f32": np.float32, "f64": np.float64, "c32": np.complex64,
          "c64": np.complex128}


def _array(rng: np.random.Generator, t: ScalarType, shape: tuple[int, ...]) -> np.ndarray:
    if t.name == "bf16":
        values = rng.uniform(-1, 1, shape).astype(np.float32)
        return np.asfortranarray((values.view(np.uint32) >> 16).astype(np.uint16))
    if t.is_int:
        return np.asfortranarray(rng.integers(-8, 8, shape).astype(DTYPES[t.name]))
    data = rng.uniform(-1, 1, shape) + (1j * rng.uniform(-1, 1, shape) if t.is_complex else 0)
    return np.asfortranarray(data.astype(DTYPES[t.name]))


def _shape(memref: MemrefType) -> tuple[int, ...]:
    """`?` sizes: the batch for the last mode (the batch mode in the samples), else 16."""
    last = memref.order - 1
    return tuple((BATCH if k == last else 16) if s == DYNAMIC else s for k, s in enumerate(memref.shape))


def _arguments(fn, seed: int) -> list:
    rng = np.random.default_rng(seed)
    args: list = []
    for param in fn.args:
        t = param.type
        if isinstance(t, ScalarType):
            args.append(_array(rng, t, (1,))[0])
        elif isinstance(t, MemrefType):
            args.append(_array(rng, t.element, _shape(t)))
        elif isinstance(t, GroupType):
            m = t.memref
            shape = tuple(16 if s == DYNAMIC else s for s in m.shape)
            members = [_array(rng, m.element, shape) for _ in range(BATCH)]
            if t.offset != 0:
                offset = 2 if t.offset == DYNAMIC else t.offset
                members = [np.concatenate([np.zeros(offset, a.dtype), a.ravel(order="F")]) for a in members]
                args.append(tinyc.Group(members, offset=offset))
            else:
                args.append(members)
    return args


@pytest.mark.parametrize("path", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_lowered_sample_matches_checked_sample(path: Path):
    source = path.read_text()
    checked = parse(source, str(path))
    verify(checked)
    lowered = parse(source, str(path))
    verify(lowered)
    run_pipeline(lowered)
    for fc, fl in zip(checked.functions, lowered.functions):
        g = geometry_of(fl)
        expected, actual = _arguments(fc, 7), _arguments(fc, 7)
        # every sample runs in the reference, checked and lowered (ReferenceUnsupported fails)
        run(fc, expected, BATCH, work_group_size=(g.x, g.y), subgroup_size=g.subgroup_size)
        run(fl, actual, BATCH)
        for param, want, got in zip(fc.args, expected, actual):
            if isinstance(want, np.ndarray):
                tol = 2e-2 if want.dtype in (np.float16, np.uint16) else 1e-4
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"%{param.name}")
