// src/bindings/ufunc.cpp: vectorize ufuncs, called straight through tp_call
#include "bindings/common.h"

#include <algorithm>


namespace nu::bindings {

// The NumPy dtypes a lazy ufunc compiles for: the inputs' NEP 50 types.
py::tuple resolver_types(const std::vector<nu::operand>& ops) {
    const auto types = nu::resolved_types(ops);
    py::tuple t(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) t[i] = to_numpy_dtype(types[i]);
    return t;
}

// A lazy ufunc's loop for these operands, compiled (by Python) on first use. Weak Python
// ints are checked first, so lazy(uint8_array, -1) raises OverflowError before compiling.
void resolve_lazy(py::handle self, const nu::ufunc& uf, const std::vector<nu::operand>& ops) {
    if (!uf.lazy() || uf.select_loop(ops) >= 0) return;
    const auto types = nu::resolved_types(ops);
    nu::check_weak_scalars(ops, std::vector<nu::dtype>(types.begin(), types.end()), uf.name());
    self.attr("_compile_for")(resolver_types(ops));
}

py::object call_ufunc(py::handle self, py::tuple args, py::handle kwargs) {
    nu::ufunc& uf = engine_object<nu::ufunc>(self);
    std::vector<py::object> keep;  // converted arguments, alive for the whole call
    const caller who{uf.name(), uf.where(), &keep};
    call_keywords kw = parse_keywords(uf.name(), kwargs);
    if (kw.others) return self.attr("_call_keywords")(args, py::reinterpret_borrow<py::dict>(kwargs));
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
    if (!out.is_none() && out_for_protocol(out)) throw override_argument{};  // before any compile
    bool is_cupy = false;
    std::vector<nu::operand> ops;
    ops.reserve(nin);
    bool any_device = false;
    for (std::size_t i = 0; i < nin; ++i) {
        ops.push_back(to_operand(who, args[i], i, &is_cupy));
        any_device = any_device || ops.back().where == nu::operand::kind::device;
    }
    resolve_lazy(self, uf, ops);
    const nu::stream_ref s = as_stream(kw.stream, uf.name().c_str());

    nu::operand out_op;
    py::object result = out;
    if (!out.is_none()) {
        out_op = output_operand(who, out, nin, "out");
        result = returned_output(out, out_op);
    }
    const nu::call_plan plan = uf.plan(ops, out.is_none() ? nullptr : &out_op);
    if (out.is_none()) {
        result = new_result(who, plan.shape, plan.out_type, plan.order,
                            any_device && uf.where() == nu::target::cuda, is_cupy, s, &out_op);
    }
    // Releasing the GIL costs about a tenth of a small host-backend call; it matters for
    // device launches and long host loops (and first calls, which compile), not there.
    const bool host_backend = uf.where() != nu::target::cuda || nu::cuda_target_emulated();
    const std::int64_t n = nu::checked_size(plan.shape, uf.name().c_str());
    if (host_backend && n < (1 << 14)) {  // a compile inside releases the GIL itself
        uf.execute(plan, ops, out_op, s);
    } else {
        release_gil nogil;
        uf.execute(plan, ops, out_op, s);
    }
    if (any_device || out_op.where == nu::operand::kind::device) note_stream_uses(ops, &out_op, 1, s);
    if (out.is_none() && out_op.where == nu::operand::kind::host && plan.shape.empty()) {
        return result[py::tuple()];  // a 0-d result from host inputs is a NumPy scalar
    }
    if (is_cupy && out.is_none() && out_op.where == nu::operand::kind::device) return as_cupy(result, s);
    return result;
}


// The keyword path (numbacuda_ufunc/ufuncs/_keywords.py parses where=, dtype=, casting=, order=,
// signature= and chooses the loop; -1 leaves the choice to the engine). `where` None: no
// mask. `result_type`: the dtype of a new result (dtype= may differ from the loop's).
py::object call_loop(py::handle self, py::tuple args, py::object out, int loop, const std::string& casting,
                     const std::string& order, py::object where, py::object result_type, py::object stream) {
    nu::ufunc& uf = engine_object<nu::ufunc>(self);
    std::vector<py::object> keep;
    const caller who{uf.name(), uf.where(), &keep};
    const std::size_t nin = static_cast<std::size_t>(uf.nin());
    NU_ASSERT(args.size() == nin);
    bool is_cupy = false, any_device = false;
    std::vector<nu::operand> ops;
    for (std::size_t i = 0; i < nin; ++i) {
        ops.push_back(to_operand(who, args[i], i, &is_cupy));
        any_device = any_device || ops.back().where == nu::operand::kind::device;
    }
    if (loop < 0) {
        resolve_lazy(self, uf, ops);
        loop = uf.select_loop(ops);
        if (loop < 0) throw nu::type_error(uf.no_loop_message(ops));
    }
    static const char* const rules[] = {"no", "equiv", "safe", "same_kind", "unsafe"};
    const auto* rule = std::find(std::begin(rules), std::end(rules), casting);
    NU_ASSERT(rule != std::end(rules));
    const auto out_casting = static_cast<nu::casting_rule>(rule - std::begin(rules));
    nu::operand mask;
    const bool masked = !where.is_none();
    if (masked) {
        mask = to_operand(who, where, nin, &is_cupy);
        any_device = any_device || mask.where == nu::operand::kind::device;
    }
    const nu::stream_ref s = as_stream(stream, uf.name().c_str());
    nu::operand out_op;
    py::object result = out;
    if (!out.is_none()) {
        out_op = output_operand(who, out, nin, "out");
        result = returned_output(out, out_op);
    }
    nu::call_plan plan = uf.plan_with(loop, ops, out.is_none() ? nullptr : &out_op, out_casting,
                                      masked ? &mask : nullptr);
    if (out.is_none()) {
        const nu::dtype type = result_type.is_none() ? plan.out_type : as_dtype(result_type, uf.name().c_str());
        const char o = order == "C" || order == "F" ? order[0] : plan.order;
        result = new_result(who, plan.shape, type, o, any_device && uf.where() == nu::target::cuda, is_cupy, s,
                            &out_op);
    }
    {
        release_gil nogil;
        if (masked) {
            // The masked loop reads out's old value where the mask is false: out is both an
            // input (the same view, so it is not copied) and the output.
            nu::ufunc& w = uf.where_ufunc();
            nu::call_plan mplan = plan;
            mplan.loop = uf.where_loop(loop, out_op.view.type);
            mplan.out_type = out_op.view.type;
            std::vector<nu::operand> mops;
            mops.reserve(nin + 2);
            mops.push_back(mask);
            mops.push_back(out_op);
            mops.insert(mops.end(), ops.begin(), ops.end());
            w.execute(mplan, mops, out_op, s);
        } else {
            uf.execute(plan, ops, out_op, s);
        }
    }
    if (any_device || out_op.where == nu::operand::kind::device) note_stream_uses(ops, &out_op, 1, s);
    if (out.is_none() && out_op.where == nu::operand::kind::host && plan.shape.empty()) {
        return result[py::tuple()];
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
            for (const std::string& t : in) l.in.push_back(loop_dtype(t));
            l.out = loop_dtype(out);
            l.function = std::move(function);
            l.source = std::move(source);
            uf.add_loop(std::move(l));
        })
        .def_property("_lazy", &nu::ufunc::lazy, &nu::ufunc::set_lazy)
        .def_property_readonly("nin", &nu::ufunc::nin)
        .def_property_readonly("nout", [](const nu::ufunc&) { return 1; })
        .def_property_readonly("nargs", [](const nu::ufunc& uf) { return uf.nin() + 1; })
        .def_property_readonly("ntypes", [](const nu::ufunc& uf) { return uf.loops().size(); })
        .def_property_readonly("types", &nu::ufunc::type_strings)
        .def_property_readonly("target", [](const nu::ufunc& uf) {
            return uf.where() == nu::target::cuda ? "cuda" : uf.where() == nu::target::cpu ? "cpu" : "parallel";
        })
        .def_property_readonly("_pipelined_calls", &nu::ufunc::pipelined_calls)
        .def("_select_loop", [](py::object self, py::tuple args) {
            nu::ufunc& uf = engine_object<nu::ufunc>(self);
            std::vector<py::object> keep;
            const caller who{uf.name(), uf.where(), &keep};
            std::vector<nu::operand> ops;
            for (std::size_t i = 0; i < args.size(); ++i) ops.push_back(to_operand(who, args[i], i, nullptr));
            resolve_lazy(self, uf, ops);
            return uf.select_loop(ops);
        }, "The loop the engine selects for these inputs (-1: none); lazy ufuncs compile it.")
        .def("_call_loop", &call_loop, py::arg("args"), py::arg("out"), py::arg("loop"), py::arg("casting"),
             py::arg("order"), py::arg("where"), py::arg("result_type"), py::arg("stream"))
        .def("_kernel_sources", &nu::ufunc::kernel_sources,
             "(entry, source) of every kernel variant built so far.")
        .def("_variant_source", &nu::ufunc::variant_source, py::arg("loop"), py::arg("ndim") = 0,
             py::arg("inner") = "",
             "(entry, source) of a loop's contiguous (ndim=0) or strided kernel; inner: the "
             "strided kernel's innermost-stride class per operand, output first ('c' unit, "
             "'z' zero, 's' any).");
    cls.def("__call__", [](py::object self, py::args args, py::kwargs kwargs) {
        return call_or_redo<call_ufunc>(self, args, kwargs);
    });
    install_fast_call(cls);
    m.def("install_fast_call", &install_fast_call,
          "Give a Python subclass of UFunc the direct call slot (call once per subclass).");
}


}  // namespace nu::bindings
