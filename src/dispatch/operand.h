// src/dispatch/operand.h: call arguments as the engine sees them, and loop matching
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "array/device_array.h"
#include "array/small_vector.h"
#include "dispatch/casting.h"

namespace nu {

// Python int, float and complex arguments are weak (NEP 50): they take the loop's type.
enum class weak_kind { none, integer, floating, complex };

// One call argument as the engine sees it.
struct operand {
    enum class kind { device, host, scalar } where = kind::scalar;
    array_view view;             // arrays: data, dtype, shape, strides
    device_array device;         // keeps device memory alive (kind::device)
    scalar_value value;          // kind::scalar: the value in its own dtype
    weak_kind weak = weak_kind::none;

    bool is_array() const { return where != kind::scalar; }
    dtype type() const { return is_array() ? view.type : value.type; }
};

// Whether `op` may be passed to a loop parameter of type `t` in matching pass `pass`:
// 0 exact dtypes, 1 safe casts, 2 weak scalars may also move up a kind (int -> float).
// `value_based`: only weak scalars in the call, so a Python int picks the first integer
// type that holds it; otherwise (NEP 50) it takes the type the arrays choose, and
// check_weak_scalars() refuses a value that does not fit.
bool operand_accepts(const operand& op, dtype t, int pass, bool value_based);

// OverflowError (NumPy 2's) for a weak Python int that the selected types cannot hold.
void check_weak_scalars(const std::vector<operand>& inputs, const std::vector<dtype>& types,
                        const std::string& api);

// NumPy's promote_types for two dtypes (int64 with uint64 gives float64).
dtype promote_types(dtype a, dtype b);

// The dtype each input has under NumPy 2's rules (NEP 50): arrays and NumPy scalars their
// own; a weak Python scalar the strong inputs' promoted type when that is of its kind or
// higher (int into float, float into complex of the same precision), else its default
// (int64, float64, complex128). With only Python scalars, each takes its default. Lazy
// ufuncs compile exactly these types, so the loop is a function of the types alone.
small_vector<dtype, 8> resolved_types(const std::vector<operand>& inputs);

// The first loop, in passes `first_pass`..`last_pass`, whose types all satisfy
// accepts(input index, loop type, pass); -1 when none.
template <class Loops, class TypesOf, class Accepts>
int first_loop_where(const Loops& loops, TypesOf types_of, std::size_t n, int first_pass, int last_pass,
                     Accepts accepts) {
    for (int pass = first_pass; pass <= last_pass; ++pass) {
        for (std::size_t l = 0; l < loops.size(); ++l) {
            const std::vector<dtype>& types = types_of(loops[l]);
            bool ok = types.size() >= n;
            for (std::size_t k = 0; ok && k < n; ++k) ok = accepts(k, types[k], pass);
            if (ok) return static_cast<int>(l);
        }
    }
    return -1;
}

// The first loop (in declaration order) whose input types `types_of(loop)` accept every
// input, trying exact matches before safe casts; -1 when none. Python scalars are typed
// as NumPy 2 types them (resolved_types: beside arrays the arrays' promoted type when of
// their kind or higher, alone int64/float64/complex128), so f(1e300) is float64,
// add(100, 100) int64 and add(int8_array, 2.5) float64. When no loop takes those types
// (a float32-only ufunc called with 2.5) the scalars stay weak and take the first loop
// of their kind (holding their value when they are alone).
template <class Loops, class TypesOf>
int first_matching_loop(const Loops& loops, TypesOf types_of, const std::vector<operand>& inputs) {
    bool any_weak = false, all_weak = !inputs.empty();
    for (const operand& op : inputs) {
        any_weak = any_weak || op.weak != weak_kind::none;
        all_weak = all_weak && op.weak != weak_kind::none;
    }
    const std::size_t n = inputs.size();
    if (!any_weak) {
        return first_loop_where(loops, types_of, n, 0, 1, [&](std::size_t k, dtype t, int pass) {
            return pass == 0 ? inputs[k].type() == t : can_cast_safe(inputs[k].type(), t);
        });
    }
    const small_vector<dtype, 8> resolved = resolved_types(inputs);
    const int l = first_loop_where(loops, types_of, n, 0, 1, [&](std::size_t k, dtype t, int pass) {
        return pass == 0 ? resolved[k] == t : can_cast_safe(resolved[k], t);
    });
    if (l >= 0) return l;
    return first_loop_where(loops, types_of, n, 0, 2, [&](std::size_t k, dtype t, int pass) {
        return operand_accepts(inputs[k], t, pass, all_weak);
    });
}

// The loop whose input types are exactly `types`; -1 when none.
template <class Loops, class TypesOf, class Types>
int exact_loop(const Loops& loops, TypesOf types_of, const Types& types) {
    for (std::size_t l = 0; l < loops.size(); ++l) {
        const std::vector<dtype>& t = types_of(loops[l]);
        if (t.size() >= types.size() && std::equal(types.begin(), types.end(), t.begin())) {
            return static_cast<int>(l);
        }
    }
    return -1;
}

// "float32, int" for error messages (weak scalars by their Python type).
std::string operand_types(const std::vector<operand>& inputs);

}  // namespace nu
