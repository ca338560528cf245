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
    std::size_t ndim = 0;
    for (const shape_t& s : shapes) ndim = std::max(ndim, s.size());
    shape_t out(ndim, 1);
    for (const shape_t& s : shapes) {
        const std::size_t shift = ndim - s.size();
        for (std::size_t i = 0; i < s.size(); ++i) {
            std::int64_t& o = out[shift + i];
            if (s[i] == o || s[i] == 1) continue;
            if (o == 1) {
                o = s[i];
                continue;
            }
            std::string all;
            for (const shape_t& t : shapes) all += (all.empty() ? "" : " ") + shape_string(t);
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
    // Keep only dimensions longer than 1.
    std::vector<std::size_t> dims;
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
    shape_t new_shape;
    std::vector<shape_t> new_strides(strides.size());
    for (std::size_t d : dims) {
        // The outer dimension absorbs d when every operand steps over d's whole extent.
        bool mergeable = !new_shape.empty();
        for (std::size_t k = 0; mergeable && k < strides.size(); ++k) {
            mergeable = new_strides[k].back() == strides[k][d] * shape[d];
        }
        if (mergeable) {
            new_shape.back() *= shape[d];
            for (std::size_t k = 0; k < strides.size(); ++k) new_strides[k].back() = strides[k][d];
        } else {
            new_shape.push_back(shape[d]);
            for (std::size_t k = 0; k < strides.size(); ++k) new_strides[k].push_back(strides[k][d]);
        }
    }
    shape = std::move(new_shape);
    strides = std::move(new_strides);
}

}  // namespace nu
