// src/kernels/nu_array.cuh: array views handed to translated gufunc (and kernel) functions
//
// The contract between the translator and the gufunc kernel: an array argument of a
// translated function is a `nu::array<T, N>` passed by value. Strides are in bytes and
// may be negative or zero (broadcast), so views of any NumPy layout are read in place.
// Indexing follows Python: a negative index counts from the end of its dimension.
//
// With NU_BOUNDSCHECK defined (host kernel builds, and @cuda.jit(debug=True) on the device)
// every index is checked after the wrap; a violation is reported to the kernel runtime
// (kernel.cuh) and the access goes to a scratch element instead, so the kernel runs on
// without corrupting memory and the launch reports the first violation. Without it the
// code is exactly the unchecked one: elementwise and gufunc loops pay nothing.
#pragma once

#include "nu_scalar.cuh"

#ifdef NU_BOUNDSCHECK
// Cold and out of line, so the check costs one compare and branch in the indexing path.
#ifdef NU_HOST_BUILD
#define NU_COLD static __attribute__((noinline, cold))
#else
#define NU_COLD static __device__ __noinline__
#endif

namespace nu {
namespace kern {
// Defined in kernel.cuh (included at the end of this file): records the first violation.
NU_COLD void report_out_of_bounds(long long index, int axis, long long size);
#ifdef NU_HOST_BUILD
// Defined in kernel.cuh: ends the emulated thread once a recursion has used its stack.
[[maybe_unused]] NU_COLD void check_recursion(const char* function);
#endif
}  // namespace kern

namespace detail {
// Internal linkage: each kernel module keeps its own (g++ gives an inline variable
// STB_GNU_UNIQUE binding, which would keep dlclose from unloading the module).
#ifdef NU_HOST_BUILD
alignas(16) static thread_local unsigned char g_out_of_bounds_sink[4096];
#else
static __device__ __align__(16) unsigned char g_out_of_bounds_sink[4096];
#endif

// The element an out-of-bounds access reads and writes instead: zeroed, so a read gives 0.
// 4 KiB: the widest element is a record (the translator refuses larger record dtypes).
// Several threads may share it on the GPU; its value is never used for anything else.
template <class T>
NU_COLD T& out_of_bounds(long long index, int axis, long long size) {
    static_assert(sizeof(T) <= sizeof(g_out_of_bounds_sink), "nu::array: element wider than sink");
    kern::report_out_of_bounds(index, axis, size);
    for (unsigned k = 0; k < sizeof(T); ++k) g_out_of_bounds_sink[k] = 0;
    return *reinterpret_cast<T*>(g_out_of_bounds_sink);
}
}  // namespace detail
}  // namespace nu
#endif

namespace nu {

template <class T, int N>
struct array {
    static constexpr int ndim = N;
    char* data;
    long long shape[N > 0 ? N : 1];
    long long strides[N > 0 ? N : 1];

    // a(i, j, ...) with exactly N indices: the element, by reference.
    template <class... I>
    NU_DEVICE T& operator()(I... index) const {
        static_assert(sizeof...(I) == N, "nu::array: one index per dimension");
        const long long idx[] = {static_cast<long long>(index)..., 0};
        long long offset = 0;
        for (int k = 0; k < N; ++k) {
            const long long i = idx[k] < 0 ? idx[k] + shape[k] : idx[k];
#ifdef NU_BOUNDSCHECK
            // One unsigned compare catches both a negative index after the wrap and i >= size.
            if ((unsigned long long)i >= (unsigned long long)shape[k])
                return detail::out_of_bounds<T>(idx[k], k, shape[k]);
#endif
            offset += i * strides[k];
        }
        return *reinterpret_cast<T*>(data + offset);
    }

    // a[i] on an N-d array with N > 1: the (N-1)-d view of row i.
    NU_DEVICE array<T, (N > 1 ? N - 1 : 1)> row(long long i) const {
        array<T, (N > 1 ? N - 1 : 1)> r;
        const long long k = i < 0 ? i + shape[0] : i;
        r.data = data + k * strides[0];
        for (int d = 1; d < N; ++d) {
            r.shape[d - 1] = shape[d];
            r.strides[d - 1] = strides[d];
        }
#ifdef NU_BOUNDSCHECK
        // A row past the end: every element of the view is the sink (zero strides), so
        // indexing it stays in bounds and the violation is reported once, here.
        if ((unsigned long long)k >= (unsigned long long)shape[0]) {
            r.data = reinterpret_cast<char*>(&detail::out_of_bounds<T>(i, 0, shape[0]));
            for (int d = 1; d < N; ++d) r.strides[d - 1] = 0;
        }
#endif
        return r;
    }

    NU_DEVICE long long size() const {
        long long n = 1;
        for (int k = 0; k < N; ++k) n *= shape[k];
        return n;
    }
};

// ---- a[1:n] = x, a[i] = row, a[:] = b: NumPy's assignment to a view (compiler/_arrays.py)

// The element at C-order position k of a view.
template <class T, int N>
NU_DEVICE T& element_at(const array<T, N>& a, long long k) {
    long long offset = 0;
    for (int d = N - 1; d >= 0; --d) {
        offset += (k % a.shape[d]) * a.strides[d];
        k /= a.shape[d];
    }
    return *reinterpret_cast<T*>(a.data + offset);
}

// Every element of `dst` takes `value` (already of its type).
template <class T, int N>
NU_DEVICE void assign_scalar(const array<T, N>& dst, T value) {
    const long long n = dst.size();
    for (long long k = 0; k < n; ++k) element_at(dst, k) = value;
}

namespace detail {
// The bytes [lo, hi) a view spans (negative strides included).
template <class T, int N>
NU_DEVICE void byte_range(const array<T, N>& a, const char** lo, const char** hi) {
    long long down = 0, up = 0;
    for (int d = 0; d < N; ++d) {
        const long long reach = (a.shape[d] - 1) * a.strides[d];
        if (reach < 0) down += reach; else up += reach;
    }
    *lo = a.data + down;
    *hi = a.data + up + (long long)sizeof(T);
}

// Whether C order visits the view's elements at increasing addresses (a row-major view).
template <class T, int N>
NU_DEVICE bool increasing_in_c_order(const array<T, N>& a) {
    long long extent = (long long)sizeof(T);
    for (int d = N - 1; d >= 0; --d) {
        if (a.shape[d] <= 1) continue;
        if (a.strides[d] < extent) return false;
        extent = a.strides[d] * (a.shape[d] - 1) + extent;
    }
    return true;
}
}  // namespace detail

// Copies `src` into `dst`, converting each element, with src's dimensions broadcast as
// NumPy does (it has at most N; a dimension of 1 repeats). Returns 0 when done, 1 when the
// shapes do not broadcast (nothing is written), 2 when src and dst overlap in a way no
// element order can copy (NumPy copies through a temporary, which a kernel cannot
// allocate; nothing is written). Overlapping views with one row-major layout (a[1:] =
// a[:-1]) are copied in memmove order.
template <class T, int N, class S, int M>
NU_DEVICE int assign_array(const array<T, N>& dst, const array<S, M>& src) {
    static_assert(M <= N, "nu::assign_array: the source has more dimensions");
    long long sstrides[N > 0 ? N : 1];  // src's strides against dst's dimensions
    bool same_layout = sizeof(S) == sizeof(T);
    for (int d = 0; d < N; ++d) {
        const int j = d - (N - M);
        if (j < 0 || src.shape[j] == 1) {
            sstrides[d] = 0;
        } else if (src.shape[j] == dst.shape[d]) {
            sstrides[d] = src.strides[j];
        } else {
            return 1;
        }
        if (dst.shape[d] > 1 && sstrides[d] != dst.strides[d]) same_layout = false;
    }
    const long long n = dst.size();
    if (n == 0) return 0;
    const char *dlo, *dhi, *slo, *shi;
    detail::byte_range(dst, &dlo, &dhi);
    detail::byte_range(src, &slo, &shi);
    bool backward = false;
    if (dlo < shi && slo < dhi) {  // overlapping
        if (!same_layout || (dst.data != src.data && !detail::increasing_in_c_order(dst))) return 2;
        backward = dst.data > src.data;  // each source element is read before it is overwritten
    }
    for (long long i = 0; i < n; ++i) {
        long long k = backward ? n - 1 - i : i, od = 0, os = 0;
        for (int d = N - 1; d >= 0; --d) {
            const long long c = k % dst.shape[d];
            k /= dst.shape[d];
            od += c * dst.strides[d];
            os += c * sstrides[d];
        }
        *reinterpret_cast<T*>(dst.data + od) = cast<T>(*reinterpret_cast<const S*>(src.data + os));
    }
    return 0;
}

// a.real / a.imag of a complex array: a view of one part of every element, with the same
// shape and byte strides (part 0 real, 1 imaginary), as NumPy's views.
template <class T, int N>
NU_DEVICE array<typename T::value_type, N> part_view(const array<T, N>& a, int part) {
    array<typename T::value_type, N> r;
    r.data = a.data + part * int(sizeof(typename T::value_type));
    for (int k = 0; k < N; ++k) {
        r.shape[k] = a.shape[k];
        r.strides[k] = a.strides[k];
    }
    return r;
}

// a.view(U): the same bytes read as U, with NumPy's rules for ndarray.view(dtype). With
// another itemsize the last axis must be contiguous (or of length 1, or the array empty)
// and its byte length must divide into U's; it is rescaled and the other axes keep their
// strides. Returns 0 on success, 1 when the last axis is not contiguous, 2 when its bytes
// do not divide into U, 3 when a 0-d array would change itemsize, 4 when the data or a
// stride is not a multiple of U's alignment (the GPU cannot read such a view; NumPy
// allows it). On failure `*r` is an empty view, so nothing is read through it.
template <class U, class T, int N>
NU_DEVICE int view_as(const array<T, N>& a, array<U, N>* r) {
    r->data = a.data;
    for (int k = 0; k < N; ++k) {
        r->shape[k] = a.shape[k];
        r->strides[k] = a.strides[k];
    }
    int status = 0;
    if (sizeof(U) != sizeof(T)) {
        if (N == 0) {
            status = 3;
        } else {
            const int last = N > 0 ? N - 1 : 0;
            const long long bytes = a.shape[last] * (long long)sizeof(T);
            if (a.shape[last] != 1 && a.size() != 0 && a.strides[last] != (long long)sizeof(T)) {
                status = 1;
            } else if (bytes % (long long)sizeof(U) != 0) {
                status = 2;
            } else {
                r->shape[last] = bytes / (long long)sizeof(U);
                r->strides[last] = sizeof(U);
            }
        }
    }
    if (status == 0 && alignof(U) > alignof(T)) {
        bool aligned = reinterpret_cast<unsigned long long>(a.data) % alignof(U) == 0;
        for (int k = 0; k < N; ++k) {
            aligned = aligned && (r->shape[k] <= 1 || r->strides[k] % (long long)alignof(U) == 0);
        }
        if (!aligned && r->size() != 0) status = 4;
    }
    if (status != 0) {
        for (int k = 0; k < N; ++k) r->shape[k] = 0;
    }
    return status;
}

// Copies every element of `src` into `dst`, of the same shape (a.copy() into fresh storage).
template <class T, int N>
NU_DEVICE void copy_elements(const array<T, N>& dst, const array<T, N>& src) {
    const long long n = src.size();
    for (long long k = 0; k < n; ++k) element_at(dst, k) = element_at(src, k);
}

// A view of N-d data at a fixed address with these byte strides: a global device array
// captured by the kernel (its pointer is part of the generated source).
template <class T, int N>
NU_DEVICE array<T, N> captured_view(unsigned long long address, const long long (&shape)[N],
                                    const long long (&strides)[N]) {
    array<T, N> r;
    r.data = reinterpret_cast<char*>(address);
    for (int d = 0; d < N; ++d) {
        r.shape[d] = shape[d];
        r.strides[d] = strides[d];
    }
    return r;
}

// A captured 0-d device array: its one element at `address`.
template <class T>
NU_DEVICE array<T, 0> captured_view(unsigned long long address) {
    array<T, 0> r;
    r.data = reinterpret_cast<char*>(address);
    r.shape[0] = r.strides[0] = 0;  // unused: no dimensions
    return r;
}

namespace kern {
// A C-contiguous view of N-d data at p: shared, local and constant arrays.
template <class T, int N>
NU_DEVICE array<T, N> contiguous_view(T* p, const long long (&shape)[N]) {
    array<T, N> a;
    a.data = reinterpret_cast<char*>(p);
    long long stride = sizeof(T);
    for (int d = N - 1; d >= 0; --d) {
        a.shape[d] = shape[d];
        a.strides[d] = stride;
        stride *= shape[d];
    }
    return a;
}
// carray/farray's Fortran order: the first dimension varies fastest.
template <class T, int N>
NU_DEVICE array<T, N> fortran_view(T* p, const long long (&shape)[N]) {
    array<T, N> a;
    a.data = reinterpret_cast<char*>(p);
    long long stride = sizeof(T);
    for (int d = 0; d < N; ++d) {
        a.shape[d] = shape[d];
        a.strides[d] = stride;
        stride *= shape[d];
    }
    return a;
}
// __constant__ data is const; the translator never writes through such a view.
template <class T, int N>
NU_DEVICE array<T, N> contiguous_view(const T* p, const long long (&shape)[N]) {
    return contiguous_view(const_cast<T*>(p), shape);
}
}  // namespace kern

// One item of a subscript that makes a view: an integer (fixes its dimension) or a slice
// start:stop:step whose missing bounds are flagged, as Python's slice() keeps None.
struct index_part {
    enum : int { integer = 0, slice = 1, has_start = 2, has_stop = 4 };
    int kind;
    long long start, stop, step;  // an integer index is `start`
};

// Python's slice.indices() for a dimension of n: first element and length (step != 0).
NU_DEVICE void slice_dimension(long long n, const index_part& p, long long* first, long long* length) {
    const long long step = p.step;
    const long long lo = step < 0 ? -1 : 0, hi = step < 0 ? n - 1 : n;
    auto clamp = [&](long long v) {
        if (v < 0) v += n;
        return v < 0 ? lo : (v >= n ? hi : v);
    };
    const long long start = (p.kind & index_part::has_start) ? clamp(p.start) : (step < 0 ? hi : lo);
    const long long stop = (p.kind & index_part::has_stop) ? clamp(p.stop) : (step < 0 ? lo : hi);
    *first = start;
    if (step < 0) {
        *length = stop < start ? (start - stop - 1) / (-step) + 1 : 0;
    } else {
        *length = start < stop ? (stop - start - 1) / step + 1 : 0;
    }
}

// a[i, 1:5, ::-1]: the M-d view a subscript with slices selects (dimensions past the
// subscript are kept whole). Integer items wrap like operator() and are bounds-checked.
template <int M, class T, int N, int K>
NU_DEVICE array<T, M> subview(const array<T, N>& a, const index_part (&parts)[K]) {
    static_assert(K <= N, "nu::subview: more indices than dimensions");
    array<T, M> r;
    r.data = a.data;
    int out = 0;
    for (int d = 0; d < N; ++d) {
        if (d < K && parts[d].kind == index_part::integer) {
            const long long i = parts[d].start < 0 ? parts[d].start + a.shape[d] : parts[d].start;
#ifdef NU_BOUNDSCHECK
            if ((unsigned long long)i >= (unsigned long long)a.shape[d]) {
                r.data = reinterpret_cast<char*>(&detail::out_of_bounds<T>(parts[d].start, d, a.shape[d]));
                for (int k = 0; k < M; ++k) r.strides[k] = 0;
                for (int k = 0; k < M; ++k) r.shape[k] = k < out ? r.shape[k] : 0;
                return r;
            }
#endif
            r.data += i * a.strides[d];
            continue;
        }
        long long first = 0, length = a.shape[d], step = 1;
        if (d < K) {
            step = parts[d].step;
            slice_dimension(a.shape[d], parts[d], &first, &length);
        }
        r.data += first * a.strides[d];
        r.shape[out] = length;
        r.strides[out] = a.strides[d] * step;
        ++out;
    }
    return r;
}

// A `()` core dimension read as a scalar: the element itself.
template <class T>
NU_DEVICE T& scalar_ref(const array<T, 0>& a) {
    return *reinterpret_cast<T*>(a.data);
}

}  // namespace nu

#include "nu_record.cuh"
#include "nu_vector.cuh"  // cuda.float32x4...: CUDA's vector types
#include "nu_reductions.cuh"  // np.sum(a), a.mean()...: whole-array reductions

#ifdef NU_BOUNDSCHECK
#include "kernel.cuh"
#endif
