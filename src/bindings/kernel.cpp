// src/bindings/kernel.cpp: @cuda.jit kernels: kernel[grid, block, stream, shared](*args)
#include "bindings/common.h"

#include "dispatch/jit_kernel.h"

namespace nu::bindings {
namespace {

// `kernel[...]`: the launch configuration, bound to its kernel; calling it launches.
struct kernel_launcher {
    std::shared_ptr<nu::jit_kernel> kernel;
    py::object owner;  // the Python Kernel: its _resolve() translates new specializations
    nu::launch_shape shape;
    nu::stream_ref stream;
    py::object stream_object;  // the stream as given, for ArgHint.to_device(retr, stream)
    py::object callbacks;  // Numba's pre_launch_callbacks: a list made on first access
};

// What one launch's argument conversion produces besides the arguments: objects kept
// alive until the launch returns, and the callables custom ArgHints ask to run after it.
struct launch_context {
    const nu::jit_kernel& kernel;
    py::handle stream;
    std::vector<py::object> keep;
    py::list retr;
};

// Blocks per grid or threads per block: an int or a tuple of 1 to 3 ints. The messages
// carry Numba's wording ("griddim must be a sequence of ..."), which users search for.
void parse_dims(const std::string& api, py::handle obj, const char* what, const char* numba_name,
                bool allow_zero, unsigned (&out)[3]) {
    out[0] = out[1] = out[2] = 1;
    const bool sequence = py::isinstance<py::tuple>(obj) || py::isinstance<py::list>(obj);
    auto as_list = [&] { return sequence ? repr_of(py::list(py::reinterpret_borrow<py::object>(obj))) : "[" + repr_of(obj) + "]"; };
    auto one = [&](py::handle v, int k) {
        std::int64_t n = 0;
        if (!is_integer(v)) {
            throw nu::type_error(api + ": " + numba_name + " must be a sequence of integers, got " + as_list() +
                                 " (" + what + ": an int or a tuple of 1 to 3 ints)");
        }
        const bool fits = to_int64(v, &n);
        if (fits && n < (allow_zero ? 0 : 1)) {
            throw nu::value_error(api + ": " + what + " must be " + (allow_zero ? "non-negative" : "positive") +
                                  " (got " + repr_of(obj) + ")");
        }
        if (!fits || n > 0xffffffffLL) {  // the device's own limits are checked at launch
            throw nu::value_error(api + ": " + what + " " + repr_of(v) +
                                  " is too large: a launch dimension is at most 4294967295 (got " +
                                  repr_of(obj) + ")");
        }
        out[k] = static_cast<unsigned>(n);
    };
    if (sequence) {
        const py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
        if (seq.size() < 1 || seq.size() > 3) {
            throw nu::value_error(api + ": " + numba_name + " must be a sequence of 1, 2 or 3 integers, got " +
                                  as_list() + " (" + what + ")");
        }
        for (std::size_t k = 0; k < seq.size(); ++k) one(seq[k], static_cast<int>(k));
        return;
    }
    one(obj, 0);
}

// Numba's launch warnings (numbacuda_ufunc/config.py sets them): a grid of fewer
// than 128 blocks, and host arrays a launch copies.
bool g_warn_low_occupancy = true;
bool g_warn_implicit_copy = true;

void performance_warning(const std::string& message) {
    static PyObject* category =
        py::object(py::module_::import("numbacuda_ufunc.errors").attr("NumbaPerformanceWarning")).release().ptr();
    // Level 1: attributed to the Python line that configured or launched the kernel.
    if (PyErr_WarnEx(category, message.c_str(), 1) < 0) throw py::error_already_set();
}

// Numba's heuristic: a grid of fewer than 128 blocks leaves most GPUs idle (a fixed
// number, as in Numba, not one scaled by the multiprocessors: the same launch warns or
// not on every device).
void check_occupancy(const nu::launch_shape& shape) {
    constexpr long long min_blocks = 128;
    const long long blocks = 1LL * shape.grid[0] * shape.grid[1] * shape.grid[2];
    if (blocks < min_blocks) {
        performance_warning("Grid size " + std::to_string(blocks) +
                            " will likely result in GPU under-utilization due to low occupancy.");
    }
}

}  // namespace

void warn_low_occupancy(std::int64_t blocks) {
    if (g_warn_low_occupancy && blocks > 0) {
        nu::launch_shape shape{};
        shape.grid[0] = static_cast<unsigned>(std::min<std::int64_t>(blocks, 1 << 30));
        shape.grid[1] = shape.grid[2] = 1;
        check_occupancy(shape);
    }
}

namespace {

// Numba's `extensions` (a list on the Python kernel, which may be appended to at any
// time): when it holds any, the launch goes through Python (Kernel._extension_launch) to
// let them convert the arguments; kernels without extensions keep this C++ path.
py::object with_extensions(py::handle self, kernel_launcher&& l) {
    static PyObject* name = PyUnicode_InternFromString("extensions");
    PyObject* ext = PyObject_GetAttr(self.ptr(), name);
    if (ext == nullptr) {
        PyErr_Clear();
        return py::cast(std::move(l));
    }
    const bool any = PyList_Check(ext) ? PyList_GET_SIZE(ext) > 0 : PyObject_IsTrue(ext) == 1;
    Py_DECREF(ext);
    py::object launch = py::cast(std::move(l));
    if (!any) return launch;
    return py::reinterpret_borrow<py::object>(self).attr("_extension_launch")(launch);
}

py::object configure(py::object self, py::handle config) {
    nu::jit_kernel& k = engine_object<nu::jit_kernel>(self);
    const std::string api = "kernel '" + k.name() + "'";
    if (!py::isinstance<py::tuple>(config) || py::len(config) < 2 || py::len(config) > 4) {
        throw nu::value_error(api + ": launch with kernel[blocks_per_grid, threads_per_block] or "
                              "kernel[blocks_per_grid, threads_per_block, stream, dynamic_shared_bytes] (got [" +
                              repr_of(config) + "])");
    }
    const py::tuple c = py::reinterpret_borrow<py::tuple>(config);
    kernel_launcher l;
    l.kernel = py::cast<std::shared_ptr<nu::jit_kernel>>(self);
    l.owner = self;
    parse_dims(api, c[0], "blocks per grid", "griddim", true, l.shape.grid);
    parse_dims(api, c[1], "threads per block", "blockdim", false, l.shape.block);
    l.stream_object = c.size() > 2 ? py::object(c[2]) : py::object(py::int_(0));
    l.stream = as_stream(l.stream_object, api.c_str());
    if (c.size() > 3) {
        std::int64_t bytes = 0;
        if (!is_integer(c[3])) {
            throw nu::type_error(api + ": dynamic shared memory must be an integer number of bytes (got " +
                                 repr_of(c[3]) + ")");
        }
        if (!to_int64(c[3], &bytes) || bytes < 0 || bytes > 0x7fffffffLL) {
            throw nu::value_error(api + ": dynamic shared memory must be 0 to 2147483647 bytes (got " +
                                  repr_of(c[3]) + ")");
        }
        l.shape.dynamic_shared = static_cast<unsigned>(bytes);
    }
    if (g_warn_low_occupancy) check_occupancy(l.shape);
    return with_extensions(self, std::move(l));
}

bool is_numpy_scalar(py::handle obj) {
    static PyObject* generic = py::object(py::module_::import("numpy").attr("generic")).release().ptr();
    return PyObject_IsInstance(obj.ptr(), generic) == 1;
}

// kernel.forall(n) without a block size: the engine sizes the blocks at launch.
py::object configure_forall(py::object self, std::int64_t tasks, py::handle stream, std::int64_t shared) {
    nu::jit_kernel& k = engine_object<nu::jit_kernel>(self);
    const std::string api = "kernel '" + k.name() + "'.forall()";
    if (shared < 0 || shared > 0x7fffffffLL) {
        throw nu::value_error(api + ": sharedmem must be a non-negative number of bytes (got " +
                              std::to_string(shared) + ")");
    }
    kernel_launcher l;
    l.kernel = py::cast<std::shared_ptr<nu::jit_kernel>>(self);
    l.owner = self;
    l.shape.forall_tasks = tasks;
    l.shape.dynamic_shared = static_cast<unsigned>(shared);
    l.stream_object = py::reinterpret_borrow<py::object>(stream);
    l.stream = as_stream(stream, api.c_str());
    return with_extensions(self, std::move(l));
}

[[noreturn]] void bad_argument(const std::string& api, std::size_t k, const std::string& why) {
    throw nu::type_error(api + ": argument " + std::to_string(k + 1) + " " + why);
}

// One argument as the kernel sees it, and its two bytes of the specialization key.
nu::kernel_arg kernel_argument(launch_context& ctx, py::handle arg, std::size_t k, std::string& key) {
    const nu::jit_kernel& kernel = ctx.kernel;
    std::vector<py::object>& keep = ctx.keep;
    const auto api_text = [&] { return "kernel '" + kernel.name() + "'"; };  // only for messages
    nu::kernel_arg a;
    auto scalar = [&](nu::scalar_value v) {
        a.value = v;
        key += static_cast<char>(v.type);
        key += static_cast<char>(0xff);
        return a;
    };
    if (PyBool_Check(arg.ptr())) return scalar(nu::make_scalar(arg.ptr() == Py_True));
    if (PyLong_Check(arg.ptr())) {
        std::int64_t v = 0;
        if (!to_int64(arg, &v)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_OverflowError, (api_text() + ": argument " + std::to_string(k + 1) + ": Python integer " +
                                                  repr_of(arg) + " does not fit in int64").c_str());
            throw py::error_already_set();
        }
        return scalar(nu::make_scalar(v));
    }
    if (PyFloat_Check(arg.ptr())) {  // np.float64 too: the same type
        return scalar(nu::make_scalar(PyFloat_AsDouble(arg.ptr())));
    }
    if (PyComplex_Check(arg.ptr())) {
        return scalar(nu::make_scalar(PyComplex_RealAsDouble(arg.ptr()), PyComplex_ImagAsDouble(arg.ptr())));
    }
    const bool ndarray = is_host_ndarray(arg);
    if (!ndarray && is_device_array(arg)) {
        a.is_array = true;
        a.view = engine_object<nu::device_array>(arg).view();  // alive: `args` holds it
    } else if (!ndarray && has_cai(arg)) {
        nu::device_array d = import_cuda_array(arg, (api_text() + ": argument " + std::to_string(k + 1)).c_str());
        a.is_array = true;
        a.view = d.view();
        keep.push_back(py::cast(std::move(d)));  // the import keeps the producer's memory alive
    } else if (ndarray || is_numpy_scalar(arg)) {
        py::array arr = py::reinterpret_borrow<py::array>(ndarray ? py::object(py::reinterpret_borrow<py::object>(arg))
                                                                  : py::module_::import("numpy").attr("asarray")(arg));
        // Byte-swapped: the kernel works on a native copy, written back after the launch.
        arr = native_order(arr, &keep, arr.writeable() && arr.ndim() > 0);
        a.view = host_view(arr, [&] { return api_text() + ": argument " + std::to_string(k + 1); });
        if (arr.ndim() == 0 && nu::is_record(a.view.type) && !nu::is_datetime(a.view.type)) {
            // A record (np.void from a structured array, or a 0-d structured array): passed
            // by reference, as Numba does, so the kernel's writes reach its memory.
            a.is_array = true;
            if (nu::active_backend().emulated()) {
                if (!arr.writeable()) {
                    arr = py::array(py::module_::import("numpy").attr("array")(arr));
                    a.view.data = arr.mutable_data();
                }
            } else {
                a.host = true;
                a.read_only = !arr.writeable();
            }
            keep.push_back(arr);
            key += static_cast<char>(a.view.type);
            key += static_cast<char>(0);
            return a;
        }
        if (arr.ndim() == 0 && !ndarray) {  // a NumPy scalar: passed by value
            nu::scalar_value v;
            v.type = a.view.type;
            std::memcpy(v.bytes, a.view.data, nu::itemsize(v.type));
            return scalar(v);
        }
        // Arrays of any ndim, 0-d too (the kernel reads and writes a[()], as in Numba).
        a.is_array = true;
        if (g_warn_implicit_copy) {  // copied on a GPU; the same warning when emulated
            performance_warning("Host array used in CUDA kernel will incur copy overhead to/from device.");
        }
        if (nu::active_backend().emulated()) {
            if (!arr.writeable()) {  // kernels may write: never into read-only host memory
                arr = py::array(py::module_::import("numpy").attr("array")(arr));
                a.view.data = arr.mutable_data();
            }
        } else {
            a.host = true;  // copied to the device and back, as Numba does
            a.read_only = !arr.writeable();  // ... but never written into read-only memory
        }
        if (arr.ptr() != arg.ptr()) keep.push_back(arr);  // a conversion made here
    } else if (py::hasattr(arg, "_nu_copy_direction")) {
        // cuda.In / cuda.Out / cuda.InOut around a host array: which copies a GPU launch
        // makes. Under emulation the kernel works on the array itself, so cuda.In gets a
        // private copy: its writes are lost there too, as on the GPU.
        const std::string direction = py::str(arg.attr("_nu_copy_direction"));
        if (direction == "custom") {
            // Another ArgHint subclass: its to_device(retr, stream) gives what the kernel
            // receives, and the callables it appends to retr run after the launch (Numba).
            py::object value = arg.attr("to_device")(ctx.retr, ctx.stream);
            if (py::hasattr(value, "_nu_copy_direction")) {
                bad_argument(api_text(), k, "is an ArgHint whose to_device() returned another hint (" +
                                                repr_of(value) + ")");
            }
            keep.push_back(value);
            return kernel_argument(ctx, value, k, key);
        }
        py::object value = arg.attr("value");
        if (direction == "in" && nu::active_backend().emulated() && is_host_ndarray(value)) {
            value = py::module_::import("numpy").attr("array")(value);
            keep.push_back(value);
        }
        nu::kernel_arg inner = kernel_argument(ctx, value, k, key);  // adds its key bytes
        if (inner.host) {
            if (direction == "in") inner.read_only = true;
            if (direction == "out") inner.copy_in = false;
        }
        return inner;
    } else {
        bad_argument(api_text(), k, "has unsupported type " + std::string(Py_TYPE(arg.ptr())->tp_name) +
                                 " (kernels take arrays, device arrays and numbers)");
    }
    key += static_cast<char>(a.view.type);
    key += static_cast<char>(a.view.ndim());
    return a;
}

// An enum.Enum member (IntEnum's too). Plain classes have `type` as their metaclass, so
// numbers and arrays cost one pointer compare here.
bool is_enum_member(py::handle arg) {
    PyTypeObject* cls = Py_TYPE(arg.ptr());
    if (Py_TYPE(reinterpret_cast<PyObject*>(cls)) == &PyType_Type) return false;
    static PyObject* enum_meta = py::object(py::module_::import("enum").attr("EnumMeta")).release().ptr();  // kept for good
    return PyObject_TypeCheck(reinterpret_cast<PyObject*>(cls), reinterpret_cast<PyTypeObject*>(enum_meta)) != 0;
}

// A namedtuple's field names (its class's _fields), empty for a plain tuple.
py::object namedtuple_fields(py::handle arg) {
    if (PyTuple_CheckExact(arg.ptr())) return py::none();
    py::object fields = py::getattr(py::type::handle_of(arg), "_fields", py::none());
    return py::isinstance<py::tuple>(fields) ? fields : py::none();
}

// A tuple argument (Numba's UniTuple/Tuple/NamedTuple, nested or not, empty or holding
// arrays): its items become arguments, in order; the key records the nesting and a
// namedtuple's field names, so (1, 2.0), ((1,), 2.0) and Point(1, 2.0) are different
// specializations. The translator rebuilds the tuple in the kernel
// (numbacuda_ufunc/kernels/kernel.py), so the launch itself only ever sees numbers and arrays.
void add_argument(launch_context& ctx, py::handle arg, std::size_t k, std::string& key,
                  std::vector<nu::kernel_arg>& out) {
    const nu::jit_kernel& kernel = ctx.kernel;
    if (is_enum_member(arg)) {
        // Passed as its value (Numba's EnumMember/IntEnumMember); the key records the class
        // (alive as long as the kernel's specialization for it), so members of two classes
        // are different specializations. The translator types the parameter as a member.
        py::object value = arg.attr("value");
        char marker = static_cast<char>(0xfb);  // an enum member: its class, then its value's bytes
        if (!(PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()) || PyComplex_Check(value.ptr()) ||
              is_numpy_scalar(value))) {
            // Values that are not numbers (tuples): the member's index in its class, which the
            // translator reads back (compiler/_enums.py; it refuses what it cannot type).
            value = py::type::handle_of(arg).attr("_member_names_").attr("index")(arg.attr("_name_"));
            marker = static_cast<char>(0xfa);
        }
        key += marker;
        const PyObject* cls = reinterpret_cast<PyObject*>(Py_TYPE(arg.ptr()));
        key.append(reinterpret_cast<const char*>(&cls), sizeof(cls));
        ctx.keep.push_back(value);
        out.push_back(kernel_argument(ctx, value, k, key));
        return;
    }
    if (!PyTuple_Check(arg.ptr())) {
        out.push_back(kernel_argument(ctx, arg, k, key));
        return;
    }
    const Py_ssize_t n = PyTuple_GET_SIZE(arg.ptr());
    if (n > 200) bad_argument("kernel '" + kernel.name() + "'", k, "is a tuple of " + std::to_string(n) +
                                                                  " items (at most 200)");
    key += static_cast<char>(0xfe);  // '(' : no dtype code or ndim is this large
    key += static_cast<char>(n);
    const py::object fields = namedtuple_fields(arg);
    if (!fields.is_none()) {
        key += static_cast<char>(0xfc);  // field names, each ended by a NUL
        for (py::handle f : fields) key += py::str(f).cast<std::string>() + '\0';
    }
    for (Py_ssize_t j = 0; j < n; ++j) add_argument(ctx, PyTuple_GET_ITEM(arg.ptr(), j), k, key, out);
    key += static_cast<char>(0xfd);  // ')'
}

// The (dtype, ndim) pairs _resolve reads, ndim -1 for scalars; a tuple argument is a list
// of its items' descriptions, a namedtuple {"fields": names, "items": that list}. `next`
// walks the flattened arguments.
py::object describe_argument(py::handle arg, const std::vector<nu::kernel_arg>& kargs, std::size_t& next) {
    if (is_enum_member(arg)) {  // {"enum": its class, "item": its value's (dtype, -1)}
        const nu::kernel_arg& a = kargs.at(next++);
        py::dict member;
        member["enum"] = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(arg.ptr())));
        member["item"] = py::make_tuple(to_numpy_dtype(a.value.type), -1);
        return std::move(member);
    }
    if (PyTuple_Check(arg.ptr())) {
        py::list items;
        for (py::handle item : py::reinterpret_borrow<py::tuple>(arg)) items.append(describe_argument(item, kargs, next));
        const py::object fields = namedtuple_fields(arg);
        if (fields.is_none()) return std::move(items);
        py::dict named;
        named["fields"] = fields;
        named["items"] = items;
        return std::move(named);
    }
    const nu::kernel_arg& a = kargs.at(next++);
    const nu::dtype t = a.is_array ? a.view.type : a.value.type;
    return py::make_tuple(to_numpy_dtype(t), a.is_array ? a.view.ndim() : -1);
}

// note_stream_use for every array in `arg`, a tuple's items included; `next` walks the
// flattened arguments as describe_argument does.
void note_argument_stream_uses(py::handle arg, const std::vector<nu::kernel_arg>& kargs, std::size_t& next,
                               const nu::stream_ref& stream) {
    if (PyTuple_Check(arg.ptr())) {
        for (py::handle item : py::reinterpret_borrow<py::tuple>(arg)) note_argument_stream_uses(item, kargs, next, stream);
        return;
    }
    const nu::kernel_arg& a = kargs.at(next++);
    if (a.is_array) note_stream_use(arg, stream, !a.read_only);
}

[[noreturn]] void pickling_error(const std::string& message) {
    PyErr_SetString(py::module_::import("pickle").attr("PicklingError").ptr(), message.c_str());
    throw py::error_already_set();
}

// A launch-config-sensitive kernel's calls are keyed by their configuration too.
void add_launch_config_key(const nu::launch_shape& shape, std::string& key) {
    key += static_cast<char>(0xf9);  // the configuration's bytes follow
    const auto add = [&key](const void* p, std::size_t n) { key.append(static_cast<const char*>(p), n); };
    add(shape.grid, sizeof(shape.grid));
    add(shape.block, sizeof(shape.block));
    add(&shape.dynamic_shared, sizeof(shape.dynamic_shared));
    add(&shape.forall_tasks, sizeof(shape.forall_tasks));
}

py::object call_kernel(py::handle self, py::tuple args, py::handle kwargs) {
    kernel_launcher& l = engine_object<kernel_launcher>(self);
    nu::jit_kernel& k = *l.kernel;
    if (kwargs && PyDict_Size(kwargs.ptr()) > 0) {
        throw nu::type_error("kernel '" + k.name() + "' takes no keyword arguments");
    }
    if (l.callbacks && PyList_GET_SIZE(l.callbacks.ptr()) > 0) {
        const py::list callbacks = py::reinterpret_borrow<py::list>(l.callbacks);
        for (py::handle callback : py::list(callbacks)) callback(l.owner, self);  // (kernel, launch_config)
    }
    launch_context ctx{k, l.stream_object, {}, py::list()};
    std::vector<nu::kernel_arg> kargs;
    kargs.reserve(args.size());
    std::string key;
    bool flattened = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        flattened = flattened || PyTuple_Check(args[i].ptr());  // (an enum member is one argument)
        add_argument(ctx, args[i], i, key, kargs);
    }
    bool keyed_by_config = k.launch_config_sensitive();
    if (keyed_by_config) add_launch_config_key(l.shape, key);
    int spec = k.find(key);
    if (spec < 0) {
        py::tuple descr(args.size());
        std::size_t next = 0;
        for (std::size_t i = 0; i < args.size(); ++i) descr[i] = describe_argument(args[i], kargs, next);
        // Translates (or picks a signature), with the launch configuration current
        // (numba.cuda.launchconfig) while it compiles.
        spec = l.owner.attr("_resolve_launch")(descr, self, args).cast<int>();
        if (!keyed_by_config && k.launch_config_sensitive()) add_launch_config_key(l.shape, key);
        k.bind_key(key, spec);
    }
    try {
        k.launch(spec, kargs, l.shape, l.stream);
    } catch (const nu::kernel_exception& e) {
        // The kernel raised: the Python Kernel raises the user's exception for this code.
        l.owner.attr("_raise_from_kernel")(spec, e.code, py::make_tuple(e.tid[0], e.tid[1], e.tid[2]),
                                           py::make_tuple(e.ctaid[0], e.ctaid[1], e.ctaid[2]));
        throw nu::error("kernel '" + k.name() + "': " + e.what());  // not reached
    }
    for (std::size_t i = 0; i < args.size() && !flattened; ++i) {  // a kernel may write any array it gets
        if (kargs[i].is_array) note_stream_use(args[i], l.stream, !kargs[i].read_only);
    }
    if (flattened) {  // the arrays among the tuples' items too
        std::size_t next = 0;
        for (std::size_t i = 0; i < args.size(); ++i) note_argument_stream_uses(args[i], kargs, next, l.stream);
    }
    for (py::handle after : py::list(ctx.retr)) after();  // custom ArgHints' copies back
    return py::none();
}

// A specialization as Kernel._add (kernels/kernel.py) describes it: (dtype, ndim, C++ type) per
// parameter, and the link files as (path, kind, contents).
using spec_params = std::vector<std::tuple<py::object, int, std::string>>;
using spec_links = std::vector<std::tuple<std::string, std::string, py::bytes, std::vector<std::string>>>;

nu::kernel_spec make_spec(const spec_params& params, std::string function, std::string source,
                          bool cooperative, std::int64_t static_shared, bool grid_sync, const spec_links& links) {
    nu::kernel_spec s;
    for (const auto& [path, kind, content, includes] : links) {
        nu::check_link_kind(path, kind);
        s.links.push_back({path, kind, std::string(content), includes});
    }
    for (const auto& [dtype, ndim, ctype] : params) {
        s.params.push_back({as_dtype(dtype, "cuda.jit"), ndim, ctype});
    }
    s.function = std::move(function);
    s.source = std::move(source);
    s.cooperative = cooperative;
    s.grid_sync = grid_sync;
    s.static_shared = static_shared;
    return s;
}

}  // namespace

void bind_kernel(py::module_& m) {
    m.def("set_launch_warnings", [](bool low_occupancy, bool implicit_copy) {
        g_warn_low_occupancy = low_occupancy;
        g_warn_implicit_copy = implicit_copy;
    }, py::arg("low_occupancy"), py::arg("implicit_copy"));
    py::class_<kernel_launcher> launcher(m, "KernelLaunch", "A kernel with its launch configuration.");
    launcher
        .def_property_readonly("griddim", [](const kernel_launcher& l) {
            return py::make_tuple(l.shape.grid[0], l.shape.grid[1], l.shape.grid[2]);
        })
        .def_property_readonly("blockdim", [](const kernel_launcher& l) {
            return py::make_tuple(l.shape.block[0], l.shape.block[1], l.shape.block[2]);
        })
        .def_property_readonly("sharedmem", [](const kernel_launcher& l) { return l.shape.dynamic_shared; })
        .def_property_readonly("stream", [](const kernel_launcher& l) { return l.stream_object; })
        // Numba's: the arguments of the launch through this configuration that is compiling
        // on this thread (numba.cuda.launchconfig), else None; never kept past the launch.
        .def_property_readonly("args", [](py::object self) -> py::object {
            py::object config = py::module_::import("numbacuda_ufunc.kernels.launchconfig")
                                    .attr("current_launch_config")();
            if (!config.is_none() && py::object(config.attr("_launch")).is(self)) return config.attr("args");
            return py::none();
        })
        .def_property_readonly(
            "pre_launch_callbacks",
            [](kernel_launcher& l) {
                if (!l.callbacks) l.callbacks = py::list();
                return l.callbacks;
            },
            "Callables run as callback(kernel, launch_config) right before each launch (Numba's).")
        .def("__reduce__", [](const kernel_launcher& l) -> py::tuple {
            // kernel[grid, block, 0, shared] again on unpickling, as Numba pickles a
            // configured launch; a stream is a handle of this process and does not travel.
            if (l.callbacks && PyList_GET_SIZE(l.callbacks.ptr()) > 0)
                pickling_error("Cannot pickle configured launches with pre-launch callbacks");
            if (l.stream != nu::default_stream() && l.stream != nu::legacy_default_stream()) {
                pickling_error("kernel '" + l.kernel->name() + "': cannot pickle a launch configured "
                               "with a stream; pickle the kernel and configure it again");
            }
            if (l.shape.forall_tasks >= 0) {  // kernel.forall(n, sharedmem=...)
                return py::make_tuple(l.owner.attr("_forall"),
                                      py::make_tuple(l.shape.forall_tasks, 0, l.shape.dynamic_shared));
            }
            const py::tuple config = py::make_tuple(
                py::make_tuple(l.shape.grid[0], l.shape.grid[1], l.shape.grid[2]),
                py::make_tuple(l.shape.block[0], l.shape.block[1], l.shape.block[2]), 0,
                l.shape.dynamic_shared);
            return py::make_tuple(py::module_::import("operator").attr("getitem"),
                                  py::make_tuple(l.owner, config));
        })
        .def("__call__", [](py::object self, py::args args, py::kwargs kwargs) { return call_kernel(self, args, kwargs); });
    set_call_slot(launcher, direct_call<call_kernel>);

    py::class_<nu::jit_kernel, std::shared_ptr<nu::jit_kernel>> cls(m, "Kernel", py::dynamic_attr(),
                                                                   "Engine side of a @cuda.jit kernel.");
    cls.def(py::init([](std::string name, bool debug, bool fastmath) {
                return std::make_shared<nu::jit_kernel>(std::move(name), debug, fastmath);
            }),
            py::arg("name"), py::arg("debug") = false, py::arg("fastmath") = false)
        .def("__getitem__", &configure)
        .def("_set_device_codegen", &nu::jit_kernel::set_device_codegen, py::arg("entry_prefix"),
             py::arg("nvrtc_extra"), py::arg("max_threads"))
        .def_property_readonly("_nvrtc_extra", &nu::jit_kernel::nvrtc_extra)
        .def("_set_carveout", &nu::jit_kernel::set_carveout, py::arg("percent"))
        .def("_set_launch_config_sensitive", &nu::jit_kernel::set_launch_config_sensitive)
        .def("_forall", &configure_forall, py::arg("tasks"), py::arg("stream"), py::arg("sharedmem"))
        .def("_add_spec",
             [](nu::jit_kernel& k, const spec_params& params, std::string function, std::string source,
                bool cooperative, std::int64_t static_shared, bool grid_sync, const spec_links& links) {
                 return k.add_spec(make_spec(params, std::move(function), std::move(source), cooperative,
                                             static_shared, grid_sync, links));
             },
             py::arg("params"), py::arg("function"), py::arg("source"), py::arg("cooperative"),
             py::arg("static_shared"), py::arg("grid_sync"), py::arg("links") = spec_links{})
        .def("_replace_spec",
             [](nu::jit_kernel& k, int index, const spec_params& params, std::string function,
                std::string source, bool cooperative, std::int64_t static_shared, bool grid_sync,
                const spec_links& links) {
                 if (index < 0 || static_cast<std::size_t>(index) >= k.spec_count()) {
                     throw py::index_error("kernel '" + k.name() + "': no specialization " + std::to_string(index));
                 }
                 k.replace_spec(index, make_spec(params, std::move(function), std::move(source), cooperative,
                                                 static_shared, grid_sync, links));
             },
             py::arg("index"), py::arg("params"), py::arg("function"), py::arg("source"),
             py::arg("cooperative"), py::arg("static_shared"), py::arg("grid_sync"),
             py::arg("links") = spec_links{})
        .def("_source", &nu::jit_kernel::source, py::arg("index"), py::arg("host") = false,
             "The complete translation unit of specialization `index`.")
        .def("_entry", &nu::jit_kernel::entry)
        .def_property_readonly("_spec_count", &nu::jit_kernel::spec_count);
}

}  // namespace nu::bindings
