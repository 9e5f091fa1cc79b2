"""elide-barriers: drop local-memory barriers when every work-item only sees its own data.

With one subgroup per work-group (the CPU default, (S, 1)) a work-item is a
lane. The lowered matmuls keep tiles in the coopmatrix layout: lane l holds
rows x + l + S·b of a matrix_a / matrix_acc tile loaded or stored at row
position x. When every access to local memory in a kernel is such a load or
store, straight on an alloca, at row positions that are equal modulo S, each
element of local memory is touched by one work-item only, and program order
already orders its accesses. A `barrier.local` (from insert-barriers between
two collectives that share an alloca, or the staging copy's) then orders
nothing, and it goes: the fused kernel (A·Bᵀ through an alloca, then ·C)
became straight-line code for the CPU compiler and ran 10% faster.

Barriers with a global fence stay. Barriers that reusing an alloca's bytes
needs are the local-memory pass's, which runs after this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyc.ir.addressing import LoopRange
from tinyc.ir.core import Function, Instruction, Value, erase
from tinyc.ir.instructions import Barrier, CoopMatrixLoad, CoopMatrixStore, LifetimeStop
from tinyc.ir.types import CoopMatrixType, MatrixUse

if TYPE_CHECKING:
    from tinyc.passes import PassOptions


def elide_private_barriers(fn: Function, options: "PassOptions | None" = None) -> None:
    """The pass: remove every local-only barrier of `fn` if its local memory is lane-private."""
    if not local_memory_is_lane_private(fn):
        return
    for inst in list(fn.walk()):
        if isinstance(inst, Barrier) and inst.local_fence and not inst.global_fence:
            erase(inst)


def local_memory_is_lane_private(fn: Function) -> bool:
    """One subgroup per work-group, and every local access a row-layout coopmatrix access."""
    S = int(fn.attrs.get("subgroup_size", 0))
    if not S or list(fn.attrs.get("work_group_size", [])) != [S, 1]:
        return False
    allocas = {inst.result for inst in fn.walk() if inst.allocates()}
    residues: set[int] = set()
    for inst in fn.walk():
        for i, operand in enumerate(inst.operands):
            if operand not in allocas or isinstance(inst, LifetimeStop):
                continue
            x = _row_position(inst, i)
            r = None if x is None else residue(x, S)
            if r is None:
                return False
            residues.add(r)
    return len(residues) <= 1


def _row_position(inst, operand: int) -> Value | None:
    """The row position of a lane-layout tile access through operand `operand`, else None."""
    if isinstance(inst, CoopMatrixLoad) and operand == 0 and not inst.transpose:
        tile = inst.result.type
        x = inst.operands[1]
    elif isinstance(inst, CoopMatrixStore) and operand == 1 and not inst.transpose:
        tile = inst.operands[0].type
        x = inst.operands[2]
    else:
        return None
    if not isinstance(tile, CoopMatrixType) or tile.use is MatrixUse.B:
        return None  # matrix_b: every lane holds every component
    return x


def residue(v: Value, modulus: int) -> int | None:
    """v mod `modulus` when the IR proves it, else None: integer constants, sums, differences
    and products of such, and loop variables whose lower bound and step have one (the
    instructions' integer facts, tinyc/ir/addressing.py)."""
    owner = v.owner
    if isinstance(owner, Instruction):
        fact = owner.integer_facts().value
        if fact is None:
            return None
        if fact.op == "constant":
            value = fact.args[0]
            return value % modulus if isinstance(value, int) and not isinstance(value, bool) else None
        if fact.op not in ("add", "sub", "mul"):
            return None
        a, b = (residue(x, modulus) for x in fact.args)
        if fact.op == "mul" and 0 in (a, b):
            return 0
        if a is None or b is None:
            return None
        return {"add": a + b, "sub": a - b, "mul": a * b}[fact.op] % modulus
    loop = getattr(owner, "parent", None)  # a region argument: its region's owner runs it
    for rng in loop.integer_facts().ranges if isinstance(loop, Instruction) else ():
        if isinstance(rng, LoopRange) and rng.var is v and rng.step is not None:
            step = rng.step if isinstance(rng.step, int) else residue(rng.step, modulus)
            if step is not None and step % modulus == 0:
                return residue(rng.lower, modulus)
    return None
