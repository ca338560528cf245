// src/kernels/ufunc_methods.cuh: ufunc.accumulate, reduceat and at with a translated operator
//
// The engine generates a short translation unit: this header, the translated __device__
// function, a functor calling it, and one NU_METHODS_ENTRY line. The engine moves the
// method's axis last: a call is `rows` lines (up to 8 coalesced dimensions) of `len`
// elements each.
//   acc_rows    accumulate, a thread per line folding left to right (NumPy's order, so any
//               operator gives NumPy's result); for many lines or short ones;
//   acc_tiles   accumulate, device-wide: each line cut into tiles of k_scan_items elements,
//               a block per tile; cub::BlockScan scans a tile and the tiles of a line chain
//               their totals with CUB's decoupled look-back (cub::ScanTileState and
//               cub::TilePrefixCallbackOp, the single-pass scan of cub::DeviceScan), so one
//               long line fills the whole GPU and is read and written once. Needs an
//               associative operator (the scan regroups it); acc_tiles_init resets the
//               tile states first;
//   reduceat    a thread per (line, segment) folding the segment left to right;
//   at_check    ufunc.at with element numbers on the device: an update whose index is out
//               of bounds (the host build: the first), before any update is applied;
//   at_seq      ufunc.at, one thread applying the updates in index order (any operator);
//   at_cas      ufunc.at, a thread per update: one native atomic where the operator and
//               type have one (at_atomic), else a compare-and-swap loop over the
//               operator (1-, 2-, 4- and 8-byte types, the small ones through their
//               4-byte word; the updates of one element apply once each, in an
//               unspecified order: commutative and associative operators).
// The host build (NU_HOST_BUILD) runs every entry point sequentially, in NumPy's order.
#pragma once

#include "nu_scalar.cuh"

#ifndef NU_HOST_BUILD
#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_scan.cuh>
#endif

namespace nu {

constexpr int k_methods_dims = 8;     // coalesced line dimensions; the engine checks
constexpr int k_methods_block = 256;  // threads per block
// Elements per thread of acc_tiles: a tile is k_methods_block times this many.
template <class T>
constexpr int k_scan_items = sizeof(T) <= 4 ? 8 : sizeof(T) <= 8 ? 6 : 3;

// Kernel parameters are 8-byte words only: see src/dispatch/ufunc_methods.cpp.
struct methods_params {
    long long rows;              // lines
    long long len;               // elements per input line
    long long count;             // reduceat: segments per line; at: updates
    char* in;                    // accumulate/reduceat input; at: the target array
    char* out;                   // accumulate/reduceat output
    const long long* indices;    // reduceat: segment starts; at: see at_index_bytes
    const char* values;          // at: update values of type T, at_value_stride apart
    long long in_axis_stride;    // bytes
    long long out_axis_stride;   // bytes
    long long row_ndim;
    long long row_shape[k_methods_dims];
    long long in_row_strides[k_methods_dims];   // bytes
    long long out_row_strides[k_methods_dims];  // bytes
    char* scan_state;            // acc_tiles: cub::ScanTileState storage
    long long scan_state_bytes;
    long long line_tiles;        // acc_tiles: tiles per line
    // ufunc.at: 0: `indices` are byte offsets into `in` (made on the host); 4 or 8: int32 or
    // int64 element numbers of a 1-d target of at_len elements at_stride bytes apart,
    // negative ones counted from the end (at_check has found them all in bounds).
    long long at_index_bytes;
    long long at_len;
    long long at_stride;
    long long at_value_stride;   // bytes: the type's size, or 0 for one value for all
    unsigned long long* at_bad;  // at_check: an update number out of bounds (or ~0 as set)
    // at: with `values` null, the one value for all, its bytes here (a host scalar needs
    // no device copy per call).
    long long at_scalar[2];
};

// ufunc.at operators with a native atomic, as the front end recognises the user's function
// (numbacuda_ufunc/_methods.py): `a + b`, min(a, b), max(a, b), `a & b`, `a | b`, `a ^ b`.
enum at_operator : int { at_op_none = 0, at_op_add, at_op_min, at_op_max, at_op_and, at_op_or, at_op_xor };

#ifndef NU_HOST_BUILD
// at_atomic<Op, T>::value: whether updates of T by operator Op are one native atomic, and
// apply() that atomic (its result unused, so ptxas emits RED). 4- and 8-byte integers for
// all six operators; float64 add (atom.add.f64 rounds to nearest, subnormals kept); float32
// add only when NativeF32: atom.add.f32 flushes subnormal inputs and results to zero (PTX
// ISA; sm_90 SASS `REDG.E.ADD.F32.FTZ.RN`), so by default float32 keeps the exact CAS loop.
template <int Op, class T, bool NativeF32>
struct at_atomic {
    static constexpr bool value = false;
    static __device__ void apply(T*, T) {}
};
template <int Op, class Word, class Stored>
struct at_atomic_int {
    static constexpr bool value = Op != at_op_none;
    static __device__ void apply(Stored* target, Stored v) {
        Word* w = reinterpret_cast<Word*>(target);
        const Word x = (Word)v;
        if constexpr (Op == at_op_add) atomicAdd(w, x);
        else if constexpr (Op == at_op_and) atomicAnd(w, x);
        else if constexpr (Op == at_op_or) atomicOr(w, x);
        else if constexpr (Op == at_op_xor) atomicXor(w, x);
        // min and max compare as the stored type: signed 64-bit through long long.
        else if constexpr (Op == at_op_min) atomicMin(reinterpret_cast<Stored*>(w), v);
        else if constexpr (Op == at_op_max) atomicMax(reinterpret_cast<Stored*>(w), v);
    }
};
template <int Op, bool F>
struct at_atomic<Op, int, F> : at_atomic_int<Op, int, int> {};
template <int Op, bool F>
struct at_atomic<Op, unsigned int, F> : at_atomic_int<Op, unsigned int, unsigned int> {};
template <int Op, bool F>
struct at_atomic<Op, long long, F> : at_atomic_int<Op, unsigned long long, long long> {};
template <int Op, bool F>
struct at_atomic<Op, unsigned long long, F> : at_atomic_int<Op, unsigned long long, unsigned long long> {};
#if __CUDA_ARCH__ >= 600 || !defined(__CUDA_ARCH__)
template <bool F>
struct at_atomic<at_op_add, double, F> {
    static constexpr bool value = true;
    static __device__ void apply(double* target, double v) { atomicAdd(target, v); }
};
#endif
template <>
struct at_atomic<at_op_add, float, true> {
    static constexpr bool value = true;
    static __device__ void apply(float* target, float v) { atomicAdd(target, v); }
};
#endif

// Op: functor calling the translated function. T: the operator's type; In: the input's
// element type (converted on load); Out: the output's (converted on store). AtOp: the
// operator's at_operator; NativeF32: float32 add.at through the hardware's (FTZ) atomic.
template <class Op, class T, class In, class Out, int AtOp = at_op_none, bool NativeF32 = false>
struct methods_kernels {
    static NU_DEVICE T combine(const T& a, const T& b) { return cast<T>(Op{}(a, b)); }

    static NU_DEVICE long long row_offset(const methods_params& p, long long r, const long long* strides) {
        long long off = 0;
        for (int d = int(p.row_ndim) - 1; d >= 0 && r > 0; --d) {
            off += (r % p.row_shape[d]) * strides[d];
            r /= p.row_shape[d];
        }
        return off;
    }
    static NU_DEVICE T load(const methods_params& p, const char* line, long long k) {
        return cast<T>(*reinterpret_cast<const In*>(line + k * p.in_axis_stride));
    }
    static NU_DEVICE void store(const methods_params& p, char* line, long long k, const T& v) {
        *reinterpret_cast<Out*>(line + k * p.out_axis_stride) = cast<Out>(v);
    }

    static NU_DEVICE void accumulate_line(const methods_params& p, long long r) {
        const char* in = p.in + row_offset(p, r, p.in_row_strides);
        char* out = p.out + row_offset(p, r, p.out_row_strides);
        T acc = load(p, in, 0);
        store(p, out, 0, acc);
        for (long long k = 1; k < p.len; ++k) {
            acc = combine(acc, load(p, in, k));
            store(p, out, k, acc);
        }
    }

    // Segment s of line r: [start, next start) folded left to right, or the element at
    // start alone when the next start is not larger (NumPy's reduceat rule).
    static NU_DEVICE void reduceat_segment(const methods_params& p, long long r, long long s) {
        const char* in = p.in + row_offset(p, r, p.in_row_strides);
        char* out = p.out + row_offset(p, r, p.out_row_strides);
        const long long begin = p.indices[s];
        const long long next = s + 1 < p.count ? p.indices[s + 1] : p.len;  // the last runs to the end
        const long long end = next > begin ? next : begin + 1;
        T acc = load(p, in, begin);
        for (long long k = begin + 1; k < end; ++k) acc = combine(acc, load(p, in, k));
        store(p, out, s, acc);
    }

    static NU_DEVICE long long at_number(const methods_params& p, long long i) {
        return p.at_index_bytes == 4 ? (long long)reinterpret_cast<const int*>(p.indices)[i] : p.indices[i];
    }
    static NU_DEVICE bool at_out_of_bounds(const methods_params& p, long long i) {
        const long long k = at_number(p, i);
        return k < -p.at_len || k >= p.at_len;
    }
    static NU_DEVICE long long at_offset(const methods_params& p, long long i) {
        if (p.at_index_bytes == 0) return p.indices[i];
        const long long k = at_number(p, i);
        return (k < 0 ? k + p.at_len : k) * p.at_stride;
    }
    static NU_DEVICE T at_value(const methods_params& p, long long i) {
        if (p.values == nullptr) {
            static_assert(sizeof(T) <= sizeof(p.at_scalar), "at_scalar holds the largest loop type");
            T v;
            memcpy(&v, p.at_scalar, sizeof(T));
            return v;
        }
        return *reinterpret_cast<const T*>(p.values + i * p.at_value_stride);
    }

    static NU_DEVICE void at_update(const methods_params& p, long long i) {
        Out* target = reinterpret_cast<Out*>(p.in + at_offset(p, i));
        *target = cast<Out>(combine(cast<T>(*target), at_value(p, i)));
    }

#ifdef NU_HOST_BUILD
    static void acc_rows(const methods_params& p) {
        for (long long r = 0; r < p.rows; ++r) accumulate_line(p, r);
    }
    static void acc_tiles_init(const methods_params&) {}
    static void acc_tiles(const methods_params& p) { acc_rows(p); }
    static void reduceat(const methods_params& p) {
        for (long long r = 0; r < p.rows; ++r)
            for (long long s = 0; s < p.count; ++s) reduceat_segment(p, r, s);
    }
    static void at_check(const methods_params& p) {
        for (long long i = 0; i < p.count; ++i) {
            if (at_out_of_bounds(p, i)) {
                *p.at_bad = (unsigned long long)i;
                return;
            }
        }
    }
    static void at_seq(const methods_params& p) {
        for (long long i = 0; i < p.count; ++i) at_update(p, i);
    }
    static void at_cas(const methods_params& p) { at_seq(p); }
#else
    static __device__ void acc_rows(const methods_params& p) {
        const long long step = (long long)gridDim.x * blockDim.x;
        for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += step) {
            accumulate_line(p, r);
        }
    }

    // acc_tiles: tile `tile` of the grid is tile tile % line_tiles of line tile / line_tiles.
    // Tiles are blockIdx.x, as in cub::DeviceScan: blocks start in index order, so the tiles
    // a block looks back on are running or done. The first tile of each line publishes its
    // total as an inclusive prefix at once, which ends every look-back at its own line.
    static constexpr int items = k_scan_items<T>;
    static constexpr long long tile_elems = (long long)k_methods_block * items;
    using tile_state = cub::ScanTileState<T>;
    struct combiner {
        __device__ T operator()(const T& a, const T& b) const { return combine(a, b); }
    };
    using prefix_op = cub::TilePrefixCallbackOp<T, combiner, tile_state>;
    using block_scan = cub::BlockScan<T, k_methods_block, cub::BLOCK_SCAN_WARP_SCANS>;
    using block_exchange = cub::BlockExchange<T, k_methods_block, items>;

    static __device__ tile_state tile_states(const methods_params& p) {
        tile_state state;
        state.Init(int(p.rows * p.line_tiles), p.scan_state, size_t(p.scan_state_bytes));
        return state;
    }

    static __device__ void acc_tiles_init(const methods_params& p) {
        tile_states(p).InitializeStatus(int(p.rows * p.line_tiles));
    }

    static __device__ void acc_tiles(const methods_params& p) {
        __shared__ union {
            typename block_scan::TempStorage scan;
            typename block_exchange::TempStorage exchange;
        } temp;
        __shared__ typename prefix_op::TempStorage prefix_temp;
        const int tile = int(blockIdx.x);
        const long long r = tile / p.line_tiles, first = (tile % p.line_tiles) * tile_elems;
        const char* in = p.in + row_offset(p, r, p.in_row_strides);
        char* out = p.out + row_offset(p, r, p.out_row_strides);
        const long long valid = p.len - first < tile_elems ? p.len - first : tile_elems;
        // Striped loads (coalesced along a contiguous line), then blocked for the scan.
        // Slots past the end hold a copy of the last element: an inclusive scan's value at k
        // depends only on elements 0..k, so they change nothing stored.
        T x[items];
        for (int j = 0; j < items; ++j) {
            const long long k = (long long)j * k_methods_block + threadIdx.x;
            x[j] = load(p, in, first + (k < valid ? k : valid - 1));
        }
        block_exchange(temp.exchange).StripedToBlocked(x);
        __syncthreads();
        tile_state state = tile_states(p);
        if (tile % p.line_tiles == 0) {
            T total;
            block_scan(temp.scan).InclusiveScan(x, x, combiner{}, total);
            if (threadIdx.x == 0 && p.line_tiles > 1) state.SetInclusive(tile, total);
        } else {
            prefix_op prefix(state, prefix_temp, combiner{}, tile);
            block_scan(temp.scan).InclusiveScan(x, x, combiner{}, prefix);
        }
        __syncthreads();
        block_exchange(temp.exchange).BlockedToStriped(x);
        for (int j = 0; j < items; ++j) {
            const long long k = (long long)j * k_methods_block + threadIdx.x;
            if (k < valid) store(p, out, first + k, x[j]);
        }
    }

    static __device__ void reduceat(const methods_params& p) {
        const long long total = p.rows * p.count;
        const long long step = (long long)gridDim.x * blockDim.x;
        for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < total; u += step) {
            reduceat_segment(p, u / p.count, u % p.count);
        }
    }

    static __device__ void at_check(const methods_params& p) {
        const long long step = (long long)gridDim.x * blockDim.x;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += step) {
            // A plain store of any bad update's number: at_bad is mapped host memory, where
            // atomics need host-native atomic support that PCIe links may lack. The host
            // finds the first bad one itself (an error path) below this number.
            if (at_out_of_bounds(p, i)) *(volatile unsigned long long*)p.at_bad = (unsigned long long)i;
        }
    }

    static __device__ void at_seq(const methods_params& p) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            for (long long i = 0; i < p.count; ++i) at_update(p, i);
        }
    }

    template <class Bits>
    static __device__ void at_cas_one(const methods_params& p, long long i) {
        Bits* target = reinterpret_cast<Bits*>(p.in + at_offset(p, i));
        const T value = at_value(p, i);
        // The first guess from L2 (ld.global.cg), where atomics resolve: an L1 line may
        // hold a stale copy, which costs a failed CAS round trip.
        Bits seen = __ldcg(target), assumed;
        do {
            assumed = seen;
            T current;
            memcpy(&current, &assumed, sizeof(T));
            const T updated = combine(current, value);
            Bits bits;
            memcpy(&bits, &updated, sizeof(T));
            seen = atomicCAS(target, assumed, bits);
        } while (seen != assumed);
    }

    // 1- and 2-byte elements: a compare-and-swap of the aligned 4-byte word holding the
    // element, leaving its other bytes as they are (device allocations are 256-byte aligned,
    // so the word never leaves the allocation's granule).
    static __device__ void at_cas_subword(const methods_params& p, long long i) {
        char* element = p.in + at_offset(p, i);
        const unsigned long long address = reinterpret_cast<unsigned long long>(element);
        unsigned int* word = reinterpret_cast<unsigned int*>(address & ~3ull);
        const unsigned int shift = unsigned(address & 3ull) * 8u;
        const unsigned int mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
        const T value = at_value(p, i);
        unsigned int seen = __ldcg(word), assumed;  // from L2, as in at_cas_one
        do {
            assumed = seen;
            const unsigned int old_bits = (assumed & mask) >> shift;
            T current;
            memcpy(&current, &old_bits, sizeof(T));  // little-endian: the low bytes
            const T updated = combine(current, value);
            unsigned int new_bits = 0;
            memcpy(&new_bits, &updated, sizeof(T));
            seen = atomicCAS(word, assumed, (assumed & ~mask) | ((new_bits << shift) & mask));
        } while (seen != assumed);
    }

    static __device__ void at_cas(const methods_params& p) {
        const long long step = (long long)gridDim.x * blockDim.x;
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < p.count; i += step) {
            if constexpr (at_atomic<AtOp, T, NativeF32>::value) {
                at_atomic<AtOp, T, NativeF32>::apply(reinterpret_cast<T*>(p.in + at_offset(p, i)), at_value(p, i));
            } else if constexpr (sizeof(T) == 8) {
                at_cas_one<unsigned long long>(p, i);
            } else if constexpr (sizeof(T) == 4) {
                at_cas_one<unsigned int>(p, i);
            } else if constexpr (sizeof(T) <= 2) {
                at_cas_subword(p, i);
            } else if (i == 0) {
                for (long long j = 0; j < p.count; ++j) at_update(p, j);  // the engine avoids this
            }
        }
    }
#endif
};

}  // namespace nu

// The kernels of one operator and type triple, with C linkage so their names are exactly
// `name` plus _acc_rows, _acc_tiles_init, _acc_tiles, _reduceat, _at_check, _at_seq, _at_cas.
#ifdef NU_HOST_BUILD
#define NU_METHODS_KERNEL(name, suffix, call)                                                 \
    extern "C" __attribute__((visibility("default"))) void name##suffix(const void* p) {     \
        name##_impl::call(*static_cast<const nu::methods_params*>(p));                       \
    }
#else
#define NU_METHODS_KERNEL(name, suffix, call)                                                        \
    extern "C" __global__ void __launch_bounds__(256) name##suffix(const nu::methods_params p) { \
        name##_impl::call(p);                                                                        \
    }
#endif
#define NU_METHODS_ENTRY(name, ...)                   \
    using name##_impl = __VA_ARGS__;                  \
    NU_METHODS_KERNEL(name, _acc_rows, acc_rows)      \
    NU_METHODS_KERNEL(name, _acc_tiles_init, acc_tiles_init) \
    NU_METHODS_KERNEL(name, _acc_tiles, acc_tiles)    \
    NU_METHODS_KERNEL(name, _reduceat, reduceat)      \
    NU_METHODS_KERNEL(name, _at_check, at_check)      \
    NU_METHODS_KERNEL(name, _at_seq, at_seq)          \
    NU_METHODS_KERNEL(name, _at_cas, at_cas)
