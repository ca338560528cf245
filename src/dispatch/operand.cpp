// src/dispatch/operand.cpp: loop matching rules for operands (NumPy casting, NEP 50)
#include "dispatch/operand.h"

#include <cstring>

namespace nu {
namespace {

bool weak_int_fits(const scalar_value& v, dtype t) {
    // Weak integers arrive as int64, or as uint64 when above INT64_MAX.
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
bool weak_accepts(const operand& op, dtype t, bool own_kind_only) {
    const char k = dtype_kind(t);
    switch (op.weak) {
        case weak_kind::integer:
            if (k == 'i' || k == 'u') return weak_int_fits(op.value, t);
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

bool operand_accepts(const operand& op, dtype t, int pass) {
    if (op.weak != weak_kind::none) return weak_accepts(op, t, pass < 2);
    return pass == 0 ? op.type() == t : can_cast_safe(op.type(), t);
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
