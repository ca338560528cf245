// src/compile/nvjitlink.cpp: nvJitLink, device code pieces -> CUBIN, loaded with dlopen
#include "compile/nvjitlink.h"

#include <algorithm>
#include <cstdint>
#include <dlfcn.h>
#include <mutex>

#include "compile/toolkit.h"
#include "compile/nvrtc.h"
#include "cuda_api/nvjitlink.h"
#include "runtime/driver_api.h"

namespace nu {
namespace {

// nvJitLink's C API: src/cuda_api/nvjitlink.h.
using handle_t = nvJitLinkHandle;

struct nvjitlink_api {
    std::string path;
    nu_nvjitlink_pfn_nvJitLinkCreate create = nullptr;
    nu_nvjitlink_pfn_nvJitLinkDestroy destroy = nullptr;
    nu_nvjitlink_pfn_nvJitLinkAddData add_data = nullptr;
    nu_nvjitlink_pfn_nvJitLinkComplete complete = nullptr;
    nu_nvjitlink_pfn_nvJitLinkGetLinkedCubinSize cubin_size = nullptr;
    nu_nvjitlink_pfn_nvJitLinkGetLinkedCubin cubin = nullptr;
    nu_nvjitlink_pfn_nvJitLinkGetLinkedPtxSize ptx_size = nullptr;
    nu_nvjitlink_pfn_nvJitLinkGetLinkedPtx ptx = nullptr;
    nu_nvjitlink_pfn_nvJitLinkGetErrorLogSize error_log_size = nullptr;
    nu_nvjitlink_pfn_nvJitLinkGetErrorLog error_log = nullptr;
    nu_nvjitlink_pfn_nvJitLinkVersion version = nullptr;
};

const nvjitlink_api& api() {
    static std::once_flag once;
    static nvjitlink_api a;
    static std::string load_error;
    std::call_once(once, [] {
        // The major of the NVRTC in use (its LTO IR links with nvJitLink of that major
        // only), else the newest the driver supports.
        std::vector<library_candidate> found = find_library_candidates("libnvJitLink.so.", {13, 12});
        std::vector<library_candidate> order;  // best first
        while (true) {
            const int i = choose_for_driver(driver_cuda_version(), found);
            if (i < 0) break;
            order.push_back(found[static_cast<std::size_t>(i)]);
            found.erase(found.begin() + i);
        }
        const int nvrtc_major = nvrtc_chosen_major();
        std::stable_partition(order.begin(), order.end(),
                              [&](const library_candidate& c) { return c.major == nvrtc_major; });
        void* handle = nullptr;
        std::string tried;
        for (const auto& c : order) {
            handle = ::dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (handle) {
                a.path = c.path;
                break;
            }
            if (c.path.find('/') != std::string::npos) tried += "\n  " + c.path + ": " + ::dlerror();
        }
        if (!handle) {
            load_error =
                "nvjitlink: cannot load libnvJitLink (CUDA 12 or 13, no newer than the driver), "
                "which links kernels with link= files: pip install \"numbacuda_ufunc[cu13]\" "
                "(or [cu12]), or set NUMBACUDA_UFUNC_CUDA_HOME to a CUDA toolkit" + tried;
            return;
        }
        const std::string what = "nvjitlink: " + a.path;
        try {
            resolve(handle, "nvJitLinkCreate", a.create, what);
            resolve(handle, "nvJitLinkDestroy", a.destroy, what);
            resolve(handle, "nvJitLinkAddData", a.add_data, what);
            resolve(handle, "nvJitLinkComplete", a.complete, what);
            resolve(handle, "nvJitLinkGetLinkedCubinSize", a.cubin_size, what);
            resolve(handle, "nvJitLinkGetLinkedCubin", a.cubin, what);
            resolve(handle, "nvJitLinkGetLinkedPtxSize", a.ptx_size, what);
            resolve(handle, "nvJitLinkGetLinkedPtx", a.ptx, what);
            resolve(handle, "nvJitLinkGetErrorLogSize", a.error_log_size, what);
            resolve(handle, "nvJitLinkGetErrorLog", a.error_log, what);
            resolve(handle, "nvJitLinkVersion", a.version, what);
        } catch (const std::exception& e) {
            load_error = e.what();
        }
    });
    if (!load_error.empty()) throw std::runtime_error(load_error);
    return a;
}

// Destroys the link on every exit path.
struct link_guard {
    handle_t h = nullptr;
    ~link_guard() {
        if (h) api().destroy(&h);
    }
};

std::string error_log(handle_t h) {
    std::size_t n = 0;
    if (api().error_log_size(h, &n) != 0 || n <= 1) return "";
    std::string log(n, '\0');
    if (api().error_log(h, &log[0]) != 0) return "";
    while (!log.empty() && log.back() == '\0') log.pop_back();
    return log;
}

}  // namespace

std::string nvjitlink_link(const std::vector<link_input>& inputs, int cc, bool lto, bool ptx, bool fma) {
    const nvjitlink_api& n = api();
    std::vector<std::string> options = {"-arch=sm_" + std::to_string(cc)};
    if (lto) options.push_back("-lto");
    if (lto && !fma) {
        options.push_back("-fma=0");
        // -fma=0 governs the LTO IR only: ptxas still fused the kernel's own unrounded
        // mul.f16/add.f16 (inline PTX, src/kernels/nu_half.cuh) into HFMA2 without this.
        options.push_back("-Xptxas=-fmad=false");
    }
    if (ptx) options.push_back("-ptx");
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    link_guard g;
    if (n.create(&g.h, static_cast<std::uint32_t>(argv.size()), argv.data()) != 0) {
        g.h = nullptr;
        throw std::runtime_error("nvjitlink: nvJitLinkCreate failed (options: -arch=sm_" + std::to_string(cc) + ")");
    }
    std::string names;
    for (const link_input& in : inputs) {
        names += (names.empty() ? "" : ", ") + in.name;
        std::string data = in.data;
        if (in.kind == link_input_kind::ptx) data.push_back('\0');  // PTX is NUL-terminated text
        if (n.add_data(g.h, static_cast<nvJitLinkInputType>(in.kind), data.data(), data.size(), in.name.c_str()) != 0) {
            const std::string log = error_log(g.h);
            throw link_error("nvjitlink: cannot add '" + in.name + "' to the link for sm_" + std::to_string(cc) +
                                 (log.empty() ? std::string() : ":\n" + log),
                             log);
        }
    }
    if (n.complete(g.h) != 0) {
        const std::string log = error_log(g.h);
        throw link_error("nvjitlink: linking " + names + " for sm_" + std::to_string(cc) + " failed" +
                             (log.empty() ? std::string() : ":\n" + log),
                         log);
    }
    std::size_t size = 0;
    if (ptx) {  // the linked program as PTX text (its size counts the terminating NUL)
        if (n.ptx_size(g.h, &size) != 0) throw std::runtime_error("nvjitlink: nvJitLinkGetLinkedPtxSize failed");
        std::string text(size, '\0');
        if (size && n.ptx(g.h, &text[0]) != 0) throw std::runtime_error("nvjitlink: nvJitLinkGetLinkedPtx failed");
        while (!text.empty() && text.back() == '\0') text.pop_back();
        return text;
    }
    if (n.cubin_size(g.h, &size) != 0) throw std::runtime_error("nvjitlink: nvJitLinkGetLinkedCubinSize failed");
    std::string cubin(size, '\0');
    if (size && n.cubin(g.h, &cubin[0]) != 0) throw std::runtime_error("nvjitlink: nvJitLinkGetLinkedCubin failed");
    return cubin;
}

std::pair<int, int> nvjitlink_version() {
    unsigned major = 0, minor = 0;
    if (api().version(&major, &minor) != 0) throw std::runtime_error("nvjitlink: nvJitLinkVersion failed");
    return {static_cast<int>(major), static_cast<int>(minor)};
}

std::string nvjitlink_library_path() { return api().path; }

}  // namespace nu
