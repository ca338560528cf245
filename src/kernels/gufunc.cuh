// src/kernels/gufunc.cuh: the generalized ufunc loop: one thread per loop index
//
// The engine generates a short translation unit: this header, the translated function
// (whose array parameters are nu::array views), a functor calling it, and one
// NU_GUFUNC_ENTRY line. As in Numba, each thread runs the function once, on the views of
// its loop index; the loop dimensions are broadcast and coalesced by the engine.
#pragma once

#include "elementwise.cuh"
#include "nu_array.cuh"

namespace nu {

// How the function receives one operand. KIND 0: an array view over CORE core dimensions;
// 1: a `()` core passed by value (a scalar parameter); 2: a `()` core as a one-element
// array (Numba's older style, e.g. float64[:] for `()`).
template <class T, int CORE, int KIND>
struct garg {
    using type = T;
    static constexpr int core = CORE;
    static constexpr int kind = KIND;
};

// Parameter words (all 8 bytes, packed by src/dispatch/gufunc.cpp): n, loop_shape[NLOOP],
// then per operand: pointer, loop_strides[NLOOP], core_shape[CORE], core_strides[CORE].
template <class Op, int NLOOP, class... A>
struct gufunc {
    static constexpr int k_nops = int(sizeof...(A));
    static constexpr int k_loop = NLOOP > 0 ? NLOOP : 1;
    using seq = typename make_index_seq_t<sizeof...(A)>::type;

    // First word of operand k.
    static __host__ __device__ constexpr int start(int k) {
        constexpr int cores[] = {A::core..., 0};
        int w = 1 + NLOOP;
        for (int j = 0; j < k; ++j) w += 1 + NLOOP + 2 * cores[j];
        return w;
    }

    template <class Arg>
    static NU_DEVICE auto view(const long long* w, const long long* coord) {
        using T = typename Arg::type;
        long long offset = 0;
        for (int d = 0; d < NLOOP; ++d) offset += coord[d] * w[1 + d];
        char* base = reinterpret_cast<char*>(w[0]) + offset;
        if constexpr (Arg::kind == 1) {
            return *reinterpret_cast<T*>(base);
        } else if constexpr (Arg::kind == 2) {
            array<T, 1> a;
            a.data = base;
            a.shape[0] = 1;
            a.strides[0] = 0;
            return a;
        } else {
            array<T, Arg::core> a;
            a.data = base;
            for (int c = 0; c < Arg::core; ++c) {
                a.shape[c] = w[1 + NLOOP + c];
                a.strides[c] = w[1 + NLOOP + Arg::core + c];
            }
            return a;
        }
    }

    template <unsigned long long... K>
    static NU_DEVICE void call(const long long* p, const long long* coord, index_seq<K...>) {
        Op{}(view<A>(p + start(int(K)), coord)...);
    }

    // Loop coordinates of linear index i: 32-bit division whenever the loop has fewer than
    // 2^32 items (every extent then fits too); a 64-bit division costs several times more.
    static NU_DEVICE void element(const long long* p, long long i) {
        long long coord[k_loop] = {};
        if constexpr (NLOOP <= 1) {
            coord[0] = i;  // no division at all
        } else if (p[0] <= 0xffffffffLL) {
            unsigned rest = unsigned(i);
#pragma unroll
            for (int d = NLOOP - 1; d >= 0; --d) {
                const unsigned extent = unsigned(p[1 + d]);
                coord[d] = d > 0 ? rest % extent : rest;
                rest = d > 0 ? rest / extent : 0u;
            }
        } else {
#pragma unroll
            for (int d = NLOOP - 1; d >= 0; --d) {
                const long long extent = p[1 + d];
                coord[d] = d > 0 ? i % extent : i;
                i = d > 0 ? i / extent : 0;
            }
        }
        call(p, coord, seq{});
    }

#ifdef NU_HOST_BUILD
    // Returns 0, or 1 at the first out-of-bounds index of a checked build (NU_BOUNDSCHECK:
    // emulation of the cuda target, or boundscheck=True), with {index, axis, size, loop
    // index} in report; the loop stops there.
    // Flattened: the translated function and its device functions are inlined into the
    // item loop (GCC leaves a function with loops out of line), so the views' shapes and
    // strides stay in registers across items; NVVM inlines device functions anyway.
    __attribute__((flatten)) static int run_host(const long long* words, long long begin, long long end,
                                                 long long* report) {
        // A local copy of the parameter words: outputs written through char pointers could
        // alias the caller's block, and the copy lets the compiler keep shapes and strides
        // in registers across items (batched 4x4 matmul: about 1.3x faster, this machine).
        long long p[start(k_nops)];
        for (int j = 0; j < start(k_nops); ++j) p[j] = words[j];
#ifdef NU_BOUNDSCHECK
        // nu_array.cuh reports violations to the running thread's launch record.
        detail::host_launch launch;
        memset(&launch, 0, sizeof launch);
        launch.plain.launch = &launch;
        detail::host_thread* const outer = detail::g_current;
        detail::g_current = &launch.plain;
        for (long long i = begin; i < end; ++i) {
            element(p, i);
            if (launch.oob_set) {
                detail::g_current = outer;
                report[0] = launch.oob[0];
                report[1] = launch.oob[1];
                report[2] = launch.oob[2];
                report[3] = i;
                return 1;
            }
        }
        detail::g_current = outer;
#else
        (void)report;
        for (long long i = begin; i < end; ++i) element(p, i);
#endif
        return 0;
    }
#else
    template <int WORDS>
    static __device__ void run_device(const long long (&p)[WORDS]) {
        const long long n = p[0];
        const long long step = (long long)blockDim.x * gridDim.x;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
            element(p, i);
        }
    }
#endif
};

// Kernel parameter block: a fixed number of words (the engine passes exactly this many).
template <int WORDS>
struct gufunc_params {
    long long w[WORDS];
};

}  // namespace nu

#ifdef NU_HOST_BUILD
#define NU_GUFUNC_ENTRY(name, words, ...)                                                 \
    using name##_impl = __VA_ARGS__;                                                      \
    extern "C" __attribute__((visibility("default"))) int name(                          \
        const void* p, long long begin, long long end, long long* report) {              \
        return name##_impl::run_host(static_cast<const long long*>(p), begin, end, report); \
    }
#else
#define NU_GUFUNC_ENTRY(name, words, ...)                                                \
    using name##_impl = __VA_ARGS__;                                                     \
    extern "C" __global__ void __launch_bounds__(128) name(const nu::gufunc_params<words> p) { \
        name##_impl::run_device(p.w);                                                    \
    }
#endif
