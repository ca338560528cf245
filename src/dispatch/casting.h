// src/dispatch/casting.h: NumPy's casting rules and scalar conversions on the host
#pragma once

#include <cstdint>

#include "array/dtype.h"

namespace nu {

// NumPy's casting= rules, strictest first.
enum class casting_rule { no, equiv, safe, same_kind, unsafe };
bool can_cast(dtype from, dtype to, casting_rule rule);  // np.can_cast(from, to, rule)
const char* casting_name(casting_rule rule);             // "same_kind"

bool can_cast_safe(dtype from, dtype to);       // np.can_cast(from, to, "safe")
bool can_cast_same_kind(dtype from, dtype to);  // np.can_cast(from, to, "same_kind")
char dtype_kind(dtype t);                       // 'b', 'i', 'u', 'f' or 'c'
char dtype_char(dtype t);                       // NumPy type character: 'f' for float32

// A scalar passed by value to a kernel: its bytes in `type` (16 bytes hold complex128).
struct scalar_value {
    dtype type = dtype::float64;
    alignas(16) unsigned char bytes[16] = {};
};

// Converts with the semantics of the generated code's nu::cast (NumPy's C casts).
scalar_value convert_scalar(const scalar_value& from, dtype to);

scalar_value make_scalar(std::int64_t v);
scalar_value make_scalar(std::uint64_t v);
scalar_value make_scalar(double v);
scalar_value make_scalar(double re, double im);
scalar_value make_scalar(bool v);

}  // namespace nu
