// tests/cxx/fake_cuda_driver.cpp: a stand-in libcuda for the tests, loaded through
// NUMBACUDA_UFUNC_LIBCUDA, so the CUDA backend's host code (pool, staging, streams,
// events, launches, interop) runs on a machine without a GPU and its driver traffic can be
// counted. Device memory is host memory (copies and memsets really move bytes), modules
// and functions accept any image, kernels do nothing, the one device reports H100-like
// attributes (cc 9.0, 132 SMs). Every entry point counts its calls; the tests read the
// counts through ctypes (tests/_fake_driver.py), which shares this loaded instance since
// dlopen of the same path returns the same handle.
//
// It implements exactly the entry points src/cuda_api/driver.h declares, under the
// symbols libcuda exports, and static_asserts each signature against driver.h's.
// Built by tests/_fake_driver.py with the host compiler; never part of the wheel.
#include "cuda_api/driver.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#define NU_FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

enum call_id {
#define NU_FAKE_ID(name, symbol, params) id_##name,
    NU_CUDA_DRIVER_SIGNATURES(NU_FAKE_ID)
#undef NU_FAKE_ID
    id_count
};

const char* const k_names[] = {
#define NU_FAKE_NAME(name, symbol, params) #name,
    NU_CUDA_DRIVER_SIGNATURES(NU_FAKE_NAME)
#undef NU_FAKE_NAME
};

std::atomic<long long> g_calls[id_count];

inline void count(call_id id) { g_calls[id].fetch_add(1, std::memory_order_relaxed); }

struct block {
    std::size_t bytes;
    unsigned type;  // CU_MEMORYTYPE_*
    bool owned;     // allocated here (freed here) rather than registered
};

// Every allocation and registration by its start address: pointer attributes, address
// ranges and frees look blocks up here.
std::mutex g_mutex;
std::map<std::uintptr_t, block> g_blocks;
std::size_t g_device_bytes = 0;
std::map<std::string, void*> g_globals;  // "module:name" -> zeroed device memory

struct fake_stream { unsigned flags; };
struct fake_event { std::chrono::steady_clock::time_point when; };
struct fake_module { int unused; };
struct fake_function { int unused; };
struct fake_context { int unused; };

fake_context g_context;
thread_local CUcontext t_current = nullptr;
int g_pool_token;

struct last_launch_info {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared;
};
last_launch_info g_last_launch;

constexpr std::size_t k_total_memory = std::size_t{80} << 30;

// The block containing `p`, or g_blocks.end(). Caller holds g_mutex.
std::map<std::uintptr_t, block>::iterator find_block(std::uintptr_t p) {
    auto it = g_blocks.upper_bound(p);
    if (it == g_blocks.begin()) return g_blocks.end();
    --it;
    const std::size_t extent = it->second.bytes ? it->second.bytes : 1;
    return p < it->first + extent ? it : g_blocks.end();
}

// Whether [p, p + bytes) lies inside one known block (device, managed, pinned or
// registered: with unified addressing the driver's copies take any of them), as the real
// driver's copies and memsets require of their device side.
bool known_range(std::uintptr_t p, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = find_block(p);
    return it != g_blocks.end() && p + bytes <= it->first + (it->second.bytes ? it->second.bytes : 1);
}

CUresult allocate(void** out, std::size_t bytes, unsigned type) {
    if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    // 256-byte alignment, as cudaMalloc guarantees; zero-filled so runs are deterministic.
    const std::size_t rounded = ((bytes ? bytes : 1) + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, rounded);
    if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    std::memset(p, 0, rounded);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_blocks[reinterpret_cast<std::uintptr_t>(p)] = block{bytes, type, true};
    if (type != CU_MEMORYTYPE_HOST) g_device_bytes += bytes;
    *out = p;
    return CUDA_SUCCESS;
}

CUresult release(std::uintptr_t p, bool host) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_blocks.find(p);
    if (it == g_blocks.end() || !it->second.owned || (it->second.type == CU_MEMORYTYPE_HOST) != host) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!host) g_device_bytes -= it->second.bytes;
    g_blocks.erase(it);
    std::free(reinterpret_cast<void*>(p));
    return CUDA_SUCCESS;
}

int device_attribute(CUdevice_attribute attr) {
    switch (attr) {
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
        case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
        default: return 0;
    }
}

}  // namespace

// ---- the driver API -------------------------------------------------------------------

NU_FAKE_EXPORT CUresult cuInit(unsigned int) { count(id_cuInit); return CUDA_SUCCESS; }

NU_FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
    count(id_cuDriverGetVersion);
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    // CUDA 13.0 unless NU_FAKE_DRIVER_VERSION says otherwise (tests/_fake_driver.py sets it
    // to the newest NVRTC major found, so the engine's NVRTC choice accepts what exists).
    const char* text = std::getenv("NU_FAKE_DRIVER_VERSION");
    *version = text != nullptr && *text != '\0' ? std::atoi(text) : 13000;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
    count(id_cuGetErrorName);
    switch (error) {
        case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
        case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
        case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
        case CUDA_ERROR_NOT_READY: *name = "CUDA_ERROR_NOT_READY"; break;
        case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: *name = "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"; break;
        case CUDA_ERROR_NOT_SUPPORTED: *name = "CUDA_ERROR_NOT_SUPPORTED"; break;
        default: *name = nullptr; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
    count(id_cuGetErrorString);
    *text = error == CUDA_SUCCESS ? "no error" : "error reported by the fake CUDA driver";
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuDeviceGetCount(int* n) { count(id_cuDeviceGetCount); *n = 1; return CUDA_SUCCESS; }

NU_FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    count(id_cuDeviceGet);
    if (ordinal != 0) return CUDA_ERROR_INVALID_VALUE;
    *device = 0;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice) {
    count(id_cuDeviceGetName);
    if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::snprintf(name, static_cast<std::size_t>(len), "%s", "Fake H100 (numbacuda_ufunc test driver)");
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attr, CUdevice device) {
    count(id_cuDeviceGetAttribute);
    if (value == nullptr || device != 0) return CUDA_ERROR_INVALID_VALUE;
    *value = device_attribute(attr);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) {
    count(id_cuDeviceTotalMem);
    *bytes = k_total_memory;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice) {
    count(id_cuDevicePrimaryCtxRetain);
    *ctx = reinterpret_cast<CUcontext>(&g_context);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) {
    count(id_cuDevicePrimaryCtxRelease);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) { count(id_cuCtxSetCurrent); t_current = ctx; return CUDA_SUCCESS; }
NU_FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext* ctx) { count(id_cuCtxGetCurrent); *ctx = t_current; return CUDA_SUCCESS; }
NU_FAKE_EXPORT CUresult cuCtxSynchronize() { count(id_cuCtxSynchronize); return CUDA_SUCCESS; }

NU_FAKE_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
    count(id_cuMemGetInfo);
    std::lock_guard<std::mutex> lock(g_mutex);
    *total = k_total_memory;
    *free_bytes = k_total_memory - g_device_bytes;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
    count(id_cuStreamCreate);
    *stream = reinterpret_cast<CUstream>(new fake_stream{flags});
    return CUDA_SUCCESS;
}

// The null, legacy and per-thread handles are not objects of ours.
static bool special_stream(CUstream s) {
    return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

NU_FAKE_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
    count(id_cuStreamDestroy);
    if (special_stream(stream)) return CUDA_ERROR_INVALID_HANDLE;
    delete reinterpret_cast<fake_stream*>(stream);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuStreamGetFlags(CUstream stream, unsigned int* flags) {
    count(id_cuStreamGetFlags);
    *flags = special_stream(stream) ? 0u : reinterpret_cast<fake_stream*>(stream)->flags;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuStreamSynchronize(CUstream) { count(id_cuStreamSynchronize); return CUDA_SUCCESS; }
NU_FAKE_EXPORT CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int) { count(id_cuStreamWaitEvent); return CUDA_SUCCESS; }
NU_FAKE_EXPORT CUresult cuStreamQuery(CUstream) { count(id_cuStreamQuery); return CUDA_SUCCESS; }

NU_FAKE_EXPORT CUresult cuEventCreate(CUevent* event, unsigned int) {
    count(id_cuEventCreate);
    *event = reinterpret_cast<CUevent>(new fake_event{std::chrono::steady_clock::now()});
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent event) {
    count(id_cuEventDestroy);
    if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    delete reinterpret_cast<fake_event*>(event);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuEventRecord(CUevent event, CUstream) {
    count(id_cuEventRecord);
    if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    reinterpret_cast<fake_event*>(event)->when = std::chrono::steady_clock::now();
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuEventSynchronize(CUevent) { count(id_cuEventSynchronize); return CUDA_SUCCESS; }
NU_FAKE_EXPORT CUresult cuEventQuery(CUevent) { count(id_cuEventQuery); return CUDA_SUCCESS; }

NU_FAKE_EXPORT CUresult cuEventElapsedTime_v2(float* ms, CUevent start, CUevent end) {
    count(id_cuEventElapsedTime);
    if (ms == nullptr || start == nullptr || end == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const auto a = reinterpret_cast<fake_event*>(start)->when;
    const auto b = reinterpret_cast<fake_event*>(end)->when;
    *ms = std::chrono::duration<float, std::milli>(b - a).count();
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* ptr, size_t bytes) {
    count(id_cuMemAlloc);
    void* p = nullptr;
    const CUresult status = allocate(&p, bytes, CU_MEMORYTYPE_DEVICE);
    if (status == CUDA_SUCCESS) *ptr = reinterpret_cast<CUdeviceptr>(p);
    return status;
}

NU_FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) { count(id_cuMemFree); return release(ptr, false); }

NU_FAKE_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* ptr, size_t bytes, CUstream) {
    count(id_cuMemAllocAsync);
    void* p = nullptr;
    const CUresult status = allocate(&p, bytes, CU_MEMORYTYPE_DEVICE);
    if (status == CUDA_SUCCESS) *ptr = reinterpret_cast<CUdeviceptr>(p);
    return status;
}

NU_FAKE_EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream) { count(id_cuMemFreeAsync); return release(ptr, false); }

NU_FAKE_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* ptr, size_t bytes, unsigned int) {
    count(id_cuMemAllocManaged);
    void* p = nullptr;
    const CUresult status = allocate(&p, bytes, CU_MEMORYTYPE_UNIFIED);
    if (status == CUDA_SUCCESS) *ptr = reinterpret_cast<CUdeviceptr>(p);
    return status;
}

NU_FAKE_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool, CUdevice) {
    count(id_cuDeviceGetDefaultMemPool);
    *pool = reinterpret_cast<CUmemoryPool>(&g_pool_token);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute, void*) {
    count(id_cuMemPoolSetAttribute);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool, CUmemPool_attribute attr, void* value) {
    count(id_cuMemPoolGetAttribute);
    std::lock_guard<std::mutex> lock(g_mutex);
    *static_cast<cuuint64_t*>(value) = attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ? g_device_bytes : 0;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool, size_t) { count(id_cuMemPoolTrimTo); return CUDA_SUCCESS; }

NU_FAKE_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream) {
    count(id_cuMemcpyHtoDAsync);
    if (bytes && !known_range(dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
    if (bytes) std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream) {
    count(id_cuMemcpyDtoHAsync);
    if (bytes && !known_range(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
    if (bytes) std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream) {
    count(id_cuMemcpyDtoDAsync);
    if (bytes && (!known_range(src, bytes) || !known_range(dst, bytes))) return CUDA_ERROR_INVALID_VALUE;
    if (bytes) std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream) {
    count(id_cuMemsetD32Async);
    if (dst % 4 != 0 || (n && !known_range(dst, n * 4))) return CUDA_ERROR_INVALID_VALUE;
    auto* p = reinterpret_cast<unsigned int*>(dst);
    for (size_t i = 0; i < n; ++i) p[i] = value;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width,
                                           size_t height, CUstream) {
    count(id_cuMemsetD2D32Async);
    if (dst % 4 != 0 || (height > 1 && pitch < width * 4)) return CUDA_ERROR_INVALID_VALUE;
    if (width && height && !known_range(dst, (height - 1) * pitch + width * 4)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t r = 0; r < height; ++r) {
        auto* row = reinterpret_cast<unsigned int*>(dst + r * pitch);
        for (size_t i = 0; i < width; ++i) row[i] = value;
    }
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemHostAlloc(void** ptr, size_t bytes, unsigned int) {
    count(id_cuMemHostAlloc);
    return allocate(ptr, bytes, CU_MEMORYTYPE_HOST);
}

NU_FAKE_EXPORT CUresult cuMemFreeHost(void* ptr) {
    count(id_cuMemFreeHost);
    return release(reinterpret_cast<std::uintptr_t>(ptr), true);
}

NU_FAKE_EXPORT CUresult cuMemHostRegister_v2(void* ptr, size_t bytes, unsigned int) {
    count(id_cuMemHostRegister);
    if (ptr == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    const auto p = reinterpret_cast<std::uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(g_mutex);
    if (find_block(p) != g_blocks.end() || find_block(p + bytes - 1) != g_blocks.end()) {
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    }
    g_blocks[p] = block{bytes, CU_MEMORYTYPE_HOST, false};
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemHostUnregister(void* ptr) {
    count(id_cuMemHostUnregister);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_blocks.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == g_blocks.end() || it->second.owned) return CUDA_ERROR_INVALID_VALUE;
    g_blocks.erase(it);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* dptr, void* host, unsigned int) {
    count(id_cuMemHostGetDevicePointer);
    std::lock_guard<std::mutex> lock(g_mutex);
    if (find_block(reinterpret_cast<std::uintptr_t>(host)) == g_blocks.end()) return CUDA_ERROR_INVALID_VALUE;
    *dptr = reinterpret_cast<CUdeviceptr>(host);  // unified addressing: the same address
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* bytes, CUdeviceptr ptr) {
    count(id_cuMemGetAddressRange);
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = find_block(ptr);
    if (it == g_blocks.end() || it->second.type == CU_MEMORYTYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
    if (base != nullptr) *base = it->first;
    if (bytes != nullptr) *bytes = it->second.bytes;
    return CUDA_SUCCESS;
}

// One attribute of a known block; false for memory CUDA does not know.
static bool pointer_attribute(void* data, CUpointer_attribute attr, CUdeviceptr ptr) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = find_block(ptr);
    const bool known = it != g_blocks.end();
    switch (attr) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *static_cast<unsigned*>(data) = known ? it->second.type : 0u;
            break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
            *static_cast<int*>(data) = known ? 0 : -1;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *static_cast<CUdeviceptr*>(data) = known ? it->first : 0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            *static_cast<size_t*>(data) = known ? it->second.bytes : 0;
            break;
        default:
            break;
    }
    return known;
}

NU_FAKE_EXPORT CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attr, CUdeviceptr ptr) {
    count(id_cuPointerGetAttribute);
    return pointer_attribute(data, attr, ptr) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

NU_FAKE_EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute* attrs, void** data,
                                               CUdeviceptr ptr) {
    count(id_cuPointerGetAttributes);
    for (unsigned i = 0; i < n; ++i) pointer_attribute(data[i], attrs[i], ptr);
    return CUDA_SUCCESS;  // as the real driver: unknown memory reads as type 0
}

NU_FAKE_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr ptr) {
    count(id_cuIpcGetMemHandle);
    std::memset(handle, 0, sizeof(*handle));
    std::memcpy(handle->reserved, &ptr, sizeof(ptr));
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* ptr, CUipcMemHandle handle, unsigned int) {
    count(id_cuIpcOpenMemHandle);
    std::memcpy(ptr, handle.reserved, sizeof(*ptr));  // meaningful in this process only
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr) { count(id_cuIpcCloseMemHandle); return CUDA_SUCCESS; }

NU_FAKE_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
    count(id_cuModuleLoadData);
    if (image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *module = reinterpret_cast<CUmodule>(new fake_module{0});
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuModuleUnload(CUmodule module) {
    count(id_cuModuleUnload);
    delete reinterpret_cast<fake_module*>(module);
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule, const char* name) {
    count(id_cuModuleGetFunction);
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    // Functions are never destroyed by the driver API; these few bytes live as long.
    *function = reinterpret_cast<CUfunction>(new fake_function{0});
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr* ptr, size_t* bytes, CUmodule module, const char* name) {
    count(id_cuModuleGetGlobal);
    // Any global exists: 4 KiB of zeroed device memory, the same block on each query.
    constexpr std::size_t k_global_bytes = 4096;
    const std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(module)) + ':' + name;
    void* p = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = g_globals.find(key);
        if (it != g_globals.end()) p = it->second;
    }
    if (p == nullptr) {
        const CUresult status = allocate(&p, k_global_bytes, CU_MEMORYTYPE_DEVICE);
        if (status != CUDA_SUCCESS) return status;
        std::lock_guard<std::mutex> lock(g_mutex);
        g_globals[key] = p;
    }
    if (ptr != nullptr) *ptr = reinterpret_cast<CUdeviceptr>(p);
    if (bytes != nullptr) *bytes = k_global_bytes;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attr, CUfunction) {
    count(id_cuFuncGetAttribute);
    switch (attr) {
        case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = 49152; break;
        default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
    count(id_cuFuncSetAttribute);
    return CUDA_SUCCESS;
}

static CUresult record_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                              unsigned shared) {
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
        std::size_t{bx} * by * bz > 1024) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_last_launch = last_launch_info{{gx, gy, gz}, {bx, by, bz}, shared};
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                       unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                       CUstream, void**, void**) {
    count(id_cuLaunchKernel);
    if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    return record_launch(gx, gy, gz, bx, by, bz, shared);
}

NU_FAKE_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                                  unsigned int bx, unsigned int by, unsigned int bz,
                                                  unsigned int shared, CUstream, void**) {
    count(id_cuLaunchCooperativeKernel);
    if (f == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    return record_launch(gx, gy, gz, bx, by, bz, shared);
}

NU_FAKE_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction, int block_size,
                                                                    size_t dynamic_shared) {
    count(id_cuOccupancyMaxActiveBlocksPerMultiprocessor);
    if (block_size <= 0) return CUDA_ERROR_INVALID_VALUE;
    const int by_threads = 2048 / block_size;
    *blocks = by_threads > 32 ? 32 : by_threads;  // sm_90: 2048 threads, 32 blocks per SM
    // ... and 228 KiB of shared memory per SM (registers are not modelled)
    const int by_shared = dynamic_shared > 0 ? static_cast<int>(233472 / dynamic_shared) : 32;
    if (by_shared < *blocks) *blocks = by_shared;
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuLaunchHostFunc(CUstream, CUhostFn fn, void* data) {
    count(id_cuLaunchHostFunc);
    if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    fn(data);  // all work is complete at once, so the callback may run now
    return CUDA_SUCCESS;
}

NU_FAKE_EXPORT CUresult cuProfilerStart() { count(id_cuProfilerStart); return CUDA_SUCCESS; }
NU_FAKE_EXPORT CUresult cuProfilerStop() { count(id_cuProfilerStop); return CUDA_SUCCESS; }

// Each definition above has the signature driver.h declares for its entry point.
#define NU_FAKE_CHECK(name, symbol, params)                                                   \
    static_assert(std::is_same<decltype(&::NU_FAKE_SYMBOL_##name), nu_cu_pfn_##name>::value, \
                  #name " does not match driver.h");
#define NU_FAKE_SYMBOL_cuInit cuInit
#define NU_FAKE_SYMBOL_cuDriverGetVersion cuDriverGetVersion
#define NU_FAKE_SYMBOL_cuGetErrorName cuGetErrorName
#define NU_FAKE_SYMBOL_cuGetErrorString cuGetErrorString
#define NU_FAKE_SYMBOL_cuDeviceGetCount cuDeviceGetCount
#define NU_FAKE_SYMBOL_cuDeviceGet cuDeviceGet
#define NU_FAKE_SYMBOL_cuDeviceGetName cuDeviceGetName
#define NU_FAKE_SYMBOL_cuDeviceGetAttribute cuDeviceGetAttribute
#define NU_FAKE_SYMBOL_cuDeviceTotalMem cuDeviceTotalMem_v2
#define NU_FAKE_SYMBOL_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain
#define NU_FAKE_SYMBOL_cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2
#define NU_FAKE_SYMBOL_cuCtxSetCurrent cuCtxSetCurrent
#define NU_FAKE_SYMBOL_cuCtxGetCurrent cuCtxGetCurrent
#define NU_FAKE_SYMBOL_cuCtxSynchronize cuCtxSynchronize
#define NU_FAKE_SYMBOL_cuMemGetInfo cuMemGetInfo_v2
#define NU_FAKE_SYMBOL_cuStreamCreate cuStreamCreate
#define NU_FAKE_SYMBOL_cuStreamDestroy cuStreamDestroy_v2
#define NU_FAKE_SYMBOL_cuStreamGetFlags cuStreamGetFlags
#define NU_FAKE_SYMBOL_cuStreamSynchronize cuStreamSynchronize
#define NU_FAKE_SYMBOL_cuStreamWaitEvent cuStreamWaitEvent
#define NU_FAKE_SYMBOL_cuStreamQuery cuStreamQuery
#define NU_FAKE_SYMBOL_cuEventCreate cuEventCreate
#define NU_FAKE_SYMBOL_cuEventDestroy cuEventDestroy_v2
#define NU_FAKE_SYMBOL_cuEventRecord cuEventRecord
#define NU_FAKE_SYMBOL_cuEventSynchronize cuEventSynchronize
#define NU_FAKE_SYMBOL_cuEventQuery cuEventQuery
#define NU_FAKE_SYMBOL_cuEventElapsedTime cuEventElapsedTime_v2
#define NU_FAKE_SYMBOL_cuMemAlloc cuMemAlloc_v2
#define NU_FAKE_SYMBOL_cuMemFree cuMemFree_v2
#define NU_FAKE_SYMBOL_cuMemAllocAsync cuMemAllocAsync
#define NU_FAKE_SYMBOL_cuMemFreeAsync cuMemFreeAsync
#define NU_FAKE_SYMBOL_cuMemAllocManaged cuMemAllocManaged
#define NU_FAKE_SYMBOL_cuDeviceGetDefaultMemPool cuDeviceGetDefaultMemPool
#define NU_FAKE_SYMBOL_cuMemPoolSetAttribute cuMemPoolSetAttribute
#define NU_FAKE_SYMBOL_cuMemPoolGetAttribute cuMemPoolGetAttribute
#define NU_FAKE_SYMBOL_cuMemPoolTrimTo cuMemPoolTrimTo
#define NU_FAKE_SYMBOL_cuMemcpyHtoDAsync cuMemcpyHtoDAsync_v2
#define NU_FAKE_SYMBOL_cuMemcpyDtoHAsync cuMemcpyDtoHAsync_v2
#define NU_FAKE_SYMBOL_cuMemcpyDtoDAsync cuMemcpyDtoDAsync_v2
#define NU_FAKE_SYMBOL_cuMemsetD32Async cuMemsetD32Async
#define NU_FAKE_SYMBOL_cuMemsetD2D32Async cuMemsetD2D32Async
#define NU_FAKE_SYMBOL_cuMemHostAlloc cuMemHostAlloc
#define NU_FAKE_SYMBOL_cuMemFreeHost cuMemFreeHost
#define NU_FAKE_SYMBOL_cuMemHostRegister cuMemHostRegister_v2
#define NU_FAKE_SYMBOL_cuMemHostUnregister cuMemHostUnregister
#define NU_FAKE_SYMBOL_cuMemHostGetDevicePointer cuMemHostGetDevicePointer_v2
#define NU_FAKE_SYMBOL_cuMemGetAddressRange cuMemGetAddressRange_v2
#define NU_FAKE_SYMBOL_cuPointerGetAttribute cuPointerGetAttribute
#define NU_FAKE_SYMBOL_cuPointerGetAttributes cuPointerGetAttributes
#define NU_FAKE_SYMBOL_cuIpcGetMemHandle cuIpcGetMemHandle
#define NU_FAKE_SYMBOL_cuIpcOpenMemHandle cuIpcOpenMemHandle_v2
#define NU_FAKE_SYMBOL_cuIpcCloseMemHandle cuIpcCloseMemHandle
#define NU_FAKE_SYMBOL_cuModuleLoadData cuModuleLoadData
#define NU_FAKE_SYMBOL_cuModuleUnload cuModuleUnload
#define NU_FAKE_SYMBOL_cuModuleGetFunction cuModuleGetFunction
#define NU_FAKE_SYMBOL_cuModuleGetGlobal cuModuleGetGlobal_v2
#define NU_FAKE_SYMBOL_cuFuncGetAttribute cuFuncGetAttribute
#define NU_FAKE_SYMBOL_cuFuncSetAttribute cuFuncSetAttribute
#define NU_FAKE_SYMBOL_cuLaunchKernel cuLaunchKernel
#define NU_FAKE_SYMBOL_cuLaunchCooperativeKernel cuLaunchCooperativeKernel
#define NU_FAKE_SYMBOL_cuOccupancyMaxActiveBlocksPerMultiprocessor cuOccupancyMaxActiveBlocksPerMultiprocessor
#define NU_FAKE_SYMBOL_cuLaunchHostFunc cuLaunchHostFunc
#define NU_FAKE_SYMBOL_cuProfilerStart cuProfilerStart
#define NU_FAKE_SYMBOL_cuProfilerStop cuProfilerStop
NU_CUDA_DRIVER_SIGNATURES(NU_FAKE_CHECK)
#undef NU_FAKE_CHECK

// ---- for the tests (ctypes) ------------------------------------------------------------

// Calls of one entry point since the last reset, by the engine's name (cuMemAlloc, not
// cuMemAlloc_v2); -1 for a name the fake does not implement.
NU_FAKE_EXPORT long long nu_fake_driver_calls(const char* name) {
    for (int i = 0; i < id_count; ++i) {
        if (std::strcmp(k_names[i], name) == 0) return g_calls[i].load();
    }
    return -1;
}

// The names nu_fake_driver_calls knows, space-separated.
NU_FAKE_EXPORT const char* nu_fake_driver_names() {
    static const std::string names = [] {
        std::string s;
        for (int i = 0; i < id_count; ++i) s += std::string(i ? " " : "") + k_names[i];
        return s;
    }();
    return names.c_str();
}

NU_FAKE_EXPORT void nu_fake_driver_reset() {
    for (auto& c : g_calls) c.store(0);
}

// Live allocations (device, managed and pinned, not registrations) and their device bytes.
NU_FAKE_EXPORT long long nu_fake_driver_live_blocks() {
    std::lock_guard<std::mutex> lock(g_mutex);
    long long n = 0;
    for (const auto& b : g_blocks) n += b.second.owned ? 1 : 0;
    return n;
}

// The grid, block and dynamic shared memory of the last launch: 7 values.
NU_FAKE_EXPORT void nu_fake_driver_last_launch(unsigned* out) {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (int i = 0; i < 3; ++i) {
        out[i] = g_last_launch.grid[i];
        out[3 + i] = g_last_launch.block[i];
    }
    out[6] = g_last_launch.shared;
}
