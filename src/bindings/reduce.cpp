// src/bindings/reduce.cpp: cuda.reduce and ufunc.reduce
#include "bindings/common.h"

#include "dispatch/reduce.h"

namespace nu::bindings {

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
            std::int64_t v = 0;
            if (!to_int64(a, &v) || v < -ndim || v >= ndim) {
                throw_axis_error(api + "(): axis " + repr_of(a) +
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
                                  int ndim, const std::string& api, const char* what,
                                  std::vector<py::object>* keep) -> nu::reduce_operand {
        nu::reduce_operand op;
        const std::string label = api + "(): " + what;
        if (is_host_ndarray(obj)) {
            py::array arr = py::reinterpret_borrow<py::array>(obj);
            if (!arr.writeable()) throw nu::value_error(label + " is read-only");
            arr = native_order(arr, keep, true);
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
        std::vector<py::object> keep;  // native copies of byte-swapped arrays (and write-backs)
        nu::reduce_operand in;
        bool is_cupy = false;
        const std::string arg = api + "(): the array";
        std::optional<nu::device_array> device;
        py::object host_keepalive;
        if (!is_host_ndarray(arr) && (device = device_operand(arr, arg.c_str()))) {
            in.view = device->view();
            const std::string module = py::str(py::type::handle_of(arr).attr("__module__"));
            is_cupy = module.rfind("cupy", 0) == 0;
        } else {
            if (!py::isinstance<py::array>(arr) && is_dask_array(arr)) throw dask_argument{};
            // ufunc.reduce (its engine has _protocol set): NumPy's protocol for an ndarray
            // subclass or a container (xarray, pandas...); cuda.reduce takes them as arrays.
            if (for_protocol(arr) && py::hasattr(self, "_protocol")) throw override_argument{};
            py::array a = native_order(py::module_::import("numpy").attr("asarray")(arr), &keep, false);
            host_keepalive = a;
            const char kind = a.dtype().kind();
            // 'V': bfloat16 (host_view refuses the other void dtypes)
            if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f' && kind != 'c' && kind != 'V') {
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
            py::object converted;
            try {
                converted = py::module_::import("numpy").attr("asarray")(init, to_numpy_dtype(type));
            } catch (py::error_already_set&) {
                throw nu::type_error(api + "(): the initial value must be a number convertible to " +
                                     nu::dtype_name(type) + " (got " + repr_of(init) + ")");
            }
            const py::array a = py::reinterpret_borrow<py::array>(converted);
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
            if (is_host_ndarray(res) || !(py::isinstance<nu::device_array>(res) || has_cai(res))) {
                throw nu::type_error(api + "(): res must be a device array (got " +
                                     repr_of(py::type::handle_of(res)) + ")");
            }
            nu::device_array d = *device_operand(res, (api + "(): res").c_str());
            if (d.view().type != type) {
                throw nu::type_error(api + "(): res must have the array's dtype " + nu::dtype_name(type) +
                                     " (got " + nu::dtype_name(d.view().type) + ")");
            }
            if (!shape.empty()) {
                dst = reduce_output(res, shape, axes, v.ndim(), api, "res", &keep);
            } else {
                if (d.view().size() < 1) throw nu::value_error(api + "(): res must have at least one element");
                dst.view = d.view();  // its first element
                dst.view.shape.clear();
                dst.view.strides.clear();
            }
        } else if (!out.is_none()) {
            dst = reduce_output(out, shape, axes, v.ndim(), api, "out", &keep);
            result = py::reinterpret_borrow<py::object>(out);
        } else if (in.on_host || (scalar_result && shape.empty())) {
            // filled by a copy from the device where the reduction runs on a GPU
            py::array a = new_host_array(shape, type, 'C', !r.host_target());
            dst.view = host_view(a, api.c_str());
            dst.on_host = true;
            result = a;
        } else {
            nu::device_array d = nu::device_array::empty(shape, type, 'C', std::nullopt, s, api.c_str());
            dst.view = d.view();
            result = py::cast(d);
        }
        {
            release_gil nogil;
            r.execute(loop, in, axes, has_init ? init_value.bytes : nullptr, dst, s, api.c_str());
        }
        note_stream_use(arr, s, false);
        note_stream_use(out, s, true);
        note_stream_use(res, s, true);
        if (!res.is_none()) return py::none();
        if (!out.is_none()) return result;
        if (keepdims) {
            nu::shape_t kept;
            for (int d = 0; d < v.ndim(); ++d)
                kept.push_back(std::find(axes.begin(), axes.end(), d) != axes.end() ? 1 : v.shape[d]);
            result = result.attr("reshape")(to_tuple(kept));
            if (kept.empty() && dst.on_host) return result[py::tuple()];  // a 0-d input: NumPy's scalar
        } else if (shape.empty() && dst.on_host) {
            return result[py::tuple()];  // NumPy scalar
        }
        if (is_cupy && !dst.on_host) result = as_cupy(result, s);
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
        .def("_source", [](const nu::reducer& r, int loop, py::handle in, py::handle out, unsigned kernels) {
            return r.source(loop, as_dtype(in, "Reducer._source"), as_dtype(out, "Reducer._source"), nullptr,
                            kernels);
        }, py::arg("loop"), py::arg("in"), py::arg("out"), py::arg("kernels") = nu::k_all_reduce_kernels,
           "The generated translation unit of a loop for these input and output dtypes, with the "
           "kernels of the mask `kernels` (bit i: reduce_kernel i, units_contig first).")
        .def("_built_kernels", [](nu::reducer& r, int loop, py::handle in, py::handle out) {
            return r.built_kernels(loop, as_dtype(in, "Reducer._built_kernels"),
                                   as_dtype(out, "Reducer._built_kernels"));
        }, "Mask of the kernels built so far for a loop and dtypes (bit i: reduce_kernel i).")
        .def_static("_nvrtc_extra", &nu::reduce_nvrtc_extra,
                    "NVRTC options of builds that include CUB (accumulate's scans; reductions need none).")
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


}  // namespace nu::bindings
