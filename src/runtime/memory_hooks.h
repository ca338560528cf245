// src/runtime/memory_hooks.h: EMM plugins and deferred frees, between arrays and backends
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/runtime.h"

namespace nu {

// An External Memory Management plugin (Numba's EMM, e.g. RMM's): when one is installed,
// every device allocation of ours (arrays, ufunc outputs, reduction scratch) comes from it.
struct external_allocator {
    virtual ~external_allocator() = default;
    // Returns the device pointer of `bytes` (> 0) bytes. `owner` keeps the memory alive;
    // its deleter gives the memory back to the plugin (from any thread).
    virtual void* allocate(std::size_t bytes, stream_handle s, std::shared_ptr<void>* owner) = 0;
};

// Installs (or with nullptr removes) the plugin. Memory already allocated stays with
// whoever allocated it.
void set_external_allocator(std::shared_ptr<external_allocator> allocator);
std::shared_ptr<external_allocator> current_external_allocator();

// An observer of the host<->device copies of array data (Numba's tests patch the driver's
// cuMemcpyHtoD/cuMemcpyDtoH to watch them). When set, it is called before each such copy
// with its direction (true: host to device), destination, source and size; what it throws
// propagates and the copy is not made. Unset (the default) it costs one load per copy.
using transfer_observer = void (*)(bool to_device, void* dst, const void* src, std::size_t bytes);
void set_transfer_observer(transfer_observer observer);
void notify_transfer(bool to_device, void* dst, const void* src, std::size_t bytes);

// Numba's deallocation queue, for the memory we allocate ourselves: while a
// defer_cleanup() block is open, frees are queued instead of done (so no free can
// synchronize inside a timed region), and done when the last block closes.
void begin_deferred_cleanup();
void end_deferred_cleanup();
bool cleanup_deferred();
std::size_t pending_deallocations();
// Frees the queue now unless cleanup is deferred.
void flush_deallocations();
// Frees `ptr` on `s` now, or queues it while cleanup is deferred (`keep` keeps the stream
// alive in the queue).
void release_device_memory(void* ptr, std::size_t bytes, stream_handle s, const stream_ref& keep) noexcept;

}  // namespace nu
