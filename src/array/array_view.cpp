// src/array/array_view.cpp: contiguity, extents and host strided copies
#include "array/array_view.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "runtime/errors.h"

namespace nu {

std::int64_t array_view::size() const {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
}

// NumPy's rule: size-1 dimensions may have any stride; an empty array is contiguous.
bool array_view::is_c_contiguous() const {
    std::int64_t expected = static_cast<std::int64_t>(itemsize(type));
    if (size() == 0) return true;
    for (int i = ndim() - 1; i >= 0; --i) {
        if (shape[i] != 1 && strides[i] != expected) return false;
        expected *= shape[i];
    }
    return true;
}

bool array_view::is_f_contiguous() const {
    std::int64_t expected = static_cast<std::int64_t>(itemsize(type));
    if (size() == 0) return true;
    for (int i = 0; i < ndim(); ++i) {
        if (shape[i] != 1 && strides[i] != expected) return false;
        expected *= shape[i];
    }
    return true;
}

void array_view::byte_extent(std::int64_t* lo, std::int64_t* hi) const {
    *lo = 0;
    *hi = 0;
    if (size() == 0) return;
    // Strides come from users (device_array(strides=), interface dicts, views): a product or
    // sum that leaves int64 would wrap and make a huge extent look small.
    std::int64_t low = 0, high = 0, total = 0;
    bool overflow = false;
    for (int i = 0; i < ndim() && !overflow; ++i) {
        std::int64_t span = 0;
        overflow = __builtin_mul_overflow(shape[i] - 1, strides[i], &span) ||
                   __builtin_add_overflow(span < 0 ? low : high, span, span < 0 ? &low : &high);
    }
    overflow = overflow || __builtin_add_overflow(high, static_cast<std::int64_t>(itemsize(type)), &high) ||
               __builtin_sub_overflow(high, low, &total);
    if (overflow) {
        std::string dims, steps;
        for (int i = 0; i < ndim(); ++i) {
            dims += (i ? ", " : "") + std::to_string(shape[i]);
            steps += (i ? ", " : "") + std::to_string(strides[i]);
        }
        const char* comma = ndim() == 1 ? "," : "";
        throw value_error("array is too big: shape (" + dims + comma + ") with strides (" + steps + comma +
                          ") spans more bytes than memory addresses hold");
    }
    *lo = low;
    *hi = high;
}

shape_t contiguous_strides(const shape_t& shape, std::size_t itemsize, char order) {
    shape_t strides(shape.size());
    std::int64_t step = static_cast<std::int64_t>(itemsize);
    const int n = static_cast<int>(shape.size());
    for (int k = 0; k < n; ++k) {
        const int i = order == 'F' ? k : n - 1 - k;
        strides[i] = step;
        step *= shape[i] > 0 ? shape[i] : 1;
    }
    return strides;
}

shape_t k_order_strides(const array_view& v) {
    const std::size_t item = itemsize(v.type);
    if (v.is_c_contiguous() || v.ndim() <= 1) return contiguous_strides(v.shape, item, 'C');
    if (v.is_f_contiguous()) return contiguous_strides(v.shape, item, 'F');
    const int n = static_cast<int>(v.shape.size());
    small_vector<int, 8> axes(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) axes[static_cast<std::size_t>(d)] = d;
    auto magnitude = [&](int d) { return v.strides[d] < 0 ? -v.strides[d] : v.strides[d]; };
    std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) { return magnitude(a) > magnitude(b); });
    shape_t strides(v.shape.size());
    std::int64_t step = static_cast<std::int64_t>(item);
    for (int k = n - 1; k >= 0; --k) {  // the smallest |stride| gets the item size
        const int d = axes[static_cast<std::size_t>(k)];
        strides[d] = step;
        step *= v.shape[d] > 0 ? v.shape[d] : 1;
    }
    return strides;
}

std::int64_t checked_size(const shape_t& shape, const char* api) {
    if (shape.size() > k_numpy_max_dims) {  // NumPy's limit: such an array could never reach the host
        throw value_error(std::string(api) + "(): maximum supported dimension for an ndarray is " +
                          std::to_string(k_numpy_max_dims) + " (got " + std::to_string(shape.size()) + ")");
    }
    std::int64_t n = 1;
    for (std::int64_t d : shape) {
        if (d < 0) {
            throw value_error(std::string(api) + "(): negative dimensions are not allowed (got " +
                              std::to_string(d) + ")");
        }
        if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) {
            throw value_error(std::string(api) + "(): array is too big (its size overflows int64)");
        }
        n *= d;
    }
    return n;
}

bool may_overlap(const array_view& a, const array_view& b) {
    if (a.size() == 0 || b.size() == 0) return false;
    std::int64_t alo = 0, ahi = 0, blo = 0, bhi = 0;
    a.byte_extent(&alo, &ahi);
    b.byte_extent(&blo, &bhi);
    const char* pa = static_cast<const char*>(a.data);
    const char* pb = static_cast<const char*>(b.data);
    return pa + alo < pb + bhi && pb + blo < pa + ahi;
}

namespace {

void copy_dim(char* dst, const char* src, const array_view& d, const array_view& s, int dim,
              std::size_t item) {
    const std::int64_t n = d.shape[dim];
    const std::int64_t ds = d.strides[dim], ss = s.strides[dim];
    if (dim == d.ndim() - 1) {
        if (ds == static_cast<std::int64_t>(item) && ss == ds) {
            std::memcpy(dst, src, static_cast<std::size_t>(n) * item);
            return;
        }
        for (std::int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds, src + i * ss, item);
        return;
    }
    for (std::int64_t i = 0; i < n; ++i) copy_dim(dst + i * ds, src + i * ss, d, s, dim + 1, item);
}

}  // namespace

void copy_strided(const array_view& dst, const array_view& src) {
    NU_ASSERT(dst.shape == src.shape && dst.type == src.type);
    if (dst.size() == 0) return;
    const std::size_t item = itemsize(dst.type);
    if (dst.ndim() == 0) {
        std::memcpy(dst.data, src.data, item);
        return;
    }
    copy_dim(static_cast<char*>(dst.data), static_cast<const char*>(src.data), dst, src, 0, item);
}

}  // namespace nu
