"""Launches either stay inside their arguments or are refused before anything runs.

Each kernel here indexes memory with arithmetic on the group id, loops,
guards or tiles. For a range of argument sizes, `max_batch` must equal the
largest batch whose accesses stay inside the arrays (worked out here from
the kernel's meaning, not from the compiler), a launch one beyond it must
raise LaunchError naming the argument and that batch, and launches up to it
must compute what NumPy computes.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc

SOURCE = """
func @by_four(%A: memref<f32x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %c4 = constant 4 : index
  %first = arith.mul %g, %c4 : index
  %c0 = constant 0 : index
  for %i = %c0, %c4 {
    %k = arith.add %first, %i : index
    %v = load %A[%k] : f32
    %w = arith.add %v, %v : f32
    store %w, %B[%k]
  }
}

func @guarded(%n: index, %A: memref<f32x?>) {
  %g = builtin.group_id : index
  %in = cmp.lt %g, %n : bool
  if %in {
    %v = load %A[%g] : f32
    %w = arith.mul %v, %v : f32
    store %w, %A[%g]
  }
}

func @shifted(%s: index, %A: memref<f32x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %k = arith.add %g, %s : index
  %v = load %A[%k] : f32
  store %v, %B[%g]
}

func @tiles(%A: memref<f32x?>) attributes {subgroup_size=16} {
  %c0 = constant 0 : index
  %n = size %A[0] : index
  foreach_tile (%o) = (%c0), (%n) as (%s) <= (16) {
    %lane32 = subgroup_local_id : i32
    %lane = cast %lane32 : index
    %inside = less_than %lane, %s : bool
    if %inside {
      %k = add %o, %lane : index
      %v = load %A[%k] : f32
      %w = add %v, %v : f32
      store %w, %A[%k]
    }
  }
}

func @i32_index(%A: memref<f32x?>) {
  %g = builtin.group_id : index
  %g32 = cast %g : i32
  %big = constant 1048576 : i32
  %far = mul %g32, %big : i32
  %k = cast %far : index
  %v = load %A[%k] : f32
  store %v, %A[%k]
}

func @gather(%I: memref<i32x?>, %A: memref<f32x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %i = load %I[%g] : i32
  %j = cast %i : index
  %v = load %A[%j] : f32
  store %v, %B[%g]
}

func @no_group_id(%A: memref<f32x4>) {
  %c0 = constant 0 : index
  %v = load %A[%c0] : f32
  %w = add %v, %v : f32
  store %w, %A[%c0]
}
"""


@pytest.fixture(scope="module")
def program(device):
    return tinyc.compile(SOURCE, name="launch_bounds.ir", std="newest")


def data(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.float32)


def launch_limit(kernel) -> int:
    """The most work-groups one launch may have: 2^31 - 1 work-items (the CPU runtime's limit)."""
    x, y = kernel.info.work_group_size
    return (2**31 - 1) // (x * y)


@pytest.mark.parametrize("size", [0, 3, 4, 10, 16, 17, 40])
def test_four_entries_per_work_group(program, size):
    k = program["by_four"]
    A, B = data(size), np.zeros(size, np.float32)
    fits = size // 4  # work-group g reads and writes entries 4g .. 4g + 3
    assert k.max_batch(A, B) == fits == k.info.max_batch(A, B)
    with pytest.raises(tinyc.LaunchError, match=rf"argument 'A'.*mode 0.*largest batch these arguments take is {fits}|"
                                                rf"argument 'A'.*mode 0.*no batch fits") as caught:
        k(A, B, batch=fits + 1)
    assert caught.value.max_batch == fits
    np.testing.assert_array_equal(B, 0)  # nothing ran
    k(A, B, batch=fits)
    np.testing.assert_array_equal(B[:4 * fits], 2 * A[:4 * fits])
    np.testing.assert_array_equal(B[4 * fits:], 0)


def test_batch_left_out_is_what_the_arrays_hold(program):
    k = program["by_four"]
    A, B = data(22), np.zeros(22, np.float32)
    k(A, B)  # 5 work-groups: 20 entries
    np.testing.assert_array_equal(B, np.r_[2 * A[:20], [0, 0]])


def test_arrays_of_no_entries_run_nothing_with_batch_left_out(program):
    """Empty batch modes hold batch 0 (as NumPy does nothing on empty arrays); arrays that
    hold entries but too few for one work-group are still refused."""
    k = program["by_four"]
    empty = np.zeros(0, np.float32)
    k(empty, empty)
    assert k.max_batch(empty, empty) == 0
    with pytest.raises(tinyc.LaunchError, match=r"argument 'A'.*no batch fits"):
        k(data(3), np.zeros(3, np.float32))


def test_an_empty_array_fits_whatever_its_strides(device):
    """NumPy gives an array with a zero-length mode any strides (np.zeros((4, 4, 0)) has
    (0, 0, 0)); no element is addressed, so they are not compared with the memref's."""
    k = tinyc.compile("""func @copy(%A: memref<f32x4x4x?>, %B: memref<f32x4x4x?>) {
  %g = builtin.group_id : index
  %a = subview %A[:, :, %g] : memref<f32x4x4>
  %b = subview %B[:, :, %g] : memref<f32x4x4>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  axpby.n %one, %a, %zero, %b
}""")["copy"]
    for empty in (np.zeros((4, 4, 0), np.float32), np.zeros((4, 4, 0), np.float32, order="F")):
        k(empty, empty)
        k(empty, empty, batch=0)
        with pytest.raises(tinyc.LaunchError, match=r"argument 'A'.*no batch fits"):
            k(empty, empty, batch=1)


def test_a_batch_beyond_what_one_launch_may_have(program):
    k = program["no_group_id"]
    with pytest.raises(tinyc.LaunchError, match=rf"work-items.*the largest batch is {launch_limit(k)}"):
        k(data(4), batch=launch_limit(k) + 1)


def test_a_huge_batch_names_the_argument_that_refuses_it(program):
    """Beyond one launch's work-items too, the error names the argument and what it takes."""
    k = program["by_four"]
    A, B = data(40), np.zeros(40, np.float32)
    with pytest.raises(tinyc.LaunchError, match=r"argument 'A'.*largest batch these arguments take is 10") as caught:
        k(A, B, batch=launch_limit(k) + 1)
    assert caught.value.max_batch == 10
    np.testing.assert_array_equal(B, 0)


def test_batch_left_out_where_nothing_bounds_it(program):
    with pytest.raises(tinyc.LaunchError, match="batch= is needed"):
        program["no_group_id"](data(4))
    A = data(4)
    program["no_group_id"](A, batch=1)
    assert A[0] == 2


@pytest.mark.parametrize("n, size", [(5, 5), (5, 3), (0, 2), (-3, 4)])
def test_a_guard_bounds_the_group_id(program, n, size):
    """`if g < n` keeps work-groups n.. away from A: the batch may exceed A when n fits it."""
    k = program["guarded"]
    A = data(size)
    want = A.copy()
    fits = launch_limit(k) if n <= size else size  # n <= size: every work-group that passes is inside
    assert k.max_batch(n, A) == fits
    batch = max(n, size) + 7
    if batch > fits:
        with pytest.raises(tinyc.LaunchError, match="argument 'A'"):
            k(n, A, batch=batch)
        batch = fits
    k(n, A, batch=batch)
    want[:max(min(n, batch), 0)] **= 2
    np.testing.assert_array_equal(A, want)


@pytest.mark.parametrize("shift", [-1, 0, 3, 10, 2**40])
def test_an_index_scalar_out_of_range_is_refused(program, shift):
    k = program["shifted"]
    A, B = data(10), np.zeros(6, np.float32)
    fits = 0 if shift < 0 else max(0, min(6, 10 - shift))
    assert k.max_batch(shift, A, B) == fits
    if fits < 6:
        with pytest.raises(tinyc.LaunchError, match="argument 'A'"):
            k(shift, A, B, batch=6)
    if fits:
        k(shift, A, B, batch=fits)
        np.testing.assert_array_equal(B[:fits], A[shift:shift + fits])


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 50])
def test_tiles_clipped_at_the_end(program, size):
    """foreach_tile's last tile is clipped: every size is inside, for any batch."""
    k = program["tiles"]
    A = data(size)
    assert k.max_batch(A) == launch_limit(k)
    k(A, batch=1)
    np.testing.assert_array_equal(A, 2 * data(size))


class _Huge:
    """A USM array of 2^40 floats that is never touched: max_batch only reads sizes."""

    __sycl_usm_array_interface__ = {"data": (4096, False), "shape": (2**40,), "strides": None,
                                    "typestr": "<f4", "version": 1, "syclobj": None}


def test_index_arithmetic_that_overflows_its_type_is_refused(program):
    """g * 2^20 in i32 wraps from g = 2048 on: larger batches are refused, however large A is."""
    k = program["i32_index"]
    assert any(c.kind == "fits" and "i32" in c.subject for c in k.info.launch.conditions)
    assert k.info.max_batch(_Huge()) == 2048
    A = data(3 * 2**20)
    assert k.max_batch(A) == 3
    k(A, batch=3)
    np.testing.assert_array_equal(A, data(3 * 2**20))


def test_an_unbounded_access_is_noted_and_checked_at_run_time(program):
    k = program["gather"]
    assert k.info.unbounded and "loaded from memory" in k.info.unbounded[0]
    I, A, B = np.array([2, 0, 1], np.int32), data(3), np.zeros(3, np.float32)
    k(I, A, B, batch=3)  # checked by default: runs, and correctly
    np.testing.assert_array_equal(B, A[I])
    with pytest.raises(tinyc.BoundsError):
        k(np.array([2, 7, 1], np.int32), A, B, batch=3)


def test_tinyc_check_notes_what_it_cannot_bound(tmp_path):
    from click.testing import CliRunner

    from tinyc.cli import cli

    path = tmp_path / "k.ir"
    path.write_text(SOURCE)
    result = CliRunner().invoke(cli, ["check", "--std", "newest", str(path)])
    assert result.exit_code == 0
    notes = [line for line in result.output.splitlines() if ": note: " in line]
    assert len(notes) == 1 and "k.ir:62.3" in notes[0] and "loaded from memory" in notes[0]


@pytest.mark.parametrize("op", ["div", "rem"])
def test_an_index_divided_by_a_zero_the_verifier_cannot_see_is_noted(tmp_path, op):
    """`%z` is 0 only once folded (the verifier rejects a constant 0 divisor, not this); the
    quotient is undefined on the device (the spec), so its accesses cannot be bounded: a note,
    and launches check them. It crashed `tinyc check` and `tinyc.compile` (exit 3)."""
    from click.testing import CliRunner

    from tinyc.cli import cli

    source = f"""
func @k(%A: memref<f32x?>, %n: index) {{
  %z = arith.sub %n, %n : index
  %d = arith.{op} %z, %z : index
  %v = load %A[%d] : f32
  store %v, %A[%d]
}}
"""
    path = tmp_path / "k.ir"
    path.write_text(source)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if ": note: " in line]
    assert len(notes) == 2 and "k.ir:5.3" in notes[0] and "k.ir:6.3" in notes[1], result.output
    assert all("its divisor is 0" in n and "launches check it at run time" in n for n in notes)
    from tinyc.pipeline import compile_to_spirv

    assert not compile_to_spirv(source).kernels["k"].launch.bounded  # runs bounds-checked


GUARDED = """
func @blocks(%A: memref<f32x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %n = size %B[0] : index
  %c4 = constant 4 : index
  %first = arith.mul %g, %c4 : index
  %m = arith.min %first, %n : index
  %left = arith.sub %n, %m : index
  %count = arith.min %left, %c4 : index
  %c0 = constant 0 : index
  for %i = %c0, %count {
    %k = arith.add %first, %i : index
    %v = load %A[%k] : f32
    store %v, %B[%k]
  }
}

func @tiles(%A: memref<f32x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %n = size %B[0] : index
  %c8 = constant 8 : index
  %first = arith.mul %g, %c8 : index
  %end = arith.add %first, %c8 : index
  %whole = cmp.le %end, %n : bool
  if %whole {
    %a = subview %A[%first:8] : memref<f32x8>
    %b = subview %B[%first:8] : memref<f32x8>
    axpby.n %one_f, %a, %zero_f, %b
  } else {
    %m = arith.min %first, %n : index
    %left = arith.sub %n, %m : index
    %c0 = constant 0 : index
    for %i = %c0, %left {
      %k = arith.add %first, %i : index
      %v = load %A[%k] : f32
      store %v, %B[%k]
    }
  }
}

func @lanes(%A: memref<f32x?>, %B: memref<f32x?>) attributes {subgroup_size=16, work_group_size=[16, 1]} {
  %g = builtin.group_id : index
  %n = size %B[0] : index
  %c64 = constant 64 : index
  %base = arith.mul %g, %c64 : index
  parallel {
    %lane32 = builtin.subgroup_local_id : i32
    %lane = cast %lane32 : index
    %c0 = constant 0 : index
    %c4 = constant 4 : index
    %c16 = constant 16 : index
    for %e = %c0, %c4 {
      %at = arith.mul %e, %c16 : index
      %x = arith.add %base, %at : index
      %b = arith.add %x, %lane : index
      %inside = cmp.lt %b, %n : bool
      if %inside {
        %v = load %A[%b] : f32
        store %v, %B[%b]
      }
    }
  }
}

func @blocks_chosen(%A: memref<f32x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %n = size %B[0] : index
  %c4 = constant 4 : index
  %first = arith.mul %g, %c4 : index
  %before = cmp.lt %first, %n : bool
  %m = if %before -> (index) {
    yield (%first)
  } else {
    yield (%n)
  }
  %left = arith.sub %n, %m : index
  %short = cmp.lt %left, %c4 : bool
  %count = if %short -> (index) {
    yield (%left)
  } else {
    %four = constant 4 : index
    yield (%four)
  }
  %c0 = constant 0 : index
  for %i = %c0, %count {
    %k = arith.add %first, %i : index
    %v = load %A[%k] : f32
    store %v, %B[%k]
  }
}

func @lanes_capped(%A: memref<f32x?>, %B: memref<f32x?>) attributes {subgroup_size=16, work_group_size=[16, 1]} {
  %g = builtin.group_id : index
  %n = size %B[0] : index
  %c64 = constant 64 : index
  %base = arith.mul %g, %c64 : index
  %s = alloca : memref<f32x64,local>
  %some = cmp.lt %base, %n : bool
  if %some {
    %left = arith.sub %n, %base : index
    %c15 = constant 15 : index
    %up = arith.add %left, %c15 : index
    %c16 = constant 16 : index
    %rows = arith.div %up, %c16 : index
    %c4 = constant 4 : index
    %few = cmp.lt %rows, %c4 : bool
    %vectors = if %few -> (index) {
      yield (%rows)
    } else {
      %four = constant 4 : index
      yield (%four)
    }
    parallel {
      %lane32 = builtin.subgroup_local_id : i32
      %lane = cast %lane32 : index
      %c0 = constant 0 : index
      for %e = %c0, %vectors {
        %at = arith.mul %e, %c16 : index
        %x = arith.add %at, %lane : index
        %b = arith.add %base, %x : index
        %inside = cmp.lt %b, %n : bool
        if %inside {
          %v = load %A[%b] : f32
          store %v, %s[%x]
          %w = load %s[%x] : f32
          store %w, %B[%b]
        }
      }
    }
  }
}

func @steps_chosen(%wide: bool, %A: memref<f32x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %c4 = constant 4 : index
  %first = arith.mul %g, %c4 : index
  %count = if %wide -> (index) {
    %four = constant 4 : index
    yield (%four)
  } else {
    %two = constant 2 : index
    yield (%two)
  }
  %c0 = constant 0 : index
  for %i = %c0, %count {
    %k = arith.add %first, %i : index
    %v = load %A[%k] : f32
    store %v, %B[%k]
  }
}
""".replace("axpby.n %one_f", "%one_f = constant 1.0 : f32\n    %zero_f = constant 0.0 : f32\n    axpby.n %one_f")


@pytest.fixture(scope="module")
def guarded(device):
    return tinyc.compile(GUARDED, name="guarded.ir")


@pytest.mark.parametrize("name, per_group", [("blocks", 4), ("tiles", 8), ("lanes", 64), ("blocks_chosen", 4),
                                             ("lanes_capped", 64)])
@pytest.mark.parametrize("n", [0, 1, 7, 64, 65, 1001])
def test_guarded_kernels_take_any_batch_and_infer_the_useful_one(guarded, name, per_group, n):
    """Work-group g copies entries [g·C, g·C + C) ∩ [0, n): every batch stays inside (guards),
    and batch= left out is ceil(n / C), the work-groups that do something."""
    k = guarded[name]
    assert not k.info.unbounded
    A, B = data(n + 3)[:n] if n else data(0), np.zeros(n, np.float32)
    assert k.max_batch(A, B) == launch_limit(k)  # safe at any batch
    assert k.inferred_batch(A, B) == -(-n // per_group)
    k(A, B)
    np.testing.assert_array_equal(B, A)
    B[...] = 0
    k(A, B, batch=-(-n // per_group) + 5)  # more work-groups than useful: the rest do nothing
    np.testing.assert_array_equal(B, A)
    short = np.zeros(max(n - 1, 0), np.float32)
    if n:  # A one entry shorter than B: the last useful work-group reaches past it
        with pytest.raises(tinyc.LaunchError, match="argument 'A'"):
            k(short, B, batch=-(-n // per_group))


@pytest.mark.parametrize("size", [0, 3, 8, 13])
def test_a_count_an_if_chooses_is_bounded_by_its_largest_choice(guarded, size):
    """`%count = if %wide {yield 4} else {yield 2}`: work-group g touches 4g .. 4g + 3 at most
    (the analysis takes the largest choice), so size // 4 work-groups fit either way."""
    k = guarded["steps_chosen"]
    assert not k.info.unbounded
    A, B = data(size), np.zeros(size, np.float32)
    assert k.max_batch(True, A, B) == size // 4 == k.max_batch(False, A, B)
    with pytest.raises(tinyc.LaunchError, match="argument 'A'"):
        k(False, A, B, batch=size // 4 + 1)
    np.testing.assert_array_equal(B, 0)  # nothing ran
    k(False, A, B, batch=size // 4)
    want = np.zeros(size, np.float32)
    for g in range(size // 4):
        want[4 * g:4 * g + 2] = A[4 * g:4 * g + 2]
    np.testing.assert_array_equal(B, want)


def test_run_sizes_a_guarded_kernel_for_a_useful_batch(device, tmp_path):
    from click.testing import CliRunner

    from tinyc.cli import cli

    path = tmp_path / "g.ir"
    path.write_text(GUARDED)
    result = CliRunner().invoke(cli, ["run", str(path), "--kernel", "blocks", "--batch", "50", "--check",
                                      "--repeat", "1"])
    assert result.exit_code == 0, result.output
    assert "%B: f32 197" in result.output and "results match" in result.output  # 4·50 - 3 entries


FIXED_ENTRY = """func @k(%A: memref<f32x?x?>) {
  %g = builtin.group_id : index
  %two = constant 2 : index
  %three = constant 3 : index
  %x = load %A[%g, %two] : f32
  store %x, %A[%g, %three]
}
"""


def test_run_sizes_a_mode_for_a_fixed_entry_the_batch_does_not_reach():
    """Mode 0 is indexed by the group id, mode 1 by constant entries (2, then 3): it needs 4."""
    k = tinyc.compile(FIXED_ENTRY)["k"]
    assert k.info.launch.extents(1) == {(0, 0): 1, (0, 1): 4}
    assert k.info.launch.extents(6) == {(0, 0): 6, (0, 1): 4}


def test_atomic_accumulation_into_an_output_one_element_too_short(device):
    """Every work-group adds x into out entry by entry: out must be as long as x."""
    k = tinyc.compile("""
func @accumulate(%x: memref<f32x?>, %out: memref<f32x?>) {
  %c0 = constant 0 : index
  %n = size %x[0] : index
  foreach (%i) = (%c0), (%n) {
    %v = load %x[%i] : f32
    store.atomic_add %v, %out[%i]
  }
}""")["accumulate"]
    x = data(37)
    short = np.zeros(36, np.float32)
    with pytest.raises(tinyc.LaunchError, match=r"argument 'out'.*reaches entry 36 of mode 0.*which has 36"):
        k(x, short, batch=3)
    np.testing.assert_array_equal(short, 0)
    out = np.zeros(37, np.float32)
    k(x, out, batch=3)
    np.testing.assert_allclose(out, 3 * x)


STEPPED = """func @stepped(%A: memref<f32x3x?>, %B: memref<f32x?>) {
  %g = builtin.group_id : index
  %c3 = constant 3 : index
  %r = arith.rem %g, %c3 : index
  for %i = %r, %c3, %c3 {
    %x = load %A[%i, %g] : f32
    store %x, %B[%g]
  }
}
"""


def test_a_stepped_loop_variable_stays_below_its_upper_bound(device):
    """Fuzz seed 777001, program 449: `for %i = %g mod 3, 3, 3` runs once, at i = g mod 3;
    the bound of i's last value, lo + floor((3 - 1 - lo) / 3)·3, took lo's interval twice
    and reached 4, so a launch of every valid batch beyond 1 was refused. i < 3 always."""
    k = tinyc.compile(STEPPED)["stepped"]
    A = np.asfortranarray(np.arange(30, dtype=np.float32).reshape(3, 10))
    B = np.zeros(10, np.float32)
    assert k.info.max_batch(A, B) == 10
    k(A, B)
    np.testing.assert_array_equal(B, A[np.arange(10) % 3, np.arange(10)])
