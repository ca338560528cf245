// src/runtime/host_copy.h: large host memory copies over the thread pool
#pragma once

#include <cstddef>

namespace nu {

// memcpy for ranges that do not overlap. From k_parallel_copy_min bytes on, the pool's
// threads copy pieces of it too: one thread's memcpy reaches a fraction of the memory
// bandwidth, and the page faults of a fresh destination (a new NumPy array) are taken in
// parallel as well.
void host_copy(void* dst, const void* src, std::size_t bytes);

// host_copy with non-temporal (streaming) stores, for destinations that nothing on this
// CPU reads soon: a pinned staging buffer the DMA reads next, or a result block far larger
// than the caches. Streaming stores skip the read-for-ownership of each destination line
// and leave the caches to the source, so a copy moves 2 bytes of memory traffic per byte
// instead of 3. Every store is globally visible when it returns (each thread fences).
void host_copy_streaming(void* dst, const void* src, std::size_t bytes);

// The single-thread kernel of host_copy_streaming: 16-byte streaming stores from the first
// 16-byte-aligned destination address, memcpy for the misaligned head and the tail, and a
// store fence. Plain memcpy where the CPU has no streaming stores we use (not x86-64).
void copy_streaming_stores(void* dst, const void* src, std::size_t bytes) noexcept;

// The bytes one pool thread takes at a time in a parallel copy of `bytes`: about two
// pieces per thread, so a slow thread holds the end up by half a share at most, and at
// least k_copy_piece_min so the counter is not contended.
std::size_t host_copy_piece(std::size_t bytes);

// True when [a, a + bytes) and [b, b + bytes) share a byte.
bool ranges_overlap(const void* a, const void* b, std::size_t bytes);

constexpr std::size_t k_parallel_copy_min = std::size_t{2} << 20;
constexpr std::size_t k_copy_piece_min = std::size_t{64} << 10;
constexpr std::size_t k_copy_piece_max = std::size_t{512} << 10;

}  // namespace nu
