// src/bindings/gufunc.cpp: guvectorize gufuncs
#include "bindings/common.h"

#include "dispatch/gufunc.h"

#include <algorithm>

namespace nu::bindings {

// An operand of the loop's dtype: host arrays and scalars are converted here with NumPy
// (host data), device arrays of another dtype by the engine, on the device.
nu::operand gufunc_operand(const caller& who, nu::operand op, nu::dtype loop_type, py::handle arg) {
    if (op.where == nu::operand::kind::device || (op.where == nu::operand::kind::host && op.view.type == loop_type)) {
        return op;
    }
    // Scalars become 0-d arrays; a host array of another dtype is converted (a copy).
    py::array arr = py::module_::import("numpy").attr("asarray")(arg, to_numpy_dtype(loop_type));
    who.keep->push_back(arr);
    nu::operand converted;
    converted.where = nu::operand::kind::host;
    converted.view = host_view(arr, (who.name + "()").c_str());
    return converted;
}

// Numba's old-style scalar argument (numba#2579): "(n),()->(n)" called with a 1-element
// array for "()" gives a loop dimension of size 1 that Numba's out= does not have. When
// the given outputs lack only leading size-1 loop dimensions, they are viewed with them
// (stride 0), so the call works as in Numba; NumPy would raise here.
bool old_style_outputs(const nu::gufunc& g, int loop, const std::vector<nu::operand>& ops,
                       const std::vector<const nu::operand*>& given, std::vector<nu::operand>& out_ops) {
    nu::gufunc_plan free_plan;
    std::vector<const nu::operand*> none(given.size(), nullptr);
    try {
        free_plan = g.plan(loop, ops, none);
    } catch (const nu::value_error&) {
        return false;  // an output-only dimension: nothing to compare with
    }
    bool changed = false;
    for (std::size_t k = 0; k < given.size(); ++k) {
        if (given[k] == nullptr) continue;
        const nu::shape_t& full = free_plan.out_shapes[k];
        nu::array_view& v = out_ops[k].view;
        if (v.shape.size() >= full.size()) continue;
        const std::size_t missing = full.size() - v.shape.size();
        if (missing > free_plan.loop_shape.size()) return false;
        for (std::size_t d = 0; d < missing; ++d) {
            if (full[d] != 1) return false;
        }
        if (!std::equal(v.shape.begin(), v.shape.end(), full.begin() + static_cast<std::ptrdiff_t>(missing))) {
            return false;
        }
        nu::shape_t shape(missing, 1), strides(missing, 0);
        for (std::int64_t x : v.shape) shape.push_back(x);
        for (std::int64_t x : v.strides) strides.push_back(x);
        v.shape = shape;
        v.strides = strides;
        changed = true;
    }
    return changed;
}

// A call; `forced` >= 0 runs that loop (NumPy's dtype=/signature=/casting=, chosen in
// numbacuda_ufunc/ufuncs/_keywords.py) instead of the first one the inputs cast to safely.
py::object call_gufunc_loop(py::handle self, py::tuple args, py::handle kwargs, int forced) {
    nu::gufunc& g = engine_object<nu::gufunc>(self);
    std::vector<py::object> keep;  // converted arguments, alive for the whole call
    const caller who{g.name(), g.where(), &keep};
    call_keywords kw = parse_keywords(g.name(), kwargs);
    if (kw.others) {
        if (forced >= 0) throw nu::type_error(g.name() + "(): _call_loop takes only out= and stream=");
        return self.attr("_call_keywords")(args, py::reinterpret_borrow<py::dict>(kwargs));
    }
    const std::size_t nin = static_cast<std::size_t>(g.nin()), nout = static_cast<std::size_t>(g.nout());
    const std::size_t nargs = args.size();
    if (nargs != nin && nargs != nin + nout) {
        throw nu::type_error(g.name() + "(): gufunc accepts " + std::to_string(nin) +
                             " positional arguments (the inputs) or " + std::to_string(nin + nout) +
                             " positional arguments (inputs and outputs). Got " + std::to_string(nargs) +
                             " positional argument" + (nargs == 1 ? "." : "s."));
    }
    std::vector<py::object> outs(nout, py::none());
    if (nargs == nin + nout) {
        if (!kw.out.is_none()) {
            const py::module_ errors = py::module_::import("numbacuda_ufunc.errors");
            PyErr_SetObject(errors.attr("DuplicateOutputError").ptr(), errors.attr("DUPLICATE_OUTPUT").ptr());
            throw py::error_already_set();
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
    for (const py::object& o : outs) {
        if (!o.is_none() && out_for_protocol(o)) throw override_argument{};
    }
    bool is_cupy = false;
    bool any_device = false;
    std::vector<nu::operand> ops;
    for (std::size_t i = 0; i < nin; ++i) {
        ops.push_back(to_operand(who, args[i], i, &is_cupy));
        any_device = any_device || ops.back().where == nu::operand::kind::device;
    }
    if (forced >= static_cast<int>(g.loops().size())) {
        throw nu::value_error(g.name() + "(): no loop " + std::to_string(forced));
    }
    const int loop = forced >= 0 ? forced : g.select_loop(ops);
    if (loop < 0) throw nu::type_error(g.no_loop_message(ops));
    const nu::gufunc_loop& l = g.loops()[loop];
    nu::check_weak_scalars(ops, l.types, g.name());
    // A writable host input of another dtype is worked on as a converted copy and written
    // back afterwards, so the function's writes reach it as they would without conversion.
    std::vector<std::pair<py::handle, py::object>> writable_back;  // (user's array, copy)
    for (std::size_t i = 0; i < nin; ++i) {
        const nu::operand before = ops[i];
        ops[i] = gufunc_operand(who, ops[i], l.types[i], args[i]);
        const bool converted = before.where == nu::operand::kind::host && before.view.type != l.types[i];
        if (!converted || !g.writable(static_cast<int>(i)) || !py::isinstance<py::array>(args[i])) continue;
        if (!nu::can_cast_same_kind(l.types[i], before.view.type)) {
            throw nu::type_error(g.name() + "(): writable argument " + std::to_string(i + 1) + " is " +
                                 nu::dtype_name(before.view.type) + ", and the loop's " +
                                 nu::dtype_name(l.types[i]) + " cannot be written back with casting rule 'same_kind'");
        }
        writable_back.emplace_back(args[i], keep.back());
    }

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
    nu::gufunc_plan plan;
    try {
        plan = g.plan(loop, ops, given);
    } catch (const nu::value_error&) {
        if (!old_style_outputs(g, loop, ops, given, out_ops)) throw;
        plan = g.plan(loop, ops, given);
    }
    const nu::stream_ref s = as_stream(kw.stream, g.name().c_str());
    const bool on_device = any_device && g.where() == nu::target::cuda;
    std::vector<py::object> results(nout);
    for (std::size_t k = 0; k < nout; ++k) {
        if (!outs[k].is_none()) {
            results[k] = returned_output(outs[k], out_ops[k]);
            continue;
        }
        results[k] = new_result(who, plan.out_shapes[k], l.types[nin + k], 'C', on_device, is_cupy, s, &out_ops[k]);
    }
    std::vector<bool> fresh(nout);
    for (std::size_t k = 0; k < nout; ++k) fresh[k] = outs[k].is_none();
    std::int64_t blocks = 0;
    {
        release_gil nogil;
        blocks = g.execute(plan, ops, out_ops, s, fresh);
    }
    warn_low_occupancy(blocks);  // as Numba's gufuncs, whose launches are kernel launches
    note_stream_uses(ops, out_ops.data(), out_ops.size(), s);
    for (auto& [user_in, copy] : writable_back) {
        py::module_::import("numpy").attr("copyto")(user_in, copy, py::arg("casting") = "same_kind");
    }
    for (auto& [user_out, copy] : write_back) {
        py::module_::import("numpy").attr("copyto")(user_out, copy, py::arg("casting") = "same_kind");
    }
    auto finish = [&](std::size_t k) -> py::object {
        if (outs[k].is_none() && out_ops[k].where == nu::operand::kind::host && plan.out_shapes[k].empty()) {
            return results[k][py::tuple()];  // a 0-d host result is a NumPy scalar
        }
        if (is_cupy && outs[k].is_none() && out_ops[k].where == nu::operand::kind::device) {
            return as_cupy(results[k], s);
        }
        return results[k];
    };
    if (nout == 1) return finish(0);
    py::tuple t(nout);
    for (std::size_t k = 0; k < nout; ++k) t[k] = finish(k);
    return std::move(t);
}

py::object call_gufunc(py::handle self, py::tuple args, py::handle kwargs) {
    return call_gufunc_loop(self, args, kwargs, -1);
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
            for (const std::string& t : types) l.types.push_back(loop_dtype(t));
            for (int k : kinds) l.kinds.push_back(static_cast<nu::arg_kind>(k));
            l.function = std::move(function);
            l.source = std::move(source);
            g.add_loop(std::move(l));
        })
        .def_property("_boundscheck", &nu::gufunc::boundscheck, &nu::gufunc::set_boundscheck)
        .def_property_readonly("nin", &nu::gufunc::nin)
        .def_property_readonly("nout", &nu::gufunc::nout)
        .def_property_readonly("nargs", [](const nu::gufunc& g) { return g.nin() + g.nout(); })
        .def_property_readonly("ntypes", [](const nu::gufunc& g) { return g.loops().size(); })
        .def_property_readonly("types", &nu::gufunc::type_strings)
        .def("_kernel_sources", &nu::gufunc::kernel_sources)
        .def("_loop_source", [](nu::gufunc& g, int loop, int nloop, bool staged, std::vector<int> modes,
                                std::vector<std::vector<std::int64_t>> extents) {
            if (loop < 0 || loop >= static_cast<int>(g.loops().size()) || nloop < 0 || nloop > 32) {
                throw nu::value_error("_loop_source(): no loop " + std::to_string(loop) + " with " +
                                      std::to_string(nloop) + " loop dimensions");
            }
            const std::size_t nops = g.loops()[static_cast<std::size_t>(loop)].types.size();
            if ((!modes.empty() && modes.size() != nops) || (!extents.empty() && extents.size() != nops)) {
                throw nu::value_error("_loop_source(): modes and extents need one entry per operand (" +
                                      std::to_string(nops) + ")");
            }
            nu::staged_spec spec;
            if (!modes.empty()) {
                spec.modes = modes;
                spec.extents = extents.empty() ? std::vector<std::vector<std::int64_t>>(nops) : extents;
            }
            std::string entry;
            std::string src = g.kernel_source(loop, nloop, &entry, staged, modes.empty() ? nullptr : &spec);
            return py::make_tuple(entry, src);
        }, py::arg("loop"), py::arg("nloop") = 1, py::arg("staged") = false,
             py::arg("modes") = std::vector<int>{}, py::arg("extents") = std::vector<std::vector<std::int64_t>>{},
             "(entry, source) of a loop's kernel over nloop loop dimensions (staged: the GPU "
             "variant that copies small items through shared memory; modes and extents: the "
             "staged variant's specialisation per operand, see gufunc.cuh's garg).")
        .def("__call__", [](py::object self, py::args args, py::kwargs kwargs) {
            return call_or_redo<call_gufunc>(self, args, kwargs);
        })
        .def("_call_loop", [](py::object self, int loop, py::args args, py::kwargs kwargs) {
            if (loop < 0) throw nu::value_error("_call_loop(): loop must be >= 0");
            return call_gufunc_loop(self, args, kwargs, loop);
        }, "A call that runs loop `loop` (inputs converted to its types); out= and stream= only.");
    set_call_slot(cls, direct_call<call_gufunc>);
    m.def("install_fast_gufunc_call", [](py::handle cls) { set_call_slot(cls, direct_call<call_gufunc>); },
          "Give a Python subclass of GUFunc the direct call slot.");
}


}  // namespace nu::bindings
