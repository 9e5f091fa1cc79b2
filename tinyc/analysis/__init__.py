"""Analyses: facts about IR that passes, codegen and tools read, without changing it.

memory_effects   which memory each instruction reads and writes, and conflicts
work             the work model (flops, minimum bytes) of `tinyc bench` and benchmarks/
"""
