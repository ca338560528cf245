// tests/cxx/check_cuda_api.cpp: src/cuda_api/ (our declarations of the driver API, NVRTC and
// nvJitLink) agree with a CUDA toolkit's cuda.h, cudaProfiler.h, nvrtc.h and nvJitLink.h:
// enum values, type sizes, the signature of every entry point the engine calls and the
// symbol each resolves. Built and run by tests/test_toolkit_free_build.py; a mismatch is a
// compile error (static_assert) or a nonzero exit naming it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

// 1. Ours, in a namespace of their own, before any toolkit header.
namespace ours {
#include "cuda_api/driver.h"
#include "cuda_api/nvjitlink.h"
#include "cuda_api/nvrtc.h"
const std::uintptr_t stream_legacy = reinterpret_cast<std::uintptr_t>(CU_STREAM_LEGACY);
const std::uintptr_t stream_per_thread = reinterpret_cast<std::uintptr_t>(CU_STREAM_PER_THREAD);
}  // namespace ours

#define NU_OUR_MACROS(X)                                                                     \
    X(CU_IPC_HANDLE_SIZE) X(CU_MEMHOSTALLOC_PORTABLE) X(CU_MEMHOSTALLOC_DEVICEMAP)          \
    X(CU_MEMHOSTALLOC_WRITECOMBINED) X(CU_MEMHOSTREGISTER_PORTABLE) X(CU_MEMHOSTREGISTER_DEVICEMAP)
#define NU_CAPTURE(m) constexpr unsigned long long ours_##m = m;
NU_OUR_MACROS(NU_CAPTURE)
#undef CU_IPC_HANDLE_SIZE
#undef CU_MEMHOSTALLOC_PORTABLE
#undef CU_MEMHOSTALLOC_DEVICEMAP
#undef CU_MEMHOSTALLOC_WRITECOMBINED
#undef CU_MEMHOSTREGISTER_PORTABLE
#undef CU_MEMHOSTREGISTER_DEVICEMAP
#undef CU_STREAM_LEGACY
#undef CU_STREAM_PER_THREAD
#undef CUDAAPI
#undef CUDA_CB

// 2. The toolkit's headers.
#include <cuda.h>
#include <cudaProfiler.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#define NU_CHECK_MACRO(m) static_assert(ours_##m == (m), "macro " #m " differs from cuda.h");
NU_OUR_MACROS(NU_CHECK_MACRO)

// Every enum constant we declare has the toolkit's value.
#define NU_OUR_CONSTANTS(X)                                                                  \
    X(CUDA_SUCCESS) X(CUDA_ERROR_INVALID_VALUE) X(CUDA_ERROR_OUT_OF_MEMORY)                  \
    X(CUDA_ERROR_NOT_INITIALIZED) X(CUDA_ERROR_DEINITIALIZED) X(CUDA_ERROR_INVALID_CONTEXT)  \
    X(CUDA_ERROR_INVALID_HANDLE) X(CUDA_ERROR_NOT_READY) X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) X(CUDA_ERROR_NOT_SUPPORTED) X(CUDA_ERROR_UNKNOWN) \
    X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)      \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y) X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)            \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X) X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)              \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z) X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) \
    X(CU_DEVICE_ATTRIBUTE_WARP_SIZE) X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)             \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) X(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) \
    X(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) X(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)        \
    X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) X(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) \
    X(CU_POINTER_ATTRIBUTE_MEMORY_TYPE) X(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)               \
    X(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) X(CU_POINTER_ATTRIBUTE_RANGE_SIZE)              \
    X(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) X(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)             \
    X(CU_MEMORYTYPE_HOST) X(CU_MEMORYTYPE_DEVICE) X(CU_MEMORYTYPE_UNIFIED)                   \
    X(CU_STREAM_DEFAULT) X(CU_STREAM_NON_BLOCKING) X(CU_EVENT_DEFAULT) X(CU_EVENT_DISABLE_TIMING) \
    X(CU_MEM_ATTACH_GLOBAL) X(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)                            \
    X(NVRTC_SUCCESS) X(NVRTC_ERROR_OUT_OF_MEMORY) X(NVRTC_ERROR_PROGRAM_CREATION_FAILURE)    \
    X(NVRTC_ERROR_INVALID_INPUT) X(NVRTC_ERROR_INVALID_PROGRAM) X(NVRTC_ERROR_INVALID_OPTION) \
    X(NVRTC_ERROR_COMPILATION) X(NVRTC_ERROR_BUILTIN_OPERATION_FAILURE) X(NVRTC_ERROR_INTERNAL_ERROR) \
    X(NVJITLINK_SUCCESS) X(NVJITLINK_ERROR_UNRECOGNIZED_OPTION) X(NVJITLINK_ERROR_MISSING_ARCH) \
    X(NVJITLINK_ERROR_INVALID_INPUT) X(NVJITLINK_ERROR_PTX_COMPILE) X(NVJITLINK_ERROR_NVVM_COMPILE) \
    X(NVJITLINK_ERROR_INTERNAL) X(NVJITLINK_INPUT_NONE) X(NVJITLINK_INPUT_CUBIN)             \
    X(NVJITLINK_INPUT_PTX) X(NVJITLINK_INPUT_LTOIR) X(NVJITLINK_INPUT_FATBIN)                \
    X(NVJITLINK_INPUT_OBJECT) X(NVJITLINK_INPUT_LIBRARY)
#define NU_CHECK_CONSTANT(c) \
    static_assert(static_cast<long long>(ours::c) == static_cast<long long>(::c), #c " differs from the toolkit");
NU_OUR_CONSTANTS(NU_CHECK_CONSTANT)

// Types: the same size, alignment and (for enums) underlying type, so values pass through
// the ABI unchanged.
template <class A, class B>
constexpr bool same_layout() {
    return sizeof(A) == sizeof(B) && alignof(A) == alignof(B);
}
template <class A, class B>
constexpr bool same_enum() {
    return same_layout<A, B>() && std::is_same<std::underlying_type_t<A>, std::underlying_type_t<B>>::value;
}
static_assert(std::is_same<ours::CUdeviceptr, ::CUdeviceptr>::value, "CUdeviceptr");
static_assert(std::is_same<ours::CUdevice, ::CUdevice>::value, "CUdevice");
static_assert(std::is_same<ours::cuuint64_t, ::cuuint64_t>::value, "cuuint64_t");
static_assert(same_layout<ours::CUipcMemHandle, ::CUipcMemHandle>(), "CUipcMemHandle");
#define NU_OUR_ENUMS(X)                                                                      \
    X(CUresult) X(CUdevice_attribute) X(CUfunction_attribute) X(CUpointer_attribute)        \
    X(CUmemPool_attribute) X(CUmemorytype) X(CUstream_flags) X(CUevent_flags)               \
    X(CUmemAttach_flags) X(CUipcMem_flags) X(nvrtcResult) X(nvJitLinkResult) X(nvJitLinkInputType)
#define NU_CHECK_ENUM(t) static_assert(same_enum<ours::t, ::t>(), "enum " #t " differs in size or underlying type");
NU_OUR_ENUMS(NU_CHECK_ENUM)
#define NU_OUR_HANDLES(X) X(CUcontext) X(CUmodule) X(CUfunction) X(CUevent) X(CUstream) X(CUmemoryPool) \
    X(CUhostFn) X(nvrtcProgram) X(nvJitLinkHandle)
#define NU_CHECK_HANDLE(t) static_assert(same_layout<ours::t, ::t>() && std::is_pointer<ours::t>::value, #t);
NU_OUR_HANDLES(NU_CHECK_HANDLE)

// 3. Our signatures again, now over the toolkit's types: each must be the type of a pointer
// to the toolkit's function (after cuda.h's renames: cuMemAlloc is cuMemAlloc_v2).
#undef NU_CUDA_API_DRIVER_H
#undef NU_CUDA_API_NVRTC_H
#undef NU_CUDA_API_NVJITLINK_H
#define NU_CUDA_API_TOOLKIT_TYPES
#include "cuda_api/driver.h"
#include "cuda_api/nvjitlink.h"
#include "cuda_api/nvrtc.h"

#define NU_CHECK_SIGNATURE(name, symbol, params)                                              \
    static_assert(std::is_same<decltype(&::name), nu_cu_pfn_##name>::value,                  \
                  "the signature of " #name " differs from cuda.h");
NU_CUDA_DRIVER_SIGNATURES(NU_CHECK_SIGNATURE)

#define NU_NVRTC_FUNCTIONS(X) X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) \
    X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) \
    X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetLTOIRSize) \
    X(nvrtcGetLTOIR) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)
#define NU_CHECK_NVRTC(name) \
    static_assert(std::is_same<decltype(&::name), nu_nvrtc_pfn_##name>::value, "the signature of " #name " differs from nvrtc.h");
NU_NVRTC_FUNCTIONS(NU_CHECK_NVRTC)

#define NU_NVJITLINK_FUNCTIONS(X) X(nvJitLinkCreate) X(nvJitLinkDestroy) X(nvJitLinkAddData) \
    X(nvJitLinkComplete) X(nvJitLinkGetLinkedCubinSize) X(nvJitLinkGetLinkedCubin)          \
    X(nvJitLinkGetLinkedPtxSize) X(nvJitLinkGetLinkedPtx) X(nvJitLinkGetErrorLogSize)       \
    X(nvJitLinkGetErrorLog) X(nvJitLinkVersion)
#define NU_CHECK_NVJITLINK(name) \
    static_assert(std::is_same<decltype(&::name), nu_nvjitlink_pfn_##name>::value, "the signature of " #name " differs from nvJitLink.h");
NU_NVJITLINK_FUNCTIONS(NU_CHECK_NVJITLINK)

#define NU_STR(x) #x
#define NU_XSTR(x) NU_STR(x)

int main() {
    int failures = 0;
    // The symbol we dlsym is the one cuda.h maps the name to.
#define NU_CHECK_SYMBOL(name, symbol, params)                                                 \
    if (std::strcmp(symbol, NU_XSTR(name)) != 0) {                                           \
        std::printf("symbol of %s: ours %s, cuda.h %s\n", #name, symbol, NU_XSTR(name));     \
        ++failures;                                                                          \
    }
    NU_CUDA_DRIVER_SIGNATURES(NU_CHECK_SYMBOL)
    if (ours::stream_legacy != reinterpret_cast<std::uintptr_t>(CU_STREAM_LEGACY) ||
        ours::stream_per_thread != reinterpret_cast<std::uintptr_t>(CU_STREAM_PER_THREAD)) {
        std::printf("CU_STREAM_LEGACY / CU_STREAM_PER_THREAD differ from cuda.h\n");
        ++failures;
    }
    std::printf("checked against CUDA %d.%d headers: %s\n", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10,
                failures ? "MISMATCH" : "ours agree");
    return failures ? 1 : 0;
}
