// src/runtime/cuda_memory_extras.cpp: events, mapped/managed memory, IPC on the driver API
#include "runtime/cuda_memory_extras.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "runtime/errors.h"

namespace nu::cuda_extras {
namespace {

CUstream as_stream(stream_handle s) { return static_cast<CUstream>(s); }
CUevent as_event(void* e) { return static_cast<CUevent>(e); }
CUdeviceptr as_dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

void* create_event(const driver_api& api, bool timing) {
    CUevent e = nullptr;
    NU_CU(api, cuEventCreate, &e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING);
    return e;
}

void destroy_event(const driver_api& api, void* event) noexcept { api.cuEventDestroy(as_event(event)); }

void record_event(const driver_api& api, void* event, stream_handle s) {
    NU_CU(api, cuEventRecord, as_event(event), as_stream(s));
}

bool query_event(const driver_api& api, void* event) {
    const CUresult status = api.cuEventQuery(as_event(event));
    if (status == CUDA_ERROR_NOT_READY) return false;
    check(status, "cuEventQuery");
    return true;
}

void synchronize_event(const driver_api& api, void* event) {
    NU_CU(api, cuEventSynchronize, as_event(event));
}

void stream_wait_event(const driver_api& api, stream_handle s, void* event) {
    NU_CU(api, cuStreamWaitEvent, as_stream(s), as_event(event), 0);
}

float event_elapsed_ms(const driver_api& api, void* start, void* end) {
    float ms = 0.0f;
    const CUresult status = api.cuEventElapsedTime(&ms, as_event(start), as_event(end));
    if (status == CUDA_ERROR_INVALID_HANDLE) {
        throw value_error("elapsed_time(): both events must be created with timing=True and "
                          "recorded (CUDA_ERROR_INVALID_HANDLE)");
    }
    if (status == CUDA_ERROR_NOT_READY) {
        throw value_error("elapsed_time(): an event has not completed yet; synchronize it first "
                          "(CUDA_ERROR_NOT_READY)");
    }
    check(status, "cuEventElapsedTime");
    return ms;
}

bool query_stream(const driver_api& api, stream_handle s) {
    const CUresult status = api.cuStreamQuery(as_stream(s));
    if (status == CUDA_ERROR_NOT_READY) return false;
    check(status, "cuStreamQuery");
    return true;
}

void launch_host_callback(const driver_api& api, stream_handle s, void (*fn)(void*), void* data) {
    NU_CU(api, cuLaunchHostFunc, as_stream(s), fn, data);
}

void* allocate_mapped(const driver_api& api, std::size_t bytes, bool portable, bool write_combined) {
    unsigned flags = CU_MEMHOSTALLOC_DEVICEMAP;
    if (portable) flags |= CU_MEMHOSTALLOC_PORTABLE;
    if (write_combined) flags |= CU_MEMHOSTALLOC_WRITECOMBINED;
    void* ptr = nullptr;
    const CUresult status = api.cuMemHostAlloc(&ptr, bytes ? bytes : 1, flags);
    if (status == CUDA_ERROR_OUT_OF_MEMORY) {
        throw out_of_memory("mapped_array(): cannot page-lock and map " + std::to_string(bytes) +
                            " bytes of host memory");
    }
    check(status, "cuMemHostAlloc");
    return ptr;
}

void* allocate_managed(const driver_api& api, std::size_t bytes) {
    // Managed memory may oversubscribe the device and fail later, on first touch, where no
    // error can be reported; refuse up front what the device cannot hold now.
    std::size_t free_bytes = 0, total = 0;
    NU_CU(api, cuMemGetInfo, &free_bytes, &total);
    if (bytes > free_bytes) {
        throw out_of_memory("managed_array(): cannot allocate " + std::to_string(bytes) +
                            " bytes of managed memory (" + std::to_string(free_bytes) + " of " +
                            std::to_string(total) + " bytes free on the device)");
    }
    CUdeviceptr ptr = 0;
    const CUresult status = api.cuMemAllocManaged(&ptr, bytes ? bytes : 1, CU_MEM_ATTACH_GLOBAL);
    if (status == CUDA_ERROR_OUT_OF_MEMORY) {
        throw out_of_memory("managed_array(): cannot allocate " + std::to_string(bytes) +
                            " bytes of managed memory");
    }
    check(status, "cuMemAllocManaged");
    return reinterpret_cast<void*>(ptr);
}

void release_managed(const driver_api& api, void* ptr) noexcept { api.cuMemFree(as_dptr(ptr)); }

bool register_host(const driver_api& api, void* ptr, std::size_t bytes, bool mapped, bool portable) {
    unsigned flags = 0;
    if (mapped) flags |= CU_MEMHOSTREGISTER_DEVICEMAP;
    if (portable) flags |= CU_MEMHOSTREGISTER_PORTABLE;
    const CUresult status = api.cuMemHostRegister(ptr, bytes, flags);
    if (status == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) return false;
    check(status, "cuMemHostRegister");
    return true;
}

void unregister_host(const driver_api& api, void* ptr) noexcept { api.cuMemHostUnregister(ptr); }

void* mapped_device_pointer(const driver_api& api, void* host) {
    CUdeviceptr dptr = 0;
    NU_CU(api, cuMemHostGetDevicePointer, &dptr, host, 0);
    return reinterpret_cast<void*>(dptr);
}

bool address_range(const driver_api& api, const void* ptr, const void** base, std::size_t* bytes) {
    CUdeviceptr b = 0;
    std::size_t n = 0;
    if (api.cuMemGetAddressRange(&b, &n, as_dptr(ptr)) == CUDA_SUCCESS) {
        *base = reinterpret_cast<const void*>(b);
        *bytes = n;
        return true;
    }
    // Mapped and registered host memory is not a device allocation, but UVA knows its range.
    void* start = nullptr;
    std::size_t size = 0;
    if (api.cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, as_dptr(ptr)) != CUDA_SUCCESS ||
        api.cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, as_dptr(ptr)) != CUDA_SUCCESS) {
        return false;
    }
    *base = start;
    *bytes = size;
    return true;
}

// Handles this process exported, and in-process opens of them. CUDA refuses to open a handle
// in the process that made it (CUDA_ERROR_INVALID_CONTEXT on an H100); such an open is the
// exporter's own pointer, and its close does nothing.
namespace {
std::mutex g_ipc_mutex;
std::unordered_map<std::string, void*> g_ipc_exported;
std::unordered_map<void*, long long> g_ipc_local_opens;
}  // namespace

std::string ipc_handle(const driver_api& api, void* base) {
    CUipcMemHandle handle{};
    const CUresult status = api.cuIpcGetMemHandle(&handle, as_dptr(base));
    if (status == CUDA_ERROR_INVALID_VALUE || status == CUDA_ERROR_NOT_SUPPORTED) {
        // Memory from the stream-ordered pool (cuMemAllocAsync) cannot be shared this way.
        throw value_error("get_ipc_handle(): this array's memory cannot be shared between processes "
                          "(CUDA refuses IPC for stream-ordered pool memory); allocate it with "
                          "cuda.set_memory_manager(cuda.IpcCapableMemoryManager) in effect");
    }
    check(status, "cuIpcGetMemHandle");
    std::string bytes(reinterpret_cast<const char*>(&handle), sizeof(handle));
    std::lock_guard<std::mutex> lock(g_ipc_mutex);
    g_ipc_exported[bytes] = base;
    return bytes;
}

void* open_ipc_handle(const driver_api& api, const std::string& bytes) {
    CUipcMemHandle handle{};
    if (bytes.size() != sizeof(handle)) {
        throw value_error("open_ipc_array(): an IPC handle has " + std::to_string(sizeof(handle)) +
                          " bytes (got " + std::to_string(bytes.size()) + ")");
    }
    {
        std::lock_guard<std::mutex> lock(g_ipc_mutex);
        const auto own = g_ipc_exported.find(bytes);
        if (own != g_ipc_exported.end()) {
            ++g_ipc_local_opens[own->second];
            return own->second;
        }
    }
    std::memcpy(&handle, bytes.data(), sizeof(handle));
    CUdeviceptr dptr = 0;
    NU_CU(api, cuIpcOpenMemHandle, &dptr, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    return reinterpret_cast<void*>(dptr);
}

void close_ipc_handle(const driver_api& api, void* ptr) noexcept {
    {
        std::lock_guard<std::mutex> lock(g_ipc_mutex);
        const auto local = g_ipc_local_opens.find(ptr);
        if (local != g_ipc_local_opens.end()) {
            if (--local->second == 0) g_ipc_local_opens.erase(local);
            return;
        }
    }
    api.cuIpcCloseMemHandle(as_dptr(ptr));
}

void profiler(const driver_api& api, bool start) {
    if (start) {
        NU_CU(api, cuProfilerStart);
    } else {
        NU_CU(api, cuProfilerStop);
    }
}

}  // namespace nu::cuda_extras
