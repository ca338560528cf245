// src/compile/host_build.h: the host backend's build, generated source -> shared library
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace nu {

// A loaded shared library; never unloaded while referenced because function pointers
// taken from it may still be in use.
class host_library {
public:
    // `fd`: the memory file the library was loaded from (closed after dlclose), or -1.
    host_library(void* handle, std::string key, int fd = -1)
        : m_handle(handle), m_key(std::move(key)), m_fd(fd) {}
    host_library(const host_library&) = delete;
    host_library& operator=(const host_library&) = delete;
    ~host_library();
    // Address of an exported symbol; throws std::out_of_range when it is missing.
    void* symbol(const std::string& name) const;
    const std::string& key() const { return m_key; }

private:
    void* m_handle;
    std::string m_key;
    int m_fd;
};

// The compiler command: $CXX split on spaces (no shell), else "c++".
std::vector<std::string> host_compiler_command();

// Compiles `source` (host_prelude.h is included first; the embedded kernel headers are on
// the include path) with -std=c++17 -O2 -shared -fPIC plus `options`, caches the shared
// object like a CUBIN and loads it. Throws compile_error with the compiler log on failure.
// A cached library that fails to load or lacks one of `symbols` is rebuilt and replaced.
// `extra_sources`: more translation units (each after host_prelude.h) linked into the
// same library, e.g. the CUDA C++ files of cuda.jit(link=...); they are part of the key.
std::shared_ptr<host_library> build_host(const std::string& source,
                                         const std::vector<std::string>& options,
                                         const std::vector<std::string>& symbols = {},
                                         const std::vector<std::string>& extra_sources = {});

}  // namespace nu
