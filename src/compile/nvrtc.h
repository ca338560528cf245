// src/compile/nvrtc.h: NVRTC (loaded with dlopen), CUDA C++ -> PTX or CUBIN
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "compile/toolkit.h"

namespace nu {

// Of the libnvrtc copies `found` (search order), the one to use with a driver of CUDA
// `driver_version` (0: no driver): choose_for_driver's. Throws cuda_support_error
// (nvrtc_mismatch_message) when copies exist but all are newer than the driver; nullptr
// when nothing was found.
const library_candidate* choose_nvrtc(int driver_version, const std::vector<library_candidate>& found);

// Names the driver's CUDA version, each NVRTC found and the command that installs one the
// driver supports (pip install "numbacuda_ufunc[cu12]").
std::string nvrtc_mismatch_message(int driver_version, const std::vector<library_candidate>& found);

// The driver's CUDA version (0: none) and every libnvrtc found, in search order; no dlopen
// of NVRTC.
int nvrtc_driver_version();
std::vector<library_candidate> nvrtc_candidates();

// The CUDA major of the NVRTC that will be loaded (0: none found); loads none. nvJitLink
// takes the same major, since it links LTO IR of its own major only.
int nvrtc_chosen_major();

struct nvrtc_options {
    int cc_major = 9;
    int cc_minor = 0;
    bool cubin = false;     // CUBIN for sm_XY; otherwise PTX for compute_XY
    bool fastmath = false;  // --use_fast_math; otherwise exact IEEE (no FMA contraction)
    std::vector<std::string> extra;  // e.g. -rdc=true, -I<dir>
};

// The full option list handed to nvrtcCompileProgram for these settings.
std::vector<std::string> nvrtc_option_list(const nvrtc_options& opts);

// Compiles `source` with the embedded src/kernels headers available by name.
// Returns the PTX text or the CUBIN bytes; throws compile_error with the log and the
// options on failure, and std::runtime_error when NVRTC cannot be loaded.
std::string nvrtc_compile(const std::string& source, const nvrtc_options& opts);

// nvrtc_compile through the kernel cache (memory, then disk, then NVRTC). A hit loads no
// NVRTC at all.
std::string nvrtc_build(const std::string& source, const nvrtc_options& opts);

// Identifies the NVRTC build for cache keys without loading it (resolved path, size, mtime).
std::string nvrtc_identity();

// Whether a generated unit includes CUB (ufunc_methods.cuh, <cub/...>): it needs
// CUB's include directory, and the runtime API's types that -minimal leaves out.
bool includes_cub(const std::string& source);

// (major, minor) of the loaded NVRTC; loads it on first use.
std::pair<int, int> nvrtc_version();

// Whether this NVRTC takes -pch (automatic precompiled headers, 12.8+), judged from the
// library's file name where it carries the version, so a warm-cache call loads no NVRTC.
bool nvrtc_has_pch();

// Architectures this NVRTC compiles for (75, 80, ..., ascending; nvrtcGetSupportedArchs);
// empty when it predates that call. Loads NVRTC.
std::vector<int> nvrtc_supported_archs();

// What to build for a device of compute capability `cc` (10 * major + minor) with an NVRTC
// that knows `archs`: a CUBIN for `cc` itself when listed, else a CUBIN for the newest
// listed arch of the same major below it (binary compatible), else PTX for the newest
// listed arch below `cc`, which the driver JIT-compiles for the newer GPU. With an empty
// list, or nothing below `cc`, a CUBIN for `cc` (NVRTC then names the problem).
void choose_device_target(int cc, const std::vector<int>& archs, nvrtc_options& opts);

// choose_device_target with this NVRTC's list. Devices up to sm_90 need no query (every
// supported NVRTC, 12.0 on, knows them), so a warm-cache call still loads no NVRTC.
void target_device(int cc_major, int cc_minor, nvrtc_options& opts);

// Path of the loaded libnvrtc; loads it on first use.
std::string nvrtc_library_path();

}  // namespace nu
