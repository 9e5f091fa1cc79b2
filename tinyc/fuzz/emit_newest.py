"""Generator entries for the newest language's instructions.

atomic_load / atomic_store / atomic_add|max|min, the math functions the seed
lacks (cos, sin, exp2, log, log2 and the native_ forms), `associated`,
`foreach_tile`, and the coopmatrix forms: construct, apply, extract and
insert, reduce, the atomic load, store and updates, and prefetch. A kernel
that may use them is a newest program (`Writer.newest`, with its geometry
given); the runner compiles the versions as separate modules.

Race freedom and determinism as elsewhere (program.py): an atomic update
whose old value is used touches only the work-item's own element; updates of
shared accumulators or of the work-group's own slice from collective code
discard their old values (the order of the work-items decides them).
"""

from __future__ import annotations

from tinyc.fuzz.emit_memory import _store_spmd, _taint
from tinyc.fuzz.facts import COMPLEX, MAX_STEPS, REALS, exact_op, tolerance
from tinyc.fuzz.generator import Writer
from tinyc.fuzz.program import GROUP, LANE, SUBGROUP, Val
from tinyc.fuzz.registry import generates
from tinyc.ir import instructions as I
from tinyc.ir.coopmatrix_layout import vector_length
from tinyc.ir.types import (
    MatrixUse, ScalarType, bool_, c32, coopmatrix_type, f16, f32, f64, i8, i16, i32, i64, index,
)

SCOPES = (".device", ".cross_device")
"""Scopes for memory other work-groups touch (a work-group scope would not order them)."""
SEMANTICS = ("", ".relaxed", ".acquire", ".release", ".acquire_release", ".sequentially_consistent")
NATIVE_TOLERANCE = 2.0 ** -5
"""native_ functions are implementation-defined (OpenCL): only sanity is compared."""
ATOMIC_TYPES = (i8, i16, i32, i64, f16, f32, f64, c32)
COOP_TYPES = (i8, i16, i32, i64, f16, f32, f64, c32)


def _ordering(w: Writer, shared: bool) -> str:
    scope = w.pick(SCOPES) if shared or w.chance(0.5) else w.pick(("", ".work_group", ".subgroup"))
    return scope + w.pick(SEMANTICS)


def _ops(t: ScalarType) -> tuple[str, ...]:
    return ("add",) if t.is_complex else ("add", "max", "min")


def _updated(root_exact: bool, value: Val, t: ScalarType, op: str) -> bool:
    """Whether element op value is computed alike on both sides."""
    return root_exact and value.exact and (op != "add" or exact_op(t, "add"))


# ---------------------------------------------------------------- atomics

@generates(I.AtomicUpdate, "atomic_update", 0.8, newest=True)
def emit_atomic_update(w: Writer) -> bool:
    """Its own element (SPMD, old value used), a shared accumulator, or the work-group's
    slice from collective code (both: old value discarded)."""
    at = w.region.store_at if w.spmd else None
    shared = [v for v in w.mems(writable=True) if v.mem.root.shared
              and v.mem.type.element in ATOMIC_TYPES and 0 not in v.mem.shape]
    own = [v for v in w.mems(writable=True) if not v.mem.root.shared and not w.spmd
           and v.mem.type.element in ATOMIC_TYPES and 0 not in v.mem.shape]
    if at is not None and at[2] is None and at[0].mem.type.element in ATOMIC_TYPES and w.chance(0.7):
        view, indices, _ = at
        t = view.mem.type.element
        op = w.pick(_ops(t))
        value = w.scalar(t)
        old = w.fresh("old")
        w.emit(f"{old} = atomic_{op}{_ordering(w, False)} {value.name}, {view.name}"
               f"[{', '.join(i.name for i in indices)}] : {t}")
        root = view.mem.root
        w.define(old, t, level=LANE, exact=root.exact, tol=root.tol)
        _taint(root, value, _updated(root.exact, value, t, op), t)
        return True
    if not shared and not own:
        return False
    dst = w.pick(shared if shared and (not own or w.chance(0.5)) else own)
    m = dst.mem
    t = m.type.element
    # every work-item of the group runs one update of its slice; a shared accumulator gets
    # adds only (adds commute with each other, not with max or min)
    op = "add" if m.root.shared else w.pick(_ops(t))
    value = w.scalar(t, level=GROUP if not w.spmd else LANE)
    indices = [w.index_in(0, n - 1, level=GROUP if not w.spmd else LANE) for n in m.shape]
    w.emit(f"{w.fresh('old')} = atomic_{op}{_ordering(w, True)} {value.name}, {dst.name}"
           f"[{', '.join(i.name for i in indices)}] : {t}")
    # max and min give one result in any order; the adds of many work-items may round apart
    _taint(m.root, value, exact=op != "add" or t.is_int, element=t)
    return True


@generates(I.AtomicStore, "atomic_store", 0.5, newest=True)
def emit_atomic_store(w: Writer) -> bool:
    """Its own element in SPMD code, or a uniform value into the work-group's slice."""
    if w.spmd:
        at = w.region.store_at
        if at is None or at[2] is not None:
            return False
        view, indices, _ = at
    else:
        targets = w.own_writable()
        if not targets:
            return False
        view = w.pick(targets)
        indices = [w.index_in(0, n - 1, level=GROUP) for n in view.mem.shape]
    t = view.mem.type.element
    value = w.scalar(t, level=GROUP if not w.spmd else LANE)
    w.emit(f"atomic_store{_ordering(w, False)} {value.name}, {view.name}"
           f"[{', '.join(i.name for i in indices)}]")
    _taint(view.mem.root, value)
    return True


@generates(I.AtomicLoad, "atomic_load", 0.5, newest=True)
def emit_atomic_load(w: Writer) -> bool:
    srcs = [v for v in w.mems(readable=True) if 0 not in v.mem.shape]
    if not srcs:
        return False
    src = w.pick(srcs)
    m = src.mem
    level = GROUP if not w.spmd else LANE
    indices = [w.index_in(0, n - 1, level=level) for n in m.shape]
    name = w.fresh("x")
    t = m.type.element
    w.emit(f"{name} = atomic_load{_ordering(w, False)} {src.name}"
           f"[{', '.join(i.name for i in indices)}] : {t}")
    w.define(name, t, level=min([src.level] + [i.level for i in indices]), exact=m.root.exact,
             tol=m.root.tol)
    return True


# ---------------------------------------------------------------- math, associated

@generates(I.MathUnary, "math.newest", 0.6, newest=True)
def emit_math_newest(w: Writer) -> bool:
    """cos, sin, exp, exp2, log, log2 and native_ forms (complex: exp, exp2) on a clamped
    argument (log: in [0.25, 4])."""
    t = w.pick(REALS + COMPLEX)
    functions = ("exp", "exp2") if t.is_complex else ("cos", "sin", "exp", "exp2", "log", "log2")
    function = w.pick(functions)
    native = w.chance(0.4)
    a = w.scalar(t)
    if t.is_complex:
        a = _scaled_complex(w, a, t)
    else:
        if function.startswith("log"):
            a = _unary(w, "abs", a, t)
        a = _clamp(w, a, t, 0.25 if function.startswith("log") else -4.0, 4.0)
    name = w.fresh("e")
    w.emit(f"{name} = {'native_' if native else ''}{function} {a.name} : {t}")
    component = t.component if t.is_complex else t
    tol = max(a.tol, NATIVE_TOLERANCE if native else tolerance(component))
    w.define(name, t, level=a.level, exact=False, tol=tol)
    return True


def _unary(w: Writer, op: str, a: Val, t: ScalarType) -> Val:
    name = w.fresh("m")
    w.emit(f"{name} = arith.{op} {a.name} : {t}")
    return w.define(name, t, level=a.level, exact=a.exact, tol=a.tol)


def _clamp(w: Writer, a: Val, t: ScalarType, lo: float, hi: float) -> Val:
    low, high = w.constant(t, lo), w.constant(t, hi)
    m1, m2 = w.fresh("m"), w.fresh("m")
    w.emit(f"{m1} = arith.max {a.name}, {low.name} : {t}")
    w.emit(f"{m2} = arith.min {m1}, {high.name} : {t}")
    return w.define(m2, t, level=a.level, exact=a.exact, tol=a.tol)


def _scaled_complex(w: Writer, a: Val, t: ScalarType) -> Val:
    """A quarter of a complex argument (exp of the generator's values then stays finite)."""
    quarter = w.constant(t, complex(0.25, 0.0))
    name = w.fresh("m")
    w.emit(f"{name} = arith.mul {a.name}, {quarter.name} : {t}")
    return w.define(name, t, level=a.level, exact=False, tol=max(a.tol, tolerance(t.component)))


@generates(I.Associated, "associated", 0.2, newest=True)
def emit_associated(w: Writer) -> bool:
    """Every argument the runner passes is an array: true."""
    tensors = [v for v in w.region.visible() if v.mem is not None or v.group is not None]
    if not tensors:
        return False
    src = w.pick(tensors)
    name = w.fresh("b")
    w.emit(f"{name} = associated {src.name} : bool")
    w.define(name, bool_, level=GROUP if src.level == GROUP else src.level)
    return True


# ---------------------------------------------------------------- foreach_tile

@generates(I.ForeachTile, "foreach_tile", 0.8, "collective", newest=True)
def emit_foreach_tile(w: Writer) -> bool:
    """Tiles of a writable view (the first tile mode a multiple of S); each lane of the subgroup
    that takes a tile writes its rows of it, each element once."""
    if w.region.depth > 0:
        return False
    targets = w.own_writable((1, 2))
    if not targets:
        return False
    dst = w.pick(targets)
    m = dst.mem
    S = w.subgroup
    tile = [S * w.pick((1, 2))] + [w.pick((1, 2, 3)) for _ in m.shape[1:]]
    zero = w.index_const(0)
    highs = [w.index_const(n) for n in m.shape]
    offsets = [w.fresh("o") for _ in m.shape]
    sizes = [w.fresh("ts") for _ in m.shape]
    w.emit(f"foreach_tile ({', '.join(offsets)}) = ({', '.join(zero.name for _ in offsets)}), "
           f"({', '.join(h.name for h in highs)}) as ({', '.join(sizes)}) <= "
           f"({', '.join(map(str, tile))}) {{")
    w.open("foreach", LANE, target=m.root)
    for o, s, n, T in zip(offsets, sizes, m.shape, tile):
        w.define(o, index, lo=0, hi=n - 1, level=SUBGROUP)
        w.define(s, index, lo=1, hi=min(n, T), level=SUBGROUP)
    lane, lid, zi, step = w.fresh("lane"), w.fresh("l"), w.fresh("z"), w.fresh("S")
    w.emit(f"{lane} = subgroup_local_id : i32")
    w.emit(f"{lid} = cast {lane} : index")
    w.emit(f"{zi} = constant 0 : index")
    w.emit(f"{step} = constant {S} : index")
    opened = 1
    column = None
    if len(m.shape) == 2:
        column = w.fresh("c")
        w.emit(f"for {column} = {zi}, {sizes[1]} {{")
        w.open("foreach", LANE)
        opened += 1
    r0, r, inside = w.fresh("r"), w.fresh("r"), w.fresh("b")
    w.emit(f"for {r0} = {zi}, {sizes[0]}, {step} {{")
    w.open("foreach", LANE)
    w.emit(f"{r} = arith.add {r0}, {lid} : index")
    w.emit(f"{inside} = cmp.lt {r}, {sizes[0]} : bool")
    w.emit(f"if {inside} {{")
    w.open("foreach", LANE)
    opened += 2
    x = w.fresh("x")
    w.emit(f"{x} = arith.add {offsets[0]}, {r} : index")
    indices = [w.define(x, index, lo=0, hi=m.shape[0] - 1, level=LANE)]
    if column is not None:
        y = w.fresh("y")
        w.emit(f"{y} = arith.add {offsets[1]}, {column} : index")
        indices.append(w.define(y, index, lo=0, hi=m.shape[1] - 1, level=LANE))
    w.region.store_at = (dst, indices, None)
    w.steps(w.rng.randint(1, MAX_STEPS // 2))
    _store_spmd(w)
    for _ in range(opened):
        w.close()
        w.emit("}")
    return True


# ---------------------------------------------------------------- coopmatrix

@generates(I.CoopMatrixApply, "coopmatrix.newest", 0.8, "collective", newest=True)
def emit_coopmatrix_newest(w: Writer) -> bool:
    """In a parallel region, subgroup 0 makes a matrix of its target's shape (load, atomic
    load or construct), changes it (apply, extract and insert, or a row/column reduction)
    and stores it (plain, atomic store or atomic update), after a prefetch perhaps."""
    targets = [v for v in w.own_writable((2,)) if v.mem.type.element in COOP_TYPES]
    if not targets or w.region.depth > 1:
        return False
    dst = w.pick(targets)
    m = dst.mem
    t = m.type.element
    rows, cols = m.shape
    S = w.subgroup
    w.emit("parallel {")
    w.open("parallel", GROUP)
    sg, zero32, first = w.fresh("sg"), w.fresh("c"), w.fresh("b")
    w.emit(f"{sg} = subgroup_linear_id : i32")
    w.emit(f"{zero32} = constant 0 : i32")
    w.emit(f"{first} = cmp.eq {sg}, {zero32} : bool")
    w.emit(f"if {first} {{")
    w.open("parallel", SUBGROUP)
    w.region.target = m.root
    zero = w.index_const(0)
    use = w.pick((MatrixUse.A, MatrixUse.B, MatrixUse.ACC))
    ct = coopmatrix_type(t, rows, cols, use)
    matrix = _coop_source(w, dst, ct, zero)
    change = w.pick(["apply", "parts"] + ["reduce"] * 3 * (rows % S == 0))  # (reduce: rare shapes)
    if change == "apply":
        matrix = _apply(w, matrix, ct)
    elif change == "parts":
        matrix = _extract_insert(w, matrix, ct, S)
    else:
        matrix = _reduce(w, matrix, ct)
    _coop_store(w, matrix, dst, zero)
    w.close()
    w.emit("}")
    w.close()
    w.emit("}")
    w.feature("coopmatrix")
    return True


def _coop_source(w: Writer, dst: Val, ct, zero: Val) -> Val:
    t = ct.component
    srcs = [v for v in w.mems(readable=True, order=(2,)) if v.mem.type.element is t
            and v.mem.shape[0] >= ct.rows and v.mem.shape[1] >= ct.cols]
    srcs.append(dst)
    src = w.pick(srcs)
    name = w.fresh("cm")
    how = w.pick(("load", "atomic_load", "construct"))
    if how == "construct":
        value = w.scalar(t, level=SUBGROUP)
        w.emit(f"{name} = cooperative_matrix_construct {value.name} : {ct}")
        return w.define(name, ct, level=SUBGROUP, exact=value.exact, tol=value.tol)
    if w.chance(0.3):
        w.emit(f"cooperative_matrix_prefetch {w.pick((0, 1, 2))}, {src.name}[{zero.name}, {zero.name}], "
               f"{ct.rows}, {ct.cols}")
    keyword = "cooperative_matrix_load" if how == "load" else \
        f"cooperative_matrix_atomic_load{_ordering(w, False)}"
    w.emit(f"{name} = {keyword} {src.name}[{zero.name}, {zero.name}] : {ct}")
    root = src.mem.root
    return w.define(name, ct, level=SUBGROUP, exact=root.exact, tol=root.tol)


def _apply(w: Writer, matrix: Val, ct) -> Val:
    """Each component v at (i, j) becomes v + i - j (v + v for complex): exact arithmetic."""
    t = ct.component
    i, j, v = w.fresh("i"), w.fresh("j"), w.fresh("v")
    name, out = w.fresh("cm"), w.fresh("w")
    w.emit(f"{name} = cooperative_matrix_apply ({i}, {j}, {v}) = {matrix.name} -> {ct} {{")
    if t.is_complex:
        w.emit(f"  {out} = arith.add {v}, {v} : {t}")
    else:
        d, dc = w.fresh("d"), w.fresh("d")
        w.emit(f"  {d} = arith.sub {i}, {j} : i32")
        w.emit(f"  {dc} = cast {d} : {t}")
        w.emit(f"  {out} = arith.add {v}, {dc} : {t}")
    w.emit(f"  yield ({out})")
    w.emit("}")
    exact = matrix.exact and exact_op(t, "add")  # (i - j is a small integer: exact in t)
    return w.define(name, ct, level=SUBGROUP, exact=exact, tol=matrix.tol)


def _extract_insert(w: Writer, matrix: Val, ct, S: int) -> Val:
    """Component k of each work-item's part, doubled, put back."""
    t = ct.component
    k = w.rng.randrange(vector_length(ct, S))
    e, d, name = w.fresh("e"), w.fresh("e"), w.fresh("cm")
    w.emit(f"{e} = cooperative_matrix_extract {matrix.name}[{k}] : {t}")
    w.emit(f"{d} = arith.add {e}, {e} : {t}")
    w.emit(f"{name} = cooperative_matrix_insert {d}, {matrix.name}[{k}] : {ct}")
    return w.define(name, ct, level=SUBGROUP, exact=matrix.exact, tol=matrix.tol)


def _reduce(w: Writer, matrix: Val, ct) -> Val:
    t = ct.component
    op = w.pick(_ops(t))
    row = w.chance(0.5)
    rt = coopmatrix_type(t, ct.rows, 1, ct.use) if row else coopmatrix_type(t, 1, ct.cols, ct.use)
    name = w.fresh("cm")
    w.emit(f"{name} = cooperative_matrix_reduce_{op}.{'row' if row else 'column'} {matrix.name} : {rt}")
    exact = matrix.exact and (op != "add" or t.is_int)
    return w.define(name, rt, level=SUBGROUP, exact=exact,
                    tol=max(matrix.tol, 0.0 if exact else tolerance(t.component if t.is_complex else t)))


def _coop_store(w: Writer, matrix: Val, dst: Val, zero: Val) -> None:
    ct = matrix.type
    t = ct.component
    how = w.pick(("store", "atomic_store", "atomic_update"))
    at = f"{dst.name}[{zero.name}, {zero.name}]"
    root = dst.mem.root
    if how == "store":
        w.emit(f"cooperative_matrix_store {matrix.name}, {at}")
        _taint(root, matrix)
    elif how == "atomic_store":
        w.emit(f"cooperative_matrix_atomic_store{_ordering(w, False)} {matrix.name}, {at}")
        _taint(root, matrix)
    else:
        op = w.pick(_ops(t))
        w.emit(f"{w.fresh('old')} = cooperative_matrix_atomic_{op}{_ordering(w, False)} "
               f"{matrix.name}, {at} : {ct}")
        _taint(root, matrix, _updated(root.exact, matrix, t, op), t)
