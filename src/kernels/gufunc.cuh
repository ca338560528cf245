// src/kernels/gufunc.cuh: the generalized ufunc loop: one thread per loop index
//
// The engine generates a short translation unit: this header, the translated function
// (whose array parameters are nu::array views), a functor calling it, and one
// NU_GUFUNC_ENTRY line. As in Numba, each thread runs the function once, on the views of
// its loop index; the loop dimensions are broadcast and coalesced by the engine. On a GPU,
// launches over one loop dimension with small contiguous items use the staged variant
// (NU_GUFUNC_STAGED_ENTRY, run_device_staged): items pass through shared memory.
#pragma once

#include "elementwise.cuh"
#include "nu_array.cuh"

namespace nu {

// How the function receives one operand. KIND 0: an array view over CORE core dimensions;
// 1: a `()` core passed by value (a scalar parameter); 2: a `()` core as a one-element
// array (Numba's older style, e.g. float64[:] for `()`).
// Staged launches only (run_device_staged): MODE, how the operand is staged, and E0..E3,
// its core extents when the engine specialised the kernel on them (0: read from the
// parameter words). A staged item is C-contiguous in shared memory, so with every extent
// fixed its strides are constants too.
template <class T, int CORE, int KIND, int MODE = 0, long long E0 = 0, long long E1 = 0, long long E2 = 0,
          long long E3 = 0>
struct garg {
    using type = T;
    static constexpr int core = CORE;
    static constexpr int kind = KIND;
    static constexpr int mode = MODE;
    static __host__ __device__ constexpr long long extent(int c) {
        return c == 0 ? E0 : c == 1 ? E1 : c == 2 ? E2 : c == 3 ? E3 : 0;
    }
    static __host__ __device__ constexpr bool fixed() {
        for (int c = 0; c < CORE; ++c)
            if (extent(c) == 0) return false;
        return true;
    }
    // Bytes between consecutive elements of core dimension c in a C-contiguous item.
    static __host__ __device__ constexpr long long packed_stride(int c) {
        long long s = (long long)sizeof(T);
        for (int d = CORE - 1; d > c; --d) s *= extent(d);
        return s;
    }
};

template <int K, class First, class... Rest>
struct type_at {
    using type = typename type_at<K - 1, Rest...>::type;
};
template <class First, class... Rest>
struct type_at<0, First, Rest...> {
    using type = First;
};

#ifndef NU_HOST_BUILD
// The unit of a staged copy of W bytes (run_device_staged).
template <int W> struct stage_word { using type = unsigned; };
template <> struct stage_word<8> { using type = uint2; };
template <> struct stage_word<16> { using type = uint4; };
#endif

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

    // Operand view over the item at `base` (the function's parameter of Arg's kind).
    // PACKED: the item lies C-contiguously in shared memory (a staged operand).
    template <class Arg, bool PACKED = false>
    static NU_DEVICE auto view_at(const long long* w, char* base) {
        using T = typename Arg::type;
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
                a.shape[c] = Arg::extent(c) != 0 ? Arg::extent(c) : w[1 + NLOOP + c];
                a.strides[c] = PACKED && Arg::fixed() ? Arg::packed_stride(c) : w[1 + NLOOP + Arg::core + c];
            }
            return a;
        }
    }

    template <class Arg>
    static NU_DEVICE auto view(const long long* w, const long long* coord) {
        long long offset = 0;
        for (int d = 0; d < NLOOP; ++d) offset += coord[d] * w[1 + d];
        return view_at<Arg>(w, reinterpret_cast<char*>(w[0]) + offset);
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

    // Staged launches (one loop dimension; src/dispatch/gufunc.cpp decides and sizes them).
    // A thread reading its own small matrix straight from global memory makes every load
    // of a warp touch 32 items a whole item apart: for 16x16 float32 the block's working
    // set overflows L1 and each element is fetched from DRAM many times. Here the block
    // copies the items of its B threads into shared memory with coalesced vector loads,
    // each thread runs the function on its item there, and the block writes outputs back
    // with coalesced stores. Items sit `stride` bytes apart in shared memory, an odd number
    // of elements, so threads reading the same element of their items hit different banks.
    //
    // Each operand's mode is its garg's MODE (0: read in place, 1: staged input, 2: one item
    // for every thread, a broadcast input, 3: staged in and written back: outputs passed in,
    // inputs the function writes; 4: written back only, an output the engine allocated,
    // whose old contents nobody may read). After the gufunc's words, four per operand:
    // mode | copy width << 8, the shared offset, the shared stride and the item's bytes (a
    // multiple of 4, laid out C-contiguously; in global memory items are `bytes` apart for
    // modes 1, 3 and 4).
    // Copy-in keeps k_stage_loads of a thread's loads in flight before their shared stores:
    // with one 16-byte load at a time a 16x16 float32 matmul's stage-in ran at a fraction
    // of DRAM bandwidth on an H100 (issue 30: 20 ms against cuBLAS's 2.65 ms).
    static constexpr int k_stage_loads = 4;

    // Shared addresses are only 4-byte aligned (odd strides): move 4-byte words.
    static __device__ void put(unsigned* s, const uint4& x) { s[0] = x.x, s[1] = x.y, s[2] = x.z, s[3] = x.w; }
    static __device__ void put(unsigned* s, const uint2& x) { s[0] = x.x, s[1] = x.y; }
    static __device__ void put(unsigned* s, unsigned x) { s[0] = x; }
    static __device__ void get(const unsigned* s, uint4& x) { x = make_uint4(s[0], s[1], s[2], s[3]); }
    static __device__ void get(const unsigned* s, uint2& x) { x = make_uint2(s[0], s[1]); }
    static __device__ void get(const unsigned* s, unsigned& x) { x = s[0]; }

    template <int W, bool IN>
    static __device__ void stage(char* global, char* shared, unsigned items, unsigned bytes,
                                 unsigned stride) {
        using word = typename stage_word<W>::type;
        const unsigned per_item = bytes / W;
        const unsigned total = items * per_item;
        // v / per_item by a multiply-high: exact while v * per_item < 2^32, and shared
        // memory bounds v * per_item far below that (fewer than 2^15 words per block).
        const unsigned magic = per_item > 1 ? 0xffffffffu / per_item + 1u : 0u;
        word* g = reinterpret_cast<word*>(global);
        auto at = [&](unsigned v) {
            const unsigned item = per_item > 1 ? __umulhi(v, magic) : v;
            const unsigned r = v - item * per_item;
            return reinterpret_cast<unsigned*>(shared + item * stride + r * W);
        };
        if constexpr (IN) {
            const unsigned span = k_stage_loads * blockDim.x;
            for (unsigned v0 = threadIdx.x; v0 < total; v0 += span) {
                word x[k_stage_loads];
#pragma unroll
                for (int u = 0; u < k_stage_loads; ++u) {
                    const unsigned v = v0 + u * blockDim.x;
                    if (v < total) x[u] = g[v];
                }
#pragma unroll
                for (int u = 0; u < k_stage_loads; ++u) {
                    const unsigned v = v0 + u * blockDim.x;
                    if (v < total) put(at(v), x[u]);
                }
            }
        } else {
            for (unsigned v = threadIdx.x; v < total; v += blockDim.x) {
                word x;
                get(at(v), x);
                g[v] = x;
            }
        }
    }

    template <bool IN>
    static __device__ void stage_words(const long long* st, char* global, char* shared, unsigned items) {
        const unsigned bytes = unsigned(st[3]), stride = unsigned(st[2]);
        switch ((st[0] >> 8) & 0xff) {
            case 16: stage<16, IN>(global, shared, items, bytes, stride); break;
            case 8: stage<8, IN>(global, shared, items, bytes, stride); break;
            default: stage<4, IN>(global, shared, items, bytes, stride); break;
        }
    }

    template <int K>
    using arg_at = typename type_at<K, A...>::type;

    // Where operand K's item lies: in place (mode 0), the block's one broadcast item (2),
    // or this thread's item in shared memory (1, 3, 4). The mode is a template constant, so
    // a staged operand's pointer is known to be shared: the function reads it with LDS.
    template <int K>
    static __device__ char* staged_base(const long long* p, long long i, char* shared) {
        const long long* w = p + first_word<K>;
        const long long* st = p + first_word<k_nops> + 4 * K;
        constexpr int mode = arg_at<K>::mode;
        if constexpr (mode == 0) {
            return reinterpret_cast<char*>(w[0]) + i * w[1];
        } else if constexpr (mode == 2) {
            return shared + st[1];
        } else {
            return shared + st[1] + threadIdx.x * unsigned(st[2]);
        }
    }

    template <unsigned long long... K>
    static __device__ void call_staged(const long long* p, long long i, char* shared, index_seq<K...>) {
        Op{}(view_at<A, (A::mode != 0)>(p + first_word<int(K)>, staged_base<int(K)>(p, i, shared))...);
    }

    // First word of operand K as a constant (a runtime k would index a local array).
    template <int K>
    static constexpr int first_word = start(K);

    // PHASE 0: broadcast inputs in; 1: staged operands in; 2: outputs (and inputs the
    // function writes) out.
    template <int PHASE, unsigned long long... K>
    static __device__ void stage_operands(const long long* p, long long first, unsigned items, char* shared,
                                          index_seq<K...>) {
        (stage_operand<PHASE, A::mode>(p + first_word<int(K)>, p + first_word<k_nops> + 4 * K, first, items,
                                       shared),
         ...);
    }

    template <int PHASE, int MODE>
    static __device__ void stage_operand(const long long* w, const long long* st, long long first, unsigned items,
                                         char* shared) {
        char* global = reinterpret_cast<char*>(w[0]) + first * st[3];
        if constexpr (PHASE == 0 && MODE == 2) stage_words<true>(st, reinterpret_cast<char*>(w[0]), shared + st[1], 1);
        if constexpr (PHASE == 1 && (MODE == 1 || MODE == 3)) stage_words<true>(st, global, shared + st[1], items);
        if constexpr (PHASE == 2 && (MODE == 3 || MODE == 4)) stage_words<false>(st, global, shared + st[1], items);
    }

    template <int WORDS>
    static __device__ void run_device_staged(const long long (&p)[WORDS]) {
        static_assert(NLOOP == 1, "staged gufunc launches have one loop dimension");
        extern __shared__ __align__(16) char nu_stage[];
        const long long n = p[0];
        const unsigned block = blockDim.x;
        stage_operands<0>(p, 0, 1, nu_stage, seq{});
        for (long long first = (long long)blockIdx.x * block; first < n; first += (long long)gridDim.x * block) {
            const unsigned items = unsigned(n - first < block ? n - first : block);
            stage_operands<1>(p, first, items, nu_stage, seq{});
            __syncthreads();
            if (threadIdx.x < items) call_staged(p, first + threadIdx.x, nu_stage, seq{});
            __syncthreads();
            stage_operands<2>(p, first, items, nu_stage, seq{});
            __syncthreads();  // the next items' copies overwrite what these stores read
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
// `words` counts the staging words too (four per operand). At least 8 blocks of 128 per
// multiprocessor (64 registers): with the bound alone ptxas kept loop invariants of the
// item loop in local memory.
#define NU_GUFUNC_STAGED_ENTRY(name, words, ...)                                         \
    using name##_impl = __VA_ARGS__;                                                     \
    extern "C" __global__ void __launch_bounds__(128, 8) name(const nu::gufunc_params<words> p) { \
        name##_impl::run_device_staged(p.w);                                             \
    }
#endif
