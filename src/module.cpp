// src/module.cpp: pybind11 bindings of the engine, module numbacuda_ufunc._core
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace {

void bind_runtime(py::module_& m) {}

void bind_array(py::module_& m) {}

// Compilation (NVRTC, host compiler, kernel cache): see src/compile/.
void bind_compile(py::module_& m) {}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "numbacuda_ufunc C++ engine";
    m.attr("__version__") = NU_VERSION;
    bind_runtime(m);
    bind_array(m);
    bind_compile(m);
}
