// src/runtime/host_copy.cpp: large host memory copies over the thread pool
#include "runtime/host_copy.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "runtime/thread_pool.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#define NU_STREAMING_STORES 1
#else
#define NU_STREAMING_STORES 0
#endif

namespace nu {
namespace {

using copy_fn = void (*)(void*, const void*, std::size_t) noexcept;

void plain_copy(void* dst, const void* src, std::size_t bytes) noexcept {
    std::memcpy(dst, src, bytes);
}

// Pieces are handed out from one counter, so a slow thread holds no one up.
struct copy_job final : pool_job {
    char* dst;
    const char* src;
    std::size_t bytes;
    std::size_t piece;
    copy_fn copy;
    std::atomic<std::size_t> next{0};

    copy_job(void* d, const void* s, std::size_t n, copy_fn f)
        : dst(static_cast<char*>(d)), src(static_cast<const char*>(s)), bytes(n),
          piece(host_copy_piece(n)), copy(f) {}

    void work() override {
        for (;;) {
            const std::size_t begin = next.fetch_add(piece, std::memory_order_relaxed);
            if (begin >= bytes) return;
            copy(dst + begin, src + begin, std::min(piece, bytes - begin));
        }
    }
};

void parallel_copy(void* dst, const void* src, std::size_t bytes, copy_fn copy) {
    if (bytes < k_parallel_copy_min || pool_threads() < 2) {
        copy(dst, src, bytes);
        return;
    }
    copy_job job(dst, src, bytes, copy);
    if (!run_on_pool(job)) job.work();  // the pool is busy with another caller's job
}

}  // namespace

std::size_t host_copy_piece(std::size_t bytes) {
    const std::size_t share = bytes / (2 * std::size_t{pool_threads()});
    const std::size_t page = 4096;  // whole pages: an aligned destination stays aligned
    return std::clamp((share + page - 1) / page * page, k_copy_piece_min, k_copy_piece_max);
}

void copy_streaming_stores(void* dst, const void* src, std::size_t bytes) noexcept {
#if NU_STREAMING_STORES
    auto* d = static_cast<char*>(dst);
    auto* s = static_cast<const char*>(src);
    // The head up to the first 16-byte-aligned destination address, and ranges too short
    // for a whole 64-byte step, go through memcpy.
    const std::size_t head =
        std::min(bytes, (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & std::size_t{15});
    std::memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    const std::size_t body = bytes & ~std::size_t{63};
    if (body > 0) {
        for (std::size_t i = 0; i < body; i += 64) {
            // Four loads before four stores: the loads of one step overlap each other.
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
            const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
            const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
            _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
            _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
            _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
            _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
        }
        // Streaming stores are weakly ordered: the fence makes them visible before anything
        // this thread does next (the pool's join, then the DMA that reads them).
        _mm_sfence();
    }
    std::memcpy(d + body, s + body, bytes - body);
#else
    std::memcpy(dst, src, bytes);
#endif
}

bool ranges_overlap(const void* a, const void* b, std::size_t bytes) {
    const auto x = reinterpret_cast<std::uintptr_t>(a);
    const auto y = reinterpret_cast<std::uintptr_t>(b);
    return bytes > 0 && x < y + bytes && y < x + bytes;
}

void host_copy(void* dst, const void* src, std::size_t bytes) {
    parallel_copy(dst, src, bytes, plain_copy);
}

void host_copy_streaming(void* dst, const void* src, std::size_t bytes) {
    parallel_copy(dst, src, bytes, copy_streaming_stores);
}

}  // namespace nu
