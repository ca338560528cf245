// src/compile/nvjitlink.h: nvJitLink (loaded with dlopen), device code pieces -> one CUBIN
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nu {

// What one piece of device code is; the values are nvJitLinkInputType's.
enum class link_input_kind : int { cubin = 1, ptx = 2, ltoir = 3, fatbin = 4, object = 5, library = 6 };

struct link_input {
    link_input_kind kind = link_input_kind::ptx;
    std::string name;  // shown in link errors (the user's file name)
    std::string data;  // the bytes (PTX text without its terminating NUL)
};

// Links `inputs` for sm_XY (`cc` = 10 * major + minor) into a CUBIN. `lto`: LTO IR inputs
// are optimised together (-lto). Throws link_error with nvJitLink's log on failure, and
// std::runtime_error when no libnvJitLink can be loaded.
// The linked program for sm_<cc>: a CUBIN, or with `ptx` its PTX (an LTO link's
// optimised whole program, Numba's inspect_lto_ptx).
// `fma` false: no multiply-add contraction in link-time code generation (-fma=0) nor in
// ptxas (-Xptxas=-fmad=false), the rule of a kernel without fastmath (NVRTC's
// --fmad=false does not survive LTO IR).
std::string nvjitlink_link(const std::vector<link_input>& inputs, int cc, bool lto, bool ptx = false,
                           bool fma = true);

// (major, minor) of the loaded nvJitLink; loads it on first use.
std::pair<int, int> nvjitlink_version();

// Path of the loaded libnvJitLink; loads it on first use.
std::string nvjitlink_library_path();

// A failed link: the message names the inputs; log() is nvJitLink's error log.
class link_error : public std::runtime_error {
public:
    link_error(const std::string& message, std::string log)
        : std::runtime_error(message), m_log(std::move(log)) {}
    const std::string& log() const noexcept { return m_log; }

private:
    std::string m_log;
};

}  // namespace nu
