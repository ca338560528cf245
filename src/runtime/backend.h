// src/runtime/backend.h: the device interface shared by the CUDA and host backends
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace nu {

struct device_info {
    int ordinal = 0;
    std::string name;
    int cc_major = 0;
    int cc_minor = 0;
    std::size_t total_memory = 0;
    int multiprocessors = 0;
    int max_threads_per_block = 0;
    int warp_size = 32;
    int max_block_dim[3] = {1024, 1024, 64};
    int max_grid_dim[3] = {2147483647, 65535, 65535};
    int shared_per_block = 48 * 1024;        // static + dynamic, without opting in
    int shared_per_block_optin = 48 * 1024;  // dynamic shared memory a kernel may opt in to
};

// A kernel launch's shape: blocks per grid, threads per block (x, y, z) and the bytes of
// dynamic shared memory.
struct launch_shape {
    unsigned grid[3] = {1, 1, 1};
    unsigned block[3] = {1, 1, 1};
    unsigned dynamic_shared = 0;
    bool cooperative = false;  // cuLaunchCooperativeKernel (grid synchronization)
    // kernel.forall(n) without a block size: at least n threads in blocks as large as the
    // kernel allows (Numba asks the occupancy API; its answer for most kernels is 1024).
    long long forall_tasks = -1;
};

struct memory_stats {
    std::size_t in_use = 0;       // bytes held by live arrays of this process
    std::size_t reserved = 0;     // bytes the pool holds (in use + cached)
    std::size_t allocations = 0;  // live allocations
    std::size_t free = 0;         // device memory free (driver's view)
    std::size_t total = 0;        // device memory in all
};

// A stream handle as the backend understands it (CUstream for CUDA; unused by the host
// backend, which runs everything in order on the calling thread). nullptr is the legacy
// default stream.
using stream_handle = void*;

// Everything above this interface (arrays, transfers, dispatch) is backend-agnostic, so
// the whole API runs unchanged under emulation (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1).
class backend {
public:
    virtual ~backend() = default;

    virtual bool emulated() const = 0;
    virtual int driver_version() const = 0;  // 1000*major + 10*minor; 0 when emulated
    virtual int device_count() const = 0;
    virtual device_info device(int ordinal) const = 0;
    // cuDeviceGetAttribute(`attribute`, device `ordinal`) for Numba's Device attributes; the
    // host backend has no driver to ask (-1: Python answers with the emulated device's values).
    virtual int device_attribute(int ordinal, int attribute) const { return -1; }
    virtual int current_device() const = 0;
    virtual void select_device(int ordinal) = 0;
    virtual void synchronize() = 0;

    virtual stream_handle create_stream() = 0;
    virtual void destroy_stream(stream_handle s) noexcept = 0;
    // False for a stream created with CU_STREAM_NON_BLOCKING (it does not order with the
    // legacy default stream); true where that cannot be told.
    virtual bool stream_is_blocking(stream_handle) const noexcept { return true; }
    virtual void synchronize_stream(stream_handle s) = 0;
    // Work queued on `waiter` from now on starts after the work queued so far on `waited`.
    virtual void wait_for(stream_handle waiter, stream_handle waited) = 0;

    // Device memory, stream-ordered. `allocate` trims the pool and retries once before
    // throwing out_of_memory; `release` never throws (it runs in destructors).
    virtual void* allocate(std::size_t bytes, stream_handle s) = 0;
    virtual void release(void* ptr, std::size_t bytes, stream_handle s) noexcept = 0;
    virtual memory_stats memory() const = 0;
    virtual void trim_pool() = 0;
    // True when `ptr` lies in device memory that kernels of this backend can read.
    virtual bool is_device_pointer(const void* ptr) const = 0;
    // Ordinal of the device that owns `ptr` (-1 when unknown).
    virtual int device_of(const void* ptr) const = 0;

    // Copies. `copy_to_device` may return before the copy finishes but never before the
    // source can be reused; `copy_to_host` returns with the data in place unless the
    // destination is pinned and `s` is an explicit stream (then it is ordered on `s` like
    // any other stream work). On the legacy default stream (nullptr) both are synchronous
    // for pinned memory too, as in Numba: the caller may reuse or read the host memory.
    virtual void copy_to_device(void* dst, const void* src, std::size_t bytes,
                                stream_handle s) = 0;
    virtual void copy_to_host(void* dst, const void* src, std::size_t bytes,
                              stream_handle s) = 0;
    virtual void copy_device_to_device(void* dst, const void* src, std::size_t bytes,
                                       stream_handle s) = 0;
    // `words` 4-byte words at `dst` (4-byte aligned) set to `value`, ordered on `s`
    // (cuMemsetD32Async): a scalar fill of a device array without a host copy.
    virtual void fill32(void* dst, std::uint32_t value, std::size_t words, stream_handle s) = 0;

    // Kernels of the CUDA backend: a module from a CUBIN image (modules stay loaded for the
    // life of the process), its functions by name, and a launch with one by-value
    // parameter block. The host backend runs host-compiled entry points instead and
    // throws here.
    virtual void* load_module(const std::string& image) = 0;
    virtual void* module_function(void* module, const std::string& name) = 0;
    virtual void launch(void* function, unsigned grid, unsigned block, stream_handle s,
                        void* params) = 0;
    // A @cuda.jit kernel launch: any shape, dynamic shared memory (opted in above the
    // default limit), one by-value parameter block.
    virtual void launch_shaped(void* function, const launch_shape& shape, stream_handle s,
                               void* params) = 0;
    // Most threads per block `function` can be launched with (its registers decide).
    virtual int function_max_threads(void* function) = 0;
    // The preferred shared memory carveout of `function` (percent of the unified L1/shared
    // storage, -1: the driver's default); a preference the driver may round.
    virtual void set_function_carveout(void* function, int percent) = 0;
    // Device address and size of the module's global variable `name` (debug launches read
    // the kernel's error record through it).
    virtual void* module_global(void* module, const std::string& name, std::size_t* bytes) = 0;

    // Blocks of `block` threads with `dynamic_shared` bytes that fit on one multiprocessor
    // at once (the occupancy API: registers and shared memory decide). Grid-stride
    // launches size their grids with it. The default is for backends without a device.
    virtual int max_active_blocks(void* function, unsigned block, std::size_t dynamic_shared) {
        (void)function;
        (void)dynamic_shared;
        return static_cast<int>(2048 / (block ? block : 1));
    }

    // An event marking the work queued on `s` so far, re-recording `reuse` when given; nullptr
    // where all work runs in order on the calling thread (the default, the host backend).
    virtual void* record_event(stream_handle s, void* reuse) {
        (void)s;
        return reuse;
    }
    // Work queued on `waiter` from now on starts after `event` (a record_event result).
    virtual void wait_event(stream_handle waiter, void* event) {
        (void)waiter;
        (void)event;
    }
    virtual void destroy_event(void* event) noexcept { (void)event; }

    // Page-locked host memory (plain host memory when emulated).
    virtual void* allocate_pinned(std::size_t bytes) = 0;
    virtual void release_pinned(void* ptr) noexcept = 0;

    // Failures of `release`/`release_pinned`, which cannot throw (they run in destructors
    // and finalizers, possibly on other threads): the messages since the last call, for
    // the caller to report (the bindings turn them into warnings). Empty when none.
    virtual std::string take_release_errors() { return {}; }

    // ---- The rest of Numba's host API (src/runtime/memory_extras.h wraps these) ----------
    // Events of cuda.event() (the engine's own ordering events are record_event above):
    // opaque handles. The host backend does all work in order on the calling thread, so
    // an event it records is complete at once and carries the time of recording.
    virtual void* event_create(bool timing) = 0;
    virtual void event_destroy(void* event) noexcept = 0;
    virtual void event_record(void* event, stream_handle s) = 0;
    virtual bool event_query(void* event) = 0;
    virtual void event_synchronize(void* event) = 0;
    virtual void stream_wait_event(stream_handle s, void* event) = 0;
    virtual float event_elapsed_ms(void* start, void* end) = 0;
    virtual bool query_stream(stream_handle s) = 0;
    // Runs fn(data) once the work queued so far on `s` is done (on a driver thread; the
    // host backend calls it before returning).
    virtual void launch_host_callback(stream_handle s, void (*fn)(void*), void* data) = 0;

    // Mapped (page-locked, device-visible) and managed memory. Both return the host address;
    // mapped_device_pointer gives the address kernels use (the same one under UVA).
    virtual void* allocate_mapped(std::size_t bytes, bool portable, bool write_combined) = 0;
    virtual void release_mapped(void* ptr) noexcept = 0;
    virtual void* allocate_managed(std::size_t bytes) = 0;
    virtual void release_managed(void* ptr) noexcept = 0;
    // Page-locks (and with `mapped`, maps) existing host memory until unregister_host.
    // False (and nothing to undo) when the memory was already page-locked by someone else.
    virtual bool register_host(void* ptr, std::size_t bytes, bool mapped, bool portable) = 0;
    virtual void unregister_host(void* ptr) noexcept = 0;
    virtual void* mapped_device_pointer(void* host) = 0;

    // The allocation containing `ptr` (device, mapped or managed memory): its base and size.
    // False when `ptr` lies in none (cuMemGetAddressRange; the host backend's own table).
    virtual bool address_range(const void* ptr, const void** base, std::size_t* bytes) const = 0;

    // Device memory outside the stream-ordered pool (cuMemAlloc), which CUDA IPC can share.
    virtual void* allocate_shareable(std::size_t bytes) = 0;
    virtual void release_shareable(void* ptr, std::size_t bytes) noexcept = 0;

    // Inter-process sharing of the allocation at `base` (64-byte CUipcMemHandle).
    virtual std::string ipc_handle(void* base) = 0;
    virtual void* open_ipc_handle(const std::string& handle) = 0;
    virtual void close_ipc_handle(void* ptr) noexcept = 0;

    virtual void profiler(bool start) = 0;  // cuProfilerStart / cuProfilerStop
};

std::unique_ptr<backend> make_host_backend();
// Returns nullptr and fills `why` when no CUDA device can be used.
std::unique_ptr<backend> make_cuda_backend(std::string* why);

}  // namespace nu
