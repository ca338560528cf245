// src/launch/reduce_launch.h: reduction kernels: generated source, build, plan, launch
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "array/array_view.h"
#include "runtime/backend.h"

namespace nu {

class host_library;

// The kernels of src/kernels/reduce.cuh.
// full_contig: units_contig specialised for a full reduction (one row).
enum class reduce_kernel : int {
    units_contig, units_strided, final_pass, columns, columns_tiled, columns_final, full_contig
};
constexpr int k_reduce_kernel_kinds = 7;
constexpr unsigned k_all_reduce_kernels = (1u << k_reduce_kernel_kinds) - 1;

// The translation unit: the header, the translated function, a functor, the entry line
// and the NU_REDUCE_KERNEL lines of the kernels in `kernels` (a mask of 1 << reduce_kernel).
std::string reduce_source(const std::string& function, const std::string& function_source,
                          dtype acc, dtype in, dtype out, const std::string& entry,
                          unsigned kernels = k_all_reduce_kernels);

// The kernels of one operator and (accumulator, input, output) types: CUfunctions on the
// CUDA backend, host entry points otherwise. Built on first use: on the GPU each kernel is
// its own NVRTC build, so a first call pays only for the kernel its plan runs (a full
// reduction: full_contig alone); a host build compiles all seven in one unit, which costs
// the host compiler about what one does.
class reduce_kernel_set {
public:
    using host_fn = void (*)(const void* params);
    // `emulated`: the cuda target on the host backend (built with emulation_host_options()).
    reduce_kernel_set(std::string function, std::string function_source, dtype acc, dtype in, dtype out,
                      std::string entry, bool host, bool fastmath, bool emulated);
    reduce_kernel_set(const reduce_kernel_set&) = delete;
    reduce_kernel_set& operator=(const reduce_kernel_set&) = delete;

    bool host() const { return m_host; }
    // The kernel, built (through the kernel cache) and loaded at its first request.
    void* get(reduce_kernel k) const;
    // The kernels built so far, as a mask of 1 << reduce_kernel.
    unsigned built() const;

private:
    std::string m_function, m_function_source, m_entry;
    dtype m_acc, m_in, m_out;
    bool m_host, m_fastmath, m_emulated;
    mutable std::mutex m_mutex;
    mutable void* m_functions[k_reduce_kernel_kinds] = {};
    mutable std::vector<std::shared_ptr<host_library>> m_libraries;  // keep host entries loaded
};

// NVRTC options of builds that include CUB (ufunc_methods.cuh's scans): its include
// directory (nvrtc_build adds automatic precompiled headers, so later builds in a process
// reuse the parsed CUB headers). Reductions no longer need it.
std::vector<std::string> reduce_nvrtc_extra();

// How one reduction runs: `rows` outputs, each folding `len` elements. Dimensions are
// already coalesced (at most 8 per side) and in the order the fold visits them.
struct reduce_layout {
    const void* in = nullptr;
    void* out = nullptr;
    dtype acc = dtype::float64;
    dtype in_type = dtype::float64;
    dtype out_type = dtype::float64;
    shape_t row_shape, in_row_strides, out_row_strides;
    shape_t red_shape, red_strides;
    const unsigned char* init = nullptr;  // 16 bytes of the accumulator type, or nullptr
};

// Chooses the kernels and grid (tiled columns for outer-axis reductions, a thread per
// output for many short rows, else warp units: one pass for a full reduction, a final
// kernel for several rows), and launches, all ordered on `stream`. Partials and the
// one-pass counter live in a scratch kept per device and stream, allocated once (grown
// when a plan needs more); while an EMM plugin is installed they are allocated per call
// from it, as every device allocation is, and a full reduction runs two kernels. Grids
// fill `multiprocessors` times the blocks the occupancy API says fit on one; a host kernel
// set runs the same plan's entry points in the calling thread.
// `host_result` (CUDA backend, a full reduction only): layout.out is ignored, the kernel
// writes the result into mapped page-locked memory of the scratch, and the call returns
// after synchronizing `stream` with the result copied to host_result: one launch, no
// allocation, no copy command, one synchronization.
void launch_reduce(const reduce_kernel_set& k, const reduce_layout& layout, int multiprocessors,
                   backend& b, stream_handle stream, void* host_result = nullptr);

// Frees the scratch of `stream` (after its queued work): the stream is being destroyed.
void release_reduce_scratch(stream_handle stream) noexcept;

}  // namespace nu
