// tests/kernel_runtime/warp.cu: shuffles, votes, early-returning threads, deadlock detection, a barrier loop
//
// Written by hand in the shape the kernel translator generates.
#define NU_BOUNDSCHECK 1
#include "kernel.cuh"

// def warp_sums(a, out, outi, halves):
//     i = cuda.grid(1); lane = cuda.laneid; x = a[i]
//     for off in (16, 8, 4, 2, 1): x += cuda.shfl_down_sync(0xffffffff, x, off)
//     if lane == 0: out[i // 32] = x                       # float64 tree sum
//     k = int32(a[i] * 8)
//     for off in (1, 2, 4, 8, 16): k += cuda.shfl_xor_sync(0xffffffff, k, off)
//     outi[i] = k                                          # every lane holds the warp's total
//     half = 0x0000ffff if lane < 16 else 0xffff0000       # two independent half-warp groups
//     h = k + lane
//     for off in (1, 2, 4, 8): h += cuda.shfl_xor_sync(half, h, off)
//     halves[i] = h
__device__ void nu_warp_sums_dd_00000040(nu::array<double, 1> v_a, nu::array<double, 1> v_out,
                                         nu::array<int, 1> v_outi, nu::array<int, 1> v_halves);
__device__ void nu_warp_sums_dd_00000040(nu::array<double, 1> v_a, nu::array<double, 1> v_out,
                                         nu::array<int, 1> v_outi, nu::array<int, 1> v_halves) {
    long long v_i = nu::kern::thread_idx(0) + nu::kern::block_idx(0) * nu::kern::block_dim(0);
    long long v_lane = nu::kern::lane_id();
    double v_x = v_a(v_i);
    for (long long v_off = 16; v_off > 0; v_off /= 2) v_x += nu::kern::shfl_down_sync(0xffffffffu, v_x, v_off);
    if (v_lane == 0) v_out(nu::floordiv<long long>(v_i, 32)) = v_x;
    int v_k = nu::cast<int>(nu::mul<double>(v_a(v_i), 8.0));
    for (long long v_off = 1; v_off < 32; v_off *= 2) v_k += nu::kern::shfl_xor_sync(0xffffffffu, v_k, v_off);
    v_outi(v_i) = v_k;
    unsigned v_half = v_lane < 16 ? 0x0000ffffu : 0xffff0000u;
    int v_h = v_k + int(v_lane);
    for (long long v_off = 1; v_off < 16; v_off *= 2) v_h += nu::kern::shfl_xor_sync(v_half, v_h, v_off);
    v_halves(v_i) = v_h;
}
NU_KERNEL_ENTRY(nu_kernel_warp_sums_00000040, nu_warp_sums_dd_00000040, 12, 1,
                nu::karg<double, 1>, nu::karg<double, 1>, nu::karg<int, 1>, nu::karg<int, 1>)

// def votes(a, out):   # out[i, :] = ballot, all, any, eq, broadcast from lane 3, inclusive scan,
//                      #             activemask, lanemask_lt, lane, bool shuffle from lane + 1
__device__ void nu_votes_iq_00000041(nu::array<int, 1> v_a, nu::array<long long, 2> v_out);
__device__ void nu_votes_iq_00000041(nu::array<int, 1> v_a, nu::array<long long, 2> v_out) {
    long long v_i = nu::kern::thread_idx(0) + nu::kern::block_idx(0) * nu::kern::block_dim(0);
    const unsigned v_full = 0xffffffffu;
    int v_x = v_a(v_i);
    v_out(v_i, 0) = nu::kern::ballot_sync(v_full, v_x > 0);
    v_out(v_i, 1) = nu::kern::all_sync(v_full, v_x > 0);
    v_out(v_i, 2) = nu::kern::any_sync(v_full, v_x > 0);
    v_out(v_i, 3) = nu::kern::eq_sync(v_full, nu::floordiv<int>(v_x, 100));
    v_out(v_i, 4) = nu::kern::shfl_sync(v_full, (long long)v_x, 3);
    long long v_s = v_x;
    for (long long v_d = 1; v_d < 32; v_d *= 2) {
        long long v_y = nu::kern::shfl_up_sync(v_full, v_s, v_d);
        if (nu::kern::lane_id() >= v_d) v_s += v_y;
    }
    v_out(v_i, 5) = v_s;
    v_out(v_i, 6) = nu::kern::activemask();
    v_out(v_i, 7) = nu::kern::lanemask_lt();
    v_out(v_i, 8) = nu::kern::lane_id();
    v_out(v_i, 9) = nu::kern::shfl_sync(v_full, v_x > 0, nu::kern::lane_id() + 1);
}
NU_KERNEL_ENTRY(nu_kernel_votes_00000041, nu_votes_iq_00000041, 8, 1,
                nu::karg<int, 1>, nu::karg<long long, 2>)

// def early_return(out, live):   # threads t >= live return before the barriers
//     sh = cuda.shared.array(64, int32); t = cuda.threadIdx.x
//     if t >= live: return
//     sh[t] = t + 1; cuda.syncthreads(); v = sh[(t + 1) % live]; cuda.syncthreads()
//     sh[t] = 0; cuda.syncthreads(); out[t] = v + sh[(t + 1) % live] + 1000 * cuda.syncthreads_count(1)
__device__ void nu_early_return_ii_00000042(nu::array<int, 1> v_out, int v_live);
__device__ void nu_early_return_ii_00000042(nu::array<int, 1> v_out, int v_live) {
    __shared__ int nu_sh_1[64];
    nu::array<int, 1> v_sh = nu::kern::contiguous_view(nu_sh_1, {64});
    long long v_t = nu::kern::thread_idx(0);
    if (v_t >= v_live) return;
    v_sh(v_t) = int(v_t + 1);
    nu::kern::syncthreads();
    int v_v = v_sh(nu::mod<long long>(v_t + 1, v_live));
    nu::kern::syncthreads();
    v_sh(v_t) = 0;
    nu::kern::syncthreads();
    v_out(v_t) = v_v + v_sh(nu::mod<long long>(v_t + 1, v_live)) + 1000 * nu::kern::syncthreads_count(1);
}
NU_KERNEL_ENTRY(nu_kernel_early_return_00000042, nu_early_return_ii_00000042, 4, 1,
                nu::karg<int, 1>, nu::karg<int, -1>)

// def deadlock():   # lane 0 of each warp waits at syncwarp, every other thread at syncthreads
__device__ void nu_deadlock_00000043();
__device__ void nu_deadlock_00000043() {
    if (nu::kern::lane_id() == 0) nu::kern::syncwarp(0xffffffffu);
    else nu::kern::syncthreads();
}
NU_KERNEL_ENTRY(nu_kernel_deadlock_00000043, nu_deadlock_00000043, 0, 1)

// def barrier_loop(out, n):   # n rounds of syncthreads: times the host's fiber switch
//     sh = cuda.shared.array(1024, int32); t = cuda.threadIdx.x; nt = cuda.blockDim.x
//     sh[t] = 0; cuda.syncthreads()
//     for k in range(n): sh[(t + k) % nt] += 1; cuda.syncthreads()
//     out[cuda.blockIdx.x, t] = sh[t]
__device__ void nu_barrier_loop_iq_00000044(nu::array<int, 2> v_out, long long v_n);
__device__ void nu_barrier_loop_iq_00000044(nu::array<int, 2> v_out, long long v_n) {
    __shared__ int nu_sh_1[1024];
    nu::array<int, 1> v_sh = nu::kern::contiguous_view(nu_sh_1, {1024});
    long long v_t = nu::kern::thread_idx(0);
    long long v_nt = nu::kern::block_dim(0);
    v_sh(v_t) = 0;
    nu::kern::syncthreads();
    for (long long v_k = 0; v_k < v_n; ++v_k) {
        v_sh(nu::mod<long long>(v_t + v_k, v_nt)) += 1;
        nu::kern::syncthreads();
    }
    v_out(nu::kern::block_idx(0), v_t) = v_sh(v_t);
}
NU_KERNEL_ENTRY(nu_kernel_barrier_loop_00000044, nu_barrier_loop_iq_00000044, 6, 1,
                nu::karg<int, 2>, nu::karg<long long, -1>)
