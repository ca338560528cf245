// src/kernels/reduce.cuh: reductions with a translated binary operator (CUB on the GPU)
//
// The engine generates a short translation unit: this header, the translated __device__
// function, a functor calling it, and one NU_REDUCE_ENTRY line. A reduction is `rows`
// outputs, each folding `len` elements; a full reduction is one row. These kernels cover
// every layout:
//   units   a warp folds one contiguous chunk of a row (vector loads when the row is
//           contiguous and aligned); with one chunk per row it writes the result,
//           otherwise a partial per chunk that
//   final   folds, a block per row (cub::BlockReduce), on the device: no host round trip;
//   columns_tiled  reductions over outer axes (outputs adjacent in memory): a warp's lanes
//           own 32 adjacent outputs, so its loads coalesce; the block's warps split the
//           folded range into consecutive slices, and blockIdx.y splits it into chunks
//           when there are too few outputs to fill the device; chunk partials are folded
//           by
//   columns_final  a thread per output, chunks in order;
//   columns a thread folds a whole short row (many outputs, few elements each).
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

    // Walks the folded elements begin, begin + 1, ... of a row over several folded
    // dimensions: the offset steps along the innermost one and carries outwards, so a
    // range costs one division per dimension, not one per element. The loops are fully
    // unrolled so `idx` stays in registers (a runtime index would put it in local memory).
    struct red_cursor {
        long long idx[k_reduce_dims];
        long long off = 0;

        NU_DEVICE red_cursor(const reduce_params& p, long long k) {
#pragma unroll
            for (int d = k_reduce_dims - 1; d >= 0; --d) {
                idx[d] = 0;
                if (d >= p.red_ndim) continue;
                idx[d] = d > 0 ? k % p.red_shape[d] : k;
                off += idx[d] * p.red_strides[d];
                k = d > 0 ? k / p.red_shape[d] : 0;
            }
        }

        NU_DEVICE void next(const reduce_params& p) {
#pragma unroll
            for (int d = k_reduce_dims - 1; d >= 0; --d) {
                if (d >= p.red_ndim) continue;
                off += p.red_strides[d];
                if (++idx[d] < p.red_shape[d] || d == 0) return;
                off -= p.red_shape[d] * p.red_strides[d];
                idx[d] = 0;
            }
        }
    };

    static NU_DEVICE T load_at(const char* at) { return cast<T>(*reinterpret_cast<const In*>(at)); }

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
        if (begin >= end) return;
        if (CONTIG || p.red_ndim <= 1) {  // one stride: the common case, no index arithmetic
            const long long stride = CONTIG ? (long long)sizeof(In) : p.red_ndim ? p.red_strides[0] : 0;
            const char* at = row + begin * stride;
            long long k = begin;
            if (!has) {
                acc = load_at(at);
                has = true;
                at += stride;
                ++k;
            }
#pragma unroll 4
            for (; k < end; ++k, at += stride) acc = combine(acc, load_at(at));
            return;
        }
        red_cursor c(p, begin);
        for (long long k = begin; k < end; ++k, c.next(p)) {
            const T x = load_at(row + c.off);
            acc = has ? combine(acc, x) : x;
            has = true;
        }
    }

    // The result of row r from its p.chunks partials, laid out chunk-major (chunk c of
    // every row, then chunk c + 1), folded in chunk order.
    static NU_DEVICE void final_column(const reduce_params& p, long long r) {
        const T* parts = reinterpret_cast<const T*>(p.partials);
        T acc = parts[r];
        for (long long c = 1; c < p.chunks; ++c) acc = combine(acc, parts[c * p.rows + r]);
        finish(p, r, true, acc);
    }

    // [begin, end) of the folded range handled by chunk `c` (never empty: the engine
    // sizes chunks so).
    static NU_DEVICE void chunk_range(const reduce_params& p, long long c, long long* begin, long long* end) {
        *begin = c * p.chunk_len;
        *end = *begin + p.chunk_len < p.len ? *begin + p.chunk_len : p.len;
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

    // The device plan's chunks, each folded in order; partials in the device's layout.
    static void columns_tiled(const reduce_params& p) {
        for (long long c = 0; c < p.chunks; ++c) {
            long long begin, end;
            chunk_range(p, c, &begin, &end);
            for (long long r = 0; r < p.rows; ++r) {
                bool has = false;
                T acc{};
                fold_range<false>(p, p.in + row_offset(p, r, p.in_row_strides), begin, end, has, acc);
                if (p.chunks == 1) finish(p, r, has, acc);
                else reinterpret_cast<T*>(p.partials)[c * p.rows + r] = acc;
            }
        }
    }

    static void columns_final(const reduce_params& p) {
        for (long long r = 0; r < p.rows; ++r) final_column(p, r);
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

    // Lane l of every warp owns row tile * 32 + l; warp w folds slice w of the block's chunk
    // (blockIdx.y) of the folded range; warp 0 then combines the slices in warp order.
    static __device__ void columns_tiled(const reduce_params& p) {
        // Raw storage: T may have constructors, which __shared__ variables cannot run.
        __shared__ alignas(16) unsigned char part_bytes[k_reduce_warps * 32 * sizeof(T)];
        __shared__ bool part_has[k_reduce_warps][32];
        T* part = reinterpret_cast<T*>(part_bytes);
        const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
        const long long c = blockIdx.y;
        long long begin, end;
        chunk_range(p, c, &begin, &end);
        const long long per = (end - begin + k_reduce_warps - 1) / k_reduce_warps;
        const long long slice_begin = begin + warp * per;
        const long long slice_end = slice_begin + per < end ? slice_begin + per : end;
        const long long tiles = (p.rows + 31) / 32;
        for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
            const long long r = t * 32 + lane;
            bool has = false;
            T acc{};
            if (r < p.rows) {
                fold_range<false>(p, p.in + row_offset(p, r, p.in_row_strides), slice_begin, slice_end, has, acc);
            }
            part[warp * 32 + lane] = acc;
            part_has[warp][lane] = has;
            __syncthreads();
            if (warp == 0 && r < p.rows) {
                bool any = false;
                T total{};
                for (int w = 0; w < k_reduce_warps; ++w) {
                    if (!part_has[w][lane]) continue;
                    total = any ? combine(total, part[w * 32 + lane]) : part[w * 32 + lane];
                    any = true;
                }
                if (p.chunks == 1) finish(p, r, any, total);
                else reinterpret_cast<T*>(p.partials)[c * p.rows + r] = total;
            }
            __syncthreads();  // the slots are reused by the next tile
        }
    }

    static __device__ void columns_final(const reduce_params& p) {
        const long long step = (long long)gridDim.x * blockDim.x;
        for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += step) {
            final_column(p, r);
        }
    }
#endif
};

}  // namespace nu

// The kernels of one operator and type triple, with C linkage so their names are exactly
// `name` (nu_<pyname>_<typecodes>_<hash8>) plus _units_contig, _units_strided, _final,
// _columns, _columns_tiled, _columns_final: profilers show the user's function.
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
    NU_REDUCE_KERNEL(name, _columns, columns)                     \
    NU_REDUCE_KERNEL(name, _columns_tiled, columns_tiled)         \
    NU_REDUCE_KERNEL(name, _columns_final, columns_final)
