// src/dispatch/broadcast.cpp: NumPy broadcasting and dimension coalescing
#include "dispatch/broadcast.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "runtime/errors.h"

namespace nu {

std::string shape_string(const shape_t& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + (shape.size() == 1 ? ",)" : ")");
}

shape_t broadcast_shapes(const std::vector<shape_t>& shapes, const char* api) {
    small_vector<const shape_t*, 8> pointers;
    for (const shape_t& s : shapes) pointers.push_back(&s);
    return broadcast_shapes(pointers.data(), pointers.size(), api);
}

shape_t broadcast_shapes(const shape_t* const* shapes, std::size_t count, const char* api) {
    std::size_t ndim = 0;
    for (std::size_t k = 0; k < count; ++k) ndim = std::max(ndim, shapes[k]->size());
    shape_t out(ndim, 1);
    for (std::size_t k = 0; k < count; ++k) {
        const shape_t& s = *shapes[k];
        const std::size_t shift = ndim - s.size();
        for (std::size_t i = 0; i < s.size(); ++i) {
            std::int64_t& o = out[shift + i];
            if (s[i] == o || s[i] == 1) continue;
            if (o == 1) {
                o = s[i];
                continue;
            }
            std::string all;
            for (std::size_t j = 0; j < count; ++j) all += (all.empty() ? "" : " ") + shape_string(*shapes[j]);
            throw value_error(std::string(api) + "(): operands could not be broadcast together "
                              "with shapes " + all);
        }
    }
    return out;
}

shape_t broadcast_strides(const shape_t& from_shape, const shape_t& from_strides,
                          const shape_t& shape) {
    shape_t strides(shape.size(), 0);
    const std::size_t shift = shape.size() - from_shape.size();
    for (std::size_t i = 0; i < from_shape.size(); ++i) {
        strides[shift + i] = from_shape[i] == 1 ? 0 : from_strides[i];
    }
    return strides;
}

void coalesce_dims(shape_t& shape, std::vector<shape_t>& strides) {
    // Keep only dimensions longer than 1. Works in place with inline storage: this runs on
    // every ufunc call.
    small_vector<std::size_t, 8> dims;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] != 1) dims.push_back(d);
    }
    // Outermost first by decreasing |stride| of operand 0; ties keep their order.
    if (!strides.empty()) {
        const shape_t& key = strides[0];
        std::stable_sort(dims.begin(), dims.end(), [&](std::size_t a, std::size_t b) {
            return std::llabs(key[a]) > std::llabs(key[b]);
        });
    }
    // Group the ordered dimensions: the outer dimension absorbs the next one when every
    // operand steps over that one's whole extent.
    small_vector<std::size_t, 8> group_start;  // index into dims where each group begins
    for (std::size_t i = 0; i < dims.size(); ++i) {
        bool mergeable = i > 0;
        for (std::size_t k = 0; mergeable && k < strides.size(); ++k) {
            mergeable = strides[k][dims[i - 1]] == strides[k][dims[i]] * shape[dims[i]];
        }
        if (!mergeable) group_start.push_back(i);
    }
    shape_t new_shape;
    for (std::size_t g = 0; g < group_start.size(); ++g) {
        const std::size_t end = g + 1 < group_start.size() ? group_start[g + 1] : dims.size();
        std::int64_t extent = 1;
        for (std::size_t i = group_start[g]; i < end; ++i) extent *= shape[dims[i]];
        new_shape.push_back(extent);
    }
    for (shape_t& st : strides) {
        shape_t merged;
        for (std::size_t g = 0; g < group_start.size(); ++g) {
            const std::size_t end = g + 1 < group_start.size() ? group_start[g + 1] : dims.size();
            merged.push_back(st[dims[end - 1]]);  // a group steps like its innermost member
        }
        st = merged;
    }
    shape = new_shape;
}

}  // namespace nu
