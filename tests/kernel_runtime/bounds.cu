// tests/kernel_runtime/bounds.cu: out-of-bounds accesses are reported, not performed; a barrier in a non-cooperative kernel fails
//
// Written by hand in the shape the kernel translator generates.
#define NU_BOUNDSCHECK 1
#include "kernel.cuh"

// def fill(out):   # launched with more threads than out has elements
//     i = cuda.grid(1); out[i] = i
__device__ void nu_fill_q_00000020(nu::array<long long, 1> v_out);
__device__ void nu_fill_q_00000020(nu::array<long long, 1> v_out) {
    long long v_i = nu::kern::thread_idx(0) + nu::kern::block_idx(0) * nu::kern::block_dim(0);
    v_out(v_i) = v_i;
}
NU_KERNEL_ENTRY(nu_kernel_fill_00000020, nu_fill_q_00000020, 3, 0, nu::karg<long long, 1>)

// def probe(m, i, j, out):   # out[0] = m[i, j] (reads 0 when out of bounds); m[i, j] = 7; m[i][j] += 1
__device__ void nu_probe_dqqd_00000021(nu::array<double, 2> v_m, long long v_i, long long v_j, nu::array<double, 1> v_out);
__device__ void nu_probe_dqqd_00000021(nu::array<double, 2> v_m, long long v_i, long long v_j, nu::array<double, 1> v_out) {
    v_out(0) = v_m(v_i, v_j);
    v_m(v_i, v_j) = 7.0;
    v_m.row(v_i)(v_j) = v_m.row(v_i)(v_j) + 1.0;
}
NU_KERNEL_ENTRY(nu_kernel_probe_00000021, nu_probe_dqqd_00000021, 10, 0,
                nu::karg<double, 2>, nu::karg<long long, -1>, nu::karg<long long, -1>, nu::karg<double, 1>)

// A barrier in a kernel whose entry says COOPERATIVE = 0: the engine's bug, reported as 3.
__device__ void nu_misuse_00000022();
__device__ void nu_misuse_00000022() { nu::kern::syncthreads(); }
NU_KERNEL_ENTRY(nu_kernel_misuse_00000022, nu_misuse_00000022, 0, 0)
