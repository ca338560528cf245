// src/bindings/common.h: helpers shared by the binding files (the only pybind11 users)
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "array/device_array.h"
#include "dispatch/operand.h"
#include "dispatch/ufunc.h"
#include "runtime/errors.h"
#include "runtime/runtime.h"

namespace py = pybind11;

namespace nu::bindings {

// Retakes the GIL (a PyThreadState from PyEval_SaveThread). A daemon thread that comes
// back while the interpreter finalizes would be ended by PyEval_RestoreThread with
// pthread_exit, whose forced unwind through C++ frames aborted the process (issue 35:
// status 134 when a Dask worker or Jupyter thread was in engine work at exit). Such a
// thread is parked instead: the process is ending and takes it along, as Python 3.14 does.
void reenter_interpreter(void* state);

// py::gil_scoped_release, re-entering through reenter_interpreter; noexcept(false) so that
// pthread_exit's forced unwind, should finalization start between the check and the
// re-entry, passes instead of aborting. Every GIL release in the bindings uses it.
class release_gil {
public:
    release_gil() : m_state(PyEval_SaveThread()) {}
    ~release_gil() noexcept(false) { reenter_interpreter(m_state); }
    release_gil(const release_gil&) = delete;
    release_gil& operator=(const release_gil&) = delete;

private:
    PyThreadState* m_state;
};

// One function per binding area, called once from PYBIND11_MODULE (src/module.cpp).
void bind_runtime(py::module_& m);
void bind_array(py::module_& m);
void bind_compile(py::module_& m);
void bind_ufunc(py::module_& m);
void bind_gufunc(py::module_& m);
void bind_reduce(py::module_& m);
void bind_ufunc_methods(py::module_& m);
void bind_numpy_ufunc(py::module_& m);  // numpy_ufunc.cpp: np.ufunc over host loops
void bind_kernel(py::module_& m);
void bind_memory_api(py::module_& m);  // memory_api.cpp: events, mapped memory, EMM, IPC

// ---------------------------------------------------------------- conversions (convert.cpp)
struct py_stream {
    nu::stream_ref ref;
};

std::string repr_of(py::handle obj);
bool is_integer(py::handle obj);
// An integer (anything with __index__) as int64; false when it does not fit, so each caller
// raises the error its API calls for (IndexError, AxisError, ValueError...).
bool to_int64(py::handle obj, std::int64_t* out);
// `stream=` everywhere: 0/None, a Stream of ours, a raw handle, or another library's stream.
nu::stream_ref as_stream(py::handle obj, const char* api);
nu::dtype as_dtype(py::handle obj, const char* api);
// A NumPy dtype as an engine dtype; TypeError naming `what` for the others.
nu::dtype dtype_of(const py::dtype& dt, const char* what);
// nu::dtype_from_typestr, plus the datetime64/timedelta64 typestrs ("<M8[D]"), which are
// registered through NumPy's dtype (dtype_of) so to_numpy_dtype can give them back.
nu::dtype typestr_dtype(const std::string& typestr, const char* what);
// A ufunc or gufunc loop's dtype: typestr_dtype, less the fixed-width bytes and str dtypes,
// which only kernels take.
nu::dtype loop_dtype(const std::string& typestr);
py::dtype to_numpy_dtype(nu::dtype t);
int dtype_from_type_num(int num);
nu::shape_t as_shape(py::handle obj, const char* api, const char* what = "shape");
py::tuple to_tuple(const nu::shape_t& v);
std::string shape_repr(const nu::shape_t& v);
char as_order(const std::string& order, const char* api);
// A new NumPy array. `dma_target`: the device fills it by a copy, so a large one comes
// from the cache of page-locked blocks (runtime/pinned_results.h) where it can.
py::array new_host_array(const nu::shape_t& shape, nu::dtype t, char order, bool dma_target = false);
py::array empty_host_like(const nu::array_view& v, bool dma_target = false);

// `what` names the array in errors: a string, or a callable making one (only on error).
template <class What>
nu::array_view host_view(const py::array& arr, const What& what) {
    nu::array_view v;
    const py::dtype dt = arr.dtype();
    const char order = dt.byteorder();
    const int code = dtype_from_type_num(dt.num());
    if (code >= 0 && order != '>' && order != '<') {
        v.type = static_cast<nu::dtype>(code);  // native order: the fast path of every call
    } else {
        std::string name;
        if constexpr (std::is_invocable_v<What>) {
            name = what();
        } else {
            name = what;
        }
        v.type = dtype_of(dt, name.c_str());
    }
    v.data = const_cast<void*>(arr.data());
    for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
        v.shape.push_back(arr.shape(i));
        v.strides.push_back(arr.strides(i));
    }
    return v;
}

// The C++ object behind `self`, without pybind11's typeid-keyed lookup: our engine types
// have one C++ base, so the value is the instance's first (simple-layout) slot.
template <class T>
T& engine_object(py::handle self) {
    auto* inst = reinterpret_cast<py::detail::instance*>(self.ptr());
    return *static_cast<T*>(inst->get_value_and_holder().value_ptr());
}

// ---------------------------------------------------------------- device arrays (arrays.cpp)
bool has_cai(py::handle obj);
bool is_device_array(py::handle obj);
std::optional<nu::device_array> device_operand(py::handle obj, const char* api);
// `sync`: wait for the producer's stream (CAI v3), unless the environment switch is off.
// A DeviceNDArray over a __cuda_array_interface__ object's memory. `sync`: wait for the
// producer's stream (unless config.CUDA_ARRAY_INTERFACE_SYNC is off); `adopt_stream`: the
// array takes that stream as its own (cuda.as_cuda_array), else the default stream.
nu::device_array import_cuda_array(py::handle obj, const char* api, bool sync = true, bool adopt_stream = false);
// Turns failures of frees that ran in destructors (backend::take_release_errors) into a
// RuntimeWarning; call with the GIL held.
void report_release_errors();
py::array copy_to_host(const nu::device_array& a, py::object ary, py::handle stream);
void copy_to_device(const nu::device_array& a, py::handle src, py::handle stream, const char* api);

// Byte-swapped arrays, one rule everywhere (inputs, out=, copies, kernel arguments,
// reductions): the engine works on a native-order copy; with `write_back`, that copy is
// written back into `arr` when `keep` is released at the end of the call. Native arrays
// are returned as they are.
py::array native_order(const py::array& arr, std::vector<py::object>* keep, bool write_back);

// A NumPy array in host memory only. Mapped and managed arrays (ndarray subclasses that
// export __cuda_array_interface__) are device-visible: kernels use them in place.
bool is_host_ndarray(py::handle obj);

// ---------------------------------------------------------------- call arguments (operands.cpp)
// Who is converting arguments: the ufunc or gufunc's name and target.
struct caller {
    const std::string& name;
    nu::target where;
    // Arrays made while converting arguments (lists, host copies of device data): the
    // operands point into them, so they live until the call returns.
    std::vector<py::object>* keep;
};

// The `out=` and `stream=` keywords shared by ufunc and gufunc calls.
struct call_keywords {
    py::object out = py::none();
    py::object stream = py::int_(0);
    // Any other keyword (where=, dtype=, casting=, axes=...): the call goes to the Python
    // keyword path, so keyword-free calls never run Python.
    bool others = false;
};

// A Dask array among the arguments: thrown from argument conversion (off the hot path, after
// every array type the engine takes has been ruled out) so that the call is redone lazily,
// chunk by chunk, by the object's Python `_dask_call` (numbacuda_ufunc/interop/_dask.py). Reducers
// see it as _core.DaskArgument.
struct dask_argument : std::exception {
    const char* what() const noexcept override { return "a Dask array argument"; }
};
// Whether `obj` is a dask.array.Array; never imports Dask (none can exist before it is).
bool is_dask_array(py::handle obj);

// An argument that NumPy's ufunc protocol concerns (an ndarray subclass; another object
// with an __array_ufunc__ or __array_wrap__: xarray, pandas, masked arrays, pint, torch
// CPU tensors): thrown from argument conversion, off the hot path, after every type the
// engine takes has been ruled out, so that the call is redone by the object's Python
// `_protocol_call` (numbacuda_ufunc/interop/_protocol.py: NEP 13 overrides, __array_wrap__).
// Python callers of the engine see it as _core.OverrideArgument.
struct override_argument : std::exception {
    const char* what() const noexcept override { return "an argument with __array_ufunc__ or __array_wrap__"; }
};
// Whether an `out=` the caller passed is for the Python protocol path: an ndarray subclass
// (NumPy calls its __array_wrap__ after writing it) or an object overriding __array_ufunc__,
// and none of the arrays the engine writes itself (exact ndarrays, device and
// __cuda_array_interface__ arrays, mapped and managed arrays among them).
bool out_for_protocol(py::handle out);
// Whether a host argument is for the Python protocol path (an ndarray subclass, or an object
// with __array_ufunc__ or __array_wrap__), and none of the arrays the engine takes.
bool for_protocol(py::handle obj);

std::string arg_name(const caller& uf, std::size_t index);
nu::operand to_operand(const caller& uf, py::handle arg, std::size_t index, bool* is_cupy);
// A CuPy view of a new device result, built from its pointer (no __cuda_array_interface__
// synchronization); CuPy's current stream waits for `s` with an event. Call it after the
// call's work is queued on `s`.
py::object as_cupy(py::object device_result, const nu::stream_ref& s);
// Numba's low-occupancy NumbaPerformanceWarning (config.CUDA_LOW_OCCUPANCY_WARNINGS) for a
// launch of `blocks` blocks (kernel.cpp; gufunc calls report theirs).
void warn_low_occupancy(std::int64_t blocks);
// The object a call returns for the `out=` it was given (its DeviceNDArray view for a
// foreign non-CuPy __cuda_array_interface__ object, else `out` itself).
py::object returned_output(py::object out, const nu::operand& op);
// After a call queued its work on `s`: device operands remember the use (frees wait for
// it; the interface export names the last writer). Inputs are read, outputs written.
void note_stream_uses(const std::vector<nu::operand>& inputs, const nu::operand* outputs,
                      std::size_t nout, const nu::stream_ref& s);
// The same for one of our DeviceNDArrays given as a Python object (no-op for others).
void note_stream_use(py::handle obj, const nu::stream_ref& s, bool write);
call_keywords parse_keywords(const std::string& name, py::handle kwargs);
nu::operand output_operand(const caller& who, py::handle out, std::size_t index, const std::string& what);
py::object new_result(const caller& who, const nu::shape_t& shape, nu::dtype type, char order,
                      bool on_device, bool is_cupy, const nu::stream_ref& s, nu::operand* op);
void set_call_slot(py::handle cls, ternaryfunc call);

// A call redone by the object's Python method `name` (_dask_call, _protocol_call) with the
// same arguments; a new reference, or null with the Python error set.
inline PyObject* redo_call(PyObject* self, const char* name, PyObject* args, PyObject* kwargs) {
    py::object method = py::reinterpret_borrow<py::object>(self).attr(name);
    return PyObject_Call(method.ptr(), args, kwargs);
}

// A call implementation with its two hand-offs to Python: a Dask argument, an argument for
// NumPy's ufunc protocol. (For `__call__` looked up as an attribute, as pandas does with
// getattr(ufunc, "__call__"); direct_call below serves f(...) itself.)
template <py::object (*Call)(py::handle, py::tuple, py::handle)>
py::object call_or_redo(py::handle self, py::tuple args, py::handle kwargs) {
    const char* redo = nullptr;
    try {
        return Call(self, args, kwargs);
    } catch (const dask_argument&) {
        redo = "_dask_call";
    } catch (const override_argument&) {
        redo = "_protocol_call";
    }
    PyObject* result = redo_call(self.ptr(), redo, args.ptr(), kwargs.ptr());
    if (result == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(result);
}

// tp_call for a call implementation: C++ exceptions become Python ones, as pybind11 does.
template <py::object (*Call)(py::handle, py::tuple, py::handle)>
PyObject* direct_call(PyObject* self, PyObject* args, PyObject* kwargs) {
    try {
        try {
            return Call(self, py::reinterpret_borrow<py::tuple>(args), kwargs).release().ptr();
        } catch (const dask_argument&) {
            return redo_call(self, "_dask_call", args, kwargs);
        } catch (const override_argument&) {
            return redo_call(self, "_protocol_call", args, kwargs);
        }
    } catch (py::error_already_set& e) {
        e.restore();
#if defined(__GLIBCXX__)
    } catch (abi::__forced_unwind&) {
        throw;  // pthread_exit ending this thread (a daemon thread at exit): never swallowed
#endif
    } catch (...) {
        py::detail::try_translate_exceptions();
    }
    return nullptr;
}

}  // namespace nu::bindings
