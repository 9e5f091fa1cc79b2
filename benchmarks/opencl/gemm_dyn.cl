// Hand-written OpenCL C baseline of a batched gemm.n.n with sizes known only
// at run time: C[:,:,g] := A[:,:,g] · B[:,:,g], A m×k, B k×n, C m×n
// (column-major, packed; f32).
//
// -D NB: columns per register block; the host launches (roundup(m, 16), WGY)
// work-items per batch instance. Work-item (i, y) owns row i and walks
// column blocks y, y + WGY, ...; a ragged last block goes column by column.

#ifndef NB
#define NB 8
#endif

__attribute__((intel_reqd_sub_group_size(16)))
kernel void gemm_dyn(long m, long n, long k, global const float *restrict A,
                     global const float *restrict B, global float *restrict C) {
    const size_t g = get_global_id(2);
    A += g * m * k;
    B += g * k * n;
    C += g * m * n;
    const long i = get_local_id(0);
    if (i >= m) return;
    const long full = n / NB * NB;
    for (long j0 = get_local_id(1) * NB; j0 < full; j0 += get_local_size(1) * NB) {
        float acc[NB];
#pragma unroll
        for (int j = 0; j < NB; ++j) acc[j] = 0.0f;
        for (long p = 0; p < k; ++p) {
            const float a = A[i + m * p];
#pragma unroll
            for (int j = 0; j < NB; ++j) acc[j] = fma(a, B[p + k * (j0 + j)], acc[j]);
        }
#pragma unroll
        for (int j = 0; j < NB; ++j) C[i + m * (j0 + j)] = acc[j];
    }
    for (long j = full + get_local_id(1); j < n; j += get_local_size(1)) {
        float acc = 0.0f;
        for (long p = 0; p < k; ++p) acc = fma(A[i + m * p], B[p + k * j], acc);
        C[i + m * j] = acc;
    }
}
