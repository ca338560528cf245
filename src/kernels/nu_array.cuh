// src/kernels/nu_array.cuh: array views handed to translated gufunc (and kernel) functions
//
// The contract between the translator and the gufunc kernel: an array argument of a
// translated function is a `nu::array<T, N>` passed by value. Strides are in bytes and
// may be negative or zero (broadcast), so views of any NumPy layout are read in place.
// Indexing follows Python: a negative index counts from the end of its dimension.
#pragma once

#include "nu_scalar.cuh"

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
        return r;
    }

    NU_DEVICE long long size() const {
        long long n = 1;
        for (int k = 0; k < N; ++k) n *= shape[k];
        return n;
    }
};

// A `()` core dimension read as a scalar: the element itself.
template <class T>
NU_DEVICE T& scalar_ref(const array<T, 0>& a) {
    return *reinterpret_cast<T*>(a.data);
}

}  // namespace nu
