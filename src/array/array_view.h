// src/array/array_view.h: one strided view type for NumPy arrays, device arrays and CAI
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "array/dtype.h"
#include "array/small_vector.h"

namespace nu {

using shape_t = small_vector<std::int64_t, 8>;

// Element pointer + shape + byte strides. Says nothing about ownership or where the
// memory lives; device_array and the bindings add that.
struct array_view {
    void* data = nullptr;
    dtype type = dtype::float64;
    shape_t shape;
    shape_t strides;  // in bytes, may be negative or zero

    int ndim() const { return static_cast<int>(shape.size()); }
    std::int64_t size() const;
    std::size_t nbytes() const { return static_cast<std::size_t>(size()) * itemsize(type); }
    bool is_c_contiguous() const;
    bool is_f_contiguous() const;
    bool is_contiguous() const { return is_c_contiguous() || is_f_contiguous(); }
    // Byte range [lo, hi) relative to `data` touched by the view; {0, 0} when empty.
    void byte_extent(std::int64_t* lo, std::int64_t* hi) const;
};

// Contiguous strides for `shape` in C ('C') or Fortran ('F') order.
shape_t contiguous_strides(const shape_t& shape, std::size_t itemsize, char order);
// The strides np.empty_like(v) gives (NumPy's order='K'): C or F when v is contiguous,
// else v's axes sorted by decreasing |stride| (ties by axis), packed with positive strides.
// Visiting a copy's axes in that order gives v's elements in v's own K-order sequence.
shape_t k_order_strides(const array_view& v);
// NumPy's NPY_MAXDIMS: arrays with more dimensions cannot exist on the host.
constexpr std::size_t k_numpy_max_dims = 64;
// Element count of `shape`; throws value_error naming `api` for negative dimensions, a
// count that overflows or more than k_numpy_max_dims dimensions.
std::int64_t checked_size(const shape_t& shape, const char* api);

// Whether the byte ranges of two views intersect (conservative: interleaved views count).
bool may_overlap(const array_view& a, const array_view& b);

// dst[i] = src[i] for every index of the common shape; both views in host memory.
void copy_strided(const array_view& dst, const array_view& src);

}  // namespace nu
