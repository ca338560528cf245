// src/cuda_api/nvjitlink.h: the subset of nvJitLink (nvJitLink.h) the engine calls, declared
// here so the build needs no CUDA toolkit; libnvJitLink is loaded with dlopen
// (src/compile/nvjitlink.cpp). nvJitLink.h maps each call to a symbol of the toolkit it came
// from (__nvJitLinkCreate_13_0); we resolve the plain name, else a versioned one, in whichever
// library the machine has. tests/cxx/check_cuda_api.cpp checks these against nvJitLink.h.
#ifndef NU_CUDA_API_NVJITLINK_H
#define NU_CUDA_API_NVJITLINK_H

#include <cstddef>
#include <cstdint>

#ifndef NU_CUDA_API_TOOLKIT_TYPES
typedef enum {
    NVJITLINK_SUCCESS = 0,
    NVJITLINK_ERROR_UNRECOGNIZED_OPTION = 1,
    NVJITLINK_ERROR_MISSING_ARCH = 2,
    NVJITLINK_ERROR_INVALID_INPUT = 3,
    NVJITLINK_ERROR_PTX_COMPILE = 4,
    NVJITLINK_ERROR_NVVM_COMPILE = 5,
    NVJITLINK_ERROR_INTERNAL = 6
} nvJitLinkResult;

typedef enum {
    NVJITLINK_INPUT_NONE = 0,
    NVJITLINK_INPUT_CUBIN = 1,
    NVJITLINK_INPUT_PTX = 2,
    NVJITLINK_INPUT_LTOIR = 3,
    NVJITLINK_INPUT_FATBIN = 4,
    NVJITLINK_INPUT_OBJECT = 5,
    NVJITLINK_INPUT_LIBRARY = 6
} nvJitLinkInputType;

typedef struct nvJitLink* nvJitLinkHandle;
#endif  // NU_CUDA_API_TOOLKIT_TYPES

typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkCreate)(nvJitLinkHandle*, uint32_t, const char**);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkDestroy)(nvJitLinkHandle*);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkAddData)(nvJitLinkHandle, nvJitLinkInputType, const void*,
                                                              size_t, const char*);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkComplete)(nvJitLinkHandle);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkGetLinkedCubinSize)(nvJitLinkHandle, size_t*);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkGetLinkedCubin)(nvJitLinkHandle, void*);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkGetLinkedPtxSize)(nvJitLinkHandle, size_t*);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkGetLinkedPtx)(nvJitLinkHandle, char*);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkGetErrorLogSize)(nvJitLinkHandle, size_t*);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkGetErrorLog)(nvJitLinkHandle, char*);
typedef nvJitLinkResult (*nu_nvjitlink_pfn_nvJitLinkVersion)(unsigned int*, unsigned int*);

#endif  // NU_CUDA_API_NVJITLINK_H
