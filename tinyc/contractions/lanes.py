"""The batch on the lanes: kernels for layouts whose batch mode is the fastest.

NumPy's C order puts a trailing batch label (`ikb`) at stride 1, and so does
Fortran order for a leading one (`bik`). Then a work-group that takes one
entry reads every element with a stride; the natural mapping is the other:

    func @einsum(...) attributes {work_group_size=[SG, 1], subgroup_size=SG} {
      %g = builtin.group_id
      %nb = size %out[0]                  ; the batch label's size (a `?` mode)
      %base = arith.mul %g, CHUNK         ; this work-group's chunk of entries
      gemm ... %t0                        ; products of shared operands, once per work-group
      %s1 = alloca : memref<T x CHUNK x ..., local>   ; per-entry intermediates, entry-fastest
      parallel {
        %lane = builtin.subgroup_local_id
        ...                               ; each step on the lanes (lanestep.py)
      }
    }

One subgroup per work-group; lane l handles entries base + e·SG + l, so
every store and every load of a batched tensor whose batch is at stride 1 is
SG consecutive elements (a small operand may hold it at another stride: GATHER_SHARE),
and an operand the batch shares is read at one address by all lanes. Other dynamic
labels (a second batch mode) are on the group id, as whole chunks.

The chunk is chosen so that a chunk's data stays in the L2 cache while the
register blocks of a step pass over it (CHUNK_BYTES), and its per-entry
intermediates fit local memory (SLOT_BYTES).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from tinyc.builder import Program, index
from tinyc.contractions.kernel_parts import Memory, dynamic_sizes, emit_steps, kernel_parameters, unique_names
from tinyc.contractions.layout import Layout
from tinyc.contractions.lanestep import BLOCK, LANE, Chunk, LaneTensor, Scaling, emit_lane_step, per_entry
from tinyc.contractions.plan import Plan, make_steps
from tinyc.contractions.tensors import Tensor, divisor, least, view

SUBGROUP_BYTES = 64
"""A subgroup's vector of one element per lane: 16 f32, 8 f64 or c32, 4 c64 (512 bits)."""
CHUNK_BYTES = 4 << 20
MAX_CHUNK = 512
SLOT_BYTES = 160 * 1024
SHARED_BYTES = 64 * 1024
GATHER_SHARE = 8
"""A lane plan may read one operand with the batch at a stride other than 1 (each lane's
element from its own cache line: a gather) when it holds at most 1/GATHER_SHARE of the
elements per entry that the stride-1 tensors (the output, the other operands) hold.
Measured through tinyc.einsum against one entry per work-group, 2,000 and 20,000 entries:
`ijb,jb->ib` (C-order matrix, Fortran-order vector; shares 1/9 to 1/33) 1.4-5.7x faster;
a larger gathered share lost: `bij->b` 3-10x, `ik,kjb->ijb` with a Fortran-order 15x10
B 1.5-3x, `ikb,kjb->ijb` with a Fortran-order B 1.3-1.6x; two gathered operands
(`bij,bjk->ikb` in C order) up to 17%."""

"""Local memory for products of shared operands (made once per work-group)."""


@dataclass(frozen=True)
class Lanes:
    """The lane mapping of a plan: the batch label on the lanes, lanes per subgroup, chunk."""

    label: str
    sg: int
    chunk: int
    budget: int = BLOCK   # accumulators per register block
    ksplit: int | None = None   # summed rows per pass over the chunk (0: all at once; None: automatic)


def lane_plan(inputs: Sequence[Layout], output: Layout, sizes: dict[str, int], scale: int,
              dynamic: frozenset[str], itemsize: int, chunk: int | None = None,
              budget: int | None = None, ksplit: int | None = None) -> Plan | None:
    """A plan with the batch on the lanes, or None when the layout does not suit it: no
    dynamic label of stride 1 in the output, or operands that hold it at another stride
    where gathers do not pay (GATHER_SHARE).

    The plan's steps see the lane label as a mode of the chunk's size (like a tile), so
    products of shared operands are costed once per chunk and made first when that pays."""
    lane = next((label for label in sorted(dynamic) if output.stride_of(label) == 1), None)
    if lane is None or not _gathers_pay(inputs, output, lane):
        return None
    groups = [lane, *sorted(dynamic - {lane}, key=output.stride_of)]
    sg = max(1, SUBGROUP_BYTES // itemsize)
    if chunk is None:
        entry = make_steps(inputs, output, sizes, scale, groups)
        chunk = _chunk(entry, inputs, lane, sg, itemsize)
    plan = make_steps(inputs, output, sizes, scale, groups, chunk)
    step_sizes = plan.step_sizes
    slots = sum(math.prod(step_sizes[label] for label in plan.tensors[s.output])
                for s in plan.steps if not s.invariant and s.output != plan.output_id)
    shared = sum(math.prod(step_sizes[label] for label in plan.tensors[s.output])
                 for s in plan.steps if s.invariant)
    if shared * itemsize > SHARED_BYTES or slots * itemsize > SLOT_BYTES:
        return None
    plan.lanes = Lanes(lane, sg, chunk, budget or BLOCK, ksplit)
    plan.dynamic = frozenset(dynamic)
    return plan


def _gathers_pay(inputs: Sequence[Layout], output: Layout, lane: str) -> bool:
    """At most one operand holds the lane label at a stride other than 1, and it is small
    beside the stride-1 tensors (GATHER_SHARE)."""
    def elements(t: Layout) -> int:
        return math.prod(n for label, n in zip(t.labels, t.shape) if label != lane)

    gathered = [t for t in inputs if lane in t.labels and t.stride_of(lane) != 1]
    if not gathered:
        return True
    contiguous = elements(output) + sum(elements(t) for t in inputs if lane in t.labels and t.stride_of(lane) == 1)
    return len(gathered) == 1 and elements(gathered[0]) * GATHER_SHARE <= contiguous


def _chunk(entry: Plan, inputs: Sequence[Layout], lane: str, sg: int, itemsize: int) -> int:
    """Entries per work-group: a chunk's batched data in CHUNK_BYTES, its per-entry
    intermediates in SLOT_BYTES; a multiple of the subgroup size."""
    sizes = entry.sizes
    slots = sum(per_entry(entry.tensors[s.output], sizes)
                for s in entry.steps if not s.invariant and s.output != entry.output_id) * itemsize
    streamed = sum(per_entry(entry.tensors[k], sizes) for k, t in enumerate(inputs) if lane in t.labels)
    streamed = (streamed + per_entry(entry.tensors[entry.output_id], sizes)) * itemsize
    chunk = min(MAX_CHUNK, _floor_pow2(CHUNK_BYTES // max(streamed, 1)))
    if all(len(s.inputs) == 1 for s in entry.steps):   # streamed row by row: long rows
        chunk = MAX_CHUNK
    if slots:
        chunk = min(chunk, _floor_pow2(SLOT_BYTES // slots))
    return max(sg, chunk - chunk % sg)


def _floor_pow2(n: int) -> int:
    return 1 << max(0, n.bit_length() - 1)


def build_lane_kernel(spec, prog: Program) -> None:
    """The kernel of a lane plan (`spec.plan.lanes`) as the one function of `prog`."""
    plan = spec.plan
    lanes: Lanes = plan.lanes
    names, params = kernel_parameters(spec)
    fn = prog.function(spec.name, params)
    fn.set_attribute("work_group_size", [lanes.sg, 1])
    fn.set_attribute("subgroup_size", lanes.sg)
    once = unique_names(params)
    whole = {name: Tensor(fn[name], t.labels) for name, t in zip(names + ["out"], spec.inputs + [spec.output])}
    gid = fn.group_id(name=once("g"))
    extents = dynamic_sizes(fn, whole["out"], {lanes.label, *plan.groups[1:-1]}, once)
    n = extents[lanes.label]
    others = plan.groups[1:]
    env: dict = {}
    if others:
        chunks = divisor(fn, fn.div(fn.add(n, lanes.chunk - 1), lanes.chunk), name=once("chunks"))
        rest = fn.div(gid, chunks)
        chunk_id = fn.rem(gid, chunks, name=once("chunk"))
        for label in others[:-1]:
            split_by = divisor(fn, extents[label])
            env[label] = fn.rem(rest, split_by)
            rest = fn.div(rest, split_by)
        env[others[-1]] = rest
    else:
        chunk_id = gid
    base = fn.mul(chunk_id, lanes.chunk, name=once("base"))
    tensors = {k: view(fn, whole[name], env) for k, name in enumerate(names)}
    tensors[plan.output_id] = view(fn, whole["out"], env)
    labels_of = {k: t.labels for k, t in tensors.items()}
    memory = Memory(fn, spec, labels_of, None, {}, once)
    invariant = [s for s in plan.steps if s.invariant]
    variant = [s for s in plan.steps if not s.invariant]
    lane_tensors = {k: _lane_tensor(t, lanes.label) for k, t in tensors.items()}
    for step in variant:
        if step.output != plan.output_id:
            labels = tuple(sorted(plan.tensors[step.output] - {lanes.label}))
            slot_type = _slot_type(spec.compute, lanes.chunk, [plan.sizes[label] for label in labels])
            value = fn.alloca(slot_type, name=once(f"s{step.output - len(names)}"))
            lane_tensors[step.output] = LaneTensor(value, (LANE, *labels), slot=True)
    scaled = not spec.plain
    beta_is_zero = fn.eq(fn["beta"], 0, name=once("beta0")) if scaled else None
    final = Scaling(fn["alpha"] if scaled else None, fn["beta"] if scaled else None, beta_is_zero, spec.relu)
    with fn.if_(fn.lt(base, n)) as live:   # past the last entry a work-group does nothing at all
        with live.then():
            shared = memory.make(invariant, plan.step_sizes)
            tensors.update(shared)
            lane_tensors.update({k: _lane_tensor(t, lanes.label) for k, t in shared.items()})
            emit_steps(fn, spec, tensors, invariant, plan.step_sizes)
            left = fn.sub(n, base, name=once("left"))
            vectors = least(fn, fn.div(fn.add(left, lanes.sg - 1), lanes.sg), lanes.chunk // lanes.sg,
                            name=once("vectors"))
            full = least(fn, fn.div(left, lanes.sg), lanes.chunk // lanes.sg, name=once("full"))
            with fn.parallel():
                lane_id = fn.cast(fn.subgroup_local_id(), index, name=once("lane"))
                chunk = Chunk(base, lane_id, n, lanes.sg, lanes.chunk, lanes.budget, vectors, lanes.ksplit, full)
                for step in variant:
                    emit_lane_step(fn, [lane_tensors[t] for t in step.inputs], lane_tensors[step.output],
                                   plan.sizes, chunk, spec.compute,
                                   final if step.output == plan.output_id else None)
            memory.release(shared)
    for step in variant:
        if step.output != plan.output_id:
            fn.lifetime_stop(lane_tensors[step.output].value)


def _lane_tensor(t: Tensor, lane: str) -> LaneTensor:
    return LaneTensor(t.value, tuple(LANE if label == lane else label for label in t.labels))


def _slot_type(element, chunk: int, shape: list[int]):
    from tinyc.builder import memref

    return memref(element, chunk, *shape, local=True)
