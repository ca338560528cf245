// tests/cxx/check_reduce_order.cpp: the GPU's reduction order is CUB's, bit for bit
//
// src/kernels/reduce.cuh folds values with its own warp shuffles and block fold, in place
// of CUB's WarpReduce and BlockReduce, and folds a full reduction's partials in the last
// block of one kernel instead of a second kernel. reduce_kernels::emulate_device runs that
// plan lane by lane on the host, through the same order predicates the device code uses
// (reduce_order). This program checks it against an independent model of the kernels as
// they were with CUB, written after CUB's sources (WarpReduceShfl: shuffle-down steps of
// 1, 2, 4, 8, 16 with last_lane = valid - 1, every lane updated at once; BlockReduce's
// default BLOCK_REDUCE_WARP_REDUCTIONS: warp folds, then thread 0 folds the warp totals
// in warp order, FULL_TILE when num_valid >= 256). Float32 and float64 sums of awkward
// sizes and an order-sensitive integer operator must give identical bits for every
// chunking the launcher can choose. Built and run by tests/test_reduce_order.py.
#include "host_prelude.h"
#include "reduce.cuh"

#include <stdio.h>

namespace {

struct sum_op {
    template <class A>
    A operator()(A a, A b) const { return a + b; }
};

// Neither commutative nor associative (a polynomial hash, wrapping): any change of the
// combination tree or of operand order changes the result.
struct hash_op {
    unsigned long long operator()(unsigned long long a, unsigned long long b) const {
        return a * 1000003ull + b;
    }
};

// ---- The model: the kernels as they were with CUB (one row, contiguous input).
template <class T, class Op>
T cub_warp_reduce(const T* in, int valid, bool all_lanes_valid) {
    T v[32];
    for (int l = 0; l < 32; ++l) v[l] = in[l];
    const int last_lane = all_lanes_valid ? 31 : valid - 1;
    for (int step = 0; step < 5; ++step) {
        const int offset = 1 << step;
        T next[32];
        for (int l = 0; l < 32; ++l) {
            const T shuffled = l + offset <= 31 ? v[l + offset] : v[l];  // a shuffle reads at once
            next[l] = offset + l <= last_lane ? T(Op{}(v[l], shuffled)) : v[l];
        }
        for (int l = 0; l < 32; ++l) v[l] = next[l];
    }
    return v[0];
}

template <class T, class Op>
T cub_block_reduce(const T* in, int num_valid) {
    const bool full_tile = num_valid >= 256;
    T aggregates[8];
    for (int w = 0; w < 8; ++w) {
        const int warp_offset = 32 * w;
        const int warp_num_valid = (full_tile || warp_offset + 32 <= num_valid) ? 32 : num_valid - warp_offset;
        aggregates[w] = cub_warp_reduce<T, Op>(in + warp_offset, warp_num_valid, full_tile);
    }
    T total = aggregates[0];
    for (int w = 1; w < 8; ++w)
        if (full_tile || w * 32 < num_valid) total = T(Op{}(total, aggregates[w]));
    return total;
}

// units (a warp per chunk, lanes own k_items consecutive items, CUB's warp reduce per
// tile, tiles folded in order) and final_pass (threads fold consecutive partials, then
// CUB's block reduce).
template <class T, class Op>
T cub_plan(const T* x, long long n, long long chunks, long long chunk_len, int items) {
    const long long tile = 32LL * items;
    T* partials = new T[chunks];
    for (long long c = 0; c < chunks; ++c) {
        const long long begin = c * chunk_len, end = begin + chunk_len < n ? begin + chunk_len : n;
        bool has = false;
        T acc{};
        for (long long base = begin; base < end; base += tile) {
            T lanes[32] = {};
            for (int l = 0; l < 32; ++l) {
                const long long first = base + (long long)l * items;
                for (long long i = first; i < first + items && i < end; ++i)
                    lanes[l] = i == first ? x[i] : T(Op{}(lanes[l], x[i]));
            }
            const long long valid = (end - base + items - 1) / items;
            const T t = cub_warp_reduce<T, Op>(lanes, valid >= 32 ? 32 : int(valid), valid >= 32);
            acc = has ? T(Op{}(acc, t)) : t;
            has = true;
        }
        partials[c] = acc;
    }
    T result = partials[0];
    if (chunks > 1) {
        const long long per = (chunks + 255) / 256;
        T threads[256] = {};
        for (int t = 0; t < 256; ++t)
            for (long long c = t * per; c < t * per + per && c < chunks; ++c)
                threads[t] = c == t * per ? partials[c] : T(Op{}(threads[t], partials[c]));
        result = cub_block_reduce<T, Op>(threads, int((chunks + per - 1) / per));
    }
    delete[] partials;
    return result;
}

// ---- The kernels' own emulation, through reduce_params as the launcher packs them.
template <class T, class Op>
T ours(T* x, long long n, long long chunks, long long chunk_len) {
    using kernels = nu::reduce_kernels<Op, T, T, T>;
    nu::reduce_params p{};
    T result{};
    T* partials = new T[chunks];
    p.rows = 1;
    p.len = n;
    p.chunks = chunks;
    p.chunk_len = chunk_len;
    p.aligned = 1;
    p.in = reinterpret_cast<char*>(x);
    p.out = reinterpret_cast<char*>(&result);
    p.partials = reinterpret_cast<char*>(partials);
    p.red_ndim = 1;
    p.red_shape[0] = n;
    p.red_strides[0] = sizeof(T);
    kernels::template emulate_device<true>(p);
    delete[] partials;
    return result;
}

template <class T>
bool same_bits(T a, T b) { return memcmp(&a, &b, sizeof(T)) == 0; }

unsigned long long g_state = 0x9E3779B97F4A7C15ull;
unsigned long long next_random() {  // splitmix64: deterministic, no library state
    unsigned long long z = (g_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Floats in [-4096, 4096) with 40 fraction bits (sums round at every step); integers raw.
template <class T>
T sample(unsigned long long r) { return T((double)(long long)(r >> 11) / (double)(1LL << 40) - 4096.0); }
template <>
unsigned long long sample(unsigned long long r) { return r; }

template <class T, class Op>
int check(const char* what, int items) {
    // Sizes around warp tiles (32 * items), block widths and the partials' thread split.
    const long long sizes[] = {1, 2, 3, 31, 33, 127, 511, 513, 1000, 4097, 12345, 65537, 1000003, 3 << 20};
    const long long unit_counts[] = {1, 2, 7, 8, 31, 256, 257, 528, 1056, 4224, 8448};
    int failures = 0;
    for (long long n : sizes) {
        T* x = new T[n];
        for (long long i = 0; i < n; ++i) {
            x[i] = sample<T>(next_random());
        }
        const long long tile = 32LL * items;
        const long long tiles = (n + tile - 1) / tile;
        for (long long target : unit_counts) {
            // The launcher's split of one row (src/launch/reduce_launch.cpp).
            long long chunks = tiles < target ? tiles : target;
            const long long chunk_len = ((tiles + chunks - 1) / chunks) * tile;
            chunks = (n + chunk_len - 1) / chunk_len;
            const T want = cub_plan<T, Op>(x, n, chunks, chunk_len, items);
            const T got = ours<T, Op>(x, n, chunks, chunk_len);
            if (!same_bits(want, got)) {
                printf("%s: n=%lld chunks=%lld: ours differs from CUB's order\n", what, n, chunks);
                ++failures;
            }
        }
        delete[] x;
    }
    printf("%s: %s\n", what, failures ? "FAILED" : "ok");
    return failures;
}

}  // namespace

int main() {
    int failures = 0;
    failures += check<float, sum_op>("float32 sum", 16);  // k_items: four 16-byte vectors
    failures += check<double, sum_op>("float64 sum", 8);
    failures += check<unsigned long long, hash_op>("uint64 order-sensitive", 8);
    return failures ? 1 : 0;
}
