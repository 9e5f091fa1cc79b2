"""What the runtime needs to know about each parameter: its uses (codegen makes them the
kernel's ParamInfo, tinyc/signature.py).

- `read`: some instruction reads it (or atomically adds to it), likewise; an
  array neither read nor written is not copied to a device (runtime/arguments.py).
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

from dataclasses import dataclass

from tinyc.analysis.memory_effects import EffectKind, direct_effects
from tinyc.ir.addressing import MemberView, SliceView
from tinyc.ir.core import Function, Value
from tinyc.ir.instructions import BuiltinName
from tinyc.ir.types import ScalarType


@dataclass(frozen=True)
class ParamUse:
    """How a kernel uses one parameter (module docs)."""

    written: bool
    read: bool
    batch_mode: int | None
    nullable: bool


def param_uses(fn: Function) -> tuple[ParamUse, ...]:
    """One ParamUse per parameter of `fn`, in order."""
    group_ids: set[Value] = set()
    written: set[Value | None] = set()
    read: set[Value | None] = set()  # read, or added to atomically (which reads)
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
        nullable = inst.null_checked()
        if nullable is not None:
            checked.add(nullable)
        found = direct_effects(inst)
        written.update(e.obj.root for e in found if e.kind is not EffectKind.READ)
        read.update(e.obj.root for e in found if e.kind is not EffectKind.WRITE)
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
    if None in read:
        read.update(fn.args)

    return tuple(ParamUse(written=(not isinstance(a.type, ScalarType)) and a in written,
                          read=(not isinstance(a.type, ScalarType)) and a in read,
                          batch_mode=batch.get(a), nullable=a in checked)
                 for a in fn.args)
