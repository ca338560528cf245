// src/kernels/elementwise.cuh: the elementwise ufunc loop around a translated function
//
// The engine generates a short translation unit: this header, the translated __device__
// function, a functor calling it, and one NU_ELEMENTWISE_ENTRY line naming the variant.
// The same text builds a CUDA kernel (NVRTC) or a host loop (host compiler after
// host_prelude.h), so emulation runs exactly the code the GPU runs.
#pragma once

#include "nu_scalar.cuh"

namespace nu {

template <class... T> struct types {};

template <unsigned long long... K> struct index_seq {};
template <unsigned long long N, unsigned long long... K>
struct make_index_seq_t : make_index_seq_t<N - 1, N - 1, K...> {};
template <unsigned long long... K> struct make_index_seq_t<0, K...> { using type = index_seq<K...>; };

// Kernel parameters are 8-byte words only, so the engine packs them without knowing C++
// struct layout rules: see src/launch/elementwise_params.cpp.
template <int NDIM> struct ew_operand {
    char* ptr;                      // first element; unused for a by-value scalar
    unsigned long long value[2];    // by-value scalar, already of the loop's type
    long long strides[NDIM];        // bytes
};
template <int NDIM, int NOPS> struct ew_params {
    long long n;                    // element count
    long long aligned;              // 1: every array operand allows vector access
    long long shape[NDIM];          // coalesced iteration shape (innermost last)
    ew_operand<NDIM> ops[NOPS];     // the output first, then the inputs
};

template <class T, int N> struct alignas(sizeof(T) * N) vec {
    T v[N];
};

template <class... T> __host__ __device__ constexpr int max_size() {
    int m = 1;
    int sizes[] = {int(sizeof(T))...};
    for (int s : sizes) m = s > m ? s : m;
    return m;
}

// Op: functor calling the translated function. NDIM == 0: contiguous 1-d variant;
// NDIM > 0: strided variant over NDIM coalesced dimensions. SCALARS: bit k set when
// operand k is passed by value. Index: 32- or 64-bit index arithmetic. Out is the output
// array's element type, LoopOut the function's; In... the input arrays' element types,
// LoopIn... the function's parameter types (the kernel converts on load and store).
template <class Op, int NDIM, unsigned long long SCALARS, class Index, class LoopOut, class Out,
          class LoopIns, class Ins>
struct elementwise;

template <class Op, int NDIM, unsigned long long SCALARS, class Index, class LoopOut, class Out,
          class... LoopIn, class... In>
struct elementwise<Op, NDIM, SCALARS, Index, LoopOut, Out, types<LoopIn...>, types<In...>> {
    static constexpr int k_nops = 1 + int(sizeof...(In));
    static constexpr int k_dims = NDIM > 0 ? NDIM : 1;
    // Elements per thread step in the contiguous variant: one 16-byte access for the
    // widest operand (float4 for float32, double2 for float64).
    static constexpr int k_vec = 16 / max_size<Out, In...>();
    using params = ew_params<k_dims, k_nops>;
    using seq = typename make_index_seq_t<sizeof...(In)>::type;

    template <class T, unsigned long long K>
    static NU_DEVICE T scalar(const params& p) {
        return *reinterpret_cast<const T*>(p.ops[K].value);
    }

    template <class T, unsigned long long K>
    static NU_DEVICE T load(const params& p, Index i) {
        if constexpr ((SCALARS >> K) & 1ull) {
            return scalar<T, K>(p);
        } else {
            return reinterpret_cast<const T*>(p.ops[K].ptr)[i];
        }
    }

    template <class T, unsigned long long K>
    static NU_DEVICE T load_at(const params& p, const long long* offsets) {
        if constexpr ((SCALARS >> K) & 1ull) {
            return scalar<T, K>(p);
        } else {
            return *reinterpret_cast<const T*>(p.ops[K].ptr + offsets[K]);
        }
    }

    template <class T, unsigned long long K>
    static NU_DEVICE vec<T, k_vec> load_vec(const params& p, Index base) {
        vec<T, k_vec> r;
        if constexpr ((SCALARS >> K) & 1ull) {
            const T s = scalar<T, K>(p);
            for (int j = 0; j < k_vec; ++j) r.v[j] = s;
        } else {
            r = *reinterpret_cast<const vec<T, k_vec>*>(reinterpret_cast<const T*>(p.ops[K].ptr) + base);
        }
        return r;
    }

    static NU_DEVICE Out apply(LoopIn... args) { return cast<Out>(LoopOut(Op{}(args...))); }

    // ---- contiguous variant
    template <unsigned long long... K>
    static NU_DEVICE void contiguous_one(const params& p, Index i, index_seq<K...>) {
        reinterpret_cast<Out*>(p.ops[0].ptr)[i] = apply(cast<LoopIn>(load<In, K + 1>(p, i))...);
    }

    template <class... V>
    static NU_DEVICE void store_vec(const params& p, Index base, V... v) {
        vec<Out, k_vec> o;
        for (int j = 0; j < k_vec; ++j) o.v[j] = apply(cast<LoopIn>(v.v[j])...);
        *reinterpret_cast<vec<Out, k_vec>*>(reinterpret_cast<Out*>(p.ops[0].ptr) + base) = o;
    }

    template <unsigned long long... K>
    static NU_DEVICE void contiguous_vec(const params& p, Index base, index_seq<K...>) {
        store_vec(p, base, load_vec<In, K + 1>(p, base)...);
    }

    // ---- strided variant: byte offsets of every operand for a linear index
    static NU_DEVICE void offsets_of(const params& p, Index i, long long (&offsets)[k_nops]) {
        for (int k = 0; k < k_nops; ++k) offsets[k] = 0;
        Index rest = i;
        for (int d = k_dims - 1; d >= 0; --d) {
            const Index extent = Index(p.shape[d]);
            const Index c = d > 0 ? rest % extent : rest;
            rest = d > 0 ? rest / extent : 0;
            for (int k = 0; k < k_nops; ++k) offsets[k] += (long long)c * p.ops[k].strides[d];
        }
    }

    template <unsigned long long... K>
    static NU_DEVICE Out strided_value(const params& p, const long long (&offsets)[k_nops], index_seq<K...>) {
        return apply(cast<LoopIn>(load_at<In, K + 1>(p, offsets))...);
    }

    static NU_DEVICE void strided_one(const params& p, Index i) {
        long long offsets[k_nops];
        offsets_of(p, i, offsets);
        *reinterpret_cast<Out*>(p.ops[0].ptr + offsets[0]) = strided_value(p, offsets, seq{});
    }

#ifndef NU_HOST_BUILD
    // Strided elements per thread per step of the device loop, every one's loads issued
    // before any store: one scalar load per operand and element left too few bytes in
    // flight per SM to cover DRAM latency (a broadcast float32 a + b ran at 74% of the
    // copy bandwidth on an H100, float64 at 99%); the contiguous variant gets the same
    // from its 16-byte vectors.
    static constexpr int k_unroll = 4;

    static NU_DEVICE void strided_unrolled(const params& p, Index i, Index step) {
        long long offsets[k_unroll][k_nops];
        Out r[k_unroll];
#pragma unroll
        for (int j = 0; j < k_unroll; ++j) {
            offsets_of(p, i + Index(j) * step, offsets[j]);
            r[j] = strided_value(p, offsets[j], seq{});
        }
#pragma unroll
        for (int j = 0; j < k_unroll; ++j) *reinterpret_cast<Out*>(p.ops[0].ptr + offsets[j][0]) = r[j];
    }
#endif

    static NU_DEVICE void element(const params& p, Index i) {
        if constexpr (NDIM == 0) {
            contiguous_one(p, i, seq{});
        } else {
            strided_one(p, i);
        }
    }

#ifdef NU_HOST_BUILD
    // Contiguous host loop: a counted loop over restrict-qualified pointers that the
    // compiler vectorises, with the translated function inlined (hidden visibility, see
    // src/compile/host_build.cpp). A by-value scalar is read through a pointer to its
    // bytes at index 0, so every operand has one form. The output may be exactly an input
    // (out=a): each element is read before it is written in its own iteration only, which
    // any vectorised order keeps; partly overlapping inputs are copied by the engine.
    template <unsigned long long... K>
    static void host_contiguous(index_seq<K...>, long long begin, long long end,
                                Out* __restrict__ out, const In* __restrict__... in) {
        // Two elements per iteration: a function calling libm (sinf, expf) overlaps two
        // elements' calls; float32 sin(x)*exp(-x*x)+sqrt(|x|+1) at 10^5 went from about
        // 1.18x to 1.07x Numba's time (this 2-core machine, interleaved medians).
#pragma GCC unroll 2
        for (long long i = begin; i < end; ++i)
            out[i] = apply(cast<LoopIn>(in[((SCALARS >> (K + 1)) & 1ull) ? 0 : i])...);
    }

    template <unsigned long long... K>
    static void host_contiguous_entry(const params& p, long long begin, long long end,
                                      index_seq<K...> seq) {
        host_contiguous(seq, begin, end, reinterpret_cast<Out*>(p.ops[0].ptr),
                        reinterpret_cast<const In*>(((SCALARS >> (K + 1)) & 1ull)
                                                        ? reinterpret_cast<const char*>(p.ops[K + 1].value)
                                                        : p.ops[K + 1].ptr)...);
    }

    // Strided host loop, NumPy's way: a run along the innermost dimension at a time, each
    // operand's pointer stepping by its stride; a run whose operands are all unit-stride
    // (or by-value scalars) takes the vectorised contiguous loop above.
    template <class T, unsigned long long K>
    static T host_load_strided(const params& p, const long long* offsets, long long j) {
        if constexpr ((SCALARS >> K) & 1ull) {
            return scalar<T, K>(p);
        } else {
            return *reinterpret_cast<const T*>(p.ops[K].ptr + offsets[K] + j * p.ops[K].strides[k_dims - 1]);
        }
    }

    template <unsigned long long... K>
    static void host_run(const params& p, const long long* offsets, long long count, index_seq<K...> seq) {
        constexpr int last = k_dims - 1;
        const bool unit = p.ops[0].strides[last] == (long long)sizeof(Out) &&
                          (true && ... && (((SCALARS >> (K + 1)) & 1ull) ||
                                           p.ops[K + 1].strides[last] == (long long)sizeof(In)));
        if (unit) {
            host_contiguous(seq, 0, count, reinterpret_cast<Out*>(p.ops[0].ptr + offsets[0]),
                            reinterpret_cast<const In*>(((SCALARS >> (K + 1)) & 1ull)
                                                            ? reinterpret_cast<const char*>(p.ops[K + 1].value)
                                                            : p.ops[K + 1].ptr + offsets[K + 1])...);
            return;
        }
        char* out = p.ops[0].ptr + offsets[0];
        const long long out_stride = p.ops[0].strides[last];
        for (long long j = 0; j < count; ++j) {
            *reinterpret_cast<Out*>(out + j * out_stride) =
                apply(cast<LoopIn>(host_load_strided<In, K + 1>(p, offsets, j))...);
        }
    }

    // The host backend runs a range of linear indices; the engine splits [0, n) into
    // chunks (over threads for the parallel target).
    static void run_host(const params& p, long long begin, long long end) {
        if constexpr (NDIM == 0) {
            host_contiguous_entry(p, begin, end, seq{});
        } else {
            const params local = p;  // not aliased by the output: strides stay in registers
            long long index[k_dims];  // begin as a multi-index, innermost last
            long long rest = begin;
            for (int d = k_dims - 1; d > 0; --d) {
                index[d] = rest % local.shape[d];
                rest /= local.shape[d];
            }
            index[0] = rest;
            for (long long i = begin; i < end;) {
                long long offsets[k_nops] = {};
                for (int d = 0; d < k_dims; ++d)
                    for (int k = 0; k < k_nops; ++k) offsets[k] += index[d] * local.ops[k].strides[d];
                const long long left = local.shape[k_dims - 1] - index[k_dims - 1];
                const long long count = end - i < left ? end - i : left;
                host_run(local, offsets, count, seq{});
                i += count;
                index[k_dims - 1] += count;
                for (int d = k_dims - 1; d > 0 && index[d] == local.shape[d]; --d) {
                    index[d] = 0;
                    ++index[d - 1];
                }
            }
        }
    }
#else
    static __device__ void run_device(const params& p) {
        const Index n = Index(p.n);
        const Index step = Index(blockDim.x) * Index(gridDim.x);
        Index tid = Index(blockIdx.x) * Index(blockDim.x) + Index(threadIdx.x);
        if constexpr (NDIM == 0 && k_vec > 1) {
            if (p.aligned) {
                const Index nvec = n / k_vec;
                for (Index v = tid; v < nvec; v += step) contiguous_vec(p, v * k_vec, seq{});
                const Index tail = nvec * k_vec + tid;
                if (tail < n) element(p, tail);
                return;
            }
        }
        Index i = tid;
        if constexpr (NDIM > 0) {
            // Whole groups of k_unroll elements (i, i + step, ...), then the rest one by
            // one. No index passes n + step: 32-bit indices serve n < 2^31 only.
            for (; i < n && n - i > Index(k_unroll - 1) * step; i += Index(k_unroll) * step) {
                strided_unrolled(p, i, step);
            }
        }
        for (; i < n; i += step) element(p, i);
    }
#endif
};

}  // namespace nu

// One variant's entry point, with C linkage so its name is exactly `name`
// (nu_<pyname>_<typecodes>_<hash8>_<variant>): profilers show the user's function.
#ifdef NU_HOST_BUILD
// Host entry (src/launch/host_launch.h): run items [begin, end); 0 = no failure.
#define NU_ELEMENTWISE_ENTRY(name, ...)                                                    \
    using name##_impl = __VA_ARGS__;                                                       \
    extern "C" __attribute__((visibility("default"))) int name(                           \
        const void* p, long long begin, long long end, long long* /*report*/) {           \
        name##_impl::run_host(*static_cast<const name##_impl::params*>(p), begin, end);   \
        return 0;                                                                          \
    }
#else
#define NU_ELEMENTWISE_ENTRY(name, ...)                                                \
    using name##_impl = __VA_ARGS__;                                                   \
    extern "C" __global__ void __launch_bounds__(256) name(const name##_impl::params p) { \
        name##_impl::run_device(p);                                                    \
    }
#endif
