"""Can a kernel's batch be cut into slices that run as separate launches?

The runtime splits `k(..., batch=N, device=[d0, d1])` (and MPI runs) into
contiguous slices [s, s + n) and launches each slice as a batch of its own,
with the batched arguments sliced along their batch mode: work-group g of a
slice sees `builtin.group_id` = g, not s + g. That gives the results of one
launch exactly when the group id is only ever used to pick a kernel's own
entry of a batched argument:

* every use of the group id (or a cast of it) picks a single entry of one
  mode of an argument: an index of an element access, the offset of a
  single-index mode of a subview, or a group's member index;
* every access to such a batched argument indexes the same mode with the
  group id (no other entries of the batch mode are touched, and `size` is
  not asked of that mode);
* `builtin.group_size` is not used (a slice would see its own count);
* every argument the kernel writes is batched: a written argument without a
  batch mode (an accumulation into a shared output) is updated by every
  work-group, so slices on different devices could not be combined.

`BatchSplit` follows the walk of launch_bounds.py (one walk for both) and
asks each instruction through `addressing()` and `integer_facts()`;
`problem()` gives None when all hold, else the first reason in words (the
runtime then runs such a kernel on one device, docs/scaling.md).
"""

from __future__ import annotations

from tinyc.ir.addressing import Addressing, IntegerFacts, MemberView, SliceView
from tinyc.ir.core import Function, Instruction, Value
from tinyc.ir.types import GroupType, MemrefType


def _where(inst: Instruction) -> str:
    return f" (line {inst.span.line})" if inst.span is not None else ""


class BatchSplit:
    """The facts of one function the split rules need (module docs)."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.tensors = {a for a in fn.args if isinstance(a.type, (MemrefType, GroupType))}
        self.group_ids: set[Value] = set()
        self.batched: dict[Value, int] = {}  # argument -> the mode its accesses index with the group id
        self.other_access: dict[Value, str] = {}  # argument -> an access without the group id
        self.sizes: dict[Value, dict[int, str]] = {}  # argument -> modes whose size is asked
        self.found: str | None = None

    def visit(self, inst: Instruction, addressing: Addressing, facts: IntegerFacts) -> None:
        if self.found is not None:
            return
        op = facts.value
        if op is not None and op.op == "group_size":
            self.found = (f"it uses builtin.group_size{_where(inst)}, which a slice of the batch "
                          f"would see as its own size")
            return
        if op is not None and (op.op == "group_id" or (op.op == "cast" and op.args[0] in self.group_ids)):
            self.group_ids.add(inst.results[0])
            return
        if not any(v in self.group_ids or v in self.tensors for v in inst.operands):
            return  # nothing this instruction does concerns the split
        picks = self._picks(addressing)  # (argument, mode, index value) of single entries picked
        counts = {}
        for v in inst.operands:
            counts[id(v)] = counts.get(id(v), 0) + 1
        gid_modes: dict[Value, list[int]] = {}
        for value in dict.fromkeys(inst.operands):
            if value not in self.group_ids:
                continue
            uses = [(t, m) for t, m, index in picks if index is value and t in self.tensors]
            if len(uses) != 1 or counts[id(value)] != 1:
                self.found = (f"the group id is used by `{inst.opname}`{_where(inst)} other than to pick "
                              f"an argument's batch entry")
                return
            tensor, mode = uses[0]
            gid_modes.setdefault(tensor, []).append(mode)
        accessed = [f.operand for f in addressing.footprints] + (
            [addressing.view.source] if addressing.view is not None else [])
        for value in dict.fromkeys(inst.operands):
            if value not in self.tensors:
                continue
            modes = gid_modes.get(value)
            if value in accessed and modes:
                known = self.batched.setdefault(value, modes[0])
                if known != modes[0] or len(modes) > 1:
                    self.found = f"the group id indexes more than one mode of %{value.name}{_where(inst)}"
                    return
            elif op is not None and op.op == "size":
                mode = op.args[1]
                self.sizes.setdefault(value, {}).setdefault(mode, f"`size` of mode {mode}{_where(inst)}")
            else:
                self.other_access.setdefault(value, f"`{inst.opname}`{_where(inst)}")

    @staticmethod
    def _picks(addressing: Addressing) -> list[tuple[Value, int, object]]:
        """The single entries an instruction picks: (tensor, mode, index operand)."""
        found = []
        for fp in addressing.footprints:
            for mode, span in enumerate(fp.modes or ()):
                if isinstance(span.count, int) and span.count == 1 and not span.clipped:
                    found.append((fp.operand, mode, span.start))
        view = addressing.view
        if isinstance(view, SliceView):
            for mode, span in enumerate(view.modes):
                if isinstance(span.count, int) and span.count in (0, 1):
                    found.append((view.source, mode, span.start))
        elif isinstance(view, MemberView):
            found.append((view.source, 0, view.index))
        return found

    def problem(self, written: set[Value]) -> str | None:
        """Why slices of the batch would not compute what one launch does (None: they would)."""
        if self.found is not None:
            return self.found
        for value, asked in self.sizes.items():
            if value in self.batched and self.batched[value] in asked:
                self.other_access.setdefault(value, asked[self.batched[value]])
        for arg in self.fn.args:
            if arg in self.batched and arg in self.other_access:
                return (f"%{arg.name} is indexed by the group id in mode {self.batched[arg]} but also "
                        f"accessed otherwise ({self.other_access[arg]})")
            if arg in written and arg not in self.batched:
                return (f"it writes %{arg.name}, which is not indexed by the group id: the results of "
                        f"slices of the batch cannot be combined")
        return None
