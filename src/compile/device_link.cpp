// src/compile/device_link.cpp: kernels with link= files: NVRTC + nvJitLink, or host units
#include "compile/device_link.h"

#include <algorithm>

#include "compile/kernel_cache.h"
#include "compile/sha256.h"
#include "compile/toolkit.h"

namespace nu {
namespace {

const char* const k_kinds[] = {"cu", "ptx", "cubin", "fatbin", "ltoir", "o", "a"};

// The folder of a file given by absolute path (its own #include "..." resolve there); ""
// for in-memory code (cuda.CUSource, named "<...>"), which includes only toolkit headers.
std::string directory_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    if (path.empty() || path[0] != '/' || slash == std::string::npos) return "";
    return path.substr(0, slash == 0 ? 1 : slash);
}

// A #line directive naming `path`, so compiler messages point at the user's file.
// The file's name as a C string literal: a quote, backslash or control character (a newline
// above all) left raw would end the directive and splice the rest of the name into the unit
// as source lines (issue 35). compiler/_source.py escapes Python file names the same way.
std::string line_directive(const std::string& path) {
    std::string quoted;
    for (char c : path) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\\' || c == '"') {
            quoted += '\\';
            quoted += c;
        } else if (byte < 0x20 || byte == 0x7f) {
            const char octal[] = {'\\', char('0' + (byte >> 6)), char('0' + ((byte >> 3) & 7)),
                                  char('0' + (byte & 7)), '\0'};
            quoted += octal;
        } else {
            quoted += c;
        }
    }
    return "#line 1 \"" + quoted + "\"\n";
}

link_input_kind input_kind(const std::string& kind) {
    if (kind == "ptx") return link_input_kind::ptx;
    if (kind == "cubin") return link_input_kind::cubin;
    if (kind == "fatbin") return link_input_kind::fatbin;
    if (kind == "ltoir") return link_input_kind::ltoir;
    if (kind == "o") return link_input_kind::object;
    return link_input_kind::library;  // "a"
}

}  // namespace

void check_link_kind(const std::string& path, const std::string& kind) {
    if (std::find(std::begin(k_kinds), std::end(k_kinds), kind) != std::end(k_kinds)) return;
    throw link_error("cannot link '" + path + "': unknown file kind '." + kind +
                         "' (expected .cu, .ptx, .cubin, .fatbin, .ltoir, .o or .a)",
                     "");
}

std::string link_kernel_cubin(const std::string& source, const std::vector<link_file>& files,
                              const nvrtc_options& target, bool ptx) {
    nvrtc_options lto = target;
    lto.cubin = true;  // with -dlto NVRTC emits LTO IR for sm_XY
    lto.extra.insert(lto.extra.end(), {"-rdc=true", "-dlto"});
    std::vector<link_input> inputs;
    inputs.push_back({link_input_kind::ltoir, "<kernel>", nvrtc_build(source, lto)});
    // The toolkit's include folder and CCCL's (include/cccl since CUDA 13, where nvcc looks
    // by itself and NVRTC does not): cooperative_groups.h includes <cuda/std/type_traits>.
    std::vector<std::string> includes;
    for (const std::string& dir : {cuda_include_dir(), cub_include_dir()}) {
        if (!dir.empty() && std::find(includes.begin(), includes.end(), dir) == includes.end())
            includes.push_back(dir);
    }
    for (const link_file& f : files) {
        check_link_kind(f.path, f.kind);
        if (f.kind != "cu") {
            inputs.push_back({input_kind(f.kind), f.path, f.content});
            continue;
        }
        // The user's file is compiled as it is: without our fastmath or FMA settings.
        nvrtc_options o = lto;
        o.fastmath = false;
        if (!directory_of(f.path).empty()) o.extra.push_back("-I" + directory_of(f.path));
        for (const std::string& dir : f.include_paths) o.extra.push_back("-I" + dir);
        for (const std::string& dir : includes) o.extra.push_back("-I" + dir);
        inputs.push_back({link_input_kind::ltoir, f.path, nvrtc_build(line_directive(f.path) + f.content, o)});
    }
    const int cc = target.cc_major * 10 + target.cc_minor;
    sha256 h;
    for (const link_input& in : inputs) h.update_field(std::to_string(int(in.kind))).update_field(in.data);
    // Without fastmath, as NVRTC's --fmad=false for the kernel: a multiply in a linked .cu
    // file was fused with the kernel's add at link time on an H100 (1 ulp off x*x + 1).
    const bool fma = target.fastmath;
    const std::string key = cache_key(ptx ? "nvjitlink-ptx" : "nvjitlink-cubin", h.hex_digest(),
                                      {"-arch=sm_" + std::to_string(cc), "-lto", fma ? "-fma=1" : "-fma=0 -Xptxas=-fmad=false"},
                                      nvjitlink_library_path());
    return cached_artifact(key, [&] { return nvjitlink_link(inputs, cc, true, ptx, fma); });
}

std::vector<std::string> host_link_units(const std::vector<link_file>& files, const std::string& api) {
    std::vector<std::string> units;
    for (const link_file& f : files) {
        check_link_kind(f.path, f.kind);
        if (f.kind != "cu") {
            throw link_error(api + ": cannot link '" + f.path + "' on the host backend: ." + f.kind +
                                 " files are GPU code, which only a GPU can link (the host backend, "
                                 "NUMBACUDA_UFUNC_ENABLE_CUDASIM=1, compiles CUDA C++ .cu files only)",
                             "");
        }
        units.push_back(line_directive(f.path) + f.content);
    }
    return units;
}

std::vector<std::string> host_link_options(const std::vector<link_file>& files) {
    std::vector<std::string> options;
    for (const link_file& f : files) {
        if (f.kind != "cu") continue;
        if (!directory_of(f.path).empty()) options.push_back("-I" + directory_of(f.path));
        for (const std::string& dir : f.include_paths) options.push_back("-I" + dir);
    }
    return options;
}

}  // namespace nu
