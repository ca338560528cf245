// src/runtime/cuda_backend.cpp: the real device: driver API, stream-ordered pool, staging
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compile/sha256.h"
#include "runtime/backend.h"
#include "runtime/cuda_memory_extras.h"
#include "runtime/driver_api.h"
#include "runtime/errors.h"
#include "runtime/host_copy.h"

namespace nu {
namespace {

// Host copies above this size go through pinned staging buffers; below it the driver's
// own staging of pageable memory is as fast and needs no pipeline.
constexpr std::size_t k_direct_copy_limit = std::size_t{1} << 18;
// Two buffers of this size: one fills from pageable memory (over the thread pool:
// host_copy) while the other is in DMA.
constexpr std::size_t k_staging_chunk = std::size_t{8} << 20;

struct per_device {
    CUdevice device = 0;
    CUcontext context = nullptr;
    CUmemoryPool pool = nullptr;  // null where stream-ordered allocation is unsupported
    int shared_default = 48 * 1024;  // shared memory per block without opting in
};

// One occupancy question: the answer depends on the function, its block size and its
// dynamic shared memory only, so it is asked once per triple.
struct occupancy_key {
    CUfunction function;
    unsigned block;
    std::size_t shared;
    bool operator==(const occupancy_key& o) const {
        return function == o.function && block == o.block && shared == o.shared;
    }
};
struct occupancy_key_hash {
    std::size_t operator()(const occupancy_key& k) const {
        return std::hash<const void*>()(k.function) * 31u + k.block * 7u + k.shared;
    }
};

struct staging_buffer {
    void* host = nullptr;
    CUevent done = nullptr;  // recorded after the last copy that used `host`
};

class cuda_backend final : public backend {
public:
    explicit cuda_backend(const driver_api& api) : m_api(api) {
        int count = 0;
        NU_CU(m_api, cuDeviceGetCount, &count);
        m_devices.resize(static_cast<std::size_t>(count));
        select_device(0);
    }

    bool emulated() const override { return false; }

    int driver_version() const override {
        int version = 0;
        NU_CU(m_api, cuDriverGetVersion, &version);
        return version;
    }

    int device_count() const override { return static_cast<int>(m_devices.size()); }

    int device_attribute(int ordinal, int attr) const override {
        check_ordinal(ordinal, "Device");
        CUdevice dev = 0;
        NU_CU(m_api, cuDeviceGet, &dev, ordinal);
        return attribute(static_cast<CUdevice_attribute>(attr), dev);
    }

    device_info device(int ordinal) const override {
        check_ordinal(ordinal, "get_device");
        CUdevice dev = 0;
        NU_CU(m_api, cuDeviceGet, &dev, ordinal);
        device_info info;
        info.ordinal = ordinal;
        char name[256] = {};
        NU_CU(m_api, cuDeviceGetName, name, sizeof(name), dev);
        info.name = name;
        info.cc_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        info.cc_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        info.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
        info.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
        info.warp_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
        info.max_block_dim[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, dev);
        info.max_block_dim[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, dev);
        info.max_block_dim[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, dev);
        info.max_grid_dim[0] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, dev);
        info.max_grid_dim[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, dev);
        info.max_grid_dim[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, dev);
        info.shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev);
        info.shared_per_block_optin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
        std::size_t total = 0;
        NU_CU(m_api, cuDeviceTotalMem, &total, dev);
        info.total_memory = total;
        return info;
    }

    int current_device() const override { return m_current; }

    void select_device(int ordinal) override {
        check_ordinal(ordinal, "select_device");
        per_device& d = m_devices[static_cast<std::size_t>(ordinal)];
        if (d.context == nullptr) {
            NU_CU(m_api, cuDeviceGet, &d.device, ordinal);
            NU_CU(m_api, cuDevicePrimaryCtxRetain, &d.context, d.device);
            NU_CU(m_api, cuCtxSetCurrent, d.context);
            d.shared_default = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, d.device);
            if (attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, d.device) != 0) {
                NU_CU(m_api, cuDeviceGetDefaultMemPool, &d.pool, d.device);
                // Keep up to half the device cached in the pool: frees are then free, and
                // other libraries in the process can still get memory back after a trim.
                std::size_t total = 0;
                NU_CU(m_api, cuDeviceTotalMem, &total, d.device);
                cuuint64_t threshold = total / 2;
                NU_CU(m_api, cuMemPoolSetAttribute, d.pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                      &threshold);
            }
        }
        m_current = ordinal;
        make_current();
    }

    void synchronize() override {
        make_current();
        NU_CU(m_api, cuCtxSynchronize);
    }

    stream_handle create_stream() override {
        make_current();
        CUstream s = nullptr;
        // Blocking streams: the legacy default stream (what stream=0 means) orders with them.
        NU_CU(m_api, cuStreamCreate, &s, CU_STREAM_DEFAULT);
        return s;
    }

    void destroy_stream(stream_handle s) noexcept override {
        m_api.cuStreamDestroy(static_cast<CUstream>(s));
    }

    bool stream_is_blocking(stream_handle s) const noexcept override {
        unsigned flags = 0;
        return m_api.cuStreamGetFlags(static_cast<CUstream>(s), &flags) != CUDA_SUCCESS ||
               (flags & CU_STREAM_NON_BLOCKING) == 0;
    }

    void synchronize_stream(stream_handle s) override {
        make_current();
        NU_CU(m_api, cuStreamSynchronize, static_cast<CUstream>(s));
    }

    void wait_for(stream_handle waiter, stream_handle waited) override {
        if (waiter == waited) return;
        make_current();
        CUevent event = nullptr;
        NU_CU(m_api, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
        NU_CU(m_api, cuEventRecord, event, static_cast<CUstream>(waited));
        NU_CU(m_api, cuStreamWaitEvent, static_cast<CUstream>(waiter), event, 0);
        m_api.cuEventDestroy(event);  // released once the wait has been satisfied
    }

    void* allocate(std::size_t bytes, stream_handle s) override {
        make_current();
        const per_device& d = current();
        CUdeviceptr ptr = 0;
        const std::size_t request = bytes ? bytes : 1;
        CUresult status = try_allocate(d, &ptr, request, s);
        if (status == CUDA_ERROR_OUT_OF_MEMORY) {
            // Memory freed on other streams returns to the pool only once that work is
            // done; wait for it, give the pool's cache back, and try once more.
            m_api.cuCtxSynchronize();
            if (d.pool != nullptr) m_api.cuMemPoolTrimTo(d.pool, 0);
            status = try_allocate(d, &ptr, request, s);
        }
        if (status == CUDA_ERROR_OUT_OF_MEMORY) {
            std::size_t free_bytes = 0, total = 0;
            m_api.cuMemGetInfo(&free_bytes, &total);
            throw out_of_memory("out of device memory: cannot allocate " +
                                std::to_string(bytes) + " bytes (" + std::to_string(free_bytes) +
                                " of " + std::to_string(total) + " bytes free on device " +
                                std::to_string(m_current) + ")");
        }
        check(status, d.pool ? "cuMemAllocAsync" : "cuMemAlloc");
        m_in_use += bytes;
        ++m_allocations;
        return reinterpret_cast<void*>(ptr);
    }

    void release(void* ptr, std::size_t bytes, stream_handle s) noexcept override {
        if (ptr == nullptr) return;
        const auto dptr = reinterpret_cast<CUdeviceptr>(ptr);
        bind_context_quietly();  // a finalizer may run on a thread that never used CUDA
        // Errors cannot be thrown from a destructor: they are kept for take_release_errors.
        const CUresult status = current().pool != nullptr
                                    ? m_api.cuMemFreeAsync(dptr, static_cast<CUstream>(s))
                                    : m_api.cuMemFree(dptr);
        note_release_error(status, current().pool != nullptr ? "cuMemFreeAsync" : "cuMemFree");
        m_in_use -= bytes;
        --m_allocations;
    }

    memory_stats memory() const override {
        make_current();  // cuMemGetInfo reports on the calling thread's context
        memory_stats stats;
        stats.in_use = m_in_use;
        stats.allocations = m_allocations;
        const per_device& d = current();
        if (d.pool != nullptr) {
            cuuint64_t reserved = 0;
            NU_CU(m_api, cuMemPoolGetAttribute, d.pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                  &reserved);
            stats.reserved = reserved;
        } else {
            stats.reserved = m_in_use;
        }
        NU_CU(m_api, cuMemGetInfo, &stats.free, &stats.total);
        return stats;
    }

    void trim_pool() override {
        make_current();
        NU_CU(m_api, cuCtxSynchronize);
        if (current().pool != nullptr) NU_CU(m_api, cuMemPoolTrimTo, current().pool, 0);
    }

    bool is_device_pointer(const void* ptr) const override {
        const unsigned type = pointer_info(ptr).first;
        return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED;
    }

    int device_of(const void* ptr) const override { return pointer_info(ptr).second; }

    void copy_to_device(void* dst, const void* src, std::size_t bytes, stream_handle s) override {
        make_current();
        const auto stream = static_cast<CUstream>(s);
        const bool pinned = is_pinned(src);
        if (bytes <= k_direct_copy_limit || pinned) {
            NU_CU(m_api, cuMemcpyHtoDAsync, reinterpret_cast<CUdeviceptr>(dst), src, bytes, stream);
            // The DMA reads pinned memory until it completes. On the legacy default stream
            // the caller may reuse the source at once (Numba is synchronous for stream=0);
            // a pageable source was already staged by the driver when the call returned.
            if (pinned && stream == nullptr) NU_CU(m_api, cuStreamSynchronize, stream);
            return;
        }
        std::lock_guard<std::mutex> lock(m_staging_mutex);
        ensure_staging();
        for (std::size_t offset = 0, i = 0; offset < bytes; offset += k_staging_chunk, ++i) {
            staging_buffer& buf = m_staging[i % 2];
            const std::size_t n = std::min(k_staging_chunk, bytes - offset);
            NU_CU(m_api, cuEventSynchronize, buf.done);  // its previous DMA has finished
            host_copy(buf.host, static_cast<const char*>(src) + offset, n);
            NU_CU(m_api, cuMemcpyHtoDAsync, reinterpret_cast<CUdeviceptr>(dst) + offset, buf.host,
                  n, stream);
            NU_CU(m_api, cuEventRecord, buf.done, stream);
        }
    }

    void copy_to_host(void* dst, const void* src, std::size_t bytes, stream_handle s) override {
        make_current();
        const auto stream = static_cast<CUstream>(s);
        const auto dsrc = reinterpret_cast<CUdeviceptr>(src);
        if (is_pinned(dst)) {
            NU_CU(m_api, cuMemcpyDtoHAsync, dst, dsrc, bytes, stream);
            // Only an explicit stream leaves the result in flight: on the legacy default
            // stream the caller reads it as soon as we return.
            if (stream == nullptr) NU_CU(m_api, cuStreamSynchronize, stream);
            return;
        }
        if (bytes <= k_direct_copy_limit) {
            NU_CU(m_api, cuMemcpyDtoHAsync, dst, dsrc, bytes, stream);
            NU_CU(m_api, cuStreamSynchronize, stream);
            return;
        }
        std::lock_guard<std::mutex> lock(m_staging_mutex);
        ensure_staging();
        // Pipeline: chunk i+1 is in DMA while chunk i is copied out to pageable memory.
        const std::size_t chunks = (bytes + k_staging_chunk - 1) / k_staging_chunk;
        auto issue = [&](std::size_t i) {
            staging_buffer& buf = m_staging[i % 2];
            // The buffer's last copy may be on another stream: order after it on the GPU.
            NU_CU(m_api, cuStreamWaitEvent, stream, buf.done, 0);
            const std::size_t offset = i * k_staging_chunk;
            const std::size_t n = std::min(k_staging_chunk, bytes - offset);
            NU_CU(m_api, cuMemcpyDtoHAsync, buf.host, dsrc + offset, n, stream);
            NU_CU(m_api, cuEventRecord, buf.done, stream);
        };
        issue(0);
        for (std::size_t i = 0; i < chunks; ++i) {
            if (i + 1 < chunks) issue(i + 1);
            staging_buffer& buf = m_staging[i % 2];
            NU_CU(m_api, cuEventSynchronize, buf.done);
            const std::size_t offset = i * k_staging_chunk;
            host_copy(static_cast<char*>(dst) + offset, buf.host,
                      std::min(k_staging_chunk, bytes - offset));
        }
    }

    void copy_device_to_device(void* dst, const void* src, std::size_t bytes,
                               stream_handle s) override {
        make_current();
        NU_CU(m_api, cuMemcpyDtoDAsync, reinterpret_cast<CUdeviceptr>(dst),
              reinterpret_cast<CUdeviceptr>(src), bytes, static_cast<CUstream>(s));
    }

    void fill32(void* dst, std::uint32_t value, std::size_t words, stream_handle s) override {
        make_current();
        NU_CU(m_api, cuMemsetD32Async, reinterpret_cast<CUdeviceptr>(dst), value, words, static_cast<CUstream>(s));
    }

    // One module per distinct image and device. Every ufunc object of the same function
    // gets the same cached binary; loading it once each kept a module per object alive
    // (modules are never unloaded: functions of them may be in flight), and host memory
    // grew by about 1 MB per vectorize(...) object on an H100.
    void* load_module(const std::string& image) override {
        make_current();
        const std::string key = std::to_string(m_current) + ':' + sha256().update(image).hex_digest();
        std::lock_guard<std::mutex> lock(m_module_mutex);
        const auto found = m_modules.find(key);
        if (found != m_modules.end()) return found->second;
        CUmodule module = nullptr;
        NU_CU(m_api, cuModuleLoadData, &module, image.data());
        m_modules.emplace(key, module);
        return module;
    }

    void* module_function(void* module, const std::string& name) override {
        make_current();
        CUfunction function = nullptr;
        NU_CU(m_api, cuModuleGetFunction, &function, static_cast<CUmodule>(module), name.c_str());
        return function;
    }

    void launch(void* function, unsigned grid, unsigned block, stream_handle s,
                void* params) override {
        make_current();
        void* args[] = {params};
        NU_CU(m_api, cuLaunchKernel, static_cast<CUfunction>(function), grid, 1, 1, block, 1, 1, 0,
              static_cast<CUstream>(s), args, nullptr);
    }

    void launch_shaped(void* function, const launch_shape& shape, stream_handle s,
                       void* params) override {
        make_current();
        auto f = static_cast<CUfunction>(function);
        if (shape.dynamic_shared > 0) allow_dynamic_shared(f, static_cast<int>(shape.dynamic_shared));
        void* args[] = {params};
        if (shape.cooperative) {
            NU_CU(m_api, cuLaunchCooperativeKernel, f, shape.grid[0], shape.grid[1], shape.grid[2],
                  shape.block[0], shape.block[1], shape.block[2], shape.dynamic_shared,
                  static_cast<CUstream>(s), args);
            return;
        }
        NU_CU(m_api, cuLaunchKernel, f, shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0],
              shape.block[1], shape.block[2], shape.dynamic_shared, static_cast<CUstream>(s), args, nullptr);
    }

    int function_max_threads(void* function) override {
        make_current();
        int n = 0;
        NU_CU(m_api, cuFuncGetAttribute, &n, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
              static_cast<CUfunction>(function));
        return n;
    }

    void set_function_carveout(void* function, int percent) override {
        make_current();
        NU_CU(m_api, cuFuncSetAttribute, static_cast<CUfunction>(function),
              CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent);
    }

    void* module_global(void* module, const std::string& name, std::size_t* bytes) override {
        make_current();
        CUdeviceptr ptr = 0;
        std::size_t size = 0;
        NU_CU(m_api, cuModuleGetGlobal, &ptr, &size, static_cast<CUmodule>(module), name.c_str());
        if (bytes != nullptr) *bytes = size;
        return reinterpret_cast<void*>(ptr);
    }

    void* allocate_pinned(std::size_t bytes) override {
        make_current();
        void* ptr = nullptr;
        const CUresult status =
            m_api.cuMemHostAlloc(&ptr, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE);
        if (status == CUDA_ERROR_OUT_OF_MEMORY) {
            throw out_of_memory("pinned_array(): cannot page-lock " + std::to_string(bytes) +
                                " bytes of host memory");
        }
        check(status, "cuMemHostAlloc");
        return ptr;
    }

    void* record_event(stream_handle s, void* reuse) override {
        make_current();
        auto event = static_cast<CUevent>(reuse);
        if (event == nullptr) NU_CU(m_api, cuEventCreate, &event, CU_EVENT_DISABLE_TIMING);
        const CUresult status = m_api.cuEventRecord(event, static_cast<CUstream>(s));
        if (status != CUDA_SUCCESS) {
            if (reuse == nullptr) m_api.cuEventDestroy(event);
            check(status, "cuEventRecord");
        }
        return event;
    }

    void wait_event(stream_handle waiter, void* event) override {
        if (event == nullptr) return;
        make_current();
        NU_CU(m_api, cuStreamWaitEvent, static_cast<CUstream>(waiter), static_cast<CUevent>(event), 0);
    }

    void destroy_event(void* event) noexcept override {
        if (event != nullptr) m_api.cuEventDestroy(static_cast<CUevent>(event));
    }

    int max_active_blocks(void* function, unsigned block, std::size_t dynamic_shared) override {
        const occupancy_key key{static_cast<CUfunction>(function), block, dynamic_shared};
        {
            std::lock_guard<std::mutex> lock(m_occupancy_mutex);
            auto it = m_occupancy.find(key);
            if (it != m_occupancy.end()) return it->second;
        }
        make_current();
        // The launch opts in to this much dynamic shared memory: count it as it will be.
        if (dynamic_shared > 0) allow_dynamic_shared(key.function, static_cast<int>(dynamic_shared));
        int blocks = 0;
        NU_CU(m_api, cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, key.function,
              static_cast<int>(block), dynamic_shared);
        blocks = blocks > 0 ? blocks : 1;  // 0 means the launch fails; let it say why
        std::lock_guard<std::mutex> lock(m_occupancy_mutex);
        m_occupancy.emplace(key, blocks);
        return blocks;
    }

    void release_pinned(void* ptr) noexcept override {
        // Finalizers run on any thread, perhaps one where no context was ever current;
        // cuMemFreeHost needs one.
        bind_context_quietly();
        note_release_error(m_api.cuMemFreeHost(ptr), "cuMemFreeHost");
    }

    std::string take_release_errors() override {
        std::lock_guard<std::mutex> lock(m_error_mutex);
        std::string out;
        out.swap(m_release_errors);
        return out;
    }

    // Events, mapped/managed memory, IPC: src/runtime/cuda_memory_extras.cpp.
    void* event_create(bool timing) override { make_current(); return cuda_extras::create_event(m_api, timing); }
    void event_destroy(void* e) noexcept override { cuda_extras::destroy_event(m_api, e); }
    void event_record(void* e, stream_handle s) override { make_current(); cuda_extras::record_event(m_api, e, s); }
    bool event_query(void* e) override { make_current(); return cuda_extras::query_event(m_api, e); }
    void event_synchronize(void* e) override { make_current(); cuda_extras::synchronize_event(m_api, e); }
    void stream_wait_event(stream_handle s, void* e) override { make_current(); cuda_extras::stream_wait_event(m_api, s, e); }
    float event_elapsed_ms(void* a, void* b) override { make_current(); return cuda_extras::event_elapsed_ms(m_api, a, b); }
    bool query_stream(stream_handle s) override { make_current(); return cuda_extras::query_stream(m_api, s); }
    void launch_host_callback(stream_handle s, void (*fn)(void*), void* data) override {
        make_current();
        cuda_extras::launch_host_callback(m_api, s, fn, data);
    }
    void* allocate_mapped(std::size_t bytes, bool portable, bool wc) override {
        make_current();
        return cuda_extras::allocate_mapped(m_api, bytes, portable, wc);
    }
    void release_mapped(void* ptr) noexcept override { m_api.cuMemFreeHost(ptr); }
    void* allocate_managed(std::size_t bytes) override { make_current(); return cuda_extras::allocate_managed(m_api, bytes); }
    void release_managed(void* ptr) noexcept override { cuda_extras::release_managed(m_api, ptr); }
    bool register_host(void* ptr, std::size_t bytes, bool mapped, bool portable) override {
        make_current();
        return cuda_extras::register_host(m_api, ptr, bytes, mapped, portable);
    }
    void unregister_host(void* ptr) noexcept override { cuda_extras::unregister_host(m_api, ptr); }
    void* mapped_device_pointer(void* host) override { make_current(); return cuda_extras::mapped_device_pointer(m_api, host); }
    bool address_range(const void* ptr, const void** base, std::size_t* bytes) const override {
        return cuda_extras::address_range(m_api, ptr, base, bytes);
    }
    void* allocate_shareable(std::size_t bytes) override {
        make_current();
        CUdeviceptr ptr = 0;
        const CUresult status = m_api.cuMemAlloc(&ptr, bytes ? bytes : 1);
        if (status == CUDA_ERROR_OUT_OF_MEMORY) {
            throw out_of_memory("out of device memory: cannot allocate " + std::to_string(bytes) + " bytes");
        }
        check(status, "cuMemAlloc");
        m_in_use += bytes;
        ++m_allocations;
        return reinterpret_cast<void*>(ptr);
    }
    void release_shareable(void* ptr, std::size_t bytes) noexcept override {
        if (ptr == nullptr) return;
        CUcontext ctx = nullptr;  // a finalizer may run on a thread that never used CUDA
        m_api.cuCtxGetCurrent(&ctx);
        if (ctx != current().context) m_api.cuCtxSetCurrent(current().context);
        m_api.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
        m_in_use -= bytes;
        --m_allocations;
    }
    std::string ipc_handle(void* base) override { make_current(); return cuda_extras::ipc_handle(m_api, base); }
    void* open_ipc_handle(const std::string& h) override { make_current(); return cuda_extras::open_ipc_handle(m_api, h); }
    void close_ipc_handle(void* ptr) noexcept override { cuda_extras::close_ipc_handle(m_api, ptr); }
    void profiler(bool start) override { make_current(); cuda_extras::profiler(m_api, start); }

private:
    int attribute(CUdevice_attribute attr, CUdevice dev) const {
        int value = 0;
        NU_CU(m_api, cuDeviceGetAttribute, &value, attr, dev);
        return value;
    }

    void check_ordinal(int ordinal, const char* api) const {
        if (ordinal < 0 || ordinal >= device_count()) {
            throw value_error(std::string(api) + "(): no CUDA device " + std::to_string(ordinal) +
                              " (this machine has " + std::to_string(device_count()) + ")");
        }
    }

    const per_device& current() const { return m_devices[static_cast<std::size_t>(m_current)]; }

    // Other libraries may switch the thread's context; make ours current before each call.
    void make_current() const {
        CUcontext ctx = nullptr;
        m_api.cuCtxGetCurrent(&ctx);
        if (ctx != current().context) NU_CU(m_api, cuCtxSetCurrent, current().context);
    }

    // make_current() for noexcept paths: failures show up in the call that follows.
    void bind_context_quietly() const noexcept {
        CUcontext ctx = nullptr;
        m_api.cuCtxGetCurrent(&ctx);
        if (ctx != current().context) m_api.cuCtxSetCurrent(current().context);
    }

    void note_release_error(CUresult status, const char* call) noexcept {
        // At exit the driver may be shut down first; the memory goes with the context.
        if (status == CUDA_SUCCESS || status == CUDA_ERROR_DEINITIALIZED) return;
        try {
            const char* name = nullptr;
            m_api.cuGetErrorName(status, &name);
            std::lock_guard<std::mutex> lock(m_error_mutex);
            if (m_release_errors.size() < 4096) {
                m_release_errors += std::string(m_release_errors.empty() ? "" : "; ") + call +
                                    "() failed: " + (name ? name : "CUDA_ERROR_UNKNOWN");
            }
        } catch (...) {  // out of memory while reporting: nothing more can be done
        }
    }

    // Dynamic shared memory above the function's current maximum (by default the
    // device's per-block limit less the function's static shared memory) needs an opt-in;
    // the caller checked static + dynamic against the opt-in limit. The maximum only
    // grows, so concurrent launches with smaller sizes never see it shrink under them.
    void allow_dynamic_shared(CUfunction f, int dynamic) {
        std::lock_guard<std::mutex> lock(m_shared_mutex);
        auto it = m_dynamic_shared_max.find(f);
        if (it == m_dynamic_shared_max.end()) {
            int static_bytes = 0;
            NU_CU(m_api, cuFuncGetAttribute, &static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
            it = m_dynamic_shared_max.emplace(f, current().shared_default - static_bytes).first;
        }
        if (dynamic <= it->second) return;
        NU_CU(m_api, cuFuncSetAttribute, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic);
        it->second = dynamic;
    }

    CUresult try_allocate(const per_device& d, CUdeviceptr* ptr, std::size_t bytes,
                          stream_handle s) {
        return d.pool != nullptr ? m_api.cuMemAllocAsync(ptr, bytes, static_cast<CUstream>(s))
                                 : m_api.cuMemAlloc(ptr, bytes);
    }

    bool is_pinned(const void* ptr) const { return pointer_info(ptr).first == CU_MEMORYTYPE_HOST; }

    // The memory type (0 for memory CUDA does not know, such as pageable host memory) and
    // the device ordinal (-1 then) of a pointer. cuPointerGetAttributes answers
    // CUDA_SUCCESS for unknown pointers, where cuPointerGetAttribute fails with
    // CUDA_ERROR_INVALID_VALUE, which compute-sanitizer reports on every host copy.
    std::pair<unsigned, int> pointer_info(const void* ptr) const {
        unsigned type = 0;
        int ordinal = -1;
        CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
        void* data[] = {&type, &ordinal};
        if (m_api.cuPointerGetAttributes(2, attributes, data, reinterpret_cast<CUdeviceptr>(ptr)) !=
                CUDA_SUCCESS ||
            type == 0) {
            return {0, -1};
        }
        return {type, ordinal};
    }

    void ensure_staging() {
        for (staging_buffer& buf : m_staging) {
            if (buf.host != nullptr) continue;
            NU_CU(m_api, cuMemHostAlloc, &buf.host, k_staging_chunk, CU_MEMHOSTALLOC_PORTABLE);
            NU_CU(m_api, cuEventCreate, &buf.done, CU_EVENT_DISABLE_TIMING);
        }
    }

    const driver_api& m_api;
    std::vector<per_device> m_devices;
    int m_current = 0;
    std::atomic<std::size_t> m_in_use{0};
    std::atomic<std::size_t> m_allocations{0};
    std::mutex m_staging_mutex;
    staging_buffer m_staging[2];
    std::mutex m_shared_mutex;
    std::unordered_map<CUfunction, int> m_dynamic_shared_max;  // bytes allowed without a new opt-in
    std::mutex m_occupancy_mutex;
    std::mutex m_module_mutex;
    std::unordered_map<std::string, CUmodule> m_modules;  // "device:sha256 of the image"
    std::unordered_map<occupancy_key, int, occupancy_key_hash> m_occupancy;
    std::mutex m_error_mutex;
    std::string m_release_errors;
};

}  // namespace

std::unique_ptr<backend> make_cuda_backend(std::string* why) {
    const driver_api* api = load_driver(why);
    if (api == nullptr) return nullptr;
    int count = 0;
    if (api->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
        *why = "the CUDA driver reports no devices";
        return nullptr;
    }
    try {
        return std::make_unique<cuda_backend>(*api);
    } catch (const error& e) {
        *why = e.what();
        return nullptr;
    }
}

}  // namespace nu
