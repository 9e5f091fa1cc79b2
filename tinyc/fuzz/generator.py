"""Random valid programs: the writer of one kernel and the values it can make.

`write_kernel(rng, name, table)` returns a `Kernel`: the text of one function plus
the arguments to launch it with. The body is a random walk over the table of
instructions in `instructions.py` (one entry per instruction kind); this
module holds what the entries share: the open regions, fresh names, the
arguments and prologue, and the helpers that make a value of a wanted type
or an index within a wanted range without undefined behaviour.

Validity is by construction; `tinyc.compile` must accept every kernel (the
campaign counts a rejection as a generator bug, not as a compiler bug).
"""

from __future__ import annotations

import random
from typing import Sequence

from tinyc.fuzz.arith import arith_value
from tinyc.fuzz.facts import DATA_TYPES, SCALARS, int_limits, tolerance
from tinyc.fuzz.program import (
    GROUP, LANE, ArrayArg, GroupArg, Kernel, Mem, Region, Root, ScalarArg, Val,
)
from tinyc.ir.types import (
    DYNAMIC, ScalarType, Type, bool_, c32, f16, f32, f64, group_type, i8, i32, i64, index, memref_type,
)

class Writer:
    """Writes one kernel: text lines, regions and the facts of every value."""

    def __init__(self, rng: random.Random, name: str, table: Sequence, newest: bool = False):
        self.rng = rng
        self.name = name
        self.table = table
        self.newest = newest  # may use the newest language's instructions (a newest program)
        self.lines: list[str] = []
        self.region = Region("collective", GROUP)
        self.count = 0
        self.features: set[str] = set()
        self.batch = rng.choice((1, 2, 3, 4))
        self.subgroup = rng.choice((4, 8, 16, 16, 32))
        self.wg = (self.subgroup * rng.choice((1, 1, 2)), rng.choice((1, 1, 2)))
        if self.wg[0] * self.wg[1] > 64:
            self.wg = (self.subgroup, 1)
        self.args: list = []
        self.outputs: dict[str, Root] = {}
        self.gid: Val | None = None
        self.budget = rng.randint(4, 30)  # instructions in the whole kernel (roughly)
        self.collectives = 0  # BLAS-like collectives so far (instructions.MAX_COLLECTIVES)

    # -- text ---------------------------------------------------------------------
    def emit(self, text: str) -> None:
        self.lines.append("  " * (self.region.depth + 1) + text)

    def fresh(self, hint: str = "v") -> str:
        self.count += 1
        return f"%{hint}{self.count}"

    def define(self, name: str, t: Type, **facts) -> Val:
        if not facts.get("exact", True) and "tol" not in facts:
            facts["tol"] = tolerance(getattr(t, "component", t))
        value = Val(name, t, **facts)
        self.region.values.append(value)
        return value

    def feature(self, name: str) -> None:
        self.features.add(name)

    # -- regions --------------------------------------------------------------------
    def open(self, kind: str, level: int, **extra) -> Region:
        region = Region(kind, level, self.region, depth=self.region.depth + 1,
                        loops=self.region.loops, **extra)
        if kind == "collective" or kind == self.region.kind:
            region.target = extra.get("target", self.region.target)
            region.store_at = extra.get("store_at", self.region.store_at)
        self.region = region
        return region

    def close(self) -> None:
        assert self.region.parent is not None
        self.region = self.region.parent

    @property
    def spmd(self) -> bool:
        return self.region.kind != "collective"

    def in_parallel(self) -> bool:
        region: Region | None = self.region
        while region is not None:
            if region.kind == "parallel":
                return True
            if region.kind == "foreach":
                return False
            region = region.parent
        return False

    # -- choosing ---------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items: Sequence):
        return self.rng.choice(list(items))

    def values(self, t: Type | None = None, *, level: int = LANE, exact: bool | None = None) -> list[Val]:
        """Visible values (of type t), at least this uniform (and exact if asked)."""
        return [v for v in self.region.visible()
                if (t is None or v.type is t) and v.level >= level
                and (exact is None or v.exact or not exact) and v.mem is None and v.group is None]

    def own_writable(self, order: Sequence[int] | None = None) -> list[Val]:
        """Writable, non-empty memrefs of this work-item's own data (not shared local memory):
        what a store, a loop or a collective may write without racing."""
        return [v for v in self.mems(writable=True, order=order)
                if not v.mem.root.shared and 0 not in v.mem.shape]

    def mems(self, *, readable: bool | None = None, writable: bool | None = None,
             order: Sequence[int] | None = None) -> list[Val]:
        found = []
        for v in self.region.visible():
            m = v.mem
            if m is None or m.root.dead:
                continue
            if readable is not None and readable != (m.readable and not m.root.shared
                                                    and not self._written_here(m.root)):
                continue
            if writable is not None and writable != m.writable:
                continue
            if order is not None and m.order not in order:
                continue
            found.append(v)
        return found

    def _written_here(self, root: Root) -> bool:
        """Inside an SPMD region, the root that its work-items write must not be read
        (another work-item may be writing the element)."""
        region: Region | None = self.region
        while region is not None and region.kind != "collective":
            if region.target is root:
                return True
            region = region.parent
        return False

    # -- scalars ------------------------------------------------------------------------
    def scalar(self, t: ScalarType | type(bool_), *, level: int = LANE, exact: bool = False,
               depth: int = 0) -> Val:
        """A value of type t: one in scope, or a new constant, load or computation."""
        found = self.values(t, level=level, exact=exact or None)
        if found and (depth > 1 or self.chance(0.6)):
            return self.pick(found)
        if t is bool_:
            return self.compare(level=level, depth=depth)
        if depth < 2 and self.chance(0.35):
            loaded = self.load_scalar(t, level=level, exact=exact)
            if loaded is not None:
                return loaded
        if depth < 2 and self.chance(0.4):
            made = self.arith(t, level=level, exact=exact, depth=depth + 1)
            if made is not None:
                return made
        return self.constant(t)

    def constant(self, t: ScalarType | type(bool_), value=None) -> Val:
        rng = self.rng
        if t is bool_:
            value = rng.choice((True, False)) if value is None else value
            text = "true" if value else "false"
            name = self.fresh("b")
            self.emit(f"{name} = constant {text} : bool")
            return self.define(name, bool_)
        if value is None:
            if t.is_int:
                value = rng.choice((0, 1, 2, 3, -1, -3, 7, rng.randint(-100, 100)))
                low, high = int_limits(t)
                value = max(low, min(high, value))
            elif t.is_complex:
                value = complex(round(rng.uniform(-2, 2), 2), round(rng.uniform(-2, 2), 2))
            else:
                value = rng.choice((0.0, 1.0, -1.0, 0.5, 2.0, round(rng.uniform(-4, 4), 3)))
        name = self.fresh("c")
        if t.is_int:
            self.emit(f"{name} = constant {int(value)} : {t}")
            return self.define(name, t, lo=int(value), hi=int(value))
        if t.is_complex:
            value = complex(value)
            self.emit(f"{name} = constant [{float(value.real)!r}, {float(value.imag)!r}] : {t}")
        else:
            self.emit(f"{name} = constant {float(value)!r} : {t}")
        return self.define(name, t)

    def index_const(self, value: int) -> Val:
        for v in self.values(index):
            if v.lo == v.hi == value and v.lo is not None:
                return v
        return self.constant(index, value)

    def int_in(self, t: ScalarType, lo: int, hi: int, *, level: int = LANE) -> Val:
        """An integer of type t whose every possible value lies in [lo, hi]."""
        found = [v for v in self.values(t, level=level) if v.within(lo, hi)]
        if found and self.chance(0.7):
            return self.pick(found)
        if hi > lo and self.chance(0.4):
            wide = [v for v in self.values(t, level=level)
                    if v.lo is not None and v.hi is not None and v.lo >= 0 and v.hi > hi - lo]
            if wide:  # (v rem n) + lo with 0 <= v
                v = self.pick(wide)
                n = self.constant(t, hi - lo + 1)
                r = self.fresh("r")
                self.emit(f"{r} = arith.rem {v.name}, {n.name} : {t}")
                rem = self.define(r, t, lo=0, hi=hi - lo, level=v.level)
                if lo == 0:
                    return rem
                shift = self.constant(t, lo)
                s = self.fresh("i")
                self.emit(f"{s} = arith.add {rem.name}, {shift.name} : {t}")
                return self.define(s, t, lo=lo, hi=hi, level=v.level)
        return self.constant(t, self.rng.randint(lo, hi))

    def index_in(self, lo: int, hi: int, *, level: int = LANE) -> Val:
        return self.int_in(index, lo, hi, level=level)

    # -- computations used by several entries -------------------------------------------
    def compare(self, *, level: int = LANE, depth: int = 0) -> Val:
        t = self.pick((i32, index, i8, f32, f64, f16, c32))
        conds = ("eq", "ne") if t.is_complex else ("eq", "ne", "lt", "le", "gt", "ge")
        a = self.scalar(t, level=level, exact=True, depth=depth + 1)
        b = self.scalar(t, level=level, exact=True, depth=depth + 1)
        name = self.fresh("b")
        self.emit(f"{name} = cmp.{self.pick(conds)} {a.name}, {b.name} : bool")
        self.feature("cmp")
        return self.define(name, bool_, level=min(a.level, b.level))

    def arith(self, t: ScalarType, *, level: int = LANE, exact: bool = False, depth: int = 1) -> Val | None:
        return arith_value(self, t, level=level, exact=exact, depth=depth)

    def load_scalar(self, t: ScalarType, *, level: int = LANE, exact: bool = False) -> Val | None:
        """A load of an element of type t from memory this region may read."""
        if self.region.level < level and self.spmd:
            return None
        choices = [v for v in self.mems(readable=True) if v.mem.type.element is t
                   and (not exact or v.mem.root.exact) and v.level >= level]
        if not choices:
            return None
        src = self.pick(choices)
        m = src.mem
        indices = [self.index_in(0, n - 1, level=level) for n in m.shape]
        if any(n == 0 for n in m.shape):
            return None
        name = self.fresh("x")
        args = ", ".join(i.name for i in indices)
        self.emit(f"{name} = load {src.name}[{args}] : {t}")
        self.feature("load")
        lvl = min([src.level] + [i.level for i in indices])
        return self.define(name, t, level=lvl, exact=m.root.exact, tol=m.root.tol)

    # -- views ------------------------------------------------------------------------------
    def subview(self, src: Val, sizes: Sequence[int | None], *, level: int = GROUP) -> Val | None:
        """A view of src keeping one mode per entry of `sizes` (None: drop the mode with
        an index), each kept mode of the given size; offsets random and in bounds."""
        m = src.mem
        if len(sizes) != m.order:
            return None
        parts, shape, stride, conc_shape, conc_strides = [], [], [], [], []
        for k, (want, n) in enumerate(zip(sizes, m.shape)):
            static_stride = m.type.stride[k]
            if want is None:
                if n == 0:
                    return None
                i = self.index_in(0, n - 1, level=level)
                parts.append(i.name)
                continue
            if want > n or want < 1:
                return None
            if want == n and m.type.shape[k] != DYNAMIC and self.chance(0.3):
                parts.append(":")  # the whole mode
                shape.append(m.type.shape[k])
            else:
                off = self.index_in(0, n - want, level=level)
                if self.chance(0.2):
                    size = self.index_const(want)
                    parts.append(f"{off.name}:{size.name}")
                    shape.append(DYNAMIC)
                else:
                    parts.append(f"{off.name}:{want}")
                    shape.append(want)
            stride.append(static_stride)
            conc_shape.append(want)
            conc_strides.append(m.strides[k])
        result = memref_type(m.type.element, tuple(shape), tuple(stride), m.type.space)
        name = self.fresh("s")
        self.emit(f"{name} = subview {src.name}[{', '.join(parts)}] : {result}")
        self.feature("subview")
        view = Mem(result, tuple(conc_shape), tuple(conc_strides), m.root, m.writable, m.readable)
        return self.define(name, result, mem=view, level=min(src.level, level))

    def matrix_view(self, src: Val, rows: int, cols: int) -> Val | None:
        """An order-2 rows x cols view of src (order >= 2), other modes fixed."""
        m = src.mem
        if m.order < 2:
            return None
        keep = sorted(self.rng.sample(range(m.order), 2))
        sizes: list[int | None] = [None] * m.order
        sizes[keep[0]], sizes[keep[1]] = rows, cols
        if m.shape[keep[0]] < rows or m.shape[keep[1]] < cols:
            return None
        return self.subview(src, sizes)

    def vector_view(self, src: Val, n: int) -> Val | None:
        m = src.mem
        modes = [k for k in range(m.order) if m.shape[k] >= n]
        if not modes:
            return None
        k = self.pick(modes)
        sizes: list[int | None] = [None] * m.order
        sizes[k] = n
        return self.subview(src, sizes)

    def scalar_view(self, src: Val) -> Val | None:
        """An order-0 view of one element."""
        if src.mem.order == 0:
            return src
        return self.subview(src, [None] * src.mem.order)

    # -- arguments and prologue --------------------------------------------------------------
    def argument_memref(self, name: str, element: ScalarType, output: bool) -> tuple[str, Val]:
        """A memref argument with the batch along its last mode (size `?`)."""
        rng = self.rng
        order = rng.choice((1, 2, 2, 2, 3))
        shape = [rng.choice((1, 2, 3, 4, 5, 8, 8, 16)) for _ in range(order)]
        type_shape = [DYNAMIC if rng.random() < 0.25 else s for s in shape]
        strides, type_strides, step = [], [], 1
        for s in shape + [self.batch]:
            if rng.random() < 0.15:
                step += rng.choice((1, 3))  # a padded leading dimension
                dynamic = True
            else:
                dynamic = rng.random() < 0.2
            strides.append(step)
            type_strides.append(DYNAMIC if dynamic else step)
            step *= s
        type_strides[0] = strides[0] if strides[0] == 1 and rng.random() < 0.8 else type_strides[0]
        full_shape = tuple(type_shape) + (DYNAMIC,)
        t = memref_type(element, full_shape, tuple(type_strides))
        root = Root(name, shared=False)
        mem = Mem(t, tuple(shape) + (self.batch,), tuple(strides), root, output, True)
        self.args.append(ArrayArg(name, element, tuple(shape) + (self.batch,), tuple(strides), output))
        if output:
            self.outputs[name] = root
        return f"%{name}: {t}", Val("%" + name, t, mem=mem)

    def argument_shared(self, name: str, element: ScalarType) -> tuple[str, Val]:
        """An accumulator every work-group adds into (atomically)."""
        n = self.rng.choice((1, 4, 8))
        t = memref_type(element, (n,))
        root = Root(name, shared=True)
        mem = Mem(t, (n,), (1,), root, True, False)
        self.args.append(ArrayArg(name, element, (n,), (1,), True))
        self.outputs[name] = root
        return f"%{name}: {t}", Val("%" + name, t, mem=mem)

    def argument_group(self, name: str, element: ScalarType, output: bool) -> tuple[str, Val]:
        rng = self.rng
        order = rng.choice((1, 2, 2))
        shape = tuple(rng.choice((2, 3, 4, 8)) for _ in range(order))
        offset = rng.choice((0, 0, 0, 3))
        dynamic_shape = offset == 0 and rng.random() < 0.4
        type_shape = tuple(DYNAMIC if dynamic_shape and rng.random() < 0.5 else s for s in shape)
        t = memref_type(element, type_shape)
        offset_dynamic = offset != 0 and rng.random() < 0.5
        g = group_type(t, DYNAMIC if rng.random() < 0.7 else self.batch,
                       DYNAMIC if offset_dynamic else offset)
        strides, step = [], 1
        for s in shape:
            strides.append(step)
            step *= s
        arg = GroupArg(name, t, self.batch, shape, tuple(strides), offset, offset_dynamic, output)
        self.args.append(arg)
        if output:
            self.outputs[name] = Root(name)
        return f"%{name}: {g}", Val("%" + name, g, group=arg)

    def prologue(self, params: list[Val]) -> None:
        """Per work-group views of the batched arguments."""
        gid = self.fresh("gid")
        self.emit(f"{gid} = builtin.group_id : index")
        self.gid = self.define(gid, index, lo=0, hi=self.batch - 1)
        for p in params:
            if p.mem is not None and not p.mem.root.shared:
                m = p.mem
                parts = [":"] * (m.order - 1) + [gid]
                result = memref_type(m.type.element, m.type.shape[:-1], m.type.stride[:-1])
                name = self.fresh("a")
                self.emit(f"{name} = subview {p.name}[{', '.join(parts)}] : {result}")
                view = Mem(result, m.shape[:-1], m.strides[:-1], m.root, m.writable, True)
                self.define(name, result, mem=view)
            elif p.mem is not None:
                self.region.values.append(p)
            elif p.group is not None:
                g = p.group
                name = self.fresh("m")
                self.emit(f"{name} = load {p.name}[{gid}] : {g.memref}")
                root = self.outputs.get(g.name) or Root(g.name)
                view = Mem(g.memref, g.shape, g.strides, root, g.output, True)
                self.define(name, g.memref, mem=view)
                self.feature("group")
            else:
                self.region.values.append(p)

    # -- the body -------------------------------------------------------------------------------
    def steps(self, count: int) -> None:
        """Up to `count` random instructions in the current region."""
        for _ in range(count):
            if self.budget <= 0:
                return
            self.step()

    def step(self) -> None:
        entries = [e for e in self.table if e.allowed(self)]
        weights = [e.weight for e in entries]
        for _ in range(8):
            entry = self.rng.choices(entries, weights)[0]
            if entry.emit(self) is not False:
                self.budget -= 1
                self.feature(entry.name)
                self.collectives += entry.collective
                return


def write_kernel(rng: random.Random, name: str, table: Sequence, newest: bool = False) -> Kernel:
    """One random kernel named `name` from the entries of `table`; `newest`: it may use the
    newest language's instructions (it is then a newest program, with its geometry given)."""
    w = Writer(rng, name, table, newest)
    params: list[str] = []
    values: list[Val] = []
    for k in range(rng.randint(1, 3)):
        text, v = w.argument_memref(f"in{k}", rng.choice(DATA_TYPES), False)
        params.append(text)
        values.append(v)
    for k in range(rng.randint(1, 3)):
        text, v = w.argument_memref(f"out{k}", rng.choice(DATA_TYPES), True)
        params.append(text)
        values.append(v)
    if rng.random() < 0.4:
        text, v = w.argument_group("grp", rng.choice(DATA_TYPES), rng.random() < 0.5)
        params.append(text)
        values.append(v)
    if rng.random() < 0.35:
        text, v = w.argument_shared("acc", rng.choice((i32, i64, f32, f64, c32)))
        params.append(text)
        values.append(v)
    for k in range(rng.randint(0, 2)):
        t = rng.choice(SCALARS)
        value = _scalar_value(rng, t)
        w.args.append(ScalarArg(f"s{k}", t, value))
        params.append(f"%s{k}: {t}")
        lo = hi = value if t.is_int else None
        values.append(Val(f"%s{k}", t, lo=lo, hi=hi))
    attrs = ""
    if rng.random() < 0.8 or newest:  # (newest: the rows of its coopmatrices fit S)
        attrs = f" attributes {{subgroup_size={w.subgroup}, work_group_size=[{w.wg[0]}, {w.wg[1]}]}}"
    else:
        w.subgroup, w.wg = 16, (16, 1)  # the compiler's choice on the CPU device
        w.unknown_geometry = True
    w.prologue(values)
    while w.budget > 0:
        w.step()
    body = "\n".join(w.lines)
    text = f"func @{name}({', '.join(params)}){attrs} {{\n{body}\n}}\n"
    exact = {n: r.exact and not r.shared for n, r in w.outputs.items()}
    tolerances = {n: r.tol for n, r in w.outputs.items()}
    if newest:
        text = "; std: newest\n" + text
    return Kernel(name, text, w.batch, w.args, exact, tolerances, w.features,
                  "newest" if newest else "seed")


def _scalar_value(rng: random.Random, t: ScalarType):
    if t.is_int:
        return rng.randint(-5, 20)
    if t.is_complex:
        return complex(round(rng.uniform(-2, 2), 3), round(rng.uniform(-2, 2), 3))
    return round(rng.uniform(-2, 2), 3)
