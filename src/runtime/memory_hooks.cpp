// src/runtime/memory_hooks.cpp: EMM plugins and deferred frees, between arrays and backends
#include "runtime/memory_hooks.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace nu {
namespace {

struct pending_free {
    void* ptr;
    std::size_t bytes;
    stream_handle stream;
    stream_ref keep;
};

std::mutex g_mutex;
// Never destroyed: a plugin may hold interpreter objects that must not be released by
// static destructors after Python has finalized.
std::shared_ptr<external_allocator>& g_allocator = *new std::shared_ptr<external_allocator>();
int g_defer_depth = 0;
std::vector<pending_free>* g_pending = new std::vector<pending_free>();  // never destroyed: frees run at exit
std::atomic<transfer_observer> g_transfer_observer{nullptr};

}  // namespace

void set_transfer_observer(transfer_observer observer) { g_transfer_observer.store(observer); }

void notify_transfer(bool to_device, void* dst, const void* src, std::size_t bytes) {
    const transfer_observer observer = g_transfer_observer.load(std::memory_order_relaxed);
    if (observer != nullptr) observer(to_device, dst, src, bytes);
}

void set_external_allocator(std::shared_ptr<external_allocator> allocator) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_allocator = std::move(allocator);
}

std::shared_ptr<external_allocator> current_external_allocator() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_allocator;
}

void begin_deferred_cleanup() {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_defer_depth;
}

void end_deferred_cleanup() {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (g_defer_depth > 0) --g_defer_depth;
    }
    flush_deallocations();
}

bool cleanup_deferred() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_defer_depth > 0;
}

std::size_t pending_deallocations() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_pending->size();
}

void flush_deallocations() {
    std::vector<pending_free> now;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (g_defer_depth > 0) return;
        now.swap(*g_pending);
    }
    backend& b = active_backend();
    for (const pending_free& f : now) {
        // A stream closed while the free was queued can no longer order it: the legacy
        // default stream waits for all blocking streams.
        const stream_handle s = (f.keep && f.keep->closed) ? nullptr : f.stream;
        b.release(f.ptr, f.bytes, s);
    }
}

void release_device_memory(void* ptr, std::size_t bytes, stream_handle s, const stream_ref& keep) noexcept {
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        if (g_defer_depth > 0) {
            try {
                g_pending->push_back({ptr, bytes, s, keep});
                return;
            } catch (...) {  // no memory for the queue entry: free at once instead
            }
        }
    }
    active_backend().release(ptr, bytes, s);
}

}  // namespace nu
