// src/bindings/operands.cpp: ufunc and gufunc call arguments as engine operands
#include "bindings/common.h"

#include <memory>


namespace nu::bindings {

[[noreturn]] void throw_overflow(const std::string& message) {
    PyErr_SetString(PyExc_OverflowError, message.c_str());
    throw py::error_already_set();
}


bool is_dask_array(py::handle obj) {
    PyObject* mod = PyImport_GetModule(py::str("dask.array").ptr());
    if (mod == nullptr) {
        PyErr_Clear();
        return false;
    }
    py::object dask_array = py::reinterpret_steal<py::object>(mod);
    py::object cls = py::getattr(dask_array, "Array", py::none());
    return !cls.is_none() && PyObject_IsInstance(obj.ptr(), cls.ptr()) == 1;
}


namespace {

PyTypeObject* numpy_type(const char* name) {
    return reinterpret_cast<PyTypeObject*>(py::object(py::module_::import("numpy").attr(name)).release().ptr());
}

PyTypeObject* ndarray_type() {
    static PyTypeObject* type = numpy_type("ndarray");
    return type;
}

// An attribute of `obj`'s type (as NumPy looks up __array_ufunc__ and __array_wrap__),
// or a null object when it has none.
py::object type_attribute(py::handle obj, const char* name) {
    PyObject* found = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())), name);
    if (found == nullptr) PyErr_Clear();
    return py::reinterpret_steal<py::object>(found);
}

// type(obj).__array_ufunc__ exists and is not ndarray's (None, the opt-out, included).
bool overrides_array_ufunc(py::handle obj) {
    static PyObject* ndarray_method =
        PyObject_GetAttrString(reinterpret_cast<PyObject*>(ndarray_type()), "__array_ufunc__");
    py::object method = type_attribute(obj, "__array_ufunc__");
    return method && method.ptr() != ndarray_method;
}

// A host argument the engine does not take as it is (neither a NumPy scalar nor a list
// or tuple of values) that NumPy's protocol concerns: an __array_ufunc__ override, or an
// __array_wrap__ that NumPy would give the result to (a torch CPU tensor).
bool protocol_input(py::handle obj) {
    static PyTypeObject* generic = numpy_type("generic");
    PyObject* o = obj.ptr();
    if (PyList_CheckExact(o) || PyTuple_CheckExact(o) || PyObject_TypeCheck(o, generic)) return false;
    return overrides_array_ufunc(obj) || type_attribute(obj, "__array_wrap__");
}

}  // namespace

bool for_protocol(py::handle obj) {
    if (Py_TYPE(obj.ptr()) == ndarray_type()) return false;
    if (py::isinstance<py::array>(obj)) return !has_cai(obj);
    return protocol_input(obj) && !is_device_array(obj) && !has_cai(obj) && !is_dask_array(obj);
}

bool out_for_protocol(py::handle out) {
    if (Py_TYPE(out.ptr()) == ndarray_type() || is_device_array(out)) return false;
    // NumPy gives an ndarray subclass out= to its __array_wrap__ (np.ma sets the mask).
    const bool subclass = py::isinstance<py::array>(out);
    if (!subclass && !overrides_array_ufunc(out)) return false;
    return !has_cai(out) && !is_dask_array(out);
}


std::string arg_name(const caller& uf, std::size_t index) {
    return uf.name + "(): argument " + std::to_string(index + 1);
}

py::array native_order(const py::array& arr, std::vector<py::object>* keep, bool write_back) {
    const char order = arr.dtype().byteorder();
    if (order != '<' && order != '>') return arr;  // '=' or '|': native
    py::array native = arr.attr("astype")(arr.dtype().attr("newbyteorder")("="));
    keep->push_back(native);
    if (write_back) {
        auto* pair = new std::pair<py::object, py::object>(arr, native);
        keep->push_back(py::capsule(pair, [](void* p) {
            std::unique_ptr<std::pair<py::object, py::object>> wb(static_cast<std::pair<py::object, py::object>*>(p));
            try {
                py::module_::import("numpy").attr("copyto")(wb->first, wb->second);
            } catch (py::error_already_set& e) {
                e.discard_as_unraisable("byte-swapped array write-back");
            }
        }));
    }
    return native;
}

bool is_host_ndarray(py::handle obj) {
    if (Py_TYPE(obj.ptr()) == ndarray_type()) return true;
    return py::isinstance<py::array>(obj) && !has_cai(obj);
}

// A call argument as an operand. Python scalars are weak; NumPy scalars and 0-d arrays
// are strong scalars passed by value; device and CAI arrays stay where they are.
nu::operand to_operand(const caller& uf, py::handle arg, std::size_t index, bool* is_cupy) {
    nu::operand op;
    const bool host_target = uf.where != nu::target::cuda;
    const bool is_ndarray = is_host_ndarray(arg);  // cheap, and spares a failing getattr
    if (!is_ndarray && (is_device_array(arg) || has_cai(arg))) {
        nu::device_array d = is_device_array(arg)
                                 ? arg.cast<nu::device_array>()
                                 : import_cuda_array(arg, arg_name(uf, index).c_str());
        if (is_cupy != nullptr && !is_device_array(arg)) {
            const std::string module = py::str(py::type::handle_of(arg).attr("__module__"));
            *is_cupy = *is_cupy || module.rfind("cupy", 0) == 0;
        }
        if (host_target && !nu::cuda_target_emulated()) {
            // cpu/parallel targets compute on the host: bring device data over.
            py::array host = copy_to_host(d, py::none(), py::int_(0));
            uf.keep->push_back(host);
            return to_operand(uf, host, index, nullptr);
        }
        op.where = nu::operand::kind::device;
        op.view = d.view();
        op.device = std::move(d);
        return op;
    }
    if (PyBool_Check(arg.ptr())) {
        op.value = nu::make_scalar(arg.ptr() == Py_True);
        return op;
    }
    if (PyLong_Check(arg.ptr())) {  // NumPy integers are not int subclasses
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(arg.ptr(), &overflow);
        op.weak = nu::weak_kind::integer;
        if (overflow == 0) {
            op.value = nu::make_scalar(static_cast<std::int64_t>(v));
        } else {
            const unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(arg.ptr()) : 0;
            if (overflow < 0 || PyErr_Occurred()) {
                // Beyond every integer type: a float or complex loop takes it as NumPy
                // converts it (f(float_array, 10**30)); check_weak_scalars() refuses it
                // for an integer loop.
                PyErr_Clear();
                const double d = PyLong_AsDouble(arg.ptr());
                if (d == -1.0 && PyErr_Occurred()) {
                    PyErr_Clear();
                    throw_overflow(arg_name(uf, index) + ": Python integer " + repr_of(arg) +
                                   " is too large to convert to float64");
                }
                op.value = nu::make_scalar(d);
            } else {
                op.value = nu::make_scalar(static_cast<std::uint64_t>(u));
            }
        }
        return op;
    }
    if (PyFloat_CheckExact(arg.ptr())) {  // np.float64 subclasses float but is strong
        op.weak = nu::weak_kind::floating;
        op.value = nu::make_scalar(PyFloat_AsDouble(arg.ptr()));
        return op;
    }
    if (PyComplex_CheckExact(arg.ptr())) {
        op.weak = nu::weak_kind::complex;
        op.value = nu::make_scalar(PyComplex_RealAsDouble(arg.ptr()), PyComplex_ImagAsDouble(arg.ptr()));
        return op;
    }
    if (!is_ndarray && is_dask_array(arg)) throw dask_argument{};
    // An ndarray subclass (NumPy wraps the result with its __array_wrap__, or it overrides
    // __array_ufunc__) or another container NumPy's protocol concerns: Python takes over.
    if (is_ndarray ? Py_TYPE(arg.ptr()) != ndarray_type() : protocol_input(arg)) throw override_argument{};
    // (py::array's default constructor allocates an empty array: never default-construct.)
    const py::array arr = is_ndarray ? py::reinterpret_borrow<py::array>(arg)
                                     : py::array(py::module_::import("numpy").attr("asarray")(arg));
    if (!is_ndarray) uf.keep->push_back(arr);
    const char order = arr.dtype().byteorder();
    if (order == '<' || order == '>') {
        // Non-native byte order ('=' is native): NumPy converts such inputs; so do we.
        py::object native = arr.attr("astype")(arr.dtype().attr("newbyteorder")("="));
        uf.keep->push_back(native);
        return to_operand(uf, native, index, is_cupy);
    }
    nu::array_view view = host_view(arr, [&] { return arg_name(uf, index); });
    if (view.ndim() == 0) {
        op.value.type = view.type;
        std::memcpy(op.value.bytes, view.data, nu::itemsize(view.type));
        return op;
    }
    op.where = nu::operand::kind::host;
    op.view = view;
    return op;
}


call_keywords parse_keywords(const std::string&, py::handle kwargs) {
    call_keywords kw;
    if (!kwargs) return kw;
    for (auto item : py::reinterpret_borrow<py::dict>(kwargs)) {
        const std::string key = py::str(item.first);
        if (key == "out") {
            kw.out = py::reinterpret_borrow<py::object>(item.second);
        } else if (key == "stream") {
            kw.stream = py::reinterpret_borrow<py::object>(item.second);
        } else {
            kw.others = true;
        }
    }
    return kw;
}

// An output array the caller passed: host (writable) or device.
nu::operand output_operand(const caller& who, py::handle out, std::size_t index, const std::string& what) {
    nu::operand op;
    if (!is_host_ndarray(out) && (is_device_array(out) || has_cai(out))) {
        if (who.where != nu::target::cuda && !nu::cuda_target_emulated()) {
            // A host target would write into a host copy of the device array.
            throw nu::type_error(who.name + "(): " + what + " must be a NumPy array for the cpu and "
                                 "parallel targets (got a device array)");
        }
        if (!is_device_array(out)) {
            // CAI's data is (pointer, read_only): a read-only producer is no place to write.
            // (A malformed interface is reported by to_operand() below, naming what is wrong.)
            py::object cai = out.attr("__cuda_array_interface__");
            py::object data = py::isinstance<py::dict>(cai) ? py::reinterpret_borrow<py::dict>(cai).attr("get")("data")
                                                            : py::none();
            if (py::isinstance<py::tuple>(data) && py::len(data) == 2 && py::bool_(data[py::int_(1)])) {
                throw nu::value_error(who.name + "(): " + what + " is read-only (its "
                                      "__cuda_array_interface__ says so)");
            }
        }
        op = to_operand(who, out, index, nullptr);
    } else if (py::isinstance<py::array>(out)) {
        py::array arr = py::reinterpret_borrow<py::array>(out);
        if (!arr.writeable()) throw nu::value_error(who.name + "(): " + what + " is read-only");
        arr = native_order(arr, who.keep, true);
        op.where = nu::operand::kind::host;
        op.view = host_view(arr, [&] { return who.name + "(): " + what; });
    } else {
        throw nu::type_error(who.name + "(): " + what + " must be a NumPy or device array (got " +
                             repr_of(py::type::handle_of(out)) + ")");
    }
    if (op.where == nu::operand::kind::scalar) {
        throw nu::type_error(who.name + "(): " + what + " must be an array, not a 0-d value");
    }
    return op;
}

// What a call returns for an `out=` the caller passed: the object itself (NumPy's rule),
// except a foreign __cuda_array_interface__ object that is neither CuPy's nor a NumPy
// array (mapped and managed arrays are): its DeviceNDArray view, as Numba returns, since
// a bare interface exporter may have no API of its own (CuPy in, CuPy out; any other
// device data, DeviceNDArray out; the same memory either way).
py::object returned_output(py::object out, const nu::operand& op) {
    if (op.where != nu::operand::kind::device || is_device_array(out) || py::isinstance<py::array>(out) ||
        !has_cai(out)) {
        return out;
    }
    const std::string module = py::str(py::type::handle_of(out).attr("__module__"));
    if (module.rfind("cupy", 0) == 0) return out;
    return py::cast(op.device);
}

void note_stream_uses(const std::vector<nu::operand>& inputs, const nu::operand* outputs,
                      std::size_t nout, const nu::stream_ref& s) {
    auto note = [&](const nu::operand& op, bool write) {
        if (op.where == nu::operand::kind::device && op.device.buffer()) op.device.buffer()->note_use(s, write);
    };
    for (const nu::operand& op : inputs) note(op, false);
    for (std::size_t k = 0; k < nout; ++k) note(outputs[k], true);
}

void note_stream_use(py::handle obj, const nu::stream_ref& s, bool write) {
    if (!is_device_array(obj)) return;
    const nu::device_array& d = obj.cast<const nu::device_array&>();
    if (d.buffer()) d.buffer()->note_use(s, write);
}

py::object as_cupy(py::object device_result, const nu::stream_ref& s) {
    const nu::stream_handle h = s ? s->handle : nullptr;
    return py::module_::import("numbacuda_ufunc.interop._cupy")
        .attr("as_cupy")(device_result, reinterpret_cast<std::uintptr_t>(h));
}

// A new result: a device array when `on_device` (the caller turns it into CuPy with
// as_cupy after queuing the work, when an input was CuPy), else NumPy.
py::object new_result(const caller& who, const nu::shape_t& shape, nu::dtype type, char order,
                      bool on_device, bool is_cupy, const nu::stream_ref& s, nu::operand* op) {
    if (on_device) {
        nu::device_array d = nu::device_array::empty(shape, type, order, std::nullopt, s, who.name.c_str());
        op->where = nu::operand::kind::device;
        op->view = d.view();
        op->device = d;
        (void)is_cupy;  // the caller makes the CuPy view once the work is queued (as_cupy)
        return py::cast(d);
    }
    // Filled by a device-to-host copy on a GPU (the cuda target; emulation declines).
    py::array arr = new_host_array(shape, type, order, who.where == nu::target::cuda);
    op->where = nu::operand::kind::host;
    op->view = host_view(arr, [&] { return who.name + "()"; });
    return std::move(arr);
}


}  // namespace nu::bindings
