"""Programs the fuzzing campaign found miscompiled, shrunk: the device must agree with the
reference interpreter on them now.

Each file in tests/fuzz_regressions/ says in its comments what went wrong.
Arguments are made as `tinyc run` makes them (random, with the sizes the
program implies), the kernel runs on the device over a small batch, and the
written arrays are compared with the reference interpreter's. The programs in
tests/fuzz_regressions/jit_crashes/ crashed the device's JIT (those in
checked_jit_crashes/, their bounds-checked variant): they run in a child
process (at batch 1, as the fuzzer ran them), so that a regression fails its
test instead of killing the test run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc.harness.arguments import make_arguments
from tinyc.harness.check import compare_outputs
from tinyc.reference import ReferenceFault, run as run_reference
from tinyc.reference.arguments import copy_argument

REGRESSIONS = Path(__file__).parent / "fuzz_regressions"
CASES = sorted(REGRESSIONS.glob("*.ir"))
JIT_CRASHES = sorted((REGRESSIONS / "jit_crashes").glob("*.ir"))
CHECKED_JIT_CRASHES = sorted((REGRESSIONS / "checked_jit_crashes").glob("*.ir"))
BATCH = 3


def disagreements(path: Path, batch: int, check_bounds: bool = False) -> list:
    """Run every kernel of the program on the device (bounds-checked if asked) and in the
    reference interpreter; the outputs that differ (asserts that some were compared)."""
    program = tinyc.compile(path.read_text(), name=path.name)
    checked = program.checked_ir()
    wrong = []
    for name in program.kernel_names:
        kernel = program[name]
        fn = checked[name]
        args, _ = make_arguments(fn, kernel.info, batch, {}, seed=1)
        reference = [copy_argument(a) for a in args]
        geometry = {"work_group_size": kernel.info.work_group_size,
                    "subgroup_size": kernel.info.subgroup_size}
        try:
            kernel(*args, batch=batch, check_bounds=check_bounds)
        except tinyc.BoundsError:  # then the reference must find these arguments wrong too
            with pytest.raises(ReferenceFault):
                run_reference(fn, reference, batch, **geometry)
            continue
        run_reference(fn, reference, batch, **geometry)
        compared, _ = compare_outputs(kernel.info, args, reference, batch, None)
        assert compared, f"{name}: nothing to compare"
        wrong += [f"{name}: {c}" for c in compared if c.error is not None]
    return wrong


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_device_agrees_with_the_reference(path, device):
    assert disagreements(path, BATCH) == []


IN_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from test_fuzz_regressions import disagreements
print(disagreements(Path(sys.argv[2]), 1, sys.argv[3] == "checked"))
"""


@pytest.mark.parametrize("path, variant", [(p, "plain") for p in JIT_CRASHES]
                         + [(p, "checked") for p in CHECKED_JIT_CRASHES],
                         ids=lambda x: getattr(x, "stem", x))
def test_device_builds_and_agrees_with_the_reference(path, variant, device):
    """Built and run in a child: a JIT crash fails the test, not the session. A child that
    runs out of time gets one more try: the runtime's JIT once stalled on the checked
    `unrolled_loops_with_checks` for over 600 s inside a full suite (session 13), where a cold
    build takes 3-9 s (17 runs alone, in parallel and with other hash seeds, none stalled);
    a crash or a wrong value never gets a second try."""
    command = [sys.executable, "-c", IN_CHILD, str(Path(__file__).parent), str(path), variant]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"the child died ({done.returncode}):\n{done.stderr[-2000:]}"
    assert done.stdout.strip() == "[]"


FUSE_SIZE_ONE = """func @fuse1(%A: memref<i32x?x8x2,strided<?,2,16>>, %B: memref<i32x16>) {
  %f = fuse %A[0, 2] : memref<i32x?,strided<?>>
  %z = constant 0 : index
  %n = constant 16 : index
  foreach (%i) = (%z), (%n) {
    %x = load %f[%i] : i32
    store %x, %B[%i]
  }
}
"""


def test_a_size_one_mode_keeps_its_stride_for_fuse(device):
    """Fuse seed 201, program 10: the runtime passed the packed stride (1) for the `?`
    stride of a mode of size 1, where the array's own is 2; `fuse` takes the first
    mode's stride as the fused one, so the device read other elements than the
    reference (which uses the array's strides, as DESIGN.md says `?` strides are)."""
    import numpy as np

    base = np.arange(32, dtype=np.int32)
    A = np.ndarray((1, 8, 2), np.int32, buffer=base, strides=(8, 8, 64))  # elements (2, 2, 16)
    B = np.zeros(16, np.int32)
    tinyc.compile(FUSE_SIZE_ONE)["fuse1"](A, B, batch=1)
    np.testing.assert_array_equal(B, A[0].ravel(order="F"))


GROUP_ID_IN_TWO_KERNELS = """func @a(%out: memref<i16x?x3x?x?,strided<?,32,96,?>>) attributes {subgroup_size=32, work_group_size=[32, 1]} {
  %g = builtin.group_id : index
  %a = subview %out[:, :, :, %g] : memref<i16x?x3x?,strided<?,32,96>>
  %s = subview %a[%g:4, %g, %g:3] : memref<i16x4x3,strided<?,96>>
  %c4 = constant 4 : index
  %c3 = constant 3 : index
  foreach (%i, %j) = (%g, %g), (%c4, %c3) {
    %zero = constant 0 : i16
    store %zero, %s[%i, %j]
  }
}

func @b(%out: memref<i64x?x?,strided<1,8>>) attributes {subgroup_size=16, work_group_size=[16, 2]} {
  %g = builtin.group_id : index
  %col = subview %out[:, %g] : memref<i64x?>
  %one = constant 1 : index
  %not_one = cmp.ne %g, %one : bool
  if %not_one {
    %z = constant 0 : index
    %n = constant 8 : index
    foreach (%i) = (%z), (%n) {
      %m = constant -1 : i64
      store %m, %col[%i]
    }
  }
}
"""

BUILD_AND_RUN = """
import sys, numpy as np, tinyc
program = tinyc.compile(sys.stdin.read())
out = np.zeros((8, 3), np.int64, order="F")
program["b"](out, batch=3)
print(out[:, 0].tolist(), out[:, 1].tolist(), out[:, 2].tolist())
"""


def test_group_ids_in_two_kernels_do_not_crash_the_device_compiler(device):
    """Fuzz seed 301, programs 300-319: with the group id read as GlobalInvocationId z,
    the CPU runtime's JIT segfaulted (pass "sycl-kernel-wg-loop-bound") on this
    module, killing the process; it is read as WorkgroupId z now. In a child
    process, so that a regression fails this test instead of the test run."""
    done = subprocess.run([sys.executable, "-c", BUILD_AND_RUN], input=GROUP_ID_IN_TWO_KERNELS,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("] [") == ["[-1, -1, -1, -1, -1, -1, -1, -1", "0, 0, 0, 0, 0, 0, 0, 0",
                                        "-1, -1, -1, -1, -1, -1, -1, -1]\n"]


CHECKED = sorted((REGRESSIONS / "checked").glob("*.ir"))


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: p.stem)
def test_bounds_checked_variant_skips_what_a_lane_guard_skips(path, device):
    """Programs whose bounds-checked variant reported an access a lane guard skips (see
    each file's comments): checked, they must run as the plain kernel does. Each writes the
    value it loads into every element of the 8x7 block %s10 of each batch entry."""
    kernel = tinyc.compile(path.read_text(), name=path.name)["k"]
    rng = np.random.default_rng(3)
    plain = np.asfortranarray(rng.integers(-100, 100, (8, 5, 8, 2)).astype(np.int16))
    checked = plain.copy(order="F")
    want = plain.copy(order="F")
    for g in range(2):   # every element of the 8x7 block %s10 gets the loaded value
        want[:, 3, 1:8, g] = want[4, 4, 0, g]
    kernel(plain, batch=2)
    np.testing.assert_array_equal(plain, want)
    kernel(checked, batch=2, check_bounds=True)
    np.testing.assert_array_equal(checked, want)
