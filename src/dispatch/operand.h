// src/dispatch/operand.h: call arguments as the engine sees them, and loop matching
#pragma once

#include <string>
#include <vector>

#include "array/device_array.h"
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

// The first loop (in declaration order) whose input types `types_of(loop)` accept every
// input, trying exact matches before safe casts; -1 when none.
template <class Loops, class TypesOf>
int first_matching_loop(const Loops& loops, TypesOf types_of, const std::vector<operand>& inputs) {
    bool value_based = true;
    for (const operand& op : inputs) value_based = value_based && op.weak != weak_kind::none;
    for (int pass = 0; pass < 3; ++pass) {
        for (std::size_t l = 0; l < loops.size(); ++l) {
            const std::vector<dtype>& types = types_of(loops[l]);
            bool ok = types.size() >= inputs.size();
            for (std::size_t k = 0; ok && k < inputs.size(); ++k) {
                ok = operand_accepts(inputs[k], types[k], pass, value_based);
            }
            if (ok) return static_cast<int>(l);
        }
    }
    return -1;
}

// "float32, int" for error messages (weak scalars by their Python type).
std::string operand_types(const std::vector<operand>& inputs);

}  // namespace nu
