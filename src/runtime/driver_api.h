// src/runtime/driver_api.h: the CUDA driver API, loaded with dlopen at first use
#pragma once

#include "cuda_api/driver.h"

#include <string>

namespace nu {

// Every driver entry point the engine calls; src/cuda_api/driver.h declares each one's
// signature and symbol (`cuMemAlloc` resolves `cuMemAlloc_v2`).
#define NU_DRIVER_FUNCTIONS(X)                                                           \
    X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                \
    X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)        \
    X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)         \
    X(cuCtxSetCurrent) X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuMemGetInfo)            \
    X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamGetFlags) X(cuStreamSynchronize) X(cuStreamWaitEvent)     \
    X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)            \
    X(cuEventElapsedTime) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync) \
    X(cuDeviceGetDefaultMemPool) X(cuMemPoolSetAttribute) X(cuMemPoolGetAttribute)       \
    X(cuMemPoolTrimTo) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)    \
    X(cuMemHostAlloc) X(cuMemFreeHost) X(cuPointerGetAttribute) X(cuModuleLoadData)      \
    X(cuPointerGetAttributes)                                                           \
    X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel)                          \
    X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuModuleGetGlobal) X(cuLaunchCooperativeKernel) \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuMemsetD32Async)      \
    X(cuMemsetD2D32Async)

// Events, mapped/managed/registered memory, IPC, callbacks and the profiler (issue 17):
// src/runtime/cuda_memory_extras.cpp.
#define NU_DRIVER_EXTRA_FUNCTIONS(X)                                                     \
    X(cuEventQuery) X(cuStreamQuery) X(cuLaunchHostFunc) X(cuMemGetAddressRange)          \
    X(cuMemAllocManaged) X(cuMemHostRegister) X(cuMemHostUnregister)                    \
    X(cuMemHostGetDevicePointer) X(cuIpcGetMemHandle) X(cuIpcOpenMemHandle)              \
    X(cuIpcCloseMemHandle) X(cuProfilerStart) X(cuProfilerStop)

struct driver_api {
#define NU_DECLARE_FN(name) nu_cu_pfn_##name name = nullptr;
    NU_DRIVER_FUNCTIONS(NU_DECLARE_FN)
    NU_DRIVER_EXTRA_FUNCTIONS(NU_DECLARE_FN)
#undef NU_DECLARE_FN
};

// Loads libcuda and calls cuInit once. Returns nullptr and fills `why` when there is no
// usable driver; never throws, so `cuda.is_available()` can ask safely.
const driver_api* load_driver(std::string* why);

// The CUDA version the installed driver supports (cuDriverGetVersion: 12040 is 12.4), 0
// where there is no libcuda. Calls no cuInit, so a process that only compiles (and may fork
// later) leaves the driver uninitialized.
int driver_cuda_version();

// Throws cuda_error naming the CUDA error and `call` when `status` is not CUDA_SUCCESS.
void check(CUresult status, const char* call);

}  // namespace nu

#define NU_CU(api, fn, ...) ::nu::check((api).fn(__VA_ARGS__), #fn)
