"""gemm, gemv and ger as tiled coopmatrix code.

All three are C := alpha op(A) op(B) + beta C; gemv and ger view their
vectors as n×1 matrices (`expand`). The lowering is

    parallel {
      for t = sg, #tiles, #subgroups {          ; one M_t×N_t tile of C per step
        acc = 0                                  ; coopmatrix<TC x M_t x N_t, matrix_acc>
        for k = 0, K, K_t init(acc) {            ; matrix_a M_t×K_t, matrix_b K_t×N_t
          acc = cooperative_matrix_mul_add a, b, acc
        }
        C[m0, n0] := alpha acc + beta C[m0, n0]
      }
    }

The schedule knobs (tinyc/schedule/knobs.py) set the tile: `tile` = [row
blocks, columns] gives M_t = blocks·S rows and N_t columns, `k_unroll` the
K step K_t, `stage` whether a transposed A of static size is first copied to
local memory (staging.py), `vector_width` the width of the loads that read a
lane's contiguous row of op(A) = Aᵀ.

Static sizes that the tile does not divide get remainder tiles of their own
static size (the tiles along the edge are M mod M_t rows or N mod N_t
columns), so no access is checked. Edge tiles of run-time sizes use checked
loads/stores behind a uniform branch, so full tiles stay unchecked. The K
remainder runs with K_t = 1 (or the static remainder) so K never needs checks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tinyc.ir.core import Instruction, Value
from tinyc.ir.instructions import CheckedFlag, Gemm, Gemv, Ger, StoreFlag
from tinyc.ir.types import DYNAMIC, MatrixUse, MemrefType, coopmatrix_type
from tinyc.passes.lowering.lowering_builder import LoweringBuilder, static
from tinyc.passes.lowering.context import LoweringContext
from tinyc.passes.lowering.registry import lowers
from tinyc.passes.lowering.scaling import Scaling, prepare_scaling
from tinyc.passes.lowering.staging import end_staging, stage_transposed
from tinyc.passes.lowering.tiling import GemmTiles, distribute


@dataclass
class Matmul:
    """C := alpha op(A) op(B) + beta C; the common core of gemm, gemv and ger."""

    alpha: Value
    A: Value
    transpose_a: bool
    B: Value
    transpose_b: bool
    beta: Value
    C: Value
    atomic: bool
    knobs: dict[str, Any]    # the instruction's complete schedule
    transpose_c: bool = False  # C holds the transpose of the product (the `swap` knob)

    def c_dim(self, mode: int) -> int:
        """C's mode that holds the product's mode `mode`."""
        return 1 - mode if self.transpose_c else mode


@lowers(Gemm)
def lower_gemm(ctx: LoweringContext, b: LoweringBuilder, inst: Gemm) -> None:
    """gemm: the tiled coopmatrix matmul as is."""
    A, B = inst.inputs
    emit_matmul(ctx, b, Matmul(inst.alpha, A, inst.transpose_a, B, inst.transpose_b,
                               inst.beta, inst.output, inst.atomic, ctx.knobs(inst)))


@lowers(Gemv)
def lower_gemv(ctx: LoweringContext, b: LoweringBuilder, inst: Gemv) -> None:
    """gemv: c (M) and b (K) viewed as M×1 and K×1 matrices, so N_t = 1."""
    A, x = inst.inputs
    knobs = ctx.knobs(inst)
    x_col = b.named(b.as_column(x), "b_col")
    c_col = b.named(b.as_column(inst.output), "c_col")
    emit_matmul(ctx, b, Matmul(inst.alpha, A, inst.transpose, x_col, False, inst.beta, c_col,
                               inst.atomic, knobs))


@lowers(Ger)
def lower_ger(ctx: LoweringContext, b: LoweringBuilder, inst: Ger) -> None:
    """ger: a b^T as a matmul with K = 1 (a as M×1, b as N×1 transposed)."""
    x, y = inst.inputs
    knobs = ctx.knobs(inst)
    x_col = b.named(b.as_column(x), "a_col")
    y_col = b.named(b.as_column(y), "b_col")
    emit_matmul(ctx, b, Matmul(inst.alpha, x_col, False, y_col, True, inst.beta, inst.output,
                               inst.atomic, knobs))


def _static_dim(t: MemrefType, mode: int) -> int | None:
    return None if t.shape[mode] == DYNAMIC else t.shape[mode]


def checked_flag(rows: bool, cols: bool) -> CheckedFlag:
    """The checked flag that guards the given coopmatrix modes."""
    return {(False, False): CheckedFlag.NONE, (True, False): CheckedFlag.ROWS,
            (False, True): CheckedFlag.COLS, (True, True): CheckedFlag.BOTH}[(rows, cols)]


def emit_matmul(ctx: LoweringContext, b: LoweringBuilder, mm: Matmul) -> None:
    """The matmul; with `swap`, Cᵀ = op(B)ᵀ op(A)ᵀ stored transposed; with `stage`, a
    transposed A of static size goes through local memory first."""
    if mm.knobs.get("swap"):
        mm = replace(mm, A=mm.B, transpose_a=not mm.transpose_b, B=mm.A,
                     transpose_b=not mm.transpose_a, transpose_c=True)
    if mm.knobs["stage"]:
        copy = stage_transposed(ctx, b, mm.A, access_hints(mm.knobs))
        _emit_tiles(ctx, b, replace(mm, A=copy, transpose_a=False))
        end_staging(b, copy)
    else:
        _emit_tiles(ctx, b, mm)


def _tiles(ctx: LoweringContext, mm: Matmul) -> GemmTiles:
    """M_t × N_t and K_t from the `tile` and `k_unroll` knobs, clipped to static sizes."""
    a_t, c_t = mm.A.type, mm.C.type
    assert isinstance(a_t, MemrefType) and isinstance(c_t, MemrefType)
    blocks, columns = mm.knobs["tile"]
    m, n, k = blocks * ctx.subgroup_size, columns, mm.knobs["k_unroll"]
    M, N = _static_dim(c_t, mm.c_dim(0)), _static_dim(c_t, mm.c_dim(1))
    K = _static_dim(a_t, 0 if mm.transpose_a else 1)
    return GemmTiles(m if M is None else max(1, min(m, M)), n if N is None else max(1, min(n, N)),
                     k if K is None else max(1, min(k, K)))


def _emit_tiles(ctx: LoweringContext, b: LoweringBuilder, mm: Matmul) -> None:
    """A `parallel` region computing the matmul tile by tile over the subgroups."""
    k_mode = 0 if mm.transpose_a else 1
    tiles = _tiles(ctx, mm)
    hints = access_hints(mm.knobs)
    with b.parallel():
        scaling = prepare_scaling(b, mm.alpha, mm.beta, mm.C.type.element,  # type: ignore[attr-defined]
                                  mm.atomic)
        M = b.named(b.dim(mm.C, mm.c_dim(0)), "M")
        N = b.named(b.dim(mm.C, mm.c_dim(1)), "N")
        K = b.named(b.dim(mm.A, k_mode), "K")
        sg = b.subgroup_id(ctx.num_subgroups)
        if static(M) is not None and static(N) is not None:
            _static_tiles(ctx, b, mm, tiles, static(M), static(N), K, scaling, sg, hints)
            return
        tiles_m = b.named(b.ceil_div(M, tiles.m), "tiles_m")
        tiles_n = b.ceil_div(N, tiles.n)
        total = b.named(b.imul(tiles_m, tiles_n), "tiles")
        check_m = static(M) is None or static(M) % tiles.m != 0
        check_n = static(N) is None or static(N) % tiles.n != 0
        emitter = _TileEmitter(b, mm, tiles, K, scaling, hints)

        def tile(t: Value) -> None:
            m0 = b.named(b.imul(b.irem(t, tiles_m), tiles.m), "m0")
            n0 = b.named(b.imul(b.idiv(t, tiles_m), tiles.n), "n0")
            if not (check_m or check_n):
                emitter.emit(m0, n0, False, False)
                return
            conditions = []
            if check_m:
                conditions.append(b.le(b.iadd(m0, tiles.m), M))
            if check_n:
                conditions.append(b.le(b.iadd(n0, tiles.n), N))
            full = b.named(b.all_of(conditions), "full_tile")
            with b.if_(full) as branch:
                with branch.then():
                    emitter.emit(m0, n0, False, False)
                with branch.otherwise():
                    emitter.emit(m0, n0, check_m, check_n)

        distribute(b, total, sg, ctx.num_subgroups, tile)


def _static_tiles(ctx: LoweringContext, b: LoweringBuilder, mm: Matmul, tiles: GemmTiles,
                  M: int, N: int, K: Value, scaling: Scaling, sg: Value,
                  hints: dict[str, Any]) -> None:
    """Static M and N: full tiles, then the remainder strips as tiles of their own size.

    Up to four parts (full × full, the last rows, the last columns, the
    corner), each distributed over the subgroups with one unchecked tile type.
    """
    full_m, rest_m = divmod(M, tiles.m)
    full_n, rest_n = divmod(N, tiles.n)
    rows = [(tiles.m, full_m, 0), (rest_m, 1, full_m * tiles.m)]
    cols = [(tiles.n, full_n, 0), (rest_n, 1, full_n * tiles.n)]
    for m_t, count_m, base_m in rows:
        for n_t, count_n, base_n in cols:
            if not (m_t and count_m and n_t and count_n):
                continue
            emitter = _TileEmitter(b, mm, GemmTiles(m_t, n_t, tiles.k), K, scaling, hints)

            def tile(t: Value, m_t: int = m_t, n_t: int = n_t, count_m: int = count_m,
                     base_m: int = base_m, base_n: int = base_n,
                     emitter: _TileEmitter = emitter) -> None:
                m0 = b.named(b.iadd(b.imul(b.irem(t, count_m), m_t), base_m), "m0")
                n0 = b.named(b.iadd(b.imul(b.idiv(t, count_m), n_t), base_n), "n0")
                emitter.emit(m0, n0, False, False)

            distribute(b, b.int_const(count_m * count_n), sg, ctx.num_subgroups, tile)


class _TileEmitter:
    """Emits the code of one C tile: K loop, then the alpha/beta epilogue."""

    def __init__(self, b: LoweringBuilder, mm: Matmul, tiles: GemmTiles, K: Value,
                 scaling: Scaling, hints: dict[str, Any]):
        self.b, self.mm, self.tiles, self.K, self.scaling = b, mm, tiles, K, scaling
        self.hints = hints
        self.c_type = mm.C.type.element  # type: ignore[attr-defined]
        self.acc_type = coopmatrix_type(self.c_type, tiles.m, tiles.n, MatrixUse.ACC)

    def emit(self, m0: Value, n0: Value, check_m: bool, check_n: bool) -> None:
        b, s = self.b, self.scaling
        c_flag = checked_flag(check_m, check_n)
        # With alpha = beta = 1 the old C is the initial accumulator: no extra pass.
        c_in_acc = s.alpha is None and s.beta_const == 1 and not s.atomic
        if c_in_acc:
            acc = self._load_c(m0, n0, c_flag)
        else:
            acc = b.zero(self.acc_type)
        acc = b.named(self._k_loops(acc, m0, n0, check_m, check_n), "acc")
        if s.alpha is not None:
            acc = b.named(b.coop_scale(s.alpha, acc), "acc_scaled")
        if c_in_acc:
            self._store_c(acc, m0, n0, c_flag)
        else:
            self._epilogue(acc, m0, n0, c_flag)

    def _k_loops(self, acc: Value, m0: Value, n0: Value, check_m: bool, check_n: bool) -> Value:
        """acc + op(A)[m0:, :] op(B)[:, n0:] over all of K, in K_t steps."""
        b, kt = self.b, self.tiles.k
        K = static(self.K)

        def step_loop(lower: Value, upper: Value, step: int, acc: Value) -> Value:
            with b.for_(lower, upper, b.int_const(step), init=[acc]) as (k, carried, loop):
                b.named(k, "k")
                b.named(carried[0], "acc")
                b.yield_([self._k_step(k, step, carried[0], m0, n0, check_m, check_n)])
            return loop.results[0]

        if K is not None:
            full_steps, rest = divmod(K, kt)
            if full_steps == 1:
                acc = self._k_step(b.int_const(0), kt, acc, m0, n0, check_m, check_n)
            elif full_steps > 1:
                acc = step_loop(b.int_const(0), b.int_const(full_steps * kt), kt, acc)
            if rest:
                acc = self._k_step(b.int_const(full_steps * kt), rest, acc, m0, n0, check_m,
                                   check_n)
            return acc
        if kt == 1:
            return step_loop(b.int_const(0), self.K, 1, acc)
        k_main = b.named(b.round_down(self.K, kt), "k_main")
        acc = step_loop(b.int_const(0), k_main, kt, acc)
        return step_loop(k_main, self.K, 1, acc)

    def _k_step(self, k0: Value, kt: int, acc: Value, m0: Value, n0: Value, check_m: bool,
                check_n: bool) -> Value:
        """One mul_add of an M_t×kt block of op(A) and a kt×N_t block of op(B)."""
        b, mm, tiles = self.b, self.mm, self.tiles
        a_type = coopmatrix_type(mm.A.type.element, tiles.m, kt, MatrixUse.A)  # type: ignore[attr-defined]
        b_type = coopmatrix_type(mm.B.type.element, kt, tiles.n, MatrixUse.B)  # type: ignore[attr-defined]
        a_flag = CheckedFlag.ROWS if check_m else CheckedFlag.NONE
        b_flag = CheckedFlag.COLS if check_n else CheckedFlag.NONE
        # A .t load at (x, y) reads M[x + j, y + i]: the position is given transposed.
        a_pos = (k0, m0) if mm.transpose_a else (m0, k0)
        b_pos = (n0, k0) if mm.transpose_b else (k0, n0)
        a = b.named(b.coop_load(mm.A, *a_pos, a_type, mm.transpose_a, a_flag), "a")
        set_access_hints(a, self.hints)
        bm = b.named(b.coop_load(mm.B, *b_pos, b_type, mm.transpose_b, b_flag), "b")
        set_access_hints(bm, self.hints)
        product = b.coop_mul_add(a, bm, acc)
        if mm.transpose_c:   # (a codegen hint: complex products order their terms as unswapped)
            assert isinstance(product.owner, Instruction)
            product.owner.attrs["swapped"] = True
        return product

    def _epilogue(self, acc: Value, m0: Value, n0: Value, flag: CheckedFlag) -> None:
        """C := acc + beta C (acc already holds alpha·AB), by the scaling rules."""
        b, s = self.b, self.scaling
        if s.atomic or s.beta_const == 0:
            self._store_c(acc, m0, n0, flag, s.store_flag)
            return
        if s.beta_const is not None:
            self._store_c(self._plus_beta_c(acc, m0, n0, flag), m0, n0, flag)
            return
        assert s.beta_is_zero is not None
        with b.if_(s.beta_is_zero) as branch:
            with branch.then():
                self._store_c(acc, m0, n0, flag)
            with branch.otherwise():
                self._store_c(self._plus_beta_c(acc, m0, n0, flag), m0, n0, flag)

    def _load_c(self, m0: Value, n0: Value, flag: CheckedFlag) -> Value:
        """The C tile at (m0, n0) of the product (read transposed when C holds its transpose)."""
        if not self.mm.transpose_c:
            return self.b.coop_load(self.mm.C, m0, n0, self.acc_type, checked=flag)
        loaded = self.b.coop_load(self.mm.C, n0, m0, self.acc_type, True, flag)
        set_access_hints(loaded, self.hints)
        return loaded

    def _store_c(self, acc: Value, m0: Value, n0: Value, flag: CheckedFlag,
                 store_flag: StoreFlag = StoreFlag.NONE) -> None:
        if not self.mm.transpose_c:
            self.b.coop_store(acc, self.mm.C, m0, n0, flag, store_flag)
            return
        store = self.b.coop_store(acc, self.mm.C, n0, m0, flag, store_flag, transpose=True)
        store.attrs.update(self.hints)

    def _plus_beta_c(self, acc: Value, m0: Value, n0: Value, flag: CheckedFlag) -> Value:
        b, s = self.b, self.scaling
        c = b.named(self._load_c(m0, n0, flag), "c")
        if s.beta is not None:
            c = b.coop_scale(s.beta, c)
        return b.add(acc, c)



ACCESS_KNOBS = ("vector_width", "transpose")
"""Knobs that codegen reads off a coopmatrix load or store: how a lane's contiguous row is
read or written (tinyc/spirv/codegen/coopmatrix.py, coopmatrix_transpose.py)."""


def access_hints(knobs: dict[str, Any]) -> dict[str, Any]:
    """The codegen hints of a matmul's schedule (those of ACCESS_KNOBS it has)."""
    return {k: knobs[k] for k in ACCESS_KNOBS if k in knobs}


def set_access_hints(loaded: Value, hints: dict[str, Any]) -> None:
    """Tell codegen how to read a tile whose lanes' rows are contiguous (vloadn width,
    or a register transpose).

    Codegen hints in the load's attributes, which the printer does not show
    (the schedule comment of `--emit lowered` does).
    """
    assert isinstance(loaded.owner, Instruction)
    loaded.owner.attrs.update(hints)
