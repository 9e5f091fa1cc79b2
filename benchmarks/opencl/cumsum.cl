// Hand-written OpenCL C baselines of cumsum over mode 0 of 64×64 matrices:
//   B[i,j,g] := alpha · sum_{k <= i} A[k,j,g] + beta · B[i,j,g]   (T = float)

#include "common.h"

#define M 64

// Variant "scan": the lanes of a sub-group own 16 consecutive rows (coalesced
// loads); each column is four sub-group inclusive scans chained by a carry.
// Work-item (lane, y) walks every WGY-th column from y.
__attribute__((intel_reqd_sub_group_size(16)))
__attribute__((reqd_work_group_size(16, WGY, 1)))
kernel void cumsum_scan(T alpha, global const T *restrict A, T beta, global T *restrict B) {
    const size_t g = get_global_id(2);
    A += g * (M * M);
    B += g * (M * M);
    const int lane = LX;
    for (int t = 0; t < M / WGY; ++t) {  // same trip count in every lane
        const int j = LY + WGY * t;
        T carry = 0;
#pragma unroll
        for (int c = 0; c < M; c += 16) {
            const int at = c + lane + M * j;
            const T s = carry + sub_group_scan_inclusive_add(A[at]);
            B[at] = alpha * s + beta * B[at];
            carry = sub_group_broadcast(s, 15);
        }
    }
}

// Variant "columns": work-item j owns column j and runs the sequential sum
// down it (strided accesses across the sub-group; the data sits in L1/L2).
__attribute__((intel_reqd_sub_group_size(16)))
__attribute__((reqd_work_group_size(M, 1, 1)))
kernel void cumsum_columns(T alpha, global const T *restrict A, T beta, global T *restrict B) {
    const size_t g = get_global_id(2);
    A += g * (M * M);
    B += g * (M * M);
    const int j = LX;
    T s = 0;
#pragma unroll 8
    for (int i = 0; i < M; ++i) {
        s += A[i + M * j];
        B[i + M * j] = alpha * s + beta * B[i + M * j];
    }
}
