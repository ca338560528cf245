// src/dispatch/broadcast.h: NumPy broadcasting and dimension coalescing for launches
#pragma once

#include <string>
#include <vector>

#include "array/array_view.h"

namespace nu {

// The broadcast shape of `shapes` (NumPy's rules); throws value_error naming `api` and
// every shape when they are incompatible.
shape_t broadcast_shapes(const std::vector<shape_t>& shapes, const char* api);
shape_t broadcast_shapes(const shape_t* const* shapes, std::size_t count, const char* api);

// Strides of a `from_shape`-shaped operand viewed with `shape` (right-aligned; 0 where
// the operand is broadcast). The caller has checked compatibility.
shape_t broadcast_strides(const shape_t& from_shape, const shape_t& from_strides,
                          const shape_t& shape);

// Reduces an iteration space for a kernel: drops size-1 dimensions, orders dimensions by
// the first operand's strides (largest outermost, so a Fortran-ordered output iterates in
// memory order), then merges neighbours that every operand walks contiguously. `strides`
// holds one stride vector per operand. An empty result shape means a single element.
void coalesce_dims(shape_t& shape, std::vector<shape_t>& strides);

std::string shape_string(const shape_t& shape);

}  // namespace nu
