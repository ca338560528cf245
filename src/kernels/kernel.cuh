// src/kernels/kernel.cuh: @cuda.jit kernels: CUDA entry, emulating host entry, intrinsics
//
// The engine generates a short translation unit: `#define NU_BOUNDSCHECK 1` (host builds
// always, the device for debug=True), this header, the translated __device__ function and
// one NU_KERNEL_ENTRY line. The translator emits the nu::kern intrinsics below for
// cuda.threadIdx, cuda.syncthreads, cuda.atomic.* (nu_atomics.cuh), cuda.shfl_*_sync, ...; each has a
// device form (the CUDA intrinsic) and a host form run by host_emulation.h, so the host
// backend executes the very code the GPU executes. NVRTC compiles this without the C++
// standard library.
#pragma once

#include "elementwise.cuh"  // index_seq
#include "nu_array.cuh"
#include "nu_cache_hints.cuh"  // cuda.ldca..., cuda.stcg...
#include "nu_random.cuh"  // numba.cuda.random: xoroshiro128+ generators

namespace nu {

// How the host entry is launched; src/launch/kernel.cpp mirrors this layout.
struct kernel_launch_info {
    unsigned grid[3];
    unsigned block[3];
    unsigned long long dynamic_shared_bytes;
    // Host launches: polled between blocks; nonzero stops the launch (Ctrl-C), status 4.
    int (*poll)();
};

// The device entry's single parameter: the packed words, by value (a zero-word kernel
// still gets one word, as C++ has no empty arrays).
template <int WORDS>
struct kernel_params {
    long long w[WORDS > 0 ? WORDS : 1];
};

// Parameter k of the kernel function: N >= 1 an nu::array<T, N>, N == -1 a scalar T,
// N == 0 a record T passed by reference (a T*) or a 0-d array (an nu::array<T, 0>).
// Words, each 8 bytes: an array is data, shape[N], strides[N] (nu::array's own layout); a
// scalar its bytes from the start of one word, or two words for complex128; a record its
// address.
template <class T, int N>
struct karg {
    static_assert(N >= 0 || N == -1, "nu::karg: N is an array's ndim (>= 1), 0 for a record or 0-d array, -1 for a scalar");
    using type = T;
    static constexpr int ndim = N;
    static constexpr int words = N >= 0 ? 1 + 2 * N : int((sizeof(T) + 7) / 8);
};

}  // namespace nu

#ifdef NU_HOST_BUILD
#include "host_emulation.h"
#else
extern "C" {
// The first out-of-bounds access of a checked launch: {1, index, axis, size, threadIdx.x,
// .y, .z, blockIdx.x, .y, .z}, the first exception raised in a debug=True launch: {2,
// code, 0, 0, threadIdx.x, ...}, or the first failed a.reshape(): {3, size, 0, 0,
// threadIdx.x, ...}. Zero when the module loads; after a debug launch the engine reads it
// (cuModuleGetGlobal) and clears it for the next one.
__device__ unsigned long long nu_kernel_error[10];
}
namespace nu {
namespace detail {
// Records {kind, a, b, c, threadIdx xyz, blockIdx xyz} in nu_kernel_error unless an earlier
// record won the flag; the fields are complete once the kernel has ended.
static __device__ __noinline__ void record_error(unsigned long long kind, unsigned long long a,
                                                 unsigned long long b, unsigned long long c) {
    if (atomicCAS(&nu_kernel_error[0], 0ull, kind) != 0ull) return;
    const unsigned long long rec[9] = {a, b, c, threadIdx.x, threadIdx.y, threadIdx.z,
                                       blockIdx.x, blockIdx.y, blockIdx.z};
    for (int k = 0; k < 9; ++k) nu_kernel_error[1 + k] = rec[k];
    __threadfence();
}
extern __shared__ __align__(16) unsigned char g_dynamic_shared[];
// cuda.cg.this_grid().sync(): the launch's own {blocks arrived, generation} counter, which
// the engine allocates zeroed for each cooperative launch and passes after the kernel's
// parameter words (a module global would be shared by concurrent launches of the kernel).
// Block-wide copy of that pointer, set at entry.
__shared__ unsigned* g_grid_counter;

template <bool GRID_SYNC>
__device__ __forceinline__ void enter_launch(const long long* extra) {
    if constexpr (GRID_SYNC) {
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            g_grid_counter = reinterpret_cast<unsigned*>(extra[0]);
        }
        __syncthreads();
    }
}
}  // namespace detail
}  // namespace nu
#endif

namespace nu {
namespace detail {

template <class A, class B> constexpr bool same = false;
template <class A> constexpr bool same<A, A> = true;
template <class T>
constexpr bool is_word_int = same<T, i32> || same<T, u32> || same<T, i64> || same<T, u64>;
// float16 and bfloat16 are "word floats" of 2 bytes: their atomics are compare-and-swap
// loops on 16-bit words (atomicCAS on unsigned short, sm_70 and later), the same code on the
// GPU and in the emulation.
template <class T> constexpr bool is_word_float = same<T, f32> || same<T, f64> || is_half<T>;

template <int BYTES> struct word_of_size;
template <> struct word_of_size<2> { using type = u16; };
template <> struct word_of_size<4> { using type = u32; };
template <> struct word_of_size<8> { using type = u64; };
template <class T> using word_t = typename word_of_size<int(sizeof(T))>::type;

// The bit pattern of a 4- or 8-byte value, and back: atomics on floats are compare-and-swap
// loops on the pattern.
template <class T>
NU_DEVICE word_t<T> to_word(T v) {
#ifdef NU_HOST_BUILD
    word_t<T> w;
    __builtin_memcpy(&w, &v, sizeof(w));
    return w;
#else
    if constexpr (same<T, f32>) return __float_as_uint(v);
    else if constexpr (same<T, f64>) return u64(__double_as_longlong(v));
    else if constexpr (is_half<T>) return v.bits;
    else return word_t<T>(v);
#endif
}

template <class T>
NU_DEVICE T from_word(word_t<T> w) {
#ifdef NU_HOST_BUILD
    T v;
    __builtin_memcpy(&v, &w, sizeof(v));
    return v;
#else
    if constexpr (same<T, f32>) return __uint_as_float(w);
    else if constexpr (same<T, f64>) return __longlong_as_double((long long)w);
    else if constexpr (is_half<T>) return T::from_bits(w);
    else return T(w);
#endif
}

template <class W>
NU_DEVICE W cas_word(W* p, W expected, W desired) {
#ifdef NU_HOST_BUILD
    // Relaxed, like CUDA's atomics; __atomic keeps this right if blocks ever run on several
    // OS threads.
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected;
#else
    return atomicCAS(p, expected, desired);
#endif
}

// ref = f(ref) atomically; returns the old value. Skips the write when f changes nothing,
// so a max below the current value costs one load.
template <class T, class F>
NU_DEVICE T atomic_update(T& ref, F f) {
    using W = word_t<T>;
    W* p = reinterpret_cast<W*>(&ref);
#ifdef NU_HOST_BUILD
    W old = __atomic_load_n(p, __ATOMIC_RELAXED);
#else
    W old = *reinterpret_cast<volatile W*>(p);
#endif
    for (;;) {
        const T value = from_word<T>(old);
        const W desired = to_word<T>(f(value));
        if (desired == old) return value;
        const W seen = cas_word(p, old, desired);
        if (seen == old) return value;
        old = seen;
    }
}

// The value atomic max/min and nanmax/nanmin store, given the old one. max/min are
// Python's max(old, v) (numba-cuda's atomic.max): a NaN on either side keeps the stored
// value. nanmax/nanmin treat NaN as missing, like np.fmax: a stored NaN is replaced.
template <class T>
NU_DEVICE T max_nan(T old, T v) {
    return v > old ? v : old;
}
template <class T>
NU_DEVICE T min_nan(T old, T v) {
    return v < old ? v : old;
}
template <class T>
NU_DEVICE T fmax_nan(T old, T v) {
    return v != v ? old : (old != old || v > old) ? v : old;
}
template <class T>
NU_DEVICE T fmin_nan(T old, T v) {
    return v != v ? old : (old != old || v < old) ? v : old;
}

#ifdef NU_HOST_BUILD
template <class T>
NU_DEVICE unsigned long long to_slot(T v) {
    unsigned long long s = 0;
    __builtin_memcpy(&s, &v, sizeof(T));
    return s;
}
template <class T>
NU_DEVICE T from_slot(unsigned long long s) {
    T v;
    __builtin_memcpy(&v, &s, sizeof(T));
    return v;
}
#endif

// A by-reference argument (ndim 0): the kernel function takes a record as a T*, a 0-d
// array as an nu::array<T, 0>; the translator decides which, the same word serves both.
template <class T>
struct zero_d_arg {
    T* p;
    NU_DEVICE operator T*() const { return p; }
    NU_DEVICE operator array<T, 0>() const {
        array<T, 0> a;
        a.data = reinterpret_cast<char*>(p);
        a.shape[0] = a.strides[0] = 0;  // unused: a 0-d array has no dimensions
        return a;
    }
};

// Decodes the parameter words into the kernel function's arguments and calls it.
template <class... A>
struct kernel_signature {
    static constexpr int k_words = (0 + ... + A::words);

    static __host__ __device__ constexpr int start(int k) {
        constexpr int words[] = {A::words..., 0};
        int s = 0;
        for (int j = 0; j < k; ++j) s += words[j];
        return s;
    }

    template <class Arg>
    static NU_DEVICE auto arg(const long long* w) {
        using T = typename Arg::type;
        if constexpr (Arg::ndim >= 1) {
            array<T, Arg::ndim> a;
            a.data = reinterpret_cast<char*>(w[0]);
            for (int d = 0; d < Arg::ndim; ++d) {
                a.shape[d] = w[1 + d];
                a.strides[d] = w[1 + Arg::ndim + d];
            }
            return a;
        } else if constexpr (Arg::ndim == 0) {
            return zero_d_arg<T>{reinterpret_cast<T*>(w[0])};
        } else {
            return *reinterpret_cast<const T*>(w);
        }
    }

    template <auto F, unsigned long long... K>
    static NU_DEVICE void call(const long long* w, index_seq<K...>) {
        F(arg<A>(w + start(int(K)))...);
    }

    template <auto F>
    static NU_DEVICE void run(const long long* w) {
        call<F>(w, typename make_index_seq_t<sizeof...(A)>::type{});
    }
};

}  // namespace detail

namespace kern {

// ---- thread geometry (axis 0, 1, 2 = x, y, z) --------------------------------------------
NU_DEVICE long long thread_idx(int axis) {
#ifdef NU_HOST_BUILD
    return detail::g_current->idx[axis];
#else
    return axis == 0 ? threadIdx.x : axis == 1 ? threadIdx.y : threadIdx.z;
#endif
}
NU_DEVICE long long block_idx(int axis) {
#ifdef NU_HOST_BUILD
    return detail::g_current->launch->block_idx[axis];
#else
    return axis == 0 ? blockIdx.x : axis == 1 ? blockIdx.y : blockIdx.z;
#endif
}
NU_DEVICE long long block_dim(int axis) {
#ifdef NU_HOST_BUILD
    return detail::g_current->launch->block[axis];
#else
    return axis == 0 ? blockDim.x : axis == 1 ? blockDim.y : blockDim.z;
#endif
}
NU_DEVICE long long grid_dim(int axis) {
#ifdef NU_HOST_BUILD
    return detail::g_current->launch->grid[axis];
#else
    return axis == 0 ? gridDim.x : axis == 1 ? gridDim.y : gridDim.z;
#endif
}
NU_DEVICE long long lane_id() {
#ifdef NU_HOST_BUILD
    return detail::g_current->lane;
#else
    unsigned r;
    asm("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
#endif
}
NU_DEVICE long long warp_size() { return 32; }

// ---- barriers and fences -----------------------------------------------------------------
NU_DEVICE void syncthreads() {
#ifdef NU_HOST_BUILD
    int participants;
    detail::block_barrier(0, &participants);
#else
    __syncthreads();
#endif
}
// cuda.nanosleep(ns): a hint on the GPU (sm_70+); nothing to wait for in the emulation.
NU_DEVICE void nanosleep(unsigned ns) {
#ifdef NU_HOST_BUILD
    (void)ns;
#else
    __nanosleep(ns);
#endif
}

// cuda.cg.this_grid().sync(): every thread of the grid waits. On the GPU one thread per
// block counts the block in and waits for the generation to change (the last block in
// starts the next generation); the launch is cooperative, so every block is resident.
NU_DEVICE void grid_sync() {
#ifdef NU_HOST_BUILD
    detail::grid_barrier();
#else
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
        unsigned* counter = detail::g_grid_counter;
        volatile unsigned* generation = &counter[1];
        const unsigned g = *generation;
        __threadfence();
        if (atomicAdd(&counter[0], 1u) == blocks - 1) {
            atomicExch(&counter[0], 0u);
            __threadfence();
            atomicAdd(&counter[1], 1u);
        } else {
            while (*generation == g) {
            }
        }
        __threadfence();
    }
    __syncthreads();
#endif
}

NU_DEVICE int syncthreads_count(int pred) {
#ifdef NU_HOST_BUILD
    int participants;
    return detail::block_barrier(pred, &participants);
#else
    return __syncthreads_count(pred);
#endif
}
NU_DEVICE int syncthreads_and(int pred) {
#ifdef NU_HOST_BUILD
    int participants;
    return detail::block_barrier(pred, &participants) == participants;
#else
    return __syncthreads_and(pred);
#endif
}
NU_DEVICE int syncthreads_or(int pred) {
#ifdef NU_HOST_BUILD
    int participants;
    return detail::block_barrier(pred, &participants) > 0;
#else
    return __syncthreads_or(pred);
#endif
}
NU_DEVICE void syncwarp(unsigned mask) {
#ifdef NU_HOST_BUILD
    detail::warp_barrier(mask);
#else
    __syncwarp(mask);
#endif
}
NU_DEVICE void threadfence() {
#ifdef NU_HOST_BUILD
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#else
    __threadfence();
#endif
}
NU_DEVICE void threadfence_block() {
#ifdef NU_HOST_BUILD
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#else
    __threadfence_block();
#endif
}
NU_DEVICE void threadfence_system() {
#ifdef NU_HOST_BUILD
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#else
    __threadfence_system();
#endif
}

// ---- shared, local and constant memory ---------------------------------------------------
template <class T>
NU_DEVICE T* dynamic_shared() {
#ifdef NU_HOST_BUILD
    return reinterpret_cast<T*>(detail::g_current->launch->dynamic_shared);
#else
    return reinterpret_cast<T*>(detail::g_dynamic_shared);
#endif
}
NU_DEVICE unsigned long long dynamic_shared_bytes() {
#ifdef NU_HOST_BUILD
    return detail::g_current->launch->dynamic_shared_bytes;
#else
    unsigned r;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
    return r;
#endif
}

// contiguous_view and fortran_view (shared, local and constant arrays, carray/farray)
// live in nu_array.cuh: device functions compiled on their own use carray too.

// a.reshape(...) in a kernel: the same data in a C-contiguous shape; one dimension given
// as -1 takes what the others leave. An array that is not C-contiguous at run time, or a
// shape of another size, is an error NumPy raises: the host launch fails with that message;
// on the GPU the thread ends (as a raise does) after recording the failure, which a
// debug=True launch raises on the host. A trap would poison the CUDA context for good.
template <class T, int N, int M>
NU_DEVICE array<T, M> reshape_view(const array<T, N>& a, const long long (&shape)[M]) {
    array<T, M> r;
    r.data = a.data;
    long long known = 1, size = a.size(), expect = sizeof(T);
    int unknown = -1;
    bool ok = true;
    for (int d = N - 1; d >= 0; --d) {  // C-contiguous (any strides where a dimension is 1)
        ok = ok && (a.shape[d] == 1 || a.strides[d] == expect || size == 0);
        expect *= a.shape[d];
    }
    for (int k = 0; k < M; ++k) {
        if (shape[k] == -1 && unknown < 0) unknown = k;
        else if (shape[k] < 0) ok = false;
        else known *= shape[k];
    }
    ok = ok && (unknown >= 0 ? (known != 0 && size % known == 0) : known == size);
    long long stride = sizeof(T);
    for (int d = M - 1; d >= 0; --d) {
        r.shape[d] = !ok ? 0 : d == unknown ? size / known : shape[d];
        r.strides[d] = stride;
        stride *= r.shape[d];
    }
    if (!ok) {
#ifdef NU_HOST_BUILD
        detail::fail(detail::g_current->launch, 3,
                     "a.reshape(): the array is not C-contiguous or the new shape has another "
                     "size (%lld elements)", size);
#else
        detail::record_error(3, (unsigned long long)size, 0, 0);
        asm volatile("exit;");
#endif
    }
    return r;
}

}  // namespace kern
}  // namespace nu

#include "nu_atomics.cuh"  // cuda.atomic.*

namespace nu {
namespace kern {

// ---- warp-synchronous intrinsics ---------------------------------------------------------
// Host: a source lane outside the block or not in the mask gives the caller's own value
// (undefined on the GPU); shfl_up/down keep the own value past the warp's ends, as CUDA.
#define NU_SHUFFLE_TYPES(op)                                                                   \
    static_assert(detail::is_word_int<T> || detail::is_word_float<T> || detail::same<T, bool>, \
                  "nu::kern::" #op                                                             \
                  ": supported on int32, int64, uint32, uint64, float32, float64 and bool")

template <class T>
NU_DEVICE T shfl_sync(unsigned mask, T v, long long src_lane) {
    NU_SHUFFLE_TYPES(shfl_sync);
#ifdef NU_HOST_BUILD
    return detail::from_slot<T>(detail::warp_shuffle(mask, detail::to_slot(v), src_lane & 31));
#else
    if constexpr (detail::same<T, bool>) return __shfl_sync(mask, int(v), int(src_lane)) != 0;
    else return __shfl_sync(mask, v, int(src_lane));
#endif
}

template <class T>
NU_DEVICE T shfl_up_sync(unsigned mask, T v, long long delta) {
    NU_SHUFFLE_TYPES(shfl_up_sync);
#ifdef NU_HOST_BUILD
    const long long lane = detail::g_current->lane;
    const long long src = delta >= 0 && delta <= lane ? lane - delta : -1;
    return detail::from_slot<T>(detail::warp_shuffle(mask, detail::to_slot(v), src));
#else
    if constexpr (detail::same<T, bool>) return __shfl_up_sync(mask, int(v), unsigned(delta)) != 0;
    else return __shfl_up_sync(mask, v, unsigned(delta));
#endif
}

template <class T>
NU_DEVICE T shfl_down_sync(unsigned mask, T v, long long delta) {
    NU_SHUFFLE_TYPES(shfl_down_sync);
#ifdef NU_HOST_BUILD
    const long long lane = detail::g_current->lane;
    const long long src = delta >= 0 && lane + delta < 32 ? lane + delta : -1;
    return detail::from_slot<T>(detail::warp_shuffle(mask, detail::to_slot(v), src));
#else
    if constexpr (detail::same<T, bool>)
        return __shfl_down_sync(mask, int(v), unsigned(delta)) != 0;
    else
        return __shfl_down_sync(mask, v, unsigned(delta));
#endif
}

template <class T>
NU_DEVICE T shfl_xor_sync(unsigned mask, T v, long long lane_mask) {
    NU_SHUFFLE_TYPES(shfl_xor_sync);
#ifdef NU_HOST_BUILD
    const long long src = detail::g_current->lane ^ lane_mask;
    return detail::from_slot<T>(
        detail::warp_shuffle(mask, detail::to_slot(v), src >= 0 && src < 32 ? src : -1));
#else
    if constexpr (detail::same<T, bool>) return __shfl_xor_sync(mask, int(v), int(lane_mask)) != 0;
    else return __shfl_xor_sync(mask, v, int(lane_mask));
#endif
}

NU_DEVICE unsigned ballot_sync(unsigned mask, int pred) {
#ifdef NU_HOST_BUILD
    unsigned long long values[32];
    unsigned r = 0;
    for (unsigned lanes = detail::warp_gather(mask, pred != 0, values); lanes; lanes &= lanes - 1) {
        const unsigned lane = unsigned(__builtin_ctz(lanes));
        if (values[lane]) r |= 1u << lane;
    }
    return r;
#else
    return __ballot_sync(mask, pred);
#endif
}

NU_DEVICE bool all_sync(unsigned mask, int pred) {
#ifdef NU_HOST_BUILD
    unsigned long long values[32];
    bool r = true;
    for (unsigned lanes = detail::warp_gather(mask, pred != 0, values); lanes; lanes &= lanes - 1)
        r = r && values[__builtin_ctz(lanes)] != 0;
    return r;
#else
    return __all_sync(mask, pred) != 0;
#endif
}

NU_DEVICE bool any_sync(unsigned mask, int pred) {
#ifdef NU_HOST_BUILD
    unsigned long long values[32];
    bool r = false;
    for (unsigned lanes = detail::warp_gather(mask, pred != 0, values); lanes; lanes &= lanes - 1)
        r = r || values[__builtin_ctz(lanes)] != 0;
    return r;
#else
    return __any_sync(mask, pred) != 0;
#endif
}

// True when every lane of the mask holds the same value (bit patterns, as __match_all_sync).
template <class T>
NU_DEVICE bool eq_sync(unsigned mask, T v) {
    NU_SHUFFLE_TYPES(eq_sync);
#ifdef NU_HOST_BUILD
    unsigned long long values[32];
    const unsigned long long own = detail::to_slot(v);
    bool r = true;
    for (unsigned lanes = detail::warp_gather(mask, own, values); lanes; lanes &= lanes - 1)
        r = r && values[__builtin_ctz(lanes)] == own;
    return r;
#else
    int pred;
    if constexpr (detail::same<T, bool>) __match_all_sync(mask, int(v), &pred);
    else __match_all_sync(mask, v, &pred);
    return pred != 0;
#endif
}

// __match_any_sync: the lanes of the mask whose value equals the caller's.
template <class T>
NU_DEVICE unsigned match_any_sync(unsigned mask, T v) {
    NU_SHUFFLE_TYPES(match_any_sync);
#ifdef NU_HOST_BUILD
    unsigned long long values[32];
    const unsigned long long own = detail::to_slot(v);
    unsigned r = 0;
    for (unsigned lanes = detail::warp_gather(mask, own, values); lanes; lanes &= lanes - 1) {
        const unsigned lane = unsigned(__builtin_ctz(lanes));
        if (values[lane] == own) r |= 1u << lane;
    }
    return r;
#else
    if constexpr (detail::same<T, bool>) return __match_any_sync(mask, int(v));
    else return __match_any_sync(mask, v);
#endif
}

// __match_all_sync: the lanes taking part when all of them hold the caller's value, else
// 0. On the host those are the live lanes of the mask, so a partial warp (a block of 48
// threads, or lanes that returned) gets its live lanes, not the mask it passed.
template <class T>
NU_DEVICE unsigned match_all_sync(unsigned mask, T v) {
    NU_SHUFFLE_TYPES(match_all_sync);
#ifdef NU_HOST_BUILD
    unsigned long long values[32];
    const unsigned long long own = detail::to_slot(v);
    const unsigned lanes = detail::warp_gather(mask, own, values);
    for (unsigned r = lanes; r; r &= r - 1)
        if (values[__builtin_ctz(r)] != own) return 0u;
    return lanes;
#else
    int pred;
    if constexpr (detail::same<T, bool>) return __match_all_sync(mask, int(v), &pred);
    else return __match_all_sync(mask, v, &pred);
#endif
}

#undef NU_SHUFFLE_TYPES

// print() in a kernel: the translator builds the format (Numba's: %lld, %llu, %f, %s). The
// host flushes at once so that the output of a thread is never lost in a crash; the GPU's
// printf buffer is written out at the next synchronization.
template <class... A>
NU_DEVICE void print(const char* format, A... args) {
    printf(format, args...);
#ifdef NU_HOST_BUILD
    fflush(stdout);
#endif
}

// The lanes executing this activemask() call together. `site` names the call (the
// translator numbers them in source order): on the host, lanes that diverged (an if
// branch, a loop that some lanes left) meet only the lanes reaching the same call in the
// same round (host_emulation.h, try_release_converged), as on the GPU.
NU_DEVICE unsigned activemask(unsigned long long site = 0) {
#ifdef NU_HOST_BUILD
    const detail::host_thread* t = detail::g_current;
    const detail::host_launch* l = t->launch;
    if (l->cooperative) return detail::converged_lanes(site);
    const unsigned lanes = l->nthreads - t->warp * 32;
    return lanes >= 32 ? ~0u : (1u << lanes) - 1;
#else
    (void)site;
    return __activemask();
#endif
}

NU_DEVICE unsigned lanemask_lt() {
#ifdef NU_HOST_BUILD
    return (1u << detail::g_current->lane) - 1;
#else
    unsigned r;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
    return r;
#endif
}

// ---- bits and fused multiply-add ---------------------------------------------------------
#define NU_BIT_TYPES(op) \
    static_assert(detail::is_word_int<T>,  \
                  "nu::kern::" #op ": supported on int32, int64, uint32 and uint64")

template <class T>
NU_DEVICE i32 popc(T v) {
    NU_BIT_TYPES(popc);
#ifdef NU_HOST_BUILD
    if constexpr (sizeof(T) == 4) return __builtin_popcount(u32(v));
    else return __builtin_popcountll(u64(v));
#else
    if constexpr (sizeof(T) == 4) return __popc(u32(v));
    else return __popcll(u64(v));
#endif
}

template <class T>
NU_DEVICE i32 clz(T v) {
    NU_BIT_TYPES(clz);
#ifdef NU_HOST_BUILD
    // The builtins are undefined for 0.
    if constexpr (sizeof(T) == 4) return v ? __builtin_clz(u32(v)) : 32;
    else return v ? __builtin_clzll(u64(v)) : 64;
#else
    if constexpr (sizeof(T) == 4) return __clz(i32(v));
    else return __clzll(i64(v));
#endif
}

// 1 + the index of the lowest set bit; 0 for 0.
template <class T>
NU_DEVICE i32 ffs(T v) {
    NU_BIT_TYPES(ffs);
#ifdef NU_HOST_BUILD
    if constexpr (sizeof(T) == 4) return __builtin_ffs(i32(v));
    else return __builtin_ffsll(i64(v));
#else
    if constexpr (sizeof(T) == 4) return __ffs(i32(v));
    else return __ffsll(i64(v));
#endif
}

template <class T>
NU_DEVICE T brev(T v) {
    NU_BIT_TYPES(brev);
#ifdef NU_HOST_BUILD
    // Swap bits within each byte, then the bytes.
    using W = detail::word_t<T>;
    W x = W(v);
    constexpr W m1 = W(0x5555555555555555ull), m2 = W(0x3333333333333333ull),
                m4 = W(0x0f0f0f0f0f0f0f0full);
    x = ((x >> 1) & m1) | ((x & m1) << 1);
    x = ((x >> 2) & m2) | ((x & m2) << 2);
    x = ((x >> 4) & m4) | ((x & m4) << 4);
    if constexpr (sizeof(T) == 4) return T(__builtin_bswap32(x));
    else return T(__builtin_bswap64(x));
#else
    if constexpr (sizeof(T) == 4) return T(__brev(u32(v)));
    else return T(__brevll(u64(v)));
#endif
}

#undef NU_BIT_TYPES

template <class T>
NU_DEVICE T fma(T a, T b, T c) {
    static_assert(detail::is_word_float<T>, "nu::kern::fma: supported on float32 and float64");
    if constexpr (detail::same<T, f32>) return ::fmaf(a, b, c);
    else return ::fma(a, b, c);
}

// ---- raise and assert ----------------------------------------------------------------------
// `raise E(...)` in a kernel or a device function it calls (and a failing `assert` in a
// debug=True kernel): the raising thread ends there, as a return from the kernel would;
// the other threads go on (Numba's semantics). In a debug=True kernel (`report`: the
// generated source's nu_kernel_debug) it first records the launch's first exception,
// `code` (the translator's number of the raise site), with the thread and block, for the
// engine to raise on the host after the launch.
#ifdef NU_HOST_BUILD
[[noreturn]] static __attribute__((noinline, cold)) void raise_exception(bool report, long long code) {
    if (report) detail::record_exception(code);
    detail::exit_thread();
}
#else
[[noreturn]] static __device__ __noinline__ void raise_exception(bool report, long long code) {
    if (report) detail::record_error(2, (unsigned long long)code, 0, 0);
    asm volatile("exit;");
    __builtin_unreachable();
}
#endif

// The divisor of /, // or % in a kernel: under Python's error model (`check`: debug=True
// without fastmath, as Numba) a zero divisor raises ZeroDivisionError (site `code`);
// otherwise NumPy's results (inf, nan, 0 for integers) follow.
template <class T>
NU_DEVICE T divisor(bool check, long long code, T b) {
    if (check && !truth(b)) raise_exception(true, code);
    return b;
}

// A failing `assert`: only a debug=True kernel checks asserts (Numba; CUDA C++'s assert is
// likewise off without device debug).
NU_DEVICE void assert_failed(bool report, long long code) {
    if (report) raise_exception(true, code);
}

// ---- bounds checking (declared in nu_array.cuh) --------------------------------------------
#ifdef NU_BOUNDSCHECK
NU_COLD void report_out_of_bounds(long long index, int axis, long long size) {
#ifdef NU_HOST_BUILD
    detail::record_out_of_bounds(index, axis, size);
#else
    detail::record_error(1, (unsigned long long)index, (unsigned long long)axis,
                         (unsigned long long)size);
#endif
}
#ifdef NU_HOST_BUILD
[[maybe_unused]] NU_COLD void check_recursion(const char* function) {  // only recursive code calls it
    detail::check_recursion(static_cast<const char*>(__builtin_frame_address(0)), function);
}
#endif
#endif

}  // namespace kern
}  // namespace nu

// One kernel's entry point, with C linkage so its name is exactly `name`. WORDS: the
// parameter words; COOPERATIVE: 1 when the kernel uses a barrier or a warp-synchronous
// intrinsic (the host then runs each thread as a fiber), 0 for a plain loop over threads,
// 2 for a grid barrier (on the GPU one more word follows: the launch's barrier counter).
// The karg list must describe WORDS words; a mismatch stops the build here.
#ifdef NU_HOST_BUILD
#define NU_KERNEL_ENTRY(name, function, WORDS, COOPERATIVE, ...)                                   \
    using name##_signature = nu::detail::kernel_signature<__VA_ARGS__>;                            \
    static_assert(name##_signature::k_words == (WORDS),                                            \
                  "NU_KERNEL_ENTRY(" #name "): WORDS does not match the karg list");               \
    extern "C" __attribute__((visibility("default"))) int name(                                    \
        const long long* words, const nu::kernel_launch_info* info, char* message,                \
        int message_size) {                                                                        \
        return nu::detail::launch_grid(&name##_signature::run<function>, words, info, message,    \
                                       message_size, int(COOPERATIVE));                          \
    }
#else
// Empty, or __launch_bounds__(...) when cuda.compile(launch_bounds=...) redefines it before
// the entry point (expanded where NU_KERNEL_ENTRY is used, so after this header).
#define NU_LAUNCH_BOUNDS
#define NU_KERNEL_ENTRY(name, function, WORDS, COOPERATIVE, ...)                                   \
    using name##_signature = nu::detail::kernel_signature<__VA_ARGS__>;                            \
    static_assert(name##_signature::k_words == (WORDS),                                            \
                  "NU_KERNEL_ENTRY(" #name "): WORDS does not match the karg list");               \
    extern "C" __global__ void NU_LAUNCH_BOUNDS name(                                              \
        const nu::kernel_params<(WORDS) + ((COOPERATIVE) == 2)> p) {                               \
        nu::detail::enter_launch<(COOPERATIVE) == 2>(p.w + (WORDS));                               \
        name##_signature::run<function>(p.w);                                                      \
    }
#endif
