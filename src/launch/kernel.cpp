// src/launch/kernel.cpp: kernel builds (NVRTC or host compiler) and launches
#include "launch/kernel.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <thread>
#include <vector>

#include "compile/host_build.h"
#include "compile/nvrtc.h"
#include "runtime/runtime.h"

namespace nu {
namespace {

// Below this many work items a parallel host launch is not worth starting threads for.
constexpr long long k_parallel_min = 1 << 16;

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
                           const std::vector<std::string>& entries) {
    kernel_module m;
    m.host = host;
    if (host) {
        std::vector<std::string> options;
        if (fastmath) options.push_back("-ffast-math");
        m.library = build_host(source, options, entries);
        return m;
    }
    backend& b = active_backend();
    const device_info& info = current_device_info();
    nvrtc_options opts;
    opts.cc_major = info.cc_major;
    opts.cc_minor = info.cc_minor;
    opts.cubin = true;
    opts.fastmath = fastmath;
    opts.extra = nvrtc_extra;
    m.cuda_module = b.load_module(nvrtc_build(source, opts));
    return m;
}

void* module_entry(const kernel_module& m, const std::string& name) {
    return m.host ? m.library->symbol(name) : active_backend().module_function(m.cuda_module, name);
}

compiled_kernel build_kernel(const std::string& source, const std::string& entry, bool host,
                             bool fastmath) {
    const kernel_module m = build_module(source, host, fastmath, {}, {entry});
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

void launch_kernel(const compiled_kernel& k, void* params, long long n, bool host, bool parallel,
                   unsigned block, long long per_thread, stream_handle stream) {
    if (host) {
        // hardware_concurrency() reads sysfs: once per process, not per launch.
        static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        if (!parallel || cores == 1 || n < k_parallel_min) {
            k.entry(params, 0, n);
            return;
        }
        std::vector<std::thread> workers;
        const long long chunk = (n + cores - 1) / cores;
        for (unsigned t = 0; t < cores; ++t) {
            const long long begin = t * chunk, end = std::min(n, begin + chunk);
            if (begin < end) workers.emplace_back(k.entry, params, begin, end);
        }
        for (std::thread& w : workers) w.join();
        return;
    }
    const long long items_per_block = static_cast<long long>(block) * std::max(1LL, per_thread);
    const long long wanted = (n + items_per_block - 1) / items_per_block;
    // A grid-stride loop needs no more blocks than fill the device (2048 threads per SM).
    const long long limit = static_cast<long long>(current_device_info().multiprocessors) * (2048 / block);
    const unsigned grid = static_cast<unsigned>(std::max(1LL, std::min(wanted, limit)));
    active_backend().launch(k.function, grid, block, stream, params);
}

}  // namespace nu
