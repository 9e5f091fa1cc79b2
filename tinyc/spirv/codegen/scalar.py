"""Scalar arithmetic on every tensor-language type, as SPIR-V instructions.

These helpers take and return ids in the value representation of types.py;
the arith/cast/cmp/math emitters and the coopmatrix lowering (component-wise)
share them. Semantics chosen where the spec leaves room (see docs in the
report and the module docstring of arith.py):
- bf16 arithmetic runs in f32 and rounds back to nearest even;
- integer div/rem are signed (OpSDiv/OpSRem: C semantics, the remainder has
  the dividend's sign); float rem is OpFRem (C fmod);
- min/max on floats are OpenCL fmin/fmax (a NaN operand is ignored);
- shift counts are taken modulo the bit width (OpenCL C semantics);
- complex mul/div/abs/exp follow NumPy's formulas (Smith's division, hypot).
"""

from __future__ import annotations

import math

from tinyc.ir.instructions import ArithBinaryOp, ArithUnaryOp, CmpCond
from tinyc.ir.types import BoolType, ScalarType, Type, bf16, f16, f32, f64
from tinyc.spirv.codegen.context import CodegenError, Ctx
from tinyc.spirv.codegen.types import scalar_type, value_type
from tinyc.spirv.instruction import Id
from tinyc.spirv.literals import bf16_bits, float_bits
from tinyc.spirv.spv import Decoration, FPRoundingMode, Op, OpenCLStd

# -- bf16 ------------------------------------------------------------------------------
def bf16_to_f32(ctx: Ctx, x: Id) -> Id:
    return ctx.op(Op.ConvertBF16ToFINTEL, ctx.m.type_float(32), x)


def f32_to_bf16(ctx: Ctx, x: Id) -> Id:
    """Round to nearest even (measured: incl. inf, -0 and subnormals)."""
    return ctx.op(Op.ConvertFToBF16INTEL, ctx.m.type_int(16), x)


def widen(ctx: Ctx, t: ScalarType, x: Id) -> Id:
    """bf16 bits to f32; other types unchanged."""
    return bf16_to_f32(ctx, x) if t is bf16 else x


def narrow(ctx: Ctx, t: ScalarType, x: Id) -> Id:
    """f32 back to bf16 bits; other types unchanged."""
    return f32_to_bf16(ctx, x) if t is bf16 else x


def _f32_round_to_odd(ctx: Ctx, src: ScalarType, x: Id) -> Id:
    """x rounded toward zero to f32, with the last bit set if inexact.

    Rounding that to bf16 gives the correctly rounded bf16 of x: rounding in
    two steps (to f32, then bf16) could otherwise be off by one ulp.
    """
    f32_t, i32_t = ctx.m.type_float(32), ctx.i32
    src_t = scalar_type(ctx.m, src)
    if src.is_int:
        y = ctx.op(Op.ConvertSToF, f32_t, x)
        ctx.m.decorate(y, Decoration.FPRoundingMode, FPRoundingMode.RTZ)
        back = ctx.op(Op.ConvertFToS, src_t, y)
        inexact = ctx.op(Op.INotEqual, ctx.bool, back, x)
    else:
        y = ctx.op(Op.FConvert, f32_t, x)
        ctx.m.decorate(y, Decoration.FPRoundingMode, FPRoundingMode.RTZ)
        back = ctx.op(Op.FConvert, src_t, y)
        inexact = ctx.op(Op.FOrdNotEqual, ctx.bool, back, x)
    bits = ctx.op(Op.Bitcast, i32_t, y)
    sticky = ctx.op(Op.Select, i32_t, inexact, ctx.const32(1), ctx.const32(0))
    return ctx.op(Op.Bitcast, f32_t, ctx.op(Op.BitwiseOr, i32_t, bits, sticky))


def to_bf16(ctx: Ctx, src: ScalarType, x: Id) -> Id:
    """Correctly rounded conversion of an int or float to bf16 bits."""
    if src is bf16:
        return x
    if src is f32:
        return f32_to_bf16(ctx, x)
    exact_in_f32 = src is f16 or (src.is_int and src.bits <= 16)
    if exact_in_f32:
        op = Op.FConvert if src.is_float else Op.ConvertSToF
        return f32_to_bf16(ctx, ctx.op(op, ctx.m.type_float(32), x))
    return f32_to_bf16(ctx, _f32_round_to_odd(ctx, src, x))


# -- constants ---------------------------------------------------------------------------
def constant(ctx: Ctx, t: Type, value) -> Id:
    """A constant in the value representation of `t`."""
    m = ctx.m
    if isinstance(t, BoolType):
        return m.const_bool(bool(value))
    assert isinstance(t, ScalarType)
    if t.is_int:
        return m.constant(m.type_int(t.bits), int(value))
    if t is bf16:
        return m.const_bf16(float(value))
    if t.is_float:
        return m.constant(m.type_float(t.bits), float(value))
    z = complex(value)
    return m.constant(scalar_type(m, t), [z.real, z.imag])


def rounds_to(t: ScalarType, value, target: float) -> bool:
    """Does the constant `value` of float or complex type `t` have the bits of `target`
    (in every component) once rounded to `t`?"""
    if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        return False
    parts = (complex(value).real, complex(value).imag) if t.is_complex else (float(value),)
    if t is bf16:
        return bf16_bits(parts[0]) == bf16_bits(target)
    width = t.component.bits if t.is_complex else t.bits
    return all(float_bits(part, width) == float_bits(target, width) for part in parts)


def zero(ctx: Ctx, t: ScalarType) -> Id:
    return constant(ctx, t, 0)


# -- negation ----------------------------------------------------------------------------
def flip_signs(ctx: Ctx, t: ScalarType, x: Id, components: tuple[bool, bool] = (True, True)) -> Id:
    """x with the sign of its float value (or of the chosen complex components) flipped: -x, conj(x).

    Never an OpFNegate, nor a form LLVM turns into an `fneg` (x * -1, -0.0 - x, an XOR of
    the sign bit on a bitcast): the Intel CPU runtime (driver 2026.22.10.0.01_160000)
    segfaults in X86 instruction selection on an `fneg` of a work-group-uniform value
    that a loop containing a barrier carries into a branch only some work-items take, at
    sub-group size 32 or 64 (docs/runtime-notes.md). Nor copysign(x, select(OpSignBitSet x,
    1, -1)): that form crashed the runtime's pass that keeps values across barriers
    (fuzz seed 6161, programs 259 and 289). copysign(v, 0.0 - copysign(1.0, v)) is the same IEEE
    negation (sign bit only: -0.0, infinities and NaNs too), and `0.0 - s` is no `fneg`
    (it differs from one at s = 0, which copysign(1.0, v) never is).
    """
    m = ctx.m
    if t is bf16:  # its value is a 16-bit int, which LLVM never sees as a float
        int_t = m.type_int(16)
        return ctx.op(Op.BitwiseXor, int_t, x, m.constant(int_t, 0x8000))
    if t.is_complex:  # per component
        re, im = parts(ctx, t, x)
        comp = t.component
        return make_complex(ctx, t, *(_opposite(ctx, comp, v) if flip else v
                                      for v, flip in zip((re, im), components)))
    return _opposite(ctx, t, x)


def _opposite(ctx: Ctx, t: ScalarType, v: Id) -> Id:
    """-v for a real float v, as flip_signs says."""
    ty = scalar_type(ctx.m, t)
    unit = ctx.ext(OpenCLStd.copysign, ty, ctx.m.constant(ty, 1.0), v)
    opposite = ctx.op(Op.FSub, ty, ctx.m.constant(ty, 0.0), unit)
    return ctx.ext(OpenCLStd.copysign, ty, v, opposite)


# -- complex helpers -----------------------------------------------------------------------
def parts(ctx: Ctx, t: ScalarType, z: Id) -> tuple[Id, Id]:
    comp = scalar_type(ctx.m, t.component)
    return ctx.op(Op.CompositeExtract, comp, z, 0), ctx.op(Op.CompositeExtract, comp, z, 1)


def make_complex(ctx: Ctx, t: ScalarType, re: Id, im: Id) -> Id:
    return ctx.op(Op.CompositeConstruct, scalar_type(ctx.m, t), re, im)


def _complex_mul(ctx: Ctx, t: ScalarType, a: Id, b: Id) -> Id:
    c = scalar_type(ctx.m, t.component)
    (ar, ai), (br, bi) = parts(ctx, t, a), parts(ctx, t, b)
    re = ctx.op(Op.FSub, c, ctx.op(Op.FMul, c, ar, br), ctx.op(Op.FMul, c, ai, bi))
    im = ctx.op(Op.FAdd, c, ctx.op(Op.FMul, c, ar, bi), ctx.op(Op.FMul, c, ai, br))
    return make_complex(ctx, t, re, im)


def _complex_div(ctx: Ctx, t: ScalarType, a: Id, b: Id) -> Id:
    """Smith's algorithm exactly as NumPy writes it (scale by 1/d)."""
    c, B = scalar_type(ctx.m, t.component), ctx.bool
    (ar, ai), (br, bi) = parts(ctx, t, a), parts(ctx, t, b)
    abr, abi = ctx.ext(OpenCLStd.fabs, c, br), ctx.ext(OpenCLStd.fabs, c, bi)
    s = ctx.op(Op.FOrdGreaterThanEqual, B, abr, abi)
    p, q = ctx.op(Op.Select, c, s, br, bi), ctx.op(Op.Select, c, s, bi, br)
    x, y = ctx.op(Op.Select, c, s, ar, ai), ctx.op(Op.Select, c, s, ai, ar)
    rat = ctx.op(Op.FDiv, c, q, p)
    one = ctx.m.constant(c, 1.0)
    scl = ctx.op(Op.FDiv, c, one, ctx.op(Op.FAdd, c, p, ctx.op(Op.FMul, c, q, rat)))
    re = ctx.op(Op.FMul, c, ctx.op(Op.FAdd, c, x, ctx.op(Op.FMul, c, y, rat)), scl)
    t_im = ctx.op(Op.FMul, c, ctx.op(Op.FSub, c, y, ctx.op(Op.FMul, c, x, rat)), scl)
    im = ctx.op(Op.Select, c, s, t_im, flip_signs(ctx, t.component, t_im))
    # 0 divisor: NumPy divides each part by |b.re| (inf or nan).
    zero_c = ctx.m.constant(c, 0.0)
    both_zero = ctx.op(Op.LogicalAnd, B, ctx.op(Op.FOrdEqual, B, abr, zero_c),
                       ctx.op(Op.FOrdEqual, B, abi, zero_c))
    re = ctx.op(Op.Select, c, both_zero, ctx.op(Op.FDiv, c, ar, abr), re)
    im = ctx.op(Op.Select, c, both_zero, ctx.op(Op.FDiv, c, ai, abr), im)
    return make_complex(ctx, t, re, im)


# -- binary ------------------------------------------------------------------------------
_INT_OPS = {
    ArithBinaryOp.ADD: Op.IAdd, ArithBinaryOp.SUB: Op.ISub, ArithBinaryOp.MUL: Op.IMul,
    ArithBinaryOp.DIV: Op.SDiv, ArithBinaryOp.REM: Op.SRem, ArithBinaryOp.AND: Op.BitwiseAnd,
    ArithBinaryOp.OR: Op.BitwiseOr, ArithBinaryOp.XOR: Op.BitwiseXor,
}
_FLOAT_OPS = {
    ArithBinaryOp.ADD: Op.FAdd, ArithBinaryOp.SUB: Op.FSub, ArithBinaryOp.MUL: Op.FMul,
    ArithBinaryOp.DIV: Op.FDiv, ArithBinaryOp.REM: Op.FRem,
}
_BOOL_OPS = {ArithBinaryOp.AND: Op.LogicalAnd, ArithBinaryOp.OR: Op.LogicalOr,
             ArithBinaryOp.XOR: Op.LogicalNotEqual}


def binary(ctx: Ctx, op: ArithBinaryOp, t: Type, a: Id, b: Id) -> Id:
    """a `op` b for two values of type `t`."""
    if isinstance(t, BoolType):
        return ctx.op(_BOOL_OPS[op], ctx.bool, a, b)
    assert isinstance(t, ScalarType)
    ty = scalar_type(ctx.m, t)
    if t.is_int:
        if op in _INT_OPS:
            return ctx.op(_INT_OPS[op], ty, a, b)
        if op in (ArithBinaryOp.MIN, ArithBinaryOp.MAX):
            fn = OpenCLStd.s_min if op is ArithBinaryOp.MIN else OpenCLStd.s_max
            return ctx.ext(fn, ty, a, b)
        count = ctx.op(Op.BitwiseAnd, ty, b, ctx.m.constant(ty, t.bits - 1))
        shift = Op.ShiftLeftLogical if op is ArithBinaryOp.SHL else Op.ShiftRightArithmetic
        return ctx.op(shift, ty, a, count)
    if t.is_float:
        ct = scalar_type(ctx.m, f32) if t is bf16 else ty
        x, y = widen(ctx, t, a), widen(ctx, t, b)
        if op in _FLOAT_OPS:
            r = ctx.op(_FLOAT_OPS[op], ct, x, y)
        elif op in (ArithBinaryOp.MIN, ArithBinaryOp.MAX):
            r = ctx.ext(OpenCLStd.fmin if op is ArithBinaryOp.MIN else OpenCLStd.fmax, ct, x, y)
        else:
            raise CodegenError(f"arith.{op.value} is not defined on {t}")
        return narrow(ctx, t, r)
    if op in (ArithBinaryOp.ADD, ArithBinaryOp.SUB):
        return ctx.op(_FLOAT_OPS[op], ty, a, b)
    if op is ArithBinaryOp.MUL:
        return _complex_mul(ctx, t, a, b)
    if op is ArithBinaryOp.DIV:
        return _complex_div(ctx, t, a, b)
    raise CodegenError(f"arith.{op.value} is not defined on {t}")


# -- unary -------------------------------------------------------------------------------
def unary(ctx: Ctx, op: ArithUnaryOp, t: Type, a: Id) -> Id:
    """`op` a for a value of type `t` (abs/re/im of a complex give its component)."""
    if isinstance(t, BoolType):
        if op is ArithUnaryOp.NOT:
            return ctx.op(Op.LogicalNot, ctx.bool, a)
        raise CodegenError(f"arith.{op.value} is not defined on bool")
    assert isinstance(t, ScalarType)
    ty = scalar_type(ctx.m, t)
    if t.is_int:
        return {ArithUnaryOp.ABS: lambda: ctx.ext(OpenCLStd.s_abs, ty, a),
                ArithUnaryOp.NEG: lambda: ctx.op(Op.SNegate, ty, a),
                ArithUnaryOp.NOT: lambda: ctx.op(Op.Not, ty, a)}[op]()
    if op is ArithUnaryOp.NEG:  # floats and complex: the sign bits (never OpFNegate)
        return flip_signs(ctx, t, a)
    if t is bf16:  # sign-bit manipulation is exact and keeps NaN payloads
        if op is ArithUnaryOp.ABS:
            return ctx.op(Op.BitwiseAnd, ty, a, ctx.m.constant(ty, 0x7FFF))
    elif t.is_float:
        if op is ArithUnaryOp.ABS:
            return ctx.ext(OpenCLStd.fabs, ty, a)
    elif t.is_complex:
        comp = scalar_type(ctx.m, t.component)
        if op is ArithUnaryOp.CONJ:
            return flip_signs(ctx, t, a, (False, True))
        if op is ArithUnaryOp.RE:
            return ctx.op(Op.CompositeExtract, comp, a, 0)
        if op is ArithUnaryOp.IM:
            return ctx.op(Op.CompositeExtract, comp, a, 1)
        if op is ArithUnaryOp.ABS:
            re, im = parts(ctx, t, a)
            return ctx.ext(OpenCLStd.hypot, comp, re, im)
    raise CodegenError(f"arith.{op.value} is not defined on {t}")


# -- casts -------------------------------------------------------------------------------
def cast(ctx: Ctx, src: ScalarType, dst: ScalarType, x: Id) -> Id:
    """Every row of the spec's cast table."""
    m = ctx.m
    if src is dst or (src.is_int and dst.is_int and src.bits == dst.bits):
        return x
    dst_t = scalar_type(m, dst)
    if dst.is_complex:
        if src.is_complex:
            return ctx.op(Op.FConvert, dst_t, x)
        re = cast(ctx, src, dst.component, x)
        return make_complex(ctx, dst, re, m.constant(scalar_type(m, dst.component), 0.0))
    if src.is_complex:
        raise CodegenError(f"cast from {src} to {dst} is forbidden")
    if dst.is_int:
        if src.is_int:
            return ctx.op(Op.SConvert, dst_t, x)
        return ctx.op(Op.ConvertFToS, dst_t, widen(ctx, src, x))
    if dst is bf16:
        return to_bf16(ctx, src, x)
    if src.is_int:
        return ctx.op(Op.ConvertSToF, dst_t, x)
    y = widen(ctx, src, x)
    if src is bf16 and dst is f32:
        return y
    return ctx.op(Op.FConvert, dst_t, y)


# -- comparisons -----------------------------------------------------------------------------
_INT_CMP = {CmpCond.EQ: Op.IEqual, CmpCond.NE: Op.INotEqual, CmpCond.GT: Op.SGreaterThan,
            CmpCond.GE: Op.SGreaterThanEqual, CmpCond.LT: Op.SLessThan,
            CmpCond.LE: Op.SLessThanEqual}
# Ordered compares except `ne`, which is true when either side is NaN (as in NumPy).
_FLOAT_CMP = {CmpCond.EQ: Op.FOrdEqual, CmpCond.NE: Op.FUnordNotEqual,
              CmpCond.GT: Op.FOrdGreaterThan, CmpCond.GE: Op.FOrdGreaterThanEqual,
              CmpCond.LT: Op.FOrdLessThan, CmpCond.LE: Op.FOrdLessThanEqual}


def compare(ctx: Ctx, cond: CmpCond, t: Type, a: Id, b: Id) -> Id:
    B = ctx.bool
    if isinstance(t, BoolType):
        op = {CmpCond.EQ: Op.LogicalEqual, CmpCond.NE: Op.LogicalNotEqual}.get(cond)
        if op is None:
            raise CodegenError(f"cmp.{cond.value} is not defined on bool")
        return ctx.op(op, B, a, b)
    assert isinstance(t, ScalarType)
    if t.is_int:
        return ctx.op(_INT_CMP[cond], B, a, b)
    if t.is_float:
        return ctx.op(_FLOAT_CMP[cond], B, widen(ctx, t, a), widen(ctx, t, b))
    if cond not in (CmpCond.EQ, CmpCond.NE):
        raise CodegenError(f"cmp.{cond.value} is not defined on {t}")
    both = ctx.op(_FLOAT_CMP[cond], ctx.m.type_vector(B, 2), a, b)
    return ctx.op(Op.All if cond is CmpCond.EQ else Op.Any, B, both)


# -- math ----------------------------------------------------------------------------------
def math_function(ctx: Ctx, function: str, native: bool, t: ScalarType, x: Id) -> Id:
    """cos, sin, exp, exp2, log, log2 (OpenCL.std), or their native_ forms.

    The native_ functions are single precision only, so f64 takes the exact
    one; f16 and bf16 compute in f32. Complex exp and exp2 are
    b^re (cos(im ln b), sin(im ln b)).
    """
    fn = getattr(OpenCLStd, ("native_" if native else "") + function)
    exact = getattr(OpenCLStd, function)
    if t.is_complex:
        c = scalar_type(ctx.m, t.component)
        if t.component is f64:
            native, fn = False, exact
        re, im = parts(ctx, t, x)
        mag = ctx.ext(fn, c, re)
        if function == "exp2":
            im = ctx.op(Op.FMul, c, im, constant(ctx, t.component, math.log(2.0)))
        cos_fn, sin_fn = ((OpenCLStd.native_cos, OpenCLStd.native_sin) if native
                          else (OpenCLStd.cos, OpenCLStd.sin))
        cos, sin = ctx.ext(cos_fn, c, im), ctx.ext(sin_fn, c, im)
        return make_complex(ctx, t, ctx.op(Op.FMul, c, mag, cos), ctx.op(Op.FMul, c, mag, sin))
    if t is f64:
        return ctx.ext(exact, value_type(ctx.m, t), x)
    if t is f32:
        return ctx.ext(fn, value_type(ctx.m, t), x)
    y = ctx.ext(fn, ctx.m.type_float(32), cast(ctx, t, f32, x))
    return cast(ctx, f32, t, y)
