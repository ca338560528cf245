// src/runtime/host_copy.h: large host memory copies over the thread pool
#pragma once

#include <cstddef>

namespace nu {

// memcpy for ranges that do not overlap. From k_parallel_copy_min bytes on, the pool's
// threads copy pieces of it too: one thread's memcpy reaches a fraction of the memory
// bandwidth, and the page faults of a fresh destination (a new NumPy array) are taken in
// parallel as well.
void host_copy(void* dst, const void* src, std::size_t bytes);

// True when [a, a + bytes) and [b, b + bytes) share a byte.
bool ranges_overlap(const void* a, const void* b, std::size_t bytes);

constexpr std::size_t k_parallel_copy_min = std::size_t{2} << 20;

}  // namespace nu
