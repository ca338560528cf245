// src/kernels/reduce.cuh: reductions with a translated binary operator (own warp shuffles, one pass)
//
// The engine generates a short translation unit: this header, the translated __device__
// function, a functor calling it, an NU_REDUCE_ENTRY line and one NU_REDUCE_KERNEL line
// per kernel a plan needs (on the GPU each kernel is built only when a plan first needs
// it; the host backend builds all seven in one unit). A reduction is `rows` outputs, each
// folding `len` elements; a full reduction is one row. These kernels cover every layout:
//   units   a warp folds one contiguous chunk of a row (vector loads when the row is
//           contiguous and aligned); with one chunk per row it writes the result,
//           otherwise a partial per chunk. For a full reduction (one row) the kernel is
//           the whole reduction: the last block to finish (a counter and fences) folds
//           the partials in order (full_contig: the same, specialised for one
//           contiguous row). For several rows the partials are folded by
//   final   a block per row, on the device: no host round trip;
//   columns_tiled  reductions over outer axes (outputs adjacent in memory): a warp's lanes
//           own 32 adjacent outputs, so its loads coalesce; the block's warps split the
//           folded range into consecutive slices, and blockIdx.y splits it into chunks
//           when there are too few outputs to fill the device; chunk partials are folded
//           by
//   columns_final  a thread per output, chunks in order;
//   columns a thread folds a whole short row (many outputs, few elements each).
// Every fold keeps element order (lanes own consecutive items and the warp and block
// folds combine lanes in order), so any associative operator is valid, commutative or
// not. The host build (NU_HOST_BUILD) runs the same plan sequentially.
//
// The warp and block folds are our own, without CUB (whose headers cost about 0.9 s of
// NVRTC front end per process), and combine values in exactly the order of CUB's
// WarpReduce and BlockReduce, which these kernels used before, so results are bitwise
// the same: see reduce_order below. reduce_kernels::emulate_device runs the GPU's order
// lane by lane on the host, and tests/cxx/check_reduce_order.cpp checks it against a
// model of CUB's algorithms.
#pragma once

#include "nu_scalar.cuh"

namespace nu {

constexpr int k_reduce_dims = 8;     // coalesced dimensions per side; the engine checks
constexpr int k_reduce_warps = 8;    // warps per block (256 threads)
constexpr int k_reduce_threads = 32 * k_reduce_warps;

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
    // One pass: blocks of the units kernel that have finished (zero between launches: the
    // last block resets it). nullptr: a final kernel folds the partials.
    unsigned int* counter;
    long long row_ndim;
    long long red_ndim;
    long long row_shape[k_reduce_dims];
    long long in_row_strides[k_reduce_dims];   // bytes
    long long out_row_strides[k_reduce_dims];  // bytes
    long long red_shape[k_reduce_dims];
    long long red_strides[k_reduce_dims];      // bytes
};

// The order in which the warp and block folds combine values: the order of CUB's
// algorithms that these kernels used before (cub/warp/specializations/warp_reduce_shfl.cuh
// and cub/block/specializations/block_reduce_warp_reductions.cuh, BlockReduce's default
// algorithm), so that every result is bitwise what it was.
// * A warp fold (WarpReduceShfl::Reduce, full or with valid_items): log2(32) = 5 steps
//   with offsets 1, 2, 4, 8, 16; at each step lane i reads lane i + offset's value (a
//   shuffle down) and replaces its own with op(own, read) when i + offset <= last_lane =
//   valid - 1, else keeps it. Lane 0 ends with the fold; in effect a balanced tree over
//   lanes 0..valid-1 in lane order. The full-warp form is the same with valid = 32.
// * A block fold (BlockReduceWarpReductions::Reduce with num_valid): warp w folds its
//   lanes as above with valid = clamp(num_valid - 32 w, 0, 32); thread 0 then folds the
//   warp totals left to right, warp 0's first, taking warp w only when 32 w < num_valid.
// * The final fold of a row's partials (unchanged from the kernels with CUB): thread t
//   folds partials [t per, t per + per) left to right, per = ceil(chunks / 256), and the
//   block fold takes ceil(chunks / per) valid threads.
namespace reduce_order {

NU_DEVICE bool warp_step_takes(int lane, int offset, int valid) { return lane + offset <= valid - 1; }
NU_DEVICE int warp_valid(int warp, int valid) {
    const int v = valid - 32 * warp;
    return v < 0 ? 0 : v > 32 ? 32 : v;
}
NU_DEVICE bool warp_total_taken(int warp, int valid) { return 32 * warp < valid; }
NU_DEVICE long long partials_per_thread(long long chunks) {
    return (chunks + k_reduce_threads - 1) / k_reduce_threads;
}

}  // namespace reduce_order

#ifndef NU_HOST_BUILD
// Warp-level primitives as inline PTX rather than CUDA's intrinsics: those are declared
// by NVRTC's default headers, which builds with -minimal (src/compile/nvrtc.cpp) leave
// out; a failed -minimal attempt would cost a second NVRTC run.
namespace detail {

__device__ __forceinline__ unsigned shfl_down_word(unsigned v, int offset) {
    unsigned r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(offset));
    return r;
}

// Any T, 4-byte word by word (CUB's ShuffleDown moves a T the same way). Byte copies with
// constant bounds (memcpy is not declared under -minimal); they fold into register moves.
template <class T>
__device__ __forceinline__ T shfl_down(const T& v, int offset) {
    constexpr int words = int((sizeof(T) + 3) / 4);
    unsigned w[words];
    w[words - 1] = 0;
    const unsigned char* from = reinterpret_cast<const unsigned char*>(&v);
#pragma unroll
    for (int i = 0; i < int(sizeof(T)); ++i) reinterpret_cast<unsigned char*>(w)[i] = from[i];
#pragma unroll
    for (int i = 0; i < words; ++i) w[i] = shfl_down_word(w[i], offset);
    T out{};
    unsigned char* to = reinterpret_cast<unsigned char*>(&out);
#pragma unroll
    for (int i = 0; i < int(sizeof(T)); ++i) to[i] = reinterpret_cast<const unsigned char*>(w)[i];
    return out;
}

__device__ __forceinline__ unsigned atomic_add_gpu(unsigned* at, unsigned v) {
    unsigned old;
    asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(at), "r"(v) : "memory");
    return old;
}

// __threadfence(): orders this thread's writes before its later ones for the whole device.
__device__ __forceinline__ void fence_gpu() { asm volatile("membar.gl;" ::: "memory"); }

}  // namespace detail
#endif

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
    // launches an empty reduction without one. ONE_ROW: a full reduction, r is 0.
    template <bool ONE_ROW = false>
    static NU_DEVICE void finish(const reduce_params& p, long long r, bool has, const T& acc) {
        const T init = *reinterpret_cast<const T*>(p.init);
        const T v = !p.has_init ? acc : has ? combine(init, acc) : init;
        *reinterpret_cast<Out*>(p.out + (ONE_ROW ? 0 : row_offset(p, r, p.out_row_strides))) = cast<Out>(v);
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

    // Lanes of the warp tile at `base` that have items (a prefix: lane l owns
    // [base + l k_items, +k_items)); the warp fold's `valid`.
    static NU_DEVICE int tile_lanes(long long base, long long end) {
        const long long v = (end - base + k_items - 1) / k_items;
        return v >= 32 ? 32 : int(v);
    }

#ifdef NU_HOST_BUILD
    template <bool CONTIG, bool ONE_ROW = false>  // ONE_ROW: the device's specialization only
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

    // ---- The GPU's order, emulated lane by lane (the host backend keeps its own sequential
    // order above; tests/cxx/check_reduce_order.cpp runs this against a model of CUB's
    // algorithms). v: 32 lane values, overwritten.
    static T emulate_warp(T* v, int valid) {
        for (int offset = 1; offset < 32; offset *= 2) {
            // Ascending lanes: lane + offset still holds its value from the previous step,
            // as a shuffle reads it.
            for (int lane = 0; lane < 32; ++lane) {
                if (reduce_order::warp_step_takes(lane, offset, valid)) v[lane] = combine(v[lane], v[lane + offset]);
            }
        }
        return v[0];
    }

    // v: k_reduce_threads thread values, overwritten.
    static T emulate_block(T* v, int valid) {
        T total = emulate_warp(v, reduce_order::warp_valid(0, valid));
        for (int w = 1; w < k_reduce_warps; ++w) {
            const T t = emulate_warp(v + 32 * w, reduce_order::warp_valid(w, valid));
            if (reduce_order::warp_total_taken(w, valid)) total = combine(total, t);
        }
        return total;
    }

    // The units kernel's fold of a row's chunk [begin, end) by one warp, tile by tile.
    template <bool CONTIG>
    static T emulate_unit(const reduce_params& p, const char* row, long long begin, long long end, bool& has) {
        T acc{};
        has = false;
        for (long long base = begin; base < end; base += k_tile) {
            T lanes[32] = {};
            for (int lane = 0; lane < 32; ++lane) {
                const long long first = base + (long long)lane * k_items;
                bool lane_has = false;
                fold_range<CONTIG>(p, row, first, first + k_items < end ? first + k_items : end, lane_has, lanes[lane]);
            }
            const T t = emulate_warp(lanes, tile_lanes(base, end));
            acc = has ? combine(acc, t) : t;
            has = true;
        }
        return acc;
    }

    // The final fold of row r's partials by one block.
    static T emulate_final(const reduce_params& p, long long r) {
        const T* parts = reinterpret_cast<const T*>(p.partials) + r * p.chunks;
        const long long per = reduce_order::partials_per_thread(p.chunks);
        T threads[k_reduce_threads] = {};
        for (int t = 0; t < k_reduce_threads; ++t) {
            bool has = false;
            for (long long c = t * per; c < t * per + per && c < p.chunks; ++c) {
                threads[t] = has ? combine(threads[t], parts[c]) : parts[c];
                has = true;
            }
        }
        return emulate_block(threads, int((p.chunks + per - 1) / per));
    }

    // The GPU plan of the units kernel (and its final fold) with p's chunks.
    template <bool CONTIG>
    static void emulate_device(const reduce_params& p) {
        for (long long u = 0; u < p.rows * p.chunks; ++u) {
            const long long r = u / p.chunks, begin = (u % p.chunks) * p.chunk_len;
            const long long end = begin + p.chunk_len < p.len ? begin + p.chunk_len : p.len;
            bool has = false;
            const T acc = emulate_unit<CONTIG>(p, p.in + row_offset(p, r, p.in_row_strides), begin, end, has);
            if (p.chunks == 1) finish(p, r, has, acc);
            else reinterpret_cast<T*>(p.partials)[u] = acc;
        }
        if (p.chunks > 1) {
            for (long long r = 0; r < p.rows; ++r) finish(p, r, true, emulate_final(p, r));
        }
    }
#else
    // Lane `lane` of a warp at step `offset`: CUB's WarpReduceShfl::ReduceStep (see
    // reduce_order). Every lane of the warp calls it (the shuffle needs all 32).
    static __device__ T warp_fold(T v, int lane, int valid) {
#pragma unroll
        for (int offset = 1; offset < 32; offset *= 2) {
            const T other = detail::shfl_down(v, offset);
            if (reduce_order::warp_step_takes(lane, offset, valid)) v = combine(v, other);
        }
        return v;
    }

    // Thread 0 returns the fold of the block's first `valid` threads' values, in thread
    // order (CUB's BlockReduce, see reduce_order). Every thread of the block calls it.
    static __device__ T block_fold(T v, int valid) {
        // Raw storage: T may have constructors, which __shared__ variables cannot run.
        __shared__ alignas(16) unsigned char total_bytes[k_reduce_warps * sizeof(T)];
        T* totals = reinterpret_cast<T*>(total_bytes);
        const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
        T total = warp_fold(v, lane, reduce_order::warp_valid(warp, valid));
        if (lane == 0) totals[warp] = total;
        __syncthreads();
        if (threadIdx.x == 0) {
#pragma unroll
            for (int w = 1; w < k_reduce_warps; ++w)
                if (reduce_order::warp_total_taken(w, valid)) total = combine(total, totals[w]);
        }
        __syncthreads();  // the slots are reused by the next fold
        return total;
    }

    // One warp tile starting at `base`: lane l folds items [base + l*k_items, +k_items),
    // then the warp combines lanes in order. Lane 0 returns the tile's value.
    template <bool CONTIG>
    static __device__ T tile(const reduce_params& p, const char* row, long long base, long long end, int lane) {
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
        } else if (first < end) {
            fold_range<CONTIG>(p, row, first, first + k_items < end ? first + k_items : end, has, acc);
        }
        return warp_fold(acc, lane, tile_lanes(base, end));
    }

    // Rows first_row, first_row + step, ...: each row's partials folded by the block, the
    // result written by thread 0. Every thread of the block calls it.
    template <bool ONE_ROW = false>
    static __device__ void fold_partials(const reduce_params& p, long long first_row, long long step) {
        const long long per = reduce_order::partials_per_thread(p.chunks);
        const int valid = int((p.chunks + per - 1) / per);
        for (long long r = first_row; r < p.rows; r += step) {
            const T* parts = reinterpret_cast<const T*>(p.partials) + r * p.chunks;
            const long long first = (long long)threadIdx.x * per;
            bool has = false;
            T acc{};
            for (long long c = first; c < first + per && c < p.chunks; ++c) {
                acc = has ? combine(acc, parts[c]) : parts[c];
                has = true;
            }
            const T total = block_fold(acc, valid);
            if (threadIdx.x == 0) finish<ONE_ROW>(p, r, true, total);
        }
    }

    // ONE_ROW (full_contig): a full reduction, whose one row needs no 64-bit divisions to
    // place units and results: about a fifth less NVRTC time for a first call (measured
    // on the 2-core development machine), at the same registers (46, 5 blocks on sm_90).
    template <bool CONTIG, bool ONE_ROW = false>
    static __device__ void units(const reduce_params& p) {
        const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
        const long long total = p.rows * p.chunks;
        for (long long u = (long long)blockIdx.x * k_reduce_warps + warp; u < total;
             u += (long long)gridDim.x * k_reduce_warps) {
            const long long r = ONE_ROW ? 0 : u / p.chunks, begin = (ONE_ROW ? u : u % p.chunks) * p.chunk_len;
            const long long end = begin + p.chunk_len < p.len ? begin + p.chunk_len : p.len;
            const char* row = ONE_ROW ? p.in : p.in + row_offset(p, r, p.in_row_strides);
            bool has = false;
            T acc{};
            for (long long base = begin; base < end; base += k_tile) {
                const T t = tile<CONTIG>(p, row, base, end, lane);
                acc = has ? combine(acc, t) : t;
                has = true;
            }
            if (lane == 0) {
                if (p.chunks == 1) finish<ONE_ROW>(p, r, has, acc);
                else reinterpret_cast<T*>(p.partials)[u] = acc;  // chunks are never empty
            }
        }
        if (p.counter == nullptr) return;
        // One pass (the CUDA programming guide's threadfence reduction): each writer's
        // fence orders its partial before the block's count; the block that counts last
        // sees every partial after its own fence and folds them, as the final kernel would.
        __shared__ bool last_block;
        detail::fence_gpu();
        __syncthreads();
        if (threadIdx.x == 0) last_block = detail::atomic_add_gpu(p.counter, 1u) == gridDim.x - 1;
        __syncthreads();
        if (!last_block) return;
        detail::fence_gpu();
        fold_partials<ONE_ROW>(p, 0, 1);
        if (threadIdx.x == 0) *p.counter = 0u;  // every block has counted: ready for the next launch
    }

    static __device__ void final_pass(const reduce_params& p) { fold_partials(p, blockIdx.x, gridDim.x); }

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
// `name` (nu_<pyname>_<typecodes>_<hash8>) plus the suffix: _units_contig, _units_strided,
// _final, _columns, _columns_tiled, _columns_final, _full_contig: profilers show the
// user's function.
// NU_REDUCE_ENTRY names the instantiation; the engine adds the NU_REDUCE_KERNEL lines
// of the kernels it builds (src/launch/reduce_launch.cpp); the call may hold commas.
#ifdef NU_HOST_BUILD
#define NU_REDUCE_KERNEL(name, suffix, ...)                                                   \
    extern "C" __attribute__((visibility("default"))) void name##suffix(const void* p) {     \
        name##_impl::__VA_ARGS__(*static_cast<const nu::reduce_params*>(p));                 \
    }
#else
#define NU_REDUCE_KERNEL(name, suffix, ...)                                                 \
    extern "C" __global__ void __launch_bounds__(256) name##suffix(const nu::reduce_params p) { \
        name##_impl::__VA_ARGS__(p);                                                        \
    }
#endif
#define NU_REDUCE_ENTRY(name, ...) using name##_impl = __VA_ARGS__;
