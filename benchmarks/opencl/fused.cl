// Hand-written OpenCL C baseline of the spec's fused kernel:
//   D[:,:,g] += alpha · (A_g · Bᵀ) · C
// A_g 16×8 (group: a table of pointers, one per batch instance), B 8×8,
// C 8×16, D 16×16×batch, all column-major f32.
//
// -D WGY: work-items along y; each owns 16 / WGY columns of D.
// Work-item (i, y) owns row i of the result: row i of A_g·Bᵀ (8 values)
// and its D columns stay in registers; B and C entries are uniform over the
// sub-group (broadcast loads). OpenCL C forbids pointer-to-pointer kernel
// arguments, so the table is passed as ulong addresses and cast.

#include "common.h"
#define WGX 16

#define NC (16 / WGY)

__attribute__((intel_reqd_sub_group_size(16)))
__attribute__((reqd_work_group_size(16, WGY, 1)))
kernel void fused(float alpha, global const ulong *restrict A,
                  global const float *restrict B, global const float *restrict C,
                  global float *restrict D) {
    const size_t g = get_global_id(2);
    global const float *a = (global const float *)A[g];
    global float *d = D + g * 256;
    const int i = LX;
    const int j0 = LY * NC;
    float t[8];  // row i of A_g · Bᵀ
#pragma unroll
    for (int l = 0; l < 8; ++l) t[l] = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        const float aik = a[i + 16 * k];
#pragma unroll
        for (int l = 0; l < 8; ++l) t[l] = fma(aik, B[l + 8 * k], t[l]);
    }
    float acc[NC];
#pragma unroll
    for (int j = 0; j < NC; ++j) acc[j] = 0.0f;
#pragma unroll
    for (int l = 0; l < 8; ++l) {
#pragma unroll
        for (int j = 0; j < NC; ++j) acc[j] = fma(t[l], C[l + 8 * (j0 + j)], acc[j]);
    }
#pragma unroll
    for (int j = 0; j < NC; ++j) d[i + 16 * (j0 + j)] = fma(alpha, acc[j], d[i + 16 * (j0 + j)]);
}

// Variant "local": the intermediate A_g·Bᵀ goes through local memory (as the
// spec's alloca does), so the second product reads its row from there.
__attribute__((intel_reqd_sub_group_size(16)))
__attribute__((reqd_work_group_size(16, 1, 1)))
kernel void fused_local(float alpha, global const ulong *restrict A,
                        global const float *restrict B, global const float *restrict C,
                        global float *restrict D) {
    local float tmp[128];
    const size_t g = get_global_id(2);
    global const float *a = (global const float *)A[g];
    global float *d = D + g * 256;
    const int i = LX;
    float t[8];
#pragma unroll
    for (int l = 0; l < 8; ++l) t[l] = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        const float aik = a[i + 16 * k];
#pragma unroll
        for (int l = 0; l < 8; ++l) t[l] = fma(aik, B[l + 8 * k], t[l]);
    }
#pragma unroll
    for (int l = 0; l < 8; ++l) tmp[i + 16 * l] = t[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    float acc[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) acc[j] = 0.0f;
#pragma unroll
    for (int l = 0; l < 8; ++l) {
        const float x = tmp[i + 16 * l];
#pragma unroll
        for (int j = 0; j < 16; ++j) acc[j] = fma(x, C[l + 8 * j], acc[j]);
    }
#pragma unroll
    for (int j = 0; j < 16; ++j) d[i + 16 * j] = fma(alpha, acc[j], d[i + 16 * j]);
}

// Variant "vload": B's and C's columns are loaded as uniform float8 vectors
// (one load per column instead of eight scalar loads), and indices are
// unsigned so the address arithmetic needs no sign extension.
__attribute__((intel_reqd_sub_group_size(16)))
__attribute__((reqd_work_group_size(16, 1, 1)))
kernel void fused_vload(float alpha, global const ulong *restrict A,
                        global const float *restrict B, global const float *restrict C,
                        global float *restrict D) {
    const size_t g = get_global_id(2);
    global const float *a = (global const float *)A[g] + LX;
    global float *d = D + g * 256 + LX;
    float8 t = (float8)(0.0f);
#pragma unroll
    for (uint k = 0; k < 8; ++k) t = fma((float8)(a[16 * k]), vload8(k, B), t);
    // t = row i of A·Bᵀ: t[l] = sum_k A[i,k]·B[l,k], B column k = B[8k .. 8k+7].
#pragma unroll
    for (uint j = 0; j < 16; ++j) {
        const float8 c = vload8(j, C);  // column j of C
        const float8 p = t * c;
        const float s = ((p.s0 + p.s1) + (p.s2 + p.s3)) + ((p.s4 + p.s5) + (p.s6 + p.s7));
        d[16 * j] = fma(alpha, s, d[16 * j]);
    }
}
