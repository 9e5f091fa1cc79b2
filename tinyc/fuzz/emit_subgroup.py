"""Generator entries for subgroup operations: reductions, scans and broadcasts.

(Registered after the collectives: the table keeps the order in which the
campaigns of docs/fuzzing.md drew their programs, so their seeds still
reproduce them.)
"""

from __future__ import annotations

from tinyc.fuzz.facts import SCALARS
from tinyc.fuzz.generator import Writer
from tinyc.fuzz.program import LANE, SUBGROUP
from tinyc.fuzz.registry import generates
from tinyc.ir import instructions as I
from tinyc.ir.types import f16, f32, f64, i8, i32, i64, index


@generates(I.SubgroupOperation, "subgroup_op", 0.8, "parallel", SUBGROUP)
def emit_subgroup_op(w: Writer) -> bool:
    t = w.pick((i32, i64, f32, f64, f16, index, i8))
    a = w.scalar(t)
    name = w.fresh("g")
    op, mode = w.pick(("add", "min", "max")), w.pick(("reduce", "inclusive_scan", "exclusive_scan"))
    w.emit(f"{name} = subgroup_{op}.{mode} {a.name} : {t}")
    exact = a.exact and (t.is_int or op != "add")
    w.define(name, t, level=SUBGROUP if mode == "reduce" else LANE, exact=exact)
    w.feature(f"subgroup_{op}.{mode}")
    return True


@generates(I.SubgroupBroadcast, "subgroup_broadcast", 0.5, "parallel", SUBGROUP)
def emit_broadcast(w: Writer) -> bool:
    t = w.pick(SCALARS)
    a = w.scalar(t)
    lane = w.int_in(i32, 0, min(w.subgroup, 4) - 1, level=SUBGROUP)
    name = w.fresh("g")
    w.emit(f"{name} = subgroup_broadcast {a.name}, {lane.name} : {t}")
    w.define(name, t, level=SUBGROUP, exact=a.exact)
    return True
