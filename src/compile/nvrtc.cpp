// src/compile/nvrtc.cpp: NVRTC, CUDA C++ -> PTX/CUBIN, with the library loaded by dlopen
#include "compile/nvrtc.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <mutex>
#include <stdexcept>

#include "compile/compile_error.h"
#include "compile/embedded_headers.h"
#include "compile/kernel_cache.h"
#include "compile/toolkit.h"
#include "cuda_api/nvrtc.h"
#include "runtime/driver_api.h"
#include "runtime/errors.h"

namespace nu {

namespace {

// Only the entry points we call; resolved once, never unloaded (NVRTC keeps global state).
struct nvrtc_api {
    std::string path;
    nu_nvrtc_pfn_nvrtcVersion version;
    nu_nvrtc_pfn_nvrtcGetErrorString get_error_string;
    nu_nvrtc_pfn_nvrtcCreateProgram create_program;
    nu_nvrtc_pfn_nvrtcDestroyProgram destroy_program;
    nu_nvrtc_pfn_nvrtcCompileProgram compile_program;
    nu_nvrtc_pfn_nvrtcGetProgramLogSize get_log_size;
    nu_nvrtc_pfn_nvrtcGetProgramLog get_log;
    nu_nvrtc_pfn_nvrtcGetPTXSize get_ptx_size;
    nu_nvrtc_pfn_nvrtcGetPTX get_ptx;
    nu_nvrtc_pfn_nvrtcGetCUBINSize get_cubin_size;
    nu_nvrtc_pfn_nvrtcGetCUBIN get_cubin;
    // Optional (NVRTC 11.2+): null when absent.
    nu_nvrtc_pfn_nvrtcGetNumSupportedArchs num_supported_archs = nullptr;
    nu_nvrtc_pfn_nvrtcGetSupportedArchs supported_archs = nullptr;
};

const std::initializer_list<int> k_majors = {13, 12};

// The libnvrtc copies on this machine that the driver can use, best first (newest major the
// driver supports; with no driver, newest), and the driver's version.
struct nvrtc_choice {
    int driver_version = 0;
    std::vector<library_candidate> found;   // every copy, in search order
    std::vector<library_candidate> usable;  // those the driver supports, best first
};

const nvrtc_choice& choice() {
    static const nvrtc_choice c = [] {
        nvrtc_choice out;
        out.driver_version = driver_cuda_version();
        out.found = find_library_candidates("libnvrtc.so.", k_majors);
        std::vector<library_candidate> rest = out.found;
        while (true) {  // repeated choice: the best, then the best of the rest, ...
            const int i = choose_for_driver(out.driver_version, rest);
            if (i < 0) break;
            out.usable.push_back(rest[static_cast<std::size_t>(i)]);
            rest.erase(rest.begin() + i);
        }
        return out;
    }();
    return c;
}

// The first usable libnvrtc that exists as a file ("" when none): its identity keys the
// kernel cache without loading it.
const std::string& located_path() {
    static const std::string path = [] {
        for (const auto& c : choice().usable)
            if (c.path.find('/') != std::string::npos) return c.path;
        return std::string();
    }();
    return path;
}

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

std::string nvrtc_mismatch_message(int driver_version, const std::vector<library_candidate>& found) {
    std::string names;
    for (const auto& c : found)
        if (c.path.find('/') != std::string::npos)
            names += (names.empty() ? "" : ", ") + c.path + " (CUDA " + std::to_string(c.major) + ")";
    const int major = driver_version / 1000;
    std::string fix = major >= 12 ? std::string("pip install \"numbacuda_ufunc[cu") + std::to_string(major) + "]\""
                                  : std::string("update the GPU driver to one for CUDA 12 or later");
    return "nvrtc: the GPU driver supports CUDA " + cuda_version_text(driver_version) +
           " (cuDriverGetVersion), but the NVRTC found is newer: " + names +
           "; code it compiles would not load. Install an NVRTC the driver supports: " + fix +
           " (or set NUMBACUDA_UFUNC_CUDA_HOME to a CUDA " + std::to_string(major) + " toolkit)";
}

const library_candidate* choose_nvrtc(int driver_version, const std::vector<library_candidate>& found) {
    const int i = choose_for_driver(driver_version, found);
    if (i >= 0) return &found[static_cast<std::size_t>(i)];
    bool any_file = false;
    for (const auto& c : found) any_file = any_file || c.path.find('/') != std::string::npos;
    if (any_file) throw cuda_support_error(nvrtc_mismatch_message(driver_version, found));
    return nullptr;
}

int nvrtc_driver_version() { return choice().driver_version; }

std::vector<library_candidate> nvrtc_candidates() { return choice().found; }

int nvrtc_chosen_major() { return choice().usable.empty() ? 0 : choice().usable.front().major; }

namespace {

const nvrtc_api& api() {
    static std::once_flag once;
    static nvrtc_api a;
    static std::string load_error;
    static bool support_error = false;
    std::call_once(once, [] {
        const nvrtc_choice& c = choice();
        void* handle = nullptr;
        std::string tried;
        for (const auto& cand : c.usable) {
            handle = ::dlopen(cand.path.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (handle) {
                a.path = cand.path;
                break;
            }
            if (cand.path.find('/') != std::string::npos) tried += "\n  " + cand.path + ": " + ::dlerror();
        }
        if (!handle) {
            try {
                choose_nvrtc(c.driver_version, c.usable.empty() ? c.found : c.usable);
            } catch (const cuda_support_error& e) {
                load_error = e.what();
                support_error = true;
                return;
            }
            const int major = c.driver_version / 1000;
            load_error = std::string("nvrtc: cannot load libnvrtc (CUDA 12 or 13): pip install "
                                     "\"numbacuda_ufunc[cu") + (major == 12 ? "12" : "13") +
                         "]\", or set NUMBACUDA_UFUNC_CUDA_HOME to a CUDA toolkit" + tried;
            return;
        }
    const std::string what = "nvrtc: " + a.path;
        resolve(handle, "nvrtcVersion", a.version, what);
        resolve(handle, "nvrtcGetErrorString", a.get_error_string, what);
        resolve(handle, "nvrtcCreateProgram", a.create_program, what);
        resolve(handle, "nvrtcDestroyProgram", a.destroy_program, what);
        resolve(handle, "nvrtcCompileProgram", a.compile_program, what);
        resolve(handle, "nvrtcGetProgramLogSize", a.get_log_size, what);
        resolve(handle, "nvrtcGetProgramLog", a.get_log, what);
        resolve(handle, "nvrtcGetPTXSize", a.get_ptx_size, what);
        resolve(handle, "nvrtcGetPTX", a.get_ptx, what);
        resolve(handle, "nvrtcGetCUBINSize", a.get_cubin_size, what);
        resolve(handle, "nvrtcGetCUBIN", a.get_cubin, what);
        a.num_supported_archs =
            reinterpret_cast<decltype(a.num_supported_archs)>(::dlsym(handle, "nvrtcGetNumSupportedArchs"));
        a.supported_archs =
            reinterpret_cast<decltype(a.supported_archs)>(::dlsym(handle, "nvrtcGetSupportedArchs"));
    });
    if (support_error) throw cuda_support_error(load_error);
    if (!load_error.empty()) throw std::runtime_error(load_error);
    return a;
}

void check(nvrtcResult r, const char* call) {
    if (r != NVRTC_SUCCESS)
        throw std::runtime_error(std::string("nvrtc: ") + call + " failed: " +
                                 api().get_error_string(r));
}

// Destroys the program on every exit path.
struct program_guard {
    nvrtcProgram prog = nullptr;
    ~program_guard() {
        if (prog) api().destroy_program(&prog);
    }
};

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
    return s;
}

}  // namespace

std::vector<std::string> nvrtc_option_list(const nvrtc_options& opts) {
    std::string cc = std::to_string(opts.cc_major * 10 + opts.cc_minor);
    std::vector<std::string> o = {
        "-std=c++17",
        std::string("--gpu-architecture=") + (opts.cubin ? "sm_" : "compute_") + cc,
    };
    if (opts.fastmath) {
        o.push_back("--use_fast_math");
    } else {
        // Exact IEEE results that match NumPy bit for bit: no a*b+c -> fma contraction.
        o.push_back("--fmad=false");
    }
    o.insert(o.end(), opts.extra.begin(), opts.extra.end());
    return o;
}

std::string nvrtc_compile(const std::string& source, const nvrtc_options& opts) {
    const nvrtc_api& n = api();
    std::vector<const char*> header_text, header_names;
    for (const auto& h : embedded_headers()) {
        header_names.push_back(h.name);
        header_text.push_back(h.text);
    }
    program_guard g;
    check(n.create_program(&g.prog, source.c_str(), "nu_module.cu", int(header_text.size()),
                           header_text.data(), header_names.data()),
          "nvrtcCreateProgram");
    std::vector<std::string> options = nvrtc_option_list(opts);
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    nvrtcResult r = n.compile_program(g.prog, int(argv.size()), argv.data());

    std::size_t log_size = 0;
    check(n.get_log_size(g.prog, &log_size), "nvrtcGetProgramLogSize");
    std::string log(log_size, '\0');
    if (log_size > 1) check(n.get_log(g.prog, &log[0]), "nvrtcGetProgramLog");
    while (!log.empty() && log.back() == '\0') log.pop_back();

    if (r != NVRTC_SUCCESS) {
        std::string msg = std::string("nvrtc: compilation failed (") + n.get_error_string(r) +
                          ")\noptions: " + join(options) + "\n" + log;
        const char* dbg = std::getenv("NUMBACUDA_UFUNC_DEBUG_SOURCE");
        if (dbg && std::string(dbg) == "1") msg += "\n---- source ----\n" + source;
        throw compile_error(msg, log);
    }
    std::size_t size = 0;
    std::string out;
    bool lto = false;  // -dlto: LTO IR for nvJitLink (cuda.compile(output="ltoir"))
    for (const auto& o : opts.extra) lto = lto || o == "-dlto";
    if (lto) {
        // Resolved on use (NVRTC before 12.0 has no LTO IR); the extra reference that
        // RTLD_NOLOAD takes is kept, like the library itself.
        using size_fn = nu_nvrtc_pfn_nvrtcGetLTOIRSize;
        using get_fn = nu_nvrtc_pfn_nvrtcGetLTOIR;
        void* self = ::dlopen(n.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        auto get_size = self ? reinterpret_cast<size_fn>(::dlsym(self, "nvrtcGetLTOIRSize")) : nullptr;
        auto get = self ? reinterpret_cast<get_fn>(::dlsym(self, "nvrtcGetLTOIR")) : nullptr;
        if (!get_size || !get) throw std::runtime_error("nvrtc: " + n.path + " cannot emit LTO IR (needs CUDA 12.0+)");
        check(get_size(g.prog, &size), "nvrtcGetLTOIRSize");
        out.resize(size);
        check(get(g.prog, &out[0]), "nvrtcGetLTOIR");
    } else if (opts.cubin) {
        check(n.get_cubin_size(g.prog, &size), "nvrtcGetCUBINSize");
        out.resize(size);
        check(n.get_cubin(g.prog, &out[0]), "nvrtcGetCUBIN");
    } else {
        check(n.get_ptx_size(g.prog, &size), "nvrtcGetPTXSize");
        out.resize(size);
        check(n.get_ptx(g.prog, &out[0]), "nvrtcGetPTX");
        while (!out.empty() && out.back() == '\0') out.pop_back();
    }
    return out;
}

std::pair<int, int> nvrtc_version() {
    int major = 0, minor = 0;
    check(api().version(&major, &minor), "nvrtcVersion");
    return {major, minor};
}

std::string nvrtc_library_path() { return api().path; }

namespace {

// The library's full version: the resolved file name (libnvrtc.so.12.8.93) tells the
// minor release that nvrtcVersion() rounds off on some builds.
std::pair<int, int> nvrtc_full_version() {
    static const std::pair<int, int> v = [] {
        const std::string id = nvrtc_identity();
        const std::size_t at = id.find("libnvrtc.so.");
        int major = 0, minor = 0;
        if (at == std::string::npos ||
            std::sscanf(id.c_str() + at + 12, "%d.%d", &major, &minor) != 2) {
            std::tie(major, minor) = nvrtc_version();
        }
        return std::make_pair(major, minor);
    }();
    return v;
}

// -minimal (NVRTC 12.4+) leaves out what generated code never uses: textures and surfaces,
// the device runtime (cudaMalloc..., launches from device code) and the runtime API's
// types. A small kernel then compiles in ~2/3 of the time.
bool nvrtc_has_minimal() { return nvrtc_full_version() >= std::make_pair(12, 4); }

}  // namespace

bool nvrtc_has_pch() { return nvrtc_full_version() >= std::make_pair(12, 8); }

std::vector<int> nvrtc_supported_archs() {
    static const std::vector<int> archs = [] {
        const nvrtc_api& n = api();
        std::vector<int> out;
        int count = 0;
        if (!n.num_supported_archs || !n.supported_archs) return out;
        if (n.num_supported_archs(&count) != NVRTC_SUCCESS || count <= 0) return out;
        out.resize(static_cast<std::size_t>(count));
        if (n.supported_archs(out.data()) != NVRTC_SUCCESS) out.clear();
        std::sort(out.begin(), out.end());
        return out;
    }();
    return archs;
}

void choose_device_target(int cc, const std::vector<int>& archs, nvrtc_options& opts) {
    int same_major = 0, below = 0;
    bool listed = false;
    for (int a : archs) {
        listed = listed || a == cc;
        if (a < cc && a / 10 == cc / 10) same_major = std::max(same_major, a);
        if (a < cc) below = std::max(below, a);
    }
    int target = cc;
    opts.cubin = true;
    if (!listed && same_major > 0) {
        target = same_major;
    } else if (!listed && below > 0) {
        target = below;
        opts.cubin = false;  // PTX: the driver compiles it for the device at load time
    }
    opts.cc_major = target / 10;
    opts.cc_minor = target % 10;
}

void target_device(int cc_major, int cc_minor, nvrtc_options& opts) {
    const int cc = cc_major * 10 + cc_minor;
    if (cc <= 90) {
        opts.cc_major = cc_major;
        opts.cc_minor = cc_minor;
        opts.cubin = true;
        return;
    }
    choose_device_target(cc, nvrtc_supported_archs(), opts);
}

std::string nvrtc_identity() {
    // The resolved file name carries the full version (libnvrtc.so.13.0.88); size and
    // mtime catch an in-place upgrade. Cheap enough for a warm-cache first call.
    const std::string& p = located_path();
    if (p.empty()) return "nvrtc:" + nvrtc_library_path();
    char* real = ::realpath(p.c_str(), nullptr);
    std::string id = real ? real : p;
    std::free(real);
    struct stat st;
    if (::stat(id.c_str(), &st) == 0)
        id += ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
    return id;
}

namespace {

// Precompiled headers: every generated TU starts with the #include of one of our headers
// (elementwise.cuh, gufunc.cuh, kernel.cuh, reduce.cuh + CUB), and with -pch NVRTC parses
// each such header set once per process. Creating the PCH costs more than it saves in
// that build, so the first build of a process goes without (the cold first call stays as
// fast as it was) and later ones use it. Measured on this 2-core machine under load, a new
// float32 `a * b + 1.5` ufunc's CUBIN for sm_90 with NVRTC loaded: 153 -> 104 ms (best of
// 9); a cold process's first build: 157-235 ms without, 240-266 ms with -pch.
// -pch and -minimal change how NVRTC parses, not its output, so cache keys leave them out.
std::atomic<int> g_builds{0};

bool is_pch(const std::string& o) { return o == "-pch" || o == "--pch"; }
bool is_parse_option(const std::string& o) { return is_pch(o) || o == "-minimal" || o == "--minimal"; }

// FP8 types (src/kernels/nu_fp8.cuh) use CUDA's cuda_fp8.h, which NVRTC does not bring
// itself: only such units get the toolkit's include directory (and pay its parse time).
bool includes_fp8(const std::string& source) {
    return source.find("#include \"nu_fp8.cuh\"") != std::string::npos;
}

}  // namespace

bool includes_cub(const std::string& source) {
    return source.find("#include \"ufunc_methods.cuh\"") != std::string::npos ||
           source.find("#include <cub/") != std::string::npos;
}

std::string nvrtc_build(const std::string& source, const nvrtc_options& given) {
    nvrtc_options opts = given;
    if (includes_fp8(source)) {
        const std::string dir = fp8_include_dir();
        if (dir.empty())
            throw compile_error("FP8 types need the cuda_fp8.h of CUDA 12.8 or later (with "
                                "E8M0), which was not found in the toolkit (set "
                                "NUMBACUDA_UFUNC_CUDA_HOME to a CUDA 12.8+ toolkit)",
                                "");
        opts.extra.push_back("-I" + dir);
    }
    std::vector<std::string> key_options = nvrtc_option_list(opts);
    key_options.erase(std::remove_if(key_options.begin(), key_options.end(), is_parse_option),
                      key_options.end());
    std::string key = cache_key(opts.cubin ? "cubin" : "ptx", source, key_options, nvrtc_identity());
    return cached_artifact(key, [&] {
        count_compile(compile_kind::nvrtc);
        nvrtc_options o = opts;
        o.extra.erase(std::remove_if(o.extra.begin(), o.extra.end(), is_pch), o.extra.end());
        if (g_builds.fetch_add(1) > 0 && nvrtc_has_pch()) {
            // Quiet: "creating precompiled header" and #629-D ("options do not match those
            // of the PCH", between kernels of other options) filled every error log.
            o.extra.insert(o.extra.end(), {"-pch", "--pch-messages=false", "--pch-verbose=false"});
        }
        if (!nvrtc_has_minimal() || includes_cub(source)) return nvrtc_compile(source, o);
        nvrtc_options minimal = o;
        if (std::find(o.extra.begin(), o.extra.end(), "-minimal") == o.extra.end())
            minimal.extra.push_back("-minimal");
        try {
            return nvrtc_compile(source, minimal);
        } catch (const compile_error&) {
            return nvrtc_compile(source, o);  // source that needs the runtime's declarations
        }
    });
}

}  // namespace nu
