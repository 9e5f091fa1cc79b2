// Hand-written OpenCL C baseline of axpby.n over a batch of 64×64 matrices:
//   B[:,:,g] := alpha · A[:,:,g] + beta · B[:,:,g]   (column-major, T = float)
//
// -D WGY: work-items along y. Work-item (i, y) owns row i and every WGY-th
// column from y, so each sub-group reads and writes 16 consecutive elements.

#include "common.h"

#define M 64

__attribute__((intel_reqd_sub_group_size(16)))
__attribute__((reqd_work_group_size(M, WGY, 1)))
kernel void axpby(T alpha, global const T *restrict A, T beta, global T *restrict B) {
    const size_t g = get_global_id(2);
    A += g * (M * M);
    B += g * (M * M);
    const int i = LX;
    // A trip count the same for every lane (j = LY + WGY·t, not a loop from
    // LY): a loop whose start depends on the work-item is vectorized with
    // masks and gathers (measured 3-5x slower).
#pragma unroll 4
    for (int t = 0; t < M / WGY; ++t) {
        const int j = LY + WGY * t;
        B[i + M * j] = alpha * A[i + M * j] + beta * B[i + M * j];
    }
}

// Variant "flat": the 64×64 matrix is one contiguous run of 4096 elements;
// the WGX work-items stride over it (16 consecutive elements per sub-group step).
__attribute__((intel_reqd_sub_group_size(16)))
__attribute__((reqd_work_group_size(WGX, 1, 1)))
kernel void axpby_flat(T alpha, global const T *restrict A, T beta, global T *restrict B) {
    const size_t g = get_global_id(2);
    A += g * (M * M);
    B += g * (M * M);
#pragma unroll 4
    for (int t = 0; t < M * M / WGX; ++t) {
        const int e = LX + WGX * t;
        B[e] = alpha * A[e] + beta * B[e];
    }
}
