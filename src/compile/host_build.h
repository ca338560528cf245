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
    host_library(void* handle, std::string key) : m_handle(handle), m_key(std::move(key)) {}
    host_library(const host_library&) = delete;
    host_library& operator=(const host_library&) = delete;
    ~host_library();
    // Address of an exported symbol; throws std::out_of_range when it is missing.
    void* symbol(const std::string& name) const;
    const std::string& key() const { return m_key; }

private:
    void* m_handle;
    std::string m_key;
};

// The compiler command: $CXX split on spaces (no shell), else "c++".
std::vector<std::string> host_compiler_command();

// Compiles `source` (host_prelude.h is included first; the embedded kernel headers are on
// the include path) with -std=c++17 -O2 -shared -fPIC plus `options`, caches the shared
// object like a CUBIN and loads it. Throws compile_error with the compiler log on failure.
std::shared_ptr<host_library> build_host(const std::string& source,
                                         const std::vector<std::string>& options);

}  // namespace nu
