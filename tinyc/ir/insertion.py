"""A builder that makes IR without text, so lowering code reads like the IR it emits.

    b = Builder.at_end(fn.body)
    i = b.builtin(BuiltinName.SUBGROUP_LOCAL_ID, i32)
    with b.for_(lo, hi) as (k, _):
        x = b.load(A, [k])
        b.store(b.add(x, x), A, [k])

Every method appends one instruction at the insertion point and returns its
result value(s). The span of created instructions defaults to the span of
the instruction being lowered (`Builder.span`), so errors in lowered code
still point at the user's text.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

from tinyc.diagnostics import Span
from tinyc.ir.core import Instruction, Region, Value
from tinyc.ir.instructions import (
    ArithBinary, ArithBinaryOp, ArithUnary, ArithUnaryOp, Barrier, Builtin, BuiltinName, Cast,
    CheckedFlag, Cmp, CmpCond, Constant, CoopMatrixLoad, CoopMatrixMulAdd, CoopMatrixScale,
    CoopMatrixStore, For, Foreach, If, Load, Parallel, Size, SpmdBuiltin, SPMD_BUILTINS, Store,
    StoreFlag, Subview, Yield,
)
from tinyc.ir.types import DYNAMIC, MemrefType, Type, bool_
from tinyc.ir.types import index as index_type


class Builder:
    """Inserts instructions into a region at a position."""

    def __init__(self, region: Region, position: int | None = None, span: Span | None = None):
        self.region = region
        self.position = len(region.instructions) if position is None else position
        self.span = span

    @classmethod
    def at_end(cls, region: Region, span: Span | None = None) -> "Builder":
        return cls(region, None, span)

    @classmethod
    def before(cls, inst: Instruction) -> "Builder":
        region = inst.parent
        assert region is not None, "instruction is not in a region"
        return cls(region, region.instructions.index(inst), inst.span)

    def insert(self, inst: Instruction) -> Instruction:
        """Place a ready-made instruction at the insertion point."""
        if inst.span is None:
            inst.span = self.span
        self.region.insert(self.position, inst)
        self.position += 1
        return inst

    # -- scalars --------------------------------------------------------------
    def constant(self, value: bool | int | float | complex, type: Type) -> Value:
        return self.insert(Constant(value, type)).result

    def index(self, value: int) -> Value:
        return self.constant(value, index_type)

    def arith(self, op: ArithBinaryOp, a: Value, b: Value) -> Value:
        return self.insert(ArithBinary(op, a, b, a.type)).result

    def add(self, a: Value, b: Value) -> Value:
        return self.arith(ArithBinaryOp.ADD, a, b)

    def sub(self, a: Value, b: Value) -> Value:
        return self.arith(ArithBinaryOp.SUB, a, b)

    def mul(self, a: Value, b: Value) -> Value:
        return self.arith(ArithBinaryOp.MUL, a, b)

    def div(self, a: Value, b: Value) -> Value:
        return self.arith(ArithBinaryOp.DIV, a, b)

    def rem(self, a: Value, b: Value) -> Value:
        return self.arith(ArithBinaryOp.REM, a, b)

    def min(self, a: Value, b: Value) -> Value:
        return self.arith(ArithBinaryOp.MIN, a, b)

    def unary(self, op: ArithUnaryOp, a: Value, type: Type | None = None) -> Value:
        return self.insert(ArithUnary(op, a, type or a.type)).result

    def cast(self, a: Value, type: Type) -> Value:
        return a if a.type is type else self.insert(Cast(a, type)).result

    def cmp(self, cond: CmpCond, a: Value, b: Value) -> Value:
        return self.insert(Cmp(cond, a, b, type=bool_)).result

    def builtin(self, which: BuiltinName, type: Type) -> Value:
        cls = SpmdBuiltin if which in SPMD_BUILTINS else Builtin
        return self.insert(cls(which, type)).result

    # -- memory ---------------------------------------------------------------
    def load(self, tensor: Value, indices: Sequence[Value], type: Type | None = None) -> Value:
        if type is None:
            t = tensor.type
            type = t.element if isinstance(t, MemrefType) else t.memref  # type: ignore[attr-defined]
        return self.insert(Load(tensor, indices, type)).result

    def store(self, value: Value, tensor: Value, indices: Sequence[Value],
              flag: StoreFlag = StoreFlag.NONE) -> None:
        self.insert(Store(value, tensor, indices, flag))

    def size(self, tensor: Value, mode: int) -> Value:
        return self.insert(Size(tensor, mode)).result

    def subview(self, tensor: Value, slices: Sequence[tuple[int | Value, int | Value]],
                type: Type) -> Value:
        """A subview from (offset, size) pairs; ints are static, Values dynamic."""
        static_offsets = [o if isinstance(o, int) else DYNAMIC for o, _ in slices]
        static_sizes = [s if isinstance(s, int) else DYNAMIC for _, s in slices]
        offsets = [o for o, _ in slices if isinstance(o, Value)]
        sizes = [s for _, s in slices if isinstance(s, Value)]
        return self.insert(Subview(tensor, static_offsets, static_sizes, offsets, sizes, type)).result

    def barrier(self, global_fence: bool = False, local_fence: bool = False) -> None:
        self.insert(Barrier(global_fence, local_fence))

    # -- coopmatrix -----------------------------------------------------------
    def coop_load(self, tensor: Value, x: Value, y: Value, type: Type, transpose: bool = False,
                  checked: CheckedFlag = CheckedFlag.NONE) -> Value:
        return self.insert(CoopMatrixLoad(transpose, checked, tensor, x, y, type)).result

    def coop_mul_add(self, a: Value, b: Value, c: Value, type: Type | None = None) -> Value:
        return self.insert(CoopMatrixMulAdd(a, b, c, type or c.type)).result

    def coop_scale(self, scalar: Value, matrix: Value) -> Value:
        return self.insert(CoopMatrixScale(scalar, matrix, matrix.type)).result

    def coop_store(self, value: Value, tensor: Value, x: Value, y: Value,
                   checked: CheckedFlag = CheckedFlag.NONE, flag: StoreFlag = StoreFlag.NONE,
                   transpose: bool = False) -> Instruction:
        return self.insert(CoopMatrixStore(checked, flag, value, tensor, x, y, transpose=transpose))

    # -- structured control flow ----------------------------------------------
    @contextmanager
    def for_(self, lower: Value, upper: Value, step: Value | None = None,
             init: Sequence[Value] = (), loop_type: Type = index_type,
             attrs: dict | None = None) -> Iterator[tuple[Value, list[Value], "ForHandle"]]:
        """`with b.for_(lo, hi, init=[x]) as (i, carried, loop):` — body built inside;
        end the body with `b.yield_(...)` when there are carried values; the
        loop's results are `loop.results` afterwards."""
        loop_var = Value(loop_type)
        carried = [Value(v.type) for v in init]
        inst = For(loop_var, lower, upper, step, carried, init, loop_type=loop_type, attrs=attrs)
        self.insert(inst)
        handle = ForHandle(inst)
        outer = (self.region, self.position)
        self.region, self.position = inst.body, 0
        try:
            yield loop_var, carried, handle
        finally:
            self.region, self.position = outer

    @contextmanager
    def if_(self, cond: Value, result_types: Sequence[Type] = ()) -> Iterator["IfHandle"]:
        """`with b.if_(c, [f32]) as br:` then `with br.then(): …` / `with br.otherwise(): …`."""
        inst = If(cond, result_types)
        self.insert(inst)
        yield IfHandle(self, inst)

    @contextmanager
    def parallel(self) -> Iterator[None]:
        inst = Parallel()
        self.insert(inst)
        with self._inside(inst.body):
            yield

    @contextmanager
    def foreach(self, lower: Sequence[Value], upper: Sequence[Value],
                loop_type: Type = index_type) -> Iterator[list[Value]]:
        loop_vars = [Value(loop_type) for _ in lower]
        inst = Foreach(loop_vars, lower, upper, loop_type=loop_type)
        self.insert(inst)
        with self._inside(inst.body):
            yield loop_vars

    @contextmanager
    def _inside(self, region: Region) -> Iterator[None]:
        outer = (self.region, self.position)
        self.region, self.position = region, len(region.instructions)
        try:
            yield
        finally:
            self.region, self.position = outer

    def yield_(self, values: Sequence[Value] = ()) -> None:
        self.insert(Yield(values))


class ForHandle:
    """The loop being built by `Builder.for_`."""

    def __init__(self, inst: For):
        self.inst = inst

    @property
    def results(self) -> list[Value]:
        return self.inst.results


class IfHandle:
    """The branch being built by `Builder.if_`."""

    def __init__(self, builder: Builder, inst: If):
        self.builder = builder
        self.inst = inst

    @property
    def results(self) -> list[Value]:
        return self.inst.results

    def then(self):
        return self.builder._inside(self.inst.then)

    def otherwise(self):
        return self.builder._inside(self.inst.otherwise)
