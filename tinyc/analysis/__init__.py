"""Analyses: facts about IR that passes, codegen and tools read, without changing it.
(The work model of `tinyc bench`, which runs the reference interpreter, is tinyc/harness/work.py.)

memory_effects   which memory each instruction reads and writes, and conflicts
parameters       how a kernel uses each parameter (read, written, batch mode, nullable)
own_writes       whether addresses depend on what the kernel writes (the dry run)
sizes            which `?` sizes and integer scalars a program relates (tinyc run's sizes)
launch_bounds    which launches stay inside their arguments (docs/launch.md), built on
                 symbolic (index expressions and their bounds), index_values (the integers
                 a kernel computes), memory_map (views back to their roots), batch_split
                 (can slices of the batch run apart) and batch_extents (useful batch, sizes)
"""
