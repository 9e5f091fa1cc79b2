"""tinyc.analysis.own_writes: can an address or a branch depend on memory the kernel writes?

The answer decides whether the bounds checks may run as a dry run that writes nothing. It
must be yes whenever a value read from written memory (by a load, an atomic's old value, a
coopmatrix update, local memory) reaches an index, a view's offset or size, a loop bound or
a branch, whatever the instruction; and it should be no for kernels that only store what
they read (gemm with beta = 1 reads and writes C).
"""

from __future__ import annotations

import pytest

from tinyc.analysis.own_writes import addressing_reads_own_writes
from tinyc.compiler import check_source
from tinyc.ir.core import Instruction
from tinyc.ir.types import index

HEAD = "func @k(%A: memref<i32x16>, %B: memref<i32x16>, %I: memref<index x4>) {\n  %z = constant 0 : index\n"

CASES = {
    # name: (body, reads own writes)
    "copy": ("%x = load %A[%z] : i32\n  store %x, %B[%z]", False),
    "accumulate": ("%x = load %B[%z] : i32\n  %y = arith.add %x, %x : i32\n  store %y, %B[%z]", False),
    "index from an input": ("%i = load %I[%z] : index\n  %x = load %A[%i] : i32\n  store %x, %B[%z]",
                            False),
    "index from an output": ("%i = load %I[%z] : index\n  store %i, %I[%z]\n  %x = load %A[%i] : i32",
                             True),
    "atomic_add ticket": ("%one = constant 1 : index\n  %t = atomic_add %one, %I[%z] : index\n"
                          "  %x = load %A[%t] : i32", True),
    "atomic_add data only": ("%one = constant 1 : i32\n  %t = atomic_add %one, %B[%z] : i32\n"
                             "  store %t, %A[%z]", False),
    "atomic_load after atomic_store": ("%one = constant 1 : index\n  atomic_store %one, %I[%z]\n"
                                       "  %t = atomic_load %I[%z] : index\n  %x = load %A[%t] : i32",
                                       True),
    "seed atomic add then load": ("%one = constant 1 : index\n  store.atomic_add %one, %I[%z]\n"
                                  "  %t = load %I[%z] : index\n  %x = load %A[%t] : i32", True),
    "loop bound": ("%one = constant 1 : index\n  store %one, %I[%z]\n  %n = load %I[%z] : index\n"
                   "  for %k = %z, %n {\n    %x = load %A[%k] : i32\n  }", True),
    "branch": ("%one = constant 1 : i32\n  store %one, %B[%z]\n  %x = load %B[%z] : i32\n"
               "  %c = cmp.eq %x, %one : bool\n  if %c {\n    store %x, %A[%z]\n  }", True),
    "subview offset": ("%one = constant 1 : index\n  store %one, %I[%z]\n  %o = load %I[%z] : index\n"
                       "  %v = subview %A[%o:4] : memref<i32x4,strided<1>>", True),
    "local memory": ("%t = alloca : memref<index x4,local>\n  %i = load %I[%z] : index\n"
                     "  store %i, %t[%z]\n  %j = load %t[%z] : index\n  %x = load %A[%j] : i32", True),
}


@pytest.mark.parametrize("name", CASES)
def test_reads_own_writes(name):
    body, expected = CASES[name]
    fn = check_source(HEAD + "  " + body + "\n}\n")["k"]
    assert addressing_reads_own_writes(fn) is expected


COOP = """
func @k(%M: memref<i32x16x4>, %A: memref<i32x64>) attributes {subgroup_size=16} {
  parallel {
    %z = constant 0 : index
    %m = cooperative_matrix_load %M[%z, %z] : coopmatrix<i32x16x4,matrix_acc>
    %old = cooperative_matrix_atomic_add %m, %M[%z, %z] : coopmatrix<i32x16x4,matrix_acc>
    %e = cooperative_matrix_extract %old[0] : i32
    %i = cast %e : index
    %x = load %A[%i] : i32
  }
}
"""


def test_coopmatrix_atomic_old_values_reach_an_index():
    assert addressing_reads_own_writes(check_source(COOP)["k"]) is True


class Undescribed(Instruction):
    """An instruction that does not say what it accesses: the default answer (reads and writes
    every memory operand) must make its memref written and its result read from it."""

    opname = "undescribed"
    abstract = True  # not one of the language's instructions


def test_an_undescribed_instruction_is_taken_to_write_its_memory():
    source = HEAD + "  %x = load %I[%z] : index\n  %y = load %A[%x] : i32\n}\n"
    fn = check_source(source)["k"]
    assert addressing_reads_own_writes(fn) is False
    fn.body.insert(1, Undescribed([fn.args[2]], [index]))  # touches %I, which then indexes %A
    assert addressing_reads_own_writes(fn) is True


def test_an_undescribed_instructions_result_is_read_from_its_memory():
    source = HEAD + "  %y = load %A[%z] : i32\n}\n"
    fn = check_source(source)["k"]
    touch = Undescribed([fn.args[1]], [index])  # touches %B; its result indexes %A
    fn.body.insert(1, touch)
    load = fn.body.instructions[-1]
    load.operands = [load.operands[0], touch.result]
    assert addressing_reads_own_writes(fn) is True
