"""Which launches of a kernel stay inside its arguments: conditions on the sizes of a call.

One walk over a function (before its collectives are lowered) asks every
instruction where it addresses memory (`addressing()`) and which integers it
computes (`integer_facts()`). Each access becomes coordinates of its root
(memory_map.py) whose index expressions (index_values.py) are bounded over
the kernel's variables (symbolic_bounds.py): the group id, loop variables, lanes.
What is left is a `Condition` on the launch: an expression of the batch,
scalar arguments and `?` sizes that must not be negative, e.g.

    %A (memref<f32x8x?>) mode 1: 4·batch - 1 <= size - 1     (g*4 + i, i < 4)

Conditions that hold for every launch are dropped; the others are evaluated
for each call (tinyc/runtime/launch_check.py), which then knows the largest
batch the call's arguments can take. An access the analysis cannot bound (an
index loaded from memory, a loop without known bounds) is `unbounded`: the
compiler says so (a note in `tinyc check`, `KernelInfo.launch.unbounded`) and
the runtime launches such a kernel bounds-checked by default. The same walk
decides whether the batch can be split over devices (batch_split.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tinyc.analysis.batch_split import BatchSplit
from tinyc.analysis.index_values import IndexValues, type_range
from tinyc.analysis.memory_effects import EffectKind, direct_effects, root_of
from tinyc.analysis.memory_map import Coordinate, Mapped, argument, derive, group_count, local, member
from tinyc.analysis.symbolic import ONE, ZERO, Expr, Sym, node, only_node, simplify
from tinyc.analysis.symbolic_bounds import Unbounded
from tinyc.ir.addressing import NO_ADDRESSING, NO_INTEGER_FACTS, Footprint, IntegerFacts, MemberView
from tinyc.ir.core import Function, Instruction, Region, Value
from tinyc.ir.instructions import BuiltinName
from tinyc.ir.types import GroupType, MemrefType, ScalarType


@dataclass(frozen=True)
class Condition:
    """`slack` >= 0 must hold for a launch (an expression of launch symbols).

    `reach` and `limit` say it in words: an index reaching `reach` in a mode of
    `limit` entries (kind "upper"), down to `reach` (kind "lower"), a value
    (`reach`) that must fit a type ("fits"), two sizes that must be equal ("rule").
    """

    slack: Expr
    kind: str
    reach: Expr
    limit: Expr | None
    param: int | None  # the argument concerned (None: local memory, arithmetic)
    subject: str  # "%A (memref<f32x8x?>)", "local %tmp", "i32 arithmetic"
    detail: str  # "mode 1", "modes 0..1", "the member index"
    site: str  # "17.5 subview"


@dataclass(frozen=True)
class Note:
    """An access the compiler cannot bound, where and why."""

    line: int
    column: int
    end_column: int
    message: str
    span: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class WriteBlock:
    """Work-group g writes argument `param` only in entries [step·g, step·g + step) of `modes`
    (one mode, or several flattened, the first fastest: the batch labels an entry's number
    is split into by rem and div), at a launch where every `slacks` expression is >= 0 (they
    bound the part of each write's index beside step·g to [0, step)): a kernel that gives
    each work-group a chunk of the batch (step 1: the group id indexes the mode). `tinyc run
    --check` compares the chunks of sampled work-groups of such an argument (harness/check.py)."""

    param: int
    modes: tuple[int, ...]
    step: int
    slacks: tuple[Expr, ...]


@dataclass(frozen=True)
class LaunchBounds:
    """What the compiler knows about the launches of one kernel (module docs)."""

    conditions: tuple[Condition, ...]
    unbounded: tuple[Note, ...] = ()
    batch_split_problem: str | None = None
    symbols: frozenset[Sym] = field(default_factory=frozenset)  # what the conditions read
    last_groups: tuple[Expr, ...] = ()
    """The last work-group that can access an argument, per access (the group id's bound
    where it runs: `batch - 1` unless a guard or an empty loop stops later work-groups)."""
    write_blocks: tuple["WriteBlock", ...] = ()
    """The arguments each work-group writes in a chunk of its own (WriteBlock)."""
    repeated_writes: tuple[str, ...] = ()
    """The arguments (names) a kernel that reads neither the group id nor the group count
    writes (plain, not atomic adds): all its work-groups repeat one another's work on the
    same elements, so more than one of them only races (`tinyc run --batch`: harness)."""

    @property
    def bounded(self) -> bool:
        """Whether every access is bounded (else the kernel runs bounds-checked by default)."""
        return not self.unbounded

    def extents(self, batch: int) -> dict[tuple[int, int], int]:
        """The least size of each argument's `?` mode ((parameter, mode); mode -1: a group's
        member count) for `batch` useful work-groups (`tinyc run` sizes its random arguments
        so): batch_extents.py."""
        from tinyc.analysis.batch_extents import extents

        return extents(self, batch)


def launch_bounds(fn: Function, options: Any = None) -> None:
    """The pipeline's step (tinyc/passes): analyse `fn` before its collectives are lowered
    and keep the result for codegen's KernelInfo (`fn.launch_bounds`); the IR is unchanged."""
    fn.launch_bounds = analyse(fn)


def launch_notes(program: Any) -> list:
    """`tinyc check`'s notes: every access of a checked program the compiler cannot bound."""
    from tinyc.diagnostics import Diagnostic

    found = []
    for fn in program.functions:
        found += [Diagnostic(n.message, n.span, severity="note") for n in unbounded_accesses(fn)]
    return found


def unbounded_accesses(fn: Function) -> tuple[Note, ...]:
    """`analyse(fn).unbounded` alone: the same walk, without keeping its conditions or
    deciding the batch split (half the time of a long function)."""
    walk = _Walk(fn, conditions=False)
    walk.region(fn.body)
    return tuple(walk.notes)


def analyse(fn: Function) -> LaunchBounds:
    """The launch conditions of a function (module docs)."""
    walk = _Walk(fn)
    walk.region(fn.body)
    written: set[Value | None] = set()
    stored: set[Value | None] = set()   # plain writes (not atomic adds)
    grouped = False                     # the group id or the group count is read
    for inst in fn.walk():
        for e in direct_effects(inst):
            if e.kind is not EffectKind.READ:
                written.add(e.obj.root)
                if e.kind is EffectKind.WRITE:
                    stored.add(e.obj.root)
        op = inst.integer_facts().value
        grouped = grouped or (op is not None and op.op in _GROUP_BUILTINS)
    problem = walk.split.problem(set(fn.args) if None in written else written)
    conditions = tuple(walk.conditions.values())
    symbols = frozenset(s for c in conditions for s in c.slack.symbols())
    blocks = () if walk.blind_writes else tuple(
        WriteBlock(param, modes, step, tuple(dict.fromkeys(slacks)))
        for param, (modes, step, slacks) in walk.blocks.items() if step)
    repeated = () if grouped else tuple(   # (a write whose root is unknown may be to any argument)
        f"%{a.name}" for a in fn.args if not isinstance(a.type, ScalarType) and (a in stored or None in stored))
    return LaunchBounds(conditions, tuple(walk.notes), problem, symbols, tuple(walk.last_groups), blocks,
                        repeated)


_GROUP_BUILTINS = frozenset((BuiltinName.GROUP_ID.value, BuiltinName.GROUP_SIZE.value))
"""What a work-group reads to tell itself from the others along the batch."""


def _joined(coordinates: list[Coordinate]) -> list[tuple[Coordinate, list[Expr]]]:
    """The coordinates of one access, with two indexed rem(x, d) and div(x, d) (d: the first
    one's size, or max(size, 1)) joined into one coordinate indexed x over both modes (the
    first fastest), repeatedly: a batch entry's number split into its labels. Each comes
    with what a launch must satisfy for the join to hold (a size of at least 1)."""
    found = [(c, []) for c in coordinates if len(c.modes) == 1]
    while any(only_node(c.index) is not None for c, _ in found):
        for (low, slack), (high, more) in ((a, b) for a in found for b in found if a is not b):
            x = _split_by(low, high)
            if x is not None:
                joined = Coordinate(x[0], low.size * high.size, low.modes + high.modes)
                found = [f for f in found if f[0] is not low and f[0] is not high] + [(joined, slack + more + x[1])]
                break
        else:
            break
    return found


def _split_by(low: Coordinate, high: Coordinate) -> tuple[Expr, list[Expr]] | None:
    """x (and the launch's slack) if `low` is indexed rem(x, d) and `high` div(x, d) by low's size."""
    rem, div = only_node(low.index), only_node(high.index)
    if rem is None or div is None or rem.op != "rem" or div.op != "div" or rem.args != div.args:
        return None
    x, d = rem.args
    if d == low.size:
        return x, []
    if d == node("max", low.size, ONE):
        return x, [low.size - 1]
    return None


def _inside(c: Coordinate) -> bool:
    """A constant index into a static mode, inside it (the common case: nothing to check)."""
    index, size = c.index.constant, c.size.constant
    return index is not None and size is not None and 0 <= index < size


def _site(inst: Instruction) -> str:
    where = f" at {inst.span.line}.{inst.span.column}" if inst.span is not None else ""
    return f"`{inst.opname}`{where}"


class _Walk:
    def __init__(self, fn: Function, conditions: bool = True):
        self.fn = fn
        self.keeps_conditions = conditions  # False: only the notes are wanted
        self.params = {a: k for k, a in enumerate(fn.args)}
        self.groups: dict[Value, tuple[int, GroupType]] = {}
        self.maps: dict[Value, Mapped] = {}
        for k, a in enumerate(fn.args):
            if isinstance(a.type, MemrefType):
                self.maps[a] = argument(k, a.name or f"arg{k}", a.type)
            elif isinstance(a.type, GroupType):
                self.groups[a] = (k, a.type)
        attrs = fn.attrs
        wg = attrs.get("work_group_size")
        self.ints = IndexValues(tuple(wg) if wg else None, attrs.get("subgroup_size"), self._scalar, self._size)
        self.conditions: dict[tuple, Condition] = {}
        self._slacks: dict[Expr, tuple[Expr, bool]] = {}   # slack -> (simplified, holds for every launch)
        self.last_groups: dict[Expr, None] = {}  # the group id's upper bound where an argument is accessed
        self.notes: list[Note] = []
        self.split = BatchSplit(fn) if conditions else None
        # written argument -> (modes, step, slacks); step 0: none
        self.blocks: dict[int, tuple[tuple[int, ...], int, list[Expr]]] = {}
        self.blind_writes = 0  # writes whose coordinates are not known: no argument has a block

    # -- what the values say --------------------------------------------------------
    def _scalar(self, value: Value) -> Sym | None:
        k = self.params.get(value)
        limits = type_range(value.type) if isinstance(value.type, ScalarType) else None
        if k is None or limits is None:
            return None
        return Sym("scalar", (k, limits), limits[0])

    def _size(self, tensor: Value, mode: int) -> Expr | None:
        if tensor in self.groups:
            return group_count(*self.groups[tensor])
        mapped = self.maps.get(tensor)
        return mapped.sizes[mode] if mapped is not None and mode < len(mapped.sizes) else None

    # -- the walk ----------------------------------------------------------------------
    def region(self, region: Region) -> None:
        for inst in region.instructions:
            self.instruction(inst)

    def instruction(self, inst: Instruction) -> None:
        facts, addressing, results = inst.integer_facts(), inst.addressing(), inst.results
        if facts is NO_INTEGER_FACTS and addressing is NO_ADDRESSING and not inst.regions and (
                not results or not isinstance(results[0].type, MemrefType)):
            if self.split is not None:  # (float arithmetic: nothing else to follow)
                self.split.visit(inst, addressing, facts)
            return
        if facts.value is not None and results:
            self.ints.define(results[0], facts.value, inst)
        if addressing.loaded:
            self.ints.loaded(addressing.loaded, inst)
        if addressing.view is not None and results:
            self._view(inst, addressing.view)
        elif results and isinstance(results[0].type, MemrefType) and root_of(results[0]) is results[0]:
            result = results[0]  # local memory
            self.maps[result] = local(result.name or "tmp", result.type)
        for footprint in addressing.footprints:
            self._footprint(inst, footprint)
        if addressing.rules:
            self._rules(inst, addressing.rules)
        if self.split is not None:
            self.split.visit(inst, addressing, facts)
        if inst.regions:
            self._regions(inst, facts)

    def _regions(self, inst: Instruction, facts: IntegerFacts) -> None:
        """Each region in a scope of its own: its loop ranges, the guard that holds there, and
        what an `if` chooses from the regions' yields."""
        chosen: list[tuple] = []  # per region: what its yield hands to the results (`chooses`)
        for k, region in enumerate(inst.regions):
            self.ints.push()
            args = {id(a) for a in region.args}
            ranges = tuple(r for r in facts.ranges if id(r.var) in args)
            self.ints.enter_ranges(ranges)
            self.ints.region_arguments(region.args, {id(r.var) for r in ranges})
            guard = facts.guard
            if guard is not None and k in (guard.then, guard.otherwise):
                self.ints.guard(guard.condition, k == guard.then)
            self.region(region)
            if facts.chooses:
                chosen.append(self.ints.yielded(region.instructions[-1].operands if region.instructions else None))
            self.ints.pop()
        if facts.chooses:
            self.ints.choose(inst.results, chosen, facts.guard.condition if facts.guard else None)

    # -- views ---------------------------------------------------------------------------
    def _view(self, inst: Instruction, view: Any) -> None:
        result = inst.results[0]
        if isinstance(view, MemberView):
            found = self.groups.get(view.source)
            index = self.ints.of(view.index)
            if found is None or index is None:
                self._unbounded(inst, f"the member index: {self.ints.why(view.index)}")
                return
            param, group = found
            self._fits(inst, [view.index])
            subject = f"%{view.source.name} ({group})"
            c = Coordinate(index, group_count(param, group), (0,))
            if not _inside(c):
                self._bound(inst, c, subject, "the member index", param)
            self.maps[result] = member(param, view.source.name or f"arg{param}", group, index)
            return
        source = self.maps.get(view.source)
        if source is None:
            return
        mapped = derive(view, source, self.ints.of, self._fresh)
        if mapped is not None:
            self.maps[result] = mapped

    def _fresh(self, name: str, size: Expr) -> Expr:
        return Expr.atom(self.ints.variable(name, ZERO, size - 1))

    # -- accesses --------------------------------------------------------------------------
    def _footprint(self, inst: Instruction, footprint: Footprint) -> None:
        writes = self.keeps_conditions and footprint.kind is not EffectKind.READ  # (WriteBlock)
        if writes:
            self.blind_writes += 1  # until this write's coordinates are known (below)
        mapped = self.maps.get(footprint.operand)
        if mapped is None or mapped.to_root is None or footprint.modes is None:
            self._unbounded(inst, f"it accesses %{footprint.operand.name or '?'} where the compiler "
                                  f"cannot follow the memref")
            return
        ints = self.ints
        ints.push()
        try:
            indices = []
            for k, span in enumerate(footprint.modes):
                start = ints.of(span.start)
                if span.count == 1 and start is not None and not span.clipped:
                    indices.append(start)  # one entry (an element access: every mode of it)
                    continue
                size = mapped.sizes[k] if k < len(mapped.sizes) else None
                count = 1 if span.count == 1 else (ints.of(span.count) if span.count is not None else None)
                if span.clipped or (span.count is None and start is not None and start.constant == 0):
                    start, count = ZERO, size  # every entry of the mode at most
                elif count is None and start is not None and size is not None:
                    count = size - start
                if start is None or count is None:
                    part = span.start if start is None else span.count
                    self._unbounded(inst, f"the index of mode {k} of %{footprint.operand.name or '?'}: "
                                          f"{ints.why(part)}")
                    return
                indices.append(start if count == 1 else start + self._fresh("entry", count))
            if ints.fits:  # (no index value carries arithmetic to check yet: nothing to fit)
                self._fits(inst, [s for span in footprint.modes for s in (span.start, span.count)
                                  if s is not None])
            coordinates = mapped.to_root(indices)
            if coordinates is None:
                self._unbounded(inst, "the compiler cannot follow the view")
                return
            root = mapped.root
            if writes:
                self.blind_writes -= 1
                if root.param is not None:
                    self._note_block(root.param, coordinates)
            if self.keeps_conditions and root.param is not None and coordinates:
                self._useful_work()
            for c in coordinates:
                if _inside(c):
                    continue
                detail = f"mode {c.modes[0]}" if len(c.modes) == 1 else f"modes {c.modes[0]}..{c.modes[-1]}"
                self._bound(inst, c, f"{root.label} ({root.type_text})", detail, root.param)
        finally:
            ints.pop()

    def _note_block(self, param: int, coordinates: list[Coordinate]) -> None:
        """Narrow the chunk (WriteBlock) argument `param` is written in by this write: one mode
        (or modes split by rem and div: `_joined`) whose index is step·g plus a part that stays
        in [0, step) where the write runs."""
        g = self.ints.group_id
        found = None
        for c, slack in _joined(coordinates):
            step = c.index.terms.get((g,), 0)
            if step <= 0:
                continue
            rest = c.index - Expr.atom(g) * step
            if g in rest.variables():
                continue
            try:
                high, low = self.ints.upper(rest), self.ints.lower(rest)
            except Unbounded:
                continue
            found = (c.modes, step, [simplify(low), simplify(Expr.const(step - 1) - high), *slack])
            break
        known = self.blocks.get(param)
        if found is None or (known is not None and known[:2] != found[:2]):
            self.blocks[param] = ((), 0, [])
        elif known is None:
            self.blocks[param] = found
        else:
            known[2].extend(found[2])

    def _useful_work(self) -> None:
        """An access to an argument: the last work-group that gets here does useful work."""
        last = self.ints.bounds(self.ints.group_id)[1]
        if last is not None:
            self.last_groups[last] = None

    def _bound(self, inst: Instruction, c: Coordinate, subject: str, detail: str, param: int | None) -> None:
        """Conditions that `c.index` lies in [0, c.size) wherever the access runs (not known
        to at compile time)."""
        try:
            high, low = self.ints.upper(c.index), self.ints.lower(c.index)
        except Unbounded as why:
            self._unbounded(inst, f"{detail} of {subject}: {why}")
            return
        site = _site(inst)
        self._condition(c.size - 1 - high, "upper", high, c.size, param, subject, detail, site)
        self._condition(low, "lower", low, c.size, param, subject, detail, site)

    def _fits(self, inst: Instruction, operands: list) -> None:
        """The arithmetic behind these index operands must fit its types."""
        for fit in self.ints.fits_of([v for v in operands if isinstance(v, Value)]):
            limits = type_range(fit.type)
            if limits is None:
                continue
            try:
                high, low = self.ints.upper(fit.value), self.ints.lower(fit.value)
            except Unbounded as why:
                self._unbounded(inst, f"arithmetic in {fit.type}: {why}")
                continue
            subject, site = f"{fit.type} arithmetic", _site(fit.where)
            self._condition(limits[1] - high, "fits", high, Expr.const(limits[1]), None, subject,
                            "the value", site)
            self._condition(low - limits[0], "fits", low, Expr.const(limits[0]), None, subject,
                            "the value", site)

    def _rules(self, inst: Instruction, rules: tuple) -> None:
        """A collective's shape rule: its `?` sizes must agree (its lowering relies on it)."""
        for rule in rules:
            (i, m), (j, n) = rule.left, rule.right
            left, right = self._size(inst.operands[i], m), self._size(inst.operands[j], n)
            if left is None or right is None:
                self._unbounded(inst, f"the sizes its shape rule relates ({rule.what}) are not known")
                continue
            if left == right:
                continue
            site = _site(inst)
            self._condition(left - right, "rule", left, right, None, rule.what, "", site)
            self._condition(right - left, "rule", left, right, None, rule.what, "", site)

    def _condition(self, slack: Expr, *about: Any) -> None:
        """Keep Condition(slack, *about) unless it holds for every launch (made only then:
        most accesses are always inside)."""
        if not self.keeps_conditions:
            return
        k = slack.constant
        if k is not None and k >= 0:
            return
        known = self._slacks.get(slack)   # (most accesses of a kernel repeat a few slacks)
        if known is None:
            simple = simplify(slack)
            known = self._slacks[slack] = (simple, self.ints.holds_always(simple))
        slack, always = known
        if always:
            return
        condition = Condition(slack, *about)
        key = (condition.slack, condition.param, condition.subject, condition.detail)
        self.conditions.setdefault(key, condition)

    def _unbounded(self, inst: Instruction, why: str) -> None:
        span = inst.span
        line, column, end = (span.line, span.column, span.end_column) if span is not None else (0, 0, 0)
        self.notes.append(Note(line, column, end, f"`{inst.opname}`: the compiler cannot bound this access "
                                                  f"({why}); launches check it at run time", span))
