"""insert-barriers: exactly the barriers that data dependencies between collectives need.

Each test is the expected IR; lines marked `; +` are what the pass inserts,
`; =>` shows a barrier it widens (see pass_testlib.py).
"""

from __future__ import annotations

from pass_testlib import check_rewrite, instructions, run
from tinyc.passes.barriers import insert_barriers

SIGNATURE = """func @k(%A: memref<f32x16x16>, %B: memref<f32x16x16>, %C: memref<f32x16x16>,
        %D: memref<f32x16x16>, %E: memref<f32x16x16>, %n: index) {
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  %c0 = constant 0 : index
  %c1 = constant 1 : index
"""


def kernel(body: str) -> str:
    return SIGNATURE + body + "\n}\n"


def check(body: str) -> None:
    check_rewrite(kernel(body), [insert_barriers])


# ---------------------------------------------------------------- global memory

def test_read_after_write_global():
    check("""
  gemm.n.n %one, %A, %B, %zero, %C
  barrier.global                                  ; +
  gemm.n.n %one, %C, %B, %zero, %D
""")


def test_write_after_read_global():
    check("""
  gemm.n.n %one, %A, %B, %zero, %C
  barrier.global                                  ; +
  axpby.n %one, %D, %zero, %A
""")


def test_write_after_write_global():
    check("""
  axpby.n %one, %A, %zero, %C
  barrier.global                                  ; +
  axpby.n %one, %B, %zero, %C
""")


def test_independent_outputs_from_shared_inputs_need_no_barrier():
    check("""
  gemm.n.n %one, %A, %B, %zero, %C
  gemm.n.t %one, %A, %B, %zero, %D
  axpby.t %one, %B, %zero, %E
""")


def test_read_after_read_needs_no_barrier():
    check("""
  %v = alloca : memref<f32x16,local>
  sum.n %one, %A, %zero, %v
  gemm.n.n %one, %A, %A, %zero, %D
""")


def test_scalar_load_and_store_at_collective_level():
    check("""
  gemm.n.n %one, %A, %B, %zero, %C
  barrier.global                                  ; +
  %x = load %C[%c0, %c1] : f32
  store %x, %D[%c0, %c0]
  barrier.global                                  ; +
  axpby.n %one, %D, %zero, %E
""")


def test_beta_read_of_output_counts():
    # %C is only read (beta = 1) by the second gemm, after the first wrote it.
    check("""
  axpby.n %one, %A, %zero, %C
  barrier.global                                  ; +
  gemm.n.n %one, %A, %B, %one, %C
""")


# ---------------------------------------------------------------- local memory and both spaces

def test_dependencies_through_alloca_use_local_fence():
    check("""
  %T = alloca : memref<f32x16x16,local>
  gemm.n.n %one, %A, %B, %zero, %T
  barrier.local                                   ; +
  gemm.n.n %one, %T, %B, %zero, %C
  barrier.local                                   ; +
  axpby.n %one, %A, %zero, %T
""")


def test_both_spaces_at_once():
    check("""
  %T = alloca : memref<f32x16x16,local>
  gemm.n.n %one, %A, %B, %zero, %T
  axpby.n %one, %A, %zero, %C
  barrier.global.local                            ; +
  gemm.n.n %one, %T, %C, %zero, %D
""")


def test_distinct_allocas_are_independent():
    check("""
  %T = alloca : memref<f32x16x16,local>
  %U = alloca : memref<f32x16x16,local>
  axpby.n %one, %A, %zero, %T
  axpby.n %one, %B, %zero, %U
  barrier.local                                   ; +
  gemm.n.n %one, %T, %U, %zero, %C
""")


# ---------------------------------------------------------------- views and groups

def test_subviews_of_one_argument_are_one_object():
    # The blocks are disjoint, but the analysis works per root argument.
    check("""
  %top = subview %C[0:8, :] : memref<f32x8x16,strided<1,16>>
  %bottom = subview %C[8:8, :] : memref<f32x8x16,strided<1,16>>
  %Atop = subview %A[0:8, :] : memref<f32x8x16,strided<1,16>>
  axpby.n %one, %Atop, %zero, %top
  barrier.global                                  ; +
  axpby.n %one, %Atop, %zero, %bottom
""")


def test_expand_and_fuse_keep_the_root():
    check("""
  %F = fuse %A[0, 1] : memref<f32x256>
  %X = expand %F[0 -> 16x16] : memref<f32x16x16>
  axpby.n %one, %B, %zero, %X
  barrier.global                                  ; +
  gemm.n.n %one, %A, %B, %zero, %C
""")


def test_group_members_may_alias():
    check_rewrite("""
func @k(%G: group<memref<f32x16x16>x?>, %B: memref<f32x16x16>, %C: memref<f32x16x16>) {
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  %i = builtin.group_id : index
  %c1 = constant 1 : index
  %j = arith.add %i, %c1 : index
  %X = load %G[%i] : memref<f32x16x16>
  %Y = load %G[%j] : memref<f32x16x16>
  axpby.n %one, %B, %zero, %X
  barrier.global                                  ; +
  gemm.n.n %one, %Y, %B, %zero, %C
}
""", [insert_barriers])


def test_group_is_read_only_here_so_no_barrier():
    check_rewrite("""
func @k(%G: group<memref<f32x16x16>x?>, %B: memref<f32x16x16>, %C: memref<f32x16x16>,
        %D: memref<f32x16x16>) {
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  %i = builtin.group_id : index
  %X = load %G[%i] : memref<f32x16x16>
  gemm.n.n %one, %X, %B, %zero, %C
  %Y = load %G[%i] : memref<f32x16x16>
  axpby.n %one, %Y, %zero, %D
}
""", [insert_barriers])


# ---------------------------------------------------------------- loops

def test_accumulation_across_the_back_edge():
    check("""
  for %i = %c0, %n {
    barrier.global                                ; +
    gemm.n.n %one, %A, %B, %one, %C
  }
""")


def test_back_edge_only_dependency():
    # Within one iteration the manual barrier orders the two; the write at the end
    # of one iteration and the read at the start of the next need a new one.
    check("""
  for %i = %c0, %n {
    barrier.global                                ; +
    gemm.n.n %one, %A, %B, %zero, %C
    barrier.global
    axpby.n %one, %D, %zero, %A
  }
""")


def test_repeated_write_in_a_loop_is_a_dependency():
    # Each iteration writes %D again: write-after-write across the back edge.
    check("""
  for %i = %c0, %n {
    barrier.global                                ; +
    axpby.n %one, %A, %zero, %D
  }
""")


def test_loop_without_dependency_needs_no_barrier():
    # Reads of %C after the manual barrier, atomic accumulation into %D.
    check("""
  axpby.n %one, %A, %zero, %C
  barrier.global
  for %i = %c0, %n {
    gemm.n.n.atomic %one, %C, %B, %one, %D
  }
""")


def test_dependency_into_and_out_of_a_loop():
    check("""
  axpby.n %one, %A, %zero, %C
  for %i = %c0, %n {
    barrier.global                                ; +
    gemm.n.n %one, %C, %B, %zero, %D
  }
  barrier.global                                  ; +
  axpby.n %one, %D, %zero, %E
""")


def test_pending_write_passes_through_a_loop_that_may_not_run():
    check("""
  axpby.n %one, %A, %zero, %C
  for %i = %c0, %n {
    %x = load %B[%i, %c0] : f32
  }
  barrier.global                                  ; +
  axpby.n %one, %C, %zero, %E
""")


def test_a_loop_over_blocks_that_each_iteration_takes_elsewhere_needs_no_barrier():
    # Iteration i reads column i of %A and writes column i of %C (and of %E at %base + i):
    # no two iterations touch one element, whatever the collectives' work-item mapping.
    check("""
  %base = constant 2 : index
  for %i = %c0, %n {
    %a = subview %A[:, %i] : memref<f32x16>
    %c = subview %C[:, %i] : memref<f32x16>
    %j = arith.add %base, %i : index
    %e = subview %E[:, %j] : memref<f32x16>
    axpby.n %one, %a, %one, %c
    axpby.n %one, %a, %zero, %e
  }
""")


def test_a_block_read_through_another_view_in_a_later_iteration_is_a_dependency():
    # %c writes column i, %p reads column i + 1: written in the next iteration.
    check("""
  for %i = %c0, %n {
    %c = subview %C[:, %i] : memref<f32x16>
    %k = arith.add %c1, %i : index
    %p = subview %C[:, %k] : memref<f32x16>
    barrier.global                                ; +
    axpby.n %one, %p, %zero, %c
  }
""")


def test_two_views_written_in_one_loop_keep_their_barrier():
    # Columns i and i + 1 of %C: iteration i + 1 writes column i + 1 again.
    check("""
  for %i = %c0, %n {
    %c = subview %C[:, %i] : memref<f32x16>
    %k = arith.add %i, %c1 : index
    %d = subview %C[:, %k] : memref<f32x16>
    %a = subview %A[:, %c0] : memref<f32x16>
    barrier.global                                ; +
    axpby.n %one, %a, %zero, %c
    barrier.global                                ; +
    axpby.n %one, %a, %zero, %d
  }
""")


def test_a_block_of_many_columns_or_of_a_view_made_in_the_loop_keeps_its_barrier():
    check("""
  for %i = %c0, %n {
    %c = subview %C[:, %i:2] : memref<f32x16x2>
    %b = subview %B[:, 0:2] : memref<f32x16x2>
    barrier.global                                ; +
    axpby.n %one, %b, %zero, %c
  }
  for %i = %c0, %n {
    %v = subview %D[:, 0:16] : memref<f32x16x16>
    %d = subview %v[:, %i] : memref<f32x16>
    %a = subview %A[:, %c0] : memref<f32x16>
    barrier.global                                ; +
    axpby.n %one, %a, %zero, %d
  }
""")


def test_nested_loops():
    check("""
  for %i = %c0, %n {
    barrier.global                                ; +
    axpby.n %one, %A, %zero, %D
    for %j = %c0, %n {
      barrier.global                              ; +
      gemm.n.n %one, %D, %B, %one, %C
    }
  }
""")


def test_atomic_accumulation_commutes():
    check("""
  for %i = %c0, %n {
    gemm.n.n.atomic %one, %A, %B, %one, %C
  }
  gemm.n.n.atomic %one, %A, %B, %one, %C
  barrier.global                                  ; +
  axpby.n %one, %C, %zero, %D
""")


def test_atomic_store_is_a_write():
    check("""
  axpby.n.atomic %one, %A, %zero, %C
  barrier.global                                  ; +
  axpby.n.atomic %one, %B, %zero, %C
""")


# ---------------------------------------------------------------- branches

def test_dependency_inside_a_branch():
    check("""
  %c = cmp.lt %c0, %n : bool
  axpby.n %one, %A, %zero, %C
  if %c {
    barrier.global                                ; +
    gemm.n.n %one, %C, %B, %zero, %D
  } else {
    gemm.n.n %one, %A, %B, %zero, %D
  }
""")


def test_state_after_if_is_the_union_of_both_branches():
    check("""
  %c = cmp.lt %c0, %n : bool
  if %c {
    axpby.n %one, %A, %zero, %C
  } else {
    %T = alloca : memref<f32x16x16,local>
    axpby.n %one, %A, %zero, %T
    axpby.n %one, %B, %zero, %D
  }
  barrier.global                                  ; +
  gemm.n.n %one, %C, %D, %zero, %E
""")


def test_barrier_in_one_branch_does_not_cover_the_other():
    check("""
  %c = cmp.lt %c0, %n : bool
  axpby.n %one, %A, %zero, %C
  if %c {
    barrier.global
  }
  barrier.global                                  ; +
  axpby.n %one, %C, %zero, %D
""")


# ---------------------------------------------------------------- manual barriers

def test_manual_barrier_is_kept_and_not_duplicated():
    check("""
  gemm.n.n %one, %A, %B, %zero, %C
  barrier.global
  gemm.n.n %one, %C, %B, %zero, %D
  barrier.global.local
  axpby.n %one, %D, %zero, %E
""")


def test_manual_barrier_with_the_wrong_fence_is_widened():
    check("""
  gemm.n.n %one, %A, %B, %zero, %C
  barrier.local                                   ; => barrier.global.local
  gemm.n.n %one, %C, %B, %zero, %D
  barrier                                         ; => barrier.global
  axpby.n %one, %D, %zero, %E
""")


def test_manual_barrier_earlier_still_counts():
    check("""
  axpby.n %one, %A, %zero, %C
  barrier.global
  axpby.n %one, %B, %zero, %D
  gemm.n.n %one, %C, %B, %zero, %E
""")


# ---------------------------------------------------------------- SPMD regions

def test_write_in_parallel_then_collective_read():
    check("""
  parallel {
    %x = load %A[%c0, %c0] : f32
    store %x, %C[%c0, %c1]
    %y = load %C[%c0, %c1] : f32
  }
  barrier.global                                  ; +
  gemm.n.n %one, %C, %B, %zero, %D
""")


def test_collective_write_then_foreach_read():
    check("""
  axpby.n %one, %A, %zero, %C
  barrier.global                                  ; +
  foreach (%i, %j) = (%c0, %c0), (%n, %n) {
    %x = load %C[%i, %j] : f32
    store %x, %D[%i, %j]
  }
""")


def test_barriers_inside_spmd_regions_count():
    check("""
  axpby.n %one, %A, %zero, %C
  parallel {
    barrier.global
    %x = load %C[%c0, %c0] : f32
    store %x, %D[%c0, %c0]
    barrier.global
  }
  gemm.n.n %one, %D, %B, %zero, %E
""")


def test_spmd_barrier_inside_a_branch_does_not_count():
    check("""
  %c = cmp.lt %c0, %n : bool
  axpby.n %one, %A, %zero, %C
  barrier.global                                  ; +
  parallel {
    if %c {
      barrier.global
    }
    %x = load %C[%c0, %c0] : f32
  }
""")


def test_spmd_for_loop_accesses_count():
    check("""
  axpby.n %one, %A, %zero, %C
  barrier.global                                  ; +
  parallel {
    for %i = %c0, %n {
      %x = load %C[%i, %c0] : f32
    }
  }
""")


def test_cooperative_matrix_in_parallel_region():
    check("""
  %T = alloca : memref<f32x16x16,local>
  axpby.n %one, %A, %zero, %T
  barrier.local                                   ; +
  parallel {
    %a = cooperative_matrix_load.n %T[%c0, %c0] : coopmatrix<f32x16x16,matrix_acc>
    cooperative_matrix_store %a, %C[%c0, %c0]
  }
  barrier.global                                  ; +
  axpby.n %one, %C, %zero, %D
""")


def test_pass_is_idempotent():
    source = kernel("""
  for %i = %c0, %n {
    gemm.n.n %one, %A, %B, %one, %C
    axpby.n %one, %C, %zero, %D
  }
  gemm.n.n %one, %D, %B, %zero, %E
""")
    program = run(source, [insert_barriers, insert_barriers])
    assert len(instructions(program.functions[0], "barrier")) == 3
