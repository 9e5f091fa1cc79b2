"""check_bounds changes nothing but the checks: every kind of write gives the results of the
plain kernel, and NumPy's (issue 21 §2).

A bounds-checked launch runs as a dry run (checks only, then the plain kernel) when no
address depends on memory the kernel writes (tinyc/analysis/own_writes.py); every write to
global memory is then left out at codegen's one write point (tinyc/spirv/codegen/writes.py).
Two bugs did not: a gemm.t.t with beta = 1 accumulated twice (its vector stores were
written in the dry run), and an atomic_add ticket counter ended at 32 (atomics were applied
in the dry run, whose addresses then depended on the counter). Every atomic and coopmatrix
store kind is run here with and without checks, and compared with NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyc
from tinyc.compiler import compile_to_spirv

GROUPS = 3
X = 16  # work-items per group (one subgroup)
N = GROUPS * X


def fortran(a: np.ndarray) -> np.ndarray:
    return np.asfortranarray(a)


def run_both(kernel, make_args, batch: int = 1) -> tuple[list, list]:
    """The arguments after a plain and after a bounds-checked launch on fresh copies."""
    plain, checked = make_args(), make_args()
    kernel(*plain, batch=batch)
    kernel(*checked, batch=batch, check_bounds=True)
    return plain, checked


# -- gemm with beta = 1 (vector stores of C) ------------------------------------------------------
GEMM = "\n".join(f"""
func @gemm_{ta}{tb}_{t}(%alpha: {t}, %A: memref<{t}x16x16>, %B: memref<{t}x16x16>, %beta: {t},
                     %C: memref<{t}x16x16>) {{
  gemm.{ta}.{tb} %alpha, %A, %B, %beta, %C
}}""" for t in ("f32", "f64") for ta in "nt" for tb in "nt")


@pytest.fixture(scope="module")
def gemm_program(device):
    return tinyc.compile(GEMM, name="gemm.ir")


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("ta, tb", [("t", "t"), ("n", "n"), ("n", "t"), ("t", "n")])
def test_gemm_with_beta_one_accumulates_once(gemm_program, t, ta, tb):
    """gemm.t.t beta = 1 on 16x16 used to add A·B to C twice under check_bounds (error 6.3)."""
    dtype = np.float32 if t == "f32" else np.float64
    rng = np.random.default_rng(1)
    A, B, C = (fortran(rng.standard_normal((16, 16)).astype(dtype)) for _ in range(3))
    op_a = A.T if ta == "t" else A
    op_b = B.T if tb == "t" else B
    want = op_a.astype(np.float64) @ op_b.astype(np.float64) + C
    kernel = gemm_program[f"gemm_{ta}{tb}_{t}"]
    assert kernel._checked_kernel().info.bounds_dry
    plain, checked = run_both(kernel, lambda: [1.0, A, B, 1.0, C.copy(order="F")])
    eps = np.finfo(dtype).eps
    tol = 16 * 16 * eps * (np.abs(op_a) @ np.abs(op_b) + np.abs(C))  # the error bound of a K=16 sum
    assert (np.abs(checked[4] - want) <= tol).all()
    assert (np.abs(plain[4] - want) <= tol).all()
    np.testing.assert_array_equal(checked[4], plain[4])


# -- the ticket counter -------------------------------------------------------------------------------
TICKETS = f"""
func @tickets(%count: memref<i32x1>, %O: memref<i32x?>) attributes {{subgroup_size={X}, work_group_size=[{X}, 1]}} {{
  parallel {{
    %one = constant 1 : i32
    %z = constant 0 : index
    %old = atomic_add.device %one, %count[%z] : i32
    %at = cast %old : index
    %lane = builtin.subgroup_local_id : i32
    store %lane, %O[%at]
  }}
}}
"""


@pytest.fixture(scope="module")
def tickets(device):
    return tinyc.compile(TICKETS, name="tickets.ir")["tickets"]


def test_ticket_counter_counts_once_under_check_bounds(tickets):
    """Each lane takes a ticket (atomic_add returns the old count) and stores at it: 16 lanes,
    count 16, slots 0..15 hold the lanes. The dry run applied the atomics too (count 32,
    stores at 16..31); now the kernel is recognised as addressing by its own writes."""
    assert not tickets._checked_kernel().info.bounds_dry
    for check in (False, True):
        count, O = np.zeros(1, np.int32), np.full(40, -1, np.int32)
        tickets(count, O, check_bounds=check, batch=1)
        assert count[0] == X
        assert sorted(O[:X]) == list(range(X))
        assert (O[X:] == -1).all()


def test_ticket_counter_past_its_output_is_caught(tickets):
    """With 8 slots for 16 tickets, the stores at 8..15 are outside O: the checked run raises
    and writes nothing back (a dry run would have checked the stores at ticket 0 only). The
    run is not dry (atomics), so it writes for real: NumPy arrays, which a plain run passes by
    address, are copied for it, and the copies are not written back after the violation."""
    count, O = np.zeros(1, np.int32), np.full(8, -1, np.int32)
    with pytest.raises(tinyc.BoundsError) as info:
        tickets(count, O, check_bounds=True, batch=1)
    assert info.value.shape == (8,) and info.value.index[0] >= 8
    assert count[0] == 0 and (O == -1).all()


# -- every atomic kind ------------------------------------------------------------------------------------
def lanes(params: str, body: str, name: str) -> str:
    """A kernel whose parallel region sees %i = group_id·X + lane (as index) and %z = 0."""
    inner = "\n".join("    " + line.strip() for line in body.strip().splitlines())
    return f"""
func @{name}({params}) attributes {{subgroup_size={X}, work_group_size=[{X}, 1]}} {{
  %gid = builtin.group_id : index
  parallel {{
    %lane = builtin.subgroup_local_id : i32
    %l = cast %lane : index
    %cX = constant {X} : index
    %goff = arith.mul %gid, %cX : index
    %i = arith.add %l, %goff : index
    %z = constant 0 : index
{inner}
  }}
}}"""


SEED_ATOMICS = lanes("%x: memref<f32x?>, %S: memref<f32x?>, %k: memref<i32x?>, %T: memref<i32x1>", """
    %v = load %x[%i] : f32
    store.atomic %v, %S[%i]
    %w = load %k[%i] : i32
    store.atomic_add %w, %T[%z]
""", "seed_atomics")

NEWEST_ATOMICS = lanes("%x: memref<i32x?>, %S: memref<i32x?>, %A: memref<i32x?>, %Mx: memref<i32x?>, "
                       "%Mn: memref<i32x?>, %O: memref<i32x?x4>, %T: memref<i32x1>", """
    %v = load %x[%i] : i32
    atomic_store.device %v, %S[%i]
    %a = atomic_add %v, %A[%i] : i32
    %b = atomic_max.device.acquire_release %v, %Mx[%i] : i32
    %c = atomic_min.device.sequentially_consistent %v, %Mn[%i] : i32
    %d = atomic_load.device.acquire %A[%i] : i32
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c2 = constant 2 : index
    %c3 = constant 3 : index
    store %a, %O[%i, %c0]
    store %b, %O[%i, %c1]
    store %c, %O[%i, %c2]
    store %d, %O[%i, %c3]
    %t = atomic_add.device %v, %T[%z] : i32
""", "newest_atomics")


@pytest.fixture(scope="module")
def seed_atomics(device):
    return tinyc.compile(SEED_ATOMICS, name="seed_atomics.ir")["seed_atomics"]


@pytest.fixture(scope="module")
def newest_atomics(device):
    return tinyc.compile(NEWEST_ATOMICS, name="newest_atomics.ir")["newest_atomics"]


def test_seed_store_atomic_and_atomic_add(seed_atomics):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(N).astype(np.float32)
    k = rng.integers(-50, 50, N).astype(np.int32)
    assert seed_atomics._checked_kernel().info.bounds_dry
    plain, checked = run_both(seed_atomics, lambda: [x, np.zeros(N, np.float32), k,
                                                     np.full(1, 7, np.int32)], GROUPS)
    for got in (plain, checked):
        np.testing.assert_array_equal(got[1], x)
        assert got[3][0] == 7 + k.sum()


def test_newest_atomic_store_add_max_min_load(newest_atomics):
    rng = np.random.default_rng(3)
    x = rng.integers(-100, 100, N).astype(np.int32)
    A0 = rng.integers(-100, 100, N).astype(np.int32)
    Mx0 = rng.integers(-100, 100, N).astype(np.int32)
    Mn0 = rng.integers(-100, 100, N).astype(np.int32)
    assert newest_atomics._checked_kernel().info.bounds_dry

    def args():
        return [x, np.zeros(N, np.int32), A0.copy(), Mx0.copy(), Mn0.copy(),
                fortran(np.zeros((N, 4), np.int32)), np.full(1, 5, np.int32)]

    plain, checked = run_both(newest_atomics, args, GROUPS)
    for got in (plain, checked):
        _, S, A, Mx, Mn, O, T = got
        np.testing.assert_array_equal(S, x)
        np.testing.assert_array_equal(A, A0 + x)
        np.testing.assert_array_equal(Mx, np.maximum(Mx0, x))
        np.testing.assert_array_equal(Mn, np.minimum(Mn0, x))
        np.testing.assert_array_equal(O[:, 0], A0)  # the old values
        np.testing.assert_array_equal(O[:, 1], Mx0)
        np.testing.assert_array_equal(O[:, 2], Mn0)
        np.testing.assert_array_equal(O[:, 3], A0 + x)  # read after this lane's own add
        assert T[0] == 5 + x.sum()


# -- every coopmatrix store kind ----------------------------------------------------------------------------
# (keyword and flags, use, newest language?): each group stores its matrix into its own
# slice of M; the adds also go into one shared matrix S that every group updates.
COOP_STORES = [
    ("cooperative_matrix_store", "matrix_acc", False),
    ("cooperative_matrix_store.t", "matrix_acc", False),
    ("cooperative_matrix_store.rows_checked", "matrix_a", False),
    ("cooperative_matrix_store.atomic", "matrix_acc", False),
    ("cooperative_matrix_store.atomic_add", "matrix_b", False),
    ("cooperative_matrix_atomic_store.device", "matrix_acc", True),
    ("cooperative_matrix_atomic_store.t.device", "matrix_b", True),
    ("cooperative_matrix_atomic_add.device", "matrix_acc", True),
    ("cooperative_matrix_atomic_add.t.device", "matrix_b", True),
    ("cooperative_matrix_atomic_max.device", "matrix_a", True),
    ("cooperative_matrix_atomic_min.cols_checked.device", "matrix_acc", True),
]
R, C = 16, 4


def coop_kernel(k: int) -> str:
    """Group g stores A[:, :, g] into M[:, :, g] and into the shared S; an update's old values
    of M go to O[:, :, g]."""
    keyword, use, newest = COOP_STORES[k]
    load = "cooperative_matrix_load" if newest else "cooperative_matrix_load.n"
    coop = f"coopmatrix<i32x{R}x{C},{use}>"
    shape = f"{C}x{R}" if ".t" in keyword else f"{R}x{C}"
    if "atomic_" in keyword and "store" not in keyword:
        store = (f"%old = {keyword} %v, %m[%z, %z] : {coop}\n"
                 f"    %old2 = {keyword} %v, %S[%z, %z] : {coop}\n"
                 f"    cooperative_matrix_store %old, %o[%z, %z]")
    else:
        store = f"{keyword} %v, %m[%z, %z]\n    {keyword} %v, %S[%z, %z]"
    return f"""
func @c{k}(%A: memref<i32x{R}x{C}x?>, %M: memref<i32x{shape}x?>, %S: memref<i32x{shape}>,
           %O: memref<i32x{R}x{C}x?>) attributes {{subgroup_size={X}, work_group_size=[{X}, 1]}} {{
  %gid = builtin.group_id : index
  %a = subview %A[:, :, %gid] : memref<i32x{R}x{C}>
  %m = subview %M[:, :, %gid] : memref<i32x{shape}>
  %o = subview %O[:, :, %gid] : memref<i32x{R}x{C}>
  parallel {{
    %z = constant 0 : index
    %v = {load} %a[%z, %z] : {coop}
    {store}
  }}
}}"""


@pytest.fixture(scope="module")
def coop_programs(device):
    seed = "\n".join(coop_kernel(k) for k, (_, _, newest) in enumerate(COOP_STORES) if not newest)
    newest = "\n".join(coop_kernel(k) for k, (_, _, newest) in enumerate(COOP_STORES) if newest)
    return tinyc.compile(seed, name="coop_seed.ir"), tinyc.compile(newest, name="coop_newest.ir")


@pytest.mark.parametrize("k", range(len(COOP_STORES)), ids=[c[0] for c in COOP_STORES])
def test_coopmatrix_store_kinds(coop_programs, k):
    keyword, use, newest = COOP_STORES[k]
    kernel = coop_programs[newest][f"c{k}"]
    assert kernel._checked_kernel().info.bounds_dry
    rng = np.random.default_rng(4 + k)
    A = fortran(rng.integers(-20, 20, (R, C, GROUPS)).astype(np.int32))
    transposed = ".t" in keyword
    S0 = fortran(rng.integers(-20, 20, (C, R) if transposed else (R, C)).astype(np.int32))

    def args():
        shape = (C, R, GROUPS) if transposed else (R, C, GROUPS)
        return [A, fortran(np.full(shape, 99, np.int32)), S0.copy(order="F"),
                fortran(np.zeros(A.shape, np.int32))]

    plain, checked = run_both(kernel, args, GROUPS)
    stack = np.stack([A[:, :, g] for g in range(GROUPS)])  # group, row, column
    if "add" in keyword:
        shared = S0 + (stack.sum(axis=0).T if transposed else stack.sum(axis=0))
    elif "max" in keyword:
        shared = np.maximum(S0, stack.max(axis=0))
    elif "min" in keyword:
        shared = np.minimum(S0, stack.min(axis=0))
    else:
        shared = None  # the groups race to store, element by element: each element is some group's
    for _, M, S, O in (plain, checked):
        updated = "atomic_" in keyword and "store" not in keyword
        np.testing.assert_array_equal(O, 99 if updated else 0)  # the old values of M
        for g in range(GROUPS):
            mine = A[:, :, g].T if transposed else A[:, :, g]
            if "add" in keyword:
                mine = mine + 99
            elif "max" in keyword:
                mine = np.maximum(mine, 99)
            elif "min" in keyword:
                mine = np.minimum(mine, 99)
            np.testing.assert_array_equal(M[:, :, g], mine)
        if shared is not None:
            np.testing.assert_array_equal(S, shared)
        else:
            candidates = np.stack([A[:, :, g].T if transposed else A[:, :, g] for g in range(GROUPS)])
            assert (candidates == S).any(axis=0).all()


# -- the dry run writes nothing, in the SPIR-V ------------------------------------------------------------------
WRITES = ("OpStore", "OpAtomicStore", "OpAtomicExchange", "OpAtomicCompareExchange", "OpAtomicIAdd",
          "OpAtomicISub", "OpAtomicSMin", "OpAtomicUMin", "OpAtomicSMax", "OpAtomicUMax", "OpAtomicAnd",
          "OpAtomicOr", "OpAtomicXor", "OpAtomicFAddEXT", "OpAtomicFMinEXT", "OpAtomicFMaxEXT",
          "OpAtomicIIncrement", "OpAtomicIDecrement", "vstore")


def kernel_functions(assembly: str) -> dict[str, list[str]]:
    """The lines of each function of a disassembled module, by the function's OpName."""
    names = {}
    for line in assembly.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0] == "OpName":
            names[parts[1]] = parts[2].strip('"')
    functions: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in assembly.splitlines():
        parts = line.split()
        if "OpFunction" in parts and parts[0] != "OpFunctionEnd":
            current = functions.setdefault(names.get(parts[0], parts[0]), [])
        elif parts[:1] == ["OpFunctionEnd"]:
            current = None
        elif current is not None:
            current.append(line)
    return functions


def global_writes(lines: list[str]) -> list[str]:
    """The lines that write through a pointer that is not Workgroup (local) or Function
    (private: where the checks note a work-item's first violation) memory."""
    types = {}
    for line in lines:
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "=":
            types[parts[0]] = parts[3]
    found = []
    for line in lines:
        parts = line.split()
        if "vstoren" in parts:
            pointer = parts[-1]
        elif parts[:1] in (["OpStore"], ["OpAtomicStore"]):
            pointer = parts[1]
        elif len(parts) > 4 and parts[1] == "=" and parts[2] in WRITES:
            pointer = parts[4]
        else:
            continue
        kind = types.get(pointer, "")
        if "_Function_" in kind:
            continue
        if "Workgroup" not in kind or "CrossWorkgroup" in kind:
            found.append(line)
    return found


SOURCES = {"gemm": GEMM, "seed_atomics": SEED_ATOMICS, "newest_atomics": NEWEST_ATOMICS,
           **{COOP_STORES[k][0]: coop_kernel(k) for k in range(len(COOP_STORES))}}


@pytest.mark.parametrize("name", SOURCES)
def test_a_dry_kernel_writes_no_global_memory(name):
    """Disassembled, each dry kernel function writes no global memory (only local memory, and
    the report's recorder function, if any); the plain kernels do."""
    from tinyc.spirv.tools import disassemble

    result = compile_to_spirv(SOURCES[name], "dry.ir", check_bounds=True)
    functions = kernel_functions(disassemble(result.spirv))
    plain = compile_to_spirv(SOURCES[name], "plain.ir")
    plain_functions = kernel_functions(disassemble(plain.spirv))
    for kernel, info in result.kernels.items():
        assert info.bounds_dry
        assert global_writes(functions[kernel]) == [], kernel
        assert global_writes(plain_functions[kernel]) != [], kernel


# -- fuse of size-1 modes ------------------------------------------------------------------------------
FUSE = """
func @fuse(%A: memref<f32x?x?,strided<1,?>>, %B: memref<f32x?>) {
  %f = fuse %A[0, 1] : memref<f32x?>
  %n = size %f[0] : index
  %z = constant 0 : index
  foreach (%i) = (%z), (%n) {
    %x = load %f[%i] : f32
    store %x, %B[%i]
  }
}
"""


@pytest.fixture(scope="module")
def fuse_kernel(device):
    return tinyc.compile(FUSE, name="fuse.ir")["fuse"]


@pytest.mark.parametrize("rows, cols, stride", [(1, 1, 4), (1, 5, 3), (4, 1, 9), (3, 2, 3)])
def test_fuse_where_size_one_modes_have_any_stride(fuse_kernel, rows, cols, stride):
    """A size-1 mode never addresses memory, so its stride does not matter (seed 20261123,
    program 69: the checked run reported sizes (1, 1) with strides (1, 4) as not contiguous,
    and a plain (1, n) fuse read with the size-1 mode's stride). Plain and checked runs read
    the fused elements as NumPy orders them."""
    base = np.arange(1, 64, dtype=np.float32)
    A = np.ndarray((rows, cols), np.float32, buffer=base, strides=(4, 4 * stride))
    want = A.reshape(-1, order="F")
    for check in (False, True):
        B = np.zeros(rows * cols, np.float32)
        fuse_kernel(A, B, check_bounds=check, batch=1)
        np.testing.assert_array_equal(B, want)


def test_fuse_of_modes_that_are_not_contiguous_is_still_caught(fuse_kernel):
    base = np.arange(1, 64, dtype=np.float32)
    A = np.ndarray((3, 2), np.float32, buffer=base, strides=(4, 4 * 4))  # needs stride 3
    with pytest.raises(tinyc.BoundsError) as info:
        fuse_kernel(A, np.zeros(6, np.float32), check_bounds=True, batch=1)
    assert info.value.kind == "fuse"
