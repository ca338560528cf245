// src/compile/device_link.h: kernels with link= files: CUBIN by NVRTC + nvJitLink, or host units
#pragma once
#include <string>
#include <vector>

#include "compile/nvjitlink.h"
#include "compile/nvrtc.h"

namespace nu {

// A file named by cuda.jit(link=...) or cuda.declare_device(link=...), read by Python so
// that its contents (and so the cache key) are fixed when the kernel is specialised.
struct link_file {
    std::string path;     // absolute, for messages and #line
    std::string kind;     // extension: "cu", "ptx", "cubin", "fatbin", "ltoir", "o", "a"
    std::string content;  // the file's bytes
    // A .cu file's extra include directories, searched after its own directory (Numba's
    // config.CUDA_NVRTC_EXTRA_SEARCH_PATHS when the kernel was compiled).
    std::vector<std::string> include_paths = {};
};

// Throws link_error unless `kind` is a link file extension we know.
void check_link_kind(const std::string& path, const std::string& kind);

// The kernel's translation unit compiled by NVRTC to LTO IR (-rdc=true -dlto), each .cu
// file likewise (its directory, its extra include directories and the toolkit's include
// directory on the include path),
// and the rest as they are, linked by nvJitLink into one CUBIN for `target` (a CUBIN
// target chosen by target_device). Every step goes through the kernel cache, so an
// edited file relinks and an unchanged kernel loads from disk.
// With `ptx`, the linked program as PTX instead (Numba's inspect_lto_ptx).
std::string link_kernel_cubin(const std::string& source, const std::vector<link_file>& files,
                              const nvrtc_options& target, bool ptx = false);

// The host backend's translation units for `files`: each .cu file's text after a #line
// naming it. Throws link_error for any other kind (PTX, CUBIN... need a GPU); `api`
// prefixes the message.
std::vector<std::string> host_link_units(const std::vector<link_file>& files, const std::string& api);

// Include options for the .cu files: each one's directory (its own #include "..." files),
// then its extra include directories.
std::vector<std::string> host_link_options(const std::vector<link_file>& files);

}  // namespace nu
