// src/cuda_api/nvrtc.h: the subset of NVRTC (nvrtc.h) the engine calls, declared here so
// the build needs no CUDA toolkit; libnvrtc is loaded with dlopen (src/compile/nvrtc.cpp).
// tests/cxx/check_cuda_api.cpp checks these against a toolkit's nvrtc.h where one exists.
#ifndef NU_CUDA_API_NVRTC_H
#define NU_CUDA_API_NVRTC_H

#include <cstddef>

#ifndef NU_CUDA_API_TOOLKIT_TYPES
typedef enum {
    NVRTC_SUCCESS = 0,
    NVRTC_ERROR_OUT_OF_MEMORY = 1,
    NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
    NVRTC_ERROR_INVALID_INPUT = 3,
    NVRTC_ERROR_INVALID_PROGRAM = 4,
    NVRTC_ERROR_INVALID_OPTION = 5,
    NVRTC_ERROR_COMPILATION = 6,
    NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
    NVRTC_ERROR_INTERNAL_ERROR = 11
} nvrtcResult;

typedef struct _nvrtcProgram* nvrtcProgram;
#endif  // NU_CUDA_API_TOOLKIT_TYPES

// nvrtc.h declares these without versioned symbols.
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcVersion)(int*, int*);
typedef const char* (*nu_nvrtc_pfn_nvrtcGetErrorString)(nvrtcResult);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int,
                                                        const char* const*, const char* const*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcDestroyProgram)(nvrtcProgram*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetProgramLog)(nvrtcProgram, char*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetPTXSize)(nvrtcProgram, size_t*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetPTX)(nvrtcProgram, char*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetCUBIN)(nvrtcProgram, char*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetLTOIRSize)(nvrtcProgram, size_t*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetLTOIR)(nvrtcProgram, char*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetNumSupportedArchs)(int*);
typedef nvrtcResult (*nu_nvrtc_pfn_nvrtcGetSupportedArchs)(int*);

#endif  // NU_CUDA_API_NVRTC_H
