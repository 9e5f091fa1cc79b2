"""The builder's region methods: `for_`, `if_`, `foreach`, `foreach_tile`, `parallel`, `yield_`.

`RegionMethods` is mixed into `FunctionBuilder` (function.py), whose plumbing
(`_add`, `_value`, `_name`, `_b`) they use; each opens its region as a `with` block.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from tinyc.builder import location
from tinyc.builder.types import scalar
from tinyc.ir import instructions as I
from tinyc.ir.core import Value
from tinyc.ir.types import Type, index

if TYPE_CHECKING:
    from tinyc.builder.function import FunctionBuilder


class Loop:
    """A `for` being built: `var`, `carried` inside the block, `results` after it."""

    def __init__(self, inst: I.For):
        self.inst = inst

    @property
    def var(self) -> Value:
        return self.inst.loop_var

    @property
    def carried(self) -> list[Value]:
        return self.inst.carried

    @property
    def results(self) -> list[Value]:
        return self.inst.results


class Branch:
    """An `if` being built: `with br.then():` / `with br.otherwise():`, `results` after."""

    def __init__(self, fn: "FunctionBuilder", inst: I.If):
        self._fn, self.inst = fn, inst

    @property
    def results(self) -> list[Value]:
        return self.inst.results

    def then(self):
        return self._fn._b._inside(self.inst.then)

    def otherwise(self):
        return self._fn._b._inside(self.inst.otherwise)


class RegionMethods:
    """Regions opened as `with` blocks (mixed into FunctionBuilder)."""

    # -- regions ------------------------------------------------------------------
    @contextmanager
    def for_(self, lower: Any, upper: Any, step: Any = None, init: Sequence[Value] = (),
             loop_type: Any = index, unroll: bool | None = None,
             names: Sequence[str | None] = ()) -> Iterator[Loop]:
        """`with fn.for_(lo, hi, init=[x]) as loop:` — `loop.var`, `loop.carried`; end the
        body with `fn.yield_([...])` when values are carried; `loop.results` afterwards."""
        ty = scalar(loop_type)
        lo, hi = self._value(lower, ty, "lower bound"), self._value(upper, ty, "upper bound")
        st = None if step is None else self._value(step, ty, "step")
        attrs = {} if unroll is None else {"unroll": bool(unroll)}
        for v in init:
            if not isinstance(v, Value):
                raise TypeError(f"initial values of a loop must be values, got {v!r}")
        span = location.caller_span()
        loop_var, carried = Value(ty), [Value(v.type) for v in init]
        inst = I.For(loop_var, lo, hi, st, carried, init, loop_type=ty, attrs=attrs, span=span)
        for v, n in zip(inst.results, names):
            v.name = self._name(n)
        self._b.insert(inst)
        with self._b._inside(inst.body):
            yield Loop(inst)

    @contextmanager
    def if_(self, cond: Value, result_types: Sequence[Any] = ()) -> Iterator[Branch]:
        """`with fn.if_(c, [f32]) as br:` then `with br.then(): …` / `with br.otherwise(): …`."""
        types = [t if isinstance(t, Type) else scalar(t) for t in result_types]
        inst = I.If(cond, types, span=location.caller_span())
        self._b.insert(inst)
        yield Branch(self, inst)

    @contextmanager
    def foreach(self, lower: Sequence[Any], upper: Sequence[Any],
                loop_type: Any = index) -> Iterator[list[Value]]:
        """`with fn.foreach([0, 0], [m, n]) as (i, j):` — an SPMD loop over a range."""
        ty = scalar(loop_type)
        lo = [self._value(v, ty, "lower bound") for v in lower]
        hi = [self._value(v, ty, "upper bound") for v in upper]
        loop_vars = [Value(ty) for _ in lo]
        inst = I.Foreach(loop_vars, lo, hi, loop_type=ty, span=location.caller_span())
        self._b.insert(inst)
        with self._b._inside(inst.body):
            yield loop_vars

    @contextmanager
    def foreach_tile(self, lower: Sequence[Any], upper: Sequence[Any],
                     tile_shape: Sequence[int]) -> Iterator[tuple[list[Value], list[Value]]]:
        """`with fn.foreach_tile([0], [n], [16]) as (offsets, sizes):` — tiles of a range, one
        per subgroup at a time (newest language); sizes are the tile shape clipped at the end."""
        lo = [self._value(v, index, "lower bound") for v in lower]
        hi = [self._value(v, lo[k].type if k < len(lo) else index, "upper bound")
              for k, v in enumerate(upper)]
        offsets = [Value(v.type) for v in lo]
        sizes = [Value(v.type) for v in lo]
        inst = I.ForeachTile(offsets, sizes, lo, hi, [int(n) for n in tile_shape],
                             span=location.caller_span())
        self._b.insert(inst)
        with self._b._inside(inst.body):
            yield offsets, sizes

    @contextmanager
    def parallel(self) -> Iterator[None]:
        """`with fn.parallel():` — an SPMD region run by every work-item."""
        inst = I.Parallel(span=location.caller_span())
        self._b.insert(inst)
        with self._b._inside(inst.body):
            yield

    def yield_(self, values: Sequence[Value] = ()) -> None:
        self._add(I.Yield(list(values)))
