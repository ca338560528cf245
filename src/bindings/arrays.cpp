// src/bindings/arrays.cpp: DeviceNDArray, the array interface, DLPack, pinned memory
#include "bindings/common.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "array/dlpack.h"
#include "dispatch/broadcast.h"
#include "dispatch/device_cast.h"

namespace nu::bindings {

// Whether `obj` offers __cuda_array_interface__. Only an AttributeError means "no": any other
// exception its property raises (a driver error in CuPy, a bug in the object) propagates as
// it is, where hasattr() swallowed it and the object became a misleading dtype error.
bool has_cai(py::handle obj) {
    PyObject* value = PyObject_GetAttrString(obj.ptr(), "__cuda_array_interface__");
    if (value) {
        Py_DECREF(value);
        return true;
    }
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return false;
    }
    throw py::error_already_set();
}

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

namespace {
// NUMBACUDA_UFUNC_CUDA_ARRAY_INTERFACE_SYNC (read at import by numbacuda_ufunc.cuda).
bool g_cai_sync = true;
}  // namespace

namespace {

// The record dtype an array-interface descr lists: named fields at their running offsets;
// the unnamed entries are padding (NumPy would turn them into fields 'f1'...). Nested
// records are descr lists themselves. Throws type_error for a malformed descr.
py::dtype fields_of_descr(py::handle descr, std::int64_t* size) {
    py::list names, formats, offsets;
    std::int64_t offset = 0;
    for (py::handle item : descr) {
        if (!py::isinstance<py::tuple>(item)) throw nu::type_error("descr entry is not a tuple");
        const py::tuple entry = py::reinterpret_borrow<py::tuple>(item);
        if (entry.size() < 2 || !py::isinstance<py::str>(entry[0])) throw nu::type_error("bad descr entry");
        py::object base = entry[1];
        if (py::isinstance<py::list>(base)) {
            std::int64_t inner = 0;
            base = fields_of_descr(base, &inner);
        }
        const py::dtype f = py::dtype::from_args(entry.size() > 2 ? py::object(py::make_tuple(base, entry[2])) : base);
        if (!py::str(entry[0]).cast<std::string>().empty()) {
            names.append(entry[0]);
            formats.append(f);
            offsets.append(offset);
        }
        offset += static_cast<std::int64_t>(f.itemsize());
    }
    if (names.empty()) throw nu::type_error("descr names no field");
    py::dict spec;
    spec["names"] = names;
    spec["formats"] = formats;
    spec["offsets"] = offsets;
    spec["itemsize"] = offset;
    *size = offset;
    return py::dtype::from_args(spec);
}

py::dtype record_from_descr(py::handle descr, const std::string& typestr, const std::string& what) {
    std::int64_t size = 0;
    py::dtype dt;
    try {
        dt = fields_of_descr(descr, &size);
    } catch (const std::exception&) {
        throw nu::type_error(what + ": cannot read the descr " + repr_of(descr));
    }
    if (typestr != "|V" + std::to_string(size)) {
        throw nu::type_error(what + " '" + typestr + "' does not match the descr " + repr_of(descr));
    }
    return dt;
}

}  // namespace

nu::device_array import_cuda_array(py::handle obj, const char* api, bool sync, bool adopt_stream) {
    py::object iface;
    try {
        iface = obj.attr("__cuda_array_interface__");
    } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_AttributeError)) throw;  // the property's own error, unchanged
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
        // Numba's exception and wording, which code written for it catches.
        PyErr_SetString(PyExc_NotImplementedError,
                        (std::string(api) + "(): Masked arrays are not supported (the interface's 'mask' is " +
                         repr_of(d["mask"]) + ", not None)").c_str());
        throw py::error_already_set();
    }
    nu::array_view v;
    const std::string typestr = py::str(d["typestr"]).cast<std::string>();
    const std::string what = std::string(api) + "(): __cuda_array_interface__ typestr";
    if (typestr.size() > 1 && typestr[1] == 'V' && d.contains("descr") && !d["descr"].is_none()) {
        // A record array (Numba's, ours): its fields are in descr, as NumPy's __array_interface__.
        v.type = dtype_of(record_from_descr(d["descr"], typestr, what), what.c_str());
    } else {
        v.type = typestr_dtype(typestr, what.c_str());
    }
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
    std::int64_t address = 0;
    if (!to_int64(data[py::int_(0)], &address) || address < 0) {
        throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ data pointer must be a "
                              "non-negative integer (got " + repr_of(data[py::int_(0)]) + ")");
    }
    v.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
    nu::backend& backend = nu::active_backend();
    std::int64_t lo = 0, hi = 0;
    try {
        v.byte_extent(&lo, &hi);
    } catch (const nu::value_error& e) {
        throw nu::value_error(std::string(api) + "(): __cuda_array_interface__: " + e.what());
    }
    if (count > 0) {
        // The extent (shape x strides) must lie inside one allocation: a forged or stale
        // interface would otherwise let kernels and copies run off the end of it.
        // Element 0 always lies in the extent, so its allocation is the one to hold it all.
        // Compared as integers: pointer arithmetic with a huge stride would wrap around.
        const void* base = nullptr;
        std::size_t bytes = 0;
        if (backend.address_range(v.data, &base, &bytes)) {
            const auto begin = reinterpret_cast<std::uintptr_t>(base);
            const auto first = reinterpret_cast<std::uintptr_t>(v.data);
            const auto before = static_cast<std::int64_t>(first - begin);  // bytes ahead of element 0
            const auto room = static_cast<std::int64_t>(begin + bytes - first);  // from element 0 on
            if (lo < -before) {
                throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ shape " + shape_repr(v.shape) +
                                      " with strides " + shape_repr(v.strides) + " reaches " +
                                      std::to_string(0ULL - static_cast<std::uint64_t>(lo)) +
                                      " bytes back from its pointer, before the start of its allocation");
            }
            if (hi > room) {
                throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ shape " + shape_repr(v.shape) +
                                      " with strides " + shape_repr(v.strides) + " spans " + std::to_string(hi - lo) +
                                      " bytes, past the end of its allocation (" + std::to_string(room - lo) +
                                      " bytes from the array's first element)");
            }
        } else if (!backend.is_device_pointer(v.data)) {
            throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ pointer " +
                                  repr_of(data[py::int_(0)]) + " is not device memory");
        }
    }
    nu::stream_ref stream = nu::default_stream();
    if (d.contains("stream") && !d["stream"].is_none()) {
        // CAI v3: 0 is ambiguous and disallowed; 1 and 2 are the legacy and per-thread
        // default streams; anything else a stream handle.
        py::object producer = d["stream"];
        std::int64_t handle = -1;
        if (!is_integer(producer) || !to_int64(producer, &handle) || handle < 0) {
            throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ stream must be None or a "
                                  "stream handle (got " + repr_of(producer) + ")");
        }
        if (handle == 0) {
            throw nu::value_error(std::string(api) + "(): __cuda_array_interface__ stream 0 is disallowed "
                                  "by the interface (v3): use 1 for the legacy default stream, 2 for the "
                                  "per-thread one, or None");
        }
        // The producer's pending work on its stream must finish before we read. Work on
        // the legacy default stream (1, CuPy's default) is already ordered before ours:
        // the legacy stream synchronizes with every blocking stream, so no wait is needed.
        const bool wait = sync && g_cai_sync && handle != 1;
        if (wait || adopt_stream) {
            // The legacy stream (1) is our default stream (handle 0) under another name:
            // the view keeps the default, so it behaves as one made here (stream 0).
            stream = handle == 1   ? nu::default_stream()
                     : handle == 2 ? nu::per_thread_default_stream()
                                   : nu::external_stream(reinterpret_cast<nu::stream_handle>(handle));
        }
        if (wait) {
            // Through Stream.synchronize, as Numba does: code that wraps or patches the
            // method (Numba's tests count its calls) sees every synchronization.
            py::cast(py_stream{stream}).attr("synchronize")();
        }
        if (!adopt_stream) stream = nu::default_stream();
    }
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
            if (!to_int64(k, &it.value)) {
                throw nu::index_error("DeviceNDArray.__getitem__(): index " + repr_of(k) +
                                      " is out of bounds (it does not fit in int64)");
            }
        } else if (py::isinstance<py::slice>(k)) {
            it.what = nu::index_item::kind::slice;
            auto field = [&](const char* name) -> std::optional<std::int64_t> {
                py::object v = k.attr(name);
                if (v.is_none()) return std::nullopt;
                if (!is_integer(v)) {
                    throw nu::type_error("DeviceNDArray.__getitem__(): slice indices must be "
                                         "integers or None (got " + repr_of(v) + ")");
                }
                std::int64_t value = 0;
                if (!to_int64(v, &value)) {  // clamp like Python's slice.indices()
                    value = py::int_(v) < py::int_(0) ? INT64_MIN : INT64_MAX;
                }
                return value;
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

namespace {

// reshape()'s and ravel()'s order, as NumPy reads it: 'A' is Fortran order for an array that
// is Fortran- and not C-contiguous, else C order.
char reshape_order(const nu::device_array& a, const std::string& order, const char* api) {
    if (order == "C" || order == "F") return order[0];
    if (order == "A") return a.view().is_f_contiguous() && !a.view().is_c_contiguous() ? 'F' : 'C';
    throw nu::value_error(std::string(api) + "(): order must be 'C', 'F' or 'A'" +
                          (std::string(api) == "ravel" ? std::string(" or 'K'") : std::string()) +
                          " (got '" + order + "')");
}

// ravel(order='K'): the axes read from the largest stride magnitude to the smallest, as
// NumPy's ravel does (it keeps the direction of a negative stride: a[::-1].ravel('K') is
// a[::-1].ravel('C')).
nu::device_array ravel_memory_order(const nu::device_array& a) {
    const nu::array_view& v = a.view();
    if (v.is_c_contiguous()) return a.ravel('C');
    if (v.is_f_contiguous()) return a.ravel('F');
    std::vector<int> axes(static_cast<std::size_t>(v.ndim()));
    for (int k = 0; k < v.ndim(); ++k) axes[k] = k;
    std::stable_sort(axes.begin(), axes.end(), [&](int x, int y) {
        return std::llabs(v.strides[x]) > std::llabs(v.strides[y]);
    });
    return a.transpose(axes).ravel('C');
}

// Numba's copy rule (check_array_compatibility): the two shapes must agree once their 1s
// are dropped, so copies between (1, n), (n, 1) and (n,) work. `v` seen with `shape`, when
// only size-1 axes differ; nullopt otherwise.
std::optional<nu::array_view> with_unit_axes(const nu::array_view& v, const nu::shape_t& shape) {
    nu::shape_t kept_shape, kept_strides, wanted;
    for (std::size_t k = 0; k < v.shape.size(); ++k) {
        if (v.shape[k] != 1) {
            kept_shape.push_back(v.shape[k]);
            kept_strides.push_back(v.strides[k]);
        }
    }
    for (std::int64_t n : shape) {
        if (n != 1) wanted.push_back(n);
    }
    if (kept_shape != wanted) return std::nullopt;
    nu::array_view out = v;
    out.shape = shape;
    out.strides = nu::shape_t(shape.size(), 0);
    for (std::size_t k = 0, j = 0; k < shape.size(); ++k) {
        if (shape[k] != 1) out.strides[k] = kept_strides[j++];
    }
    return out;
}

// `v` as the other side of a copy with the device array `dev`: the same dtype (else a
// TypeError) and, by with_unit_axes, the same shape but for 1s (else a ValueError).
// `what` names it in the messages ("ary", "source").
nu::array_view copy_partner(const nu::array_view& v, const nu::array_view& dev, const std::string& api,
                            const char* what) {
    if (v.type != dev.type) {
        throw nu::type_error(api + "(): " + what + " has dtype " + nu::dtype_name(v.type) +
                             ", the device array has " + nu::dtype_name(dev.type));
    }
    if (v.shape == dev.shape) return v;
    auto fitted = with_unit_axes(v, dev.shape);
    if (!fitted) {
        throw nu::value_error(api + "(): " + what + " has shape " + shape_repr(v.shape) +
                              ", the device array has " + shape_repr(dev.shape));
    }
    return std::move(*fitted);
}

// A shape as NumPy prints it in its messages: (2,3), (5,).
std::string numpy_shape(const nu::shape_t& shape) {
    std::string out = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) out += (k ? "," : "") + std::to_string(shape[k]);
    return out + (shape.size() == 1 ? ",)" : ")");
}

// NumPy's assignment rule, `a[...] = value`: the value's shape less its extra leading 1s
// must broadcast to the target's; that shape, else NumPy's own error message.
nu::shape_t assignable_shape(const nu::shape_t& from, const nu::shape_t& to) {
    std::size_t lead = 0;
    while (from.size() - lead > to.size() && from[lead] == 1) ++lead;
    const nu::shape_t src(from.begin() + static_cast<std::ptrdiff_t>(lead), from.end());
    bool fits = src.size() <= to.size();
    for (std::size_t k = 1; fits && k <= src.size(); ++k) {
        const std::int64_t n = src[src.size() - k];
        fits = n == 1 || n == to[to.size() - k];
    }
    if (!fits) {
        throw nu::value_error("could not broadcast input array from shape " + numpy_shape(src) +
                              " into shape " + numpy_shape(to));
    }
    return src;
}

}  // namespace

void report_release_errors() {
    if (!nu::backend_available()) return;
    const std::string errors = nu::active_backend().take_release_errors();
    if (errors.empty()) return;
    // May run in a finalizer, perhaps while an exception propagates: keep that one.
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    const std::string text = "releasing device or pinned host memory failed: " + errors;
    if (PyErr_WarnEx(PyExc_RuntimeWarning, text.c_str(), 1) < 0) PyErr_WriteUnraisable(nullptr);
    PyErr_Restore(type, value, trace);
}

py::array copy_to_host(const nu::device_array& a, py::object ary, py::handle stream) {
    const nu::stream_ref s = as_stream(stream, "copy_to_host");
    if (!ary.is_none() && !py::isinstance<py::array>(ary)) {
        throw nu::type_error("copy_to_host(): ary must be a NumPy array (got " +
                             repr_of(py::type::handle_of(ary)) + ")");
    }
    const py::array out = ary.is_none() ? empty_host_like(a.view(), true) : py::reinterpret_borrow<py::array>(ary);
    if (!out.writeable()) throw nu::value_error("copy_to_host(): ary is read-only");
    std::vector<py::object> keep;  // a byte-swapped `ary` is written through a native copy
    const py::array target = native_order(out, &keep, true);
    const nu::array_view host = copy_partner(host_view(target, "copy_to_host()"), a.view(), "copy_to_host", "ary");
    {
        release_gil nogil;
        a.copy_to_host(host, s);
    }
    return out;
}

namespace {

// a[...] = scalar on a contiguous array as one cuMemsetD32Async, no host copy, where the
// element's bytes repeat every 4 bytes (1-, 2- and 4-byte types; wider ones whose 4-byte
// words are all equal, zero above all) and the span is whole aligned words. False when
// the fill needs the general path.
bool fill_by_memset(const nu::device_array& a, const py::array& value) {
    const nu::array_view& v = a.view();
    const std::size_t size = nu::itemsize(v.type);
    const std::size_t bytes = static_cast<std::size_t>(v.size()) * size;
    if (bytes == 0 || !v.is_c_contiguous() || reinterpret_cast<std::uintptr_t>(v.data) % 4 != 0 ||
        bytes % 4 != 0 || static_cast<std::size_t>(value.itemsize()) != size || (size < 4 && 4 % size != 0) ||
        (size > 4 && size % 4 != 0)) {
        return false;
    }
    unsigned char pattern[4];
    const auto* element = static_cast<const unsigned char*>(value.data());
    for (std::size_t i = 0; i < 4; ++i) pattern[i] = element[i % size];
    for (std::size_t i = 4; i < size; ++i) {
        if (element[i] != pattern[i % 4]) return false;
    }
    std::uint32_t word = 0;
    std::memcpy(&word, pattern, 4);
    nu::active_backend().fill32(v.data, word, bytes / 4, nullptr);  // the legacy stream, as the copy
    return true;
}

}  // namespace

void copy_to_device(const nu::device_array& a, py::handle src, py::handle stream,
                    const char* api) {
    const nu::stream_ref s = as_stream(stream, api);
    const nu::array_view& dst = a.view();
    if (auto dev = device_operand(src, api)) {
        nu::array_view from = copy_partner(dev->view(), dst, api, "source");
        if (from.shape == dev->view().shape) {
            a.copy_from_device(*dev, s);
        } else {
            a.copy_from_device(nu::device_array(dev->buffer(), std::move(from), dev->stream()), s);
        }
        return;
    }
    py::module_ np = py::module_::import("numpy");
    std::vector<py::object> keep;
    py::array arr = native_order(np.attr("asarray")(src), &keep, false);
    const nu::array_view host = copy_partner(host_view(arr, (std::string(api) + "()").c_str()), dst, api, "source");
    release_gil nogil;
    a.copy_from_host(host, s);
}

// The stream the interface export names: that of the last write (f(out=a, stream=s2) on
// an array made on s1 names s2), else the array's own.
nu::stream_handle interface_stream(const nu::device_array& a) {
    const nu::stream_ref writer = a.buffer() ? a.buffer()->last_writer() : nullptr;
    const nu::stream_ref& named = writer ? writer : a.stream();
    return named ? named->handle : nullptr;
}

py::dict cuda_array_interface(const nu::device_array& a) {
    const nu::array_view& v = a.view();
    py::dict d;
    d["shape"] = to_tuple(v.shape);
    d["strides"] = v.is_c_contiguous() ? py::object(py::none()) : py::object(to_tuple(v.strides));
    d["typestr"] = nu::typestr(v.type);
    if (nu::is_record(v.type)) {
        // The fields, when NumPy can list them: it has no descr for fields out of offset order.
        py::object descr = py::getattr(to_numpy_dtype(v.type), "descr", py::none());
        if (!descr.is_none()) d["descr"] = descr;
    }
    d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(v.size() ? v.data : nullptr), false);
    d["version"] = 3;
    // Numba's entry: the handle of the stream the array's work is on, None for the
    // default (legacy) stream, which orders itself with every blocking stream anyway.
    const nu::stream_handle h = interface_stream(a);
    d["stream"] = h ? py::object(py::int_(reinterpret_cast<std::uintptr_t>(h))) : py::object(py::none());
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
    if (nu::is_record(v.type)) {
        throw nu::type_error(std::string("__dlpack__(): DLPack has no record dtypes (got ") +
                             nu::dtype_name(v.type) + ")");
    }
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
                         : kind == 'f' ? kDLFloat : kind == 'V' ? kDLBfloat : kDLComplex;
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
        .def_property_readonly("stream", [](const nu::device_array& a) -> py::object {
            // 0 for the default stream, as Numba's arrays say it (code tests `arr.stream`
            // for truth and passes it on as stream=); otherwise the Stream.
            if (a.stream() == nu::default_stream()) return py::int_(0);
            return py::cast(py_stream{a.stream()});
        })
        .def_property_readonly("device_pointer", [](const nu::device_array& a) {
            return reinterpret_cast<std::uintptr_t>(a.view().data);
        })
        .def_property_readonly("alloc_size", [](const nu::device_array& a) {
            return a.buffer() ? a.buffer()->bytes() : std::size_t{0};
        }, "Bytes of the allocation behind this array (views share their base's).")
        .def_property_readonly("_alloc_pointer", [](const nu::device_array& a) {
            return reinterpret_cast<std::uintptr_t>(a.buffer() ? a.buffer()->data() : nullptr);
        })
        .def("bind", [](const nu::device_array& a, py::handle stream) {
            nu::stream_ref s = as_stream(stream, "bind");
            nu::live_handle(s, "bind");
            return nu::device_array(a.buffer(), a.view(), std::move(s));
        }, py::arg("stream") = 0, "The same array, with `stream` as its default stream.")
        .def("_with_layout", [](const nu::device_array& a, py::handle shape, py::handle strides,
                                std::int64_t offset, py::handle dtype, const char* api) {
            // A view of the same allocation; refused when it would reach outside it.
            nu::array_view v;
            v.type = as_dtype(dtype, api);
            v.shape = as_shape(shape, api);
            v.strides = as_shape(strides, api, "strides");
            nu::checked_size(v.shape, api);
            NU_ASSERT(v.strides.size() == v.shape.size());
            if (v.size() > 0) {
                std::int64_t lo = 0, hi = 0;
                v.byte_extent(&lo, &hi);
                // In 128 bits: a huge offset or stride must not wrap around the address space.
                const auto base = static_cast<__int128>(reinterpret_cast<std::uintptr_t>(a.buffer()->data()));
                const __int128 first =
                    static_cast<__int128>(reinterpret_cast<std::uintptr_t>(a.view().data)) + offset + lo;
                if (first < base || first + (hi - lo) > base + static_cast<__int128>(a.buffer()->bytes())) {
                    throw nu::value_error(std::string(api) + "(): the view would reach outside the array's memory");
                }
            }
            v.data = a.view().data ? static_cast<char*>(a.view().data) + offset : nullptr;
            return nu::device_array(a.buffer(), std::move(v), a.stream());
        })
        .def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
        .def_property_readonly("_interface_stream", [](const nu::device_array& a) {
            return reinterpret_cast<std::uintptr_t>(interface_stream(a));
        }, "Handle of the stream __cuda_array_interface__ names (also under emulation, where "
           "the export says None).")
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
            const nu::device_array v = a.index(as_index(key));
            if (auto dev = device_operand(value, "__setitem__")) {
                // Device values broadcast and convert on the device, like NumPy's assignment.
                const nu::array_view& from = dev->view();
                const nu::shape_t shape = assignable_shape(from.shape, v.view().shape);
                const std::size_t lead = from.shape.size() - shape.size();  // dropped 1s
                const nu::shape_t strides(from.strides.begin() + static_cast<std::ptrdiff_t>(lead),
                                          from.strides.end());
                nu::array_view widened = from;
                widened.shape = v.view().shape;
                widened.strides = nu::broadcast_strides(shape, strides, v.view().shape);
                nu::cast_into(v, nu::device_array(dev->buffer(), widened, dev->stream()), v.stream());
                return;
            }
            // Host values broadcast and cast like NumPy's assignment (0-d stays 0-d).
            py::module_ np = py::module_::import("numpy");
            py::array host = np.attr("asarray")(value, to_numpy_dtype(v.view().type));
            const nu::shape_t given(host.shape(), host.shape() + host.ndim());
            const nu::shape_t shape = assignable_shape(given, v.view().shape);
            if (host.size() == 1 && fill_by_memset(v, host)) return;
            py::object src = np.attr("array")(
                np.attr("broadcast_to")(host.attr("reshape")(to_tuple(shape)), to_tuple(v.view().shape)),
                py::arg("order") = "C");
            copy_to_device(v, src, py::int_(0), "__setitem__");
        })
        .def("reshape", [](const nu::device_array& a, py::args shape, const std::string& order) {
            py::object s = shape.size() == 1 ? py::object(shape[0]) : py::object(shape);
            return a.reshape(as_shape(s, "reshape"), reshape_order(a, order, "reshape"));
        }, py::arg("order") = "C")
        .def("ravel", [](const nu::device_array& a, const std::string& order) {
            if (order == "K") return ravel_memory_order(a);
            return a.ravel(reshape_order(a, order, "ravel"));
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

    m.def("like_strides", [](py::handle shape, py::handle strides, py::handle dtype) {
        nu::array_view v;
        v.shape = as_shape(shape, "like_strides");
        v.strides = as_shape(strides, "like_strides", "strides");
        v.type = as_dtype(dtype, "like_strides");
        return to_tuple(nu::k_order_strides(v));
    }, "The strides np.empty_like gives an array of this shape, strides and dtype.");

    m.def("to_device", [](const py::array& host, py::handle stream) {
        const nu::stream_ref s = as_stream(stream, "to_device");
        nu::array_view hv = host_view(host, "to_device()");
        const char order = hv.is_f_contiguous() && !hv.is_c_contiguous() ? 'F' : 'C';
        nu::device_array d = nu::device_array::empty(hv.shape, hv.type, order, std::nullopt, s, "to_device");
        release_gil nogil;
        d.copy_from_host(hv, s);
        return d;
    }, py::arg("ary"), py::arg("stream") = 0);

    m.def("copy_into", [](const nu::device_array& dst, py::handle src, py::handle stream) {
        copy_to_device(dst, src, stream, "to_device");
    }, py::arg("dst"), py::arg("src"), py::arg("stream") = 0);

    m.def("as_cuda_array", [](py::handle obj, bool sync, const char* api) {
        if (is_device_array(obj)) return obj.cast<nu::device_array>();
        // The view takes the producer's stream as its own (Numba's rule): its copies and
        // launches with stream=0 are ordered after the producer's work.
        return import_cuda_array(obj, api, sync, true);
    }, py::arg("obj"), py::arg("sync") = true, py::arg("api") = "as_cuda_array");
    m.def("set_cai_sync", [](bool on) { g_cai_sync = on; });
    m.def("cai_sync", [] { return g_cai_sync; });

    m.def("pinned_array", [](py::handle shape, py::handle dtype, const std::string& order) {
        const nu::shape_t sh = as_shape(shape, "pinned_array");
        const nu::dtype t = as_dtype(dtype, "pinned_array");
        const char o = as_order(order, "pinned_array");
        const std::int64_t count = nu::checked_size(sh, "pinned_array");
        nu::backend& b = nu::active_backend();
        void* ptr = b.allocate_pinned(static_cast<std::size_t>(count) * nu::itemsize(t));
        py::capsule owner(ptr, [](void* p) {
            nu::active_backend().release_pinned(p);
            report_release_errors();  // a finalizer: a warning, never silence
        });
        std::vector<py::ssize_t> shp(sh.begin(), sh.end());
        const nu::shape_t st = nu::contiguous_strides(sh, nu::itemsize(t), o);
        std::vector<py::ssize_t> strides(st.begin(), st.end());
        return py::array(to_numpy_dtype(t), shp, strides, ptr, owner);
    }, py::arg("shape"), py::arg("dtype"), py::arg("order") = "C");
}


}  // namespace nu::bindings
