// src/runtime/pinned_results.cpp: the cache of page-locked result blocks
#include "runtime/pinned_results.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "runtime/runtime.h"

namespace nu {
namespace {

constexpr std::size_t k_granule = std::size_t{2} << 20;

struct cache {
    std::mutex mutex;
    std::multimap<std::size_t, void*> idle;  // size -> block
    std::size_t idle_bytes = 0;
    std::size_t total_bytes = 0;  // alive and idle
};

// Never destroyed: blocks may come back from finalizers at interpreter exit.
cache& the_cache() {
    static cache* c = new cache;
    return *c;
}

bool enabled() {
    static const bool on = [] {
        const char* env = std::getenv("NUMBACUDA_UFUNC_PINNED_RESULTS");
        return env == nullptr || std::strcmp(env, "0") != 0;
    }();
    return on;
}

std::size_t cap() {
    static const std::size_t bytes = [] {
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 8
                                     : std::size_t{0};
    }();
    return bytes;
}

}  // namespace

void* acquire_pinned_result(std::size_t bytes, std::size_t* granted) {
    if (bytes < k_pinned_result_min || !enabled()) return nullptr;
    backend& b = active_backend();
    if (b.emulated()) return nullptr;
    const std::size_t want = (bytes + k_granule - 1) / k_granule * k_granule;
    cache& c = the_cache();
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        // The smallest idle block that fits, if at most twice the size asked for.
        auto it = c.idle.lower_bound(want);
        if (it != c.idle.end() && it->first <= 2 * want) {
            void* ptr = it->second;
            *granted = it->first;
            c.idle_bytes -= it->first;
            c.idle.erase(it);
            return ptr;
        }
        if (c.total_bytes + want > cap()) return nullptr;
        c.total_bytes += want;  // reserved before the slow allocation, outside the lock
    }
    try {
        void* ptr = b.allocate_pinned(want);
        *granted = want;
        return ptr;
    } catch (...) {  // out of page-locked memory: pageable memory serves
        std::lock_guard<std::mutex> lock(c.mutex);
        c.total_bytes -= want;
        return nullptr;
    }
}

void release_pinned_result(void* ptr, std::size_t granted) noexcept {
    cache& c = the_cache();
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        if (c.idle_bytes + granted <= k_pinned_idle_max) {
            c.idle.emplace(granted, ptr);
            c.idle_bytes += granted;
            return;
        }
        c.total_bytes -= granted;
    }
    active_backend().release_pinned(ptr);
}

void trim_pinned_results() noexcept {
    cache& c = the_cache();
    std::multimap<std::size_t, void*> idle;
    {
        std::lock_guard<std::mutex> lock(c.mutex);
        idle.swap(c.idle);
        c.total_bytes -= c.idle_bytes;
        c.idle_bytes = 0;
    }
    for (const auto& [bytes, ptr] : idle) active_backend().release_pinned(ptr);
}

pinned_results_usage pinned_results_in_use() {
    cache& c = the_cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    return {c.idle_bytes, c.total_bytes};
}

}  // namespace nu
