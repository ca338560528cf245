// src/bindings/compile.cpp: NVRTC, host builds and the kernel cache
#include "bindings/common.h"

#include <algorithm>
#include <utility>

#include "compile/compile_error.h"
#include "compile/device_link.h"
#include "compile/host_build.h"
#include "compile/kernel_cache.h"
#include "compile/nvrtc.h"
#include "compile/toolkit.h"

namespace nu::bindings {

namespace {

// A cache file's key: 64 lowercase hex digits (a SHA-256), as the entry format stores it.
void check_cache_key(const std::string& key) {
    const bool hex = key.size() == 64 && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    });
    if (!hex)
        throw py::value_error("key must be 64 lowercase hex digits (a SHA-256), got a string of " +
                              std::to_string(key.size()) + " characters");
}

}  // namespace

// Compilation (NVRTC, host compiler, kernel cache): see src/compile/.
void bind_compile(py::module_& m) {
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const nu::host_compiler_missing& e) {
            py::object cls = py::module_::import("numbacuda_ufunc.errors").attr("HostCompilerNotFoundError");
            PyErr_SetObject(cls.ptr(), cls(e.what()).ptr());
        } catch (const nu::compile_error& e) {
            py::object cls = py::module_::import("numbacuda_ufunc.errors").attr("CompileError");
            py::object exc = cls(e.what(), e.log());
            PyErr_SetObject(cls.ptr(), exc.ptr());
        } catch (const nu::link_error& e) {
            py::object cls = py::module_::import("numbacuda_ufunc.errors").attr("LinkerError");
            py::object exc = cls(e.what(), e.log());
            PyErr_SetObject(cls.ptr(), exc.ptr());
        }
    });

    auto nvrtc_opts = [](std::pair<int, int> cc, bool cubin, bool fastmath,
                         std::vector<std::string> options) {
        nu::nvrtc_options o;
        o.cc_major = cc.first;
        o.cc_minor = cc.second;
        o.cubin = cubin;
        o.fastmath = fastmath;
        o.extra = std::move(options);
        return o;
    };
    // Builds release the GIL: they take from milliseconds (cache) to seconds (compiler).
    m.def("compile_ptx",
          [nvrtc_opts](const std::string& source, std::pair<int, int> cc, bool fastmath,
                       std::vector<std::string> options) {
              return nu::nvrtc_build(source, nvrtc_opts(cc, false, fastmath, std::move(options)));
          },
          py::arg("source"), py::arg("cc"), py::arg("fastmath") = false,
          py::arg("options") = std::vector<std::string>{},
          py::call_guard<release_gil>(),
          "CUDA C++ -> PTX for compute capability cc=(major, minor), through the kernel cache.");
    m.def("compile_cubin",
          [nvrtc_opts](const std::string& source, std::pair<int, int> cc, bool fastmath,
                       std::vector<std::string> options) {
              std::string bin;
              {
                  release_gil release;
                  bin = nu::nvrtc_build(source, nvrtc_opts(cc, true, fastmath, std::move(options)));
              }
              return py::bytes(bin);
          },
          py::arg("source"), py::arg("cc"), py::arg("fastmath") = false,
          py::arg("options") = std::vector<std::string>{},
          "CUDA C++ -> CUBIN for sm_XY, through the kernel cache.");
    m.def("nvrtc_options",
          [nvrtc_opts](std::pair<int, int> cc, bool cubin, bool fastmath,
                       std::vector<std::string> options) {
              return nu::nvrtc_option_list(nvrtc_opts(cc, cubin, fastmath, std::move(options)));
          },
          py::arg("cc"), py::arg("cubin") = false, py::arg("fastmath") = false,
          py::arg("options") = std::vector<std::string>{},
          "The NVRTC option list these settings produce.");
    m.def("nvrtc_version", &nu::nvrtc_version, "(major, minor) of NVRTC; loads it.");
    using link_files = std::vector<std::tuple<std::string, std::string, py::bytes, std::vector<std::string>>>;
    m.def("link_kernel_cubin",
          [nvrtc_opts](const std::string& source, const link_files& files, std::pair<int, int> cc,
                       bool fastmath, bool ptx) -> py::object {
              std::vector<nu::link_file> links;
              for (const auto& [path, kind, content, includes] : files) {
                  links.push_back({path, kind, std::string(content), includes});
              }
              std::string bin;
              {
                  release_gil release;
                  bin = nu::link_kernel_cubin(source, links, nvrtc_opts(cc, true, fastmath, {}), ptx);
              }
              if (ptx) return py::str(bin);
              return py::bytes(bin);
          },
          py::arg("source"), py::arg("links"), py::arg("cc"), py::arg("fastmath") = false, py::arg("ptx") = false,
          "A kernel's translation unit and its link files [(path, kind, bytes, include dirs)] -> "
          "one CUBIN for "
          "sm_XY (NVRTC to LTO IR, nvJitLink), or with ptx=True the linked PTX text, through the "
          "kernel cache. No GPU needed.");
    m.def("nvjitlink_link",
          [](const std::vector<std::tuple<std::string, std::string, py::bytes>>& inputs, int cc, bool lto) {
              std::vector<nu::link_input> in;
              for (const auto& [name, kind, data] : inputs) {
                  static const std::pair<const char*, nu::link_input_kind> kinds[] = {
                      {"cubin", nu::link_input_kind::cubin}, {"ptx", nu::link_input_kind::ptx},
                      {"ltoir", nu::link_input_kind::ltoir}, {"fatbin", nu::link_input_kind::fatbin},
                      {"o", nu::link_input_kind::object}, {"a", nu::link_input_kind::library}};
                  auto it = std::find_if(std::begin(kinds), std::end(kinds),
                                         [&](const auto& k) { return kind == k.first; });
                  if (it == std::end(kinds))
                      throw nu::link_error("nvjitlink_link(): '" + name + "' has kind '" + kind +
                                               "' (expected ptx, cubin, ltoir, fatbin, o or a)", "");
                  in.push_back({it->second, name, std::string(data)});
              }
              std::string bin;
              {
                  release_gil release;
                  bin = nu::nvjitlink_link(in, cc, lto);
              }
              return py::bytes(bin);
          },
          py::arg("inputs"), py::arg("cc"), py::arg("lto") = true,
          "nvJitLink: [(name, kind, bytes)] with kind ptx/cubin/ltoir/fatbin/o/a -> CUBIN for sm_<cc>.");
    m.def("nvjitlink_version", &nu::nvjitlink_version, "(major, minor) of nvJitLink; loads it.");
    m.def("nvjitlink_library_path", &nu::nvjitlink_library_path, "Path of the loaded libnvJitLink.");
    m.def("nvrtc_supported_archs", &nu::nvrtc_supported_archs,
          "Architectures NVRTC compiles for (nvrtcGetSupportedArchs); loads it.");
    m.def("nvrtc_device_target", [](int cc, std::vector<int> archs) {
              nu::nvrtc_options o;
              nu::choose_device_target(cc, archs, o);
              return py::make_tuple(py::make_tuple(o.cc_major, o.cc_minor), o.cubin);
          }, py::arg("cc"), py::arg("archs"),
          "((major, minor), cubin) that a device of compute capability cc (e.g. 90) gets from "
          "an NVRTC knowing archs.");
    m.def("nvrtc_library_path", &nu::nvrtc_library_path, "Path of the loaded libnvrtc.");
    m.def("cub_include_dir", &nu::cub_include_dir, "Directory holding cub/cub.cuh, or ''.");
    m.def("cuda_include_dir", &nu::cuda_include_dir,
          "Directory holding cuda_runtime.h (a toolkit's, else nvidia-cuda-runtime's), or ''.");
    m.def("nvrtc_driver_version", &nu::nvrtc_driver_version,
          "CUDA version the driver supports (cuDriverGetVersion; 12040 is 12.4), 0 without one.");
    m.def("nvrtc_candidates", [] {
              py::list out;
              for (const auto& c : nu::nvrtc_candidates())
                  if (c.path.find('/') != std::string::npos) out.append(py::make_tuple(c.path, c.major));
              return out;
          },
          "[(path, CUDA major)] of every libnvrtc file found, in search order; loads none.");
    m.def("choose_nvrtc", [](int driver_version, const std::vector<std::pair<std::string, int>>& found) -> py::object {
              std::vector<nu::library_candidate> c;
              for (const auto& f : found) c.push_back({f.first, f.second});
              const nu::library_candidate* chosen = nu::choose_nvrtc(driver_version, c);
              if (chosen == nullptr) return py::none();
              return py::str(chosen->path);
          },
          py::arg("driver_version"), py::arg("candidates"),
          "The rule that picks NVRTC, over given values (tests use fake driver versions): of "
          "[(path, CUDA major)], the path of the newest major the driver supports (0: no "
          "driver, the newest); None when the list is empty; CudaSupportError when every "
          "one is newer than the driver.");
    m.def("set_wheel_search_paths", &nu::set_wheel_search_paths, py::arg("library_dirs"),
          py::arg("include_dirs"), "Directories of the nvidia-cuda-nvrtc/cccl wheels.");

    py::class_<nu::host_library, std::shared_ptr<nu::host_library>>(m, "HostLibrary")
        .def("symbol", [](const nu::host_library& lib, const std::string& name) {
                 return reinterpret_cast<std::uintptr_t>(lib.symbol(name));
             },
             py::arg("name"), "Address of an exported symbol (KeyError when missing).")
        .def_property_readonly("key", &nu::host_library::key);
    py::register_exception<std::out_of_range>(m, "SymbolNotFound", PyExc_KeyError);
    m.def("build_host", &nu::build_host, py::arg("source"),
          py::arg("options") = std::vector<std::string>{},
          py::arg("symbols") = std::vector<std::string>{},
          py::arg("extra_sources") = std::vector<std::string>{},
          py::call_guard<release_gil>(),
          "Compiles source with the host C++ compiler (after host_prelude.h), cached; "
          "returns the loaded HostLibrary.");
    m.def("host_compiler_command", &nu::host_compiler_command);

    m.def("cache_dir", &nu::cache_dir, "The disk cache directory (created on demand).");
    m.def("cache_dir_refusal", &nu::cache_dir_refusal,
          "Why the disk cache folder is not used (others can write to it), or ''.");
    m.def("folder_refusal", &nu::folder_refusal, py::arg("path"),
          "Why files in the folder must not be trusted (others can write to it), or ''.");
    m.def("headers_digest", &nu::headers_digest,
          "SHA-256 of the kernel headers embedded in this build (part of every cache key).");
    m.def("cache_stats", [] {
        nu::cache_stats s = nu::get_cache_stats();
        py::dict d;
        d["memory_hits"] = s.memory_hits;
        d["disk_hits"] = s.disk_hits;
        d["nvrtc_compiles"] = s.nvrtc_compiles;
        d["host_compiles"] = s.host_compiles;
        d["rejected_entries"] = s.rejected_entries;
        return d;
    });
    m.def("read_cache_file", [](const std::string& path, const std::string& key) -> py::object {
        check_cache_key(key);
        std::string payload;
        bool ok;
        {
            release_gil release;
            ok = nu::read_cache_file(path, key, payload);
        }
        if (!ok) return py::none();
        return py::bytes(payload);
    }, py::arg("path"), py::arg("key"),
          "The payload of a file in the kernel cache's entry format written for `key`, or None "
          "(missing, special, oversized, corrupt, or another key's).");
    m.def("write_cache_file", [](const std::string& path, const std::string& key, py::bytes payload) {
        check_cache_key(key);
        std::string data = payload;
        release_gil release;
        return nu::write_cache_file(path, key, data);
    }, py::arg("path"), py::arg("key"), py::arg("payload"),
          "Writes `payload` for `key` atomically in the kernel cache's entry format; False when "
          "the file could not be written.");
    m.def("reset_cache_stats", &nu::reset_cache_stats);
    m.def("clear_memory_cache", &nu::clear_memory_cache,
          "Forget cached PTX/CUBIN in this process (loaded host libraries stay loaded).");
}


}  // namespace nu::bindings
