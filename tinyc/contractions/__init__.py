"""Tensor contractions (einsum) as tinyc kernels: subscripts → plan → IR → one kernel.

    subscripts.py  NumPy's subscript rules, checked          layout.py  arrays as memrefs, `?` modes
    path.py        contraction order by flop count           plan.py    batch on the group id, steps
    collectives.py steps as gemm/gemv/ger/hadamard/axpby/sum direct.py  the foreach fallback
    lanes.py       batch entries on a subgroup's lanes       lanestep.py  one step on the lanes
    emit.py        the kernel, with tinyc.builder            compiled.py  analysis, the batch labels
    knobs.py       what tuning may change                    tuning.py  tune=True, cached per device
    running.py     calls through Kernel, by address          api.py     einsum, contract, caches

Several statements in one kernel (`contract([...], shapes=...)`):

    statements.py       index notation, parsed      statement_check.py   shapes, temporaries, batch
    statement_layout.py arrays as `?`-batch memrefs statement_emit.py    the kernel, with the builder
    statement_arrays.py the arrays of a call        statement_kernel.py  `Statements`: compile, call
"""

from tinyc.contractions.api import Contraction, cache_info, clear_cache, contract, einsum
from tinyc.contractions.statement_kernel import Statements

__all__ = ["Contraction", "Statements", "contract", "einsum", "cache_info", "clear_cache"]
