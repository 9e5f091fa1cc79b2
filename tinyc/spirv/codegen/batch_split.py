"""Can a kernel's batch be cut into slices that run as separate launches?

The runtime splits `k(..., batch=N, device=[d0, d1])` (and MPI runs) into
contiguous slices [s, s + n) and launches each slice as a batch of its own,
with the batched arguments sliced along their batch mode: work-group g of a
slice sees `builtin.group_id` = g, not s + g. That gives the results of one
launch exactly when the group id is only ever used to pick a kernel's own
entry of a batched argument:

* every use of the group id (or a cast of it) is the offset of a single-index
  mode of a `subview` of a parameter, an index of a `load`/`store` on a
  parameter, or the index of a group `load`;
* every access to such a batched parameter indexes the same mode with the
  group id (no other entries of the batch mode are touched, and `size` is
  not asked of that mode);
* `builtin.group_size` is not used (a slice would see its own count);
* every parameter the kernel writes is batched: a written argument without a
  batch mode (an accumulation into a shared output) is updated by every
  work-group, so slices on different devices could not be combined.

`batch_split_problem` returns None when all hold, else the first reason in
words; the runtime then runs such a kernel on one device (docs/scaling.md).
"""

from __future__ import annotations

from tinyc.ir.core import Function, Instruction, Value
from tinyc.ir.instructions import Builtin, BuiltinName, Cast, Load, Size, Store, Subview
from tinyc.ir.types import GroupType, MemrefType
from tinyc.signature import ParamInfo


def _where(inst: Instruction) -> str:
    return f" (line {inst.span.line})" if inst.span is not None else ""


def _indexed_mode(inst: Instruction, value: Value) -> int | None:
    """The mode of the parameter that `value` picks a single entry of, if that is its only role."""
    if isinstance(inst, Subview):
        modes = [m for m, (off, size) in enumerate(inst.mode_slices())
                 if off is value and isinstance(size, int) and size in (0, 1)]
        roles = sum(1 for v in inst.operands[1:] if v is value)
        return modes[0] if len(modes) == 1 and roles == 1 else None
    if isinstance(inst, (Load, Store)):
        if isinstance(inst, Store) and inst.value is value:
            return None
        modes = [m for m, idx in enumerate(inst.indices) if idx is value]
        return modes[0] if len(modes) == 1 else None
    return None


def _accessor(inst: Instruction) -> Value | None:
    """The tensor an element/view access reads through (None for other instructions)."""
    if isinstance(inst, (Subview, Load, Store)):
        return inst.tensor
    return None


def batch_split_problem(fn: Function, params: tuple[ParamInfo, ...]) -> str | None:
    """Why slices of the batch would not compute what one launch does (None: they would)."""
    tensors = {a for a in fn.args if isinstance(a.type, (MemrefType, GroupType))}
    group_ids: set[Value] = set()
    batched: dict[Value, int] = {}  # parameter -> the mode its accesses index with the group id
    other_access: dict[Value, str] = {}  # parameter -> an access that does not use the group id
    sizes: dict[Value, dict[int, str]] = {}  # parameter -> modes whose size is asked
    for inst in fn.walk():
        if isinstance(inst, Builtin) and inst.builtin is BuiltinName.GROUP_SIZE:
            return f"it uses builtin.group_size{_where(inst)}, which a slice of the batch would see as its own size"
        if isinstance(inst, Builtin) and inst.builtin is BuiltinName.GROUP_ID:
            group_ids.add(inst.result)
            continue
        if isinstance(inst, Cast) and inst.operands[0] in group_ids:
            group_ids.add(inst.result)
            continue
        tensor = _accessor(inst)
        gid_modes: list[int] = []
        for value in dict.fromkeys(inst.operands):
            if value in group_ids:
                mode = _indexed_mode(inst, value) if tensor in tensors else None
                if mode is None:
                    return (f"the group id is used by `{inst.opname}`{_where(inst)} other than to pick "
                            f"an argument's batch entry")
                if isinstance(tensor.type, GroupType):
                    mode = 0
                gid_modes.append(mode)
        for value in inst.operands:
            if value not in tensors:
                continue
            if tensor is value and gid_modes:
                known = batched.setdefault(value, gid_modes[0])
                if known != gid_modes[0] or len(gid_modes) > 1:
                    return f"the group id indexes more than one mode of %{value.name}{_where(inst)}"
            elif isinstance(inst, Size):
                sizes.setdefault(value, {}).setdefault(inst.mode, f"`size` of mode {inst.mode}{_where(inst)}")
            else:
                other_access.setdefault(value, f"`{inst.opname}`{_where(inst)}")
    for value, asked in sizes.items():
        if value in batched and batched[value] in asked:
            other_access.setdefault(value, asked[batched[value]])
    return _parameter_problem(fn, params, batched, other_access)


def _parameter_problem(fn: Function, params: tuple[ParamInfo, ...], batched: dict[Value, int],
                       other_access: dict[Value, str]) -> str | None:
    for arg, info in zip(fn.args, params):
        if arg in batched and arg in other_access:
            return (f"%{info.name} is indexed by the group id in mode {batched[arg]} but also accessed "
                    f"otherwise ({other_access[arg]})")
        if info.written and arg not in batched:
            return (f"it writes %{info.name}, which is not indexed by the group id: the results of "
                    f"slices of the batch cannot be combined")
    return None
