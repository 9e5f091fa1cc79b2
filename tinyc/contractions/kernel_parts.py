"""The pieces of a contraction kernel that both kernel shapes use: the plan's block/tile
kernel (emit.py) and the lane kernel (lanes.py) — its spec and parameters, unique value
names, the sizes of dynamic labels, and the steps with their intermediates (Memory)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from tinyc.builder import FunctionBuilder, Value, memref
from tinyc.contractions.collectives import emit_pair, emit_unary
from tinyc.contractions.direct import emit_direct, emit_relu
from tinyc.contractions.layout import Layout
from tinyc.contractions.orders import choose_order
from tinyc.contractions.plan import Plan
from tinyc.contractions.tensors import Tensor
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
    return {label: fn.size(holder.value, holder.labels.index(label), name=once(label_name("n", label)))
            for label in sorted(labels, key=holder.labels.index)}


def label_name(prefix: str, label: str) -> str | None:
    """A value's name after a label (%nb: the size of b), or None for a label that is no
    ASCII letter (the builder then numbers the value)."""
    return f"{prefix}{label}" if label.isascii() and label.isalpha() else None


def label_product(fn: FunctionBuilder, factors: Sequence[int | Value]) -> int | Value:
    static = math.prod(f for f in factors if isinstance(f, int))
    result: int | Value = static
    for f in factors:
        if not isinstance(f, int):
            result = f if isinstance(result, int) and result == 1 else fn.mul(result, f)
    return result


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
        if len(inputs) == 2 and emit_pair(fn, inputs[0], inputs[1], out, sizes, alpha, beta, plan.k_chunk):
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
