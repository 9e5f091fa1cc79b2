"""Coopmatrix values in per-work-item registers (no matrix engine on the CPU).

Layout for subgroup size S (RUNTIME-NOTES §12 rules out SPV_KHR_cooperative_matrix):
- matrix_a and matrix_acc, R×C: lane l holds rows l + S·b for b < ceil(R/S),
  all C columns; component b·C + j is row l + S·b, column j. Rows ≥ R are
  padding: never loaded or stored, zero after a load.
- matrix_b, R×C: every lane holds all R·C components (component i·C + j);
  the values are uniform, which the CPU vectorizer keeps scalar.

Checked loads branch around the memory access (out-of-bounds components are
0 and never touch memory); stores of matrix_b are split so that lane
i mod S writes row i, so atomic adds happen once (an atomic update's old
values are then broadcast from that lane). The atomic load / store / update
forms access each component with tinyc/spirv/codegen/atomics.py; every write goes
through writes.write. Where a lane's row is
contiguous in memory (a `.t` load from a column-major memref) it is read with
OpenCL's vloadn instead of one scalar load per component.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Callable

from tinyc.ir.instructions import (
    ArithBinaryOp, CheckedFlag, CoopMatrixAtomicLoad, CoopMatrixAtomicStore, CoopMatrixAtomicUpdate,
    CoopMatrixConstruct, CoopMatrixLoad, CoopMatrixMulAdd, CoopMatrixScale, CoopMatrixStore, StoreFlag,
)
from tinyc.ir.types import CoopMatrixType, MatrixUse, ScalarType
from tinyc.spirv.codegen import atomics, scalar, writes
from tinyc.spirv.codegen import coopmatrix_transpose as transpose
from tinyc.spirv.codegen.context import Ctx, IndexLike, MemrefDesc
from tinyc.spirv.codegen.dispatch import emits
from tinyc.spirv.codegen.memref import element_address, load_element, store_element
from tinyc.spirv.codegen.subgroup import broadcast
from tinyc.spirv.codegen.types import coop_blocks, coop_components, compute_type, scalar_type
from tinyc.spirv.codegen.writes import write
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import Op, OpenCLStd

Cond = Id | bool
"""A condition known at run time (bool id) or at compile time."""

VECTOR_LOAD_BYTES = 8
"""Bytes per vector load when a lane's row is contiguous and the load carries no
`vector_width` (the schedule knob, see tinyc/schedule/defaults.py). An OpLoad
through a vector pointer compiled to gathers, so the width is OpenCL's vloadn."""

VLOADN_SIZES = (2, 3, 4, 8, 16)
"""Vector widths OpenCL's vloadn accepts."""


def _and(ctx: Ctx, a: Cond, b: Cond) -> Cond:
    if a is True or b is False:
        return b
    if b is True or a is False:
        return a
    return ctx.op(Op.LogicalAnd, ctx.bool, a, b)


def _in_bounds(ctx: Ctx, v: IndexLike, size: IndexLike) -> Cond:
    """0 <= v < size as one unsigned compare."""
    if not isinstance(v, Id) and not isinstance(size, Id):
        return 0 <= v < size
    return ctx.op(Op.ULessThan, ctx.bool, ctx.as_id(v), ctx.as_id(size))


def _rows(ctx: Ctx, t: CoopMatrixType) -> list[tuple[IndexLike, Cond]]:
    """Per block of components: the matrix row this lane holds, and whether it is real."""
    S = ctx.subgroup_size
    if t.use is MatrixUse.B:
        return [(i, True) for i in range(t.rows)]
    out: list[tuple[IndexLike, Cond]] = []
    for b in range(coop_blocks(t, S)):
        row = ctx.iadd(ctx.lane_id64(), S * b)
        real: Cond = True if (b + 1) * S <= t.rows else ctx.op(Op.ULessThan, ctx.bool, row, ctx.const64(t.rows))
        out.append((row, real))
    return out


def _guarded(ctx: Ctx, cond: Cond, then: Callable[[], list[Id]], types: list[Id],
             defaults: list[Id]) -> list[Id]:
    """then() where cond holds, else defaults, without running then() otherwise."""
    if cond is True:
        return then()
    if cond is False:
        return list(defaults)
    return ctx.branch(cond, then, None, types, defaults)


class _Placement:
    """Where the components of a coopmatrix at (x, y) sit in a memref, `.t` or not."""

    def __init__(self, ctx: Ctx, transpose: bool, x: IndexLike, y: IndexLike):
        self.ctx = ctx
        # the memref modes that the matrix rows / columns run along
        self.row_mode, self.col_mode = (1, 0) if transpose else (0, 1)
        self.row_base, self.col_base = (y, x) if transpose else (x, y)

    def position(self, row: IndexLike, j: int) -> list[IndexLike]:
        """The memref index of column j of the matrix row `row`."""
        idx: list[IndexLike] = [0, 0]
        idx[self.row_mode] = self.ctx.iadd(self.row_base, row)
        idx[self.col_mode] = self.ctx.iadd(self.col_base, j)
        return idx

    def row_inside(self, row: IndexLike, desc: MemrefDesc) -> Cond:
        return _in_bounds(self.ctx, self.ctx.iadd(self.row_base, row), desc.shape[self.row_mode])

    def column_inside(self, j: int, desc: MemrefDesc) -> Cond:
        return _in_bounds(self.ctx, self.ctx.iadd(self.col_base, j), desc.shape[self.col_mode])

    def contiguous(self, desc: MemrefDesc, t: CoopMatrixType, checked: CheckedFlag) -> bool:
        """Whether each lane's row lies contiguously in memory (unit stride along it)."""
        stride = desc.stride[self.col_mode]
        return (t.use is not MatrixUse.B and not checked.cols and t.cols > 1
                and not t.component.is_complex and not isinstance(stride, Id) and stride == 1)

    def check_block(self, desc: MemrefDesc, t: CoopMatrixType, checked: CheckedFlag) -> None:
        """Record (once) a block that leaves the memref along a mode its load/store does not
        check (bounds-checked launches)."""
        checker = self.ctx.bounds
        ok: Cond = desc.valid
        if not checked.rows:
            ok = checker.both(ok, checker.fits(self.row_base, t.rows, desc.shape[self.row_mode]))
        if not checked.cols:
            ok = checker.both(ok, checker.fits(self.col_base, t.cols, desc.shape[self.col_mode]))
        position: list[IndexLike] = [0, 0]
        position[self.row_mode], position[self.col_mode] = self.row_base, self.col_base
        size = [0, 0]
        size[self.row_mode], size[self.col_mode] = t.rows, t.cols
        checker.record(ok, checker.site(self.ctx.current, "coopmatrix"), position, size, desc.shape)


def _checking(ctx: Ctx) -> bool:
    return ctx.bounds is not None and not ctx.bounds.trusted()


def _vector_width(inst, desc: MemrefDesc) -> int:
    """The `vector_width` schedule knob, else VECTOR_LOAD_BYTES' worth of elements."""
    return inst.attrs.get("vector_width") or max(2, VECTOR_LOAD_BYTES // desc.type.element.size)


@emits(CoopMatrixLoad)
def emit_load(ctx: Ctx, inst: CoopMatrixLoad) -> None:
    _load(ctx, inst, None)


@emits(CoopMatrixAtomicLoad)
def emit_atomic_load(ctx: Ctx, inst: CoopMatrixAtomicLoad) -> None:
    desc: MemrefDesc = ctx[inst.operands[0]]
    _load(ctx, inst, atomics.ordering(ctx, desc.type, inst.scope, inst.semantics, "load"))


def _load(ctx: Ctx, inst: CoopMatrixLoad, order: "atomics.Ordering | None") -> None:
    """The components of the lane's rows (read atomically with an `order`)."""
    M, xv, yv = inst.operands
    t: CoopMatrixType = inst.result.type
    desc: MemrefDesc = ctx[M]
    x, y = ctx.index(xv), ctx.index(yv)
    ty = scalar_type(ctx.m, t.component)
    zero = scalar.zero(ctx, t.component)
    at = _Placement(ctx, inst.transpose, x, y)

    def read(ptr: Id) -> Id:
        if order is not None:
            return atomics.atomic_load(ctx, desc.type, ptr, order)
        return load_element(ctx, desc, ptr)

    # A lane's row is contiguous in memory (a .t load of a column-major memref):
    # vector loads instead of one gather per component.
    contiguous = order is None and at.contiguous(desc, t, inst.checked)
    checking = _checking(ctx)
    if checking:  # one record for the block; each component then goes through element_address
        contiguous = False
        at.check_block(desc, t, inst.checked)
    shuffled = (contiguous and not inst.checked.rows
                and transpose.applies(ctx, t, inst.attrs.get("transpose")))
    comps: list[Id] = []
    for block, (row, real) in enumerate(_rows(ctx, t)):
        row_ok = real
        if inst.checked.rows:
            row_ok = _and(ctx, row_ok, at.row_inside(row, desc))
        done: list[Id] = []  # full S-column blocks, read across lanes and transposed
        if shuffled:
            done = transpose.load_block_rows(ctx, desc, ty, zero, t, block, at.row_mode,
                                             at.col_mode, at.row_base, at.col_base)
        first = len(done)
        comps += done
        if first == t.cols:
            continue

        def load_row(row: IndexLike = row, first: int = first) -> list[Id]:
            if contiguous:
                return _load_contiguous(ctx, desc, ty, t.cols - first, _vector_width(inst, desc),
                                        lambda j: at.position(row, first + j))
            out = []
            for j in range(t.cols):
                if not inst.checked.cols:  # (every column is inside: no branch to make)
                    out.append(read(element_address(ctx, desc, at.position(row, j))))
                    continue
                out += _guarded(ctx, at.column_inside(j, desc), lambda j=j: [read(element_address(
                    ctx, desc, at.position(row, j)))], [ty], [zero])
            return out

        with ctx.bounds.quiet() if checking else nullcontext():
            comps += _guarded(ctx, row_ok, load_row, [ty] * (t.cols - first),
                              [zero] * (t.cols - first))
    ctx[inst.result] = comps


def _load_contiguous(ctx: Ctx, desc: MemrefDesc, ty: Id, cols: int, width: int,
                     position: Callable[[int], list[IndexLike]]) -> list[Id]:
    """`cols` consecutive elements from `position(0)` on, up to `width` per vloadn."""
    out: list[Id] = []
    j = 0
    while j < cols:
        n = max((v for v in VLOADN_SIZES if v <= min(width, cols - j)), default=1)
        ptr = element_address(ctx, desc, position(j))
        if n == 1:
            out.append(load_element(ctx, desc, ptr))
        else:
            vec = ctx.ext(OpenCLStd.vloadn, ctx.m.type_vector(ty, n), ctx.const64(0), ptr, n)
            out += [ctx.op(Op.CompositeExtract, ty, vec, i) for i in range(n)]
        j += n
    return out


def _write_components(ctx: Ctx, t: CoopMatrixType, desc: MemrefDesc, at: _Placement,
                      checked: CheckedFlag, write: Callable[[Id, int], Id | None],
                      result: Id | None = None, default: Id | None = None,
                      row_writer: Callable[[int, IndexLike], None] | None = None) -> list[Id]:
    """write(pointer, component) for each component this lane stores, where it is in bounds.

    matrix_b rows are split so that lane i mod S writes row i (every lane holds
    all of B; an atomic then happens once). With `result` (a type id), write
    returns a value per component and the lane's values are returned, `default`
    where nothing was written. `row_writer(b, row)`, if given, writes the whole
    row b at once (vector stores).
    """
    S = ctx.subgroup_size
    types = [result] if result is not None else []
    defaults = [default] if result is not None else []
    out: list[Id] = []
    checking = _checking(ctx)
    if checking:  # one record for the block; each component then goes through element_address
        at.check_block(desc, t, checked)
    with ctx.bounds.quiet() if checking else nullcontext():
        for b, (row, real) in enumerate(_rows(ctx, t)):
            row_ok = real
            if t.use is MatrixUse.B and S > 1:  # every lane holds row b: lane b mod S writes it
                row_ok = ctx.op(Op.IEqual, ctx.bool, ctx.lane_id(), ctx.const32(b % S))
            if checked.rows:
                row_ok = _and(ctx, row_ok, at.row_inside(row, desc))

            def store_row(b: int = b, row: IndexLike = row) -> list[Id]:
                if row_writer is not None:
                    row_writer(b, row)
                    return []
                values: list[Id] = []
                for j in range(t.cols):
                    col_ok: Cond = True
                    if checked.cols:
                        col_ok = at.column_inside(j, desc)

                    def store_one(j: int = j) -> list[Id]:
                        got = write(element_address(ctx, desc, at.position(row, j)), b * t.cols + j)
                        return [got] if result is not None and got is not None else []
                    values += _guarded(ctx, col_ok, store_one, types, defaults)
                return values

            out += _guarded(ctx, row_ok, store_row, types * t.cols, defaults * t.cols)
    return out


@emits(CoopMatrixStore)
def emit_store(ctx: Ctx, inst: CoopMatrixStore) -> None:
    A, M, xv, yv = inst.operands
    t: CoopMatrixType = A.type
    desc: MemrefDesc = ctx[M]
    comps: list[Id] = ctx[A]
    at = _Placement(ctx, inst.transpose, ctx.index(xv), ctx.index(yv))
    row_writer = None

    def write_one(ptr: Id, k: int) -> None:
        store_element(ctx, desc, ptr, comps[k], inst.flag)

    # a .t store of a column-major memref: each lane's row is contiguous, vstoren
    if (inst.transpose and inst.flag is StoreFlag.NONE and not _checking(ctx)
            and at.contiguous(desc, t, inst.checked)):
        width = _vector_width(inst, desc)
        first = 0
        if not inst.checked.rows and transpose.applies(ctx, t, inst.attrs.get("transpose")):
            first = _store_shuffled(ctx, desc, t, comps, at)
            if first == t.cols:
                return

        def row_writer(b: int, row: IndexLike, first: int = first) -> None:
            _store_contiguous(ctx, desc, comps[b * t.cols + first:(b + 1) * t.cols], width,
                              lambda j: at.position(row, first + j))
    _write_components(ctx, t, desc, at, inst.checked, write_one, row_writer=row_writer)


@emits(CoopMatrixAtomicStore)
def emit_atomic_store(ctx: Ctx, inst: CoopMatrixAtomicStore) -> None:
    A, M, xv, yv = inst.operands
    desc: MemrefDesc = ctx[M]
    comps: list[Id] = ctx[A]
    order = atomics.ordering(ctx, desc.type, inst.scope, inst.semantics, "store")
    at = _Placement(ctx, inst.transpose, ctx.index(xv), ctx.index(yv))
    _write_components(ctx, A.type, desc, at, inst.checked,
                      lambda ptr, k: write(ctx, desc.type, ptr, writes.Atomic(comps[k], order)))


def _store_shuffled(ctx: Ctx, desc: MemrefDesc, t: CoopMatrixType, comps: list[Id],
                    at: _Placement) -> int:
    """Store the full S-column blocks of every row block transposed across lanes; returns
    how many columns of each row that covered."""
    ty = scalar_type(ctx.m, t.component)
    for block in range(coop_blocks(t, ctx.subgroup_size)):
        transpose.store_block_rows(ctx, desc, ty, t, block, comps[block * t.cols:(block + 1) * t.cols],
                                   at.row_mode, at.col_mode, at.row_base, at.col_base)
    return t.cols // ctx.subgroup_size * ctx.subgroup_size


@emits(CoopMatrixAtomicUpdate)
def emit_atomic_update(ctx: Ctx, inst: CoopMatrixAtomicUpdate) -> None:
    """Component-wise atomic add/max/min; the result holds the old values (0 where skipped)."""
    A, M, xv, yv = inst.operands
    t: CoopMatrixType = A.type
    desc: MemrefDesc = ctx[M]
    comps: list[Id] = ctx[A]
    order = atomics.ordering(ctx, desc.type, inst.scope, inst.semantics)
    at = _Placement(ctx, inst.transpose, ctx.index(xv), ctx.index(yv))
    old = _write_components(
        ctx, t, desc, at, inst.checked,
        lambda ptr, k: write(ctx, desc.type, ptr, writes.Update(inst.op, comps[k], order)),
        scalar_type(ctx.m, t.component), scalar.zero(ctx, t.component))
    if t.use is MatrixUse.B and ctx.subgroup_size > 1:  # row i was updated by lane i mod S
        S = ctx.subgroup_size
        old = [broadcast(ctx, t.component, v, ctx.const32((k // t.cols) % S)) for k, v in enumerate(old)]
    ctx[inst.result] = old


def _store_contiguous(ctx: Ctx, desc: MemrefDesc, values: list[Id], width: int,
                      position: Callable[[int], list[IndexLike]]) -> None:
    """Store `values` to consecutive elements from `position(0)` on, up to `width` per vstoren."""
    j = 0
    while j < len(values):
        n = max((v for v in VLOADN_SIZES if v <= min(width, len(values) - j)), default=1)
        ptr = element_address(ctx, desc, position(j))
        if n == 1:
            store_element(ctx, desc, ptr, values[j], StoreFlag.NONE)
        else:
            write(ctx, desc.type, ptr, writes.Vector(tuple(values[j:j + n])))
        j += n


@emits(CoopMatrixMulAdd)
def emit_mul_add(ctx: Ctx, inst: CoopMatrixMulAdd) -> None:
    """D = A·B + C per lane: its rows of A and C, all of B.

    Computed in C's component type (bf16 in f32), real floats with fused
    multiply-adds (one rounding per step, as BLAS does), complex ones on their real and
    imaginary parts apart (_complex_mul_add), converted to D's type.
    """
    A, B, C = inst.operands
    ta, tb, tc = A.type, B.type, C.type
    td: CoopMatrixType = inst.result.type
    work = compute_type(tc.component)
    a = [scalar.cast(ctx, ta.component, work, v) for v in ctx[A]]
    bm = [scalar.cast(ctx, tb.component, work, v) for v in ctx[B]]
    c = [scalar.cast(ctx, tc.component, work, v) for v in ctx[C]]
    K, N = ta.cols, tc.cols
    wt = scalar_type(ctx.m, work)
    blocks = coop_blocks(tc, ctx.subgroup_size)
    if work.is_complex:
        acc = _complex_mul_add(ctx, work, a, bm, c, K, N, blocks, bool(inst.attrs.get("swapped")))
        ctx[inst.result] = [scalar.cast(ctx, work, td.component, v) for v in acc]
        return
    acc = list(c)
    for k in range(K):  # k outermost: row k of B is dead after its step
        for j in range(N):
            y = bm[k * N + j]
            for blk in range(blocks):
                x, at = a[blk * K + k], blk * N + j
                if work.is_float:
                    acc[at] = ctx.ext(OpenCLStd.fma, wt, x, y, acc[at])
                else:
                    prod = scalar.binary(ctx, ArithBinaryOp.MUL, work, x, y)
                    acc[at] = scalar.binary(ctx, ArithBinaryOp.ADD, work, acc[at], prod)
    ctx[inst.result] = [scalar.cast(ctx, work, td.component, v) for v in acc]


def _complex_mul_add(ctx: Ctx, work: ScalarType, a: list[Id], b: list[Id], c: list[Id], K: int, N: int,
                     blocks: int, swapped: bool) -> list[Id]:
    """C + A·B on complex numbers with real and imaginary parts apart, four fmas per
    product: re = fma(ai, -bi, fma(ar, br, re)) and im = fma(ai, br, fma(ar, bi, im)). Each
    part of A, B and C is taken out once (and -bi made once per element of B); the parts
    are made complex again at the end. Every product meets the running sum the same way
    however a schedule cuts the K loop. Under the `swap` knob (Cᵀ = Bᵀ·Aᵀ: A holds the
    user's B, `swapped`) im takes its two products in the other order, so that every
    schedule gives the same bits (re is the same either way). (A complex multiply and add
    per product took the parts out of the accumulator and put them back every step: about
    a quarter of the f64 speed on complex128; im as im + (ar·bi + ai·br), two multiplies
    and two adds, ran complex64 64³ gemms at 0.55x the speed of the fmas.)"""
    rt = scalar_type(ctx.m, work.component)
    ap = [scalar.parts(ctx, work, v) for v in a]
    bp = [(br, bi, scalar.flip_signs(ctx, work.component, bi)) for br, bi in (scalar.parts(ctx, work, v) for v in b)]
    acc = [list(scalar.parts(ctx, work, v)) for v in c]
    for k in range(K):
        for j in range(N):
            br, bi, minus_bi = bp[k * N + j]
            for blk in range(blocks):
                (ar, ai), part = ap[blk * K + k], acc[blk * N + j]
                part[0] = ctx.ext(OpenCLStd.fma, rt, ai, minus_bi, ctx.ext(OpenCLStd.fma, rt, ar, br, part[0]))
                first, second = ((ai, br), (ar, bi)) if swapped else ((ar, bi), (ai, br))
                part[1] = ctx.ext(OpenCLStd.fma, rt, *second, ctx.ext(OpenCLStd.fma, rt, *first, part[1]))
    return [scalar.make_complex(ctx, work, re, im) for re, im in acc]


@emits(CoopMatrixConstruct)
def emit_construct(ctx: Ctx, inst: CoopMatrixConstruct) -> None:
    """Every component a lane holds is the number (padding rows too: they are never stored)."""
    t: CoopMatrixType = inst.result.type
    ctx[inst.result] = [ctx.id(inst.operands[0])] * coop_components(t, ctx.subgroup_size)


@emits(CoopMatrixScale)
def emit_scale(ctx: Ctx, inst: CoopMatrixScale) -> None:
    s, M = inst.operands
    t: CoopMatrixType = M.type
    alpha = ctx.id(s)
    ctx[inst.result] = [scalar.binary(ctx, ArithBinaryOp.MUL, t.component, alpha, v) for v in ctx[M]]
