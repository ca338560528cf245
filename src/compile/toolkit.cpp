// src/compile/toolkit.cpp: locating the CUDA toolkit, NVRTC and CCCL without linking to them
#include "compile/toolkit.h"

#include <sys/stat.h>

#include <cstdlib>
#include <mutex>

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

}  // namespace nu
