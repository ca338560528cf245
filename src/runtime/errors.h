// src/runtime/errors.h: the engine's exception types (module.cpp maps each to Python)
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace nu {

// Root of the engine's exceptions; module.cpp translates each subclass to the Python type
// named in its comment.
struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// -> numbacuda_ufunc.errors.CudaError (name = CUDA error name, call = driver API call)
struct cuda_error : error {
    cuda_error(int code, std::string name, std::string call, const std::string& message)
        : error(message), code(code), name(std::move(name)), call(std::move(call)) {}
    int code;
    std::string name;
    std::string call;
};

// -> numbacuda_ufunc.errors.CudaSupportError (no driver, no device, emulation not enabled)
struct cuda_support_error : error {
    using error::error;
};

// -> MemoryError (the pool was trimmed and the allocation retried before this is thrown)
struct out_of_memory : error {
    using error::error;
};

// -> ValueError / TypeError / IndexError / OverflowError: bad arguments from the user.
struct value_error : error {
    using error::error;
};
struct type_error : error {
    using error::error;
};
struct index_error : error {
    using error::error;
};
// -> numbacuda_ufunc.errors.LaunchConfigError (a CudaError and a ValueError): a launch the
// driver would refuse, caught before it is made; `name` is the CUresult it would return.
struct launch_config_error : value_error {
    launch_config_error(std::string name, const std::string& message)
        : value_error(message + " (" + name + ")"), name(std::move(name)) {}
    std::string name;
};
// -> OverflowError: a Python integer that the chosen type cannot hold (NumPy 2, NEP 50).
struct overflow_error : error {
    using error::error;
};

// A kernel raised (a debug=True launch, or any launch on the host backend built with
// NU_DEBUG): `code` numbers the raise site; the Python Kernel turns it into the user's
// exception (src/bindings/kernel.cpp). Thread and block indices are x, y, z.
struct kernel_exception : error {
    kernel_exception(long long code, const long long (&tid)[3], const long long (&ctaid)[3])
        : error("kernel raised exception " + std::to_string(code)), code(code) {
        for (int k = 0; k < 3; ++k) {
            this->tid[k] = tid[k];
            this->ctaid[k] = ctaid[k];
        }
    }
    long long code;
    long long tid[3];
    long long ctaid[3];
};

}  // namespace nu

// Broken internal invariants abort with file:line; they are bugs, never user errors.
#define NU_ASSERT(cond)                                                                     \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            std::fprintf(stderr, "%s:%d: internal error: assertion '%s' failed\n", __FILE__, \
                         __LINE__, #cond);                                                  \
            std::abort();                                                                   \
        }                                                                                   \
    } while (0)
