// src/launch/reduce_launch.h: reduction kernels: generated source, build, plan, launch
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "array/array_view.h"
#include "runtime/backend.h"

namespace nu {

class host_library;

// The kernels of src/kernels/reduce.cuh for one operator and (accumulator, input,
// output) types: CUfunctions on the CUDA backend, host entry points otherwise.
struct reduce_kernel_set {
    using host_fn = void (*)(const void* params);
    void* units_contig = nullptr;
    void* units_strided = nullptr;
    void* final_pass = nullptr;
    void* columns = nullptr;
    void* columns_tiled = nullptr;
    void* columns_final = nullptr;
    std::shared_ptr<host_library> library;  // keeps host entry points loaded
    bool host = false;
};

// The translation unit: the header, the translated function, a functor, one entry line.
std::string reduce_source(const std::string& function, const std::string& function_source,
                          dtype acc, dtype in, dtype out, const std::string& entry);

// NVRTC options of reduction builds: the CUB include directory (nvrtc_build adds automatic
// precompiled headers, so later builds in a process reuse the parsed CUB headers).
std::vector<std::string> reduce_nvrtc_extra();

// Builds (through the kernel cache) and loads the kernels named `entry` + suffix;
// `emulated`: the cuda target on the host backend (built with emulation_host_options()).
reduce_kernel_set build_reduce(const std::string& source, const std::string& entry, bool host,
                               bool fastmath, bool emulated = false);

// How one reduction runs: `rows` outputs, each folding `len` elements. Dimensions are
// already coalesced (at most 8 per side) and in the order the fold visits them.
struct reduce_layout {
    const void* in = nullptr;
    void* out = nullptr;
    dtype acc = dtype::float64;
    dtype in_type = dtype::float64;
    shape_t row_shape, in_row_strides, out_row_strides;
    shape_t red_shape, red_strides;
    const unsigned char* init = nullptr;  // 16 bytes of the accumulator type, or nullptr
};

// Chooses the kernels and grid (tiled columns for outer-axis reductions, a thread per
// output for many short rows, else warp units with a device-side final pass), allocates
// the partials on `stream` and launches, all ordered on `stream`. Grids fill
// `multiprocessors` times the blocks the occupancy API says fit on one; a host kernel set
// runs the same plan's entry points in the calling thread.
void launch_reduce(const reduce_kernel_set& k, const reduce_layout& layout, int multiprocessors,
                   backend& b, stream_handle stream);

}  // namespace nu
