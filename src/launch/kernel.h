// src/launch/kernel.h: build a generated kernel for either backend, and launch it
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compile/device_link.h"
#include "launch/host_launch.h"
#include "runtime/backend.h"

namespace nu {

class host_library;

struct compiled_kernel {
    void* function = nullptr;               // CUfunction (CUDA backend)
    host_entry entry = nullptr;             // host backend
    std::shared_ptr<host_library> library;  // keeps `entry` loaded
    std::string name;    // entry symbol, for inspection and profilers
    std::string source;  // the generated translation unit (tests compile it with NVRTC too)
};

// The current device's properties, queried once per device: launches must not pay for
// driver attribute calls (or, on the host backend, the sysfs read behind
// hardware_concurrency()).
const device_info& current_device_info();

// A built translation unit, whose entry points are looked up by name.
struct kernel_module {
    bool host = false;
    void* cuda_module = nullptr;            // CUmodule (CUDA backend)
    std::shared_ptr<host_library> library;  // host backend
};

// Builds `source` through the kernel cache: a CUBIN for the current device by NVRTC (with
// `nvrtc_extra` options, e.g. include paths), or a shared library by the host compiler.
// `entries`: the entry points the caller will look up (a cached host library lacking one
// is rebuilt).
// `links`: files linked into the module (src/compile/device_link.h); `api` names the
// kernel in link errors.
// `host_extra`: options added to the host compiler's (emulation_host_options() for
// emulated kernels).
kernel_module build_module(const std::string& source, bool host, bool fastmath,
                           const std::vector<std::string>& nvrtc_extra = {},
                           const std::vector<std::string>& entries = {},
                           const std::vector<link_file>& links = {}, const std::string& api = "",
                           const std::vector<std::string>& host_extra = {});
// The CUfunction, or the host entry's address, named `name`.
void* module_entry(const kernel_module& m, const std::string& name);

// Host compiler options of code built for the emulated cuda target (@cuda.jit kernels,
// and vectorize/guvectorize/reduce/ufunc methods of target "cuda" on the host backend):
// -O1. Emulation runs code written for a GPU, usually to test it, so build time is what
// such runs wait on: -O1 builds in about half the time of -O3 (a kernel of 25 whole-array
// reductions: 3.4 s -> 1.6 s of g++). Results are the same bits: no fast-math and no
// contraction (-ffp-contract=off, -mno-fma) at any level. The cpu and parallel targets
// keep -O3 (vectorised loops).
const std::vector<std::string>& emulation_host_options();

// A module with one entry point `entry`.
compiled_kernel build_kernel(const std::string& source, const std::string& entry, bool host,
                             bool fastmath, const std::vector<std::string>& host_extra = {});

// Runs `n` work items. Host: in this thread, or over the thread pool when `parallel`, in
// chunks of block * per_thread * 16 items (Ctrl-C stops at a chunk boundary); returns
// true with {index, axis, size, item} in report[4] when a checked gufunc indexed out of
// bounds. Device: blocks of `block` threads, each handling `per_thread` items per
// grid-stride step, and no more blocks than fill the device; returns false.
bool launch_kernel(const compiled_kernel& k, void* params, long long n, bool host, bool parallel,
                   unsigned block, long long per_thread, stream_handle stream,
                   long long* report = nullptr);

// A device launch of `n` items in blocks of `block` threads with `shared` bytes of dynamic
// shared memory (opted in above the default limit), each block taking `block` items per
// grid-stride step, and no more blocks than fill the device (staged gufunc kernels).
void launch_staged(const compiled_kernel& k, void* params, long long n, unsigned block,
                   std::size_t shared, stream_handle stream);

}  // namespace nu
