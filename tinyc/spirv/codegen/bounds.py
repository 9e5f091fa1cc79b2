"""Bounds-checked kernels: every access and view checked against its memref, on the device.

Only the variant compiled with `check_bounds=True` has a `Bounds` in its
codegen context; the kernel then takes one more argument after the ABI's:
a report buffer of REPORT_WORDS int64 values (zeroed by the runtime).

* Element accesses (load, store, atomics, coopmatrix components) all go
  through `memref.element_address`, which asks `Bounds.access` whether the
  indices lie inside the memref's shape (one unsigned compare per mode, and
  the memref's `valid` flag). An access that does not is redirected to a
  scratch area in the report buffer (or, for local memory, to a small
  Workgroup scratch array), so it does not happen, and is noted.
* Views (subview, expand, fuse, load from a group) check their rule and
  carry the result in `MemrefDesc.valid`; an invalid view is noted where
  it is made, and every access through it is redirected.
* Collectives are guarded before lowering (passes/check_shapes.py): their
  lowered code (`lowered_from` set) is in bounds by construction and skipped
  here; the `if` around them records the failing shape rule.

In a dry run (`dry`, when addressing cannot depend on what the kernel
writes: tinyc/analysis/own_writes.py) writes to global memory are left out
(by writes.write, codegen's one write point), so the run only checks; the
runtime launches the plain kernel after it.

Each work-item notes its first violation in private variables, by selects
(no branch: `record`), and reports it at the kernel's end (`finish`). The
first report wins a compare-exchange on report[0] and writes, through one
small helper function per module: the site (an index into the kernel's
`bounds_sites`), the work-group, and up to LIMIT values, extra values and
bounds (indices and shape, offsets/sizes and shape, ...). Memrefs of more
than LIMIT modes report their first LIMIT modes.

Report layout (int64): [0] flag, [1] site, [2] work-group, [3] count,
[4:8] values, [8:12] extra, [12:16] bounds; bytes SCRATCH_OFFSET.. are the
global scratch area.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

from tinyc.ir.core import Instruction
from tinyc.ir.types import AddressSpace, MemrefType
from tinyc.signature import BoundsSite
from tinyc.spirv.codegen.context import Ctx, IndexLike, MemrefDesc
from tinyc.spirv.codegen.types import element_pointer
from tinyc.spirv.instruction import Id
from tinyc.spirv.spv import BuiltIn, MemoryAccess, Op, Scope, SelectionControl, StorageClass

REPORT_WORDS = 64
LIMIT = 4
SCRATCH_OFFSET = 256  # bytes; the scratch area holds 256 bytes (any element, twice over)
LOCAL_SCRATCH_BYTES = 256
FIELDS = {"flag": 0, "site": 1, "group": 2, "count": 3, "values": 4, "extra": 8, "bounds": 12}

Cond = Id | bool
NO_SITE = -1  # the first-violation site of a work-item that had none


class Bounds:
    """Per-kernel state of the checks: the report argument, sites, the recorder."""

    def __init__(self, ctx: Ctx, report: Id, dry: bool = False):
        self.ctx = ctx
        self.report = report
        self.dry = dry  # a dry run: global writes are left out (writes.py)
        self.sites: list[BoundsSite] = []
        self._site_ids: dict[tuple, int] = {}
        self._quiet = 0
        self._local_scratch: Id | None = None
        self._state: list[Id] | None = None   # the first violation (_first_violation)

    # -- sites ----------------------------------------------------------------------
    def site(self, inst: Instruction | None, kind: str, detail: str = "") -> int:
        """The index of the site (instruction and kind of check) in the kernel's table."""
        key = (id(inst), kind, detail)
        found = self._site_ids.get(key)
        if found is None:
            found = self._site_ids[key] = len(self.sites)
            self.sites.append(_describe(inst, kind, detail))
        return found

    def trusted(self) -> bool:
        """Code made by the lowering of a rule-checked collective: in bounds by construction."""
        return getattr(self.ctx.current, "lowered_from", None) is not None

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Accesses inside are guarded but not recorded (the caller records the whole block)."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    # -- conditions -------------------------------------------------------------------
    def both(self, a: Cond, b: Cond) -> Cond:
        if a is True or b is False:
            return b
        if b is True or a is False:
            return a
        return self.ctx.op(Op.LogicalAnd, self.ctx.bool, a, b)

    def as_id(self, cond: Cond) -> Id:
        """A bool id for a condition (constants made)."""
        if isinstance(cond, Id):
            return cond
        return self.ctx.m.const_bool(bool(cond))

    def below(self, value: IndexLike, size: IndexLike) -> Cond:
        """0 <= value < size, as one unsigned compare."""
        ctx = self.ctx
        if not isinstance(value, Id) and not isinstance(size, Id):
            return 0 <= int(value) < int(size)
        return ctx.op(Op.ULessThan, ctx.bool, ctx.as_id(value), ctx.as_id(size))

    def at_most(self, value: IndexLike, size: IndexLike) -> Cond:
        """0 <= value <= size (unsigned)."""
        ctx = self.ctx
        if not isinstance(value, Id) and not isinstance(size, Id):
            return 0 <= int(value) <= int(size)
        return ctx.op(Op.ULessThanEqual, ctx.bool, ctx.as_id(value), ctx.as_id(size))

    def equal(self, a: IndexLike, b: IndexLike) -> Cond:
        ctx = self.ctx
        if not isinstance(a, Id) and not isinstance(b, Id):
            return int(a) == int(b)
        return ctx.op(Op.IEqual, ctx.bool, ctx.as_id(a), ctx.as_id(b))

    def fits(self, offset: IndexLike, size: IndexLike, extent: IndexLike) -> Cond:
        """[offset, offset + size) lies in [0, extent), without overflow."""
        ctx = self.ctx
        if not any(isinstance(x, Id) for x in (offset, size, extent)):
            return 0 <= int(offset) and 0 <= int(size) and int(offset) + int(size) <= int(extent)
        room = ctx.op(Op.ISub, ctx.i64, ctx.as_id(extent), ctx.as_id(size))
        return self.both(self.at_most(size, extent), self.at_most(offset, room))

    def in_shape(self, desc: MemrefDesc, indices: Sequence[IndexLike]) -> Cond:
        ok: Cond = desc.valid
        for i, n in zip(indices, desc.shape):
            ok = self.both(ok, self.below(i, n))
        return ok

    # -- accesses -----------------------------------------------------------------------
    def access(self, desc: MemrefDesc, indices: Sequence[IndexLike], ptr: Id) -> Id:
        """The pointer to use for desc[indices]: ptr if in bounds, else the scratch area
        (recorded unless quiet)."""
        if self.trusted():
            return ptr
        ok = self.in_shape(desc, indices)
        if ok is True:
            return ptr
        if not self._quiet:
            self.record(ok, self.site(self.ctx.current, "access"), indices, (), desc.shape)
        scratch = self.scratch(desc.type)
        if ok is False:
            return scratch
        return self.ctx.op(Op.Select, self.ctx.m.value_type(ptr), ok, ptr, scratch)

    def scratch(self, memref: MemrefType) -> Id:
        """An element pointer into scratch memory of the memref's address space."""
        ctx, m = self.ctx, self.ctx.m
        target = element_pointer(m, memref)
        if memref.space is AddressSpace.LOCAL:
            if self._local_scratch is None:
                array = m.type_array(m.type_int(8), LOCAL_SCRATCH_BYTES)
                self._local_scratch = m.variable(m.type_pointer(StorageClass.Workgroup, array))
            return ctx.op(Op.Bitcast, target, self._local_scratch)
        bytes_ptr = m.type_pointer(StorageClass.CrossWorkgroup, m.type_int(8))
        base = ctx.op(Op.Bitcast, bytes_ptr, self.report)
        at = ctx.op(Op.InBoundsPtrAccessChain, bytes_ptr, base, ctx.const64(SCRATCH_OFFSET))
        return ctx.op(Op.Bitcast, target, at)

    # -- recording --------------------------------------------------------------------------
    def record(self, ok: Cond, site: int, values: Sequence[IndexLike], extra: Sequence[IndexLike],
               bounds: Sequence[IndexLike]) -> None:
        """Where `ok` is false: keep the site and values as this work-item's first violation
        (reported once, at the kernel's end: `finish`).

        Nothing here branches: the first violation is kept in private variables by selects.
        A branch around a recorder call, on a condition that is uniform and loop-invariant
        inside a lane-divergent `if`, made the CPU runtime's vectorizer run the call for
        lanes the `if` had switched off (a false report; tests/fuzz_regressions/checked/);
        an unconditional call per check (not inlined) was right but made checked kernels
        2-6x slower than the branches (benchmarks/bounds_overhead.md).
        """
        if ok is True:
            return
        ctx = self.ctx
        state = self._first_violation()
        fields = [ctx.const64(site), ctx.const64(len(values))]
        for seq in (values, extra, bounds):
            padded = [ctx.as_id(v) for v in list(seq)[:LIMIT]]
            fields += padded + [ctx.const64(0)] * (LIMIT - len(padded))
        i64 = ctx.i64
        noted = ctx.op(Op.Load, i64, state[0])
        take = ctx.op(Op.IEqual, ctx.bool, noted, ctx.const64(NO_SITE))  # nothing noted yet
        if ok is not False:
            take = ctx.op(Op.LogicalAnd, ctx.bool, take, ctx.op(Op.LogicalNot, ctx.bool, ok))
        olds = [noted] + [ctx.op(Op.Load, i64, var) for var in state[1:]]
        for var, value, old in zip(state, fields, olds):
            ctx.do(Op.Store, var, ctx.op(Op.Select, i64, take, value, old))

    def _first_violation(self) -> list[Id]:
        """Private variables: the site (NO_SITE: none yet), the count, values, extra, bounds."""
        if self._state is None:
            m = self.ctx.m
            ptr = m.type_pointer(StorageClass.Function, m.type_int(64))
            inits = [NO_SITE] + [0] * (1 + 3 * LIMIT)
            self._state = [self.ctx.fn.variable(ptr, self.ctx.const64(v)) for v in inits]
        return self._state

    def finish(self) -> None:
        """At the kernel's end: report this work-item's first violation, if it had one (the
        recorder tests it)."""
        if self._state is None:
            return
        ctx = self.ctx
        site, *fields = [ctx.op(Op.Load, ctx.i64, var) for var in self._state]
        ok = ctx.op(Op.IEqual, ctx.bool, site, ctx.const64(NO_SITE))
        group = ctx.builtin(BuiltIn.WorkgroupId, ctx.batch_axis)  # the batch's work-group
        ctx.op(Op.FunctionCall, ctx.m.type_void(), self._recorder(), ok, self.report, site, group, *fields)

    def _recorder(self) -> Id:
        """`void record(bool ok, long *report, long site, long group, long count, long v[4],
        e[4], b[4])`, once per module: where not ok, the first caller wins report[0] and
        writes the rest. Called once per work-item, at the kernel's end (outside every
        region, so its branch is in no lane-divergent `if`)."""
        m = self.ctx.m
        found = getattr(m, "_bounds_recorder", None)
        if found is not None:
            return found
        i64, boolean = m.type_int(64), m.type_bool()
        ptr = m.type_pointer(StorageClass.CrossWorkgroup, i64)
        fn = m.function(m.type_void(), [boolean, ptr] + [i64] * (3 + 3 * LIMIT), name="tinyc_bounds_record")
        entry, claim, write, done = fn.block(), fn.block(), fn.block(), fn.block()
        ok, report, *fields = fn.params
        entry.op(Op.SelectionMerge, done.label, SelectionControl.None_)
        entry.op(Op.BranchConditional, ok, done.label, claim.label)
        scope = m.const_int(int(Scope.Device), 32)
        relaxed = m.const_int(0, 32)
        old = claim.op(Op.AtomicCompareExchange, i64, report, scope, relaxed, relaxed,
                       m.const_int(1, 64), m.const_int(0, 64))
        first = claim.op(Op.IEqual, boolean, old, m.const_int(0, 64))
        claim.op(Op.BranchConditional, first, write.label, done.label)
        for k, value in enumerate(fields, start=1):
            slot = write.op(Op.InBoundsPtrAccessChain, ptr, report, m.const_int(k, 64))
            write.op(Op.Store, slot, value, MemoryAccess.Aligned, 8)
        write.op(Op.Branch, done.label)
        done.op(Op.Return)
        m._bounds_recorder = fn.id
        return fn.id


def _describe(inst: Instruction | None, kind: str, detail: str) -> BoundsSite:
    span = getattr(inst, "span", None)
    origin = getattr(inst, "lowered_from", None)
    if span is None and origin is not None:
        span = origin.span
    if span is None:
        return BoundsSite(kind, "", 0, 0, "", getattr(inst, "opname", "?"), detail)
    source = span.source
    text = source.line(span.line).strip() if source is not None else ""
    name = source.name if source is not None else "<string>"
    return BoundsSite(kind, name, span.line, span.column, text, getattr(inst, "opname", "?"), detail)
