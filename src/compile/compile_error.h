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

}  // namespace nu
