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

from typing import Sequence

from tinyc.builder import FunctionBuilder, Program, memref
from tinyc.contractions.kernel_parts import (  # noqa: F401 (importable here too: KernelSpec, ...)
    KernelSpec, Memory, dynamic_sizes, emit_steps, kernel_parameters, label_name, label_product,
    operand_names, scratch_layout, unique_names,
)
from tinyc.contractions.lanes import build_lane_kernel
from tinyc.contractions.plan import Plan
from tinyc.contractions.tensors import Tensor, divisor, least, view


def build_kernel(spec: KernelSpec) -> Program:
    """The kernel of `spec` as a built program with one function."""
    plan = spec.plan
    prog = Program("<einsum>")
    if plan.lanes is not None:
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
    by_group = set(plan.groups) | ({plan.cut_label} if plan.cut else set())
    shared = {k: whole[name] for k, name in enumerate(names) if not set(whole[name].labels) & by_group}
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
    split_by = {label: divisor(fn, size_of[label], name=once(label_name("d", label)))
                for label in (plan.groups[1:-1] if plan.tile else plan.groups[:-1])}
    if plan.tile:
        _tiled(fn, plan, gid, body, once, size_of, split_by)
    elif plan.block == 1:
        body(_split(fn, plan, gid, split_by), plan.sizes)
    else:  # several batch entries per work-group: a loop over this group's block
        total = label_product(fn, [size_of[g] for g in plan.groups])
        first = fn.mul(gid, plan.block, name=once("first"))
        if isinstance(total, int) and total % plan.block == 0:
            count = plan.block
        else:  # the last block is short; work-groups past the end run nothing
            count = least(fn, fn.sub(total, least(fn, first, total)), plan.block, name=once("count"))
        with fn.for_(0, count) as loop:
            body(_split(fn, plan, fn.add(first, loop.var), split_by), plan.sizes)
    memory.release(shared)
    return prog


def _split(fn: FunctionBuilder, plan: Plan, entry, split_by: dict, groups: Sequence[str] | None = None) -> dict:
    """A batch entry's number split into the batch labels (fastest first; `split_by`: each
    label's size, at least 1: tensors.divisor)."""
    groups = plan.groups if groups is None else groups
    if not groups:
        return {}
    env, rest = {}, entry
    for label in groups[:-1]:
        env[label] = fn.rem(rest, split_by[label])
        rest = fn.div(rest, split_by[label])
    env[groups[-1]] = rest
    return env


def _tiled(fn: FunctionBuilder, plan: Plan, gid, body, once, size_of: dict, split_by: dict) -> None:
    """The first group label in tiles: this work-group's tile is a mode of size `tile`.
    A short last tile is its own static size (a second copy of the body); when the label
    is dynamic, its entries one by one (a loop of the body with the label of size 1)."""
    label = plan.groups[0]
    extent = size_of[label]
    env: dict = {}
    if plan.cut:   # the piece of the cut label: the fastest factor of the group id
        piece = fn.rem(gid, plan.pieces, name=once("piece"))
        env[plan.cut_label] = (fn.mul(piece, plan.cut, name=once("from")), plan.cut)
        gid = fn.div(gid, plan.pieces)
    if plan.groups[1:]:
        tiles = plan.tiles if isinstance(extent, int) else divisor(
            fn, fn.div(fn.add(extent, plan.tile - 1), plan.tile), name=once("tiles"))
        tile = fn.rem(gid, tiles, name=once("tile"))
        env.update(_split(fn, plan, fn.div(gid, tiles), split_by, plan.groups[1:]))
    else:
        tile = gid
    first = fn.mul(tile, plan.tile, name=once("first"))
    if isinstance(extent, int) and not plan.remainder:
        body({**env, label: (first, plan.tile)}, plan.step_sizes)
        return
    if isinstance(extent, int):   # guarded by the tile's end (not `tile == tiles - 1`): the
        short = {**plan.step_sizes, label: plan.remainder}   # launch-bounds analysis sees it
        with fn.if_(fn.le(fn.add(first, plan.tile), extent)) as branch:
            with branch.then():
                body({**env, label: (first, plan.tile)}, plan.step_sizes)
            with branch.otherwise():
                body({**env, label: (first, plan.remainder)}, short)
        return
    with fn.if_(fn.le(fn.add(first, plan.tile), extent)) as branch:
        with branch.then():
            body({**env, label: (first, plan.tile)}, plan.step_sizes)
        with branch.otherwise():  # the short last tile (or past the end: nothing)
            rest = fn.sub(extent, least(fn, first, extent))
            with fn.for_(0, rest) as loop:
                body({**env, label: (fn.add(first, loop.var), 1)}, {**plan.step_sizes, label: 1})
