"""`tinyc.contract([...statements...], shapes=...)`: one kernel for several statements, every
result compared with NumPy (statements_reference.py), at several batch sizes and layouts."""

from __future__ import annotations

import numpy as np
import pytest
from statements_reference import assert_close, bound_terms, run

import tinyc

DG = ["T[k,q,e] = K[d,l,k] * Q[l,a,e] * A[d,a,q,e]", "Q2[k,q,e] = Q[k,q,e] + dt * T[k,q,e]"]
DG_SHAPES = {"K": (3, 20, 20), "Q": (20, 9, None), "A": (3, 9, 9, None), "Q2": (20, 9, None)}


def arrays(shapes, batch, dtype=np.float64, seed=0, order=None):
    """Random arrays of these shapes (None: `batch`), each in the default layout (Fortran when
    the batch mode is last, else C) or in `order`."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in shapes.items():
        real = tuple(batch if n is None else n for n in shape)
        data = rng.standard_normal(real) + (1j * rng.standard_normal(real) if np.dtype(dtype).kind == "c" else 0)
        layout = order or ("F" if shape and shape[-1] is None else "C")
        out[name] = np.array(data, dtype=dtype, order=layout)
    return out


def check(c, statements, given, scalars, dtype=np.float64):
    """Run `c` on copies of `given`; every written argument must match NumPy."""
    tensors = {name: a.copy(order="K") for name, a in given.items()}
    returned = c(**tensors, **scalars)
    want = run(statements, given, scalars)
    magnitude = run(statements, given, scalars, absolute=True)
    n = bound_terms(statements, given)
    assert set(returned) == set(c.outputs)
    for name in c.outputs:
        got = returned[name]
        if name in tensors:
            assert got is tensors[name]  # written in place
        assert_close(got, want[name], magnitude[name], n, dtype)
    for name in set(given) - set(c.outputs):
        assert np.array_equal(tensors[name], given[name])  # inputs unchanged
    return returned


@pytest.fixture(scope="module")
def dg(device):
    return tinyc.contract(DG, shapes=DG_SHAPES, dtype="f64")


def test_the_design_example_at_every_batch_size_from_one_compile(dg):
    assert dg.outputs == ["Q2"] and dg.temporaries == ["T"] and dg.arguments == ["K", "Q", "A", "Q2", "dt"]
    assert "memref<f64x20x9x?>" in dg.source and "alloca : memref<f64x20x9,local>" in dg.source
    for batch in (1, 2, 7, 100, 1001):
        check(dg, DG, arrays(DG_SHAPES, batch, seed=batch), {"dt": 0.01})
    assert dg.compiled_variants == 1


def test_other_layouts_compile_a_variant_each_and_give_the_same_results(dg):
    c_order = arrays(DG_SHAPES, 33, order="C", seed=1)   # the batch mode fastest: `?` strides
    check(dg, DG, c_order, {"dt": -0.5})
    check(dg, DG, arrays(DG_SHAPES, 5, order="C", seed=2), {"dt": 2.0})   # the same variant
    strided = {name: (np.asfortranarray(np.repeat(a, 2, axis=-1))[..., ::2] if DG_SHAPES[name][-1] is None else a)
               for name, a in arrays(DG_SHAPES, 17, seed=3).items()}
    check(dg, DG, strided, {"dt": 0.25})
    transposed = arrays(DG_SHAPES, 9, seed=4)
    transposed["K"] = np.asfortranarray(transposed["K"])
    check(dg, DG, transposed, {"dt": 1.0})
    count = dg.compiled_variants
    check(dg, DG, arrays(DG_SHAPES, 40, order="C", seed=5), {"dt": 0.5})
    assert dg.compiled_variants == count   # a new batch size of a known layout: no compile


def test_batch_first_arrays(device):
    statements = ["Y[e,i,j] = X[e,i,k] * M[k,j] + 2 * X[e,i,j]"]
    shapes = {"X": (None, 6, 6), "M": (6, 6), "Y": (None, 6, 6)}
    c = tinyc.contract(statements, shapes=shapes, dtype="f64")
    assert "memref<f64x6x6x?>" in c.source            # C order: each entry contiguous
    check(c, statements, arrays(shapes, 50), {})


@pytest.mark.parametrize("statements, shapes, scalars", [
    # += and -=, scalars multiplied, divided and raised to powers, numbers, several terms
    (["Y[i,j,e] += a * X[i,j,e] - 0.5 * M[i,k] * X[k,j,e] / b",
      "Y[i,j,e] -= 3 * M[k,i] * X[k,j,e] * a**2 / b**3 * 2**3"],
     {"X": (5, 4, None), "M": (5, 5), "Y": (5, 4, None)}, {"a": 1.5, "b": -4.0}),
    # a temporary without a batch mode (a product of shared matrices, made per work-group),
    # read by two statements, and a temporary with one
    (["S[i,k] = M[i,j] * M[j,k]", "U[i,q,e] = S[i,k] * X[k,q,e]", "Y[i,q,e] = U[i,q,e] + S[k,i] * X[k,q,e]"],
     {"M": (6, 6), "X": (6, 3, None), "Y": (6, 3, None)}, {}),
    # a vector broadcast along the output, a reduction, a permutation
    (["Y[i,q,e] = X[i,q,e] + v[q]", "s[q,e] = X[i,q,e]", "Z[q,i,e] = X[i,q,e] * w[i]"],
     {"X": (7, 3, None), "v": (3,), "w": (7,), "Y": (7, 3, None), "s": (3, None), "Z": (3, 7, None)}, {}),
    # the target read by its own right-hand side: X = c X + rest updates in place, a product
    # through local memory first
    (["X[i,q,e] = 0.5 * X[i,q,e] + h * M[i,k] * P[k,q,e]", "P[i,q,e] = M[i,k] * P[k,q,e]"],
     {"X": (6, 4, None), "M": (6, 6), "P": (6, 4, None)}, {"h": 0.125}),
    # a chain of four tensors with a label only one tensor holds (summed out of it first)
    (["Y[k,q,e] += R[f,k,m] * F[f,m,l,z] * X[l,a,e] * AP[f,a,q,e]"],
     {"R": (4, 8, 5), "F": (4, 5, 8, 2), "X": (8, 3, None), "AP": (4, 3, 3, None), "Y": (8, 3, None)}, {}),
    # no batch at all: one work-group
    (["C[i,j] = A[i,k] * B[k,j]", "C[i,j] += 2 * D[j,i]"], {"A": (5, 5), "B": (5, 3), "D": (3, 5), "C": (5, 3)}, {}),
    # an elementwise product and a dot product per entry
    (["Y[i,e] = X[i,e] * Z[i,e]", "d[e] = X[i,e] * Z[i,e]"],
     {"X": (9, None), "Z": (9, None), "Y": (9, None), "d": (None,)}, {}),
])
def test_statement_forms_match_numpy(device, statements, shapes, scalars):
    c = tinyc.contract(statements, shapes=shapes, dtype="f64")
    for batch in (1, 13):
        check(c, statements, arrays(shapes, batch, seed=batch), scalars)


def test_outputs_not_passed_are_allocated_and_returned(dg):
    given = arrays(DG_SHAPES, 11)
    del given["Q2"]
    out = dg(**given, dt=0.5)
    want = run(DG, given, {"dt": 0.5})
    assert out["Q2"].shape == (20, 9, 11) and out["Q2"].flags.f_contiguous
    assert_close(out["Q2"], want["Q2"], run(DG, given, {"dt": 0.5}, absolute=True)["Q2"],
                 bound_terms(DG, given), np.float64)


@pytest.mark.parametrize("dtype, name", [(np.float32, "f32"), (np.complex128, "c64")])
def test_other_dtypes(device, dtype, name):
    c = tinyc.contract(DG, shapes=DG_SHAPES, dtype=name)
    dt = 0.25 - 0.5j if name == "c64" else 0.25
    check(c, DG, arrays(DG_SHAPES, 21, dtype=dtype), {"dt": dt}, dtype)


def test_without_dtype_a_call_with_float32_arrays_compiles_its_variant(device):
    c = tinyc.contract(DG, shapes=DG_SHAPES)
    assert "f64" in c.source
    check(c, DG, arrays(DG_SHAPES, 6, dtype=np.float32), {"dt": 0.5}, np.float32)
    mixed = arrays(DG_SHAPES, 6, dtype=np.float32)
    mixed["K"] = mixed["K"].astype(np.float64)
    with pytest.raises(TypeError, match=r"the arrays. dtypes differ \(K is float64, Q is float32"):
        c(**mixed, dt=0.5)


def test_a_batch_of_zero_does_nothing(dg):
    given = arrays(DG_SHAPES, 0)
    out = dg(**given, dt=1.0)
    assert out["Q2"] is given["Q2"] and out["Q2"].shape == (20, 9, 0)


def test_dpnp_arrays(dg):
    dpnp = pytest.importorskip("dpnp")
    given = arrays(DG_SHAPES, 12)
    on_device = {name: dpnp.asarray(a) for name, a in given.items()}
    out = dg(**on_device, dt=0.5)
    assert out["Q2"] is on_device["Q2"]
    want = run(DG, given, {"dt": 0.5})
    assert_close(dpnp.asnumpy(on_device["Q2"]), want["Q2"], run(DG, given, {"dt": 0.5}, absolute=True)["Q2"],
                 bound_terms(DG, given), np.float64)
    del on_device["Q2"]                      # an output not passed: a dpnp array on the same queue
    made = dg(**on_device, dt=0.5)["Q2"]
    assert isinstance(made, dpnp.ndarray) and made.sycl_queue == on_device["Q"].sycl_queue
    assert_close(dpnp.asnumpy(made), want["Q2"], run(DG, given, {"dt": 0.5}, absolute=True)["Q2"],
                 bound_terms(DG, given), np.float64)


def test_check_bounds(device):
    c = tinyc.contract(DG, shapes=DG_SHAPES, dtype="f64", check_bounds=True)
    check(c, DG, arrays(DG_SHAPES, 8), {"dt": 0.5})


# -- bad calls ---------------------------------------------------------------------------------
@pytest.mark.parametrize("change, kind, message", [
    (lambda a: a.pop("A"), TypeError, "missing argument A"),
    (lambda a: a.pop("dt"), TypeError, "missing argument dt"),
    (lambda a: a.update(B=a["A"]), TypeError, "unexpected argument B; the kernel takes K, Q, A, Q2, dt"),
    (lambda a: a.update(T=a["Q"]), TypeError, "T is a temporary of the kernel (statement 1 assigns it"),
    (lambda a: a.update(Q=a["Q"][:5]), ValueError, r"Q has shape (5, 9, 4), but shapes= gives (20, 9, None)"),
    (lambda a: a.update(A=a["A"][..., :3]), ValueError, "batch sizes differ: Q has 4 entries along its None mode, A has 3"),
    (lambda a: a.update(Q2=a["Q"]), ValueError, "Q2 and Q share memory, and the kernel writes Q2"),
    (lambda a: a.update(dt="fast"), TypeError, "dt is a scalar; pass a number, got str"),
    (lambda a: a.update(dt=1j), TypeError, "dt is complex (1j) but the kernel computes in float64"),
    (lambda a: a.update(K=3.0), TypeError, "K is a tensor; pass an array, got float"),
    (lambda a: a.update(K=a["K"].astype(np.float32)), TypeError, "K has dtype float32, but the kernel is made for float64"),
    (lambda a: a.update(K=a["K"].astype(">f8")), TypeError,
     "K is float64 in the other byte order (>f8); pass it in the machine's order (K.astype('=f8'))"),
])
def test_bad_calls_raise_before_anything_runs(dg, change, kind, message):
    given = arrays(DG_SHAPES, 4)
    given["dt"] = 0.5
    change(given)
    before = {k: v.copy() for k, v in given.items() if isinstance(v, np.ndarray)}
    with pytest.raises(kind) as info:
        dg(**given)
    assert message in str(info.value)
    for k, v in before.items():
        assert np.array_equal(given[k], v)


def test_an_output_accumulated_into_must_be_passed(device):
    c = tinyc.contract(["Y[i,e] += X[i,e]"], shapes={"X": (3, None), "Y": (3, None)}, dtype="f64")
    with pytest.raises(TypeError, match="missing argument Y"):
        c(X=np.ones((3, 2), order="F"))


def test_contract_keeps_its_einsum_form_apart(device):
    with pytest.raises(TypeError, match="shapes= goes with a list of statements"):
        tinyc.contract("ij,jk->ik", (2, 3), (3, 4), shapes={"A": (2, 3)})
    with pytest.raises(TypeError, match="statements take their shapes as shapes="):
        tinyc.contract(DG, (3, 20, 20))


# -- random programs -----------------------------------------------------------------------------
POOLS = {2: ["a", "a2"], 3: ["b", "b2"], 4: ["c", "c2"]}


def random_program(rng):
    """2-3 statements over random tensors: terms of 1-3 factors, temporaries, broadcasts, sums."""
    def shape(batched):
        modes = tuple(int(n) for n in rng.choice(list(POOLS), size=rng.integers(1, 3)))
        return modes + (None,) if batched else modes

    shapes = {"X": shape(True), "Y": shape(True), "M": shape(False), "N": shape(False), "O": shape(True)}
    readable = ["X", "Y", "M", "N"]
    statements, scalars = [], {}

    def access(name, tensor_shape, taken):
        labels = []
        for n in tensor_shape:
            if n is None:
                labels.append("e")
                continue
            free = [x for x in POOLS[n] if x not in labels]
            labels.append(str(rng.choice(free)))
        return f"{name}[{','.join(labels)}]"

    temporaries = {}
    for number in range(int(rng.integers(2, 4))):
        last = number == 0 or rng.random() < 0.5
        if last and "O" not in [s.split("[")[0] for s in statements]:
            target, op = "O", "="
        elif not last:
            target, op = f"T{number}", "="
        else:
            target, op = "O", str(rng.choice(["+=", "-="]))
        terms, used = [], {}
        for _ in range(int(rng.integers(1, 4))):
            names = list(rng.choice(readable, size=rng.integers(1, 4)))
            if not any(shapes.get(n, temporaries.get(n))[-1:] == (None,) for n in names):
                names.append("X")
            factors = []
            for n in names:
                factors.append(access(n, shapes.get(n, temporaries.get(n)), ()))
                labels = factors[-1][len(n) + 1:-1].split(",")
                used.update((x, m) for x, m in zip(labels, shapes.get(n, temporaries.get(n))) if x != "e")
            if rng.random() < 0.4:
                scalars.setdefault("s", float(rng.uniform(0.5, 2)))
                factors.insert(0, "s")
            if rng.random() < 0.3:
                factors.insert(0, f"{rng.uniform(0.5, 2):.3f}")
            terms.append(" * ".join(factors))
        if target == "O":
            head = access("O", shapes["O"], ())
        else:   # a temporary: some labels of its terms, and the batch
            keep = [str(x) for x in rng.choice(sorted(used), size=min(len(used), int(rng.integers(1, 3))),
                                               replace=False)]
            temporaries[target] = tuple(used[x] for x in keep) + (None,)
            head = f"{target}[{','.join(keep + ['e'])}]"
        rhs = terms[0] + "".join(f" {rng.choice(['+', '-'])} {t}" for t in terms[1:])
        statements.append(f"{head} {op} {rhs}")
        if target != "O":
            readable.append(target)
    shapes = {name: shape for name, shape in shapes.items() if any(f"{name}[" in s for s in statements)}
    return statements, shapes, scalars


@pytest.mark.parametrize("seed", range(10))
def test_random_programs_match_numpy(device, seed):
    rng = np.random.default_rng(1000 + seed)
    statements, shapes, scalars = random_program(rng)
    print("\n".join(statements), shapes)   # shown when the test fails
    try:
        c = tinyc.contract(statements, shapes=shapes, dtype="f64")
    except ValueError as exc:   # a label of the target in no term, a tensor unused: clear errors
        assert str(exc).startswith(("statement ", "shapes=")), exc
        pytest.skip(f"the generator made an invalid program: {exc}")
    for batch in (1, 6):
        check(c, statements, arrays(shapes | {}, batch, seed=seed), scalars)


def test_small_entries_share_a_work_group_and_every_batch_size_works(device):
    """Little work per entry: a loop over a block of entries per work-group; the last block is
    short when the block does not divide the batch."""
    statements = ["Y[i,j,e] = X[i,k,e] * M[k,j]"]
    shapes = {"X": (4, 4, None), "M": (4, 4), "Y": (4, 4, None)}
    c = tinyc.contract(statements, shapes=shapes, dtype="f64")
    assert "16 entries per work-group" in c.source and c.block == 16
    for batch in (1, 15, 16, 17, 100):
        check(c, statements, arrays(shapes, batch, seed=batch), {})
    assert c.compiled_variants == 1


def test_the_batch_split_over_sub_devices(device, monkeypatch):
    """device= a tinyc.Devices (sub-devices) or a list: each call splits the batch over them
    (one entry per work-group, so a slice of work-groups is a slice of the batch)."""
    from tinyc.runtime import sharding

    devices = tinyc.devices(device.filter_string, split=True)
    launches = []
    real = sharding.launch
    monkeypatch.setattr(sharding, "launch", lambda k, args, batch, where, weights:
                        launches.append((batch, where)) or real(k, args, batch, where, weights))
    for where in (devices, list(devices.queues)):
        c = tinyc.contract(DG, shapes=DG_SHAPES, dtype="f64", device=where)
        assert c.block == 1 and sharding.split_problem(c.kernel.info) is None
        check(c, DG, arrays(DG_SHAPES, 101, seed=7), {"dt": 0.5})
        assert launches[-1] == (101, where)
    small = {"X": (4, 4, None), "M": (4, 4), "Y": (4, 4, None)}
    c = tinyc.contract(["Y[i,j,e] = X[i,k,e] * M[k,j]"], shapes=small, dtype="f64", device=devices)
    assert c.block == 1                     # not blocked: still split
    check(c, ["Y[i,j,e] = X[i,k,e] * M[k,j]"], arrays(small, 50), {})
    assert launches[-1] == (50, devices)


def test_temporaries_too_large_for_local_memory_go_to_global_scratch(device):
    statements = ["S[k,m,d] = K[d,k,l] * K[d,l,m]", "Y[k,q,e] = S[k,m,d] * X[m,q,e] - S[m,k,d] * X[m,q,e]"]
    shapes = {"K": (3, 64, 64), "X": (64, 5, None), "Y": (64, 5, None)}
    c = tinyc.contract(statements, shapes=shapes, dtype="f64")
    assert "temporaries in global scratch" in c.source and "alloca" not in c.source
    for batch in (1, 5):
        check(c, statements, arrays(shapes, batch, seed=batch), {})


def test_repeated_call_signatures_take_the_fast_path_and_stay_checked(dg):
    """A call with NumPy arrays of the dtypes, shapes and strides of an earlier call reuses its
    checks: new arrays give their own results, and outputs overlapping inputs are still refused."""
    for seed in (11, 12, 13):   # the same signature, new arrays each time
        check(dg, DG, arrays(DG_SHAPES, 9, seed=seed), {"dt": 0.5 + seed})
    given = arrays(DG_SHAPES, 9, seed=14)
    with pytest.raises(ValueError, match="Q2 and Q share memory"):
        dg(**{**given, "Q2": given["Q"]}, dt=1.0)
    with pytest.raises(TypeError, match="dt is a scalar; pass a number"):
        dg(**given, dt=np.ones(2))


def test_a_temporary_nobody_reads_is_left_out(device):
    statements = ["U[i,e] = X[i,e] * X[i,e]", "T[i,e] = X[i,e] + U[i,e]", "T[i,e] = 2 * X[i,e]",
                  "Y[i,e] = T[i,e]", "V[i,e] = Y[i,e]"]
    shapes = {"X": (5, None), "Y": (5, None)}
    c = tinyc.contract(statements, shapes=shapes, dtype="f64")
    assert [i.live for i in c.checked.statements] == [False, False, True, True, False]
    assert "%U" not in c.source and "%V" not in c.source
    check(c, statements, arrays(shapes, 3), {})
