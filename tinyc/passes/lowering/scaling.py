"""The alpha/beta update shared by every BLAS-like collective.

    out := alpha · value + beta · out

Rules from the spec: beta = constant 0 never reads `out` (it may hold NaN);
a run-time beta branches on beta == 0 for the same reason; `.atomic` (beta a
constant 0 or 1) stores atomically or adds atomically. Alpha and beta are
cast to the output's element type once, before the loops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tinyc.ir.core import Value
from tinyc.ir.instructions import StoreFlag
from tinyc.ir.types import ScalarType
from tinyc.passes.lowering.lowering_builder import LoweringBuilder, constant_value, is_constant


@dataclass
class Scaling:
    """alpha and beta of one collective, ready for use in the output type."""

    alpha: Value | None          # None: alpha is the constant 1
    beta: Value | None           # beta in the output type; None when constant 0 or 1
    beta_const: object           # the constant beta, or None when known only at run time
    beta_is_zero: Value | None   # run-time test, only when beta_const is None
    atomic: bool
    out_type: ScalarType

    @property
    def reads_output(self) -> bool:
        """Whether the update may read the old output."""
        return not self.atomic and not (self.beta_const is not None and self.beta_const == 0)

    @property
    def store_flag(self) -> StoreFlag:
        """Atomic store for beta 0, atomic add for beta 1; plain otherwise."""
        if not self.atomic:
            return StoreFlag.NONE
        return StoreFlag.ATOMIC if self.beta_const == 0 else StoreFlag.ATOMIC_ADD


def prepare_scaling(b: LoweringBuilder, alpha: Value, beta: Value, out_type: ScalarType,
                    atomic: bool) -> Scaling:
    """Cast alpha/beta to the output type and test a run-time beta against 0."""
    alpha_t = None if is_constant(alpha, 1) else b.named(b.cast(alpha, out_type), "alpha")
    beta_const = constant_value(beta)
    beta_t, beta_is_zero = None, None
    if beta_const is None:
        beta_t = b.named(b.cast(beta, out_type), "beta")
        beta_is_zero = b.named(b.eq(beta, b.zero(beta.type)), "beta_is_zero")
    elif beta_const != 0 and beta_const != 1:
        beta_t = b.named(b.cast(beta, out_type), "beta")
    return Scaling(alpha_t, beta_t, beta_const, beta_is_zero, atomic, out_type)


def store_update(b: LoweringBuilder, s: Scaling, value: Value, out: Value,
                 indices: Sequence[Value]) -> None:
    """out[indices] := alpha · value + beta · out[indices] for one element."""
    v = value if s.alpha is None else b.mul(s.alpha, value)
    if s.atomic or s.beta_const == 0:
        b.store(v, out, indices, s.store_flag)
        return
    if s.beta_const is not None:
        b.store(_plus_beta_out(b, s, v, out, indices), out, indices)
        return
    assert s.beta_is_zero is not None
    with b.if_(s.beta_is_zero, [s.out_type]) as branch:
        with branch.then():
            b.yield_([v])
        with branch.otherwise():
            b.yield_([_plus_beta_out(b, s, v, out, indices)])
    b.store(branch.results[0], out, indices)


def _plus_beta_out(b: LoweringBuilder, s: Scaling, v: Value, out: Value,
                   indices: Sequence[Value]) -> Value:
    old = b.load(out, indices)
    return b.add(v, old if s.beta is None else b.mul(s.beta, old))
