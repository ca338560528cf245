// src/compile/toolkit.cpp: locating the CUDA toolkit, NVRTC and CCCL without linking to them
#include "compile/toolkit.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>

namespace nu {

namespace {

std::mutex g_mutex;
std::vector<std::string> g_wheel_library_dirs;
std::vector<std::string> g_wheel_include_dirs;

void push_env(std::vector<std::string>& out, const char* name) {
    const char* v = std::getenv(name);
    if (v && *v) out.emplace_back(v);
}

}  // namespace

bool file_exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

void set_wheel_search_paths(std::vector<std::string> library_dirs,
                            std::vector<std::string> include_dirs) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_wheel_library_dirs = std::move(library_dirs);
    g_wheel_include_dirs = std::move(include_dirs);
}

std::vector<std::string> cuda_home_candidates() {
    std::vector<std::string> homes;
    push_env(homes, "NUMBACUDA_UFUNC_CUDA_HOME");
    push_env(homes, "CUDA_HOME");
    push_env(homes, "CUDA_PATH");
    homes.emplace_back("/usr/local/cuda");
    return homes;
}

std::vector<std::string> library_search_dirs() {
    std::vector<std::string> dirs;
    for (const auto& home : cuda_home_candidates()) {
        dirs.push_back(home + "/lib64");
        dirs.push_back(home + "/lib");
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    dirs.insert(dirs.end(), g_wheel_library_dirs.begin(), g_wheel_library_dirs.end());
    return dirs;
}

std::string cub_include_dir() {
    std::vector<std::string> dirs;
    for (const auto& home : cuda_home_candidates()) {
        dirs.push_back(home + "/include/cccl");
        dirs.push_back(home + "/include");
    }
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        dirs.insert(dirs.end(), g_wheel_include_dirs.begin(), g_wheel_include_dirs.end());
    }
    for (const auto& d : dirs)
        if (file_exists(d + "/cub/cub.cuh")) return d;
    return "";
}

std::string cuda_include_dir() {
    for (const auto& home : cuda_home_candidates())
        if (file_exists(home + "/include/cuda_runtime.h")) return home + "/include";
    std::lock_guard<std::mutex> lock(g_mutex);  // then nvidia-cuda-runtime's headers
    for (const auto& d : g_wheel_include_dirs)
        if (file_exists(d + "/cuda_runtime.h")) return d;
    return "";
}

std::string fp8_include_dir() {
    std::vector<std::string> dirs;
    for (const auto& home : cuda_home_candidates()) dirs.push_back(home + "/include");
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        dirs.insert(dirs.end(), g_wheel_include_dirs.begin(), g_wheel_include_dirs.end());
    }
    // nu_fp8.cuh uses the E8M0 conversions of CUDA 12.8's headers: an older cuda_fp8.h
    // (an older toolkit first on the search path) is passed over for a newer one.
    for (const auto& d : dirs) {
        std::ifstream f(d + "/cuda_fp8.hpp");
        const std::string text{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
        if (file_exists(d + "/cuda_fp8.h") && text.find("__nv_fp8_e8m0") != std::string::npos) return d;
    }
    return "";
}

std::string locate_library(std::initializer_list<const char*> sonames) {
    for (const auto& dir : library_search_dirs())
        for (const char* n : sonames)
            if (file_exists(dir + "/" + n)) return dir + "/" + n;
    return "";
}

opened_library open_library(std::initializer_list<const char*> sonames) {
    opened_library lib;
    for (const auto& dir : library_search_dirs()) {
        for (const char* n : sonames) {
            const std::string p = dir + "/" + n;
            if (!file_exists(p)) continue;
            lib.handle = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (lib.handle) {
                lib.path = p;
                return lib;
            }
            lib.tried += "\n  " + p + ": " + ::dlerror();
        }
    }
    for (const char* n : sonames) {  // then the dynamic loader's own search path
        lib.handle = ::dlopen(n, RTLD_NOW | RTLD_LOCAL);
        if (lib.handle) {
            lib.path = n;
            return lib;
        }
    }
    return lib;
}

std::vector<library_candidate> find_library_candidates(const std::string& stem,
                                                       std::initializer_list<int> majors) {
    std::vector<library_candidate> out;
    std::vector<std::string> seen;  // real paths: $CUDA_HOME and /usr/local/cuda, lib and lib64, often agree
    for (const auto& dir : library_search_dirs())
        for (int major : majors) {
            const std::string p = dir + "/" + stem + std::to_string(major);
            if (!file_exists(p)) continue;
            char* real = ::realpath(p.c_str(), nullptr);
            const std::string r = real ? real : p;
            std::free(real);
            if (std::find(seen.begin(), seen.end(), r) != seen.end()) continue;
            seen.push_back(r);
            out.push_back({p, major});
        }
    for (int major : majors) out.push_back({stem + std::to_string(major), major});
    return out;
}

int choose_for_driver(int driver_version, const std::vector<library_candidate>& candidates) {
    const int driver_major = driver_version / 1000;
    int best = -1;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const int major = candidates[i].major;
        if (driver_version > 0 && major > driver_major) continue;
        if (best < 0 || major > candidates[static_cast<std::size_t>(best)].major) best = static_cast<int>(i);
    }
    return best;
}

void* library_symbol(void* handle, const std::string& name, const std::string& library) {
    for (const std::string& n : {name, "__" + name + "_13_0", "__" + name + "_12_0"})
        if (void* f = ::dlsym(handle, n.c_str())) return f;
    throw std::runtime_error(library + " lacks the symbol " + name);
}

}  // namespace nu
