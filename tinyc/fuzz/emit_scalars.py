"""Generator entries for scalar instructions: constant, arith, cast, cmp, math, builtin.

Every value they make is free of undefined behaviour: divisors in 1..8 or
away from zero, shift amounts below the bit width, float-to-integer casts of
clamped exact values; each records whether the device computes it exactly.
"""

from __future__ import annotations

from tinyc.fuzz.arith import arith_value
from tinyc.fuzz.facts import COMPLEX, REALS, SCALARS, int_limits, tolerance
from tinyc.fuzz.generator import Writer
from tinyc.fuzz.program import GROUP, LANE, SUBGROUP
from tinyc.ir.types import bf16, bool_, f16, i32, index
from tinyc.fuzz.registry import generates
from tinyc.ir import instructions as I


@generates(I.Constant, "constant", 1.0)
def emit_constant(w: Writer) -> bool:
    w.constant(w.pick(SCALARS + (bool_,)))
    return True


@generates(I.ArithBinary, "arith", 3.0)
def emit_arith(w: Writer) -> bool:
    t = w.pick(SCALARS)
    return arith_value(w, t, level=LANE, exact=w.chance(0.3)) is not None


@generates(I.ArithBinary, "arith.bool", 0.5)
def emit_logic(w: Writer) -> bool:
    """and / or / xor / not on bools."""
    a = w.scalar(bool_)
    name = w.fresh("b")
    if w.chance(0.3):
        w.emit(f"{name} = arith.not {a.name} : bool")
        w.define(name, bool_, level=a.level, exact=a.exact)
        return True
    b = w.scalar(bool_)
    w.emit(f"{name} = arith.{w.pick(('and', 'or', 'xor'))} {a.name}, {b.name} : bool")
    w.define(name, bool_, level=min(a.level, b.level), exact=a.exact and b.exact)
    return True


@generates(I.ArithUnary, "arith.complex", 0.4)
def emit_complex_parts(w: Writer) -> bool:
    t = w.pick(COMPLEX)
    a = w.scalar(t)
    op = w.pick(("re", "im", "abs"))
    name = w.fresh("v")
    w.emit(f"{name} = arith.{op} {a.name} : {t.component}")
    w.define(name, t.component, level=a.level, exact=a.exact and op != "abs")
    return True


@generates(I.Cast, "cast", 1.2)
def emit_cast(w: Writer) -> bool:
    dst = w.pick(SCALARS)
    src_types = [t for t in SCALARS if not (t.is_complex and not dst.is_complex)]
    src = w.pick(src_types)
    # float -> int keeps only exact values: an inexact one may truncate differently
    a = w.scalar(src, exact=dst.is_int and not src.is_int)
    exact = a.exact
    if dst.is_int and not src.is_int:  # float -> int: clamp first (NaN and overflow are UB)
        limit = {"i8": 100.0, "i16": 1000.0}.get(dst.name, 10000.0)
        if src in (bf16, f16):
            limit = min(limit, 1000.0)
        lo, hi = w.constant(src, -limit), w.constant(src, limit)
        m1, m2 = w.fresh("m"), w.fresh("m")
        w.emit(f"{m1} = arith.max {a.name}, {lo.name} : {src}")
        w.emit(f"{m2} = arith.min {m1}, {hi.name} : {src}")
        a = w.define(m2, src, level=a.level, exact=a.exact)
        exact = a.exact
    name = w.fresh("v")
    w.emit(f"{name} = cast {a.name} : {dst}")
    lo = hi = None
    if dst.is_int and src.is_int and a.lo is not None:
        low, high = int_limits(dst)
        if low <= a.lo and a.hi <= high:
            lo, hi = a.lo, a.hi
    w.define(name, dst, level=a.level, exact=exact, lo=lo, hi=hi,
             tol=max(a.tol, 0.0 if exact else tolerance(dst.component if dst.is_complex else dst)))
    return True


@generates(I.Cmp, "cmp", 0.8)
def emit_cmp(w: Writer) -> bool:
    w.compare()
    return True


@generates(I.MathUnary, "math", 0.5)
def emit_math(w: Writer) -> bool:
    t = w.pick(REALS + COMPLEX)
    a = w.scalar(t)
    # keep the argument small so exp stays finite: min(max(a, -4), 4) for reals
    if not t.is_complex:
        lo, hi = w.constant(t, -4.0), w.constant(t, 4.0)
        m1, m2 = w.fresh("m"), w.fresh("m")
        w.emit(f"{m1} = arith.max {a.name}, {lo.name} : {t}")
        w.emit(f"{m2} = arith.min {m1}, {hi.name} : {t}")
        a = w.define(m2, t, level=a.level, exact=a.exact)
    name = w.fresh("e")
    w.emit(f"{name} = math.{w.pick(('exp', 'native_exp'))} {a.name} : {t}")
    w.define(name, t, level=a.level, exact=False)
    return True


@generates(I.Builtin, "builtin", 0.8)
def emit_builtin(w: Writer) -> bool:
    choices = [("group_id", index), ("group_size", index), ("num_subgroups", i32), ("subgroup_size", i32)]
    if w.in_parallel():
        choices += [("subgroup_id", i32), ("subgroup_local_id", i32)] * 2
    which, t = w.pick(choices)
    name = w.fresh("id")
    w.emit(f"{name} = builtin.{which} : {t}")
    known = not getattr(w, "unknown_geometry", False)
    x, y = w.wg
    facts = {"group_id": (0, w.batch - 1, GROUP), "group_size": (w.batch, w.batch, GROUP),
             "num_subgroups": ((x // w.subgroup) * y,) * 2 + (GROUP,) if known else (1, 64, GROUP),
             "subgroup_size": (w.subgroup, w.subgroup, GROUP) if known else (4, 64, GROUP),
             "subgroup_id": (0, (x // w.subgroup) * y - 1, SUBGROUP) if known else (0, 63, SUBGROUP),
             "subgroup_local_id": (0, w.subgroup - 1, LANE) if known else (0, 63, LANE)}
    lo, hi, level = facts[which]
    w.define(name, t, lo=lo, hi=hi, level=level)
    return True
