// src/module.cpp: pybind11 bindings of the engine, module numbacuda_ufunc._core
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "array/device_array.h"
#include "array/dlpack.h"
#include "compile/compile_error.h"
#include "compile/host_build.h"
#include "compile/kernel_cache.h"
#include "compile/nvrtc.h"
#include "compile/toolkit.h"
#include "dispatch/device_cast.h"
#include "dispatch/gufunc.h"
#include "dispatch/reduce.h"
#include "dispatch/ufunc.h"
#include "runtime/blocking.h"
#include "runtime/errors.h"
#include "runtime/runtime.h"

namespace py = pybind11;

namespace {

// ---------------------------------------------------------------- errors
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
        } catch (const nu::value_error& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const nu::type_error& e) {
            PyErr_SetString(PyExc_TypeError, e.what());
        } catch (const nu::index_error& e) {
            PyErr_SetString(PyExc_IndexError, e.what());
        }
    });
}

// ---------------------------------------------------------------- conversions
struct py_stream {
    nu::stream_ref ref;
};

std::string repr_of(py::handle obj) { return py::repr(obj).cast<std::string>(); }

bool is_integer(py::handle obj) {
    return !py::isinstance<py::bool_>(obj) && PyIndex_Check(obj.ptr());
}

// `stream=` everywhere: 0/None, a Stream of ours, a raw handle, or another library's
// stream object (CuPy's `.ptr`, Numba's `.handle`).
nu::stream_ref as_stream(py::handle obj, const char* api) {
    if (obj.is_none()) return nu::default_stream();
    if (py::isinstance<py_stream>(obj)) return obj.cast<py_stream&>().ref;
    py::object handle;
    if (is_integer(obj)) {
        handle = py::reinterpret_borrow<py::object>(obj);
    } else if (py::hasattr(obj, "ptr")) {
        handle = obj.attr("ptr");
    } else if (py::hasattr(obj, "handle")) {
        handle = obj.attr("handle");
        if (py::hasattr(handle, "value")) handle = handle.attr("value");  // ctypes c_void_p
        if (handle.is_none()) return nu::default_stream();
    }
    if (!handle || !is_integer(handle)) {
        throw nu::type_error(std::string(api) +
                             "(): stream must be 0, a Stream from cuda.stream(), or a CuPy/"
                             "Numba stream (got " + repr_of(obj) + ")");
    }
    const auto value = handle.cast<std::uintptr_t>();
    // 1 and 2 are the CAI spellings of the legacy and per-thread default streams.
    if (value == 0 || value == 1) return nu::default_stream();
    return nu::external_stream(reinterpret_cast<nu::stream_handle>(value));
}

nu::dtype as_dtype(py::handle obj, const char* api) {
    py::dtype dt;
    try {
        dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(obj));
    } catch (py::error_already_set&) {
        throw nu::type_error(std::string(api) + "(): dtype: cannot interpret " + repr_of(obj) +
                             " as a data type");
    }
    const std::string what = std::string(api) + "(): dtype";
    return nu::dtype_from_typestr(dt.attr("str").cast<std::string>(), what.c_str());
}

py::dtype to_numpy_dtype(nu::dtype t) {
    // Built once: dtype objects are immutable, and parsing a typestr per call shows up in
    // the ufunc call overhead.
    static const auto* cache = [] {
        auto* table = new std::vector<py::dtype>();
        for (int i = 0; i <= static_cast<int>(nu::dtype::complex128); ++i) {
            table->push_back(py::dtype(nu::typestr(static_cast<nu::dtype>(i))));
        }
        return table;
    }();
    return (*cache)[static_cast<std::size_t>(t)];
}

// NumPy's type numbers of the dtypes ufuncs use, in nu::dtype order; -1 for the others.
int signed_by_size(std::size_t size) {
    return static_cast<int>(size == 4 ? nu::dtype::int32 : size == 8 ? nu::dtype::int64 : nu::dtype::int16);
}
int unsigned_by_size(std::size_t size) {
    return static_cast<int>(size == 4 ? nu::dtype::uint32 : size == 8 ? nu::dtype::uint64 : nu::dtype::uint16);
}

// NumPy's type numbers (stable ABI) of the dtypes ufuncs use; -1 for the others. The C
// integer types' sizes are this platform's, as NumPy's are.
int dtype_from_type_num(int num) {
    switch (num) {
        case 0: return static_cast<int>(nu::dtype::bool_);
        case 1: return static_cast<int>(nu::dtype::int8);
        case 2: return static_cast<int>(nu::dtype::uint8);
        case 3: return static_cast<int>(nu::dtype::int16);
        case 4: return static_cast<int>(nu::dtype::uint16);
        case 5: return signed_by_size(sizeof(int));
        case 6: return unsigned_by_size(sizeof(unsigned int));
        case 7: return signed_by_size(sizeof(long));
        case 8: return unsigned_by_size(sizeof(unsigned long));
        case 9: return signed_by_size(sizeof(long long));
        case 10: return unsigned_by_size(sizeof(unsigned long long));
        case 11: return static_cast<int>(nu::dtype::float32);
        case 12: return static_cast<int>(nu::dtype::float64);
        case 14: return static_cast<int>(nu::dtype::complex64);
        case 15: return static_cast<int>(nu::dtype::complex128);
        default: return -1;
    }
}

nu::shape_t as_shape(py::handle obj, const char* api, const char* what = "shape") {
    nu::shape_t shape;
    auto one = [&](py::handle item) {
        if (!is_integer(item)) {
            throw nu::type_error(std::string(api) + "(): " + what +
                                 " entries must be integers (got " + repr_of(item) + ")");
        }
        shape.push_back(item.cast<std::int64_t>());
    };
    if (is_integer(obj)) {
        one(obj);
    } else if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
        for (py::handle item : py::reinterpret_borrow<py::sequence>(obj)) one(item);
    } else {
        throw nu::type_error(std::string(api) + "(): " + what +
                             " must be an int or a tuple of ints (got " + repr_of(obj) + ")");
    }
    return shape;
}

py::tuple to_tuple(const nu::shape_t& v) {
    py::tuple t(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
    return t;
}

std::string shape_repr(const nu::shape_t& v) { return repr_of(to_tuple(v)); }

char as_order(const std::string& order, const char* api) {
    if (order == "C" || order == "F") return order[0];
    throw nu::value_error(std::string(api) + "(): order must be 'C' or 'F' (got '" + order + "')");
}

// A NumPy array as an array_view (no copy; the caller keeps `arr` alive).
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
        v.type = nu::dtype_from_typestr(dt.attr("str").cast<std::string>(), name.c_str());
    }
    v.data = const_cast<void*>(arr.data());
    for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
        v.shape.push_back(arr.shape(i));
        v.strides.push_back(arr.strides(i));
    }
    return v;
}

py::array new_host_array(const nu::shape_t& shape, nu::dtype t, char order) {
    // Straight to PyArray_NewFromDescr (which steals the descriptor): py::array's
    // constructor copies shape and strides into heap vectors first.
    static_assert(sizeof(Py_intptr_t) == sizeof(std::int64_t), "64-bit platforms only");
    const nu::shape_t strides = nu::contiguous_strides(shape, nu::itemsize(t), order);
    auto& api = py::detail::npy_api::get();
    py::object descr = to_numpy_dtype(t);
    PyObject* arr = api.PyArray_NewFromDescr_(
        api.PyArray_Type_, descr.release().ptr(), static_cast<int>(shape.size()),
        reinterpret_cast<const Py_intptr_t*>(shape.data()), reinterpret_cast<const Py_intptr_t*>(strides.data()),
        nullptr, py::detail::npy_api::NPY_ARRAY_WRITEABLE_, nullptr);
    if (arr == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::array>(arr);
}

// The C++ object behind `self`, without pybind11's typeid-keyed lookup: our engine types
// have one C++ base, so the value is the instance's first (simple-layout) slot.
template <class T>
T& engine_object(py::handle self) {
    auto* inst = reinterpret_cast<py::detail::instance*>(self.ptr());
    return *static_cast<T*>(inst->get_value_and_holder().value_ptr());
}

py::array empty_host_like(const nu::array_view& v) {
    const bool fortran = v.is_f_contiguous() && !v.is_c_contiguous();
    return new_host_array(v.shape, v.type, fortran ? 'F' : 'C');
}

// ---------------------------------------------------------------- device arrays
nu::device_array import_cuda_array(py::handle obj, const char* api);

bool has_cai(py::handle obj) { return py::hasattr(obj, "__cuda_array_interface__"); }

// isinstance(obj, DeviceNDArray) without pybind11's typeid-keyed type lookup, which costs
// string compares on every call.
bool is_device_array(py::handle obj) {
    static PyTypeObject* type = reinterpret_cast<PyTypeObject*>(py::type::of<nu::device_array>().ptr());
    return PyObject_TypeCheck(obj.ptr(), type);
}

// Device arrays and CAI objects as device_array; anything else is left to the caller.
std::optional<nu::device_array> device_operand(py::handle obj, const char* api) {
    if (is_device_array(obj)) return obj.cast<nu::device_array>();
    if (has_cai(obj)) return import_cuda_array(obj, api);
    return std::nullopt;
}

nu::device_array import_cuda_array(py::handle obj, const char* api) {
    py::object iface;
    try {
        iface = obj.attr("__cuda_array_interface__");
    } catch (py::error_already_set&) {
        throw nu::type_error(std::string(api) + "(): object has no usable __cuda_array_interface__ (got " +
                             repr_of(py::type::handle_of(obj)) + ")");
    }
    if (!py::isinstance<py::dict>(iface)) {
        throw nu::type_error(std::string(api) + "(): __cuda_array_interface__ must be a dict (got " +
                             repr_of(iface) + ")");
    }
    py::dict d = iface.cast<py::dict>();
    for (const char* key : {"shape", "typestr", "data", "version"}) {
        if (!d.contains(key)) {
            throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ lacks the required key '" +
                                  key + "'");
        }
    }
    if (d.contains("mask") && !d["mask"].is_none()) {
        throw nu::value_error(std::string(api) + "(): masked CUDA arrays are not supported");
    }
    nu::array_view v;
    v.type = nu::dtype_from_typestr(py::str(d["typestr"]).cast<std::string>(),
                                    (std::string(api) + "(): __cuda_array_interface__ typestr").c_str());
    v.shape = as_shape(d["shape"], api, "__cuda_array_interface__ shape");
    const std::int64_t count = nu::checked_size(v.shape, api);
    if (d.contains("strides") && !d["strides"].is_none()) {
        v.strides = as_shape(d["strides"], api, "__cuda_array_interface__ strides");
        if (v.strides.size() != v.shape.size()) {
            throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ strides " +
                                  shape_repr(v.strides) + " do not match shape " + shape_repr(v.shape));
        }
    } else {
        v.strides = nu::contiguous_strides(v.shape, nu::itemsize(v.type), 'C');
    }
    py::object data = d["data"];
    if (!py::isinstance<py::tuple>(data) || py::len(data) != 2 || !is_integer(data[py::int_(0)])) {
        throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ data must be a "
                              "(pointer, read_only) tuple (got " + repr_of(data) + ")");
    }
    v.data = reinterpret_cast<void*>(data[py::int_(0)].cast<std::uintptr_t>());
    nu::backend& backend = nu::active_backend();
    if (count > 0 && !backend.is_device_pointer(v.data)) {
        throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ pointer " +
                              repr_of(data[py::int_(0)]) + " is not device memory");
    }
    nu::stream_ref stream = nu::default_stream();
    if (d.contains("stream") && !d["stream"].is_none()) {
        // The producer's pending work on its stream must finish before we read. Work on
        // the legacy default stream (1, CuPy's default) is already ordered before ours:
        // the legacy stream synchronizes with every blocking stream, so no wait is needed.
        py::object producer = d["stream"];
        if (!is_integer(producer) || producer.cast<std::uintptr_t>() != 1) {
            stream = as_stream(producer, api);
            backend.synchronize_stream(nu::live_handle(stream, api));
            stream = nu::default_stream();
        }
    }
    std::int64_t lo = 0, hi = 0;
    v.byte_extent(&lo, &hi);
    // The owner object keeps the memory alive; drop it with the GIL held.
    auto* owner = new py::object(py::reinterpret_borrow<py::object>(obj));
    std::shared_ptr<void> keepalive(owner, [](void* p) {
        py::gil_scoped_acquire gil;
        delete static_cast<py::object*>(p);
    });
    auto buffer = std::make_shared<nu::device_buffer>(static_cast<char*>(v.data) + lo,
                                                      static_cast<std::size_t>(hi - lo),
                                                      std::move(keepalive));
    return nu::device_array(std::move(buffer), std::move(v), stream);
}

std::vector<nu::index_item> as_index(py::handle key) {
    std::vector<nu::index_item> items;
    auto one = [&](py::handle k) {
        nu::index_item it;
        if (is_integer(k)) {
            it.what = nu::index_item::kind::integer;
            it.value = k.cast<std::int64_t>();
        } else if (py::isinstance<py::slice>(k)) {
            it.what = nu::index_item::kind::slice;
            auto field = [&](const char* name) -> std::optional<std::int64_t> {
                py::object v = k.attr(name);
                if (v.is_none()) return std::nullopt;
                if (!is_integer(v)) {
                    throw nu::type_error("DeviceNDArray.__getitem__(): slice indices must be "
                                         "integers or None (got " + repr_of(v) + ")");
                }
                return v.cast<std::int64_t>();
            };
            it.start = field("start");
            it.stop = field("stop");
            it.step = field("step");
        } else if (k.is_none()) {
            it.what = nu::index_item::kind::newaxis;
        } else if (k.ptr() == Py_Ellipsis) {
            it.what = nu::index_item::kind::ellipsis;
        } else {
            throw nu::index_error("DeviceNDArray.__getitem__(): only integers, slices, None and "
                                  "'...' are valid indices (got " + repr_of(k) + ")");
        }
        items.push_back(it);
    };
    if (py::isinstance<py::tuple>(key)) {
        for (py::handle k : py::reinterpret_borrow<py::tuple>(key)) one(k);
    } else {
        one(key);
    }
    return items;
}

py::array copy_to_host(const nu::device_array& a, py::object ary, py::handle stream) {
    const nu::stream_ref s = as_stream(stream, "copy_to_host");
    py::array out;
    if (ary.is_none()) {
        out = empty_host_like(a.view());
    } else {
        if (!py::isinstance<py::array>(ary)) {
            throw nu::type_error("copy_to_host(): ary must be a NumPy array (got " +
                                 repr_of(py::type::handle_of(ary)) + ")");
        }
        out = ary.cast<py::array>();
        if (!out.writeable()) throw nu::value_error("copy_to_host(): ary is read-only");
    }
    nu::array_view host = host_view(out, "copy_to_host()");
    if (host.type != a.view().type) {
        throw nu::type_error(std::string("copy_to_host(): ary has dtype ") + nu::dtype_name(host.type) +
                             ", the device array has " + nu::dtype_name(a.view().type));
    }
    if (host.shape != a.view().shape) {
        throw nu::value_error("copy_to_host(): ary has shape " + shape_repr(host.shape) +
                              ", the device array has " + shape_repr(a.view().shape));
    }
    {
        py::gil_scoped_release nogil;
        a.copy_to_host(host, s);
    }
    return out;
}

void copy_to_device(const nu::device_array& a, py::handle src, py::handle stream,
                    const char* api) {
    const nu::stream_ref s = as_stream(stream, api);
    const nu::array_view& dst = a.view();
    if (auto dev = device_operand(src, api)) {
        if (dev->view().type != dst.type || dev->view().shape != dst.shape) {
            throw nu::value_error(std::string(api) + "(): source " + nu::dtype_name(dev->view().type) +
                                  shape_repr(dev->view().shape) + " does not match destination " +
                                  nu::dtype_name(dst.type) + shape_repr(dst.shape));
        }
        a.copy_from_device(*dev, s);
        return;
    }
    py::module_ np = py::module_::import("numpy");
    py::array arr = np.attr("asarray")(src);
    nu::array_view host = host_view(arr, (std::string(api) + "()").c_str());
    if (host.type != dst.type) {
        throw nu::type_error(std::string(api) + "(): source has dtype " + nu::dtype_name(host.type) +
                             ", the device array has " + nu::dtype_name(dst.type));
    }
    if (host.shape != dst.shape) {
        throw nu::value_error(std::string(api) + "(): source has shape " + shape_repr(host.shape) +
                              ", the device array has " + shape_repr(dst.shape));
    }
    py::gil_scoped_release nogil;
    a.copy_from_host(host, s);
}

py::dict cuda_array_interface(const nu::device_array& a) {
    const nu::array_view& v = a.view();
    py::dict d;
    d["shape"] = to_tuple(v.shape);
    d["strides"] = v.is_c_contiguous() ? py::object(py::none()) : py::object(to_tuple(v.strides));
    d["typestr"] = nu::typestr(v.type);
    d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(v.size() ? v.data : nullptr), false);
    d["version"] = 3;
    // CAI v3: 1 names the legacy default stream; None means "no synchronization needed".
    const bool emulated = nu::active_backend().emulated();
    const nu::stream_handle h = a.stream() ? a.stream()->handle : nullptr;
    d["stream"] = emulated ? py::object(py::none())
                           : py::object(py::int_(h ? reinterpret_cast<std::uintptr_t>(h) : 1));
    return d;
}

// DLPack export: the capsule owns a copy of the array (and so its buffer) until the
// consumer calls the deleter, or until the capsule dies unconsumed.
struct dlpack_holder {
    nu::device_array array;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;
    DLManagedTensor tensor{};
};

py::capsule to_dlpack(const nu::device_array& a, py::handle stream) {
    if (!stream.is_none()) {
        // Consumers pass the stream they will read on; finish our pending work first.
        nu::active_backend().synchronize_stream(a.stream() ? a.stream()->handle : nullptr);
    }
    const nu::array_view& v = a.view();
    auto* h = new dlpack_holder{a, {v.shape.begin(), v.shape.end()}, {}, {}};
    const auto item = static_cast<std::int64_t>(nu::itemsize(v.type));
    for (std::int64_t s : v.strides) h->strides.push_back(s / item);
    DLTensor& t = h->tensor.dl_tensor;
    t.data = v.data;
    const bool emulated = nu::active_backend().emulated();
    t.device = {emulated ? kDLCPU : kDLCUDA, emulated ? 0 : nu::active_backend().current_device()};
    t.ndim = v.ndim();
    const char kind = nu::typestr(v.type)[1];
    const uint8_t code = kind == 'b' ? kDLBool : kind == 'i' ? kDLInt : kind == 'u' ? kDLUInt
                         : kind == 'f' ? kDLFloat : kDLComplex;
    t.dtype = {code, static_cast<uint8_t>(nu::itemsize(v.type) * 8), 1};
    t.shape = h->shape.data();
    t.strides = h->strides.data();
    t.byte_offset = 0;
    h->tensor.manager_ctx = h;
    h->tensor.deleter = [](DLManagedTensor* self) {
        delete static_cast<dlpack_holder*>(self->manager_ctx);
    };
    return py::capsule(&h->tensor, "dltensor", [](PyObject* cap) {
        // Renamed to "used_dltensor" by a consumer that took ownership.
        if (PyCapsule_IsValid(cap, "dltensor")) {
            auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
            t->deleter(t);
        }
    });
}

py::object element_to_python(const nu::device_array& a) {
    py::array host = empty_host_like(a.view());
    nu::array_view hv = host_view(host, "__getitem__()");
    a.copy_to_host(hv, a.stream());
    return host[py::tuple()];  // NumPy scalar
}

// ---------------------------------------------------------------- bindings
void bind_runtime(py::module_& m) {
    m.def("is_available", &nu::backend_available, "True when a GPU or emulation can be used");
    m.def("unavailable_reason", &nu::unavailable_reason);
    m.def("emulation_enabled", &nu::emulation_requested);
    m.def("driver_version", [] { return nu::active_backend().driver_version(); });
    m.def("device_count", [] { return nu::backend_available() ? nu::active_backend().device_count() : 0; });
    m.def("current_device", [] { return nu::active_backend().current_device(); });
    m.def("select_device", [](int i) { nu::active_backend().select_device(i); });
    m.def("current_device_cc", [] {
        nu::backend& b = nu::active_backend();
        const nu::device_info info = b.device(b.current_device());
        return py::make_tuple(info.cc_major, info.cc_minor);
    }, "(major, minor) of the current device; the host backend reports (9, 0).");
    m.def("synchronize", [] {
        py::gil_scoped_release nogil;
        nu::active_backend().synchronize();
    });
    m.def("device_info", [](int i) {
        const nu::device_info info = nu::active_backend().device(i);
        py::dict d;
        d["id"] = info.ordinal;
        d["name"] = info.name;
        d["compute_capability"] = py::make_tuple(info.cc_major, info.cc_minor);
        d["total_memory"] = info.total_memory;
        d["multiprocessors"] = info.multiprocessors;
        d["max_threads_per_block"] = info.max_threads_per_block;
        d["warp_size"] = info.warp_size;
        return d;
    });
    m.def("memory_stats", [] {
        const nu::memory_stats s = nu::active_backend().memory();
        py::dict d;
        d["in_use_bytes"] = s.in_use;
        d["reserved_bytes"] = s.reserved;
        d["allocations"] = s.allocations;
        d["free_bytes"] = s.free;
        d["total_bytes"] = s.total;
        return d;
    });
    m.def("trim_pool", [] { nu::active_backend().trim_pool(); });

    py::class_<py_stream>(m, "Stream", "A CUDA stream; pass it as stream= to order work on it.")
        .def_property_readonly("handle", [](const py_stream& s) {
            return reinterpret_cast<std::uintptr_t>(s.ref->handle);
        })
        .def_property_readonly("closed", [](const py_stream& s) { return s.ref->closed; })
        .def("synchronize", [](const py_stream& s) {
            const nu::stream_handle h = nu::live_handle(s.ref, "Stream.synchronize");
            py::gil_scoped_release nogil;
            nu::active_backend().synchronize_stream(h);
        })
        .def("close", [](py_stream& s) {
            // Work already queued still completes; later use raises ValueError.
            if (s.ref->owned && !s.ref->closed) {
                nu::active_backend().destroy_stream(s.ref->handle);
            }
            s.ref->closed = true;
        }, "Destroy the stream now; using it afterwards raises ValueError.")
        .def("auto_synchronize", [](py::object self) { return self; },
             "Context manager that synchronizes the stream on exit (Numba's API).")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](const py_stream& s, py::args) {
            if (!s.ref->closed) nu::active_backend().synchronize_stream(s.ref->handle);
        })
        .def("__int__", [](const py_stream& s) { return reinterpret_cast<std::uintptr_t>(s.ref->handle); })
        .def("__eq__", [](const py_stream& a, py::handle b) {
            return py::isinstance<py_stream>(b) && b.cast<const py_stream&>().ref->handle == a.ref->handle;
        })
        .def("__hash__", [](const py_stream& s) { return reinterpret_cast<std::uintptr_t>(s.ref->handle); })
        .def("__repr__", [](const py_stream& s) {
            if (s.ref->handle == nullptr) return std::string("<Stream default>");
            return "<Stream 0x" + [&] {
                char buf[32];
                std::snprintf(buf, sizeof(buf), "%lx", reinterpret_cast<unsigned long>(s.ref->handle));
                return std::string(buf);
            }() + (s.ref->closed ? " closed>" : ">");
        });
    m.def("stream", [] { return py_stream{nu::new_stream()}; });
    m.def("default_stream", [] { return py_stream{nu::default_stream()}; });
    m.def("external_stream", [](py::handle obj) { return py_stream{as_stream(obj, "external_stream")}; });
}

void bind_array(py::module_& m) {
    py::class_<nu::device_array>(m, "DeviceNDArray", "An array in device memory (Numba's API).")
        .def(py::init([](py::handle shape, py::object strides, py::handle dtype, py::handle stream) {
                 std::optional<nu::shape_t> st;
                 if (!strides.is_none()) st = as_shape(strides, "DeviceNDArray", "strides");
                 return nu::device_array::empty(as_shape(shape, "DeviceNDArray"),
                                                as_dtype(dtype, "DeviceNDArray"), 'C', st,
                                                as_stream(stream, "DeviceNDArray"), "DeviceNDArray");
             }),
             py::arg("shape"), py::arg("strides") = py::none(),
             py::arg("dtype") = py::dtype("float64"), py::arg("stream") = 0)
        .def_property_readonly("shape", [](const nu::device_array& a) { return to_tuple(a.view().shape); })
        .def_property_readonly("strides", [](const nu::device_array& a) { return to_tuple(a.view().strides); })
        .def_property_readonly("dtype", [](const nu::device_array& a) { return to_numpy_dtype(a.view().type); })
        .def_property_readonly("ndim", [](const nu::device_array& a) { return a.view().ndim(); })
        .def_property_readonly("size", [](const nu::device_array& a) { return a.view().size(); })
        .def_property_readonly("nbytes", [](const nu::device_array& a) { return a.view().nbytes(); })
        .def_property_readonly("itemsize", [](const nu::device_array& a) { return nu::itemsize(a.view().type); })
        .def_property_readonly("stream", [](const nu::device_array& a) { return py_stream{a.stream()}; })
        .def_property_readonly("device_pointer", [](const nu::device_array& a) {
            return reinterpret_cast<std::uintptr_t>(a.view().data);
        })
        .def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
        .def("is_c_contiguous", [](const nu::device_array& a) { return a.view().is_c_contiguous(); })
        .def("is_f_contiguous", [](const nu::device_array& a) { return a.view().is_f_contiguous(); })
        .def("copy_to_host", &copy_to_host, py::arg("ary") = py::none(), py::arg("stream") = 0,
             "Copy to a new NumPy array, or into `ary` (same shape and dtype); returns it.")
        .def("copy_to_device", [](const nu::device_array& a, py::handle src, py::handle stream) {
                 copy_to_device(a, src, stream, "copy_to_device");
             }, py::arg("ary"), py::arg("stream") = 0,
             "Copy a host array, device array or CUDA array interface object into this one.")
        .def("__getitem__", [](const nu::device_array& a, py::handle key) -> py::object {
            nu::device_array v = a.index(as_index(key));
            bool all_integers = v.view().ndim() == 0;
            if (all_integers) return element_to_python(v);
            return py::cast(v);
        })
        .def("__setitem__", [](const nu::device_array& a, py::handle key, py::handle value) {
            nu::device_array v = a.index(as_index(key));
            py::object src = py::reinterpret_borrow<py::object>(value);
            if (!device_operand(value, "__setitem__")) {
                // Host values broadcast and cast like NumPy's assignment.
                py::module_ np = py::module_::import("numpy");
                src = np.attr("ascontiguousarray")(np.attr("broadcast_to")(
                    np.attr("asarray")(value, to_numpy_dtype(v.view().type)), to_tuple(v.view().shape)));
            }
            copy_to_device(v, src, py::int_(0), "__setitem__");
        })
        .def("reshape", [](const nu::device_array& a, py::args shape, const std::string& order) {
            py::object s = shape.size() == 1 ? py::object(shape[0]) : py::object(shape);
            return a.reshape(as_shape(s, "reshape"), as_order(order, "reshape"));
        }, py::arg("order") = "C")
        .def("ravel", [](const nu::device_array& a, const std::string& order) {
            return a.ravel(as_order(order, "ravel"));
        }, py::arg("order") = "C")
        .def("transpose", [](const nu::device_array& a, py::args axes) {
            std::vector<int> perm;
            py::object s = axes.size() == 1 ? py::object(axes[0]) : py::object(axes);
            if (axes.size() > 0 && !s.is_none()) {
                for (std::int64_t x : as_shape(s, "transpose", "axes")) perm.push_back(static_cast<int>(x));
            }
            return a.transpose(perm);
        })
        .def_property_readonly("T", [](const nu::device_array& a) { return a.transpose({}); })
        .def("__len__", [](const nu::device_array& a) {
            if (a.view().ndim() == 0) throw nu::type_error("len() of unsized object (0-d device array)");
            return a.view().shape[0];
        })
        .def("__array__", [](const nu::device_array& a, py::object dtype, py::object copy) {
            if (!copy.is_none() && !copy.cast<bool>()) {
                throw nu::value_error("__array__(): a device array cannot be viewed as a NumPy "
                                      "array without a copy (got copy=False)");
            }
            py::array host = copy_to_host(a, py::none(), py::int_(0));
            if (!dtype.is_none()) return py::array(host.attr("astype")(dtype));
            return host;
        }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
        .def("__dlpack__", [](const nu::device_array& a, py::object stream, py::object,
                              py::object, py::object) { return to_dlpack(a, stream); },
             py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
             py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
        .def("__dlpack_device__", [](const nu::device_array&) {
            nu::backend& b = nu::active_backend();
            return b.emulated() ? py::make_tuple(static_cast<int>(kDLCPU), 0)
                                : py::make_tuple(static_cast<int>(kDLCUDA), b.current_device());
        })
        .def("__repr__", [](const nu::device_array& a) {
            return "<DeviceNDArray shape=" + shape_repr(a.view().shape) + " dtype=" +
                   nu::dtype_name(a.view().type) + ">";
        });

    m.def("device_array", [](py::handle shape, py::handle dtype, py::object strides,
                             const std::string& order, py::handle stream) {
        std::optional<nu::shape_t> st;
        if (!strides.is_none()) st = as_shape(strides, "device_array", "strides");
        return nu::device_array::empty(as_shape(shape, "device_array"), as_dtype(dtype, "device_array"),
                                       as_order(order, "device_array"), st,
                                       as_stream(stream, "device_array"), "device_array");
    }, py::arg("shape"), py::arg("dtype"), py::arg("strides") = py::none(), py::arg("order") = "C",
       py::arg("stream") = 0);

    m.def("to_device", [](const py::array& host, py::handle stream) {
        const nu::stream_ref s = as_stream(stream, "to_device");
        nu::array_view hv = host_view(host, "to_device()");
        const char order = hv.is_f_contiguous() && !hv.is_c_contiguous() ? 'F' : 'C';
        nu::device_array d = nu::device_array::empty(hv.shape, hv.type, order, std::nullopt, s, "to_device");
        py::gil_scoped_release nogil;
        d.copy_from_host(hv, s);
        return d;
    }, py::arg("ary"), py::arg("stream") = 0);

    m.def("copy_into", [](const nu::device_array& dst, py::handle src, py::handle stream) {
        copy_to_device(dst, src, stream, "to_device");
    }, py::arg("dst"), py::arg("src"), py::arg("stream") = 0);

    m.def("as_cuda_array", [](py::handle obj) {
        if (is_device_array(obj)) return obj.cast<nu::device_array>();
        return import_cuda_array(obj, "as_cuda_array");
    });

    m.def("pinned_array", [](py::handle shape, py::handle dtype, const std::string& order) {
        const nu::shape_t sh = as_shape(shape, "pinned_array");
        const nu::dtype t = as_dtype(dtype, "pinned_array");
        const char o = as_order(order, "pinned_array");
        const std::int64_t count = nu::checked_size(sh, "pinned_array");
        nu::backend& b = nu::active_backend();
        void* ptr = b.allocate_pinned(static_cast<std::size_t>(count) * nu::itemsize(t));
        py::capsule owner(ptr, [](void* p) { nu::active_backend().release_pinned(p); });
        std::vector<py::ssize_t> shp(sh.begin(), sh.end());
        const nu::shape_t st = nu::contiguous_strides(sh, nu::itemsize(t), o);
        std::vector<py::ssize_t> strides(st.begin(), st.end());
        return py::array(to_numpy_dtype(t), shp, strides, ptr, owner);
    }, py::arg("shape"), py::arg("dtype"), py::arg("order") = "C");
}

// ---------------------------------------------------------------- ufuncs
[[noreturn]] void throw_overflow(const std::string& message) {
    PyErr_SetString(PyExc_OverflowError, message.c_str());
    throw py::error_already_set();
}

// Who is converting arguments: the ufunc or gufunc's name and target.
struct caller {
    const std::string& name;
    nu::target where;
};

std::string arg_name(const caller& uf, std::size_t index) {
    return uf.name + "(): argument " + std::to_string(index + 1);
}

// A call argument as an operand. Python scalars are weak; NumPy scalars and 0-d arrays
// are strong scalars passed by value; device and CAI arrays stay where they are.
nu::operand to_operand(const caller& uf, py::handle arg, std::size_t index, bool* is_cupy) {
    nu::operand op;
    const bool host_target = uf.where != nu::target::cuda;
    const bool is_ndarray = py::isinstance<py::array>(arg);  // cheap, and spares a failing getattr
    if (!is_ndarray && (is_device_array(arg) || has_cai(arg))) {
        nu::device_array d = is_device_array(arg)
                                 ? arg.cast<nu::device_array>()
                                 : import_cuda_array(arg, arg_name(uf, index).c_str());
        if (is_cupy != nullptr && !is_device_array(arg)) {
            const std::string module = py::str(py::type::handle_of(arg).attr("__module__"));
            *is_cupy = *is_cupy || module.rfind("cupy", 0) == 0;
        }
        if (host_target && !nu::active_backend().emulated()) {
            // cpu/parallel targets compute on the host: bring device data over.
            py::array host = copy_to_host(d, py::none(), py::int_(0));
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
                PyErr_Clear();
                throw_overflow(arg_name(uf, index) + ": Python integer " + repr_of(arg) +
                               " is out of bounds for every integer type");
            }
            op.value = nu::make_scalar(static_cast<std::uint64_t>(u));
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
    py::array arr;
    if (is_ndarray) {
        arr = py::reinterpret_borrow<py::array>(arg);
    } else {
        arr = py::module_::import("numpy").attr("asarray")(arg);
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

// The `out=` and `stream=` keywords shared by ufunc and gufunc calls.
struct call_keywords {
    py::object out = py::none();
    py::object stream = py::int_(0);
};

call_keywords parse_keywords(const std::string& name, py::handle kwargs) {
    call_keywords kw;
    if (!kwargs) return kw;
    for (auto item : py::reinterpret_borrow<py::dict>(kwargs)) {
        const std::string key = py::str(item.first);
        if (key == "out") {
            kw.out = py::reinterpret_borrow<py::object>(item.second);
        } else if (key == "stream") {
            kw.stream = py::reinterpret_borrow<py::object>(item.second);
        } else {
            throw nu::type_error(name + "() got an unexpected keyword argument '" + key + "'");
        }
    }
    return kw;
}

// An output array the caller passed: host (writable) or device.
nu::operand output_operand(const caller& who, py::handle out, std::size_t index, const std::string& what) {
    nu::operand op;
    if (!py::isinstance<py::array>(out) && (is_device_array(out) || has_cai(out))) {
        op = to_operand(who, out, index, nullptr);
    } else if (py::isinstance<py::array>(out)) {
        py::array arr = py::reinterpret_borrow<py::array>(out);
        if (!arr.writeable()) throw nu::value_error(who.name + "(): " + what + " is read-only");
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

// A new result: a device array (CuPy when an input was CuPy) when `on_device`, else NumPy.
py::object new_result(const caller& who, const nu::shape_t& shape, nu::dtype type, char order,
                      bool on_device, bool is_cupy, const nu::stream_ref& s, nu::operand* op) {
    if (on_device) {
        nu::device_array d = nu::device_array::empty(shape, type, order, std::nullopt, s, who.name.c_str());
        op->where = nu::operand::kind::device;
        op->view = d.view();
        op->device = d;
        py::object result = py::cast(d);
        if (is_cupy) result = py::module_::import("cupy").attr("asarray")(result);
        return result;
    }
    py::array arr = new_host_array(shape, type, order);
    op->where = nu::operand::kind::host;
    op->view = host_view(arr, [&] { return who.name + "()"; });
    return std::move(arr);
}

// The NumPy dtype a lazy ufunc compiles for, per argument (Python scalars: int64,
// float64, complex128, as Numba types them).
py::tuple resolver_types(const std::vector<nu::operand>& ops) {
    py::tuple t(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) t[i] = to_numpy_dtype(ops[i].type());
    return t;
}

py::object call_ufunc(py::handle self, py::tuple args, py::handle kwargs) {
    nu::ufunc& uf = engine_object<nu::ufunc>(self);
    const caller who{uf.name(), uf.where()};
    call_keywords kw = parse_keywords(uf.name(), kwargs);
    py::object out = kw.out;
    const std::size_t nargs = args.size();
    const std::size_t nin = static_cast<std::size_t>(uf.nin());
    if (nargs == nin + 1 && !out.is_none()) {
        throw nu::type_error(uf.name() + "(): cannot specify 'out' as both a positional and keyword argument");
    }
    if (nargs == nin + 1) out = args[nin];  // NumPy's positional out
    if (nargs != nin && nargs != nin + 1) {
        throw nu::type_error(uf.name() + "() takes " + std::to_string(nin) + " input argument" +
                             (nin == 1 ? "" : "s") + " (got " + std::to_string(nargs) + ")");
    }
    if (py::isinstance<py::tuple>(out)) {
        if (py::len(out) != 1) {
            throw nu::type_error(uf.name() + "(): out must be an array or a 1-tuple (got a tuple of " +
                                 std::to_string(py::len(out)) + ")");
        }
        out = out[py::int_(0)];
    }
    bool is_cupy = false;
    std::vector<nu::operand> ops;
    ops.reserve(nin);
    bool any_device = false;
    for (std::size_t i = 0; i < nin; ++i) {
        ops.push_back(to_operand(who, args[i], i, &is_cupy));
        any_device = any_device || ops.back().where == nu::operand::kind::device;
    }
    if (uf.select_loop(ops) < 0 && py::hasattr(self, "_resolve")) {
        self.attr("_resolve")(resolver_types(ops));  // lazy ufunc: compile a loop for these types
    }
    const nu::stream_ref s = as_stream(kw.stream, uf.name().c_str());

    nu::operand out_op;
    py::object result = out;
    if (!out.is_none()) out_op = output_operand(who, out, nin, "out");
    const nu::call_plan plan = uf.plan(ops, out.is_none() ? nullptr : &out_op);
    if (out.is_none()) {
        result = new_result(who, plan.shape, plan.out_type, plan.order,
                            any_device && uf.where() == nu::target::cuda, is_cupy, s, &out_op);
    }
    // Releasing the GIL costs about a tenth of a small host-backend call; it matters for
    // device launches and long host loops (and first calls, which compile), not there.
    const bool host_backend = uf.where() != nu::target::cuda || nu::active_backend().emulated();
    const std::int64_t n = nu::checked_size(plan.shape, uf.name().c_str());
    if (host_backend && n < (1 << 14)) {  // a compile inside releases the GIL itself
        uf.execute(plan, ops, out_op, s);
    } else {
        py::gil_scoped_release nogil;
        uf.execute(plan, ops, out_op, s);
    }
    if (out.is_none() && out_op.where == nu::operand::kind::host && plan.shape.empty()) {
        return result[py::tuple()];  // a 0-d result from host inputs is a NumPy scalar
    }
    return result;
}

// tp_call for a call implementation: C++ exceptions become Python ones, as pybind11 does.
template <py::object (*Call)(py::handle, py::tuple, py::handle)>
PyObject* direct_call(PyObject* self, PyObject* args, PyObject* kwargs) {
    try {
        return Call(self, py::reinterpret_borrow<py::tuple>(args), kwargs).release().ptr();
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (...) {
        py::detail::try_translate_exceptions();
    }
    return nullptr;
}

// Calls go straight to tp_call: pybind11's generic dispatch (argument casting, *args and
// **kwargs packing) and the slot lookup of a subclass's __call__ cost as much as the rest
// of a small call. A Python subclass gets slot_tp_call from type creation, so each one
// is given this slot too; `__call__` stays visible as an attribute.
void set_call_slot(py::handle cls, ternaryfunc call) {
    auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
    type->tp_call = call;
    PyType_Modified(type);
}

void install_fast_call(py::handle cls) { set_call_slot(cls, direct_call<call_ufunc>); }

void bind_ufunc(py::module_& m) {
    py::class_<nu::ufunc, std::shared_ptr<nu::ufunc>> cls(m, "UFunc", py::dynamic_attr(),
                                                          "Engine side of a vectorize ufunc.");
    cls
        .def(py::init([](std::string name, int nin, const std::string& where, bool fastmath) {
                 nu::target t = where == "cuda" ? nu::target::cuda
                                : where == "cpu" ? nu::target::cpu
                                : where == "parallel" ? nu::target::parallel
                                : throw nu::value_error("vectorize(): target must be 'cuda', 'cpu' or "
                                                        "'parallel' (got '" + where + "')");
                 return std::make_shared<nu::ufunc>(std::move(name), nin, t, fastmath);
             }),
             py::arg("name"), py::arg("nin"), py::arg("target"), py::arg("fastmath") = false)
        .def("_add_loop", [](nu::ufunc& uf, const std::vector<std::string>& in, const std::string& out,
                             std::string function, std::string source) {
            nu::loop l;
            for (const std::string& t : in) l.in.push_back(nu::dtype_from_typestr(t, "add_loop"));
            l.out = nu::dtype_from_typestr(out, "add_loop");
            l.function = std::move(function);
            l.source = std::move(source);
            uf.add_loop(std::move(l));
        })
        .def_property_readonly("nin", &nu::ufunc::nin)
        .def_property_readonly("nout", [](const nu::ufunc&) { return 1; })
        .def_property_readonly("nargs", [](const nu::ufunc& uf) { return uf.nin() + 1; })
        .def_property_readonly("ntypes", [](const nu::ufunc& uf) { return uf.loops().size(); })
        .def_property_readonly("types", &nu::ufunc::type_strings)
        .def_property_readonly("target", [](const nu::ufunc& uf) {
            return uf.where() == nu::target::cuda ? "cuda" : uf.where() == nu::target::cpu ? "cpu" : "parallel";
        })
        .def_property_readonly("_pipelined_calls", &nu::ufunc::pipelined_calls)
        .def("_kernel_sources", &nu::ufunc::kernel_sources,
             "(entry, source) of every kernel variant built so far.");
    cls.def("__call__", [](py::object self, py::args args, py::kwargs kwargs) {
        return call_ufunc(self, args, kwargs);
    });
    install_fast_call(cls);
    m.def("install_fast_call", &install_fast_call,
          "Give a Python subclass of UFunc the direct call slot (call once per subclass).");
}

// ---------------------------------------------------------------- gufuncs
// An operand of the loop's dtype: host arrays and scalars are converted here with NumPy
// (host data), device arrays of another dtype by the engine, on the device.
nu::operand gufunc_operand(const caller& who, nu::operand op, nu::dtype loop_type, py::handle arg,
                           std::vector<py::object>& keep) {
    if (op.where == nu::operand::kind::device || (op.where == nu::operand::kind::host && op.view.type == loop_type)) {
        return op;
    }
    // Scalars become 0-d arrays; a host array of another dtype is converted (a copy).
    py::array arr = py::module_::import("numpy").attr("asarray")(arg, to_numpy_dtype(loop_type));
    keep.push_back(arr);
    nu::operand converted;
    converted.where = nu::operand::kind::host;
    converted.view = host_view(arr, (who.name + "()").c_str());
    return converted;
}

py::object call_gufunc(py::handle self, py::tuple args, py::handle kwargs) {
    nu::gufunc& g = engine_object<nu::gufunc>(self);
    const caller who{g.name(), g.where()};
    call_keywords kw = parse_keywords(g.name(), kwargs);
    const std::size_t nin = static_cast<std::size_t>(g.nin()), nout = static_cast<std::size_t>(g.nout());
    const std::size_t nargs = args.size();
    if (nargs != nin && nargs != nin + nout) {
        throw nu::type_error(g.name() + "() takes " + std::to_string(nin) + " input argument(s) and, optionally, " +
                             std::to_string(nout) + " output(s) (got " + std::to_string(nargs) + " arguments)");
    }
    std::vector<py::object> outs(nout, py::none());
    if (nargs == nin + nout) {
        if (!kw.out.is_none()) {
            throw nu::type_error(g.name() + "(): cannot specify outputs both positionally and with out=");
        }
        for (std::size_t k = 0; k < nout; ++k) outs[k] = args[nin + k];
    } else if (!kw.out.is_none()) {
        if (py::isinstance<py::tuple>(kw.out)) {
            if (py::len(kw.out) != nout) {
                throw nu::type_error(g.name() + "(): out must be a tuple of " + std::to_string(nout) +
                                     " array(s) (got " + std::to_string(py::len(kw.out)) + ")");
            }
            for (std::size_t k = 0; k < nout; ++k) outs[k] = kw.out[py::int_(k)];
        } else if (nout == 1) {
            outs[0] = kw.out;
        } else {
            throw nu::type_error(g.name() + "(): with " + std::to_string(nout) + " outputs, out must be a tuple");
        }
    }
    bool is_cupy = false;
    bool any_device = false;
    std::vector<nu::operand> ops;
    for (std::size_t i = 0; i < nin; ++i) {
        ops.push_back(to_operand(who, args[i], i, &is_cupy));
        any_device = any_device || ops.back().where == nu::operand::kind::device;
    }
    const int loop = g.select_loop(ops);
    if (loop < 0) throw nu::type_error(g.no_loop_message(ops));
    const nu::gufunc_loop& l = g.loops()[loop];
    std::vector<py::object> keep;  // converted host data, alive until the call returns
    for (std::size_t i = 0; i < nin; ++i) ops[i] = gufunc_operand(who, ops[i], l.types[i], args[i], keep);

    // Outputs passed in are read-write; one of another dtype is worked on as a converted
    // copy and written back with NumPy's same_kind rule.
    std::vector<nu::operand> out_ops(nout);
    std::vector<const nu::operand*> given(nout, nullptr);
    std::vector<std::pair<py::object, py::array>> write_back;  // (user's host out, converted copy)
    for (std::size_t k = 0; k < nout; ++k) {
        if (outs[k].is_none()) continue;
        const std::string what = "output " + std::to_string(k + 1);
        out_ops[k] = output_operand(who, outs[k], nin + k, what);
        any_device = any_device || out_ops[k].where == nu::operand::kind::device;
        const nu::dtype want = l.types[nin + k];
        if (out_ops[k].view.type != want) {
            if (!nu::can_cast_same_kind(want, out_ops[k].view.type)) {
                throw nu::type_error(g.name() + "(): cannot cast the loop's " + what + " " + nu::dtype_name(want) +
                                     " to " + nu::dtype_name(out_ops[k].view.type) +
                                     " with casting rule 'same_kind'");
            }
            if (out_ops[k].where == nu::operand::kind::host) {
                py::array copy = py::module_::import("numpy").attr("array")(outs[k], to_numpy_dtype(want));
                write_back.emplace_back(outs[k], copy);
                out_ops[k].view = host_view(copy, (g.name() + "()").c_str());
            }
        }
        given[k] = &out_ops[k];
    }
    const nu::gufunc_plan plan = g.plan(loop, ops, given);
    const nu::stream_ref s = as_stream(kw.stream, g.name().c_str());
    const bool on_device = any_device && g.where() == nu::target::cuda;
    std::vector<py::object> results(nout);
    for (std::size_t k = 0; k < nout; ++k) {
        if (!outs[k].is_none()) {
            results[k] = outs[k];
            continue;
        }
        results[k] = new_result(who, plan.out_shapes[k], l.types[nin + k], 'C', on_device, is_cupy, s, &out_ops[k]);
    }
    {
        py::gil_scoped_release nogil;
        g.execute(plan, ops, out_ops, s);
    }
    for (auto& [user_out, copy] : write_back) {
        py::module_::import("numpy").attr("copyto")(user_out, copy, py::arg("casting") = "same_kind");
    }
    auto finish = [&](std::size_t k) -> py::object {
        if (outs[k].is_none() && out_ops[k].where == nu::operand::kind::host && plan.out_shapes[k].empty()) {
            return results[k][py::tuple()];  // a 0-d host result is a NumPy scalar
        }
        return results[k];
    };
    if (nout == 1) return finish(0);
    py::tuple t(nout);
    for (std::size_t k = 0; k < nout; ++k) t[k] = finish(k);
    return std::move(t);
}

void bind_gufunc(py::module_& m) {
    py::class_<nu::gufunc, std::shared_ptr<nu::gufunc>> cls(m, "GUFunc", py::dynamic_attr(),
                                                            "Engine side of a guvectorize gufunc.");
    cls.def(py::init([](std::string name, int nin, int nout, const std::vector<std::vector<std::pair<int, std::int64_t>>>& core,
                        std::vector<std::string> dim_names, const std::string& where, bool fastmath,
                        std::vector<int> writable) {
            std::vector<std::vector<nu::core_dim>> dims;
            for (const auto& operand : core) {
                dims.emplace_back();
                for (const auto& [name_index, fixed] : operand) dims.back().push_back({name_index, fixed});
            }
            const nu::target t = where == "cuda" ? nu::target::cuda : where == "cpu" ? nu::target::cpu
                                 : nu::target::parallel;
            return std::make_shared<nu::gufunc>(std::move(name), nin, nout, std::move(dims), std::move(dim_names),
                                                t, fastmath, std::move(writable));
        }))
        .def("_add_loop", [](nu::gufunc& g, const std::vector<std::string>& types, const std::vector<int>& kinds,
                             std::string function, std::string source) {
            nu::gufunc_loop l;
            for (const std::string& t : types) l.types.push_back(nu::dtype_from_typestr(t, "add_loop"));
            for (int k : kinds) l.kinds.push_back(static_cast<nu::arg_kind>(k));
            l.function = std::move(function);
            l.source = std::move(source);
            g.add_loop(std::move(l));
        })
        .def_property_readonly("nin", &nu::gufunc::nin)
        .def_property_readonly("nout", &nu::gufunc::nout)
        .def_property_readonly("nargs", [](const nu::gufunc& g) { return g.nin() + g.nout(); })
        .def_property_readonly("ntypes", [](const nu::gufunc& g) { return g.loops().size(); })
        .def_property_readonly("types", &nu::gufunc::type_strings)
        .def("_kernel_sources", &nu::gufunc::kernel_sources)
        .def("__call__", [](py::object self, py::args args, py::kwargs kwargs) {
            return call_gufunc(self, args, kwargs);
        });
    set_call_slot(cls, direct_call<call_gufunc>);
    m.def("install_fast_gufunc_call", [](py::handle cls) { set_call_slot(cls, direct_call<call_gufunc>); },
          "Give a Python subclass of GUFunc the direct call slot.");
}

// ---------------------------------------------------------------- reductions
// cuda.reduce and ufunc.reduce: the helpers are local so the reduce bindings stay one
// function (module.cpp is shared with the ufunc bindings).
void bind_reduce(py::module_& m) {
    // NumPy's AxisError (a ValueError and an IndexError), so `except np.exceptions.AxisError`
    // works as it does for NumPy's own reductions.
    const auto throw_axis_error = [](const std::string& message) {
        py::object cls = py::module_::import("numpy").attr("exceptions").attr("AxisError");
        PyErr_SetObject(cls.ptr(), cls(py::str(message)).ptr());
        throw py::error_already_set();
    };

    // `axis=` as sorted distinct axes: None is every axis; negative values count from the end.
    const auto reduce_axes = [throw_axis_error](py::handle axis, int ndim,
                                                const std::string& api) -> std::vector<int> {
        std::vector<int> axes;
        if (axis.is_none()) {
            for (int d = 0; d < ndim; ++d) axes.push_back(d);
            return axes;
        }
        std::vector<py::handle> items;
        if (py::isinstance<py::tuple>(axis)) {
            for (py::handle a : py::reinterpret_borrow<py::tuple>(axis)) items.push_back(a);
        } else {
            items.push_back(axis);
        }
        for (py::handle a : items) {
            if (!is_integer(a)) {
                throw nu::type_error(api + "(): axis must be None, an int or a tuple of ints (got " +
                                     repr_of(axis) + ")");
            }
            const std::int64_t v = a.cast<std::int64_t>();
            if (v < -ndim || v >= ndim) {
                throw_axis_error(api + "(): axis " + std::to_string(v) +
                                 " is out of bounds for array of dimension " + std::to_string(ndim));
            }
            const int d = static_cast<int>(v < 0 ? v + ndim : v);
            if (std::find(axes.begin(), axes.end(), d) != axes.end()) {
                throw nu::value_error(api + "(): duplicate value in axis (got " + repr_of(axis) + ")");
            }
            axes.push_back(d);
        }
        std::sort(axes.begin(), axes.end());
        return axes;
    };

    // An output argument (`res` or `out`) seen through the folded axes: `shape` is the result
    // shape; a keepdims-shaped array (size 1 on the folded axes) is accepted too.
    const auto reduce_output = [](py::handle obj, const nu::shape_t& shape, const std::vector<int>& axes,
                                  int ndim, const std::string& api, const char* what) -> nu::reduce_operand {
        nu::reduce_operand op;
        const std::string label = api + "(): " + what;
        if (py::isinstance<py::array>(obj)) {
            py::array arr = py::reinterpret_borrow<py::array>(obj);
            if (!arr.writeable()) throw nu::value_error(label + " is read-only");
            op.view = host_view(arr, label.c_str());
            op.on_host = true;
        } else if (auto dev = device_operand(obj, label.c_str())) {
            op.view = dev->view();
        } else {
            throw nu::type_error(label + " must be a NumPy or device array (got " +
                                 repr_of(py::type::handle_of(obj)) + ")");
        }
        nu::array_view& v = op.view;
        if (v.ndim() == ndim && ndim > 0 && v.shape != shape) {  // keepdims layout
            nu::array_view kept = v;
            kept.shape.clear();
            kept.strides.clear();
            bool ok = true;
            for (int d = 0; d < ndim; ++d) {
                const bool folded = std::find(axes.begin(), axes.end(), d) != axes.end();
                if (folded) ok = ok && v.shape[d] == 1;
                else {
                    kept.shape.push_back(v.shape[d]);
                    kept.strides.push_back(v.strides[d]);
                }
            }
            if (ok) v = kept;
        }
        if (v.shape != shape) {
            throw nu::value_error(label + " has shape " + shape_repr(op.view.shape) +
                                  ", the reduction's result has shape " + shape_repr(shape));
        }
        return op;
    };

    // The whole call of cuda.reduce and ufunc.reduce after the Python wrappers have checked
    // their own arguments. `init` None: no initial value. `res` (Numba's): a device array whose
    // first element receives a full reduction; the call returns None. `out` (NumPy's): the
    // result array, returned. Without either, a full reduction with `scalar_result` returns a
    // NumPy scalar, anything else a new array (a device array for device input).
    const auto run_reduce = [reduce_axes, reduce_output](
            nu::reducer& r, py::object self, py::handle arr, py::handle axis, py::handle size,
            py::handle res, py::handle out, py::handle init, py::handle dtype, bool keepdims,
            py::handle stream, bool scalar_result, const std::string& api) -> py::object {
        nu::reduce_operand in;
        bool is_cupy = false;
        const std::string arg = api + "(): the array";
        std::optional<nu::device_array> device;
        py::object host_keepalive;
        if (!py::isinstance<py::array>(arr) && (device = device_operand(arr, arg.c_str()))) {
            in.view = device->view();
            const std::string module = py::str(py::type::handle_of(arr).attr("__module__"));
            is_cupy = module.rfind("cupy", 0) == 0;
        } else {
            py::array a = py::module_::import("numpy").attr("asarray")(arr);
            host_keepalive = a;
            const char kind = a.dtype().kind();
            if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f' && kind != 'c') {
                throw nu::type_error(api + "(): the array must have a numeric dtype (got " +
                                     std::string(py::str(a.dtype())) + ")");
            }
            in.view = host_view(a, arg.c_str());
            in.on_host = true;
        }
        nu::array_view& v = in.view;
        if (!size.is_none()) {
            if (!is_integer(size)) throw nu::type_error(api + "(): size must be an int (got " + repr_of(size) + ")");
            const std::int64_t n = size.cast<std::int64_t>();
            if (n < 0 || n > v.size()) {
                throw nu::value_error(api + "(): size must be between 0 and the array's " +
                                      std::to_string(v.size()) + " elements (got " + std::to_string(n) + ")");
            }
            if (!axis.is_none()) throw nu::value_error(api + "(): size= and axis= cannot be combined");
            if (v.ndim() != 1 && !v.is_c_contiguous()) {
                throw nu::value_error(api + "(): size= needs a 1-d or C-contiguous array (got shape " +
                                      shape_repr(v.shape) + ")");
            }
            const std::int64_t stride = v.ndim() == 1 ? v.strides[0] : static_cast<std::int64_t>(nu::itemsize(v.type));
            v.shape = {n};
            v.strides = {stride};
        }
        const std::vector<int> axes = reduce_axes(axis, v.ndim(), api);
        nu::shape_t shape;
        for (int d = 0; d < v.ndim(); ++d)
            if (std::find(axes.begin(), axes.end(), d) == axes.end()) shape.push_back(v.shape[d]);

        // The operator's loop: the requested dtype, else the array's; Python translates (or,
        // for a ufunc, selects with NumPy's casting rules) a loop it has not seen.
        const nu::dtype want = dtype.is_none() ? v.type : as_dtype(dtype, api.c_str());
        int loop = r.find_loop(want);
        if (loop < 0) loop = self.attr("_resolve")(to_numpy_dtype(want)).cast<int>();
        const nu::dtype type = r.loops().at(static_cast<std::size_t>(loop)).type;

        nu::scalar_value init_value;
        const bool has_init = !init.is_none();
        if (has_init) {
            py::array a;
            try {
                a = py::module_::import("numpy").attr("asarray")(init, to_numpy_dtype(type));
            } catch (py::error_already_set&) {
                throw nu::type_error(api + "(): the initial value must be a number convertible to " +
                                     nu::dtype_name(type) + " (got " + repr_of(init) + ")");
            }
            if (a.ndim() != 0) {
                throw nu::type_error(api + "(): the initial value must be a scalar (got " + repr_of(init) + ")");
            }
            std::memcpy(init_value.bytes, a.data(), nu::itemsize(type));
        }
        std::int64_t len = 1;
        for (int d : axes) len *= v.shape[d];
        if (len == 0 && !has_init && nu::checked_size(shape, api.c_str()) > 0) {
            throw nu::type_error(api + "(): zero-size reduction with no identity and no initial value "
                                 "(got shape " + shape_repr(v.shape) + ")");
        }

        const nu::stream_ref s = as_stream(stream, api.c_str());
        nu::reduce_operand dst;
        py::object result = py::none();
        if (!res.is_none()) {
            if (py::isinstance<py::array>(res) || !(py::isinstance<nu::device_array>(res) || has_cai(res))) {
                throw nu::type_error(api + "(): res must be a device array (got " +
                                     repr_of(py::type::handle_of(res)) + ")");
            }
            nu::device_array d = *device_operand(res, (api + "(): res").c_str());
            if (d.view().type != type) {
                throw nu::type_error(api + "(): res must have the array's dtype " + nu::dtype_name(type) +
                                     " (got " + nu::dtype_name(d.view().type) + ")");
            }
            if (!shape.empty()) {
                dst = reduce_output(res, shape, axes, v.ndim(), api, "res");
            } else {
                if (d.view().size() < 1) throw nu::value_error(api + "(): res must have at least one element");
                dst.view = d.view();  // its first element
                dst.view.shape.clear();
                dst.view.strides.clear();
            }
        } else if (!out.is_none()) {
            dst = reduce_output(out, shape, axes, v.ndim(), api, "out");
            result = py::reinterpret_borrow<py::object>(out);
        } else if (in.on_host || (scalar_result && shape.empty())) {
            py::array a = new_host_array(shape, type, 'C');
            dst.view = host_view(a, api.c_str());
            dst.on_host = true;
            result = a;
        } else {
            nu::device_array d = nu::device_array::empty(shape, type, 'C', std::nullopt, s, api.c_str());
            dst.view = d.view();
            result = py::cast(d);
        }
        {
            py::gil_scoped_release nogil;
            r.execute(loop, in, axes, has_init ? init_value.bytes : nullptr, dst, s, api.c_str());
        }
        if (!res.is_none()) return py::none();
        if (!out.is_none()) return result;
        if (keepdims) {
            nu::shape_t kept;
            for (int d = 0; d < v.ndim(); ++d)
                kept.push_back(std::find(axes.begin(), axes.end(), d) != axes.end() ? 1 : v.shape[d]);
            result = result.attr("reshape")(to_tuple(kept));
        } else if (shape.empty() && dst.on_host) {
            return result[py::tuple()];  // NumPy scalar
        }
        if (is_cupy && !dst.on_host) result = py::module_::import("cupy").attr("asarray")(result);
        return result;
    };

    py::class_<nu::reducer, std::shared_ptr<nu::reducer>>(m, "Reducer", py::dynamic_attr(),
                                                          "Engine side of reduce and ufunc.reduce.")
        .def(py::init([](std::string name, const std::string& where, bool fastmath) {
                 return std::make_shared<nu::reducer>(std::move(name), where != "cuda", fastmath);
             }),
             py::arg("name"), py::arg("target") = "cuda", py::arg("fastmath") = false)
        .def("_add_loop", [](nu::reducer& r, const std::string& type, std::string function,
                             std::string source) {
            nu::reduce_loop l;
            l.type = nu::dtype_from_typestr(type, "Reducer._add_loop");
            l.function = std::move(function);
            l.source = std::move(source);
            r.add_loop(std::move(l));
            return static_cast<int>(r.loops().size()) - 1;
        })
        .def("_find_loop", [](const nu::reducer& r, py::handle dtype) {
            return r.find_loop(as_dtype(dtype, "Reducer._find_loop"));
        })
        .def("_source", [](const nu::reducer& r, int loop, py::handle in, py::handle out) {
            return r.source(loop, as_dtype(in, "Reducer._source"), as_dtype(out, "Reducer._source"));
        }, "The generated translation unit of a loop for these input and output dtypes.")
        .def_static("_nvrtc_extra", &nu::reduce_nvrtc_extra,
                    "NVRTC options reduction builds add (CUB include directory, -pch).")
        .def_property_readonly("types", [](const nu::reducer& r) {
            std::vector<std::string> t;
            for (const nu::reduce_loop& l : r.loops()) t.push_back(std::string(1, nu::dtype_char(l.type)));
            return t;
        })
        .def("_run",
             [run_reduce](py::object self, py::handle arr, py::handle axis, py::handle size, py::handle res,
                py::handle out, py::handle init, py::handle dtype, bool keepdims, py::handle stream,
                bool scalar_result, const std::string& api) {
                 return run_reduce(self.cast<nu::reducer&>(), self, arr, axis, size, res, out, init,
                                   dtype, keepdims, stream, scalar_result, api);
             },
             py::arg("arr"), py::arg("axis"), py::arg("size"), py::arg("res"), py::arg("out"),
             py::arg("init"), py::arg("dtype"), py::arg("keepdims"), py::arg("stream"),
             py::arg("scalar_result"), py::arg("api"));
}

// Compilation (NVRTC, host compiler, kernel cache): see src/compile/.
void bind_compile(py::module_& m) {
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const nu::compile_error& e) {
            py::object cls = py::module_::import("numbacuda_ufunc.errors").attr("CompileError");
            py::object exc = cls(e.what(), e.log());
            PyErr_SetObject(cls.ptr(), exc.ptr());
        }
    });

    auto nvrtc_opts = [](std::pair<int, int> cc, bool cubin, bool fastmath,
                         std::vector<std::string> options) {
        nu::nvrtc_options o;
        o.cc_major = cc.first;
        o.cc_minor = cc.second;
        o.cubin = cubin;
        o.fastmath = fastmath;
        o.extra = std::move(options);
        return o;
    };
    // Builds release the GIL: they take from milliseconds (cache) to seconds (compiler).
    m.def("compile_ptx",
          [nvrtc_opts](const std::string& source, std::pair<int, int> cc, bool fastmath,
                       std::vector<std::string> options) {
              return nu::nvrtc_build(source, nvrtc_opts(cc, false, fastmath, std::move(options)));
          },
          py::arg("source"), py::arg("cc"), py::arg("fastmath") = false,
          py::arg("options") = std::vector<std::string>{},
          py::call_guard<py::gil_scoped_release>(),
          "CUDA C++ -> PTX for compute capability cc=(major, minor), through the kernel cache.");
    m.def("compile_cubin",
          [nvrtc_opts](const std::string& source, std::pair<int, int> cc, bool fastmath,
                       std::vector<std::string> options) {
              std::string bin;
              {
                  py::gil_scoped_release release;
                  bin = nu::nvrtc_build(source, nvrtc_opts(cc, true, fastmath, std::move(options)));
              }
              return py::bytes(bin);
          },
          py::arg("source"), py::arg("cc"), py::arg("fastmath") = false,
          py::arg("options") = std::vector<std::string>{},
          "CUDA C++ -> CUBIN for sm_XY, through the kernel cache.");
    m.def("nvrtc_options",
          [nvrtc_opts](std::pair<int, int> cc, bool cubin, bool fastmath,
                       std::vector<std::string> options) {
              return nu::nvrtc_option_list(nvrtc_opts(cc, cubin, fastmath, std::move(options)));
          },
          py::arg("cc"), py::arg("cubin") = false, py::arg("fastmath") = false,
          py::arg("options") = std::vector<std::string>{},
          "The NVRTC option list these settings produce.");
    m.def("nvrtc_version", &nu::nvrtc_version, "(major, minor) of NVRTC; loads it.");
    m.def("nvrtc_library_path", &nu::nvrtc_library_path, "Path of the loaded libnvrtc.");
    m.def("cub_include_dir", &nu::cub_include_dir, "Directory holding cub/cub.cuh, or ''.");
    m.def("set_wheel_search_paths", &nu::set_wheel_search_paths, py::arg("library_dirs"),
          py::arg("include_dirs"), "Directories of the nvidia-cuda-nvrtc/cccl wheels.");

    py::class_<nu::host_library, std::shared_ptr<nu::host_library>>(m, "HostLibrary")
        .def("symbol", [](const nu::host_library& lib, const std::string& name) {
                 return reinterpret_cast<std::uintptr_t>(lib.symbol(name));
             },
             py::arg("name"), "Address of an exported symbol (KeyError when missing).")
        .def_property_readonly("key", &nu::host_library::key);
    py::register_exception<std::out_of_range>(m, "SymbolNotFound", PyExc_KeyError);
    m.def("build_host", &nu::build_host, py::arg("source"),
          py::arg("options") = std::vector<std::string>{},
          py::call_guard<py::gil_scoped_release>(),
          "Compiles source with the host C++ compiler (after host_prelude.h), cached; "
          "returns the loaded HostLibrary.");
    m.def("host_compiler_command", &nu::host_compiler_command);

    m.def("cache_dir", &nu::cache_dir, "The disk cache directory (created on demand).");
    m.def("cache_stats", [] {
        nu::cache_stats s = nu::get_cache_stats();
        py::dict d;
        d["memory_hits"] = s.memory_hits;
        d["disk_hits"] = s.disk_hits;
        d["nvrtc_compiles"] = s.nvrtc_compiles;
        d["host_compiles"] = s.host_compiles;
        d["rejected_entries"] = s.rejected_entries;
        return d;
    });
    m.def("reset_cache_stats", &nu::reset_cache_stats);
    m.def("clear_memory_cache", &nu::clear_memory_cache,
          "Forget cached PTX/CUBIN in this process (loaded host libraries stay loaded).");
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "numbacuda_ufunc C++ engine";
    m.attr("__version__") = NU_VERSION;
    translate_exceptions();
    // Device arrays of any strides copy on the device, with the elementwise engine.
    nu::set_strided_device_copy(&nu::cast_into);
    // Engine work marked blocking (compiles) runs without the GIL when the caller holds it.
    nu::set_blocking_hooks({[]() -> void* { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; },
                            [](void* state) { PyEval_RestoreThread(static_cast<PyThreadState*>(state)); }});
    bind_runtime(m);
    bind_array(m);
    bind_compile(m);
    bind_ufunc(m);
    bind_gufunc(m);
    bind_reduce(m);
}
