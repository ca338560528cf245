// src/compile/embedded_headers.h: the src/kernels/ headers, embedded at build time
#pragma once
#include <string>
#include <vector>

namespace nu {

struct embedded_header {
    const char* name;  // file name as used in #include "..."
    const char* text;
};

// Defined in the .cpp that cmake/embed_kernels.cmake generates.
const std::vector<embedded_header>& embedded_headers();

}  // namespace nu
