"""A plan → one tensor-language kernel, built with `tinyc.builder`.

    func @einsum(%alpha: T, %beta: T, %A: memref<Tx8x16x?>, ..., %out: memref<...>) {
      %g = builtin.group_id               ; batch labels from the group id (div/rem)
      %nb = size %out[2]                  ; the size of a dynamic (batch) label
      %a = subview %A[:, :, %g]           ; this work-group's slices
      %t0 = alloca : memref<T x..., local>   ; intermediates, in local memory when they fit
      gemm.n.t ...                        ; the steps (collectives.py, direct.py)
      gemm.n.n %alpha, ..., %beta, %o     ; the last step writes the output
      foreach ... max(x, 0)               ; the relu epilogue, if asked for
    }

Intermediates that do not fit in local memory get slices of a global
scratch argument instead (`%scratch`, one slice per work-group).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from tinyc.builder import FunctionBuilder, Program, Value, memref
from tinyc.contractions.collectives import emit_pair, emit_unary
from tinyc.contractions.direct import emit_direct, emit_relu
from tinyc.contractions.layout import Layout
from tinyc.contractions.orders import choose_order
from tinyc.contractions.plan import Plan
from tinyc.contractions.tensors import Tensor, least, view
from tinyc.ir.types import ScalarType

LOCAL_BUDGET = 96 * 1024
"""Bytes of intermediates per work-group kept in local memory; more go to global scratch."""


@dataclass
class KernelSpec:
    """Everything the kernel depends on (and nothing it does not)."""

    inputs: list[Layout]
    output: Layout
    plan: Plan
    compute: ScalarType       # element type of the operands and intermediates
    result: ScalarType        # element type of the output
    relu: bool = False
    name: str = "einsum"
    plain: bool = False       # alpha = 1 and beta = 0 as constants (the plain einsum call)
    names: list[str] | None = None   # the operands' parameter names (default A, B, ...)


def operand_names(n: int) -> list[str]:
    return [chr(ord("A") + k) for k in range(n)] if n <= 26 else [f"in{k}" for k in range(n)]


def _memref(element: ScalarType, t: Layout):
    """The memref type of a tensor: `?` for its dynamic sizes and the strides after them."""
    return memref(element, *t.type_shape(), stride=t.type_strides())


def scratch_layout(spec: KernelSpec) -> tuple[int, dict[int, int]]:
    """Elements of global scratch per work-group and the offset of each intermediate in it;
    (0, {}) when all intermediates fit the local-memory budget."""
    plan = spec.plan
    if plan.lanes is not None:   # intermediates in local memory, per entry (lanes.py)
        return 0, {}
    counts = {s.output: math.prod(plan.step_sizes[label] for label in s.labels)
              for s in plan.steps if s.output != plan.output_id}
    if sum(counts.values()) * spec.compute.size <= LOCAL_BUDGET:
        return 0, {}
    offsets, total = {}, 0
    for tid, count in counts.items():
        offsets[tid] = total
        total += count
    return total, offsets


def kernel_parameters(spec: KernelSpec) -> tuple[list[str], dict]:
    """The operands' names and the kernel's parameters: alpha, beta, operands, out."""
    names = spec.names or operand_names(len(spec.inputs))
    params = {"alpha": spec.compute, "beta": spec.result}
    for name, t in zip(names, spec.inputs):
        params[name] = _memref(spec.compute, t)
    params["out"] = _memref(spec.result, spec.output)
    return names, params


def build_kernel(spec: KernelSpec) -> Program:
    """The kernel of `spec` as a built program with one function."""
    plan = spec.plan
    prog = Program("<einsum>")
    if plan.lanes is not None:
        from tinyc.contractions.lanes import build_lane_kernel

        build_lane_kernel(spec, prog)
        return prog
    names, params = kernel_parameters(spec)
    scratch_elements, offsets = scratch_layout(spec)
    if scratch_elements:
        params["scratch"] = memref(spec.compute, scratch_elements, None)
    fn = prog.function(spec.name, params)
    once = unique_names(params)
    whole = {name: Tensor(fn[name], t.labels) for name, t in zip(names + ["out"], spec.inputs + [spec.output])}
    gid = fn.group_id(name=once("g")) if plan.groups or scratch_elements else None
    if plan.tile:
        used = {plan.groups[0], *plan.groups[1:-1]}
    else:
        used = set(plan.groups) if plan.block > 1 else set(plan.groups[:-1])
    extents = dynamic_sizes(fn, whole["out"], plan.dynamic & used, once)
    scratch = None
    if scratch_elements:
        scratch = fn.subview(fn["scratch"], (slice(None), gid), name=once("s"))
    fixed = set(plan.groups[1:] if plan.tile else plan.groups)   # labels a work-group fixes
    labels_of = {k: tuple(label for label in whole[name].labels if label not in fixed)
                 for k, name in enumerate(names)}
    labels_of[plan.output_id] = tuple(label for label in spec.output.labels if label not in fixed)
    memory = Memory(fn, spec, labels_of, scratch, offsets, once)
    shared = {k: whole[name] for k, name in enumerate(names) if not set(whole[name].labels) & set(plan.groups)}
    invariant = [s for s in plan.steps if s.invariant]
    shared.update(memory.make(invariant, plan.step_sizes))
    emit_steps(fn, spec, shared, invariant, plan.step_sizes)
    variant = [s for s in plan.steps if not s.invariant]

    def body(env: dict, sizes: dict[str, int]) -> None:
        tensors = {k: view(fn, whole[name], env, name=once(name.lower() if len(name) == 1 else None))
                   for k, name in enumerate(names)}
        tensors[plan.output_id] = view(fn, whole["out"], env, name=once("o"))
        tensors.update(shared)
        made = memory.make(variant, sizes)
        tensors.update(made)
        emit_steps(fn, spec, tensors, variant, sizes)
        if plan.block == 1:
            memory.release(made)

    size_of = {**plan.sizes, **extents}
    if plan.tile:
        _tiled(fn, plan, gid, body, once, size_of)
    elif plan.block == 1:
        body(_split(fn, plan, gid, size_of), plan.sizes)
    else:  # several batch entries per work-group: a loop over this group's block
        total = _product(fn, [size_of[g] for g in plan.groups])
        first = fn.mul(gid, plan.block, name=once("first"))
        if isinstance(total, int) and total % plan.block == 0:
            count = plan.block
        else:  # the last block is short; work-groups past the end run nothing
            count = least(fn, fn.sub(total, least(fn, first, total)), plan.block, name=once("count"))
        with fn.for_(0, count) as loop:
            body(_split(fn, plan, fn.add(first, loop.var), size_of), plan.sizes)
    memory.release(shared)
    return prog


def unique_names(taken) -> Callable[[str | None], str | None]:
    """`once(name)`: the name the first time only, so value names stay unique (a short last
    tile repeats the body; an operand `G` would meet the group id `g`)."""
    named: set[str] = set(taken)

    def once(name: str | None) -> str | None:
        if name is None or name in named:
            return None
        named.add(name)
        return name

    return once


def dynamic_sizes(fn: FunctionBuilder, holder: Tensor, labels, once) -> dict[str, Value]:
    """The size of each dynamic label, read from a tensor that holds them all (`size`)."""
    return {label: fn.size(holder.value, holder.labels.index(label),
                           name=once(f"n{label}" if label.isalpha() and label.isascii() else None))
            for label in sorted(labels, key=holder.labels.index)}


def _product(fn: FunctionBuilder, factors: Sequence[int | Value]) -> int | Value:
    static = math.prod(f for f in factors if isinstance(f, int))
    result: int | Value = static
    for f in factors:
        if not isinstance(f, int):
            result = f if isinstance(result, int) and result == 1 else fn.mul(result, f)
    return result


def _split(fn: FunctionBuilder, plan: Plan, entry, size_of: dict, groups: Sequence[str] | None = None) -> dict:
    """A batch entry's number split into the batch labels (fastest first)."""
    groups = plan.groups if groups is None else groups
    if not groups:
        return {}
    env, rest = {}, entry
    for label in groups[:-1]:
        env[label] = fn.rem(rest, size_of[label])
        rest = fn.div(rest, size_of[label])
    env[groups[-1]] = rest
    return env


def _tiled(fn: FunctionBuilder, plan: Plan, gid, body, once, size_of: dict) -> None:
    """The first group label in tiles: this work-group's tile is a mode of size `tile`.
    A short last tile is its own static size (a second copy of the body); when the label
    is dynamic, its entries one by one (a loop of the body with the label of size 1)."""
    label = plan.groups[0]
    extent = size_of[label]
    if plan.groups[1:]:
        tiles = plan.tiles if isinstance(extent, int) else fn.div(fn.add(extent, plan.tile - 1), plan.tile,
                                                                  name=once("tiles"))
        tile = fn.rem(gid, tiles, name=once("tile"))
        env = _split(fn, plan, fn.div(gid, tiles), size_of, plan.groups[1:])
    else:
        tile, env = gid, {}
    first = fn.mul(tile, plan.tile, name=once("first"))
    if isinstance(extent, int) and not plan.remainder:
        body({**env, label: (first, plan.tile)}, plan.step_sizes)
        return
    if isinstance(extent, int):
        short = {**plan.step_sizes, label: plan.remainder}
        with fn.if_(fn.eq(tile, plan.tiles - 1)) as branch:
            with branch.then():
                body({**env, label: (first, plan.remainder)}, short)
            with branch.otherwise():
                body({**env, label: (first, plan.tile)}, plan.step_sizes)
        return
    with fn.if_(fn.le(fn.add(first, plan.tile), extent)) as branch:
        with branch.then():
            body({**env, label: (first, plan.tile)}, plan.step_sizes)
        with branch.otherwise():  # the short last tile (or past the end: nothing)
            rest = fn.sub(extent, least(fn, first, extent))
            with fn.for_(0, rest) as loop:
                body({**env, label: (fn.add(first, loop.var), 1)}, {**plan.step_sizes, label: 1})


class Memory:
    """Intermediates: local allocas (or global scratch slices) in the order orders.py picks."""

    def __init__(self, fn: FunctionBuilder, spec: KernelSpec, labels_of: dict[int, tuple[str, ...]],
                 scratch, offsets: dict[int, int], once):
        self.fn, self.spec, self.labels_of, self.once = fn, spec, dict(labels_of), once
        self.scratch, self.offsets = scratch, offsets
        self.consumer = {t: step for step in spec.plan.steps for t in step.inputs}

    def make(self, steps, sizes: dict[str, int]) -> dict[int, Tensor]:
        plan, found = self.spec.plan, {}
        for step in steps:
            if step.output == plan.output_id:
                continue
            reader = self.consumer.get(step.output)
            other, out = None, None
            if reader is not None and len(reader.inputs) == 2:
                partner = [t for t in reader.inputs if t != step.output][0]
                other = self.labels_of.get(partner, tuple(sorted(plan.tensors[partner])))
                out = self.labels_of.get(reader.output) if reader.output == plan.output_id else None
            labels = choose_order(step.labels, [self.labels_of[t] for t in step.inputs], other, out, sizes)
            self.labels_of[step.output] = labels
            found[step.output] = _intermediate(self.fn, self.spec, list(labels), sizes, self.scratch,
                                               self.offsets.get(step.output),
                                               self.once(f"t{step.output - len(self.spec.inputs)}"))
        return found

    def release(self, made: dict[int, Tensor]) -> None:
        """lifetime_stop for the local intermediates, so the next ones may reuse the memory."""
        for t in made.values():
            if t.value.type.space.value == "local":  # type: ignore[attr-defined]
                self.fn.lifetime_stop(t.value)



def emit_steps(fn: FunctionBuilder, spec: KernelSpec, tensors: dict[int, Tensor], steps,
                sizes: dict[str, int]) -> None:
    plan = spec.plan
    for step in steps:
        inputs = [tensors[t] for t in step.inputs]
        final = step.output == plan.output_id
        out = tensors[step.output]
        scaled = final and not spec.plain    # the kernel's alpha and beta arguments
        alpha = fn["alpha"] if scaled else 1
        beta = fn["beta"] if scaled else 0
        relu = final and spec.relu
        if len(inputs) == 2 and emit_pair(fn, inputs[0], inputs[1], out, sizes, alpha, beta):
            pass
        elif len(inputs) == 1 and emit_unary(fn, inputs[0], out, sizes, alpha, beta):
            pass
        else:
            emit_direct(fn, inputs, out, sizes, spec.compute, fn["alpha"] if scaled else None,
                        fn["beta"] if scaled else None, relu)
            relu = False
        if relu:
            emit_relu(fn, out, sizes)


def _intermediate(fn: FunctionBuilder, spec: KernelSpec, labels: list[str], sizes: dict[str, int],
                  scratch, offset: int | None, name: str) -> Tensor:
    shape = [sizes[label] for label in labels]
    if offset is None:
        value = fn.alloca(memref(spec.compute, *shape, local=True), name=name)
        return Tensor(value, tuple(labels))
    count = math.prod(shape)
    if not shape:
        return Tensor(fn.subview(scratch, [offset], name=name), ())
    flat = fn.subview(scratch, [(offset, count)], name=name if len(shape) == 1 else None)
    if len(shape) == 1:
        return Tensor(flat, tuple(labels))
    return Tensor(fn.expand(flat, 0, shape, name=name), tuple(labels))
