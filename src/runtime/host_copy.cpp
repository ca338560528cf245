// src/runtime/host_copy.cpp: large host memory copies over the thread pool
#include "runtime/host_copy.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "runtime/thread_pool.h"

namespace nu {
namespace {

// Pieces of this size are handed out from one counter, so a slow thread holds no one up.
constexpr std::size_t k_piece = std::size_t{512} << 10;

struct copy_job final : pool_job {
    char* dst;
    const char* src;
    std::size_t bytes;
    std::atomic<std::size_t> next{0};

    copy_job(void* d, const void* s, std::size_t n)
        : dst(static_cast<char*>(d)), src(static_cast<const char*>(s)), bytes(n) {}

    void work() override {
        for (;;) {
            const std::size_t begin = next.fetch_add(k_piece, std::memory_order_relaxed);
            if (begin >= bytes) return;
            std::memcpy(dst + begin, src + begin, std::min(k_piece, bytes - begin));
        }
    }
};

}  // namespace

bool ranges_overlap(const void* a, const void* b, std::size_t bytes) {
    const auto x = reinterpret_cast<std::uintptr_t>(a);
    const auto y = reinterpret_cast<std::uintptr_t>(b);
    return bytes > 0 && x < y + bytes && y < x + bytes;
}

void host_copy(void* dst, const void* src, std::size_t bytes) {
    if (bytes < k_parallel_copy_min || pool_threads() < 2) {
        std::memcpy(dst, src, bytes);
        return;
    }
    copy_job job(dst, src, bytes);
    if (!run_on_pool(job)) job.work();  // the pool is busy with another caller's job
}

}  // namespace nu
