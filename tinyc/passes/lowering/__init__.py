"""Lowering of collective instructions to SPMD code (one module per family).

gemm.py        gemm, gemv, ger: tiled coopmatrix matmul
blas1.py       axpby, hadamard_product: element-wise foreach
reductions.py  sum, cumsum: subgroup reductions and scans
tiling.py      tile shapes and distribution over subgroups (the tuning knobs)
scaling.py     the alpha/beta/atomic update rules shared by all of them
lowering_builder.py  LoweringBuilder: the insertion-point Builder with names, folding and typed constants
"""
