"""Every instruction of the tensor language, one class each.

`instruction_classes()` finds them (every concrete subclass of Instruction
defined in this package), so no list of instructions is kept by hand.
"""

from tinyc.ir.core import Instruction
from tinyc.ir.instructions.blas import BlasInstruction
from tinyc.ir.instructions.collective import Alloca, Foreach, ForeachTile, Parallel
from tinyc.ir.instructions.products import Gemm, Gemv, Ger, HadamardProduct
from tinyc.ir.instructions.updates import Axpby, Cumsum, Sum
from tinyc.ir.instructions.control import For, If, Yield
from tinyc.ir.instructions.scalar import SPMD_BUILTINS, Barrier, Builtin, BuiltinName, Constant, SpmdBuiltin
from tinyc.ir.instructions.arith import (
    SEED_MATH, ArithBinary, ArithBinaryOp, ArithUnary, ArithUnaryOp, Cast, Cmp, CmpCond, MathUnary, MathUnaryOp,
)
from tinyc.ir.instructions.views import WHOLE_MODE, Expand, Fuse, Subview
from tinyc.ir.instructions.memory import Associated, LifetimeStop, Load, Size, Store, StoreFlag
from tinyc.ir.instructions.spmd import (
    CheckedFlag, CoopMatrixConstruct, CoopMatrixLoad, CoopMatrixMulAdd, CoopMatrixScale,
    CoopMatrixStore, SubgroupBroadcast, SubgroupMode, SubgroupOp, SubgroupOperation,
)
from tinyc.ir.instructions.atomics import (
    AtomicLoad, AtomicOp, AtomicStore, AtomicUpdate, MemoryScope, MemorySemantics,
)
from tinyc.ir.instructions.coopmatrix import (
    CoopMatrixApply, CoopMatrixAtomicLoad, CoopMatrixAtomicStore, CoopMatrixAtomicUpdate,
    CoopMatrixExtract, CoopMatrixInsert, CoopMatrixPrefetch, CoopMatrixReduce, ReduceMode,
)


def instruction_classes() -> list[type[Instruction]]:
    """Every concrete instruction class of this package, sorted by name."""
    found: set[type[Instruction]] = set()
    pending = [Instruction]
    while pending:
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            if sub.__module__.startswith(__name__ + ".") and not vars(sub).get("abstract", False):
                found.add(sub)
    return sorted(found, key=lambda c: c.__name__)


def syntax_classes() -> list[type[Instruction]]:
    """The classes with a grammar rule of their own (a subclass may be spelled by its base)."""
    return [cls for cls in instruction_classes() if "syntax" in vars(cls)]


__all__ = [name for name in dir() if not name.startswith("_")]
