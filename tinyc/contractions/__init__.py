"""Tensor contractions (einsum) as tinyc kernels: subscripts → plan → IR → one kernel.

    subscripts.py  NumPy's subscript rules, checked          layout.py  arrays as memrefs
    path.py        contraction order by flop count           plan.py    batch modes, steps
    collectives.py steps as gemm/gemv/ger/hadamard/axpby/sum direct.py  the foreach fallback
    emit.py        the kernel, with tinyc.builder            launch.py  zero-copy launch
    compiled.py    analysis and compilation of one case      api.py     einsum, contract, cache

Several statements in one kernel (`contract([...], shapes=...)`):

    statements.py       index notation, parsed      statement_check.py   shapes, temporaries, batch
    statement_layout.py arrays as `?`-batch memrefs statement_emit.py    the kernel, with the builder
    statement_arrays.py the arrays of a call        statement_kernel.py  `Statements`: compile, call
"""

from tinyc.contractions.api import Contraction, cache_info, clear_cache, contract, einsum
from tinyc.contractions.statement_kernel import Statements

__all__ = ["Contraction", "Statements", "contract", "einsum", "cache_info", "clear_cache"]
