// src/bindings/ufunc_methods.cpp: ufunc.accumulate, reduceat and at (numbacuda_ufunc/_methods.py)
#include "bindings/common.h"

#include "dispatch/ufunc_methods.h"

namespace nu::bindings {

namespace {

// A NumPy or device array the Python front end has already checked and laid out.
// A byte-swapped array is used through a native copy in `keep` (written back if `writes`).
nu::reduce_operand method_operand(py::handle obj, const std::string& label, bool writes,
                                  std::vector<py::object>* keep) {
    nu::reduce_operand op;
    if (is_host_ndarray(obj)) {
        py::array arr = py::reinterpret_borrow<py::array>(obj);
        if (writes && !arr.writeable()) throw nu::value_error(label + " is read-only");
        arr = native_order(arr, keep, writes);
        op.view = host_view(arr, label.c_str());
        op.on_host = true;
    } else if (auto dev = device_operand(obj, label.c_str())) {
        op.view = dev->view();
    } else {
        throw nu::type_error(label + " must be a NumPy or device array (got " + repr_of(py::type::handle_of(obj)) +
                             ")");
    }
    return op;
}

std::vector<long long> int64_list(py::handle obj) {
    py::array_t<long long, py::array::c_style | py::array::forcecast> a(py::reinterpret_borrow<py::object>(obj));
    return std::vector<long long>(a.data(), a.data() + a.size());
}

}  // namespace

void bind_ufunc_methods(py::module_& m) {
    py::class_<nu::ufunc_methods, std::shared_ptr<nu::ufunc_methods>>(
        m, "UFuncMethods", py::dynamic_attr(), "Engine side of ufunc.accumulate, reduceat and at.")
        .def(py::init([](std::string name, const std::string& where, bool fastmath, const std::string& atomic) {
                 return std::make_shared<nu::ufunc_methods>(std::move(name), where != "cuda", fastmath,
                                                            nu::at_operator_named(atomic, "UFuncMethods"));
             }),
             py::arg("name"), py::arg("target") = "cuda", py::arg("fastmath") = false, py::arg("atomic") = "",
             "atomic: the operator ufunc.at may apply as a native atomic ('add', 'min', 'max', 'and', "
             "'or', 'xor'), as the front end recognised the function; '' for none.")
        .def("_add_loop", [](nu::ufunc_methods& e, const std::string& type, std::string function,
                             std::string source) {
            nu::reduce_loop l;
            l.type = nu::dtype_from_typestr(type, "UFuncMethods._add_loop");
            l.function = std::move(function);
            l.source = std::move(source);
            return e.add_loop(std::move(l));
        })
        .def("_find_loop", [](const nu::ufunc_methods& e, py::handle dtype) {
            return e.find_loop(as_dtype(dtype, "UFuncMethods._find_loop"));
        })
        .def("_loop_type", [](const nu::ufunc_methods& e, int loop) { return to_numpy_dtype(e.loop_type(loop)); })
        .def("_source", [](const nu::ufunc_methods& e, int loop, py::handle in, py::handle out) {
            return e.source(loop, as_dtype(in, "UFuncMethods._source"), as_dtype(out, "UFuncMethods._source"));
        }, "The generated translation unit of a loop for these input and output dtypes.")
        .def("_accumulate", [](nu::ufunc_methods& e, py::handle in, py::handle out, int loop, py::handle stream,
                               const std::string& api) {
            std::vector<py::object> keep;  // native copies of byte-swapped arrays; destroyed last
            const nu::reduce_operand src = method_operand(in, api + "(): the array", false, &keep);
            const nu::reduce_operand dst = method_operand(out, api + "(): out", true, &keep);
            const nu::stream_ref s = as_stream(stream, api.c_str());
            release_gil nogil;
            e.accumulate(loop, src, dst, s, api.c_str());
        })
        .def("_reduceat", [](nu::ufunc_methods& e, py::handle in, py::handle starts, py::handle out, int loop,
                             py::handle stream, const std::string& api) {
            std::vector<py::object> keep;  // native copies of byte-swapped arrays; destroyed last
            const nu::reduce_operand src = method_operand(in, api + "(): the array", false, &keep);
            const nu::reduce_operand dst = method_operand(out, api + "(): out", true, &keep);
            const std::vector<long long> first = int64_list(starts);
            const nu::stream_ref s = as_stream(stream, api.c_str());
            release_gil nogil;
            e.reduceat(loop, src, first, dst, s, api.c_str());
        })
        .def("_at", [](nu::ufunc_methods& e, py::handle target, py::handle flat, py::array values, int loop,
                       py::handle stream, const std::string& api) {
            std::vector<py::object> keep;  // native copies of byte-swapped arrays; destroyed last
            const nu::reduce_operand dst = method_operand(target, api + "(): the array", true, &keep);
            const std::vector<long long> index = int64_list(flat);
            const py::array native_values = native_order(values, &keep, false);
            const nu::array_view v = host_view(native_values, (api + "(): the values").c_str());
            if (!v.is_c_contiguous() || v.size() != static_cast<std::int64_t>(index.size())) {
                throw nu::value_error(api + "(): internal: values must be contiguous, one per index");
            }
            const nu::stream_ref s = as_stream(stream, api.c_str());
            release_gil nogil;
            e.at(loop, dst, index, v, s, api.c_str());
        })
        .def("_at_device", [](nu::ufunc_methods& e, py::handle target, py::handle indices, py::handle values,
                              int loop, py::handle stream, const std::string& api) {
            // The front end (numbacuda_ufunc/_methods.py) has checked kinds, shapes and dtypes.
            std::vector<py::object> keep;
            const nu::reduce_operand dst = method_operand(target, api + "(): the array", true, &keep);
            const nu::reduce_operand idx = method_operand(indices, api + "(): indices", false, &keep);
            const nu::reduce_operand val = method_operand(values, api + "(): b", false, &keep);
            // b may be one host value (a scalar): its bytes travel in the kernel's parameters.
            if (dst.on_host || idx.on_host || (val.on_host && val.view.size() != 1)) {
                throw nu::value_error(api + "(): internal: the device path needs device arrays");
            }
            const nu::stream_ref s = as_stream(stream, api.c_str());
            release_gil nogil;
            e.at_device(loop, dst.view, idx.view, val.view, val.on_host, s, api.c_str());
        });
}

}  // namespace nu::bindings
