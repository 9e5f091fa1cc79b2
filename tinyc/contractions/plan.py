"""What the kernel of a contraction does, decided on labels alone.

1. **Batch modes → group id.** Output labels present in every operand are
   batch modes; each work-group takes one value of them (several are fused
   into one group-id range by div/rem), outermost first, as long as an entry
   keeps some work (an elementwise product keeps its innermost mode as a
   vector). Output labels no operand holds (the result is constant along
   them) go there too. When that leaves few work-groups for a large amount
   of work, the largest remaining output labels join them, so single big
   contractions still spread over the device.
   Work per work-group: when an operand lacks the first batch label (a
   matrix the batch shares), a work-group may take a *tile* of that label as
   one more mode of its steps — where that pays: a product of shared
   operands is then made once per tile, or the tile joins a gemm dimension.
   When the shared operand is large (a static GEMM spread over work-groups),
   the work-group also takes a *cut* of one more output label that operand
   holds: a 2-D tile of the output, so each work-group reads a slice of the
   shared operand instead of all of it.
   Otherwise entries with little work share a work-group (a loop over a
   block of entries).
2. **Pre-reductions.** A label held by one operand only and not by the
   output is summed out of that operand first (`sum`, or a loop of them).
3. **Pairwise steps** in the order `path.py` chooses by flop count; the last
   writes the output with alpha and beta, the others an intermediate. Steps
   over operands the batch does not index (shared matrices) are *invariant*:
   the kernel does them once per work-group, before its entries or tile.
4. A single operand is permuted and/or reduced into the output (axpby/sum).

Dynamic (batch) labels are always group labels: the plan is made on the
representative sizes of the layouts (layout.py), and `groups_for(sizes)`
counts the work-groups of a call from its real sizes.

How a step becomes instructions is `emit.py`'s business.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from tinyc.contractions.layout import Layout
from tinyc.contractions.path import contraction_path, step_labels

MIN_GROUPS = 64
"""Below this many work-groups, large work is spread further over output labels."""
MIN_WORK_PER_GROUP = 1 << 15
"""...but only while each work-group keeps at least this many multiply-adds."""
BLOCK_WORK = 2048
"""Batch entries with less work than this share a work-group (a loop over a block of
entries), up to MAX_BLOCK of them, so the per-work-group cost of the runtime is spread."""
MAX_BLOCK = 16
MAX_SHARED_BLOCK = 64
"""The largest tile of a batch label (entries per work-group sharing its operands' products)."""
CUT_ELEMENTS = 1 << 16
"""A shared operand this large is cut along one more output label (2-D tiles): read whole
by each of 64 work-groups it is 64 passes over the cache. 512² f32 `ij,jk->ik`: 1.6 ms in
column tiles of 8, 0.95 ms in 64 x 64 tiles (NumPy's BLAS: 1.4 ms)."""
MIN_CUT = 16
"""The smallest side of a 2-D tile: below it the gemm of a piece is too narrow."""
MIN_ENTRY_RESULTS = 16
"""A batch label shared by all operands joins the group id while a work-group entry keeps
at least this many results (or BLOCK_WORK multiply-adds): an elementwise or transposing
contraction keeps its inner modes inside the work-group, as vectors and matrices."""


@dataclass(frozen=True)
class Step:
    """inputs (tensor ids) → output tensor id; `labels` of the result (unordered set)."""

    inputs: tuple[int, ...]
    output: int
    labels: frozenset[str]
    invariant: bool = False  # no input depends on the batch: done once per work-group


@dataclass
class Plan:
    """The kernel on labels: group-id labels (fastest first) and the steps per work-group."""

    groups: list[str]
    steps: list[Step]
    tensors: list[frozenset[str]]  # labels per tensor id (operands first, then results)
    output_id: int
    sizes: dict[str, int]
    scale: int = 1  # product of summed labels that no operand holds (all broadcast)
    flops: int = 0  # multiply-adds of the whole batch
    block: int = 1  # batch entries per work-group, run by a loop
    tile: int = 0   # or: the first group label in tiles of this size, a mode of the steps
    cut_label: str = ""   # with a tile: an output label outside the groups, in pieces...
    cut: int = 0          # ...of this size (dividing it), the fastest factor of the group id
    dynamic: frozenset[str] = frozenset()  # group labels whose size is a kernel argument
    volumes: list[tuple[int, bool]] = field(default_factory=list)  # per step: multiply-adds, invariant
    shared: frozenset[int] = frozenset()  # operands without the group labels (shared by the batch)
    lanes: Any = None  # lanes.Lanes: the first group label on the lanes of a subgroup, in chunks
    k_chunk: int | None = None  # rows of a gemm's summed mode per chunk (None: the rule, 0: none)

    @property
    def n_entries(self) -> int:
        """Batch entries: the product of the group labels' sizes."""
        return math.prod(self.sizes[g] for g in self.groups)

    @property
    def tiles(self) -> int:
        """Tiles of the first group label (when tiled)."""
        return -(-self.sizes[self.groups[0]] // self.tile) if self.tile else 0

    @property
    def remainder(self) -> int:
        """Size of the last tile when it is short (0 when the tile divides the label)."""
        return self.sizes[self.groups[0]] % self.tile if self.tile else 0

    @property
    def pieces(self) -> int:
        """Pieces of the cut label (1 when there is no cut)."""
        return self.sizes[self.cut_label] // self.cut if self.cut else 1

    @property
    def n_groups(self) -> int:
        """Work-groups launched (at the plan's sizes): entries in blocks of `block`, or tiles
        times the other labels."""
        return self.groups_for(self.sizes)

    def flops_for(self, sizes: dict[str, int]) -> int:
        """Multiply-adds of a call with these label sizes."""
        entries = math.prod(sizes[g] for g in self.groups)
        per_entry = self.pieces / self.tile if self.tile else 1   # a variant step covers a tile (of a cut)
        groups = self.groups_for(sizes)
        return round(sum(v * (groups if invariant else entries * per_entry) for v, invariant in self.volumes))

    def groups_for(self, sizes: dict[str, int]) -> int:
        """Work-groups a call with these label sizes launches."""
        if self.lanes is not None:
            chunks = -(-sizes[self.lanes.label] // self.lanes.chunk)
            return chunks * math.prod(sizes[g] for g in self.groups[1:])
        if self.tile:
            tiles = -(-sizes[self.groups[0]] // self.tile)
            return tiles * self.pieces * math.prod(sizes[g] for g in self.groups[1:])
        return -(-math.prod(sizes[g] for g in self.groups) // self.block)

    @property
    def step_sizes(self) -> dict[str, int]:
        """Label sizes the steps of a work-group see (a tiled label: the tile; a cut one: the cut)."""
        if not self.tile:
            return self.sizes
        cut = {self.cut_label: self.cut} if self.cut else {}
        return {**self.sizes, self.groups[0]: self.tile, **cut}


def _per_group_cost(tensors: Sequence[frozenset[str]], keep: frozenset[str],
                    sizes: dict[str, int]) -> int:
    """Multiply-adds of one work-group along the chosen path (pre-reductions included)."""
    current = list(tensors)
    cost = 0
    if len(current) == 1:
        return math.prod(sizes[label] for label in current[0]) or 1
    for i, j in contraction_path(current, keep, sizes):
        x, y = current[i], current[j]
        others = current[:i] + current[i + 1:j] + current[j + 1:]
        cost += math.prod(sizes[label] for label in x | y)
        current = others + [step_labels(x, y, others, keep)]
    return cost


def _pre_reduced(tensors: list[frozenset[str]], keep: frozenset[str]) -> list[frozenset[str]]:
    out = []
    for k, t in enumerate(tensors):
        others: set[str] = set(keep)
        for j, o in enumerate(tensors):
            if j != k:
                others |= o
        out.append(frozenset(t & others) if len(tensors) > 1 else t)
    return out


def choose_groups(inputs: Sequence[Layout], output: Layout, sizes: dict[str, int],
                  dynamic: frozenset[str] = frozenset()) -> list[str]:
    """The labels on the group id, fastest (smallest output stride) first; the dynamic
    labels always among them."""
    held = [frozenset(t.labels) for t in inputs]
    out = frozenset(output.labels)

    def cost(gs: set[str]) -> tuple[int, int]:
        n = math.prod(sizes[g] for g in gs)
        local = [h - gs for h in held]
        return n, _per_group_cost(_pre_reduced(local, out - gs), out - gs, sizes)

    def volume(gs: set[str]) -> int:
        return math.prod(sizes[label] for label in out - gs)

    groups = {label for label in out if not any(label in h for h in held)}  # constant along it
    groups |= dynamic
    batch = sorted((label for label in out if held and all(label in h for h in held)),
                   key=lambda g: -output.stride_of(g))
    for label in batch:  # outermost first, while an entry keeps a vector of results or real work
        wider = groups | {label}
        if volume(wider) < MIN_ENTRY_RESULTS and cost(wider)[1] < BLOCK_WORK:
            break
        groups = wider
    n, work = cost(groups)
    while n < MIN_GROUPS and work > MIN_WORK_PER_GROUP:
        candidates = sorted(out - groups, key=lambda g: (-sizes[g], -output.stride_of(g)))
        if not candidates:
            break
        groups.add(candidates[0])
        n, work = cost(groups)
    return sorted(groups, key=output.stride_of)


def make_plan(inputs: Sequence[Layout], output: Layout, sizes: dict[str, int],
              summed_elsewhere: int = 1, dynamic: frozenset[str] = frozenset(),
              block: int | None = None, tile: int | None = None, cut: int | None = None,
              k_chunk: int | None = None) -> Plan:
    """The plan for operands `inputs` (memref layouts) into `output`; `block`, `tile` and
    `cut` override the choice of entries per work-group, `k_chunk` the rows per chunk of a
    large gemm (collectives.k_chunk) (the tuner's knobs; tile 0: no tiling; cut 0: no cut;
    k_chunk 0: one gemm)."""
    groups = choose_groups(inputs, output, sizes, dynamic)
    chosen = _tile(groups, inputs, sizes) if tile is None else (tile if _tile(groups, inputs, sizes) else 0)
    plan = None
    if chosen:
        plan = _make_plan(inputs, output, sizes, summed_elsewhere, groups, chosen)
        if tile is None and not _tiling_pays(plan, inputs, output):
            plan = None
    if plan is None:
        plan = _make_plan(inputs, output, sizes, summed_elsewhere, groups, 0)
        if block is not None:
            plan.block = block
            plan.flops = plan.flops_for(sizes)
    if cut or (cut is None and tile is None):
        plan = _cut_plan(plan, inputs, output, summed_elsewhere, dynamic, tile, cut) or plan
    plan.dynamic = frozenset(dynamic)
    plan.k_chunk = k_chunk
    return plan


def _tiling_pays(plan: Plan, inputs: Sequence[Layout], output: Layout) -> bool:
    """A tile helps when a shared product is made once per tile, or when the tiled label is a
    matrix mode of every step that reads it — alone in its class, or joined (fuse) to a
    neighbour of its class — instead of a loop over entries."""
    if any(step.invariant for step in plan.steps):
        return True
    label = plan.groups[0]
    layouts = {k: t for k, t in enumerate(inputs)}
    layouts[plan.output_id] = output
    for step in plan.steps:
        members = (*step.inputs, step.output)
        if not any(label in plan.tensors[t] for t in members):
            continue
        if len(step.inputs) == 2 and all(label in plan.tensors[t] for t in step.inputs):
            return False                                 # a batch of the pair: a loop anyway

        def pattern(x: str) -> tuple[bool, ...]:
            return tuple(x in plan.tensors[t] for t in members)

        peers = {x for t in members for x in plan.tensors[t] if x != label and pattern(x) == pattern(label)}
        held = [t for t in members if label in plan.tensors[t]]
        if peers and not _fusable_to_peer(plan, label, peers, held, layouts):
            return False
    return True


def _fusable_to_peer(plan: Plan, label: str, peers: set[str], held: Sequence[int],
                     layouts: dict[int, Layout]) -> bool:
    """The tiled label comes right after one same peer, with matching strides, everywhere, and
    no other peer has stride 1 there: that one would become a loop around strided gemms.
    Measured on `blki,kj->blji` (the batch tiled and fused to l, i of stride 1 looped): 3x
    (batch 2,000) to 6x (20,000) slower than no tile, which keeps i as the gemm's rows."""
    peer = None
    for t in held:
        if t not in layouts:
            return False                                 # an intermediate: no fixed layout
        lay = layouts[t]
        modes = [m for m in lay.labels if m not in plan.groups[1:]]
        pos = modes.index(label)
        if pos == 0 or modes[pos - 1] not in peers or peer not in (None, modes[pos - 1]):
            return False
        peer = modes[pos - 1]
        if lay.stride_of(peer) * lay.size_of(peer) != lay.stride_of(label):
            return False
        if any(p != peer and lay.stride_of(p) == 1 for p in peers if p in lay.labels):
            return False
    return True


def make_steps(inputs: Sequence[Layout], output: Layout, sizes: dict[str, int], summed_elsewhere: int,
               groups: list[str], tile: int = 0) -> Plan:
    """The steps of a work-group that fixes the `groups` labels (with `tile`: all but the
    first, which the steps see as a mode of that size) for another mapping of them."""
    return _make_plan(inputs, output, sizes, summed_elsewhere, groups, tile)


def _make_plan(inputs: Sequence[Layout], output: Layout, sizes: dict[str, int], summed_elsewhere: int,
               groups: list[str], tile: int, cut: tuple[str, int] | None = None) -> Plan:
    gset = frozenset(groups[1:] if tile else groups)        # labels each work-group fixes
    step_sizes = {**sizes, groups[0]: tile} if tile else sizes
    if cut:
        step_sizes[cut[0]] = cut[1]
    keep = frozenset(output.labels) - gset
    tensors = [frozenset(t.labels) - gset for t in inputs]
    invariant = [not (frozenset(t.labels) & frozenset(groups)) for t in inputs]
    steps: list[Step] = []
    live = list(range(len(tensors)))

    def new_tensor(labels: frozenset[str], fixed: bool) -> int:
        tensors.append(labels)
        invariant.append(fixed)
        return len(tensors) - 1

    if len(live) > 1:  # sum out labels only one operand holds
        for pos, tid in enumerate(list(live)):
            needed = set(keep)
            for other in live:
                if other != tid:
                    needed |= tensors[other]
            reduced = tensors[tid] & needed
            if reduced != tensors[tid]:
                rid = new_tensor(frozenset(reduced), invariant[tid])
                steps.append(Step((tid,), rid, frozenset(reduced), invariant[tid]))
                live[pos] = rid
    path = contraction_path([tensors[t] for t in live], keep, step_sizes)
    for i, j in path:
        x, y = live[i], live[j]
        others = live[:i] + live[i + 1:j] + live[j + 1:]
        labels = step_labels(tensors[x], tensors[y], [tensors[o] for o in others], keep)
        fixed = invariant[x] and invariant[y]
        rid = new_tensor(labels, fixed)
        steps.append(Step((x, y), rid, labels, fixed))
        live = others + [rid]
    output_id = new_tensor(keep, False)
    if steps and len(steps[-1].inputs) == 2 and live == [steps[-1].output]:
        steps[-1] = Step(steps[-1].inputs, output_id, keep)  # the last pair writes the output
    else:
        steps.append(Step((live[0],), output_id, keep))
    plan = Plan(groups, steps, tensors, output_id, dict(sizes), summed_elsewhere, tile=tile)
    if cut:
        plan.cut_label, plan.cut = cut
    plan.shared = frozenset(k for k, fixed in enumerate(invariant[:len(inputs)]) if fixed)

    def volume(step: Step) -> int:
        return math.prod(step_sizes[label] for label in set().union(*(tensors[t] for t in step.inputs)))

    if not tile and not _transposed_a(plan, inputs, output, gset, step_sizes):
        plan.block = choose_block(sum(volume(s) for s in steps if s.inputs), plan.n_entries)
    plan.volumes = [(volume(s), s.invariant) for s in steps if s.inputs]
    plan.flops = plan.flops_for(sizes)
    return plan


def _transposed_a(plan: Plan, inputs: Sequence[Layout], output: Layout, fixed: frozenset[str],
                  sizes: dict[str, int]) -> bool:
    """Does a step on operands write the output with a gemm whose A is transposed (both
    operands summed-label-fastest)? Its lowering works per entry: a loop of entries in one
    work-group was measured slower there (2x on 16x8x12 f32), so such plans keep one entry."""
    from tinyc.contractions.orders import gemm_transposes

    def labels(t: Layout) -> tuple[str, ...]:
        return tuple(label for label in t.labels if label not in fixed)

    for step in plan.steps:
        if len(step.inputs) == 2 and all(t < len(inputs) for t in step.inputs) and step.output == plan.output_id:
            x, y = (labels(inputs[t]) for t in step.inputs)
            if gemm_transposes(x, y, labels(output), sizes) >= 2:
                return True
    return False


def _tile(groups: Sequence[str], inputs: Sequence[Layout], sizes: dict[str, int]) -> int:
    """Tile size of the first group label when some operand is shared across it (0: no tiling).

    Then each work-group takes a tile of that label as one more mode of its steps: a shared
    operand's product is made once per tile, and the label can join a gemm dimension (fuse)
    instead of a loop over entries."""
    if not groups or all(groups[0] in t.labels for t in inputs):
        return 0
    n = sizes[groups[0]]
    most = min(MAX_SHARED_BLOCK, n // MIN_GROUPS)
    if most < 2:
        return 0
    for size in range(most, most // 2, -1):   # a tile that divides the label: no short tile
        if n % size == 0:
            return size
    return most


def _cut_plan(plan: Plan, inputs: Sequence[Layout], output: Layout, summed_elsewhere: int,
              dynamic: frozenset[str], tile: int | None, cut: int | None) -> Plan | None:
    """`plan` with 2-D tiles of the output (a tile of its first group label and a cut of
    another output label), or None where none applies: the tuner's (tile, cut), else the
    default when the shared operand is large (_cut_pays). Whole pieces only (a cut divides
    its label)."""
    if not plan.groups or plan.lanes is not None or all(plan.groups[0] in t.labels for t in inputs):
        return None
    label = _cut_label(plan, inputs, output, dynamic)
    if not label:
        return None
    sizes = plan.sizes
    if cut:
        tile_size, piece = tile or plan.tile, cut
    elif _cut_pays(plan, inputs):
        tile_size, piece = _cut_sizes(sizes[plan.groups[0]], sizes[label])
    else:
        return None
    if not tile_size or not piece or sizes[label] % piece:
        return None
    made = _make_plan(inputs, output, sizes, summed_elsewhere, plan.groups, tile_size, (label, piece))
    return made if cut or _tiling_pays(made, inputs, output) else None


def _cut_label(plan: Plan, inputs: Sequence[Layout], output: Layout, dynamic: frozenset[str]) -> str:
    """The output label to cut: outside the groups, static, held by an operand the tiled
    label does not index (the one each work-group reads whole); the largest ("": none).
    Static plans only: with a `?` tiled label, `tinyc run --batch N` could no longer size
    it from the group id's bounds (the tile is a quotient of it: launch_bounds.py)."""
    if dynamic:
        return ""
    label = plan.groups[0]
    held = set().union(*(t.labels for t in inputs if label not in t.labels))
    found = [x for x in output.labels if x in held and x not in plan.groups and plan.sizes[x] >= 2 * MIN_CUT]
    return max(found, key=lambda x: plan.sizes[x], default="")


def _cut_pays(plan: Plan, inputs: Sequence[Layout]) -> bool:
    """Cut when the operand each work-group reads whole is large (CUT_ELEMENTS), there is
    no other group label (a batch keeps the groups busy), and no step is invariant (a
    product made once per work-group would then be made once per piece)."""
    label = plan.groups[0]
    shared = [t for t in inputs if label not in t.labels]
    return (len(plan.groups) == 1 and not any(s.invariant for s in plan.steps)
            and any(math.prod(t.shape) >= CUT_ELEMENTS for t in shared))


def _cut_sizes(tiled: int, cut: int) -> tuple[int, int]:
    """(tile, cut): near-square pieces, at most MAX_SHARED_BLOCK on a side, at least
    MIN_CUT, each dividing its label; MIN_GROUPS of them, or as few as MIN_GROUPS / 4 where
    the output is too small for that (`ij,jk->ik` at 64 x 2048 x 64: 16 tiles of 16 x 16,
    not 64 work-groups that each read all of B for one column); (0, 0): none fits."""
    for wanted in (MIN_GROUPS, MIN_GROUPS // 2, MIN_GROUPS // 4):
        side = min(MAX_SHARED_BLOCK, math.isqrt(tiled * cut // wanted))
        tile = next((t for t in range(side, MIN_CUT - 1, -1) if tiled % t == 0), 0)
        if not tile:
            continue
        most = min(MAX_SHARED_BLOCK, tiled * cut // (tile * wanted))
        size = next((c for c in range(most, MIN_CUT - 1, -1) if cut % c == 0), 0)
        if size:
            return tile, size
    return 0, 0


def choose_block(work: int, entries: int) -> int:
    """Batch entries per work-group: enough for BLOCK_WORK multiply-adds, keeping
    MIN_GROUPS work-groups."""
    if work >= BLOCK_WORK or entries < 2 * MIN_GROUPS:
        return 1
    return max(1, min(MAX_BLOCK, -(-BLOCK_WORK // max(work, 1)), entries // MIN_GROUPS))
