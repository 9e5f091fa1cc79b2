"""Generator entries for memory: load, store (plain, atomic, atomic_add), size, views,
alloca and lifetime_stop.

Stores go only where no other work-item or work-group can race them: the
work-group's own slice at collective level, the element of the region's
target that belongs to the work-item in SPMD code, atomic adds into shared
accumulators.
"""

from __future__ import annotations

from tinyc.fuzz.facts import SCALARS, tolerance
from tinyc.fuzz.generator import Writer
from tinyc.fuzz.program import GROUP, LANE, Mem, Root, Val
from tinyc.ir.types import (
    DYNAMIC, AddressSpace, ScalarType, c32, f16, f32, f64, i8, i32, index, memref_type,
)
from tinyc.fuzz.registry import generates
from tinyc.ir import instructions as I


@generates(I.Load, "load", 2.0)
def emit_load(w: Writer) -> bool:
    t = w.pick(SCALARS)
    return w.load_scalar(t) is not None


@generates(I.Store, "store", 2.0)
def emit_store(w: Writer) -> bool:
    """A store this region may do without a race (see module docs of program.py)."""
    if w.spmd:
        return _store_spmd(w)
    targets = w.own_writable()
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


@generates(I.Size, "size", 0.5)
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


@generates(I.Subview, "subview", 1.0)
def emit_subview(w: Writer) -> bool:
    mems = [v for v in w.mems() if v.mem.order > 0 and 0 not in v.mem.shape]
    if not mems:
        return False
    src = w.pick(mems)
    m = src.mem
    sizes = [None if (m.order > 1 and w.chance(0.3)) else w.rng.randint(1, n) for n in m.shape]
    level = GROUP if not w.spmd or w.chance(0.5) else LANE
    return w.subview(src, sizes, level=level) is not None


@generates(I.Expand, "expand", 0.5)
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


@generates(I.Fuse, "fuse", 0.5)
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


@generates(I.Alloca, "alloca", 0.4, "collective")
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


@generates(I.LifetimeStop, "lifetime_stop", 0.6, "collective")
def emit_lifetime_stop(w: Writer) -> bool:
    local = [v for v in w.region.values if v.mem is not None and v.mem.root.local
             and v.name == v.mem.root.name and not v.mem.root.dead]
    if not local:
        return False
    v = w.pick(local)
    w.emit(f"lifetime_stop {v.name}")
    v.mem.root.dead = True
    return True
