// src/compile/compile_error.h: the exception a failed NVRTC or host-compiler build throws
#pragma once
#include <stdexcept>
#include <string>

namespace nu {

// Carries the compiler's full log; module.cpp turns it into numbacuda_ufunc.errors.CompileError.
class compile_error : public std::runtime_error {
public:
    compile_error(const std::string& message, std::string log)
        : std::runtime_error(message), m_log(std::move(log)) {}
    const std::string& log() const noexcept { return m_log; }

private:
    std::string m_log;
};

// No host C++ compiler to run (the cpu/parallel targets and the host backend need one);
// module.cpp's translator makes it numbacuda_ufunc.errors.HostCompilerNotFoundError, a
// CompileError.
class host_compiler_missing : public compile_error {
public:
    explicit host_compiler_missing(const std::string& message) : compile_error(message, "") {}
};

}  // namespace nu
