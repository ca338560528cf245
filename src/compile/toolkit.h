// src/compile/toolkit.h: where the CUDA toolkit pieces (NVRTC, CCCL headers) live on this machine
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

namespace nu {

// Directories from pip wheels (nvidia-cuda-nvrtc, nvidia-cuda-cccl), found by Python and
// searched after the toolkit directories.
void set_wheel_search_paths(std::vector<std::string> library_dirs,
                            std::vector<std::string> include_dirs);

// Toolkit roots in search order: $NUMBACUDA_UFUNC_CUDA_HOME, $CUDA_HOME, $CUDA_PATH,
// /usr/local/cuda.
std::vector<std::string> cuda_home_candidates();

// Library directories to search for libnvrtc, in order.
std::vector<std::string> library_search_dirs();

// The directory holding cub/cub.cuh ("" when none is found).
std::string cub_include_dir();

// The toolkit's include directory (cuda_fp16.h and friends), else nvidia-cuda-runtime's;
// "" when none is found.
std::string cuda_include_dir();

// The directory holding cuda_fp8.h (a toolkit's include directory, else a wheel's), for
// units that use FP8 types (src/kernels/nu_fp8.cuh); "" when none is found.
std::string fp8_include_dir();

bool file_exists(const std::string& path);

// The first of `sonames` present in library_search_dirs(), as a path ("" when none);
// stat only, no dlopen.
std::string locate_library(std::initializer_list<const char*> sonames);

// A toolkit library opened with dlopen (RTLD_LOCAL, never closed): each of `sonames` found
// in library_search_dirs() in turn, then the dynamic loader's own search path. On failure
// `handle` is null and `tried` lists the files that would not load, one per line.
struct opened_library {
    void* handle = nullptr;
    std::string path;
    std::string tried;
};
opened_library open_library(std::initializer_list<const char*> sonames);

// One copy of a versioned library (libnvrtc.so.13): its path, or its bare file name for the
// dynamic loader's own search path, and the CUDA major version its name carries.
struct library_candidate {
    std::string path;
    int major = 0;
};

// Every `<stem><major>` (stem "libnvrtc.so.", majors newest first) in library_search_dirs(),
// in search order, then each bare name for the loader's path; stat only, no dlopen.
std::vector<library_candidate> find_library_candidates(const std::string& stem,
                                                       std::initializer_list<int> majors);

// Which candidate to use with a driver of CUDA `driver_version` (cuDriverGetVersion: 12040
// is 12.4; 0 when there is no driver): the newest major the driver supports (code from a
// newer NVRTC does not load), the first found of that major; with no driver, the newest.
// Returns the index, or -1 when none is old enough. Pure: tests give fake versions.
int choose_for_driver(int driver_version, const std::vector<library_candidate>& candidates);

// dlsym of `name`, else of the versioned "__<name>_13_0" / "__<name>_12_0" that NVIDIA's
// headers map calls to; throws std::runtime_error naming `library` and the symbol.
void* library_symbol(void* handle, const std::string& name, const std::string& library);

template <class F>
void resolve(void* handle, const std::string& name, F& out, const std::string& library) {
    out = reinterpret_cast<F>(library_symbol(handle, name, library));
}

}  // namespace nu
