// src/kernels/nu_reductions.cuh: whole-array NumPy reductions in translated code
//
// np.sum(a), a.mean(), np.argmax(a)... on a nu::array of any ndim and layout, with the
// results NumPy computes on the host, bit for bit where NumPy's order of operations is
// fixed by the layout alone:
// * Sums use NumPy's pairwise summation (8 accumulators, blocks of 128, halves above)
//   over the elements in NumPy's K order (axes by decreasing |stride|, contiguous axes
//   merged). An array that merges into one strided run is summed in one piece, as NumPy
//   does; otherwise, and whenever NumPy casts (int -> float64 for mean, float16 ->
//   float32), NumPy sums through 8192-element buffers, and so do we. (NumPy's buffers
//   follow its iterator's own splitting for large non-contiguous arrays, so there the
//   last bits may differ.)
// * mean/var divide in double as NumPy does (its count is an intp scalar, which promotes
//   float32 to float64), then round to the result type.
// * min/max propagate the first NaN; nanmin/nanmax follow fmin/fmax; argmin/argmax give
//   the first index in C order (the first NaN if any), as NumPy's ravel-then-scan.
// * NumPy raises for min/max/argmin/argmax of an empty array; a kernel cannot raise, so
//   min/max return NaN (0 for integers, false for bool) and argmin/argmax return -1.
#pragma once

#include "nu_array.cuh"

// The reductions a kernel calls are out of line on the GPU: each (result, element, ndim)
// instantiation is compiled once however many call sites use it. Inlined, a kernel of 23
// reductions of one 2-d float64 array took NVRTC 9.6 s and ptxas 38 s on the 2-core
// development machine (and ran past the test timeout on an H100's host).
#ifdef NU_HOST_BUILD
#define NU_REDUCTION inline
#else
#define NU_REDUCTION __device__ __noinline__
#endif

namespace nu {
namespace red {

constexpr long long kBuffer = 8192;  // NumPy's default ufunc buffer size (elements)

// The elements of an array in NumPy's K order, merged into as few strided runs as the
// layout allows. flat(i) is the i-th element's address.
template <int N>
struct korder {
    char* data;
    int nd;
    long long size;
    long long shape[N > 0 ? N : 1];
    long long strides[N > 0 ? N : 1];

    NU_DEVICE bool single_run() const { return nd <= 1; }
    NU_DEVICE char* flat(long long i) const {
        if (nd == 1) return data + i * strides[0];
        long long off = 0;
        for (int d = nd - 1; d >= 0; --d) {
            const long long q = i / shape[d];
            off += (i - q * shape[d]) * strides[d];
            i = q;
        }
        return data + off;
    }
};

NU_DEVICE long long abs_ll(long long x) { return x < 0 ? -x : x; }

template <class T, int N>
NU_DEVICE korder<N> make_korder(const array<T, N>& a) {
    korder<N> k;
    k.data = a.data;
    k.size = a.size();
    int order[N > 0 ? N : 1];
    int m = 0;
    for (int d = 0; d < N; ++d)
        if (a.shape[d] != 1) order[m++] = d;
    for (int i = 1; i < m; ++i) {  // stable insertion sort by |stride|, largest first
        const int v = order[i];
        int j = i;
        while (j > 0 && abs_ll(a.strides[order[j - 1]]) < abs_ll(a.strides[v])) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = v;
    }
    int nd = 0;
    for (int i = 0; i < m; ++i) {
        const long long s = a.shape[order[i]], st = a.strides[order[i]];
        if (nd > 0 && k.strides[nd - 1] == st * s) {
            k.shape[nd - 1] *= s;
            k.strides[nd - 1] = st;
        } else {
            k.shape[nd] = s;
            k.strides[nd] = st;
            ++nd;
        }
    }
    k.nd = nd;
    return k;
}

// The i-th element in C order (argmin/argmax report C-order indices).
template <class T, int N>
NU_DEVICE const T& c_order(const array<T, N>& a, long long i) {
    long long off = 0;
    for (int d = N - 1; d >= 0; --d) {
        const long long q = i / a.shape[d];
        off += (i - q * a.shape[d]) * a.strides[d];
        i = q;
    }
    return *reinterpret_cast<const T*>(a.data + off);
}

template <class A>
NU_DEVICE A neg_zero() {
    if constexpr (is_float<A>) return -A(0);
    else if constexpr (is_complex<A>) return A{-typename A::value_type(0), -typename A::value_type(0)};
    else return A(0);
}

// NumPy's pairwise summation splits a range in two halves until a block is small, sums
// the blocks in 8 accumulators and adds the halves back up. The halving is walked here
// without recursion: a GPU thread's call stack is 1 KiB by default, and recursive frames
// (about 270 bytes each with their spills) overflowed it at 1000 elements (an illegal
// address on an H100). Each level keeps only its left half's sum and one bit (is the right
// half under way); a level's range is found again by replaying the splits from the top,
// which costs a few integer operations per block of 64+ elements. n halves at each level, so
// 64 levels cover any size. `split(n)` is the left half's size, or 0 for a block that `leaf`
// sums whole.
template <class A, class Leaf, class Split, class Combine>
NU_DEVICE A pairwise_walk(const long long lo0, const long long n0, const Leaf& leaf,
                          const Split& split, const Combine& combine) {
    A left[64];
    unsigned long long right = 0;  // bit d: level d's right half is under way
    int depth = 0;
    long long lo = lo0, n = n0;
    for (;;) {
        for (long long half = split(n); half != 0; half = split(n)) {
            right &= ~(1ull << depth++);
            n = half;
        }
        A sum = leaf(lo, n);
        for (;;) {
            if (depth == 0) return sum;
            --depth;
            if (right >> depth & 1) {
                sum = combine(left[depth], sum);
                continue;
            }
            left[depth] = sum;
            right |= 1ull << depth;
            lo = lo0;
            n = n0;
            for (int d = 0; d <= depth; ++d) {  // the range of level depth's right half
                const long long half = split(n);
                if (right >> d & 1) {
                    lo += half;
                    n -= half;
                } else {
                    n = half;
                }
            }
            ++depth;
            break;
        }
    }
}

// The real form: blocks of up to 128 elements; the halves split at a multiple of 8.
template <class A, class F>
NU_DEVICE A pairwise_real(const F& f, long long lo, long long n) {
    const auto leaf = [&](long long lo, long long n) {
        if (n < 8) {
            A r = neg_zero<A>();
            for (long long i = 0; i < n; ++i) r = add<A>(r, f(lo + i));
            return r;
        }
        A r[8];
        for (int j = 0; j < 8; ++j) r[j] = f(lo + j);
        long long i = 8;
        for (; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; ++j) r[j] = add<A>(r[j], f(lo + i + j));
        A res = add<A>(add<A>(add<A>(r[0], r[1]), add<A>(r[2], r[3])),
                       add<A>(add<A>(r[4], r[5]), add<A>(r[6], r[7])));
        for (; i < n; ++i) res = add<A>(res, f(lo + i));
        return res;
    };
    const auto split = [](long long n) -> long long {
        if (n <= 128) return 0;
        const long long n2 = n / 2;
        return n2 - n2 % 8;
    };
    return pairwise_walk<A>(lo, n, leaf, split, [](const A& a, const A& b) { return add<A>(a, b); });
}

// The complex form: NumPy counts the real and imaginary parts as 2n scalars, so blocks
// hold 4 complex numbers and the halves split at a multiple of 4 of them.
template <class A, class F>
NU_DEVICE A pairwise_complex(const F& f, long long lo, long long n) {
    using R = typename A::value_type;
    const auto leaf = [&](long long lo, long long n) {
        const long long ns = 2 * n;
        if (ns < 8) {
            A r = neg_zero<A>();
            for (long long i = 0; i < n; ++i) {
                const A v = f(lo + i);
                r.re += v.re;
                r.im += v.im;
            }
            return r;
        }
        R r[8];
        for (int j = 0; j < 4; ++j) {
            const A v = f(lo + j);
            r[2 * j] = v.re;
            r[2 * j + 1] = v.im;
        }
        long long i = 8;
        for (; i < ns - ns % 8; i += 8)
            for (int j = 0; j < 4; ++j) {
                const A v = f(lo + i / 2 + j);
                r[2 * j] += v.re;
                r[2 * j + 1] += v.im;
            }
        A res{(r[0] + r[2]) + (r[4] + r[6]), (r[1] + r[3]) + (r[5] + r[7])};
        for (; i < ns; i += 2) {
            const A v = f(lo + i / 2);
            res.re += v.re;
            res.im += v.im;
        }
        return res;
    };
    const auto split = [](long long n) -> long long {
        const long long ns = 2 * n;
        if (ns <= 128) return 0;
        const long long n2 = ns / 2;
        return (n2 - n2 % 8) / 2;
    };
    return pairwise_walk<A>(lo, n, leaf, split,
                            [](const A& a, const A& b) { return A{a.re + b.re, a.im + b.im}; });
}

template <class A, class F>
NU_DEVICE A pairwise(const F& f, long long lo, long long n) {
    if constexpr (is_complex<A>) return pairwise_complex<A>(f, lo, n);
    else return pairwise_real<A>(f, lo, n);
}

// Sum of f(i) over the K-order elements 0..size-1, from NumPy's identity 0, in one piece
// or through buffers (see the file comment).
template <class A, class F>
NU_DEVICE A sum_of(const F& f, long long size, bool buffered) {
    A acc = cast<A>(0);
    const long long step = buffered ? kBuffer : (size > 0 ? size : 1);
    for (long long lo = 0; lo < size; lo += step) {
        const long long n = size - lo < step ? size - lo : step;
        const A part = pairwise<A>(f, lo, n);
        if constexpr (is_complex<A>) acc = A{acc.re + part.re, acc.im + part.im};
        else acc = add<A>(acc, part);
    }
    return acc;
}

template <class T>
NU_DEVICE bool is_nan(const T& v) {
    if constexpr (is_float<T> || is_complex<T>) return isnan(v);
    else return false;
}

// ---- the reductions -------------------------------------------------------------------
// A is NumPy's accumulator/result type (int64/uint64 for small integers, float32 for
// float16 ...), W the type the elements are widened to first (the cast NumPy buffers).

// The pairwise sum of the elements cast to A, in K order, through buffers when the array
// is not one strided run or NumPy casts (`casts`). Shared, out of line, by sum, mean and
// var's first pass: one copy of the summation code per (A, T, N).
template <class A, class T, int N>
NU_REDUCTION A cast_sum(const array<T, N>& a, bool casts) {
    const korder<N> k = make_korder(a);
    auto f = [&](long long i) { return cast<A>(*reinterpret_cast<const T*>(k.flat(i))); };
    return sum_of<A>(f, k.size, !k.single_run() || casts);
}

// The sum of the elements with NaN -> 0: NumPy copies the array so (in K order,
// contiguous) and sums the copy in one piece, or through buffers when it casts. Shared by
// nansum, nanmean and nanvar's first pass.
template <class A, class T, int N>
NU_REDUCTION A nan_zero_sum(const array<T, N>& a, bool casts) {
    const korder<N> k = make_korder(a);
    auto f = [&](long long i) {
        const T v = *reinterpret_cast<const T*>(k.flat(i));
        return is_nan(v) ? cast<A>(0) : cast<A>(v);
    };
    return sum_of<A>(f, k.size, casts);
}

// Integer sums are exact in any order; only a float cast (float16) buffers.
template <class A, class T, int N>
NU_DEVICE A sum(const array<T, N>& a) {
    return cast_sum<A>(a, sizeof(A) != sizeof(T) && is_float<A>);
}

template <class A, class T, int N>
NU_DEVICE A nansum(const array<T, N>& a) {
    return nan_zero_sum<A>(a, sizeof(A) != sizeof(T) && is_float<A>);
}

template <class A, class T, int N>
NU_REDUCTION A prod(const array<T, N>& a, bool skip_nan = false) {
    const korder<N> k = make_korder(a);
    A acc = cast<A>(1);
    for (long long i = 0; i < k.size; ++i) {
        const T v = *reinterpret_cast<const T*>(k.flat(i));
        if (skip_nan && is_nan(v)) continue;
        acc = mul<A>(acc, cast<A>(v));
    }
    return acc;
}

// Division by the element count as NumPy does it: in double (complex128), then rounded.
template <class R, class A>
NU_DEVICE R divide_count(A s, long long n) {
    if constexpr (is_complex<A>) {
        // NumPy divides by the complex n + 0j (Smith's method: a reciprocal, then products).
        const double re = double(s.re), im = double(s.im);
        if (n == 0) return cast<R>(complex<double>{re / 0.0, im / 0.0});
        const double rat = 0.0, scl = 1.0 / double(n);
        return cast<R>(complex<double>{(re + im * rat) * scl, (im - re * rat) * scl});
    } else {
        return cast<R>(double(s) / double(n));
    }
}

// mean: A the sum's type (float64 for integers, float32 for float16), R the result's.
template <class R, class A, class T, int N>
NU_DEVICE R mean(const array<T, N>& a) {
    const bool casts = !(sizeof(A) == sizeof(T) && (is_float<T> || is_complex<T>));
    return divide_count<R>(cast_sum<A>(a, casts), a.size());
}

template <class T, int N>
NU_REDUCTION long long count_not_nan(const array<T, N>& a) {
    const korder<N> k = make_korder(a);
    long long count = 0;
    for (long long i = 0; i < k.size; ++i) count += !is_nan(*reinterpret_cast<const T*>(k.flat(i)));
    return count;
}

template <class R, class A, class T, int N>
NU_DEVICE R nanmean(const array<T, N>& a) {
    return divide_count<R>(nan_zero_sum<A>(a, sizeof(A) != sizeof(T)), count_not_nan(a));
}

// var (ddof 0): M the mean's and deviations' type (the array's, float64 for integers),
// R the result's (real). NumPy's temporary of squared deviations is contiguous in K order,
// so their sum is one pairwise piece.
template <class R, class M, class T, int N>
NU_REDUCTION R var(const array<T, N>& a, long long ddof = 0) {
    const korder<N> k = make_korder(a);
    auto f = [&](long long i) { return cast<M>(*reinterpret_cast<const T*>(k.flat(i))); };
    const bool casts = !(sizeof(M) == sizeof(T) && (is_float<T> || is_complex<T>));
    const M m = divide_count<M>(cast_sum<M>(a, casts), k.size);
    auto sq = [&](long long i) {
        const M d = f(i) - m;
        if constexpr (is_complex<M>) return R(d.re * d.re + d.im * d.im);
        else return R(d * d);
    };
    const R s = sum_of<R>(sq, k.size, false);
    const long long n = k.size - ddof > 0 ? k.size - ddof : 0;
    return divide_count<R>(s, n);
}

// nanvar (np.nanvar): the mean and the squared deviations of the elements that are not NaN
// (NumPy works on a contiguous K-order copy with NaN -> 0, so each sum is one piece); NaN
// when count - ddof <= 0.
template <class R, class M, class T, int N>
NU_REDUCTION R nanvar(const array<T, N>& a, long long ddof = 0) {
    const korder<N> k = make_korder(a);
    const long long count = count_not_nan(a);
    const M m = divide_count<M>(nan_zero_sum<M>(a, false), count);
    auto sq = [&](long long i) {
        const T v = *reinterpret_cast<const T*>(k.flat(i));
        if (is_nan(v)) return R(0);
        const M d = cast<M>(v) - m;
        if constexpr (is_complex<M>) return R(d.re * d.re + d.im * d.im);
        else return R(d * d);
    };
    const R s = sum_of<R>(sq, k.size, false);
    if (count - ddof <= 0) return R(nan64());
    return divide_count<R>(s, count - ddof);
}

// np.count_nonzero(a): NaN counts (it is not zero), -0.0 does not.
template <class T, int N>
NU_REDUCTION i64 count_nonzero(const array<T, N>& a) {
    const korder<N> k = make_korder(a);
    i64 n = 0;
    for (long long i = 0; i < k.size; ++i) n += truth(*reinterpret_cast<const T*>(k.flat(i)));
    return n;
}

// The element of rank `rank` (0-based) among those that are not NaN, with no scratch
// memory (a kernel cannot allocate): the one with fewer than rank + 1 smaller elements and
// more than rank smaller-or-equal ones. O(n^2) comparisons.
template <class T, int N>
NU_DEVICE T select_rank(const korder<N>& k, long long rank) {
    for (long long i = 0; i < k.size; ++i) {
        const T x = *reinterpret_cast<const T*>(k.flat(i));
        if (is_nan(x)) continue;
        long long less = 0, equal = 0;
        for (long long j = 0; j < k.size; ++j) {
            const T v = *reinterpret_cast<const T*>(k.flat(j));
            less += v < x;
            equal += v == x;
        }
        if (less <= rank && rank < less + equal) return x;
    }
    return T(0);  // not reached for 0 <= rank < the count of non-NaN elements
}

// np.median (skip_nan false: NaN when any element is NaN) and np.nanmedian: the middle
// element, or the mean of the two middle ones (A: NumPy's mean accumulator, float64 for
// integers); NaN for an empty array (NumPy warns and returns NaN).
template <class R, class A, class T, int N>
NU_REDUCTION R median(const array<T, N>& a, bool skip_nan) {
    const korder<N> k = make_korder(a);
    long long count = 0;
    for (long long i = 0; i < k.size; ++i) count += !is_nan(*reinterpret_cast<const T*>(k.flat(i)));
    if (count == 0 || (!skip_nan && count != k.size)) return R(nan64());
    const A lo = cast<A>(select_rank<T>(k, (count - 1) / 2));
    if (count % 2) return cast<R>(lo);
    const A hi = cast<A>(select_rank<T>(k, count / 2));
    return divide_count<R>(add<A>(lo, hi), 2);
}

template <class T>
NU_DEVICE T empty_extremum() {
    if constexpr (is_float<T>) return T(nan64());
    else if constexpr (is_complex<T>) return T{typename T::value_type(nan64()), typename T::value_type(nan64())};
    else return T(0);
}

// min (is_max false) / max of the elements; the first NaN wins, as np.minimum.reduce.
template <bool is_max, class T, int N>
NU_REDUCTION T extremum(const array<T, N>& a) {
    const korder<N> k = make_korder(a);
    if (k.size == 0) return empty_extremum<T>();
    T acc = *reinterpret_cast<const T*>(k.flat(0));
    for (long long i = 1; i < k.size; ++i) {
        if (is_nan(acc)) return acc;
        const T v = *reinterpret_cast<const T*>(k.flat(i));
        // NumPy keeps acc only when it is strictly better: a tie takes the later element.
        if (!(is_max ? acc > v : acc < v)) acc = v;
    }
    return acc;
}

// nanmin / nanmax: np.fmin / np.fmax reductions (NaN only when every element is NaN;
// a tie keeps the earlier element).
template <bool is_max, class T, int N>
NU_REDUCTION T nan_extremum(const array<T, N>& a) {
    const korder<N> k = make_korder(a);
    if (k.size == 0) return empty_extremum<T>();
    T acc = *reinterpret_cast<const T*>(k.flat(0));
    for (long long i = 1; i < k.size; ++i) {
        const T v = *reinterpret_cast<const T*>(k.flat(i));
        if (is_nan(v)) continue;
        if (is_nan(acc) || (is_max ? v > acc : v < acc)) acc = v;
    }
    return acc;
}

// argmin / argmax: the first C-order index of the extremum, or of the first NaN.
template <bool is_max, class T, int N>
NU_REDUCTION i64 arg_extremum(const array<T, N>& a) {
    const long long n = a.size();
    if (n == 0) return -1;
    T best = c_order(a, 0);
    if (is_nan(best)) return 0;
    i64 at = 0;
    for (long long i = 1; i < n; ++i) {
        const T v = c_order(a, i);
        if (is_nan(v)) return i;
        if (is_max ? v > best : v < best) {
            best = v;
            at = i;
        }
    }
    return at;
}

template <bool is_any, class T, int N>
NU_REDUCTION bool all_any(const array<T, N>& a) {
    const korder<N> k = make_korder(a);
    for (long long i = 0; i < k.size; ++i)
        if (truth(*reinterpret_cast<const T*>(k.flat(i))) == is_any) return is_any;
    return !is_any;
}

}  // namespace red
}  // namespace nu
