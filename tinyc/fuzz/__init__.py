"""Differential testing of tinyc: random valid programs on the device vs the reference.

    python -m tinyc.fuzz --programs 200 --seed 1
    ...
    programs 200 mismatches 0 internal-errors 0 hangs 0

* `generator.py` / `instructions.py`: random kernels that are valid and free
  of undefined behaviour by construction (Csmith/YARPGen-style), one table
  entry per instruction kind; every type, nested for/if/foreach/parallel,
  views and groups, collectives with random shapes, transposes, alpha, beta
  and atomics, subgroup and coopmatrix operations.
* `runner.py`: kernels compiled many to a module (one JIT), run on the device
  and in the NumPy reference interpreter; `oracle.py` checks the reference's
  collectives against NumPy on the way.
* `mutate.py`: one-edit mutants of the generated sources through
  `tinyc.compile`, which must succeed or raise CompilationError in time.
* `shrink.py`: failing kernels are reduced by deleting instructions.
* `isolate.py`: the programs run in worker processes, so that a crash of the
  device's JIT is counted (as an internal error) and the campaign goes on.
* `calls.py` (`python -m tinyc.fuzz.calls`): the other inputs, arguments: generated
  kernels and `tinyc.einsum` called with wrong and odd ones, in canary-guarded
  buffers; each call runs correctly or raises a documented error first.
* `campaign.py`: the driver and its report; the last line is
  `programs N mismatches M internal-errors I hangs H`, exit status 1 unless
  M, I and H are all 0. A generated program that tinyc rejects, or in which
  the reference finds undefined behaviour, counts as a mismatch: generator
  and compiler disagree about the language.
"""
