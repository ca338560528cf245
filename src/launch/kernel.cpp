// src/launch/kernel.cpp: kernel builds (NVRTC or host compiler) and launches
#include "launch/kernel.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <thread>
#include <vector>

#include "compile/host_build.h"
#include "compile/nvrtc.h"
#include "launch/reduce_launch.h"
#include "runtime/runtime.h"

namespace nu {
namespace {

}  // namespace

const device_info& current_device_info() {
    static std::mutex mutex;
    static std::unordered_map<int, device_info> cache;
    backend& b = active_backend();
    const int dev = b.current_device();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(dev);
    if (it == cache.end()) it = cache.emplace(dev, b.device(dev)).first;
    return it->second;  // never erased: the reference stays valid
}

kernel_module build_module(const std::string& source, bool host, bool fastmath,
                           const std::vector<std::string>& nvrtc_extra,
                           const std::vector<std::string>& entries,
                           const std::vector<link_file>& links, const std::string& api,
                           const std::vector<std::string>& host_extra) {
    kernel_module m;
    m.host = host;
    if (host) {
        // NUMBACUDA_UFUNC_NVRTC_CHECK=1 (a test-suite mode): every host build's source is
        // also compiled by NVRTC for sm_90 (links aside), so a kernel only a GPU would
        // compile is proved to compile without one.
        if (const char* check = std::getenv("NUMBACUDA_UFUNC_NVRTC_CHECK"); check && std::string(check) == "1" &&
                                                                               links.empty()) {
            nvrtc_options o;
            o.cc_major = 9;
            o.cc_minor = 0;
            o.cubin = false;
            o.fastmath = fastmath;
            o.extra = nvrtc_extra;
            if (includes_cub(source)) {
                const std::vector<std::string> cub = reduce_nvrtc_extra();
                o.extra.insert(o.extra.end(), cub.begin(), cub.end());
            }
            nvrtc_build(source, o);
        }
        // Hidden visibility: the translated functions are inlined into the loop instead of
        // called through the PLT (only the extern "C" entries are exported).
        std::vector<std::string> options = {"-fvisibility=hidden"};
        if (fastmath) options.push_back("-ffast-math");
        options.insert(options.end(), host_extra.begin(), host_extra.end());
        const std::vector<std::string> units = host_link_units(links, api);
        for (const auto& o : host_link_options(links)) options.push_back(o);
        m.library = build_host(source, options, entries, units);
        return m;
    }
    backend& b = active_backend();
    const device_info& info = current_device_info();
    nvrtc_options opts;
    target_device(info.cc_major, info.cc_minor, opts);  // a CUBIN, or PTX for a newer GPU
    opts.fastmath = fastmath;
    opts.extra = nvrtc_extra;
    if (!links.empty()) {
        if (!opts.cubin) {  // a GPU newer than this NVRTC: nvJitLink must know the device
            opts.cc_major = info.cc_major;
            opts.cc_minor = info.cc_minor;
            opts.cubin = true;
        }
        m.cuda_module = b.load_module(link_kernel_cubin(source, links, opts));
        return m;
    }
    // PTX for the driver to compile at load time: the driver's JIT takes no --fmad=false, so
    // float16 arithmetic spells its rounding (src/kernels/nu_half.cuh).
    if (!opts.cubin && !fastmath) opts.extra.push_back("-DNU_F16_EXPLICIT_RN");
    m.cuda_module = b.load_module(nvrtc_build(source, opts));
    return m;
}

void* module_entry(const kernel_module& m, const std::string& name) {
    return m.host ? m.library->symbol(name) : active_backend().module_function(m.cuda_module, name);
}

const std::vector<std::string>& emulation_host_options() {
    static const std::vector<std::string> options = {"-O1"};
    return options;
}

compiled_kernel build_kernel(const std::string& source, const std::string& entry, bool host,
                             bool fastmath, const std::vector<std::string>& host_extra) {
    const kernel_module m = build_module(source, host, fastmath, {}, {entry}, {}, "", host_extra);
    compiled_kernel k;
    k.name = entry;
    k.source = source;
    k.library = m.library;
    if (host) {
        k.entry = reinterpret_cast<host_entry>(module_entry(m, entry));
    } else {
        k.function = module_entry(m, entry);
    }
    return k;
}

bool launch_kernel(const compiled_kernel& k, void* params, long long n, bool host, bool parallel,
                   unsigned block, long long per_thread, stream_handle stream, long long* report) {
    if (host) {
        // One chunk is what a GPU block does (times 16): an elementwise chunk of float32 is
        // 16 Ki elements, a gufunc chunk 2 Ki loop items.
        long long ignored[4];
        return run_host_items(k.entry, params, n, parallel,
                              static_cast<long long>(block) * std::max(1LL, per_thread) * 16,
                              report ? report : ignored);
    }
    const long long items_per_block = static_cast<long long>(block) * std::max(1LL, per_thread);
    const long long wanted = (n + items_per_block - 1) / items_per_block;
    // A grid-stride loop needs no more blocks than fill the device: as many per
    // multiprocessor as the occupancy API says fit (registers decide), not 2048 / block.
    backend& b = active_backend();
    const long long limit = static_cast<long long>(current_device_info().multiprocessors) *
                            std::max(1, b.max_active_blocks(k.function, block, 0));
    const unsigned grid = static_cast<unsigned>(std::max(1LL, std::min(wanted, limit)));
    b.launch(k.function, grid, block, stream, params);
    return false;
}

void launch_staged(const compiled_kernel& k, void* params, long long n, unsigned block,
                   std::size_t shared, stream_handle stream) {
    backend& b = active_backend();
    const long long wanted = (n + block - 1) / block;
    const long long limit = static_cast<long long>(current_device_info().multiprocessors) *
                            std::max(1, b.max_active_blocks(k.function, block, shared));
    launch_shape shape;
    shape.grid[0] = static_cast<unsigned>(std::max(1LL, std::min(wanted, limit)));
    shape.block[0] = block;
    shape.dynamic_shared = static_cast<unsigned>(shared);
    b.launch_shaped(k.function, shape, stream, params);
}

}  // namespace nu
