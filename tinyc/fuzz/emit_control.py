"""Generator entries for control flow and SPMD code: for, if, foreach, parallel,
barrier, subgroup operations and cooperative matrices."""

from __future__ import annotations

from tinyc.fuzz.facts import MAX_DEPTH, MAX_STEPS, SCALARS, tolerance
from tinyc.fuzz.generator import Writer
from tinyc.fuzz.program import GROUP, LANE, SUBGROUP, Val
from tinyc.ir.types import (
    MatrixUse, ScalarType, bool_, c32, coopmatrix_type, f16, f32, f64, i8, i16, i32, i64, index,
    promotable,
)
from tinyc.fuzz.emit_memory import _store_spmd
from tinyc.fuzz.registry import generates
from tinyc.ir import instructions as I


@generates(I.For, "for", 1.0)
def emit_for(w: Writer) -> bool:
    if w.region.depth >= MAX_DEPTH:
        return False
    t = w.pick((index, index, i32, i64, i16))
    level = GROUP if not w.spmd else w.pick((GROUP, w.region.level, LANE))
    lo = w.int_in(t, 0, 2, level=level)
    trips = 4 if w.region.loops < 2 else 2
    hi = w.int_in(t, (lo.lo or 0) + 1, (lo.hi or 0) + trips, level=level) if w.chance(0.85) else \
        w.int_in(t, 0, 3, level=level)
    step = None
    if w.chance(0.3):
        step = w.int_in(t, 1, 3, level=level)
    carried = []
    if w.chance(0.5):
        for _ in range(w.rng.randint(1, 2)):
            ct = w.pick(SCALARS)
            carried.append((w.fresh("acc"), ct, w.scalar(ct, level=level)))
    var = w.fresh("i")
    bounds = f"{lo.name}, {hi.name}" + (f", {step.name}" if step else "")
    suffix = "" if t is index else f" : {t}"
    head = f"for {var}{suffix} = {bounds}"
    results = [w.fresh("r") for _ in carried]
    if carried:
        inits = ", ".join(f"{c}={v.name}" for c, _, v in carried)
        types = ", ".join(str(ct) for _, ct, _ in carried)
        head = f"{', '.join(results)} = {head} init({inits}) -> ({types})"
    w.emit(head + " {")
    body_level = min(w.region.level, lo.level, hi.level, step.level if step else GROUP)
    w.open(w.region.kind, body_level)
    w.region.loops += 1
    w.define(var, t, lo=lo.lo, hi=max((hi.hi or 0) - 1, lo.lo or 0), level=min(lo.level, hi.level))
    for c, ct, v in carried:
        w.define(c, ct, level=v.level, exact=v.exact)
    w.steps(w.rng.randint(1, MAX_STEPS // 2))
    yielded = [w.scalar(ct, level=body_level) for _, ct, _ in carried]
    if carried:
        w.emit(f"yield ({', '.join(v.name for v in yielded)})")
    w.close()
    w.emit("}" + (" {unroll=true}" if w.chance(0.1) else ""))
    for r, (c, ct, v), y in zip(results, carried, yielded):
        w.define(r, ct, level=min(v.level, y.level, body_level), exact=v.exact and y.exact)
    return True


@generates(I.If, "if", 1.0)
def emit_if(w: Writer) -> bool:
    if w.region.depth >= MAX_DEPTH:
        return False
    cond = w.scalar(bool_, exact=True, level=GROUP if not w.spmd else LANE)
    if not cond.exact:
        return False
    kinds = [w.pick(SCALARS) for _ in range(w.rng.choice((0, 0, 1, 2)))]
    results = [w.fresh("r") for _ in kinds]
    head = f"if {cond.name}"
    if kinds:
        head = f"{', '.join(results)} = {head} -> ({', '.join(map(str, kinds))})"
    w.emit(head + " {")
    level = min(w.region.level, cond.level)
    outs = []
    for branch in range(2 if kinds or w.chance(0.5) else 1):
        if branch:
            w.emit("} else {")
        w.open(w.region.kind, level)
        w.steps(w.rng.randint(1, MAX_STEPS // 2))
        ys = [w.scalar(k, level=level) for k in kinds]
        if kinds:
            w.emit(f"yield ({', '.join(y.name for y in ys)})")
        outs.append(ys)
        w.close()
    w.emit("}")
    for k, (r, kt) in enumerate(zip(results, kinds)):
        ys = [o[k] for o in outs]
        w.define(r, kt, level=min([level] + [y.level for y in ys]), exact=all(y.exact for y in ys))
    return True


@generates(I.Foreach, "foreach", 1.0, "collective")
def emit_foreach(w: Writer) -> bool:
    """A loop over the elements of a writable view; each iteration writes its element."""
    if w.region.depth >= MAX_DEPTH - 1:
        return False
    targets = w.own_writable((1, 2))
    if not targets:
        return False
    dst = w.pick(targets)
    m = dst.mem
    lows = [w.int_in(index, 0, n - 1, level=GROUP) if w.chance(0.3) else w.index_const(0) for n in m.shape]
    highs = [w.index_const(n) for n in m.shape]
    names = [w.fresh("j") for _ in m.shape]
    t = w.pick((index, index, i32))
    suffix = "" if t is index else f" : {t}"
    if t is not index:  # bounds of the loop type
        lows = [_cast(w, v, t) for v in lows]
        highs = [_cast(w, v, t) for v in highs]
    w.emit(f"foreach ({', '.join(names)}){suffix} = ({', '.join(v.name for v in lows)}), "
           f"({', '.join(v.name for v in highs)}) {{")
    w.open("foreach", LANE, target=m.root)
    loop_vars = [w.define(n, t, lo=0, hi=s - 1, level=LANE) for n, s in zip(names, m.shape)]
    indices = loop_vars if t is index else [_cast(w, v, index) for v in loop_vars]
    w.region.store_at = (dst, indices, None)
    w.steps(w.rng.randint(1, MAX_STEPS))
    _store_spmd(w)
    w.close()
    w.emit("}")
    return True


def _cast(w: Writer, v: Val, t: ScalarType) -> Val:
    name = w.fresh("k")
    w.emit(f"{name} = cast {v.name} : {t}")
    return w.define(name, t, lo=v.lo, hi=v.hi, level=v.level, exact=v.exact)


@generates(I.Parallel, "parallel", 1.0, "collective")
def emit_parallel(w: Writer) -> bool:
    """Every work-item runs the region; work-item k writes element k of a view (if any)."""
    if w.region.depth >= MAX_DEPTH - 1:
        return False
    targets = w.own_writable((1,))
    coop = w.own_writable((2,))
    w.emit("parallel {")
    w.open("parallel", GROUP)
    mode = w.pick(["lanes"] * bool(targets) + ["coop"] * bool(coop) + ["read"])
    sg = w.fresh("sg")
    w.emit(f"{sg} = builtin.subgroup_id : i32")
    known = not getattr(w, "unknown_geometry", False)
    nsg = (w.wg[0] // w.subgroup) * w.wg[1]
    w.define(sg, i32, lo=0, hi=nsg - 1 if known else 63, level=SUBGROUP)
    if mode == "lanes":
        dst = w.pick(targets)
        lane, size, t1, t2, lin = (w.fresh(h) for h in ("lane", "sgs", "t", "t", "lin"))
        w.emit(f"{lane} = builtin.subgroup_local_id : i32")
        w.emit(f"{size} = builtin.subgroup_size : i32")
        w.emit(f"{t1} = arith.mul {sg}, {size} : i32")
        w.emit(f"{t2} = arith.add {t1}, {lane} : i32")
        w.emit(f"{lin} = cast {t2} : index")
        items = w.wg[0] * w.wg[1]
        linv = w.define(lin, index, lo=0, hi=items - 1 if known else 4095, level=LANE)
        n = dst.mem.shape[0]
        guard = None if known and items <= n else (linv, w.index_const(n))
        w.region.target = dst.mem.root
        w.region.store_at = (dst, [linv], guard)
        w.steps(w.rng.randint(1, MAX_STEPS))
        _store_spmd(w)
    elif mode == "coop":
        dst = w.pick(coop)
        w.region.target = dst.mem.root
        zero = w.constant(i32, 0)
        first = w.fresh("b")
        w.emit(f"{first} = cmp.eq {sg}, {zero.name} : bool")
        w.emit(f"if {first} {{")
        w.open("parallel", SUBGROUP)
        w.region.coop_target = dst
        w.steps(w.rng.randint(1, MAX_STEPS // 2))
        _coop_chain(w, dst)
        w.close()
        w.emit("}")
    else:
        w.steps(w.rng.randint(1, MAX_STEPS // 2))
    w.close()
    w.emit("}")
    w.feature("parallel")
    return True


@generates(I.Barrier, "barrier", 0.3)
def emit_barrier(w: Writer) -> bool:
    if w.spmd and not (w.in_parallel() and w.region.level == GROUP):
        return False
    w.emit(w.pick(("barrier", "barrier.local", "barrier.global")))
    return True


def _coop_chain(w: Writer, dst: Val) -> None:
    """load (A, B, C) -> mul_add -> (scale) -> store into dst, all sizes in bounds or checked."""
    m = dst.mem
    rows, cols = m.shape
    if w.newest and rows % w.subgroup:  # the newest language: rows of A, C, D multiples of S
        return
    k = w.pick((1, 2, 4))
    tc = m.type.element
    if tc not in (f32, f64, f16, i32, c32, i64):
        tc = None
    if tc is None:
        return
    ta = {f32: f16, f64: f32, f16: f16, i32: i8, c32: f32, i64: i16}[tc] if w.chance(0.5) else tc
    ta = ta if promotable(ta, tc) else tc
    a = _coop_load(w, ta, rows, k, MatrixUse.A, dst)
    b = _coop_load(w, ta, k, cols, MatrixUse.B, dst) if a is not None else None
    if a is None or b is None:
        return
    c = _coop_load_from(w, dst, tc, rows, cols, MatrixUse.ACC)
    d = w.fresh("cm")
    dt = coopmatrix_type(tc, rows, cols, MatrixUse.ACC)
    w.emit(f"{d} = cooperative_matrix_mul_add {a.name}, {b.name}, {c.name} : {dt}")
    out = w.define(d, dt, level=SUBGROUP, exact=False)
    if w.chance(0.5):
        s = w.scalar(tc, level=SUBGROUP)
        e = w.fresh("cm")
        w.emit(f"{e} = cooperative_matrix_scale {s.name}, {out.name} : {dt}")
        out = w.define(e, dt, level=SUBGROUP, exact=False)
    if w.chance(0.3):
        e = w.fresh("cm")
        w.emit(f"{e} = arith.add {out.name}, {c.name} : {dt}")
        out = w.define(e, dt, level=SUBGROUP, exact=False)
    zero = w.index_const(0)
    flag = w.pick(("", "", ".atomic")) if tc.is_int or tc in (f32, f64) else ""
    w.emit(f"cooperative_matrix_store{flag} {out.name}, {dst.name}[{zero.name}, {zero.name}]")
    m.root.exact = False
    m.root.tol = max(m.root.tol, tolerance(ta), tolerance(tc), a.tol, b.tol)
    w.feature("coopmatrix")


def _coop_load(w: Writer, t: ScalarType, rows: int, cols: int, use: MatrixUse, dst: Val) -> Val | None:
    """From readable memory, or from the target itself (only this subgroup touches it)."""
    srcs = [v for v in w.mems(readable=True, order=(2,)) if v.mem.type.element is t]
    if dst.mem.type.element is t:
        srcs.append(dst)
    if not srcs:
        return None
    src = w.pick(srcs)
    return _coop_load_from(w, src, t, rows, cols, use)


def _coop_load_from(w: Writer, src: Val, t: ScalarType, rows: int, cols: int, use: MatrixUse) -> Val:
    m = src.mem
    transpose = w.chance(0.3)
    r_mode, c_mode = (1, 0) if transpose else (0, 1)
    fits_r, fits_c = m.shape[r_mode] >= rows, m.shape[c_mode] >= cols
    checked = {(True, True): "", (False, True): ".rows_checked", (True, False): ".cols_checked",
               (False, False): ".both_checked"}[(fits_r, fits_c)]
    x = w.int_in(index, 0, max(m.shape[0] - (cols if transpose else rows), 0), level=SUBGROUP) \
        if not checked else w.index_const(0)
    y = w.int_in(index, 0, max(m.shape[1] - (rows if transpose else cols), 0), level=SUBGROUP) \
        if not checked else w.index_const(0)
    ct = coopmatrix_type(t, rows, cols, use)
    name = w.fresh("cm")
    w.emit(f"{name} = cooperative_matrix_load{'.t' if transpose else '.n'}{checked} "
           f"{src.name}[{x.name}, {y.name}] : {ct}")
    return w.define(name, ct, level=SUBGROUP, exact=False)
