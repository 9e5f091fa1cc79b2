// Hand-written OpenCL C baselines for batched C = op(A)·B (n×n, column-major,
// batch instance g at offset g·n² in each array).
//
// Compile-time parameters (-D):
//   T        float | double
//   N        matrix size
//   SG       required sub-group size (16 unless a variant says otherwise)
//   WGY      work-items along y; each owns NC = N / WGY columns of C
//   KU       unroll factor of the k loop
//   TRANS_A  0: op(A) = A (gemm.n.*), 1: op(A) = Aᵀ (gemm.t.*)
//   TRANS_B  0: op(B) = B (gemm.*.n), 1: op(B) = Bᵀ (gemm.*.t)
// One work-group of (N, WGY) work-items per batch instance (OpenCL dim 2).
// Work-item (i, y) owns row i of C restricted to the column block
// [y·NC, (y+1)·NC): the accumulators live in registers (acc[NC], fully
// unrolled), and the B entries are the same for all work-items of a
// sub-group, so they are uniform (broadcast) loads. Products are summed with
// explicit fma(): in a side-by-side run it beat `acc += a * b` (which OpenCL
// C may or may not contract), and tinyc's SPIR-V uses fma as well.

#define WGX N

#include "common.h"

#ifndef KU
#define KU 1
#endif
#ifndef TRANS_A
#define TRANS_A 0
#endif
#ifndef TRANS_B
#define TRANS_B 0
#endif
#if TRANS_B
#define OPB(k, j) B[(j) + N * (k)]
#else
#define OPB(k, j) B[(k) + N * (j)]
#endif
#define NC (N / WGY)
#define PRAGMA(x) _Pragma(#x)
#define UNROLL(n) PRAGMA(unroll n)

// Variant "rows": each work-item reads its row of op(A) from global memory
// (coalesced for .n; a strided gather for .t).
__attribute__((intel_reqd_sub_group_size(SG)))
__attribute__((reqd_work_group_size(N, WGY, 1)))
kernel void gemm_rows(global const T *restrict A, global const T *restrict B,
                      global T *restrict C) {
    const size_t g = get_global_id(2);
    A += g * (N * N);
    B += g * (N * N);
    C += g * (N * N);
    const int i = LX;
    const int j0 = LY * NC;
    T acc[NC];
#pragma unroll
    for (int j = 0; j < NC; ++j) acc[j] = 0;
    UNROLL(KU)
    for (int k = 0; k < N; ++k) {
#if TRANS_A
        const T a = A[k + N * i];
#else
        const T a = A[i + N * k];
#endif
#pragma unroll
        for (int j = 0; j < NC; ++j) acc[j] = fma(a, OPB(k, j0 + j), acc[j]);
    }
#pragma unroll
    for (int j = 0; j < NC; ++j) C[i + N * (j0 + j)] = acc[j];
}

// Variant "local": op(A) is first copied to local memory with coalesced
// global loads (the copy transposes for .t.n), then each work-item reads
// its row of op(A) from local memory.
__attribute__((intel_reqd_sub_group_size(SG)))
__attribute__((reqd_work_group_size(N, WGY, 1)))
kernel void gemm_local(global const T *restrict A, global const T *restrict B,
                       global T *restrict C) {
    local T As[N * N];
    const size_t g = get_global_id(2);
    A += g * (N * N);
    B += g * (N * N);
    C += g * (N * N);
    const int i = LX;
    const int j0 = LY * NC;
    for (int t = 0; t < NC; ++t) {  // same trip count in every lane
        const int c = LY + WGY * t;
#if TRANS_A
        As[c + N * i] = A[i + N * c];  // As = Aᵀ, column-major
#else
        As[i + N * c] = A[i + N * c];
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    T acc[NC];
#pragma unroll
    for (int j = 0; j < NC; ++j) acc[j] = 0;
    UNROLL(KU)
    for (int k = 0; k < N; ++k) {
        const T a = As[i + N * k];
#pragma unroll
        for (int j = 0; j < NC; ++j) acc[j] = fma(a, OPB(k, j0 + j), acc[j]);
    }
#pragma unroll
    for (int j = 0; j < NC; ++j) C[i + N * (j0 + j)] = acc[j];
}

// Variant "tiled": what a CPU performance engineer writes for small batched
// GEMMs (and what tinyc's lowering does): one sub-group per work-group computes
// C tile by tile, each work-item holding a register block of MR rows (i + SG·r,
// r < MR) by NR columns, so every A load feeds NR FMAs and every (broadcast) B
// load MR FMAs. A transposed A is first copied to local memory (As = Aᵀ,
// column-major): COPY 0 reads it row by row across lanes (a strided gather,
// contiguous stores), COPY 1 column by column (contiguous loads, strided stores).
// Needs N % (SG·MR) == 0 and N % NR == 0. Launched as (SG, 1) work-groups.
#ifndef MR
#define MR 1
#endif
#ifndef NR
#define NR 1
#endif
#ifndef COPY
#define COPY 0
#endif
__attribute__((intel_reqd_sub_group_size(SG)))
__attribute__((reqd_work_group_size(SG, 1, 1)))
kernel void gemm_tiled(global const T *restrict A, global const T *restrict B,
                       global T *restrict C) {
    const size_t g = get_global_id(2);
    A += g * (N * N);
    B += g * (N * N);
    C += g * (N * N);
    const int i = get_local_id(0);
#if TRANS_A
    local T As[N * N];
    for (int c = 0; c < N; ++c) {
        for (int m0 = 0; m0 < N; m0 += SG) {
#if COPY
            As[c + N * (m0 + i)] = A[m0 + i + N * c];   // As(c, m0 + i) = A(m0 + i, c)ᵀ
#else
            As[m0 + i + N * c] = A[c + N * (m0 + i)];   // As(m0 + i, c) = A(c, m0 + i)
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#define OPA(m, k) As[(m) + N * (k)]
#else
#define OPA(m, k) A[(m) + N * (k)]
#endif
    for (int m0 = 0; m0 < N; m0 += SG * MR) {
        for (int j0 = 0; j0 < N; j0 += NR) {
            T acc[MR][NR];
#pragma unroll
            for (int r = 0; r < MR; ++r)
#pragma unroll
                for (int j = 0; j < NR; ++j) acc[r][j] = 0;
            UNROLL(KU)
            for (int k = 0; k < N; ++k) {
                T a[MR];
#pragma unroll
                for (int r = 0; r < MR; ++r) a[r] = OPA(m0 + i + SG * r, k);
#pragma unroll
                for (int j = 0; j < NR; ++j) {
                    const T b = OPB(k, j0 + j);
#pragma unroll
                    for (int r = 0; r < MR; ++r) acc[r][j] = fma(a[r], b, acc[r][j]);
                }
            }
#pragma unroll
            for (int r = 0; r < MR; ++r)
#pragma unroll
                for (int j = 0; j < NR; ++j) C[m0 + i + SG * r + N * (j0 + j)] = acc[r][j];
        }
    }
}
