// src/cuda_api/driver.h: the subset of the CUDA driver API (cuda.h) the engine calls,
// declared here so the build needs no CUDA toolkit. libcuda is loaded with dlopen
// (src/runtime/driver_api.cpp); nothing here is linked. The names, enum values and
// signatures are cuda.h's; tests/test_toolkit_free_build.py compiles
// tests/cxx/check_cuda_api.cpp, which checks them against a toolkit's headers.
#ifndef NU_CUDA_API_DRIVER_H
#define NU_CUDA_API_DRIVER_H

#include <cstddef>
#include <cstdint>

#ifndef NU_CUDA_API_TOOLKIT_TYPES  // the check compiles the signatures below with cuda.h's types

static_assert(sizeof(void*) == 8, "only 64-bit hosts are supported (CUdeviceptr is 64-bit)");

#ifndef CUDAAPI
#define CUDAAPI
#endif
#ifndef CUDA_CB
#define CUDA_CB
#endif

typedef unsigned long long CUdeviceptr;
typedef std::uint64_t cuuint64_t;
typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUevent_st* CUevent;
typedef struct CUstream_st* CUstream;
typedef struct CUmemPoolHandle_st* CUmemoryPool;
typedef void(CUDA_CB* CUhostFn)(void* userData);

// Only the values the engine names; the driver may return others (they print by number
// through cuGetErrorName).
typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef enum CUdevice_attribute_enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115
} CUdevice_attribute;

typedef enum CUfunction_attribute_enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9
} CUfunction_attribute;

typedef enum CUpointer_attribute_enum {
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
    CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12
} CUpointer_attribute;

typedef enum CUmemPool_attribute_enum {
    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
    CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5
} CUmemPool_attribute;

typedef enum CUmemorytype_enum {
    CU_MEMORYTYPE_HOST = 0x01,
    CU_MEMORYTYPE_DEVICE = 0x02,
    CU_MEMORYTYPE_UNIFIED = 0x04
} CUmemorytype;

typedef enum CUstream_flags_enum { CU_STREAM_DEFAULT = 0x0, CU_STREAM_NON_BLOCKING = 0x1 } CUstream_flags;
typedef enum CUevent_flags_enum { CU_EVENT_DEFAULT = 0x0, CU_EVENT_DISABLE_TIMING = 0x2 } CUevent_flags;
typedef enum CUmemAttach_flags_enum { CU_MEM_ATTACH_GLOBAL = 0x1 } CUmemAttach_flags;
typedef enum CUipcMem_flags_enum { CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1 } CUipcMem_flags;

#define CU_IPC_HANDLE_SIZE 64
typedef struct CUipcMemHandle_st {
    char reserved[CU_IPC_HANDLE_SIZE];
} CUipcMemHandle;

#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04
#define CU_MEMHOSTREGISTER_PORTABLE 0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02

#endif  // NU_CUDA_API_TOOLKIT_TYPES

// X(name, symbol, parameters): each entry point, the symbol libcuda exports for the
// signature declared (cuda.h maps cuMemAlloc to cuMemAlloc_v2), and its parameters. All
// return CUresult. The loader tries `symbol`, then `name` (drivers older than a _v2).
#define NU_CUDA_DRIVER_SIGNATURES(X)                                                          \
    X(cuInit, "cuInit", (unsigned int))                                                       \
    X(cuDriverGetVersion, "cuDriverGetVersion", (int*))                                       \
    X(cuGetErrorName, "cuGetErrorName", (CUresult, const char**))                             \
    X(cuGetErrorString, "cuGetErrorString", (CUresult, const char**))                         \
    X(cuDeviceGetCount, "cuDeviceGetCount", (int*))                                           \
    X(cuDeviceGet, "cuDeviceGet", (CUdevice*, int))                                           \
    X(cuDeviceGetName, "cuDeviceGetName", (char*, int, CUdevice))                             \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int*, CUdevice_attribute, CUdevice))     \
    X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t*, CUdevice))                           \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext*, CUdevice))           \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))                  \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                                        \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext*))                                       \
    X(cuCtxSynchronize, "cuCtxSynchronize", (void))                                           \
    X(cuMemGetInfo, "cuMemGetInfo_v2", (size_t*, size_t*))                                    \
    X(cuStreamCreate, "cuStreamCreate", (CUstream*, unsigned int))                            \
    X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream))                                      \
    X(cuStreamGetFlags, "cuStreamGetFlags", (CUstream, unsigned int*))                        \
    X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream))                                 \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream, CUevent, unsigned int))              \
    X(cuStreamQuery, "cuStreamQuery", (CUstream))                                             \
    X(cuEventCreate, "cuEventCreate", (CUevent*, unsigned int))                               \
    X(cuEventDestroy, "cuEventDestroy_v2", (CUevent))                                         \
    X(cuEventRecord, "cuEventRecord", (CUevent, CUstream))                                    \
    X(cuEventSynchronize, "cuEventSynchronize", (CUevent))                                    \
    X(cuEventQuery, "cuEventQuery", (CUevent))                                                \
    X(cuEventElapsedTime, "cuEventElapsedTime_v2", (float*, CUevent, CUevent))                \
    X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr*, size_t))                                    \
    X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                               \
    X(cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr*, size_t, CUstream))                   \
    X(cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr, CUstream))                              \
    X(cuMemAllocManaged, "cuMemAllocManaged", (CUdeviceptr*, size_t, unsigned int))           \
    X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", (CUmemoryPool*, CUdevice))      \
    X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute", (CUmemoryPool, CUmemPool_attribute, void*)) \
    X(cuMemPoolGetAttribute, "cuMemPoolGetAttribute", (CUmemoryPool, CUmemPool_attribute, void*)) \
    X(cuMemPoolTrimTo, "cuMemPoolTrimTo", (CUmemoryPool, size_t))                             \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CUdeviceptr, const void*, size_t, CUstream)) \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void*, CUdeviceptr, size_t, CUstream))      \
    X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
    X(cuMemsetD32Async, "cuMemsetD32Async", (CUdeviceptr, unsigned int, size_t, CUstream))    \
    X(cuMemsetD2D32Async, "cuMemsetD2D32Async", (CUdeviceptr, size_t, unsigned int, size_t, size_t, CUstream)) \
    X(cuMemHostAlloc, "cuMemHostAlloc", (void**, size_t, unsigned int))                       \
    X(cuMemFreeHost, "cuMemFreeHost", (void*))                                                \
    X(cuMemHostRegister, "cuMemHostRegister_v2", (void*, size_t, unsigned int))               \
    X(cuMemHostUnregister, "cuMemHostUnregister", (void*))                                    \
    X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", (CUdeviceptr*, void*, unsigned int)) \
    X(cuMemGetAddressRange, "cuMemGetAddressRange_v2", (CUdeviceptr*, size_t*, CUdeviceptr))  \
    X(cuPointerGetAttribute, "cuPointerGetAttribute", (void*, CUpointer_attribute, CUdeviceptr)) \
    X(cuPointerGetAttributes, "cuPointerGetAttributes",                                       \
      (unsigned int, CUpointer_attribute*, void**, CUdeviceptr))                              \
    X(cuIpcGetMemHandle, "cuIpcGetMemHandle", (CUipcMemHandle*, CUdeviceptr))                 \
    X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", (CUdeviceptr*, CUipcMemHandle, unsigned int)) \
    X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr))                              \
    X(cuModuleLoadData, "cuModuleLoadData", (CUmodule*, const void*))                         \
    X(cuModuleUnload, "cuModuleUnload", (CUmodule))                                           \
    X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction*, CUmodule, const char*))       \
    X(cuModuleGetGlobal, "cuModuleGetGlobal_v2", (CUdeviceptr*, size_t*, CUmodule, const char*)) \
    X(cuFuncGetAttribute, "cuFuncGetAttribute", (int*, CUfunction_attribute, CUfunction))     \
    X(cuFuncSetAttribute, "cuFuncSetAttribute", (CUfunction, CUfunction_attribute, int))      \
    X(cuLaunchKernel, "cuLaunchKernel",                                                       \
      (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,      \
       unsigned int, unsigned int, CUstream, void**, void**))                                 \
    X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel",                                 \
      (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,      \
       unsigned int, unsigned int, CUstream, void**))                                         \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", \
      (int*, CUfunction, int, size_t))                                                        \
    X(cuLaunchHostFunc, "cuLaunchHostFunc", (CUstream, CUhostFn, void*))                      \
    X(cuProfilerStart, "cuProfilerStart", (void))                                             \
    X(cuProfilerStop, "cuProfilerStop", (void))

// nu_cu_pfn_<name>: a pointer to that entry point; nu_cu_symbol_<name>: its symbol.
#define NU_CUDA_DECLARE_PFN(name, symbol, params) \
    typedef CUresult(CUDAAPI* nu_cu_pfn_##name) params; \
    constexpr const char* nu_cu_symbol_##name = symbol;
NU_CUDA_DRIVER_SIGNATURES(NU_CUDA_DECLARE_PFN)
#undef NU_CUDA_DECLARE_PFN

#endif  // NU_CUDA_API_DRIVER_H
