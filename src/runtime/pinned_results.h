// src/runtime/pinned_results.h: page-locked memory for the NumPy results of GPU calls
#pragma once

#include <cstddef>

namespace nu {

// A NumPy result that a GPU call fills by a device-to-host copy lands in page-locked
// memory from this cache when it is large: the DMA writes it directly (one copy, no
// staging), and a block reused from the cache has no page faults left to take. A fresh
// pageable array of 256 MiB costs 45 ms of page faults alone on the H100 machine, more
// than the 5 ms the copy takes from pinned memory.
//
// Returns nullptr, and the caller allocates pageable memory as usual, where the cache
// declines: the host backend, fewer than k_pinned_result_min bytes,
// NUMBACUDA_UFUNC_PINNED_RESULTS=0, more page-locked memory than the cap (an eighth of
// physical memory, results alive and cached together), or a failed allocation. `granted`
// is the block's size, to hand back to release_pinned_result.
void* acquire_pinned_result(std::size_t bytes, std::size_t* granted);

// Gives a block back (any thread, no GIL needed): kept for reuse while the idle blocks
// stay within k_pinned_idle_max bytes, else freed.
void release_pinned_result(void* ptr, std::size_t granted) noexcept;

// Frees every idle block (cuda.close() and context resets).
void trim_pinned_results() noexcept;

// Bytes in idle blocks, and in all blocks (alive and idle).
struct pinned_results_usage {
    std::size_t idle = 0;
    std::size_t total = 0;
};
pinned_results_usage pinned_results_in_use();

constexpr std::size_t k_pinned_result_min = std::size_t{4} << 20;
constexpr std::size_t k_pinned_idle_max = std::size_t{1} << 30;

}  // namespace nu
