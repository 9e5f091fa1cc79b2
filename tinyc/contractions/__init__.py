"""Tensor contractions (einsum) as tinyc kernels: subscripts → plan → IR → one kernel.

    subscripts.py  NumPy's subscript rules, checked          layout.py  arrays as memrefs
    path.py        contraction order by flop count           plan.py    batch modes, steps
    collectives.py steps as gemm/gemv/ger/hadamard/axpby/sum direct.py  the foreach fallback
    emit.py        the kernel, with tinyc.builder            launch.py  zero-copy launch
    compiled.py    analysis and compilation of one case      api.py     einsum, contract, cache
"""

from tinyc.contractions.api import Contraction, cache_info, clear_cache, contract, einsum

__all__ = ["Contraction", "contract", "einsum", "cache_info", "clear_cache"]
