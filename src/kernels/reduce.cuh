// src/kernels/reduce.cuh: reductions with a translated binary operator (CUB on the GPU)
//
// The engine generates a short translation unit: this header, the translated __device__
// function, a functor calling it, and one NU_REDUCE_ENTRY line. A reduction is `rows`
// outputs, each folding `len` elements; a full reduction is one row. Three kernels cover
// every layout:
//   units   a warp folds one contiguous chunk of a row (vector loads when the row is
//           contiguous and aligned); with one chunk per row it writes the result,
//           otherwise a partial per chunk that
//   final   folds, a block per row (cub::BlockReduce), on the device: no host round trip;
//   columns a thread folds a whole row, for reductions over outer axes (adjacent threads
//           read adjacent memory).
// Every fold keeps element order (lanes own consecutive items; CUB's warp and block
// reductions combine lanes in order), so any associative operator is valid, commutative
// or not. The host build (NU_HOST_BUILD) runs the same plan sequentially.
#pragma once

#include "nu_scalar.cuh"

#ifndef NU_HOST_BUILD
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#endif

namespace nu {

constexpr int k_reduce_dims = 8;     // coalesced dimensions per side; the engine checks
constexpr int k_reduce_warps = 8;    // warps per block (256 threads)

// Kernel parameters are 8-byte words only: see src/launch/reduce_launch.cpp.
struct reduce_params {
    long long rows;          // outputs
    long long len;           // elements folded into each output
    long long chunks;        // units per row; 1: the units kernel writes the result
    long long chunk_len;     // elements per unit, a multiple of the warp tile
    long long has_init;      // fold `init` in once, first: op(init, fold(row))
    unsigned long long init[2];  // already of the accumulator type
    long long aligned;       // rows contiguous and 16-byte aligned: vector loads
    char* in;
    char* out;
    char* partials;          // rows * chunks accumulators when chunks > 1
    long long row_ndim;
    long long red_ndim;
    long long row_shape[k_reduce_dims];
    long long in_row_strides[k_reduce_dims];   // bytes
    long long out_row_strides[k_reduce_dims];  // bytes
    long long red_shape[k_reduce_dims];
    long long red_strides[k_reduce_dims];      // bytes
};

// Op: functor calling the translated function. T: the accumulator (the operator's type);
// In: the input array's element type (converted on load); Out: the result array's.
template <class Op, class T, class In, class Out>
struct reduce_kernels {
    // Items per lane per tile: four 16-byte vectors (measured on sm_90 in the contiguous
    // kernel: enough bytes in flight per SM to saturate HBM).
    static constexpr int k_vec = sizeof(In) >= 16 ? 1 : int(16 / sizeof(In));
    static constexpr int k_items = 4 * k_vec;
    static constexpr int k_tile = 32 * k_items;

    struct combiner {
        NU_DEVICE T operator()(const T& a, const T& b) const { return cast<T>(Op{}(a, b)); }
    };
    static NU_DEVICE T combine(const T& a, const T& b) { return combiner{}(a, b); }

    template <int N> struct alignas(16) vec {
        In v[N];
    };

    static NU_DEVICE long long row_offset(const reduce_params& p, long long r, const long long* strides) {
        long long off = 0;
        for (int d = int(p.row_ndim) - 1; d >= 0 && r > 0; --d) {
            off += (r % p.row_shape[d]) * strides[d];
            r /= p.row_shape[d];
        }
        return off;
    }

    template <bool CONTIG>
    static NU_DEVICE T load(const reduce_params& p, const char* row, long long k) {
        long long off;
        if constexpr (CONTIG) {
            off = k * (long long)sizeof(In);
        } else if (p.red_ndim == 1) {  // the common strided case: no index arithmetic
            off = k * p.red_strides[0];
        } else {
            off = 0;
            for (int d = int(p.red_ndim) - 1; d >= 0; --d) {
                off += (k % p.red_shape[d]) * p.red_strides[d];
                k /= p.red_shape[d];
            }
        }
        return cast<T>(*reinterpret_cast<const In*>(row + off));
    }

    // Writes one row's result. A row without elements gets `init`; the engine never
    // launches an empty reduction without one.
    static NU_DEVICE void finish(const reduce_params& p, long long r, bool has, const T& acc) {
        const T init = *reinterpret_cast<const T*>(p.init);
        const T v = !p.has_init ? acc : has ? combine(init, acc) : init;
        *reinterpret_cast<Out*>(p.out + row_offset(p, r, p.out_row_strides)) = cast<Out>(v);
    }

    // Elements [begin, end) of `row`, in order; `has` says whether `acc` holds a value.
    template <bool CONTIG>
    static NU_DEVICE void fold_range(const reduce_params& p, const char* row, long long begin,
                                     long long end, bool& has, T& acc) {
        for (long long k = begin; k < end; ++k) {
            const T x = load<CONTIG>(p, row, k);
            acc = has ? combine(acc, x) : x;
            has = true;
        }
    }

#ifdef NU_HOST_BUILD
    template <bool CONTIG>
    static void units(const reduce_params& p) {
        for (long long u = 0; u < p.rows * p.chunks; ++u) {
            const long long r = u / p.chunks, begin = (u % p.chunks) * p.chunk_len;
            const long long end = begin + p.chunk_len < p.len ? begin + p.chunk_len : p.len;
            bool has = false;
            T acc{};
            fold_range<CONTIG>(p, p.in + row_offset(p, r, p.in_row_strides), begin, end, has, acc);
            if (p.chunks == 1) finish(p, r, has, acc);
            else reinterpret_cast<T*>(p.partials)[u] = acc;
        }
    }

    static void final_pass(const reduce_params& p) {
        const T* parts = reinterpret_cast<const T*>(p.partials);
        for (long long r = 0; r < p.rows; ++r) {
            T acc = parts[r * p.chunks];
            for (long long c = 1; c < p.chunks; ++c) acc = combine(acc, parts[r * p.chunks + c]);
            finish(p, r, true, acc);
        }
    }

    static void columns(const reduce_params& p) {
        for (long long r = 0; r < p.rows; ++r) {
            bool has = false;
            T acc{};
            fold_range<false>(p, p.in + row_offset(p, r, p.in_row_strides), 0, p.len, has, acc);
            finish(p, r, has, acc);
        }
    }
#else
    using warp_reduce = cub::WarpReduce<T>;
    using block_reduce = cub::BlockReduce<T, 32 * k_reduce_warps>;

    // One warp tile starting at `base`: lane l folds items [base + l*k_items, +k_items),
    // then the warp combines lanes in order. Lane 0 returns the tile's value.
    template <bool CONTIG>
    static __device__ T tile(const reduce_params& p, const char* row, long long base,
                             long long end, int lane, typename warp_reduce::TempStorage& temp) {
        const long long first = base + (long long)lane * k_items;
        bool has = false;
        T acc{};
        if (CONTIG && p.aligned && base + k_tile <= end) {
            const vec<k_vec>* src = reinterpret_cast<const vec<k_vec>*>(row) + first / k_vec;
            vec<k_vec> chunk[k_items / k_vec];
#pragma unroll
            for (int j = 0; j < k_items / k_vec; ++j) chunk[j] = src[j];  // loads first, then math
            acc = cast<T>(chunk[0].v[0]);
#pragma unroll
            for (int i = 1; i < k_items; ++i) acc = combine(acc, cast<T>(chunk[i / k_vec].v[i % k_vec]));
            has = true;
        } else if (first < end) {
            fold_range<CONTIG>(p, row, first, first + k_items < end ? first + k_items : end, has, acc);
        }
        const long long valid = (end - base + k_items - 1) / k_items;  // lanes with items: a prefix
        T total = valid >= 32 ? warp_reduce(temp).Reduce(acc, combiner{})
                              : warp_reduce(temp).Reduce(acc, combiner{}, int(valid));
        __syncwarp();  // temp is reused by the next tile
        return total;
    }

    template <bool CONTIG>
    static __device__ void units(const reduce_params& p) {
        __shared__ typename warp_reduce::TempStorage temp[k_reduce_warps];
        const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
        const long long total = p.rows * p.chunks;
        for (long long u = (long long)blockIdx.x * k_reduce_warps + warp; u < total;
             u += (long long)gridDim.x * k_reduce_warps) {
            const long long r = u / p.chunks, begin = (u % p.chunks) * p.chunk_len;
            const long long end = begin + p.chunk_len < p.len ? begin + p.chunk_len : p.len;
            const char* row = p.in + row_offset(p, r, p.in_row_strides);
            bool has = false;
            T acc{};
            for (long long base = begin; base < end; base += k_tile) {
                const T t = tile<CONTIG>(p, row, base, end, lane, temp[warp]);
                acc = has ? combine(acc, t) : t;
                has = true;
            }
            if (lane == 0) {
                if (p.chunks == 1) finish(p, r, has, acc);
                else reinterpret_cast<T*>(p.partials)[u] = acc;  // chunks are never empty
            }
        }
    }

    static __device__ void final_pass(const reduce_params& p) {
        __shared__ typename block_reduce::TempStorage temp;
        const int threads = 32 * k_reduce_warps;
        const long long per = (p.chunks + threads - 1) / threads;  // blocked: in order
        const long long valid = (p.chunks + per - 1) / per;
        for (long long r = blockIdx.x; r < p.rows; r += gridDim.x) {
            const T* parts = reinterpret_cast<const T*>(p.partials) + r * p.chunks;
            const long long first = (long long)threadIdx.x * per;
            bool has = false;
            T acc{};
            for (long long c = first; c < first + per && c < p.chunks; ++c) {
                acc = has ? combine(acc, parts[c]) : parts[c];
                has = true;
            }
            const T total = block_reduce(temp).Reduce(acc, combiner{}, int(valid));
            if (threadIdx.x == 0) finish(p, r, true, total);
            __syncthreads();  // temp is reused by the next row
        }
    }

    static __device__ void columns(const reduce_params& p) {
        const long long step = (long long)gridDim.x * blockDim.x;
        for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += step) {
            bool has = false;
            T acc{};
            fold_range<false>(p, p.in + row_offset(p, r, p.in_row_strides), 0, p.len, has, acc);
            finish(p, r, has, acc);
        }
    }
#endif
};

}  // namespace nu

// The kernels of one operator and type triple, with C linkage so their names are exactly
// `name` (nu_<pyname>_<typecodes>_<hash8>) plus _units_contig, _units_strided, _final,
// _columns: profilers show the user's function.
#ifdef NU_HOST_BUILD
#define NU_REDUCE_KERNEL(name, suffix, call)                                                  \
    extern "C" __attribute__((visibility("default"))) void name##suffix(const void* p) {     \
        name##_impl::call(*static_cast<const nu::reduce_params*>(p));                        \
    }
#else
#define NU_REDUCE_KERNEL(name, suffix, call)                                                \
    extern "C" __global__ void __launch_bounds__(256) name##suffix(const nu::reduce_params p) { \
        name##_impl::call(p);                                                               \
    }
#endif
#define NU_REDUCE_ENTRY(name, ...)                                \
    using name##_impl = __VA_ARGS__;                              \
    NU_REDUCE_KERNEL(name, _units_contig, template units<true>)   \
    NU_REDUCE_KERNEL(name, _units_strided, template units<false>) \
    NU_REDUCE_KERNEL(name, _final, final_pass)                    \
    NU_REDUCE_KERNEL(name, _columns, columns)
