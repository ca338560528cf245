// src/bindings/ufunc.cpp: vectorize ufuncs, called straight through tp_call
#include "bindings/common.h"


namespace nu::bindings {

// The NumPy dtype a lazy ufunc compiles for, per argument (Python scalars: int64,
// float64, complex128, as Numba types them).
py::tuple resolver_types(const std::vector<nu::operand>& ops) {
    py::tuple t(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) t[i] = to_numpy_dtype(ops[i].type());
    return t;
}

py::object call_ufunc(py::handle self, py::tuple args, py::handle kwargs) {
    nu::ufunc& uf = engine_object<nu::ufunc>(self);
    std::vector<py::object> keep;  // converted arguments, alive for the whole call
    const caller who{uf.name(), uf.where(), &keep};
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
    if (any_device || out_op.where == nu::operand::kind::device) note_stream_uses(ops, &out_op, 1, s);
    if (out.is_none() && out_op.where == nu::operand::kind::host && plan.shape.empty()) {
        return result[py::tuple()];  // a 0-d result from host inputs is a NumPy scalar
    }
    if (is_cupy && out.is_none() && out_op.where == nu::operand::kind::device) return as_cupy(result, s);
    return result;
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
             "(entry, source) of every kernel variant built so far.")
        .def("_variant_source", &nu::ufunc::variant_source, py::arg("loop"), py::arg("ndim") = 0,
             "(entry, source) of a loop's contiguous (ndim=0) or strided kernel.");
    cls.def("__call__", [](py::object self, py::args args, py::kwargs kwargs) {
        return call_ufunc(self, args, kwargs);
    });
    install_fast_call(cls);
    m.def("install_fast_call", &install_fast_call,
          "Give a Python subclass of UFunc the direct call slot (call once per subclass).");
}


}  // namespace nu::bindings
