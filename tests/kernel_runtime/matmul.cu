// tests/kernel_runtime/matmul.cu: a shared-memory tiled matrix product (16x16 tiles, syncthreads)
//
// Written by hand in the shape the kernel translator generates.
#define NU_BOUNDSCHECK 1
#include "kernel.cuh"

// TPB = 16
// def matmul(A, B, C):
//     sA = cuda.shared.array((TPB, TPB), float32); sB = cuda.shared.array((TPB, TPB), float32)
//     x, y = cuda.grid(2); tx = cuda.threadIdx.x; ty = cuda.threadIdx.y
//     acc = float32(0.)
//     for i in range((A.shape[1] + TPB - 1) // TPB):
//         sA[ty, tx] = A[y, tx + i * TPB] if y < A.shape[0] and tx + i * TPB < A.shape[1] else 0
//         sB[ty, tx] = B[ty + i * TPB, x] if x < B.shape[1] and ty + i * TPB < B.shape[0] else 0
//         cuda.syncthreads()
//         for j in range(TPB): acc += sA[ty, j] * sB[j, tx]
//         cuda.syncthreads()
//     if y < C.shape[0] and x < C.shape[1]: C[y, x] = acc
__device__ void nu_matmul_fff_0000000a(nu::array<float, 2> v_A, nu::array<float, 2> v_B, nu::array<float, 2> v_C);
__device__ void nu_matmul_fff_0000000a(nu::array<float, 2> v_A, nu::array<float, 2> v_B, nu::array<float, 2> v_C) {
    __shared__ float nu_sh_1[256];
    nu::array<float, 2> v_sA = nu::kern::contiguous_view(nu_sh_1, {16, 16});
    __shared__ float nu_sh_2[256];
    nu::array<float, 2> v_sB = nu::kern::contiguous_view(nu_sh_2, {16, 16});
    long long v_tx = nu::kern::thread_idx(0);
    long long v_ty = nu::kern::thread_idx(1);
    long long v_x = nu::kern::block_idx(0) * nu::kern::block_dim(0) + v_tx;
    long long v_y = nu::kern::block_idx(1) * nu::kern::block_dim(1) + v_ty;
    float v_acc = 0.0f;
    for (long long v_i = 0; v_i < nu::floordiv<long long>(v_A.shape[1] + 15, 16); ++v_i) {
        v_sA(v_ty, v_tx) = (v_y < v_A.shape[0] && v_tx + v_i * 16 < v_A.shape[1]) ? v_A(v_y, v_tx + v_i * 16) : 0.0f;
        v_sB(v_ty, v_tx) = (v_x < v_B.shape[1] && v_ty + v_i * 16 < v_B.shape[0]) ? v_B(v_ty + v_i * 16, v_x) : 0.0f;
        nu::kern::syncthreads();
        for (long long v_j = 0; v_j < 16; ++v_j) v_acc = nu::add<float>(v_acc, nu::mul<float>(v_sA(v_ty, v_j), v_sB(v_j, v_tx)));
        nu::kern::syncthreads();
    }
    if (v_y < v_C.shape[0] && v_x < v_C.shape[1]) v_C(v_y, v_x) = v_acc;
}
NU_KERNEL_ENTRY(nu_kernel_matmul_0000000a, nu_matmul_fff_0000000a, 15, 1,
                nu::karg<float, 2>, nu::karg<float, 2>, nu::karg<float, 2>)
