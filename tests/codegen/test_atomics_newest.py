"""atomic_load / atomic_store / atomic_add|max|min (newest language) on the device and in the
reference interpreter, against NumPy.

The device may order concurrent updates of one element any way, so its results are checked
by what every order shares: the final value, and the old values each update returned, which
must chain (sorted, each is the previous one updated by its value). The reference runs the
lanes of a work-group in order, group after group, which NumPy replays exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen_testlib import COMPLEX_TYPES, NUMPY, bf16_to_f32, checked, f32_to_bf16, program
from ir_equality import roundtrip
from tinyc.compiler import check_source
from tinyc.ir.instructions import AtomicOp, AtomicUpdate, MemoryScope, MemorySemantics
from tinyc.reference import run as run_reference

X = 16        # work-items per group (one subgroup)
SLOTS = 3     # elements the lanes update (contention inside and across groups)
BATCH = 4
TYPES = ["i8", "i16", "i32", "i64", "index", "bf16", "f16", "f32", "f64", "c32", "c64"]
CASES = [(t, op) for t in TYPES for op in ("add", "max", "min")
         if op == "add" or t not in COMPLEX_TYPES]


def update_kernel(k: int, t: str, op: str) -> str:
    """Lane i of group g: O[i] = atomic_op(x[i], acc[i mod SLOTS]) with i = g·X + lane
    (scope and semantics vary; under contention across groups a scope of .device is needed)."""
    scope = [".device", ".device.relaxed", ".cross_device.sequentially_consistent",
             ".device.acquire_release"][k % 4]
    return f"""
func @u{k}(%acc: memref<{t}x{SLOTS}>, %x: memref<{t}x?>, %O: memref<{t}x?>)
    attributes {{subgroup_size={X}, work_group_size=[{X}, 1]}} {{
  %gid = builtin.group_id : index
  parallel {{
    %lane = builtin.subgroup_local_id : i32
    %l = cast %lane : index
    %cX = constant {X} : index
    %g = arith.mul %gid, %cX : index
    %i = arith.add %g, %l : index
    %cS = constant {SLOTS} : index
    %s = arith.rem %i, %cS : index
    %v = load %x[%i] : {t}
    %old = atomic_{op}{scope} %v, %acc[%s] : {t}
    store %old, %O[%i]
  }}
}}
"""


UPDATES = "\n".join(update_kernel(k, t, op) for k, (t, op) in enumerate(CASES))
IDS = [f"{op}_{t}" for t, op in CASES]


def decoded(t: str, a: np.ndarray) -> np.ndarray:
    """Values to compute with: bf16 bits as f32, wider types for sums that must not wrap."""
    return bf16_to_f32(a).astype(np.float64) if t == "bf16" else a


def update_inputs(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Small positive integers: every sum is exact in every type, and chains strictly rise."""
    t, _ = CASES[k]
    rng = np.random.default_rng(k)
    n = BATCH * X
    x = rng.integers(1, 4, n).astype(np.float64)
    acc = rng.integers(-3, 3, SLOTS).astype(np.float64)
    if t in COMPLEX_TYPES:
        x = x + 1j * rng.integers(1, 4, n)
        acc = acc + 1j * rng.integers(-3, 3, SLOTS)
    if t == "bf16":
        return f32_to_bf16(acc), f32_to_bf16(x), np.zeros(n, np.uint16)
    dtype = NUMPY[t]
    return acc.astype(dtype), x.astype(dtype), np.zeros(n, dtype)


def lane_order(op: str, acc: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The final slots and old values when the updates run in lane order (NumPy, sequentially)."""
    acc = acc.copy()
    olds = np.empty_like(x)
    f = {"add": np.add, "max": np.maximum, "min": np.minimum}[op]
    for i, v in enumerate(x):
        olds[i] = acc[i % SLOTS]
        acc[i % SLOTS] = f(acc[i % SLOTS], v)
    return acc, olds


def check_any_order(op: str, acc0: np.ndarray, x: np.ndarray, acc: np.ndarray, olds: np.ndarray) -> None:
    """What every order of the updates gives: the final value, and old values that chain."""
    slots = np.arange(len(x)) % SLOTS
    for s in range(SLOTS):
        v, o = x[slots == s], olds[slots == s]
        if op == "add":
            parts = [np.real, np.imag] if np.iscomplexobj(x) else [lambda a: a]
            for part in parts:  # complex: the parts are updated one by one ("pseudo-atomic")
                pv, po = part(v), part(o)
                order = np.argsort(po, kind="stable")
                chain = part(acc0[s]) + np.concatenate([[0], np.cumsum(pv[order])])
                np.testing.assert_array_equal(po[order], chain[:-1])
                assert part(acc[s]) == chain[-1]
        else:
            best = max if op == "max" else min
            assert acc[s] == best([acc0[s], *v])
            assert set(o.tolist()) <= {acc0[s], *v.tolist()}
            first = min if op == "max" else max  # the first update saw the start value
            assert first(o.tolist()) == acc0[s]


@pytest.mark.parametrize("k", range(len(CASES)), ids=IDS)
def test_updates_on_the_device(device, k):
    t, op = CASES[k]
    acc, x, O = update_inputs(k)
    acc0 = acc.copy()
    program(UPDATES)[f"u{k}"](acc, x, O, batch=BATCH)
    check_any_order(op, decoded(t, acc0), decoded(t, x), decoded(t, acc), decoded(t, O))


@pytest.mark.parametrize("k", range(len(CASES)), ids=IDS)
def test_updates_in_the_reference(k):
    t, op = CASES[k]
    acc, x, O = update_inputs(k)
    want_acc, want_olds = lane_order(op, decoded(t, acc), decoded(t, x))
    run_reference(checked(UPDATES)[f"u{k}"], [acc, x, O], BATCH)
    np.testing.assert_array_equal(decoded(t, acc), want_acc)
    np.testing.assert_array_equal(decoded(t, O), want_olds)


# ---------------------------------------------------------------- many groups on one word

CONTENTION = [("i32", 512), ("i64", 256), ("f32", 512), ("f64", 256), ("c64", 256),
              ("i16", 512), ("i8", 7), ("f16", 128), ("bf16", 16)]
"""(type, groups): every one of groups·16 work-items adds 1 to the same element; the narrow
types go through a compare-exchange loop and stay below their exact-integer limit."""


def contention_kernel(t: str) -> str:
    one = "[1.0, 1.0]" if t in COMPLEX_TYPES else "1.0" if t in ("bf16", "f16", "f32", "f64") else "1"
    return f"""
func @c_{t}(%acc: memref<{t}>, %O: memref<{t}x?>) attributes {{subgroup_size={X}}} {{
  %gid = builtin.group_id : index
  parallel {{
    %lane = builtin.subgroup_local_id : i32
    %l = cast %lane : index
    %cX = constant {X} : index
    %g = arith.mul %gid, %cX : index
    %i = arith.add %g, %l : index
    %one = constant {one} : {t}
    %old = atomic_add.device %one, %acc[] : {t}
    store %old, %O[%i]
  }}
}}
"""


CONTENTION_SOURCE = "\n".join(contention_kernel(t) for t, _ in CONTENTION)


@pytest.mark.parametrize("t, groups", CONTENTION, ids=[t for t, _ in CONTENTION])
def test_many_groups_add_to_one_element(device, t, groups):
    """Every update saw a different old value: sorted, they are 0, 1, ..., n-1."""
    n = groups * X
    acc = np.zeros((), NUMPY[t])
    O = np.zeros(n, NUMPY[t])
    program(CONTENTION_SOURCE)[f"c_{t}"](acc, O, batch=groups)
    olds, total = decoded(t, O), decoded(t, acc)
    for part in ([np.real, np.imag] if t in COMPLEX_TYPES else [lambda a: a]):
        np.testing.assert_array_equal(np.sort(part(olds)), np.arange(n))
        assert part(total) == n


# ---------------------------------------------------------------- load, store, collective, local

ROUND_TRIP = "\n".join(f"""
func @rt_{t}(%x: memref<{t}x?>, %O: memref<{t}x?>, %P: memref<{t}x?>) attributes {{subgroup_size={X}}} {{
  %gid = builtin.group_id : index
  parallel {{
    %lane = builtin.subgroup_local_id : i32
    %l = cast %lane : index
    %cX = constant {X} : index
    %g = arith.mul %gid, %cX : index
    %i = arith.add %g, %l : index
    %v = load %x[%i] : {t}
    atomic_store.device.release %v, %O[%i]
    %w = atomic_load.device.acquire %O[%i] : {t}
    store %w, %P[%i]
  }}
}}
""" for t in TYPES)


@pytest.mark.parametrize("t", TYPES)
def test_atomic_store_then_load_on_the_device_and_in_the_reference(device, t):
    rng = np.random.default_rng(len(t))
    n = 2 * X
    if t == "bf16":
        x = f32_to_bf16(rng.uniform(-4, 4, n))
    elif t in COMPLEX_TYPES:
        x = (rng.uniform(-4, 4, n) + 1j * rng.uniform(-4, 4, n)).astype(NUMPY[t])
    elif t.startswith("f"):
        x = rng.uniform(-4, 4, n).astype(NUMPY[t])
    else:
        x = rng.integers(-100, 100, n).astype(NUMPY[t])
    for run in (lambda *a: program(ROUND_TRIP)[f"rt_{t}"](*a, batch=2),
                lambda *a: run_reference(checked(ROUND_TRIP)[f"rt_{t}"], list(a), 2)):
        O, P = np.zeros_like(x), np.zeros_like(x)
        run(x, O, P)
        np.testing.assert_array_equal(O, x)
        np.testing.assert_array_equal(P, x)


COLLECTIVE = f"""
func @coll(%acc: memref<f32x2>, %v: f32) attributes {{subgroup_size={X}, work_group_size=[{X}, 2]}} {{
  %z = constant 0 : index
  %o = constant 1 : index
  %old = atomic_add %v, %acc[%z] : f32
  %m = atomic_max.device %v, %acc[%o] : f32
}}

func @local(%O: memref<i32x?>, %T: memref<i32x?>) attributes {{subgroup_size={X}, work_group_size=[{X}, 2]}} {{
  %gid = builtin.group_id : index
  %cnt = alloca : memref<i32, local>
  %zero = constant 0 : i32
  store %zero, %cnt[]
  parallel {{
    %one = constant 1 : i32
    %old = atomic_add %one, %cnt[] : i32
    %sg = builtin.subgroup_id : i32
    %lane = builtin.subgroup_local_id : i32
    %cX = constant {X} : i32
    %row = arith.mul %sg, %cX : i32
    %w = arith.add %row, %lane : i32
    %wi = cast %w : index
    %c2X = constant {2 * X} : index
    %base = arith.mul %gid, %c2X : index
    %at = arith.add %base, %wi : index
    store %old, %O[%at]
  }}
  %total = load %cnt[] : i32
  store %total, %T[%gid]
}}
"""


def test_in_a_collective_region_every_work_item_updates(device):
    """32 work-items each add 1.5 (and take the max) on the device and in the reference."""
    for run in (lambda *a: program(COLLECTIVE)["coll"](*a, batch=3),
                lambda *a: run_reference(checked(COLLECTIVE)["coll"], list(a), 3)):
        acc = np.array([1.0, -4.0], np.float32)
        run(acc, np.float32(1.5))
        np.testing.assert_array_equal(acc, [1.0 + 3 * 2 * X * 1.5, 1.5])


def test_local_memory_counter_with_barriers_around_it(device):
    """Stores to and loads of the local counter are ordered with its atomic adds by barriers
    (an atomic update is a write for insert-barriers): each group counts 0..31 exactly once."""
    groups = 5
    O = np.full(groups * 2 * X, -1, np.int32)
    T = np.zeros(groups, np.int32)
    program(COLLECTIVE)["local"](O, T, batch=groups)
    np.testing.assert_array_equal(T, 2 * X)
    for g in range(groups):
        np.testing.assert_array_equal(np.sort(O[g * 2 * X:(g + 1) * 2 * X]), np.arange(2 * X))
    O2, T2 = np.full_like(O, -1), np.zeros_like(T)
    run_reference(checked(COLLECTIVE)["local"], [O2, T2], groups)
    np.testing.assert_array_equal(T2, 2 * X)
    np.testing.assert_array_equal(O2, np.tile(np.arange(2 * X), groups))  # lane order


# ---------------------------------------------------------------- syntax, memory effects

def test_scope_and_semantics_round_trip_with_defaults_left_out():
    text = f"""
func @k(%A: memref<f32x4>) {{
  parallel {{
    %z = constant 0 : index
    %a = atomic_load %A[%z] : f32
    %b = atomic_add.work_group.relaxed %a, %A[%z] : f32
    %c = atomic_max.subgroup.acquire %a, %A[%z] : f32
    atomic_store.cross_device.sequentially_consistent %c, %A[%z]
  }}
}}
"""
    prog = roundtrip(text)
    updates = [i for i in prog["k"].walk() if isinstance(i, AtomicUpdate)]
    assert [(u.op, u.scope, u.semantics) for u in updates] == [
        (AtomicOp.ADD, MemoryScope.WORK_GROUP, MemorySemantics.RELAXED),
        (AtomicOp.MAX, MemoryScope.SUBGROUP, MemorySemantics.ACQUIRE)]
    from tinyc.ir.printer import print_program
    printed = print_program(prog)
    assert "atomic_add %a" in printed and "atomic_max.subgroup.acquire %a" in printed


def test_atomic_updates_and_stores_are_writes_loads_are_reads():
    """Barriers and the kernel's copy-back see them (tinyc.analysis.memory_effects)."""
    from tinyc.analysis.memory_effects import EffectKind, direct_effects
    from tinyc.spirv.codegen.kernel import param_infos

    prog = check_source("""
func @k(%R: memref<f32x4>, %S: memref<f32x4>, %U: memref<f32x4>) {
  parallel {
    %z = constant 0 : index
    %a = atomic_load %R[%z] : f32
    atomic_store %a, %S[%z]
    %b = atomic_min %a, %U[%z] : f32
  }
}
""")
    fn = prog["k"]
    kinds = [[e.kind for e in direct_effects(i)] for i in fn.walk()][-3:]
    assert kinds == [[EffectKind.READ], [EffectKind.WRITE], [EffectKind.WRITE]]
    assert [p.written for p in param_infos(fn)] == [False, True, True]


# ---------------------------------------------------------------- the seed's store flags, migrated

SEED_FLAGS = f"""
func @flags(%A: memref<f32x4>, %M: memref<f32x{X}x4>) attributes {{subgroup_size={X}}} {{
  parallel {{
    %z = constant 0 : index
    %o = constant 1 : index
    %v = constant 1.5 : f32
    store.atomic_add %v, %A[%z]
    store.atomic %v, %A[%o]
    %m = cooperative_matrix_load.n %M[%z, %z] : coopmatrix<f32x{X}x4,matrix_acc>
    cooperative_matrix_store.atomic_add %m, %M[%z, %z]
  }}
}}
"""


def test_the_seeds_store_flags_migrate_to_the_newest_atomics_and_back(device):
    """`store.atomic_add` is `%r = atomic_add` with its result unused; both spellings compute
    the same, and the seed spelling comes back."""
    from tinyc.ir.printer import print_program
    from tinyc.std import Std

    seed = checked(SEED_FLAGS)
    newest = print_program(seed, Std.NEWEST, declare=True)
    assert "%old = atomic_add %v, %A[%z] : f32" in newest
    assert "atomic_store %v, %A[%o]" in newest
    assert f"= cooperative_matrix_atomic_add %m, %M[%z, %z] : coopmatrix<f32x{X}x4,matrix_acc>" in newest
    assert print_program(checked(newest), Std.SEED) == print_program(seed)
    results = []
    for source in (SEED_FLAGS, newest):
        A = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
        M = np.asfortranarray(np.arange(4 * X, dtype=np.float32).reshape(X, 4))
        program(source)["flags"](A, M, batch=1)
        results.append((A, M))
    np.testing.assert_array_equal(results[0][0], [1.0 + X * 1.5, 1.5, 3.0, 4.0])
    np.testing.assert_array_equal(results[0][1], 2 * np.arange(4 * X, dtype=np.float32).reshape(X, 4))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_what_the_seed_cannot_spell_of_the_atomics_is_a_diagnostic():
    from tinyc.diagnostics import CompilationError
    from tinyc.ir.printer import print_program
    from tinyc.std import Std

    prog = checked("""
func @k(%A: memref<f32x4>, %B: memref<f32x4>) {
  parallel {
    %z = constant 0 : index
    %a = atomic_load %A[%z] : f32
    %b = atomic_add %a, %A[%z] : f32
    store %b, %B[%z]
    atomic_store.release %a, %A[%z]
    %c = atomic_max %a, %A[%z] : f32
  }
}
""")
    with pytest.raises(CompilationError) as info:
        print_program(prog, Std.SEED)
    assert [d.message for d in info.value.diagnostics] == [
        "'atomic_load' cannot be written in the seed language",
        "'atomic_add' with its result used (the seed's store.atomic_add returns nothing) cannot be "
        "written in the seed language",
        "'atomic_store.release' cannot be written in the seed language",
        "'atomic_max' cannot be written in the seed language",
    ]
