"""The builder's SPMD methods: coopmatrix, atomics and subgroup operations.

`SpmdMethods` is mixed into `FunctionBuilder` (function.py), whose plumbing
(`_add`, `_value`, `_index`, `_indices`, `_b`) they use.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from tinyc.builder import location
from tinyc.builder.arguments import checked_flag, enum_of, memref_of, ordering, store_flag, transposed
from tinyc.builder.types import scalar
from tinyc.ir import instructions as I
from tinyc.ir.core import Value
from tinyc.ir.types import CoopMatrixType, coopmatrix_type


class Apply:
    """A `cooperative_matrix_apply` being built: `row`, `col`, `value` inside, `result` after."""

    def __init__(self, inst: I.CoopMatrixApply):
        self.inst = inst
        self.row, self.col, self.value = inst.body.args

    @property
    def result(self) -> Value:
        return self.inst.result


class SpmdMethods:
    """coopmatrix, atomics and subgroups (mixed into FunctionBuilder)."""

    # -- SPMD: coopmatrix and subgroups --------------------------------------------
    def cooperative_matrix_load(self, tensor: Value, x: Any, y: Any, type: CoopMatrixType,
                                transpose: Any = False, checked: str | None = None,
                                name: str | None = None) -> Value:
        inst = I.CoopMatrixLoad(transposed(transpose, "transpose"), checked_flag(checked), tensor,
                                self._index(x), self._index(y), type)
        return self._add(inst, name).result

    def cooperative_matrix_construct(self, number: Any, type: CoopMatrixType,
                                     name: str | None = None) -> Value:
        """A coopmatrix with every entry `number` (newest language)."""
        value = self._value(number, type.component, "number")
        return self._add(I.CoopMatrixConstruct(value, type), name).result

    def cooperative_matrix_mul_add(self, a: Value, b: Value, c: Value, type: CoopMatrixType | None = None,
                                   name: str | None = None) -> Value:
        return self._add(I.CoopMatrixMulAdd(a, b, c, type or c.type), name).result

    def cooperative_matrix_scale(self, scalar_value: Any, matrix: Value, name: str | None = None) -> Value:
        s = self._value(scalar_value, matrix.type.component, "scale")  # type: ignore[attr-defined]
        return self._add(I.CoopMatrixScale(s, matrix, matrix.type), name).result

    def cooperative_matrix_store(self, value: Value, tensor: Value, x: Any, y: Any,
                                 checked: str | None = None, flag: str | None = None,
                                 transpose: Any = False) -> None:
        self._add(I.CoopMatrixStore(checked_flag(checked), store_flag(flag), value, tensor,
                                    self._index(x), self._index(y),
                                    transpose=transposed(transpose, "transpose")))

    # -- newest language: atomics and coopmatrix components -----------------------
    def atomic_load(self, tensor: Value, indices: Sequence[Any] = (), scope: Any = None,
                    semantics: Any = None, name: str | None = None) -> Value:
        """`atomic_load[.scope][.semantics] %t[indices] : element`."""
        t = memref_of(tensor, "tensor")
        inst = I.AtomicLoad(tensor, self._indices(indices), t.element, *ordering(scope, semantics))
        return self._add(inst, name).result

    def atomic_store(self, value: Any, tensor: Value, indices: Sequence[Any] = (), scope: Any = None,
                     semantics: Any = None) -> None:
        t = memref_of(tensor, "tensor")
        self._add(I.AtomicStore(self._value(value, t.element, "value"), tensor, self._indices(indices),
                                *ordering(scope, semantics)))

    def atomic(self, op: Any, value: Any, tensor: Value, indices: Sequence[Any] = (),
               scope: Any = None, semantics: Any = None, name: str | None = None) -> Value:
        """`%old = atomic_<op> value, tensor[indices]`: the element's value before the update."""
        t = memref_of(tensor, "tensor")
        inst = I.AtomicUpdate(enum_of(I.AtomicOp, op, "atomic operation"),
                              self._value(value, t.element, "value"), tensor, self._indices(indices),
                              t.element, *ordering(scope, semantics))
        return self._add(inst, name).result

    def atomic_add(self, value, tensor, indices=(), scope=None, semantics=None, name=None):
        return self.atomic("add", value, tensor, indices, scope, semantics, name)

    def atomic_max(self, value, tensor, indices=(), scope=None, semantics=None, name=None):
        return self.atomic("max", value, tensor, indices, scope, semantics, name)

    def atomic_min(self, value, tensor, indices=(), scope=None, semantics=None, name=None):
        return self.atomic("min", value, tensor, indices, scope, semantics, name)

    def cooperative_matrix_extract(self, matrix: Value, index: int, name: str | None = None) -> Value:
        """Component `index` of the work-item's part of `matrix` (docs/coopmatrix.md)."""
        inst = I.CoopMatrixExtract(matrix, index, matrix.type.component)  # type: ignore[attr-defined]
        return self._add(inst, name).result

    def cooperative_matrix_insert(self, value: Any, matrix: Value, index: int,
                                  name: str | None = None) -> Value:
        v = self._value(value, matrix.type.component, "value")  # type: ignore[attr-defined]
        return self._add(I.CoopMatrixInsert(v, matrix, index, matrix.type), name).result

    @contextmanager
    def cooperative_matrix_apply(self, matrix: Value, name: str | None = None) -> Iterator[Apply]:
        """`with fn.cooperative_matrix_apply(m) as ap:` — `ap.row`, `ap.col`, `ap.value` inside
        (end with `fn.yield_([new])`); `ap.result` afterwards."""
        inst = I.CoopMatrixApply(matrix, matrix.type, span=location.caller_span())
        inst.results[0].name = self._name(name)
        self._b.insert(inst)
        with self._b._inside(inst.body):
            yield Apply(inst)

    def cooperative_matrix_reduce(self, op: Any, mode: Any, matrix: Value,
                                  name: str | None = None) -> Value:
        """Sum, max or min over each row (`mode="row"`, M×1) or column ("column", 1×N)."""
        m = enum_of(I.ReduceMode, mode if str(mode).startswith(".") else f".{mode}", "reduce mode")
        t = matrix.type
        shape = (t.rows, 1) if m is I.ReduceMode.ROW else (1, t.cols)  # type: ignore[attr-defined]
        rt = coopmatrix_type(t.component, *shape, t.use)  # type: ignore[attr-defined]
        inst = I.CoopMatrixReduce(enum_of(I.AtomicOp, op, "reduce operation"), m, matrix, rt)
        return self._add(inst, name).result

    def cooperative_matrix_prefetch(self, cache_level: int, tensor: Value, x: Any, y: Any, rows: int,
                                    cols: int) -> None:
        self._add(I.CoopMatrixPrefetch(cache_level, tensor, self._index(x), self._index(y), rows, cols))

    def cooperative_matrix_atomic_load(self, tensor: Value, x: Any, y: Any, type: CoopMatrixType,
                                       transpose: Any = False, checked: str | None = None,
                                       scope: Any = None, semantics: Any = None,
                                       name: str | None = None) -> Value:
        inst = I.CoopMatrixAtomicLoad(transposed(transpose, "transpose"), checked_flag(checked), tensor,
                                      self._index(x), self._index(y), type,
                                      *ordering(scope, semantics))
        return self._add(inst, name).result

    def cooperative_matrix_atomic_store(self, value: Value, tensor: Value, x: Any, y: Any,
                                        transpose: Any = False, checked: str | None = None,
                                        scope: Any = None, semantics: Any = None) -> None:
        scope_, semantics_ = ordering(scope, semantics)
        self._add(I.CoopMatrixAtomicStore(checked_flag(checked), value, tensor, self._index(x),
                                          self._index(y), transposed(transpose, "transpose"),
                                          scope_, semantics_))

    def cooperative_matrix_atomic(self, op: Any, value: Value, tensor: Value, x: Any, y: Any,
                                  transpose: Any = False, checked: str | None = None,
                                  scope: Any = None, semantics: Any = None,
                                  name: str | None = None) -> Value:
        """Component-wise atomic add/max/min; the result holds the old values."""
        scope_, semantics_ = ordering(scope, semantics)
        inst = I.CoopMatrixAtomicUpdate(enum_of(I.AtomicOp, op, "atomic operation"), value, tensor,
                                        self._index(x), self._index(y), value.type,
                                        transposed(transpose, "transpose"), checked_flag(checked),
                                        scope_, semantics_)
        return self._add(inst, name).result

    def subgroup_broadcast(self, a: Value, lane: Any, name: str | None = None) -> Value:
        lane_v = self._value(lane, scalar("i32"), "lane")
        return self._add(I.SubgroupBroadcast(a, lane_v, a.type), name).result

    def subgroup(self, op: Any, mode: Any, a: Value, name: str | None = None) -> Value:
        """`subgroup_<mode>_<op>`, e.g. subgroup("add", "reduce", x)."""
        inst = I.SubgroupOperation(enum_of(I.SubgroupOp, op, "subgroup operation"),
                                   enum_of(I.SubgroupMode, mode, "subgroup mode"), a, a.type)
        return self._add(inst, name).result
