// src/runtime/driver_api.cpp: dlopen of libcuda and CUresult -> cuda_error
#include "runtime/driver_api.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "runtime/errors.h"

namespace nu {
namespace {

driver_api g_api;
const driver_api* g_loaded = nullptr;
std::string g_why;
pid_t g_init_pid = 0;  // the process that initialized the driver

// The driver library: $NUMBACUDA_UFUNC_LIBCUDA where set (the tests load their counting
// fake, tests/cxx/fake_cuda_driver.cpp, this way), else libcuda.so.1, else libcuda.so.
// Never linked: on machines without a driver the link would break `import`. `name` says
// which library was tried, for the error message.
void* open_driver_library(std::string* name) {
    const char* path = std::getenv("NUMBACUDA_UFUNC_LIBCUDA");
    if (path != nullptr && *path != '\0') {
        *name = std::string(path) + " (NUMBACUDA_UFUNC_LIBCUDA)";
        return dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    *name = "libcuda.so.1";
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    return lib;
}

void load_once() {
    std::string name;
    void* lib = open_driver_library(&name);
    if (lib == nullptr) {
        const char* err = dlerror();
        g_why = "the CUDA driver (" + name + ") could not be loaded: " + (err ? err : "not found");
        return;
    }
    bool complete = true;
    // The versioned name first (cuMemAlloc_v2), then the plain one: drivers older than
    // the headers may only export the older spelling of a few entry points.
#define NU_RESOLVE_FN(name)                                                             \
    {                                                                                   \
        void* sym = dlsym(lib, nu_cu_symbol_##name);                                    \
        if (sym == nullptr) sym = dlsym(lib, #name);                                    \
        g_api.name = reinterpret_cast<decltype(g_api.name)>(sym);                       \
        if (sym == nullptr) {                                                           \
            complete = false;                                                           \
            g_why = std::string("the CUDA driver is too old: it lacks ") + nu_cu_symbol_##name; \
        }                                                                               \
    }
    NU_DRIVER_FUNCTIONS(NU_RESOLVE_FN)
    NU_DRIVER_EXTRA_FUNCTIONS(NU_RESOLVE_FN)
#undef NU_RESOLVE_FN
    if (!complete) return;
    const CUresult status = g_api.cuInit(0);
    if (status != CUDA_SUCCESS) {
        const char* name = nullptr;
        g_api.cuGetErrorName(status, &name);
        g_why = std::string("cuInit failed with ") + (name ? name : "an unknown error") +
                " (no usable GPU or driver)";
        return;
    }
    g_init_pid = getpid();
    g_loaded = &g_api;
}

}  // namespace

const driver_api* load_driver(std::string* why) {
    static std::once_flag once;
    std::call_once(once, load_once);
    if (g_loaded == nullptr && why != nullptr) *why = g_why;
    return g_loaded;
}

int driver_cuda_version() {
    static const int version = [] {
        std::string name;
        void* lib = open_driver_library(&name);
        if (lib == nullptr) return 0;
        auto get = reinterpret_cast<nu_cu_pfn_cuDriverGetVersion>(dlsym(lib, nu_cu_symbol_cuDriverGetVersion));
        int v = 0;
        if (get == nullptr || get(&v) != CUDA_SUCCESS) return 0;
        return v;  // the library stays loaded, as load_driver keeps it
    }();
    return version;
}

void check(CUresult status, const char* call) {
    if (status == CUDA_SUCCESS) return;
    const char* name = nullptr;
    const char* text = nullptr;
    if (g_loaded != nullptr) {
        g_api.cuGetErrorName(status, &name);
        g_api.cuGetErrorString(status, &text);
    }
    const std::string error_name = name ? name : "CUDA_ERROR_UNKNOWN";
    std::string message = std::string(call) + "() failed: " + error_name +
                          (text ? std::string(" (") + text + ")" : std::string());
    // A forked child inherits the parent's initialized driver state, which CUDA does not
    // support: its calls fail (CUDA_ERROR_NOT_INITIALIZED, usually). Say so, as Numba does.
    if (g_loaded != nullptr && getpid() != g_init_pid) {
        message = "CUDA initialized before forking: pid " + std::to_string(getpid()) + " forked from pid " +
                  std::to_string(g_init_pid) + " after CUDA driver init (" + message +
                  "); start worker processes with the 'spawn' or 'forkserver' method";
    }
    throw cuda_error(static_cast<int>(status), error_name, call, message);
}

}  // namespace nu
