// src/module.cpp: the extension module numbacuda_ufunc._core; bindings are in src/bindings/
#include "bindings/common.h"
#include "dispatch/device_cast.h"
#include "runtime/blocking.h"
#include "runtime/interrupt.h"

namespace {

// C++ throws nu:: exceptions; they become the package's Python types here, once.
void translate_exceptions() {
    py::register_exception_translator([](std::exception_ptr p) {
        if (!p) return;
        try {
            std::rethrow_exception(p);
        } catch (const nu::cuda_error& e) {
            py::object cls = py::module_::import("numbacuda_ufunc.errors").attr("CudaError");
            py::object exc = cls(e.what(), e.name, e.call);
            PyErr_SetObject(cls.ptr(), exc.ptr());
        } catch (const nu::cuda_support_error& e) {
            py::object cls = py::module_::import("numbacuda_ufunc.errors").attr("CudaSupportError");
            PyErr_SetString(cls.ptr(), e.what());
        } catch (const nu::out_of_memory& e) {
            PyErr_SetString(PyExc_MemoryError, e.what());
        } catch (const nu::launch_config_error& e) {
            py::object cls = py::module_::import("numbacuda_ufunc.errors").attr("LaunchConfigError");
            py::object exc = cls(e.what(), e.name, "cuLaunchKernel");
            PyErr_SetObject(cls.ptr(), exc.ptr());
        } catch (const nu::value_error& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const nu::type_error& e) {
            PyErr_SetString(PyExc_TypeError, e.what());
        } catch (const nu::index_error& e) {
            PyErr_SetString(PyExc_IndexError, e.what());
        } catch (const nu::overflow_error& e) {
            PyErr_SetString(PyExc_OverflowError, e.what());
        } catch (const nu::interrupted&) {
            // The interpreter's SIGINT handler already raised (KeyboardInterrupt): keep it.
            if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
        }
    });
}


}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "numbacuda_ufunc C++ engine";
    m.attr("__version__") = NU_VERSION;
    translate_exceptions();
    py::register_exception<nu::bindings::dask_argument>(m, "DaskArgument");
    py::register_exception<nu::bindings::override_argument>(m, "OverrideArgument");
    // Device arrays of any strides copy on the device, with the elementwise engine.
    nu::set_strided_device_copy(&nu::cast_into);
    // Engine work marked blocking (compiles) runs without the GIL when the caller holds it.
    nu::set_blocking_hooks({[]() -> void* { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; },
                            [](void* state) { nu::bindings::reenter_interpreter(state); }});
    // A host launch that saw SIGINT asks the interpreter: its handler runs here, in the
    // main thread, and what it raises (KeyboardInterrupt) ends the launch.
    nu::set_interrupt_hook([]() -> bool {
        PyGILState_STATE gil = PyGILState_Ensure();
        const bool raised = PyErr_CheckSignals() != 0;
        PyGILState_Release(gil);
        return raised;
    });
    using namespace nu::bindings;
    bind_runtime(m);
    bind_array(m);
    bind_compile(m);
    bind_ufunc(m);
    bind_gufunc(m);
    bind_reduce(m);
    bind_ufunc_methods(m);
    bind_numpy_ufunc(m);
    bind_kernel(m);
    bind_memory_api(m);
}

