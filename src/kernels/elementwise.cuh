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
// INNER: the strided variant's innermost-stride class of each operand (run_pieces).
template <class Op, int NDIM, unsigned long long SCALARS, class Index, class LoopOut, class Out,
          class LoopIns, class Ins, unsigned long long INNER = 0>
struct elementwise;

template <class Op, int NDIM, unsigned long long SCALARS, class Index, class LoopOut, class Out,
          class... LoopIn, class... In, unsigned long long INNER>
struct elementwise<Op, NDIM, SCALARS, Index, LoopOut, Out, types<LoopIn...>, types<In...>, INNER> {
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

    // ---- strided variant, device loop: the coalesced shape as rows of its innermost
    // dimension, each row cut into pieces of k_piece elements. A thread takes piece w, then
    // w + step, ...: the piece's (row, column) and the row's outer multi-index are found by
    // division once per thread, then advanced by the step's digits with carries, so the loop
    // itself divides nothing (a division per element was a third of the ~35 instructions of
    // an element of a 2-d broadcast, issue 30). Within a piece every operand steps by its
    // innermost stride, whose class INNER fixes at compile time (2 bits per operand, the
    // output first): 1, unit stride: loaded and stored as vectors of up to 16 bytes when the
    // engine found every such row aligned (p.aligned); 2, stride 0: one load per piece;
    // 0, any stride: k_piece loads. A piece's loads are all issued before its stores.
    static constexpr int k_piece = k_vec > 4 ? k_vec : 4;

    template <unsigned long long K>
    static constexpr int inner_class = int((INNER >> (2 * K)) & 3ull);

    // Elements per vector access of a unit-stride T operand; must agree with
    // strided_vector_alignment() in src/launch/elementwise_launch.cpp.
    template <class T>
    static constexpr int piece_vec = sizeof(T) >= 16 ? 1 : (int(16 / sizeof(T)) < k_piece ? int(16 / sizeof(T)) : k_piece);

    template <class T> struct lane { T v[k_piece]; };

    template <class T, unsigned long long K, bool VEC>
    static NU_DEVICE lane<T> load_piece(const params& p, const long long (&row)[k_nops], Index col) {
        lane<T> r;
        if constexpr (((SCALARS >> K) & 1ull) || inner_class<K> == 2) {
            const T s = ((SCALARS >> K) & 1ull) ? scalar<T, K>(p) : *reinterpret_cast<const T*>(p.ops[K].ptr + row[K]);
NU_UNROLL
            for (int j = 0; j < k_piece; ++j) r.v[j] = s;
        } else if constexpr (inner_class<K> == 1) {
            const T* q = reinterpret_cast<const T*>(p.ops[K].ptr + row[K]) + col;
            if constexpr (VEC) {
                constexpr int V = piece_vec<T>;
NU_UNROLL
                for (int m = 0; m < k_piece / V; ++m) {
                    const vec<T, V> x = reinterpret_cast<const vec<T, V>*>(q)[m];
NU_UNROLL
                    for (int j = 0; j < V; ++j) r.v[m * V + j] = x.v[j];
                }
            } else {
NU_UNROLL
                for (int j = 0; j < k_piece; ++j) r.v[j] = q[j];
            }
        } else {
            const long long s = p.ops[K].strides[k_dims - 1];
            const char* q = p.ops[K].ptr + row[K] + (long long)col * s;
NU_UNROLL
            for (int j = 0; j < k_piece; ++j) r.v[j] = *reinterpret_cast<const T*>(q + j * s);
        }
        return r;
    }

    template <bool VEC, class... L>
    static NU_DEVICE void store_piece(const params& p, const long long (&row)[k_nops], Index col, L... in) {
        lane<Out> o;
NU_UNROLL
        for (int j = 0; j < k_piece; ++j) o.v[j] = apply(cast<LoopIn>(in.v[j])...);
        if constexpr (inner_class<0> == 1) {
            Out* q = reinterpret_cast<Out*>(p.ops[0].ptr + row[0]) + col;
            if constexpr (VEC) {
                constexpr int V = piece_vec<Out>;
NU_UNROLL
                for (int m = 0; m < k_piece / V; ++m) {
                    vec<Out, V> x;
NU_UNROLL
                    for (int j = 0; j < V; ++j) x.v[j] = o.v[m * V + j];
                    reinterpret_cast<vec<Out, V>*>(q)[m] = x;
                }
            } else {
NU_UNROLL
                for (int j = 0; j < k_piece; ++j) q[j] = o.v[j];
            }
        } else {
            const long long s = p.ops[0].strides[k_dims - 1];
            char* q = p.ops[0].ptr + row[0] + (long long)col * s;
NU_UNROLL
            for (int j = 0; j < k_piece; ++j) *reinterpret_cast<Out*>(q + j * s) = o.v[j];
        }
    }

    template <class T, unsigned long long K>
    static NU_DEVICE T load_in_row(const params& p, const long long (&row)[k_nops], Index c) {
        if constexpr ((SCALARS >> K) & 1ull) {
            return scalar<T, K>(p);
        } else if constexpr (inner_class<K> == 2) {
            return *reinterpret_cast<const T*>(p.ops[K].ptr + row[K]);
        } else if constexpr (inner_class<K> == 1) {
            return reinterpret_cast<const T*>(p.ops[K].ptr + row[K])[c];
        } else {
            return *reinterpret_cast<const T*>(p.ops[K].ptr + row[K] + (long long)c * p.ops[K].strides[k_dims - 1]);
        }
    }

    // Columns [col, col + count) of the row whose operands start at byte offsets `row`.
    template <unsigned long long... K>
    static NU_DEVICE void piece(const params& p, const long long (&row)[k_nops], Index col, Index count,
                                index_seq<K...>) {
        if (count == Index(k_piece)) {
            if (p.aligned) {
                store_piece<true>(p, row, col, load_piece<In, K + 1, true>(p, row, col)...);
            } else {
                store_piece<false>(p, row, col, load_piece<In, K + 1, false>(p, row, col)...);
            }
            return;
        }
        for (Index c = col; c < col + count; ++c) {
            const Out r = apply(cast<LoopIn>(load_in_row<In, K + 1>(p, row, c))...);
            if constexpr (inner_class<0> == 1) {
                reinterpret_cast<Out*>(p.ops[0].ptr + row[0])[c] = r;
            } else {
                *reinterpret_cast<Out*>(p.ops[0].ptr + row[0] + (long long)c * p.ops[0].strides[k_dims - 1]) = r;
            }
        }
    }

    // Digits of x in the outer dimensions (all but the innermost): digit[0] is unbounded.
    static NU_DEVICE void outer_digits(const params& p, Index x, Index (&digit)[k_dims]) {
NU_UNROLL
        for (int d = k_dims - 2; d > 0; --d) {
            const Index extent = Index(p.shape[d]);
            const Index q = x / extent;
            digit[d] = x - q * extent;
            x = q;
        }
        digit[0] = x;
    }

    // Pieces w = first, first + step, ... below end (pieces are numbered row by row).
    static NU_DEVICE void run_pieces(const params& p, Index w, Index end, Index step) {
        if (w >= end) return;
        constexpr int last = k_dims - 1;
        const Index inner = Index(p.shape[last]);
        const Index per_row = (inner + Index(k_piece - 1)) / Index(k_piece);
        const Index row_step = step / per_row, col_step = step - row_step * per_row;
        Index row = w / per_row;
        Index c = w - row * per_row;
        Index idx[k_dims] = {}, di[k_dims] = {};
        if constexpr (k_dims > 1) {
            outer_digits(p, row, idx);
            outer_digits(p, row_step, di);
        }
        for (; w < end; w += step) {
            long long offsets[k_nops];
NU_UNROLL
            for (int k = 0; k < k_nops; ++k) {
                offsets[k] = 0;
NU_UNROLL
                for (int d = 0; d < last; ++d) offsets[k] += (long long)idx[d] * p.ops[k].strides[d];
            }
            const Index col = c * Index(k_piece);
            const Index left = inner - col;
            piece(p, offsets, col, left < Index(k_piece) ? left : Index(k_piece), seq{});
            // Advance by step pieces: the column digit, then the outer digits with carries
            // (each digit stays below its extent, so one subtraction absorbs a carry).
            c += col_step;
            Index carry = 0;
            if (c >= per_row) {
                c -= per_row;
                carry = 1;
            }
NU_UNROLL
            for (int d = last - 1; d >= 0; --d) {
                idx[d] += di[d] + carry;
                carry = 0;
                if (d > 0 && idx[d] >= Index(p.shape[d])) {
                    idx[d] -= Index(p.shape[d]);
                    carry = 1;
                }
            }
        }
    }

    // Pieces of the coalesced shape: those whose first element lies in [begin, end).
    static NU_DEVICE Index piece_at(const params& p, long long i) {
        const long long inner = p.shape[k_dims - 1];
        const long long per_row = (inner + k_piece - 1) / k_piece;
        const long long row = i / inner, col = i - row * inner;
        return Index(row * per_row + (col + k_piece - 1) / k_piece);
    }

    static NU_DEVICE void element(const params& p, Index i) { contiguous_one(p, i, seq{}); }

#ifdef NU_HOST_BUILD
#ifdef NU_EMULATE_DEVICE_LOOP
    static constexpr bool k_emulate_device_loop = true;
#else
    static constexpr bool k_emulate_device_loop = false;
#endif
    // A prime: steps of whole rows and carries through the outer digits occur for every
    // row length (elementwise tests use shapes of a few to a few thousand elements).
    static constexpr int k_emulated_threads = 37;

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
        } else if constexpr (k_emulate_device_loop) {
            // Emulation of the cuda target runs the device loop (run_pieces) over the pieces
            // that start in [begin, end), as k_emulated_threads threads striding by their
            // count, so the host suite checks the GPU's piece and carry logic.
            const Index first = piece_at(p, begin), stop = piece_at(p, end);
            for (Index t = 0; t < Index(k_emulated_threads); ++t) {
                run_pieces(p, first + t, stop, Index(k_emulated_threads));
            }
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
        if constexpr (NDIM > 0) {
            // No piece index passes pieces + step: 32-bit indices serve n < 2^31 only.
            const Index inner = Index(p.shape[k_dims - 1]);
            run_pieces(p, tid, n / inner * ((inner + Index(k_piece - 1)) / Index(k_piece)), step);
        } else {
            for (Index i = tid; i < n; i += step) element(p, i);
        }
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
