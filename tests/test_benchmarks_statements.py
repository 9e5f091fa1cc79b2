"""Smoke test of benchmarks/statements.py: every side of every example runs and matches the
NumPy reference at a tiny batch (measure() raises on a wrong result); speed is not asserted."""

from __future__ import annotations

import pytest

from benchmarks.statements import EXAMPLES, NUMPY_SIDES, markdown, measure


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_every_side_is_correct(device, name):
    result = measure(name, 4, rounds=1, log=lambda _: None, probe=3)
    assert set(result["seconds"]) == {"one kernel", "einsum calls", *NUMPY_SIDES}
    assert all(error <= 1e-10 for error in result["errors"].values())
    table = markdown([result], {"date": "today", "device": "cpu", "machine": "x", "numpy": "2", "rounds": 1})
    assert f"| {name} | 4 |" in table
