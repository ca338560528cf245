// src/dispatch/operand.cpp: loop matching rules for operands (NumPy casting, NEP 50)
#include "dispatch/operand.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/errors.h"

namespace nu {
namespace {

bool weak_int_fits(const scalar_value& v, dtype t) {
    // Weak integers arrive as int64, as uint64 when above INT64_MAX, or as float64 when
    // beyond both (no integer type holds those).
    if (v.type == dtype::float64) return false;
    const bool big = v.type == dtype::uint64;
    std::int64_t x = 0;
    std::memcpy(&x, v.bytes, sizeof(x));
    const int bits = static_cast<int>(itemsize(t) * 8);
    if (dtype_kind(t) == 'u') {
        if (big) return bits == 64;
        return x >= 0 && (bits == 64 || static_cast<std::uint64_t>(x) < (1ull << bits));
    }
    if (big) return false;
    if (bits == 64) return true;
    const std::int64_t limit = std::int64_t{1} << (bits - 1);
    return x >= -limit && x < limit;
}

// Whether a weak Python scalar may take loop type `t`; in the first passes only a loop of
// its own kind will do (so add(1, 2) picks an integer loop before a float one).
bool weak_accepts(const operand& op, dtype t, bool own_kind_only, bool value_based) {
    const char k = dtype_kind(t);
    switch (op.weak) {
        case weak_kind::integer:
            if (k == 'i' || k == 'u') return !value_based || weak_int_fits(op.value, t);
            return !own_kind_only && (k == 'f' || k == 'c');
        case weak_kind::floating:
            return k == 'f' || (!own_kind_only && k == 'c');
        case weak_kind::complex:
            return k == 'c';
        case weak_kind::none:
            break;
    }
    return false;
}

}  // namespace

bool operand_accepts(const operand& op, dtype t, int pass, bool value_based) {
    if (op.weak != weak_kind::none) return weak_accepts(op, t, pass < 2, value_based);
    return pass == 0 ? op.type() == t : can_cast_safe(op.type(), t);
}

dtype promote_types(dtype a, dtype b) {
    if (a == b) return a;
    // The smallest type both cast to safely, in NumPy's promotion order.
    static constexpr dtype order[] = {dtype::bool_,  dtype::int8,    dtype::uint8,     dtype::int16,
                                      dtype::uint16, dtype::int32,   dtype::uint32,    dtype::int64,
                                      dtype::uint64, dtype::float16, dtype::bfloat16,  dtype::float32,
                                      dtype::float64, dtype::complex64, dtype::complex128};
    for (dtype t : order) {
        if (can_cast_safe(a, t) && can_cast_safe(b, t)) return t;
    }
    return dtype::complex128;
}

small_vector<dtype, 8> resolved_types(const std::vector<operand>& inputs) {
    bool any_strong = false;
    dtype strong = dtype::bool_;
    for (const operand& op : inputs) {
        if (op.weak != weak_kind::none) continue;
        strong = any_strong ? promote_types(strong, op.type()) : op.type();
        any_strong = true;
    }
    const char k = dtype_kind(strong);
    bool weak_inexact = false;
    for (const operand& op : inputs) {
        weak_inexact = weak_inexact || op.weak == weak_kind::floating || op.weak == weak_kind::complex;
    }
    small_vector<dtype, 8> types;
    for (const operand& op : inputs) {
        // A Python int that takes no array's type is NumPy's default integer, int64 (its
        // value may not fit: check_weak_scalars() says so, as NumPy's OverflowError does),
        // unless a Python float or complex beside it makes the call inexact (add(2**63, 1.0)
        // is float64 in NumPy): then it keeps the type that holds its value.
        dtype t = op.weak == weak_kind::integer && (any_strong || !weak_inexact) ? dtype::int64 : op.type();
        if (any_strong) {
            switch (op.weak) {
                case weak_kind::integer:
                    if (k == 'i' || k == 'u' || k == 'f' || k == 'c') t = strong;
                    break;
                case weak_kind::floating:
                    if (k == 'f' || k == 'c') t = strong;
                    break;
                case weak_kind::complex:
                    if (k == 'c') t = strong;
                    else if (strong == dtype::float32 || strong == dtype::float16 ||
                             strong == dtype::bfloat16)
                        t = dtype::complex64;
                    break;
                case weak_kind::none:
                    break;
            }
        }
        types.push_back(t);
    }
    return types;
}

void check_weak_scalars(const std::vector<operand>& inputs, const std::vector<dtype>& types,
                        const std::string& api) {
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const operand& op = inputs[k];
        const char kind = dtype_kind(types[k]);
        if (op.weak != weak_kind::integer || (kind != 'i' && kind != 'u')) continue;
        if (weak_int_fits(op.value, types[k])) continue;
        std::int64_t value = 0;
        std::memcpy(&value, op.value.bytes, sizeof(value));
        double huge = 0;
        std::memcpy(&huge, op.value.bytes, sizeof(huge));
        char approx[32];
        std::snprintf(approx, sizeof(approx), "of about %.6g", huge);
        const std::string text = op.value.type == dtype::float64 ? std::string(approx)
                                 : op.value.type == dtype::uint64
                                     ? std::to_string(static_cast<std::uint64_t>(value))
                                     : std::to_string(value);
        throw overflow_error(api + "(): Python integer " + text + " is out of bounds for " +
                             dtype_name(types[k]) + " (argument " + std::to_string(k + 1) +
                             "; NumPy 2 gives weak Python integers the arrays' type)");
    }
}

std::string operand_types(const std::vector<operand>& inputs) {
    std::string s;
    for (const operand& op : inputs) {
        if (!s.empty()) s += ", ";
        switch (op.weak) {
            case weak_kind::integer: s += "int"; break;
            case weak_kind::floating: s += "float"; break;
            case weak_kind::complex: s += "complex"; break;
            case weak_kind::none: s += dtype_name(op.type()); break;
        }
    }
    return s;
}

}  // namespace nu
