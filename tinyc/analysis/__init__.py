"""Analyses: facts about IR that passes, codegen and tools read, without changing it.

memory_effects   which memory each instruction reads and writes, and conflicts
work             the work model (flops, minimum bytes) of `tinyc bench` and benchmarks/
launch_bounds    which launches stay inside their arguments (docs/launch.md), built on
                 symbolic (index expressions and their bounds), index_values (the integers
                 a kernel computes), memory_map (views back to their roots), batch_split
                 (can slices of the batch run apart) and batch_extents (useful batch, sizes)
"""
