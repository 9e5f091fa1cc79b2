"""What the runtime needs to know about each parameter (ParamInfo).

- `written`: a store, atomic, coopmatrix store or collective output reaches
  the parameter through views (subview/expand/fuse, group loads); the runtime
  then copies the data back. Scalars are never written.
- `batch_mode`: the mode of a memref parameter indexed, in a subview, load,
  store or coopmatrix load/store taken directly on the parameter, by `builtin.group_id` (or a cast of it):
  its extent must cover the batch. A group loaded with the group id: 0.
  Other uses of the group id (gid*2, gid % n, nested views) are not
  reported, so the runtime never rejects a call it cannot prove wrong.
"""

from __future__ import annotations

from tinyc.ir.core import Function, Value
from tinyc.ir.instructions import (
    BlasInstruction, Builtin, BuiltinName, Cast, CoopMatrixLoad, CoopMatrixStore, Expand, Fuse,
    Load, Store, Subview,
)
from tinyc.ir.types import GroupType, MemrefType, ScalarType
from tinyc.signature import ParamInfo


def param_infos(fn: Function) -> tuple[ParamInfo, ...]:
    root: dict[Value, Value] = {a: a for a in fn.args if isinstance(a.type, (MemrefType, GroupType))}
    group_ids: set[Value] = set()
    written: set[Value] = set()
    batch: dict[Value, int] = {}

    def note_batch(tensor: Value, mode: int) -> None:
        if tensor in fn.args and tensor not in batch:
            batch[tensor] = mode

    for inst in fn.walk():
        if isinstance(inst, Builtin) and inst.builtin is BuiltinName.GROUP_ID:
            group_ids.add(inst.result)
        elif isinstance(inst, Cast) and inst.operands[0] in group_ids:
            group_ids.add(inst.result)
        if isinstance(inst, (Subview, Expand, Fuse)) or (
                isinstance(inst, Load) and isinstance(inst.result.type, MemrefType)):
            if inst.operands[0] in root:
                root[inst.result] = root[inst.operands[0]]
        if isinstance(inst, Store):
            target = inst.tensor
        elif isinstance(inst, CoopMatrixStore):
            target = inst.operands[1]
        elif isinstance(inst, BlasInstruction):
            target = inst.output
        else:
            target = None
        if target is not None and target in root:
            written.add(root[target])
        if isinstance(inst, Subview):
            for mode, (off, _) in enumerate(inst.mode_slices()):
                if isinstance(off, Value) and off in group_ids:
                    note_batch(inst.tensor, mode)
        elif isinstance(inst, (Load, Store)):
            for mode, idx in enumerate(inst.indices):
                if idx in group_ids:
                    note_batch(inst.tensor, 0 if isinstance(inst.tensor.type, GroupType) else mode)
        elif isinstance(inst, (CoopMatrixLoad, CoopMatrixStore)):
            tensor, x, y = inst.operands[-3:]
            for mode, idx in enumerate((x, y)):
                if idx in group_ids:
                    note_batch(tensor, mode)

    return tuple(ParamInfo(a.name or f"arg{i}", a.type,
                           written=(not isinstance(a.type, ScalarType)) and a in written,
                           batch_mode=batch.get(a))
                 for i, a in enumerate(fn.args))
