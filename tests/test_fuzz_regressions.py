"""Programs the fuzzing campaign found miscompiled, shrunk: the device must agree with the
reference interpreter on them now.

Each file in tests/fuzz_regressions/ says in its comments what went wrong.
Arguments are made as `tinyc run` makes them (random, with the sizes the
program implies), the kernel runs on the device over a small batch, and the
written arrays are compared with the reference interpreter's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tinyc
from tinyc.cli.run import compare_outputs, make_arguments
from tinyc.reference import run as run_reference
from tinyc.reference.arguments import copy_argument

CASES = sorted((Path(__file__).parent / "fuzz_regressions").glob("*.ir"))
BATCH = 3


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_device_agrees_with_the_reference(path, device):
    program = tinyc.compile(path.read_text(), name=path.name)
    checked = program.checked_ir()
    for name in program.kernel_names:
        kernel = program[name]
        fn = checked[name]
        args, _ = make_arguments(fn, kernel.info, BATCH, {}, seed=1)
        reference = [copy_argument(a) for a in args]
        kernel(*args, batch=BATCH)
        run_reference(fn, reference, BATCH, work_group_size=kernel.info.work_group_size,
                      subgroup_size=kernel.info.subgroup_size)
        compared, _ = compare_outputs(kernel.info, args, reference, BATCH, None)
        assert compared, "nothing to compare"
        assert [c.error for c in compared] == [None] * len(compared), compared
