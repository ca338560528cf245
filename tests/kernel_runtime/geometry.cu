// tests/kernel_runtime/geometry.cu: indexing, scalars, 3-D geometry, 1024-thread blocks, dynamic shared memory, bit intrinsics
//
// Written by hand in the shape the kernel translator generates; tests/test_kernel_runtime.py
// builds it for the host (g++) and the device (nvcc -ptx).
#define NU_BOUNDSCHECK 1
#include "kernel.cuh"

// def add_vectors(a, b, result, alpha):
//     i = cuda.grid(1)
//     if i < result.size: result[i] = a[i] + alpha * b[i]
__device__ void nu_add_vectors_fff_1a2b3c4d(nu::array<float, 1> v_a, nu::array<float, 1> v_b,
                                            nu::array<float, 1> v_result, double v_alpha);
__device__ void nu_add_vectors_fff_1a2b3c4d(nu::array<float, 1> v_a, nu::array<float, 1> v_b,
                                            nu::array<float, 1> v_result, double v_alpha) {
    long long v_i = nu::kern::thread_idx(0) + nu::kern::block_idx(0) * nu::kern::block_dim(0);
    if (v_i < v_result.size()) {
        v_result(v_i) = nu::cast<float>(nu::add<double>(nu::cast<double>(v_a(v_i)),
                                                        nu::mul<double>(v_alpha, nu::cast<double>(v_b(v_i)))));
    }
}
NU_KERNEL_ENTRY(nu_kernel_add_vectors_1a2b3c4d, nu_add_vectors_fff_1a2b3c4d, 10, 0,
                nu::karg<float, 1>, nu::karg<float, 1>, nu::karg<float, 1>, nu::karg<double, -1>)

// def scale_2d(x, z, out, k, negate):   # z complex128 (two words), then int32 and bool scalars
//     i, j = cuda.grid(2)                # i along x (columns), j along y (rows)
//     if j < out.shape[0] and i < out.shape[1]:
//         r = x[j, i] * k * z
//         out[j, i] = -r if negate else r
__device__ void nu_scale_2d_dDib_00000001(nu::array<double, 2> v_x, nu::complex<double> v_z,
                                          nu::array<nu::complex<double>, 2> v_out, int v_k, bool v_negate);
__device__ void nu_scale_2d_dDib_00000001(nu::array<double, 2> v_x, nu::complex<double> v_z,
                                          nu::array<nu::complex<double>, 2> v_out, int v_k, bool v_negate) {
    long long v_i = nu::kern::block_idx(0) * nu::kern::block_dim(0) + nu::kern::thread_idx(0);
    long long v_j = nu::kern::block_idx(1) * nu::kern::block_dim(1) + nu::kern::thread_idx(1);
    if (v_j < v_out.shape[0] && v_i < v_out.shape[1]) {
        double v_s = nu::mul<double>(v_x(v_j, v_i), nu::cast<double>(v_k));
        nu::complex<double> v_r{v_s * v_z.re, v_s * v_z.im};
        v_out(v_j, v_i) = v_negate ? nu::complex<double>{-v_r.re, -v_r.im} : v_r;
    }
}
NU_KERNEL_ENTRY(nu_kernel_scale_2d_00000001, nu_scale_2d_dDib_00000001, 14, 0,
                nu::karg<double, 2>, nu::karg<nu::complex<double>, -1>, nu::karg<nu::complex<double>, 2>,
                nu::karg<int, -1>, nu::karg<bool, -1>)

// def geometry(out):   # out[block_linear, thread_linear, 14]: what each thread sees
__device__ void nu_geometry_q_00000002(nu::array<long long, 3> v_out);
__device__ void nu_geometry_q_00000002(nu::array<long long, 3> v_out) {
    long long v_b = nu::kern::block_idx(0) + nu::kern::grid_dim(0) * (nu::kern::block_idx(1) + nu::kern::grid_dim(1) * nu::kern::block_idx(2));
    long long v_t = nu::kern::thread_idx(0) + nu::kern::block_dim(0) * (nu::kern::thread_idx(1) + nu::kern::block_dim(1) * nu::kern::thread_idx(2));
    nu::array<long long, 1> v_row = v_out.row(v_b).row(v_t);
    for (int v_a = 0; v_a < 3; ++v_a) {
        v_row(0 + v_a) = nu::kern::thread_idx(v_a);
        v_row(3 + v_a) = nu::kern::block_idx(v_a);
        v_row(6 + v_a) = nu::kern::block_dim(v_a);
        v_row(9 + v_a) = nu::kern::grid_dim(v_a);
    }
    v_row(12) = nu::kern::lane_id();
    v_row(13) = nu::kern::warp_size();
}
NU_KERNEL_ENTRY(nu_kernel_geometry_00000002, nu_geometry_q_00000002, 7, 0, nu::karg<long long, 3>)

// def big_block(out, counts):   # 1024 threads: shared exchange across the whole block
//     sh = cuda.shared.array(1024, int32)
//     t = cuda.threadIdx.x
//     sh[t] = t * 3
//     c = cuda.syncthreads_count(t % 3 == 0)
//     out[cuda.blockIdx.x, t] = sh[1023 - t]
//     counts[cuda.blockIdx.x, t] = c + 10000 * cuda.syncthreads_and(t < 2000) + 100000 * cuda.syncthreads_or(t == 1000)
__device__ void nu_big_block_ii_00000003(nu::array<int, 2> v_out, nu::array<int, 2> v_counts);
__device__ void nu_big_block_ii_00000003(nu::array<int, 2> v_out, nu::array<int, 2> v_counts) {
    __shared__ int nu_sh_1[1024];
    nu::array<int, 1> v_sh = nu::kern::contiguous_view(nu_sh_1, {1024});
    long long v_t = nu::kern::thread_idx(0);
    v_sh(v_t) = int(v_t * 3);
    int v_c = nu::kern::syncthreads_count(v_t % 3 == 0);
    v_out(nu::kern::block_idx(0), v_t) = v_sh(1023 - v_t);
    int v_and = nu::kern::syncthreads_and(v_t < 2000);
    int v_or = nu::kern::syncthreads_or(v_t == 1000);
    v_counts(nu::kern::block_idx(0), v_t) = v_c + 10000 * v_and + 100000 * v_or;
}
NU_KERNEL_ENTRY(nu_kernel_big_block_00000003, nu_big_block_ii_00000003, 10, 1,
                nu::karg<int, 2>, nu::karg<int, 2>)

// def reverse(a, out):   # dynamic shared memory: each block reverses its chunk
//     sh = cuda.shared.array(0, float32)
//     n = dynamic bytes / 4; t = threadIdx.x; base = blockIdx.x * n
//     sh[t] = a[base + t]; cuda.syncthreads(); out[base + t] = sh[n - 1 - t]
__device__ void nu_reverse_ff_00000004(nu::array<float, 1> v_a, nu::array<float, 1> v_out);
__device__ void nu_reverse_ff_00000004(nu::array<float, 1> v_a, nu::array<float, 1> v_out) {
    long long v_n = (long long)(nu::kern::dynamic_shared_bytes() / sizeof(float));
    nu::array<float, 1> v_sh = nu::kern::contiguous_view(nu::kern::dynamic_shared<float>(), {v_n});
    long long v_t = nu::kern::thread_idx(0);
    long long v_base = nu::kern::block_idx(0) * v_n;
    v_sh(v_t) = v_a(v_base + v_t);
    nu::kern::syncthreads();
    v_out(v_base + v_t) = v_sh(v_n - 1 - v_t);
}
NU_KERNEL_ENTRY(nu_kernel_reverse_00000004, nu_reverse_ff_00000004, 6, 1,
                nu::karg<float, 1>, nu::karg<float, 1>)

// def bits(u, q, x, out_u, out_q, out_i, out_f):
//     i = cuda.grid(1)
//     out_i[i, 0..5] = popc(u[i]), clz(u[i]), ffs(u[i]), popc(q[i]), clz(q[i]), ffs(q[i])
//     out_u[i] = brev(u[i]); out_q[i] = brev(q[i]); out_f[i] = fma(x[i], x[i], 1.0)
__device__ void nu_bits_IqdIqid_00000005(nu::array<unsigned, 1> v_u, nu::array<long long, 1> v_q,
                                         nu::array<double, 1> v_x, nu::array<unsigned, 1> v_out_u,
                                         nu::array<long long, 1> v_out_q, nu::array<int, 2> v_out_i,
                                         nu::array<double, 1> v_out_f);
__device__ void nu_bits_IqdIqid_00000005(nu::array<unsigned, 1> v_u, nu::array<long long, 1> v_q,
                                         nu::array<double, 1> v_x, nu::array<unsigned, 1> v_out_u,
                                         nu::array<long long, 1> v_out_q, nu::array<int, 2> v_out_i,
                                         nu::array<double, 1> v_out_f) {
    long long v_i = nu::kern::thread_idx(0) + nu::kern::block_idx(0) * nu::kern::block_dim(0);
    if (v_i >= v_u.size()) return;
    v_out_i(v_i, 0) = nu::kern::popc(v_u(v_i));
    v_out_i(v_i, 1) = nu::kern::clz(v_u(v_i));
    v_out_i(v_i, 2) = nu::kern::ffs(v_u(v_i));
    v_out_i(v_i, 3) = nu::kern::popc(v_q(v_i));
    v_out_i(v_i, 4) = nu::kern::clz(v_q(v_i));
    v_out_i(v_i, 5) = nu::kern::ffs(v_q(v_i));
    v_out_u(v_i) = nu::kern::brev(v_u(v_i));
    v_out_q(v_i) = nu::kern::brev(v_q(v_i));
    v_out_f(v_i) = nu::kern::fma(v_x(v_i), v_x(v_i), 1.0);
}
NU_KERNEL_ENTRY(nu_kernel_bits_00000005, nu_bits_IqdIqid_00000005, 23, 0,
                nu::karg<unsigned, 1>, nu::karg<long long, 1>, nu::karg<double, 1>, nu::karg<unsigned, 1>,
                nu::karg<long long, 1>, nu::karg<int, 2>, nu::karg<double, 1>)

// def nothing():   # no parameters at all
__device__ void nu_nothing_00000006();
__device__ void nu_nothing_00000006() { nu::kern::syncthreads(); }
NU_KERNEL_ENTRY(nu_kernel_nothing_00000006, nu_nothing_00000006, 0, 1)

// TABLE = np.array([1.5, 2.5, 3.5, 4.5])
// def tables(out):   # a constant array and a 2-D local array, both through contiguous views
//     c = cuda.const.array_like(TABLE); loc = cuda.local.array((2, 4), float64)
//     i = cuda.grid(1)
//     for r in range(2): for k in range(4): loc[r, k] = c[k] * (r + 1)
//     out[i] = loc[i % 2, i % 4] + i
__constant__ const double nu_const_1[4] = {1.5, 2.5, 3.5, 4.5};
__device__ void nu_tables_d_00000007(nu::array<double, 1> v_out);
__device__ void nu_tables_d_00000007(nu::array<double, 1> v_out) {
    nu::array<double, 1> v_c = nu::kern::contiguous_view(nu_const_1, {4});
    double nu_loc_2[8];
    nu::array<double, 2> v_loc = nu::kern::contiguous_view(nu_loc_2, {2, 4});
    long long v_i = nu::kern::thread_idx(0) + nu::kern::block_idx(0) * nu::kern::block_dim(0);
    for (long long v_r = 0; v_r < 2; ++v_r)
        for (long long v_k = 0; v_k < 4; ++v_k) v_loc(v_r, v_k) = v_c(v_k) * double(v_r + 1);
    v_out(v_i) = v_loc(nu::mod<long long>(v_i, 2), nu::mod<long long>(v_i, 4)) + double(v_i);
}
NU_KERNEL_ENTRY(nu_kernel_tables_00000007, nu_tables_d_00000007, 3, 0, nu::karg<double, 1>)
