"""The generator's table: one entry per instruction kind.

An entry names the instruction, says where it may appear (`collective`,
`spmd` or `parallel` regions, or `any`) and how often, and writes one
instance with the `Writer`'s helpers, returning False when nothing suitable
is in scope (the writer then tries another entry). A new instruction plugs
in with one `Entry(...)` line in `TABLE` and its emitter function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tinyc.fuzz.generator import (
    COMPLEX, INTEGERS, MAX_DEPTH, MAX_STEPS, REALS, SCALARS, Writer, exact_op, int_limits, tolerance,
)
from tinyc.fuzz.program import GROUP, LANE, SUBGROUP, Mem, Root, Val
from tinyc.ir.types import (
    DYNAMIC, AddressSpace, CoopMatrixType, MatrixUse, ScalarType, bf16, bool_, c32, c64,
    coopmatrix_type, f16, f32, f64, i8, i16, i32, i64, index, memref_type, promotable, promote,
)


COLLECTIVES = frozenset({"gemm", "gemv", "ger", "axpby", "sum", "cumsum", "hadamard_product"})
MAX_COLLECTIVES = 3
"""Per kernel: lowered collectives dominate the device compiler's time (seconds for a
kernel with several gemms), so a campaign runs more, smaller programs."""


@dataclass
class Entry:
    name: str
    emit: Callable[[Writer], bool | None]
    weight: float = 1.0
    where: str = "any"  # "any", "collective", "spmd", "parallel"
    level: int = LANE  # the least uniform control flow it may appear in

    def allowed(self, w: Writer) -> bool:
        if w.region.level < self.level:
            return False
        if self.name in COLLECTIVES and w.collectives >= MAX_COLLECTIVES:
            return False
        if self.where == "collective":
            return not w.spmd
        if self.where == "spmd":
            return w.spmd
        if self.where == "parallel":
            return w.in_parallel()
        return True


# ---------------------------------------------------------------- scalar values

def arith_value(w: Writer, t: ScalarType, *, level: int = LANE, exact: bool = False,
                depth: int = 1) -> Val | None:
    """A binary or unary arithmetic result of type t, free of undefined behaviour."""
    rng = w.rng
    if t.is_int:
        ops = ["add", "sub", "mul", "div", "rem", "min", "max", "shl", "shr", "and", "or", "xor",
               "neg", "not", "abs"]
    elif t.is_complex:
        ops = ["add", "sub", "mul", "div", "neg", "conj"]
    else:
        ops = ["add", "sub", "mul", "div", "rem", "min", "max", "neg", "abs"]
    if exact:
        ops = [op for op in ops if exact_op(t, op)]
    op = rng.choice(ops)
    a = w.scalar(t, level=level, exact=exact, depth=depth)
    name = w.fresh("v")
    if op in ("neg", "not", "abs", "conj"):
        if t.is_int and op in ("neg", "abs"):  # -MIN overflows: keep a away from it
            a = _clamped_int(w, a, t, level)
        w.emit(f"{name} = arith.{op} {a.name} : {t}")
        lo = hi = None
        if t.is_int and a.lo is not None and op == "neg":
            lo, hi = -a.hi, -a.lo
        return w.define(name, t, level=a.level, exact=a.exact, lo=lo, hi=hi, tol=a.tol)
    b = w.scalar(t, level=level, exact=exact, depth=depth)
    lo = hi = None
    if t.is_int and op in ("div", "rem"):
        b = _positive_small(w, b, t, level)  # a divisor in 1..8: no division by 0, no MIN / -1
    elif t.is_int and op in ("shl", "shr"):
        mask = w.constant(t, {"i8": 7, "i16": 15, "i32": 31}.get(t.name, 63))
        masked = w.fresh("m")
        w.emit(f"{masked} = arith.and {b.name}, {mask.name} : {t}")
        b = w.define(masked, t, lo=0, hi=int(mask.lo), level=b.level)
    elif t.is_float and op in ("div", "rem"):
        b = _away_from_zero(w, b, t, level)
    elif t.is_complex and op == "div":
        b = _away_from_zero_complex(w, b, t, level)
    if t.is_int and op == "add" and None not in (a.lo, a.hi, b.lo, b.hi):
        lo, hi = a.lo + b.lo, a.hi + b.hi
        low, high = int_limits(t)
        if not (low <= lo and hi <= high):
            lo = hi = None
    elif t.is_int and op == "rem" and a.lo is not None and a.lo >= 0:
        lo, hi = 0, b.hi - 1
    elif t.is_int and op in ("min", "max") and None not in (a.lo, a.hi, b.lo, b.hi):
        f = min if op == "min" else max
        lo, hi = f(a.lo, b.lo), f(a.hi, b.hi)
    w.emit(f"{name} = arith.{op} {a.name}, {b.name} : {t}")
    w.feature(f"arith.{op}")
    result_exact = a.exact and b.exact and exact_op(t, op)
    tol = max(a.tol, b.tol, 0.0 if exact_op(t, op) else tolerance(t.component if t.is_complex else t))
    return w.define(name, t, level=min(a.level, b.level), exact=result_exact, lo=lo, hi=hi, tol=tol)


def _clamped_int(w: Writer, a: Val, t: ScalarType, level: int) -> Val:
    low, _ = int_limits(t)
    if a.lo is not None and a.lo > low:
        return a
    floor = w.constant(t, low + 1)
    name = w.fresh("m")
    w.emit(f"{name} = arith.max {a.name}, {floor.name} : {t}")
    return w.define(name, t, level=a.level, exact=a.exact)


def _positive_small(w: Writer, b: Val, t: ScalarType, level: int) -> Val:
    """(b and 7) + 1: in 1..8 whatever b is."""
    if b.lo is not None and b.lo >= 1 and b.hi is not None and b.hi <= 64:
        return b
    seven, one = w.constant(t, 7), w.constant(t, 1)
    m, s = w.fresh("m"), w.fresh("d")
    w.emit(f"{m} = arith.and {b.name}, {seven.name} : {t}")
    w.emit(f"{s} = arith.add {m}, {one.name} : {t}")
    return w.define(s, t, lo=1, hi=8, level=b.level, exact=b.exact)


def _away_from_zero(w: Writer, b: Val, t: ScalarType, level: int) -> Val:
    """|b| + 1 (NaN stays NaN): never zero, keeps quotients small."""
    one = w.constant(t, 1.0)
    a, s = w.fresh("m"), w.fresh("d")
    w.emit(f"{a} = arith.abs {b.name} : {t}")
    w.emit(f"{s} = arith.add {a}, {one.name} : {t}")
    return w.define(s, t, level=b.level, exact=b.exact)


def _away_from_zero_complex(w: Writer, b: Val, t: ScalarType, level: int) -> Val:
    two = w.constant(t, complex(2.0, 0.5))
    s = w.fresh("d")
    w.emit(f"{s} = arith.add {b.name}, {two.name} : {t}")
    return w.define(s, t, level=b.level, exact=False)


def emit_constant(w: Writer) -> bool:
    w.constant(w.pick(SCALARS + (bool_,)))
    return True


def emit_arith(w: Writer) -> bool:
    t = w.pick(SCALARS)
    return arith_value(w, t, level=LANE, exact=w.chance(0.3)) is not None


def emit_logic(w: Writer) -> bool:
    """and / or / xor / not on bools."""
    a = w.scalar(bool_)
    name = w.fresh("b")
    if w.chance(0.3):
        w.emit(f"{name} = arith.not {a.name} : bool")
        w.define(name, bool_, level=a.level, exact=a.exact)
        return True
    b = w.scalar(bool_)
    w.emit(f"{name} = arith.{w.pick(('and', 'or', 'xor'))} {a.name}, {b.name} : bool")
    w.define(name, bool_, level=min(a.level, b.level), exact=a.exact and b.exact)
    return True


def emit_complex_parts(w: Writer) -> bool:
    t = w.pick(COMPLEX)
    a = w.scalar(t)
    op = w.pick(("re", "im", "abs"))
    name = w.fresh("v")
    w.emit(f"{name} = arith.{op} {a.name} : {t.component}")
    w.define(name, t.component, level=a.level, exact=a.exact and op != "abs")
    return True


def emit_cast(w: Writer) -> bool:
    dst = w.pick(SCALARS)
    src_types = [t for t in SCALARS if not (t.is_complex and not dst.is_complex)]
    src = w.pick(src_types)
    # float -> int keeps only exact values: an inexact one may truncate differently
    a = w.scalar(src, exact=dst.is_int and not src.is_int)
    exact = a.exact
    if dst.is_int and not src.is_int:  # float -> int: clamp first (NaN and overflow are UB)
        limit = {"i8": 100.0, "i16": 1000.0}.get(dst.name, 10000.0)
        if src in (bf16, f16):
            limit = min(limit, 1000.0)
        lo, hi = w.constant(src, -limit), w.constant(src, limit)
        m1, m2 = w.fresh("m"), w.fresh("m")
        w.emit(f"{m1} = arith.max {a.name}, {lo.name} : {src}")
        w.emit(f"{m2} = arith.min {m1}, {hi.name} : {src}")
        a = w.define(m2, src, level=a.level, exact=a.exact)
        exact = a.exact
    name = w.fresh("v")
    w.emit(f"{name} = cast {a.name} : {dst}")
    lo = hi = None
    if dst.is_int and src.is_int and a.lo is not None:
        low, high = int_limits(dst)
        if low <= a.lo and a.hi <= high:
            lo, hi = a.lo, a.hi
    w.define(name, dst, level=a.level, exact=exact, lo=lo, hi=hi,
             tol=max(a.tol, 0.0 if exact else tolerance(dst.component if dst.is_complex else dst)))
    return True


def emit_cmp(w: Writer) -> bool:
    w.compare()
    return True


def emit_math(w: Writer) -> bool:
    t = w.pick(REALS + COMPLEX)
    a = w.scalar(t)
    # keep the argument small so exp stays finite: min(max(a, -4), 4) for reals
    if not t.is_complex:
        lo, hi = w.constant(t, -4.0), w.constant(t, 4.0)
        m1, m2 = w.fresh("m"), w.fresh("m")
        w.emit(f"{m1} = arith.max {a.name}, {lo.name} : {t}")
        w.emit(f"{m2} = arith.min {m1}, {hi.name} : {t}")
        a = w.define(m2, t, level=a.level, exact=a.exact)
    name = w.fresh("e")
    w.emit(f"{name} = math.{w.pick(('exp', 'native_exp'))} {a.name} : {t}")
    w.define(name, t, level=a.level, exact=False)
    return True


def emit_builtin(w: Writer) -> bool:
    choices = [("group_id", index), ("group_size", index), ("num_subgroups", i32), ("subgroup_size", i32)]
    if w.in_parallel():
        choices += [("subgroup_id", i32), ("subgroup_local_id", i32)] * 2
    which, t = w.pick(choices)
    name = w.fresh("id")
    w.emit(f"{name} = builtin.{which} : {t}")
    known = not getattr(w, "unknown_geometry", False)
    x, y = w.wg
    facts = {"group_id": (0, w.batch - 1, GROUP), "group_size": (w.batch, w.batch, GROUP),
             "num_subgroups": ((x // w.subgroup) * y,) * 2 + (GROUP,) if known else (1, 64, GROUP),
             "subgroup_size": (w.subgroup, w.subgroup, GROUP) if known else (4, 64, GROUP),
             "subgroup_id": (0, (x // w.subgroup) * y - 1, SUBGROUP) if known else (0, 63, SUBGROUP),
             "subgroup_local_id": (0, w.subgroup - 1, LANE) if known else (0, 63, LANE)}
    lo, hi, level = facts[which]
    w.define(name, t, lo=lo, hi=hi, level=level)
    return True


def emit_load(w: Writer) -> bool:
    t = w.pick(SCALARS)
    return w.load_scalar(t) is not None


def emit_size(w: Writer) -> bool:
    mems = [v for v in w.mems() if v.mem.order > 0]
    if not mems:
        return False
    src = w.pick(mems)
    k = w.rng.randrange(src.mem.order)
    name = w.fresh("n")
    w.emit(f"{name} = size {src.name}[{k}] : index")
    n = src.mem.shape[k]
    w.define(name, index, lo=n, hi=n, level=src.level)
    return True


# ---------------------------------------------------------------- memory

def emit_store(w: Writer) -> bool:
    """A store this region may do without a race (see module docs of program.py)."""
    if w.spmd:
        return _store_spmd(w)
    targets = [v for v in w.mems(writable=True) if not v.mem.root.shared and 0 not in v.mem.shape]
    shared = [v for v in w.mems(writable=True) if v.mem.root.shared]
    if shared and (not targets or w.chance(0.3)):
        return _store_atomic_add(w, w.pick(shared))
    if not targets:
        return False
    dst = w.pick(targets)
    m = dst.mem
    value = w.scalar(m.type.element, level=GROUP)
    indices = [w.index_in(0, n - 1, level=GROUP) for n in m.shape]
    flag = w.pick(("", "", ".atomic"))
    w.emit(f"store{flag} {value.name}, {dst.name}[{', '.join(i.name for i in indices)}]")
    _taint(m.root, value)
    w.feature("store" + flag)
    return True


def _taint(root: Root, value: Val, exact: bool = True, element: ScalarType | None = None) -> None:
    """What a store of `value` does to the exactness of `root` (atomic adds of floats are
    unordered: `exact=False`)."""
    root.exact = root.exact and value.exact and exact
    root.tol = max(root.tol, value.tol, 0.0 if exact or element is None else tolerance(element))


def _store_atomic_add(w: Writer, dst: Val) -> bool:
    m = dst.mem
    if 0 in m.shape:
        return False
    value = w.scalar(m.type.element)
    indices = [w.index_in(0, n - 1) for n in m.shape]
    w.emit(f"store.atomic_add {value.name}, {dst.name}[{', '.join(i.name for i in indices)}]")
    _taint(m.root, value, exact=m.type.element.is_int, element=m.type.element)
    w.feature("store.atomic_add")
    return True


def _store_spmd(w: Writer) -> bool:
    shared = [v for v in w.mems(writable=True) if v.mem.root.shared]
    at = w.region.store_at
    if shared and (at is None or w.chance(0.25)):
        return _store_atomic_add(w, w.pick(shared))
    if at is None:
        return False
    view, indices, guard = at
    m = view.mem
    value = w.scalar(m.type.element)
    flag = w.pick(("", "", ".atomic"))
    store = f"store{flag} {value.name}, {view.name}[{', '.join(i.name for i in indices)}]"
    if guard is not None:  # lin < n
        ok = w.fresh("b")
        lin, n = guard
        w.emit(f"{ok} = cmp.lt {lin.name}, {n.name} : bool")
        w.emit(f"if {ok} {{")
        w.emit(f"  {store}")
        w.emit("}")
    else:
        w.emit(store)
    _taint(m.root, value)
    w.feature("store" + flag)
    return True


def emit_subview(w: Writer) -> bool:
    mems = [v for v in w.mems() if v.mem.order > 0 and 0 not in v.mem.shape]
    if not mems:
        return False
    src = w.pick(mems)
    m = src.mem
    sizes = [None if (m.order > 1 and w.chance(0.3)) else w.rng.randint(1, n) for n in m.shape]
    level = GROUP if not w.spmd or w.chance(0.5) else LANE
    return w.subview(src, sizes, level=level) is not None


def emit_expand(w: Writer) -> bool:
    """Split a mode n = a·b into (a, b)."""
    cands = []
    for v in w.mems():
        for k, n in enumerate(v.mem.shape):
            factors = [a for a in range(2, n) if n % a == 0]
            if factors and v.mem.order < 4:
                cands.append((v, k, factors))
    if not cands:
        return False
    src, k, factors = w.pick(cands)
    m = src.mem
    a = w.pick(factors)
    b = m.shape[k] // a
    parts, type_parts = [], []
    for p in (a, b):
        if w.chance(0.25) and m.type.shape[k] != DYNAMIC:
            parts.append(w.index_const(p).name)
            type_parts.append(DYNAMIC)
        elif w.chance(0.2) and m.type.shape[k] == DYNAMIC:
            parts.append(w.index_const(p).name)
            type_parts.append(DYNAMIC)
        else:
            parts.append(str(p))
            type_parts.append(p)
    stride0 = m.type.stride[k]
    strides_t = [stride0, DYNAMIC if DYNAMIC in (stride0, type_parts[0]) else stride0 * type_parts[0]]
    shape_t = m.type.shape[:k] + tuple(type_parts) + m.type.shape[k + 1:]
    stride_t = m.type.stride[:k] + tuple(strides_t) + m.type.stride[k + 1:]
    result = memref_type(m.type.element, shape_t, stride_t, m.type.space)
    name = w.fresh("e")
    w.emit(f"{name} = expand {src.name}[{k} -> {' x '.join(parts)}] : {result}")
    conc_shape = m.shape[:k] + (a, b) + m.shape[k + 1:]
    conc_strides = m.strides[:k] + (m.strides[k], m.strides[k] * a) + m.strides[k + 1:]
    w.define(name, result, mem=Mem(result, conc_shape, conc_strides, m.root, m.writable, m.readable),
             level=src.level)
    return True


def emit_fuse(w: Writer) -> bool:
    """Merge modes first..last whose concrete layout is contiguous."""
    cands = []
    for v in w.mems():
        m = v.mem
        for first in range(m.order - 1):
            last = first
            while last + 1 < m.order and m.strides[last + 1] == m.strides[last] * m.shape[last]:
                last += 1
                cands.append((v, first, last))
    if not cands:
        return False
    src, first, last = w.pick(cands)
    m = src.mem
    sizes = m.type.shape[first:last + 1]
    fused = DYNAMIC if DYNAMIC in sizes else _product(sizes)
    for k in range(first, last):  # the type must not contradict the fuse where it is static
        s, n, s1 = m.type.stride[k], m.type.shape[k], m.type.stride[k + 1]
        if DYNAMIC not in (s, n, s1) and s * n != s1:
            return False
    shape_t = m.type.shape[:first] + (fused,) + m.type.shape[last + 1:]
    stride_t = m.type.stride[:first + 1] + m.type.stride[last + 1:]
    result = memref_type(m.type.element, shape_t, stride_t, m.type.space)
    name = w.fresh("f")
    w.emit(f"{name} = fuse {src.name}[{first}, {last}] : {result}")
    conc_shape = m.shape[:first] + (_product(m.shape[first:last + 1]),) + m.shape[last + 1:]
    conc_strides = m.strides[:first + 1] + m.strides[last + 1:]
    w.define(name, result, mem=Mem(result, conc_shape, conc_strides, m.root, m.writable, m.readable),
             level=src.level)
    return True


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def emit_alloca(w: Writer) -> bool:
    """Local scratch memory, filled right away (reading undefined memory is UB)."""
    t = w.pick((f32, f64, i32, f16, c32, i8))
    order = w.pick((1, 2))
    shape = tuple(w.pick((2, 4, 8)) for _ in range(order))
    mt = memref_type(t, shape, None, AddressSpace.LOCAL)
    value = w.scalar(t, level=GROUP)  # before the alloca exists: it must not read it
    zero = w.index_const(0)
    bounds = [w.index_const(n) for n in shape]
    name = w.fresh("t")
    w.emit(f"{name} = alloca : {mt}")
    root = Root(name, local=True)
    strides = (1,) if order == 1 else (1, shape[0])
    val = w.define(name, mt, mem=Mem(mt, shape, strides, root, True, True))
    _fill(w, val, value, zero, bounds)
    w.feature("alloca")
    return True


def _fill(w: Writer, dst: Val, value: Val, zero: Val, bounds: list[Val]) -> None:
    """Write every element: a foreach over its shape storing a uniform value."""
    m = dst.mem
    names = [w.fresh("i") for _ in m.shape]
    w.emit(f"foreach ({', '.join(names)}) = ({', '.join(zero.name for _ in names)}), "
           f"({', '.join(b.name for b in bounds)}) {{")
    w.emit(f"  store {value.name}, {dst.name}[{', '.join(names)}]")
    w.emit("}")
    m.root.exact, m.root.tol = value.exact, value.tol


def emit_lifetime_stop(w: Writer) -> bool:
    local = [v for v in w.region.values if v.mem is not None and v.mem.root.local
             and v.name == v.mem.root.name and not v.mem.root.dead]
    if not local:
        return False
    v = w.pick(local)
    w.emit(f"lifetime_stop {v.name}")
    v.mem.root.dead = True
    return True


# ---------------------------------------------------------------- control flow

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


def emit_foreach(w: Writer) -> bool:
    """A loop over the elements of a writable view; each iteration writes its element."""
    if w.region.depth >= MAX_DEPTH - 1:
        return False
    targets = [v for v in w.mems(writable=True, order=(1, 2)) if not v.mem.root.shared
               and 0 not in v.mem.shape]
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


def emit_parallel(w: Writer) -> bool:
    """Every work-item runs the region; work-item k writes element k of a view (if any)."""
    if w.region.depth >= MAX_DEPTH - 1:
        return False
    targets = [v for v in w.mems(writable=True, order=(1,)) if not v.mem.root.shared
               and 0 not in v.mem.shape]
    coop = [v for v in w.mems(writable=True, order=(2,)) if not v.mem.root.shared
            and 0 not in v.mem.shape]
    w.emit("parallel {")
    w.open("parallel", GROUP)
    mode = w.pick(["lanes"] * bool(targets) + ["coop"] * bool(coop) + ["read"])
    sg = w.fresh("sg")
    w.emit(f"{sg} = builtin.subgroup_id : i32")
    known = not getattr(w, "unknown_geometry", False)
    nsg = (w.wg[0] // w.subgroup) * w.wg[1]
    sgv = w.define(sg, i32, lo=0, hi=nsg - 1 if known else 63, level=SUBGROUP)
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


def emit_barrier(w: Writer) -> bool:
    if w.spmd and not (w.in_parallel() and w.region.level == GROUP):
        return False
    w.emit(w.pick(("barrier", "barrier.local", "barrier.global")))
    return True


# ---------------------------------------------------------------- subgroup operations

def emit_subgroup_op(w: Writer) -> bool:
    t = w.pick((i32, i64, f32, f64, f16, index, i8))
    a = w.scalar(t)
    name = w.fresh("g")
    op, mode = w.pick(("add", "min", "max")), w.pick(("reduce", "inclusive_scan", "exclusive_scan"))
    w.emit(f"{name} = subgroup_{op}.{mode} {a.name} : {t}")
    exact = a.exact and (t.is_int or op != "add")
    w.define(name, t, level=SUBGROUP if mode == "reduce" else LANE, exact=exact)
    w.feature(f"subgroup_{op}.{mode}")
    return True


def emit_broadcast(w: Writer) -> bool:
    t = w.pick(SCALARS)
    a = w.scalar(t)
    lane = w.int_in(i32, 0, min(w.subgroup, 4) - 1, level=SUBGROUP)
    name = w.fresh("g")
    w.emit(f"{name} = subgroup_broadcast {a.name}, {lane.name} : {t}")
    w.define(name, t, level=SUBGROUP, exact=a.exact)
    return True


# ---------------------------------------------------------------- coopmatrix

def _coop_chain(w: Writer, dst: Val) -> None:
    """load (A, B, C) -> mul_add -> (scale) -> store into dst, all sizes in bounds or checked."""
    m = dst.mem
    rows, cols = m.shape
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


# ---------------------------------------------------------------- collectives

def _output(w: Writer, order: tuple[int, ...], *, shared_ok: bool) -> Val | None:
    outs = [v for v in w.mems(writable=True) if 0 not in v.mem.shape
            and (shared_ok or not v.mem.root.shared) and v.mem.order >= min(order)]
    if not outs:
        return None
    return w.pick(outs)


def _input_view(w: Writer, element_ok, shape: tuple[int, ...], avoid: Root) -> Val | None:
    """A readable view of exactly `shape` whose element type passes `element_ok`."""
    srcs = [v for v in w.mems(readable=True) if v.mem.root is not avoid and element_ok(v.mem.type.element)
            and v.mem.order >= len(shape)]
    w.rng.shuffle(srcs)
    for src in srcs:
        if src.mem.shape == shape:
            return src
        if len(shape) == 0:
            return w.scalar_view(src)
        if len(shape) == 1 and max(src.mem.shape, default=0) >= shape[0]:
            return w.vector_view(src, shape[0])
        if len(shape) == 2 and src.mem.order >= 2:
            for _ in range(3):
                view = _try_matrix(w, src, shape)
                if view is not None:
                    return view
    return None


def _try_matrix(w: Writer, src: Val, shape: tuple[int, int]) -> Val | None:
    m = src.mem
    pairs = [(a, b) for a in range(m.order) for b in range(a + 1, m.order)
             if m.shape[a] >= shape[0] and m.shape[b] >= shape[1]]
    if not pairs:
        return None
    a, b = w.pick(pairs)
    sizes: list[int | None] = [None] * m.order
    sizes[a], sizes[b] = shape
    return w.subview(src, sizes)


def _shaped_output(w: Writer, orders: tuple[int, ...], shared_ok: bool) -> Val | None:
    out = _output(w, orders, shared_ok=shared_ok)
    if out is None:
        return None
    m = out.mem
    order = w.pick([o for o in orders if o <= m.order])
    if m.order == order and w.chance(0.5):
        return out
    if order == 0:
        return w.scalar_view(out) if not m.root.shared else None
    if order == 1:
        return w.vector_view(out, w.rng.randint(1, max(m.shape)))
    return _try_matrix(w, out, (w.rng.randint(1, m.shape[0]), w.rng.randint(1, m.shape[-1])))


def _scalars(w: Writer, out: Val, input_types: list[ScalarType], atomic: bool) -> tuple[Val, Val]:
    """alpha ⪯ promote(inputs), beta ⪯ element(out); beta constant 0 or 1 for .atomic."""
    common = input_types[0]
    for t in input_types[1:]:
        common = promote(common, t) or common
    alpha_types = [t for t in SCALARS if promotable(t, common)]
    alpha = w.scalar(w.pick(alpha_types), level=GROUP)
    c = out.mem.type.element
    if atomic:
        beta = w.constant(c, 1 if out.mem.root.shared or w.chance(0.5) else 0)
    else:
        beta = w.scalar(w.pick([t for t in SCALARS if promotable(t, c)]), level=GROUP)
    return alpha, beta


def _blas(w: Writer, out: Val, text: str, inputs: list[Val], atomic: bool) -> None:
    alpha, beta = _scalars(w, out, [v.mem.type.element for v in inputs], atomic)
    w.emit(text.format(alpha=alpha.name, beta=beta.name, out=out.name,
                       atomic=".atomic" if atomic else "", *[v.name for v in inputs]))
    root = out.mem.root
    root.exact = root.exact and out.mem.type.element.is_int and all(
        v.mem.root.exact for v in inputs) and alpha.exact and beta.exact
    if not root.exact:
        root.tol = max([root.tol, tolerance(out.mem.type.element), alpha.tol, beta.tol]
                       + [max(v.mem.root.tol, tolerance(v.mem.type.element)) for v in inputs])


def _atomic(w: Writer, out: Val) -> bool:
    return out.mem.root.shared or w.chance(0.2)


def _promotes_to(t: ScalarType):
    return lambda e: promotable(e, t)


def emit_gemm(w: Writer) -> bool:
    out = _shaped_output(w, (2,), False)
    if out is None or out.mem.order != 2:
        return False
    M, N = out.mem.shape
    K = w.rng.randint(1, 8)
    ta, tb = w.chance(0.4), w.chance(0.4)
    c = out.mem.type.element
    A = _input_view(w, _promotes_to(c), (K, M) if ta else (M, K), out.mem.root)
    if A is None:
        return False
    B = _input_view(w, lambda e: promotable(e, c) and promote(e, A.mem.type.element) is not None,
                    (N, K) if tb else (K, N), out.mem.root)
    if B is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, f"gemm{'.t' if ta else '.n'}{'.t' if tb else '.n'}{{atomic}} {{alpha}}, {{0}}, {{1}}, "
                  f"{{beta}}, {{out}}", [A, B], atomic)
    return True


def emit_gemv(w: Writer) -> bool:
    out = _shaped_output(w, (1,), True)
    if out is None or out.mem.order != 1:
        return False
    (M,) = out.mem.shape
    K = w.rng.randint(1, 8)
    t = w.chance(0.4)
    c = out.mem.type.element
    A = _input_view(w, _promotes_to(c), (K, M) if t else (M, K), out.mem.root)
    if A is None:
        return False
    x = _input_view(w, lambda e: promotable(e, c) and promote(e, A.mem.type.element) is not None,
                    (K,), out.mem.root)
    if x is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, f"gemv{'.t' if t else '.n'}{{atomic}} {{alpha}}, {{0}}, {{1}}, {{beta}}, {{out}}",
          [A, x], atomic)
    return True


def emit_ger(w: Writer) -> bool:
    out = _shaped_output(w, (2,), False)
    if out is None or out.mem.order != 2:
        return False
    M, N = out.mem.shape
    c = out.mem.type.element
    a = _input_view(w, _promotes_to(c), (M,), out.mem.root)
    if a is None:
        return False
    b = _input_view(w, lambda e: promotable(e, c) and promote(e, a.mem.type.element) is not None,
                    (N,), out.mem.root)
    if b is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, "ger{atomic} {alpha}, {0}, {1}, {beta}, {out}", [a, b], atomic)
    return True


def emit_axpby(w: Writer) -> bool:
    out = _shaped_output(w, (0, 1, 2), True)
    if out is None:
        return False
    shape = out.mem.shape
    t = w.chance(0.4) and len(shape) == 2
    A = _input_view(w, _promotes_to(out.mem.type.element), shape[::-1] if t else shape, out.mem.root)
    if A is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, f"axpby{'.t' if t else '.n'}{{atomic}} {{alpha}}, {{0}}, {{beta}}, {{out}}", [A], atomic)
    return True


def emit_sum(w: Writer) -> bool:
    out = _shaped_output(w, (0, 1), True)
    if out is None or out.mem.order > 1:
        return False
    t = w.chance(0.4)
    if out.mem.order == 0:
        shape = (w.rng.randint(1, 16),)
    else:
        K = w.rng.randint(1, 8)
        shape = (K, out.mem.shape[0]) if t else (out.mem.shape[0], K)
    A = _input_view(w, _promotes_to(out.mem.type.element), shape, out.mem.root)
    if A is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, f"sum{'.t' if t else '.n'}{{atomic}} {{alpha}}, {{0}}, {{beta}}, {{out}}", [A], atomic)
    return True


def emit_cumsum(w: Writer) -> bool:
    out = _shaped_output(w, (1, 2), True)
    if out is None or out.mem.order < 1:
        return False
    A = _input_view(w, _promotes_to(out.mem.type.element), out.mem.shape, out.mem.root)
    if A is None:
        return False
    mode = w.rng.randrange(out.mem.order)
    atomic = _atomic(w, out)
    _blas(w, out, f"cumsum{{atomic}} {{alpha}}, {{0}}, {mode}, {{beta}}, {{out}}", [A], atomic)
    return True


def emit_hadamard(w: Writer) -> bool:
    out = _shaped_output(w, (1, 2), True)
    if out is None or out.mem.order < 1:
        return False
    c = out.mem.type.element
    a = _input_view(w, _promotes_to(c), out.mem.shape, out.mem.root)
    if a is None:
        return False
    b = _input_view(w, lambda e: promotable(e, c) and promote(e, a.mem.type.element) is not None,
                    out.mem.shape, out.mem.root)
    if b is None:
        return False
    atomic = _atomic(w, out)
    _blas(w, out, "hadamard_product{atomic} {alpha}, {0}, {1}, {beta}, {out}", [a, b], atomic)
    return True


# ---------------------------------------------------------------- the table

TABLE: list[Entry] = [
    Entry("constant", emit_constant, 1.0),
    Entry("arith", emit_arith, 3.0),
    Entry("arith.bool", emit_logic, 0.5),
    Entry("arith.complex", emit_complex_parts, 0.4),
    Entry("cast", emit_cast, 1.2),
    Entry("cmp", emit_cmp, 0.8),
    Entry("math", emit_math, 0.5),
    Entry("builtin", emit_builtin, 0.8),
    Entry("load", emit_load, 2.0),
    Entry("store", emit_store, 2.0),
    Entry("size", emit_size, 0.5),
    Entry("subview", emit_subview, 1.0),
    Entry("expand", emit_expand, 0.5),
    Entry("fuse", emit_fuse, 0.5),
    Entry("alloca", emit_alloca, 0.4, "collective"),
    Entry("lifetime_stop", emit_lifetime_stop, 0.6, "collective"),
    Entry("for", emit_for, 1.0),
    Entry("if", emit_if, 1.0),
    Entry("foreach", emit_foreach, 1.0, "collective"),
    Entry("parallel", emit_parallel, 1.0, "collective"),
    Entry("barrier", emit_barrier, 0.3),
    Entry("gemm", emit_gemm, 1.0, "collective"),
    Entry("gemv", emit_gemv, 0.8, "collective"),
    Entry("ger", emit_ger, 0.6, "collective"),
    Entry("axpby", emit_axpby, 0.8, "collective"),
    Entry("sum", emit_sum, 0.6, "collective"),
    Entry("cumsum", emit_cumsum, 0.6, "collective"),
    Entry("hadamard_product", emit_hadamard, 0.6, "collective"),
    Entry("subgroup_op", emit_subgroup_op, 0.8, "parallel", SUBGROUP),
    Entry("subgroup_broadcast", emit_broadcast, 0.5, "parallel", SUBGROUP),
]
