"""What the runtime needs to know about each parameter (ParamInfo).

- `written`: some instruction writes (or atomically adds to) the parameter's
  memory object, as tinyc.analysis.memory_effects says (through views and
  group loads); the runtime then copies the data back. Scalars are never
  written.
- `batch_mode`: the mode of a memref parameter where an access or view taken
  directly on the parameter starts at `builtin.group_id` (or a cast of it):
  its extent must cover the batch. A group's member picked by the group id: 0.
  (From the instructions' addressing interface: any element access, block or
  view.)
  Other uses of the group id (gid*2, gid % n, nested views) are not
  reported, so the runtime never rejects a call it cannot prove wrong.
- `nullable`: the kernel checks the memref or group argument itself with
  `associated`, so the runtime lets None through as a null pointer.
"""

from __future__ import annotations

from tinyc.analysis.memory_effects import EffectKind, direct_effects
from tinyc.ir.addressing import MemberView, SliceView
from tinyc.ir.core import Function, Value
from tinyc.ir.instructions import Associated, BuiltinName
from tinyc.ir.types import ScalarType
from tinyc.signature import ParamInfo


def param_infos(fn: Function) -> tuple[ParamInfo, ...]:
    group_ids: set[Value] = set()
    written: set[Value | None] = set()
    checked: set[Value] = set()  # operands of `associated`
    batch: dict[Value, int] = {}

    def note_batch(tensor: Value, mode: int, index: object) -> None:
        if index in group_ids and tensor in fn.args and tensor not in batch:
            batch[tensor] = mode

    for inst in fn.walk():
        value = inst.integer_facts().value
        if value is not None and (value.op == BuiltinName.GROUP_ID.value
                                  or value.op == "cast" and value.args[0] in group_ids):
            group_ids.add(inst.result)
        if isinstance(inst, Associated):
            checked.add(inst.operands[0])
        written.update(e.obj.root for e in direct_effects(inst) if e.kind is not EffectKind.READ)
        addressing = inst.addressing()
        view = addressing.view
        if isinstance(view, SliceView):
            for mode, span in enumerate(view.modes):
                note_batch(view.source, mode, span.start)
        elif isinstance(view, MemberView):
            note_batch(view.source, 0, view.index)
        for footprint in addressing.footprints:
            for mode, span in enumerate(footprint.modes or ()):
                note_batch(footprint.operand, mode, span.start)
    if None in written:  # a memref whose root is unknown may be any argument
        written.update(fn.args)

    return tuple(ParamInfo(a.name or f"arg{i}", a.type,
                           written=(not isinstance(a.type, ScalarType)) and a in written,
                           batch_mode=batch.get(a), nullable=a in checked)
                 for i, a in enumerate(fn.args))
