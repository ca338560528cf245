// src/compile/nvjitlink.cpp: nvJitLink, device code pieces -> CUBIN, loaded with dlopen
#include "compile/nvjitlink.h"

#include <cstdint>
#include <mutex>

#include "compile/toolkit.h"

namespace nu {
namespace {

// nvJitLink's C API, declared here instead of including nvJitLink.h: that header renames
// each call to a versioned symbol (__nvJitLinkCreate_13_0) of the toolkit it came from,
// while we resolve whichever library the machine has at run time.
using handle_t = void*;
using create_fn = int (*)(handle_t*, std::uint32_t, const char**);
using destroy_fn = int (*)(handle_t*);
using add_data_fn = int (*)(handle_t, int, const void*, std::size_t, const char*);
using complete_fn = int (*)(handle_t);
using size_fn = int (*)(handle_t, std::size_t*);
using get_fn = int (*)(handle_t, char*);
using version_fn = int (*)(unsigned*, unsigned*);

struct nvjitlink_api {
    std::string path;
    create_fn create = nullptr;
    destroy_fn destroy = nullptr;
    add_data_fn add_data = nullptr;
    complete_fn complete = nullptr;
    size_fn cubin_size = nullptr;
    get_fn cubin = nullptr;
    size_fn ptx_size = nullptr;
    get_fn ptx = nullptr;
    size_fn error_log_size = nullptr;
    get_fn error_log = nullptr;
    version_fn version = nullptr;
};

const nvjitlink_api& api() {
    static std::once_flag once;
    static nvjitlink_api a;
    static std::string load_error;
    std::call_once(once, [] {
        const opened_library lib =
            open_library({"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"});
        void* handle = lib.handle;
        a.path = lib.path;
        if (!handle) {
            load_error =
                "nvjitlink: cannot load libnvJitLink (CUDA 12.0+), which links kernels with "
                "link= files (set NUMBACUDA_UFUNC_CUDA_HOME to the CUDA toolkit, or pip install "
                "nvidia-nvjitlink)" + lib.tried;
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
        if (n.add_data(g.h, static_cast<int>(in.kind), data.data(), data.size(), in.name.c_str()) != 0) {
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
