"""What the runtime needs to know about each parameter (ParamInfo).

- `read`: some instruction reads it (or atomically adds to it), likewise; an
  array neither read nor written is not copied to a device (runtime/arguments.py).
- `written`: some instruction writes (or atomically adds to) the parameter's
  memory object, as tinyc.analysis.memory_effects says (through views and
  group loads); the runtime then copies the data back. Scalars are never
  written.
- `batch_mode`: the mode of a memref parameter indexed, in a subview, load,
  store or coopmatrix load/store taken directly on the parameter, by `builtin.group_id` (or a cast of it):
  its extent must cover the batch. A group loaded with the group id: 0.
  Other uses of the group id (gid*2, gid % n, nested views) are not
  reported, so the runtime never rejects a call it cannot prove wrong.
- `nullable`: the kernel checks the memref or group argument itself with
  `associated`, so the runtime lets None through as a null pointer.
"""

from __future__ import annotations

from tinyc.analysis.memory_effects import EffectKind, direct_effects
from tinyc.ir.core import Function, Value
from tinyc.ir.instructions import (
    Associated, Builtin, BuiltinName, Cast, CoopMatrixLoad, CoopMatrixStore, Load, Store, Subview,
)
from tinyc.ir.types import GroupType, ScalarType
from tinyc.signature import ParamInfo


def param_infos(fn: Function) -> tuple[ParamInfo, ...]:
    group_ids: set[Value] = set()
    written: set[Value | None] = set()
    read: set[Value | None] = set()  # read, or added to atomically (which reads)
    checked: set[Value] = set()  # operands of `associated`
    batch: dict[Value, int] = {}

    def note_batch(tensor: Value, mode: int) -> None:
        if tensor in fn.args and tensor not in batch:
            batch[tensor] = mode

    for inst in fn.walk():
        if isinstance(inst, Builtin) and inst.builtin is BuiltinName.GROUP_ID:
            group_ids.add(inst.result)
        elif isinstance(inst, Associated):
            checked.add(inst.operands[0])
        elif isinstance(inst, Cast) and inst.operands[0] in group_ids:
            group_ids.add(inst.result)
        found = direct_effects(inst)
        written.update(e.obj.root for e in found if e.kind is not EffectKind.READ)
        read.update(e.obj.root for e in found if e.kind is not EffectKind.WRITE)
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
    if None in written:  # a memref whose root is unknown may be any argument
        written.update(fn.args)
    if None in read:
        read.update(fn.args)

    return tuple(ParamInfo(a.name or f"arg{i}", a.type,
                           written=(not isinstance(a.type, ScalarType)) and a in written,
                           read=(not isinstance(a.type, ScalarType)) and a in read,
                           batch_mode=batch.get(a), nullable=a in checked)
                 for i, a in enumerate(fn.args))
