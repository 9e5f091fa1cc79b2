"""Every instruction of the tensor language, one class each."""

from tinyc.ir.instructions.collective import (
    Alloca, Axpby, BlasInstruction, Cumsum, Foreach, Gemm, Gemv, Ger, HadamardProduct, Parallel, Sum,
)
from tinyc.ir.instructions.mixed import (
    SPMD_BUILTINS, WHOLE_MODE, ArithBinary, ArithBinaryOp, ArithUnary, ArithUnaryOp, Barrier,
    Builtin, BuiltinName, Cast, Cmp, CmpCond, Constant, Expand, For, Fuse, If, LifetimeStop, Load,
    MathUnary, MathUnaryOp, Size, Store, StoreFlag, Subview, Yield,
)
from tinyc.ir.instructions.spmd import (
    CheckedFlag, CoopMatrixLoad, CoopMatrixMulAdd, CoopMatrixScale, CoopMatrixStore, SpmdBuiltin,
    SubgroupBroadcast, SubgroupMode, SubgroupOp, SubgroupOperation,
)

__all__ = [name for name in dir() if not name.startswith("_")]
