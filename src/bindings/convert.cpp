// src/bindings/convert.cpp: Python objects <-> engine values (streams, dtypes, shapes)
#include "bindings/common.h"
#include "runtime/pinned_results.h"


namespace nu::bindings {


std::string repr_of(py::handle obj) { return py::repr(obj).cast<std::string>(); }

bool is_integer(py::handle obj) {
    if (PyLong_CheckExact(obj.ptr())) return true;
    if (py::isinstance<py::bool_>(obj) || !PyIndex_Check(obj.ptr())) return false;
    // ndarray has __index__, but only a 0-d integer array converts: np.array([2, 3]) is a
    // sequence (a shape), not an integer that overflows.
    if (py::isinstance<py::array>(obj)) {
        const auto a = py::reinterpret_borrow<py::array>(obj);
        const char kind = a.dtype().kind();
        return a.ndim() == 0 && (kind == 'i' || kind == 'u');
    }
    return true;
}

// `stream=` everywhere: 0/None, a Stream of ours, a raw handle, or another library's
// stream object (CuPy's `.ptr`, Numba's `.handle`).
bool to_int64(py::handle obj, std::int64_t* out) {
    PyObject* index = PyNumber_Index(obj.ptr());
    if (index == nullptr) {
        PyErr_Clear();
        return false;
    }
    int overflow = 0;
    *out = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (PyErr_Occurred()) PyErr_Clear();
    return overflow == 0;
}

nu::stream_ref as_stream(py::handle obj, const char* api) {
    // The common cases first, with plain type checks: pybind11's isinstance<T> looks the
    // type up by typeid on every call.
    if (obj.is_none() || (PyLong_CheckExact(obj.ptr()) && PyLong_AsLongLong(obj.ptr()) == 0)) {
        return nu::default_stream();
    }
    static PyTypeObject* stream_type = reinterpret_cast<PyTypeObject*>(py::type::of<py_stream>().ptr());
    if (PyObject_TypeCheck(obj.ptr(), stream_type)) return engine_object<py_stream>(obj).ref;
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
    std::int64_t signed_value = 0;
    if (!to_int64(handle, &signed_value) || signed_value < 0) {
        throw nu::value_error(std::string(api) + "(): stream handle must be a non-negative pointer "
                              "value (got " + repr_of(handle) + ")");
    }
    const auto value = static_cast<std::uintptr_t>(signed_value);
    // 1 and 2 are the CAI spellings of the legacy and per-thread default streams.
    if (value == 0 || value == 1) return nu::default_stream();
    if (value == 2) return nu::per_thread_default_stream();
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
    return dtype_of(dt, what.c_str());
}

// ml_dtypes.bfloat16's NumPy type number (user dtypes get one at registration), or -1
// while ml_dtypes is not imported: a bfloat16 array cannot exist before it is.
int bfloat16_type_num() {
    static int num = -1;
    if (num < 0) {
        PyObject* mod = PyImport_GetModule(py::str("ml_dtypes").ptr());
        if (mod == nullptr) {
            PyErr_Clear();
            return -1;
        }
        py::object ml = py::reinterpret_steal<py::object>(mod);
        num = py::dtype::from_args(ml.attr("bfloat16")).num();
    }
    return num;
}

namespace {

// The NumPy dtype of each registered record id (index: id - k_first_record). Leaked, as the
// other dtype tables: they live as long as the module.
std::vector<py::dtype>& record_dtypes() {
    static auto* table = new std::vector<py::dtype>();
    return *table;
}

nu::dtype record_id(std::size_t k) { return static_cast<nu::dtype>(nu::k_first_record + static_cast<int>(k)); }

// A structured dtype: registered on first use, so dtypes NumPy calls equal (same fields,
// offsets and itemsize) and equally aligned share an id. Every launch with a host record array comes here:
// the same dtype object (the common case) is found by identity, an equal one by NumPy's
// C-level comparison; only a new layout pays for its description (repr() runs Python,
// ~45 us per call measured on this 2-core machine).
nu::dtype record_of(const py::dtype& dt, const char* what) {
    auto& table = record_dtypes();
    for (std::size_t k = 0; k < table.size(); ++k) {
        if (table[k].ptr() == dt.ptr()) return record_id(k);
    }
    // NumPy calls an aligned struct equal to a packed one of the same layout; Numba's
    // record types differ by that flag (so do their kernels' signatures): so do our ids.
    const bool aligned = py::bool_(dt.attr("isalignedstruct"));
    for (std::size_t k = 0; k < table.size(); ++k) {
        const int equal = PyObject_RichCompareBool(dt.ptr(), table[k].ptr(), Py_EQ);
        if (equal < 0) PyErr_Clear();
        if (equal == 1 && py::bool_(table[k].attr("isalignedstruct")) == aligned) return record_id(k);
    }
    const std::string text = py::str(dt).cast<std::string>();
    if (py::bool_(dt.attr("hasobject"))) {
        throw nu::type_error(std::string(what) + ": record dtype " + text +
                             " has Python object fields, which device memory cannot hold");
    }
    if (!py::bool_(dt.attr("isnative"))) {
        throw nu::type_error(std::string(what) + ": record dtype " + text +
                             " has fields in non-native byte order (convert with "
                             "dtype.newbyteorder('=') first)");
    }
    const nu::dtype t = nu::record_dtype(repr_of(dt), dt.itemsize(), text);
    const std::size_t k = static_cast<std::size_t>(static_cast<int>(t) - nu::k_first_record);
    if (k == table.size()) table.push_back(dt);  // first use (the GIL orders these calls)
    return t;
}

// datetime64[unit] / timedelta64[unit]: registered on first use, keyed by typestr, so
// to_numpy_dtype gives back NumPy's dtype (with its unit) for results and outputs.
nu::dtype datetime_of(const py::dtype& dt, const char* what) {
    const std::string text = py::str(dt).cast<std::string>();
    const std::string ts = dt.attr("str").cast<std::string>();
    const bool generic = ts.find('[') == std::string::npos;
    if (dt.byteorder() == '>' || generic || dt.itemsize() != 8) {
        throw nu::type_error(std::string(what) + ": unsupported dtype '" + text +
                             "' (datetime64 and timedelta64 need a unit, as in datetime64[D], "
                             "and native byte order)");
    }
    auto& table = record_dtypes();
    for (std::size_t k = 0; k < table.size(); ++k) {
        if (table[k].ptr() == dt.ptr()) return record_id(k);
    }
    const nu::dtype t = nu::datetime_dtype(ts, text);
    const std::size_t k = static_cast<std::size_t>(static_cast<int>(t) - nu::k_first_record);
    if (k == table.size()) table.push_back(dt);
    return t;
}

// Fixed-width bytes ('S') and str ('U', UTF-32 code units): registered on first use,
// keyed by typestr, as datetimes are.
nu::dtype chars_of(const py::dtype& dt, const char* what) {
    const std::string text = py::str(dt).cast<std::string>();
    if (dt.itemsize() == 0 || dt.byteorder() == '>') {
        throw nu::type_error(std::string(what) + ": unsupported dtype '" + text +
                             "' (fixed-width bytes and str dtypes need a width, as in S12 or "
                             "U12, and native byte order)");
    }
    auto& table = record_dtypes();
    for (std::size_t k = 0; k < table.size(); ++k) {
        if (table[k].ptr() == dt.ptr()) return record_id(k);
    }
    const nu::dtype t = nu::chars_dtype(dt.attr("str").cast<std::string>(), dt.itemsize(), text);
    const std::size_t k = static_cast<std::size_t>(static_cast<int>(t) - nu::k_first_record);
    if (k == table.size()) table.push_back(dt);
    return t;
}

}  // namespace

nu::dtype dtype_of(const py::dtype& dt, const char* what) {
    const int code = dtype_from_type_num(dt.num());
    const char order = dt.byteorder();
    if (code >= 0 && order != '>' && order != '<') return static_cast<nu::dtype>(code);
    if (dt.kind() == 'V' && dt.has_fields()) return record_of(dt, what);
    if (dt.kind() == 'M' || dt.kind() == 'm') return datetime_of(dt, what);
    if (dt.kind() == 'S' || dt.kind() == 'U') return chars_of(dt, what);
    if (dt.kind() == 'V') {  // only bfloat16 among the void dtypes: typestr '<V2' is not enough
        throw nu::type_error(std::string(what) + ": unsupported dtype '" +
                             py::str(dt).cast<std::string>() + "' (supported: bool, int8..int64, "
                             "uint8..uint64, float16, float32, float64, complex64, complex128, "
                             "bfloat16 in native byte order)");
    }
    return nu::dtype_from_typestr(dt.attr("str").cast<std::string>(), what);
}

nu::dtype loop_dtype(const std::string& typestr) {
    const nu::dtype t = typestr_dtype(typestr, "add_loop");
    if (nu::is_chars(t)) {
        throw nu::type_error("add_loop: unsupported dtype '" + typestr +
                             "' (ufunc and gufunc loops take bool, integers, floats, complex, "
                             "datetime64 and timedelta64; fixed-width bytes and str only kernels)");
    }
    return t;
}

nu::dtype typestr_dtype(const std::string& typestr, const char* what) {
    if (typestr.size() > 2 && (typestr[1] == 'M' || typestr[1] == 'm' || typestr[1] == 'S' || typestr[1] == 'U')) {
        py::dtype dt;
        try {
            dt = py::dtype(typestr);
        } catch (py::error_already_set&) {
            throw nu::type_error(std::string(what) + ": unsupported dtype '" + typestr + "'");
        }
        return dtype_of(dt, what);
    }
    return nu::dtype_from_typestr(typestr, what);
}

py::dtype to_numpy_dtype(nu::dtype t) {
    if (nu::is_record(t)) {
        return record_dtypes().at(static_cast<std::size_t>(static_cast<int>(t) - nu::k_first_record));
    }
    // Built once: dtype objects are immutable, and parsing a typestr per call shows up in
    // the ufunc call overhead. bfloat16 needs ml_dtypes, imported on first use.
    static const auto* cache = [] {
        auto* table = new std::vector<py::dtype>();
        for (int i = 0; i < nu::k_dtype_count; ++i) {
            const auto t = static_cast<nu::dtype>(i);
            table->push_back(t == nu::dtype::bfloat16 ? py::dtype() : py::dtype(nu::typestr(t)));
        }
        return table;
    }();
    if (t == nu::dtype::bfloat16) {
        static py::dtype* bf16 = nullptr;
        if (bf16 == nullptr) {
            py::object ml;
            try {
                ml = py::module_::import("ml_dtypes");
            } catch (py::error_already_set&) {
                throw nu::type_error("bfloat16 needs the ml_dtypes package (pip install ml_dtypes)");
            }
            bf16 = new py::dtype(py::dtype::from_args(ml.attr("bfloat16")));
        }
        return *bf16;
    }
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
        case 23: return static_cast<int>(nu::dtype::float16);
        default:
            return num >= 256 && num == bfloat16_type_num() ? static_cast<int>(nu::dtype::bfloat16) : -1;
    }
}

nu::shape_t as_shape(py::handle obj, const char* api, const char* what) {
    nu::shape_t shape;
    auto one = [&](py::handle item) {
        if (!is_integer(item)) {
            throw nu::type_error(std::string(api) + "(): " + what +
                                 " entries must be integers (got " + repr_of(item) + ")");
        }
        std::int64_t value = 0;
        if (!to_int64(item, &value)) {  // NumPy: "Maximum allowed dimension exceeded"
            throw nu::value_error(std::string(api) + "(): " + what + " entry " + repr_of(item) +
                                  " exceeds the maximum allowed dimension (int64)");
        }
        shape.push_back(value);
    };
    // A NumPy array is a sequence only when 1-d: iterating a 0-d one (np.array(1.5)) raises
    // IndexError, and the rows of a 2-d one are not integers.
    const bool array = py::isinstance<py::array>(obj);
    if (is_integer(obj)) {
        one(obj);
    } else if (array ? py::reinterpret_borrow<py::array>(obj).ndim() == 1
                     : py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
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

py::array new_host_array(const nu::shape_t& shape, nu::dtype t, char order, bool dma_target) {
    // Straight to PyArray_NewFromDescr (which steals the descriptor): py::array's
    // constructor copies shape and strides into heap vectors first.
    static_assert(sizeof(Py_intptr_t) == sizeof(std::int64_t), "64-bit platforms only");
    const nu::shape_t strides = nu::contiguous_strides(shape, nu::itemsize(t), order);
    auto& api = py::detail::npy_api::get();
    // A result the device fills by DMA: page-locked memory from the cache when it is large
    // (runtime/pinned_results.h), handed back when NumPy frees the array.
    void* data = nullptr;
    std::size_t granted = 0;
    if (dma_target) {
        std::size_t bytes = nu::itemsize(t);
        for (std::int64_t d : shape) bytes *= static_cast<std::size_t>(d);
        data = nu::acquire_pinned_result(bytes, &granted);
    }
    py::object descr = to_numpy_dtype(t);
    PyObject* arr = api.PyArray_NewFromDescr_(
        api.PyArray_Type_, descr.release().ptr(), static_cast<int>(shape.size()),
        reinterpret_cast<const Py_intptr_t*>(shape.data()), reinterpret_cast<const Py_intptr_t*>(strides.data()),
        data, py::detail::npy_api::NPY_ARRAY_WRITEABLE_, nullptr);
    if (arr == nullptr) {
        if (data != nullptr) nu::release_pinned_result(data, granted);
        throw py::error_already_set();
    }
    py::array result = py::reinterpret_steal<py::array>(arr);
    if (data != nullptr) {
        // The capsule's context carries the block's size.
        PyObject* owner = PyCapsule_New(data, "numbacuda_ufunc.pinned_result", [](PyObject* cap) {
            void* ptr = PyCapsule_GetPointer(cap, "numbacuda_ufunc.pinned_result");
            nu::release_pinned_result(ptr, reinterpret_cast<std::size_t>(PyCapsule_GetContext(cap)));
        });
        if (owner == nullptr) {
            nu::release_pinned_result(data, granted);  // the array never owned it
            throw py::error_already_set();
        }
        PyCapsule_SetContext(owner, reinterpret_cast<void*>(granted));
        if (api.PyArray_SetBaseObject_(arr, owner) < 0) throw py::error_already_set();  // steals owner
    }
    return result;
}


py::array empty_host_like(const nu::array_view& v, bool dma_target) {
    const bool fortran = v.is_f_contiguous() && !v.is_c_contiguous();
    return new_host_array(v.shape, v.type, fortran ? 'F' : 'C', dma_target);
}


}  // namespace nu::bindings
