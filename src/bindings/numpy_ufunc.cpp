// src/bindings/numpy_ufunc.cpp: a real numpy.ufunc over a cpu/parallel ufunc's host loops
//
// NumPy calls each loop through PyUFuncGenericFunction (inputs then output, byte strides);
// run_numpy_inner_loop adapts that to the engine's strided elementwise kernel. Libraries
// like pandas take their fast path only for an isinstance(f, np.ufunc), and no Python class
// can derive from np.ufunc, so the vectorize ufunc hands out this object as `f.ufunc`.
#include <memory>
#include <string>
#include <vector>

#include "bindings/common.h"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>
#include <numpy/ufuncobject.h>

#include "dispatch/ufunc.h"

namespace nu::bindings {
namespace {

// What the np.ufunc points into: NumPy keeps the function, data and type arrays and the
// name and doc pointers as given, so they live here, owned by the ufunc's `obj` (NumPy
// releases it when the ufunc is deallocated). The loops hold their shared libraries, so
// the code stays loaded as long as the np.ufunc (or a view of its loops) exists.
struct numpy_ufunc_state {
    std::vector<nu::numpy_inner_loop> loops;
    std::vector<PyUFuncGenericFunction> functions;
    std::vector<void*> data;
    std::vector<char> types;
    std::string name;
    std::string doc;
};

void inner_loop(char** args, npy_intp const* dimensions, npy_intp const* steps, void* data) {
    static_assert(sizeof(npy_intp) == sizeof(std::intptr_t), "npy_intp is intptr_t");
    nu::run_numpy_inner_loop(*static_cast<const nu::numpy_inner_loop*>(data), args,
                             static_cast<long long>(dimensions[0]),
                             reinterpret_cast<const std::intptr_t*>(steps));
}

// NumPy's type number for an engine dtype; -1 for those NumPy has no builtin number for
// (bfloat16, records, datetimes, whose unit the legacy loop signature cannot carry).
int numpy_type_number(nu::dtype t) {
    switch (t) {
        case nu::dtype::bool_: return NPY_BOOL;
        case nu::dtype::int8: return NPY_INT8;
        case nu::dtype::int16: return NPY_INT16;
        case nu::dtype::int32: return NPY_INT32;
        case nu::dtype::int64: return NPY_INT64;
        case nu::dtype::uint8: return NPY_UINT8;
        case nu::dtype::uint16: return NPY_UINT16;
        case nu::dtype::uint32: return NPY_UINT32;
        case nu::dtype::uint64: return NPY_UINT64;
        case nu::dtype::float32: return NPY_FLOAT32;
        case nu::dtype::float64: return NPY_FLOAT64;
        case nu::dtype::complex64: return NPY_COMPLEX64;
        case nu::dtype::complex128: return NPY_COMPLEX128;
        case nu::dtype::float16: return NPY_FLOAT16;
        default: return -1;
    }
}

void ensure_numpy_ufunc_api() {
    static bool imported = false;
    if (imported) return;
    if (_import_umath() < 0) throw py::error_already_set();
    imported = true;
}

// identity: "none", "reorderable" or "value" (identity_value then gives it).
py::object make_numpy_ufunc(py::handle engine, const std::string& name, const std::string& doc,
                            const std::string& identity, py::object identity_value) {
    nu::ufunc& uf = engine_object<nu::ufunc>(engine);
    ensure_numpy_ufunc_api();
    auto state = std::make_unique<numpy_ufunc_state>();
    state->name = name;
    state->doc = doc;
    const std::size_t count = uf.loops().size();
    for (std::size_t i = 0; i < count; ++i) {
        const nu::loop& l = uf.loop_at(static_cast<int>(i));
        std::vector<char> types;
        for (nu::dtype t : l.in) types.push_back(static_cast<char>(numpy_type_number(t)));
        types.push_back(static_cast<char>(numpy_type_number(l.out)));
        bool known = true;
        for (char c : types) known = known && c >= 0;
        if (!known) continue;
        state->loops.push_back(uf.numpy_loop(static_cast<int>(i)));  // builds it (GIL released)
        state->types.insert(state->types.end(), types.begin(), types.end());
    }
    if (state->loops.empty()) {
        throw nu::type_error(name + ".ufunc: no loop of '" + name +
                             "' has types a NumPy ufunc can carry (bfloat16, datetime and "
                             "record loops cannot be)");
    }
    for (nu::numpy_inner_loop& l : state->loops) {
        state->functions.push_back(&inner_loop);
        state->data.push_back(&l);  // the vector is complete: the addresses stay put
    }
    int identity_kind = PyUFunc_None;
    PyObject* value = nullptr;
    if (identity == "reorderable") {
        identity_kind = PyUFunc_ReorderableNone;
    } else if (identity == "value") {
        identity_kind = PyUFunc_IdentityValue;
        value = identity_value.ptr();
    }
    PyObject* made = PyUFunc_FromFuncAndDataAndSignatureAndIdentity(
        state->functions.data(), state->data.data(), state->types.data(),
        static_cast<int>(state->loops.size()), uf.nin(), 1, identity_kind, state->name.c_str(),
        state->doc.c_str(), 0, nullptr, value);
    if (made == nullptr) throw py::error_already_set();
    py::object result = py::reinterpret_steal<py::object>(made);
    numpy_ufunc_state* raw = state.release();
    py::capsule owner(raw, [](void* p) { delete static_cast<numpy_ufunc_state*>(p); });
    reinterpret_cast<PyUFuncObject*>(made)->obj = owner.release().ptr();
    return result;
}

}  // namespace

void bind_numpy_ufunc(py::module_& m) {
    m.def("numpy_ufunc", &make_numpy_ufunc, py::arg("engine"), py::arg("name"), py::arg("doc"),
          py::arg("identity"), py::arg("identity_value") = py::none(),
          "A numpy.ufunc over the host loops of a cpu/parallel vectorize ufunc (one per loop "
          "whose types NumPy knows), in the ufunc's loop order.");
}

}  // namespace nu::bindings
