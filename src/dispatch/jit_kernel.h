// src/dispatch/jit_kernel.h: @cuda.jit kernels: specializations, launch checks and launches
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "array/array_view.h"
#include "compile/device_link.h"
#include "dispatch/casting.h"
#include "launch/kernel.h"
#include "runtime/runtime.h"

namespace nu {

// One parameter of a specialization: an array of `ndim` >= 1 dimensions, a scalar passed
// by value (ndim == -1), or a record passed by reference (ndim == 0, its address).
struct kernel_param {
    dtype type = dtype::float64;
    int ndim = -1;
    std::string ctype;  // the element's C++ type when the translator names it (records)
};

// A specialization as the translator made it (numbacuda_ufunc/kernels/kernel.py registers it).
struct kernel_spec {
    std::vector<kernel_param> params;
    std::string function;  // the translated __device__ function's symbol
    std::string source;    // its translation (helpers and frozen constants included)
    bool cooperative = false;  // barriers or warp intrinsics: the emulation needs fibers
    bool grid_sync = false;    // cuda.cg.this_grid().sync(): a cooperative launch
    std::int64_t static_shared = 0;  // bytes of cuda.shared.array with a fixed shape
    // cuda.jit(link=...) and cuda.declare_device(link=...) files: linked by nvJitLink on a
    // GPU, compiled as extra translation units (.cu only) on the host backend.
    std::vector<link_file> links;
};

// A launch argument: an array (device memory, or host memory under emulation or when
// `host` asks for staging) or a scalar.
struct kernel_arg {
    bool is_array = false;
    bool host = false;  // a host array: copied in and back around a GPU launch (Numba)
    bool read_only = false;  // a read-only host array (or cuda.In): copied in only
    bool copy_in = true;     // false for cuda.Out: the device copy starts uninitialised
    array_view view;
    scalar_value value;
};

class jit_kernel {
public:
    jit_kernel(std::string name, bool debug, bool fastmath);

    const std::string& name() const { return m_name; }
    bool debug() const { return m_debug; }
    // Numba's lineinfo= and launch_bounds=: for device builds, text placed just before the
    // entry point (a __launch_bounds__ definition, a #line to the def line) and NVRTC options
    // (-lineinfo); for every launch, the most threads per block the bounds allow (0: none),
    // which the host backend checks as a GPU would. Set once, before the first build.
    void set_device_codegen(std::string entry_prefix, std::vector<std::string> nvrtc_extra,
                            int max_threads);
    // Numba's shared_memory_carveout (percent, -1 the driver's default), applied to each
    // function as it is loaded on a GPU. Set once, before the first build.
    void set_carveout(int percent);
    const std::vector<std::string>& nvrtc_extra() const { return m_nvrtc_extra; }

    // Specializations are appended from Python; a call's type key maps to one of them
    // (its own, lazily compiled, or a declared signature the arguments convert to).
    // replace_spec (Numba's recompile()) swaps one for a new translation under the same
    // index: launches already holding the old one finish with it and its build.
    int add_spec(kernel_spec spec);
    void replace_spec(int index, kernel_spec spec);
    void bind_key(const std::string& key, int spec);
    int find(const std::string& key) const;
    // Numba's mark_launch_config_sensitive(): a specialization compiled for one launch
    // configuration. From then on a call's key includes its grid, block and dynamic shared
    // size, so a new configuration asks Python again (which compiles anew for it); the
    // keys bound before, without a configuration, are dropped.
    void set_launch_config_sensitive();
    bool launch_config_sensitive() const { return m_config_sensitive.load(); }
    std::shared_ptr<const kernel_spec> spec(int index);
    std::size_t spec_count();
    // The complete translation unit of a specialization for the host or the device.
    std::string source(int index, bool host);
    std::string entry(int index);

    // Checks the launch against the device, packs the arguments and runs the kernel.
    // Raises value_error for shapes and shared memory the device cannot take,
    // type_error for arguments the specialization cannot take, index_error for an
    // out-of-bounds access caught by the emulation or a debug launch.
    void launch(int index, const std::vector<kernel_arg>& args, const launch_shape& shape,
                const stream_ref& stream);

private:
    struct built {
        std::shared_ptr<const kernel_spec> from;  // the specialization it was built from
        kernel_module module;
        void* function = nullptr;  // CUfunction, or the host entry point
        int max_threads = 0;       // of this function on the device (its registers decide)
    };
    const built& build(int index, const std::shared_ptr<const kernel_spec>& spec, bool host);
    std::string source_of(const kernel_spec& s, bool host) const;
    void check_static_shared(const kernel_spec& spec) const;
    void check_shape(const built& b, const kernel_spec& spec, const launch_shape& shape, bool host) const;
    void check_debug_record(const built& b, const stream_ref& stream);

    std::string m_name;
    bool m_debug;
    bool m_fastmath;
    std::string m_entry_prefix;
    std::vector<std::string> m_nvrtc_extra;
    int m_bounds_threads = 0;
    std::optional<int> m_carveout;
    std::atomic<bool> m_config_sensitive{false};
    mutable std::mutex m_mutex;  // guards everything below: launches may come from threads
    std::deque<std::shared_ptr<const kernel_spec>> m_specs;
    std::unordered_map<std::string, int> m_keys;
    std::unordered_map<int, std::unique_ptr<built>> m_built;  // spec * 2 + host
    // Builds of replaced specializations: a launch in flight may still run one, so they
    // live as long as the kernel (one per recompile(), which is rare).
    std::vector<std::unique_ptr<built>> m_retired;
};

}  // namespace nu
