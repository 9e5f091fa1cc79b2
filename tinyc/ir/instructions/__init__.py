"""Every instruction of the tensor language, one class each."""

from tinyc.ir.instructions.collective import (
    Alloca, Axpby, BlasInstruction, Cumsum, Foreach, Gemm, Gemv, Ger, HadamardProduct, Parallel, Sum,
)
from tinyc.ir.instructions.control import For, If, Yield
from tinyc.ir.instructions.scalar import (
    SPMD_BUILTINS, ArithBinary, ArithBinaryOp, ArithUnary, ArithUnaryOp, Barrier, Builtin,
    BuiltinName, Cast, Cmp, CmpCond, Constant, MathUnary, MathUnaryOp,
)
from tinyc.ir.instructions.views import (
    WHOLE_MODE, Expand, Fuse, LifetimeStop, Load, Size, Store, StoreFlag, Subview,
)
from tinyc.ir.instructions.spmd import (
    CheckedFlag, CoopMatrixLoad, CoopMatrixMulAdd, CoopMatrixScale, CoopMatrixStore, SpmdBuiltin,
    SubgroupBroadcast, SubgroupMode, SubgroupOp, SubgroupOperation,
)

__all__ = [name for name in dir() if not name.startswith("_")]
