"""Checked statements → one tensor-language kernel, built with `tinyc.builder`.

    func @contract(%K: memref<f64x56x56x3>, %Q: memref<f64x56x9x?>, ..., %dt: f64) {
      %e = builtin.group_id : index              ; one batch entry per work-group
      %Q_e = subview %Q[:, :, %e] : ...          ; its slice of every batched tensor
      %T = alloca : memref<f64x56x9,local>       ; temporaries: local memory, by their names
      gemm ... ; statement 1, a term as pairwise steps (collectives.py, direct.py)
      axpby ... ; statement 2
      lifetime_stop %T                           ; after the last statement that reads it
    }

Each term `c · X · Y · ...` of a statement becomes pairwise steps in the
order of fewest multiply-adds (path.py): labels only one tensor holds are
summed out of it first, intermediates live in local memory, and the last
step writes the target with alpha = c and beta = 0 (the first term of `=`),
or 1 (the terms after it, and `+=`). `X = c·X + rest` updates X with
beta = c. A target read by its own right-hand side any other way is
computed into local memory first, then written. The compiler inserts the
barriers between statements that the data flow needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tinyc.builder import FunctionBuilder, Program, Value, index, memref
from tinyc.contractions.collectives import emit_pair, emit_unary
from tinyc.contractions.direct import emit_direct
from tinyc.contractions.orders import choose_order
from tinyc.contractions.path import contraction_path, step_labels
from tinyc.contractions.statement_check import BATCH, Checked, StatementInfo
from tinyc.contractions.statement_layout import ArgLayout, memref_shape
from tinyc.contractions.statements import Access, Term
from tinyc.contractions.tensors import Tensor
from tinyc.ir.types import ScalarType

KERNEL_NAME = "contract"


@dataclass
class _Held:
    """A tensor as the work-group sees it: a memref value and the declared mode held by
    each of its modes (the batch mode dropped)."""

    value: Value
    modes: tuple[int, ...]

    def tensor(self, access: Access) -> Tensor:
        return Tensor(self.value, tuple(access.labels[m] for m in self.modes))


def build_statements(checked: Checked, layouts: dict[str, ArgLayout], element: ScalarType,
                     name: str = KERNEL_NAME, block: int = 1, scratch: int = 0) -> Program:
    """The kernel of the checked statements for arguments laid out as `layouts`, `block`
    batch entries per work-group; `scratch`: temporaries in a global `%scratch` argument of
    that many elements per work-group instead of local memory."""
    return _build(checked, layouts, element, name, block, scratch)[0]


def _build(checked: Checked, layouts: dict[str, ArgLayout], element: ScalarType, name: str, block: int,
           scratch: int) -> tuple[Program, int]:
    """The kernel and the elements of its temporaries and intermediates (their sum)."""
    prog = Program("<contract>")
    params: dict[str, Any] = {}
    for tensor in checked.arguments:
        shape, layout = checked.tensors[tensor].shape, layouts[tensor]
        params[tensor] = memref(element, *memref_shape(shape, layout), stride=layout.strides)
    for scalar in checked.scalars:
        params[scalar] = element
    if scratch:
        params["scratch"] = memref(element, scratch, None)
    emitter = _Emitter(prog.function(name, params), checked, layouts, element)
    emitter.run(block, scratch)
    return prog, emitter.used


BLOCK_WORK = 2048
"""Batch entries with fewer multiply-adds than this share a work-group (a loop over a block of
them, at most MAX_BLOCK), so the runtime's cost per work-group is spread over more work."""
MAX_BLOCK = 16


def entry_work(checked: Checked) -> int:
    """Multiply-adds of one batch entry: every term along its cheapest pairwise path."""
    work = 0
    for info in (i for i in checked.statements if i.live):
        s, keep = info.statement, frozenset(info.statement.target.labels) - {info.batch}
        for term in s.terms:
            current = [frozenset(a.labels) - {info.batch} for a in term.tensors]
            if len(current) == 1:
                work += math.prod(info.sizes[x] for x in current[0] | keep if x in info.sizes)
            for i, j in contraction_path(current, keep, info.sizes):
                others = current[:i] + current[i + 1:j] + current[j + 1:]
                work += math.prod(info.sizes[x] for x in current[i] | current[j])
                current = others + [step_labels(current[i], current[j], others, keep)]
    return work


def choose_block(checked: Checked) -> int:
    """Batch entries per work-group: enough for BLOCK_WORK multiply-adds (1 without a batch)."""
    if not checked.batched:
        return 1
    return max(1, min(MAX_BLOCK, BLOCK_WORK // max(entry_work(checked), 1)))


LOCAL_BUDGET = 96 * 1024
"""Bytes of temporaries and intermediates per work-group kept in local memory (their sum, as
if none were reused); beyond it they go to global scratch, a slice per work-group."""


def scratch_elements(checked: Checked, layouts: dict[str, ArgLayout], element: ScalarType, block: int = 1) -> int:
    """0 when the kernel's temporaries and intermediates fit LOCAL_BUDGET (their sum, as if
    none were reused), else the elements of global scratch each work-group needs for them."""
    used = _build(checked, layouts, element, KERNEL_NAME, block, 0)[1]
    return 0 if used * element.size <= LOCAL_BUDGET else used


class _Emitter:
    """One kernel being emitted: names, per-work-group views, temporaries."""

    def __init__(self, fn: FunctionBuilder, checked: Checked, layouts: dict[str, ArgLayout],
                 element: ScalarType):
        self.fn, self.checked, self.layouts, self.element = fn, checked, layouts, element
        self.named: set[str] = set(checked.arguments) | set(checked.scalars)
        self.held: dict[str, _Held] = {}
        self.entry: Value | None = None     # the batch entry of the body being emitted
        self.label = "g"                    # the batch label (names the views: %Q_e)
        self.last_use = _last_uses(checked)
        self.scratch: Value | None = None   # this work-group's slice of %scratch (None: local memory)
        self.used = 0                       # elements of temporaries and intermediates made

    def once(self, name: str | None) -> str | None:
        """`name` for the first value that asks for it; later ones stay unnamed."""
        if name is None or name in self.named:
            return None
        self.named.add(name)
        return name

    def run(self, block: int = 1, scratch: int = 0) -> None:
        """The statements for this work-group's batch entry, or (block > 1) for each of its
        `block` entries in a loop (the last work-group's block may be short)."""
        fn, checked = self.fn, self.checked
        label = next((i.batch for i in checked.statements if i.batch is not None), "g")
        gid = fn.group_id(name=self.once(label if block == 1 else "g")) if checked.batched or scratch else None
        if scratch:
            self.scratch = fn.subview(fn["scratch"], (slice(None), gid), name=self.once("s"))
        if not checked.batched:
            self.body(None, label)
            return
        if block == 1:
            self.body(gid, label)
            return
        first = fn.mul(gid, block, name=self.once("first"))
        batched = next(name for name in checked.arguments if checked.tensors[name].batch_mode is not None)
        position = self.layouts[batched].order.index(checked.tensors[batched].batch_mode)
        total = fn.size(fn[batched], position, name=self.once("entries"))
        count = fn.min(fn.sub(total, first), block, name=self.once("count"))
        with fn.for_(0, count) as loop:
            self.body(fn.add(first, loop.var, name=self.once(label)), label)

    def body(self, entry: Value | None, label: str) -> None:
        """The live statements for the batch entry `entry` (None: no batch)."""
        self.entry, self.label = entry, label
        checked = self.checked
        for number, info in enumerate(checked.statements, 1):
            if not info.live:    # a temporary nobody reads: no effect
                continue
            self.statement(info)
            for name, last in self.last_use.items():
                if last == number and name in self.held and not checked.tensors[name].argument:
                    self.release(self.held.pop(name).value)

    # -- temporaries ---------------------------------------------------------------------------
    def local(self, shape: list[int], name: str | None) -> Value:
        """Memory for a temporary or intermediate: an alloca in local memory, or (when they do
        not fit, `self.scratch`) the next piece of this work-group's slice of global scratch."""
        count = math.prod(shape)
        self.used += count
        if self.scratch is None:
            return self.fn.alloca(memref(self.element, *shape, local=True), name=self.once(name))
        piece = self.fn.subview(self.scratch, [(self.used - count, count)],
                                name=self.once(name) if len(shape) == 1 else None)
        return piece if len(shape) == 1 else self.fn.expand(piece, 0, shape, name=self.once(name))

    def release(self, value: Value) -> None:
        """The end of a local temporary's life (its memory may be reused); scratch is not reused."""
        if self.scratch is None:
            self.fn.lifetime_stop(value)

    def tensor(self, name: str) -> _Held:
        """An argument as this work-group sees it (its entry's subview, made on first use, so
        an argument no live statement touches leaves no unused view), or a temporary."""
        if name not in self.held:
            fn, info, layout = self.fn, self.checked.tensors[name], self.layouts[name]
            mode = info.batch_mode
            if mode is None:
                self.held[name] = _Held(fn[name], layout.order)
            else:
                entries = [self.entry if m == mode else slice(None) for m in layout.order]
                view = fn.subview(fn[name], entries, name=self.once(f"{name}_{self.label}"))
                self.held[name] = _Held(view, tuple(m for m in layout.order if m != mode))
        return self.held[name]

    def temporary(self, name: str) -> _Held:
        """The local memory of a temporary, made where it is first assigned."""
        if name not in self.held:
            shape = self.checked.tensors[name].shape
            modes = tuple(m for m, n in enumerate(shape) if n is not BATCH)
            self.held[name] = _Held(self.local([shape[m] for m in modes], name), modes)  # type: ignore[misc]
        return self.held[name]

    # -- statements ----------------------------------------------------------------------------
    def statement(self, info: StatementInfo) -> None:
        s = info.statement
        sizes = info.sizes
        written = s.target.name
        target_held = self.tensor(written) if self.checked.tensors[written].argument else self.temporary(written)
        target = target_held.tensor(s.target)
        terms = list(s.terms)
        beta: Any = 1 if s.accumulate else 0
        for k, term in enumerate(terms):   # X = c·X + rest: X updated in place with beta = c
            if len(term.tensors) == 1 and _same(term.tensors[0], s.target) and not term.scalars:
                beta = beta + self.number(term.number)
                terms.pop(k)
                break
        if not terms:  # X = c·X (or X += c·X)
            self.fn.axpby(0, target.value, beta, target.value)
            return
        if any(a.name == s.target.name for term in terms for a in term.tensors):
            # read in another way: the right-hand side into local memory first
            result = Tensor(self.local([sizes[label] for label in target.labels], None), target.labels)
            self.terms(terms, result, 0, sizes)
            self.fn.axpby(1, result.value, beta, target.value)
            self.release(result.value)
            return
        self.terms(terms, target, beta, sizes)

    def terms(self, terms: list[Term], out: Tensor, beta: Any, sizes: dict[str, int]) -> None:
        for term in terms:
            inputs = [self.tensor(a.name).tensor(a) for a in term.tensors]
            self.term(inputs, out, self.coefficient(term), beta, sizes)
            beta = 1

    def coefficient(self, term: Term) -> Any:
        """number · Π scalars (÷ the divided ones) as a value, or a Python number."""
        fn, value = self.fn, None
        for scalar in term.scalars:
            factor = fn[scalar.name]
            if scalar.inverse:
                factor = fn.div(fn.constant(1.0, self.element), factor)
            value = factor if value is None else fn.mul(value, factor)
        if value is None:
            return self.number(term.number)
        if term.number != 1:
            value = fn.mul(value, fn.constant(self.number(term.number), self.element))
        return value

    def number(self, x: float) -> Any:
        """A statement's number in the kernel's type: an int for integer types (integral:
        statement_kernel checks that first)."""
        return int(x) if self.element.is_int else x

    def term(self, inputs: list[Tensor], out: Tensor, alpha: Any, beta: Any, sizes: dict[str, int]) -> None:
        """out := alpha Π inputs (summed over the labels out lacks) + beta out."""
        keep = frozenset(out.labels)
        live = [self.pre_reduced(t, inputs, keep, sizes) for t in inputs]
        made = [t for t, u in zip(live, inputs) if t is not u]
        steps = contraction_path([frozenset(t.labels) for t in live], keep, sizes)
        for number, (i, j) in enumerate(steps):
            x, y = live[i], live[j]
            others = live[:i] + live[i + 1:j] + live[j + 1:]
            labels = step_labels(frozenset(x.labels), frozenset(y.labels),
                                 [frozenset(o.labels) for o in others], keep)
            if number == len(steps) - 1 and labels == keep:
                self.step([x, y], out, alpha, beta, sizes)
                live = []
                break
            following = steps[number + 1] if number + 1 < len(steps) else None
            order = self.order(labels, x, y, others, following, out, sizes)
            result = Tensor(self.local([sizes[label] for label in order], None), order)
            self.step([x, y], result, 1, 0, sizes)
            made.append(result)
            live = others + [result]
        if live:
            self.step(live, out, alpha, beta, sizes)
        for t in made:
            self.release(t.value)

    def pre_reduced(self, t: Tensor, inputs: list[Tensor], keep: frozenset[str],
                    sizes: dict[str, int]) -> Tensor:
        """`t` summed over the labels no other tensor (nor the output) holds."""
        if len(inputs) == 1:
            return t
        needed = set(keep).union(*(u.labels for u in inputs if u is not t))
        labels = tuple(label for label in t.labels if label in needed)
        if len(labels) == len(t.labels):
            return t
        result = Tensor(self.local([sizes[label] for label in labels], None), labels)
        self.step([t], result, 1, 0, sizes)
        return result

    @staticmethod
    def order(labels: frozenset[str], x: Tensor, y: Tensor, others: list[Tensor],
              following: tuple[int, int] | None, out: Tensor, sizes: dict[str, int]) -> tuple[str, ...]:
        """The mode order of an intermediate with the fewest transposes (orders.py)."""
        other = None
        if following is not None and len(others) == 1:
            other = others[0].labels
        return choose_order(labels, [x.labels, y.labels], other, out.labels if other else None, sizes)

    def step(self, inputs: list[Tensor], out: Tensor, alpha: Any, beta: Any, sizes: dict[str, int]) -> None:
        """One collective when one fits (gemm, gemv, ger, hadamard, axpby, sum), else a foreach."""
        fn = self.fn
        broadcast = any(not any(t.has(label) for t in inputs) for label in out.labels)
        if not broadcast and out.labels:
            if len(inputs) == 2 and emit_pair(fn, inputs[0], inputs[1], out, sizes, alpha, beta):
                return
            if len(inputs) == 1 and emit_unary(fn, inputs[0], out, sizes, alpha, beta):
                return
        emit_direct(fn, inputs, out, sizes, self.element, self.value(alpha, 1), self.value(beta, 0))

    def value(self, x: Any, none_when: float) -> Value | None:
        """A scalar as a value for the general step; None where it means the default."""
        if isinstance(x, Value):
            return x
        if x == none_when:
            return None
        return self.fn.constant(x, self.element)


def _same(access: Access, target: Access) -> bool:
    """Does `access` name the target with the same labels in the same order?"""
    return access.name == target.name and access.labels == target.labels


def _last_uses(checked: Checked) -> dict[str, int]:
    """The last statement (numbered from 1) that reads or writes each temporary."""
    last: dict[str, int] = {}
    for number, info in enumerate(checked.statements, 1):
        s = info.statement
        if not info.live:
            continue
        for name in [s.target.name] + [a.name for t in s.terms for a in t.tensors]:
            if not checked.tensors[name].argument:
                last[name] = number
    return last

