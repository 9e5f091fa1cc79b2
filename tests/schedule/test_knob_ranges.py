"""Every value in every knob's range, on the device: verified IR, valid SPIR-V, NumPy's results.

Each collective runs on odd sizes (so tiles leave remainders) once per knob
value, the other knobs at their defaults (`tile` sweeps its rows with one
column and its columns with one row block). `tinyc.compile` verifies the
lowered IR and runs spirv-val on every module; the test also validates the
binary itself and compares the outputs with NumPy. A value that does not fit
this device's registers must be rejected with the verifier's diagnostic
instead — never compiled into something wrong. Schedules keep the order of
the arithmetic (all but `sum`'s partial sums), so their results must also
equal the default schedule's bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import tinyc
from tinyc.ir.knobs import IntRange, PairRange
from tinyc.schedule.knobs import COLLECTIVE_KNOBS, ORDER_CHANGING
from tinyc.spirv.tools import validate

S = 8  # lanes; the sweep's tiles are counted in blocks of S rows


def f(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.asfortranarray(rng.uniform(-1, 1, shape).astype(np.float32))


@dataclass
class Case:
    opname: str
    source: str                         # one kernel @k with the collective
    inputs: Callable[[np.random.Generator], list[Any]]
    expect: Callable[[list[Any]], np.ndarray]
    output: int                         # argument index of the output

    def run(self, schedule: dict[str, Any], device: Any) -> np.ndarray:
        program = tinyc.compile(self.source, device=device, schedule={"k": schedule})
        validate(program.spirv)
        args = self.inputs(np.random.default_rng(7))
        program["k"](*args, batch=1)
        return args[self.output]


ALPHA, BETA = np.float32(0.5), np.float32(1.5)

CASES = [
    Case("gemm", """func @k(%a: f32, %A: memref<f32x11x17>, %B: memref<f32x11x33>, %b: f32,
        %C: memref<f32x17x33>) {
  gemm.t.n %a, %A, %B, %b, %C
}""", lambda r: [ALPHA, f(r, 11, 17), f(r, 11, 33), BETA, f(r, 17, 33)],
         lambda x: x[0] * x[1].T.astype(np.float64) @ x[2] + x[3] * x[4], 4),
    Case("gemv", """func @k(%a: f32, %A: memref<f32x17x33>, %x: memref<f32x17>, %b: f32,
        %y: memref<f32x33>) {
  gemv.t %a, %A, %x, %b, %y
}""", lambda r: [ALPHA, f(r, 17, 33), f(r, 17), BETA, f(r, 33)],
         lambda x: x[0] * x[1].T.astype(np.float64) @ x[2] + x[3] * x[4], 4),
    Case("ger", """func @k(%a: f32, %x: memref<f32x17>, %y: memref<f32x33>, %b: f32,
        %C: memref<f32x17x33>) {
  ger %a, %x, %y, %b, %C
}""", lambda r: [ALPHA, f(r, 17), f(r, 33), BETA, f(r, 17, 33)],
         lambda x: x[0] * np.outer(x[1], x[2]) + x[3] * x[4], 4),
    Case("axpby", """func @k(%a: f32, %A: memref<f32x29x33>, %b: f32, %B: memref<f32x33x29>) {
  axpby.t %a, %A, %b, %B
}""", lambda r: [ALPHA, f(r, 29, 33), BETA, f(r, 33, 29)],
         lambda x: x[0] * x[1].T + x[2] * x[3], 3),
    Case("hadamard_product", """func @k(%a: f32, %x: memref<f32x33x29>, %y: memref<f32x33x29>,
        %b: f32, %z: memref<f32x33x29>) {
  hadamard_product %a, %x, %y, %b, %z
}""", lambda r: [ALPHA, f(r, 33, 29), f(r, 33, 29), BETA, f(r, 33, 29)],
         lambda x: x[0] * x[1] * x[2] + x[3] * x[4], 4),
    Case("sum", """func @k(%a: f32, %A: memref<f32x33x29>, %b: f32, %y: memref<f32x33>) {
  sum.n %a, %A, %b, %y
}""", lambda r: [ALPHA, f(r, 33, 29), BETA, f(r, 33)],
         lambda x: x[0] * x[1].sum(axis=1, dtype=np.float64) + x[2] * x[3], 3),
    Case("cumsum", """func @k(%a: f32, %A: memref<f32x45x7>, %b: f32, %B: memref<f32x45x7>) {
  cumsum %a, %A, 0, %b, %B
}""", lambda r: [ALPHA, f(r, 45, 7), BETA, f(r, 45, 7)],
         lambda x: x[0] * np.cumsum(x[1].astype(np.float64), axis=0) + x[2] * x[3], 3),
]


def knob_values(opname: str) -> list[tuple[str, Any]]:
    """(knob, value) for every value in every knob's range, one knob at a time."""
    out: list[tuple[str, Any]] = []
    for name, knob in COLLECTIVE_KNOBS[opname].items():
        r = knob.range
        if isinstance(r, PairRange):
            out += [(name, [v, r.second.lo]) for v in range(r.first.lo, r.first.hi + 1)]
            out += [(name, [r.first.lo, v]) for v in range(r.second.lo + 1, r.second.hi + 1)]
        elif isinstance(r, IntRange):
            out += [(name, v) for v in range(r.lo, r.hi + 1)]
        else:
            out += [(name, v) for v in r.values]
    return out


@pytest.fixture(scope="module")
def defaults(device) -> dict[str, np.ndarray]:
    return {case.opname: case.run({"subgroup_size": S}, device) for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.opname)
def test_every_knob_value_gives_numpy_results_or_a_fit_diagnostic(case, device, defaults):
    compiled = rejected = 0
    for name, value in knob_values(case.opname):
        schedule = {"subgroup_size": S, case.opname: {name: value}}
        try:
            got = case.run(schedule, device)
        except tinyc.CompilationError as err:
            text = str(err)
            assert "does not fit the device" in text and "vector registers live" in text, \
                (name, value, text)
            rejected += 1
            continue
        compiled += 1
        want = case.expect(case.inputs(np.random.default_rng(7)))
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=f"{name}={value}")
        if name not in ORDER_CHANGING.get(case.opname, ()):
            assert got.tobytes() == defaults[case.opname].tobytes(), \
                f"{case.opname} {name}={value}: not bit for bit the default's result"
    assert compiled >= rejected, (compiled, rejected)


@pytest.mark.parametrize("schedule", [
    {"subgroup_size": s} for s in (4, 8, 16, 32, 64)] + [
    {"subgroup_size": 8, "work_group_size": [16, 1]},
    {"subgroup_size": 8, "work_group_size": [8, 3]},
    {"work_group_size": [32, 2]},
], ids=str)
def test_function_knobs_give_numpy_results(schedule, device):
    case = CASES[0]
    sizes = set(device.sub_group_sizes)
    if schedule.get("subgroup_size", 16) not in sizes:
        with pytest.raises(tinyc.CompilationError, match="is not supported by the device"):
            case.run(schedule, device)
        return
    got = case.run(schedule, device)
    want = case.expect(case.inputs(np.random.default_rng(7)))
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
