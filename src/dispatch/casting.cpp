// src/dispatch/casting.cpp: casting tables (read off NumPy 2) and host scalar conversion
#include "dispatch/casting.h"

#include <cstring>

// The kernels' own cast, so a scalar converted here equals one converted on the device
// (with the standard <math.h>: this file is part of the module, not a host kernel).
#define NU_HOST_STD_CMATH 1
#include "kernels/host_prelude.h"
#include "kernels/nu_scalar.cuh"

namespace nu {
namespace {

// Rows: from; columns: to; order b1 i1 i2 i4 i8 u1 u2 u4 u8 f4 f8 c8 c16 f2 bf16, as in the
// dtype enum. Generated with np.can_cast for every pair (bfloat16's with ml_dtypes 0.6, whose
// rules they are: no safe cast from int16 or float16, a same_kind cast from complex).
constexpr const char* k_safe[] = {
    "111111111111111", ".1111....111111", "..111....1111..", "...11.....1.1..",
    "....1.....1.1..", "..1111111111111", "...11.1111111..", "....1..11.1.1..",
    "........1.1.1..", ".........1111..", "..........1.1..", "...........11..",
    "............1..", ".........11111.", ".........1111.1",
};
constexpr const char* k_same_kind[] = {
    "111111111111111", ".1111....111111", ".1111....111111", ".1111....111111",
    ".1111....111111", ".11111111111111", ".11111111111111", ".11111111111111",
    ".11111111111111", ".........111111", ".........111111", "...........11.1",
    "...........11.1", ".........111111", ".........1111.1",
};

int row(dtype t) { return static_cast<int>(t); }  // tables follow the enum's order

template <class T>
T read(const scalar_value& v) {
    T x;
    std::memcpy(&x, v.bytes, sizeof(T));
    return x;
}

template <class To>
void write(scalar_value& out, To x) {
    std::memcpy(out.bytes, &x, sizeof(To));
}

template <class To>
To cast_from(const scalar_value& v) {
    switch (v.type) {
        case dtype::bool_: return cast<To>(read<b1>(v));
        case dtype::int8: return cast<To>(read<i8>(v));
        case dtype::int16: return cast<To>(read<i16>(v));
        case dtype::int32: return cast<To>(read<i32>(v));
        case dtype::int64: return cast<To>(read<i64>(v));
        case dtype::uint8: return cast<To>(read<u8>(v));
        case dtype::uint16: return cast<To>(read<u16>(v));
        case dtype::uint32: return cast<To>(read<u32>(v));
        case dtype::uint64: return cast<To>(read<u64>(v));
        case dtype::float32: return cast<To>(read<f32>(v));
        case dtype::float64: return cast<To>(read<f64>(v));
        case dtype::complex64: return cast<To>(read<c64>(v));
        case dtype::complex128: return cast<To>(read<c128>(v));
        case dtype::float16: return cast<To>(read<f16>(v));
        case dtype::bfloat16: return cast<To>(read<bf16>(v));
    }
    return To{};
}

}  // namespace

// Record dtypes cast to nothing (no loop takes them); equal ids are handled by `no`/`equiv`.
bool can_cast_safe(dtype from, dtype to) {
    if (is_record(from) || is_record(to)) return from == to;
    return k_safe[row(from)][row(to)] == '1';
}

bool can_cast_same_kind(dtype from, dtype to) {
    if (is_record(from) || is_record(to)) return from == to;
    return k_same_kind[row(from)][row(to)] == '1';
}

bool can_cast(dtype from, dtype to, casting_rule rule) {
    switch (rule) {
        case casting_rule::no:
        case casting_rule::equiv: return from == to;  // native byte order only
        case casting_rule::safe: return can_cast_safe(from, to);
        case casting_rule::same_kind: return can_cast_same_kind(from, to);
        case casting_rule::unsafe: return true;
    }
    return false;
}

const char* casting_name(casting_rule rule) {
    static constexpr const char* names[] = {"no", "equiv", "safe", "same_kind", "unsafe"};
    return names[static_cast<int>(rule)];
}

char dtype_kind(dtype t) {
    return t == dtype::bfloat16 ? 'f' : typestr(t)[1];  // bfloat16's typestr says 'V'
}

char dtype_char(dtype t) {
    static constexpr char chars[] = {'?', 'b', 'h', 'i', 'l', 'B', 'H', 'I', 'L', 'f', 'd', 'F', 'D',
                                     'e', 'E'};
    if (is_datetime(t) || is_chars(t)) return typestr(t)[1];  // 'M', 'm', 'S', 'U' as NumPy's dtype.char
    return is_record(t) ? 'V' : chars[static_cast<int>(t)];
}

scalar_value convert_scalar(const scalar_value& from, dtype to) {
    if (from.type == to) return from;
    if (is_datetime(from.type) || is_datetime(to)) {
        // datetime64/timedelta64 values are int64 counts: they convert as int64 does (a unit
        // change between two of them is the translator's business, never a scalar's).
        scalar_value count = from;
        if (is_datetime(from.type)) count.type = dtype::int64;
        scalar_value out = convert_scalar(count, is_datetime(to) ? dtype::int64 : to);
        out.type = to;
        return out;
    }
    scalar_value out;
    out.type = to;
    switch (to) {
        case dtype::bool_: write(out, cast_from<b1>(from)); break;
        case dtype::int8: write(out, cast_from<i8>(from)); break;
        case dtype::int16: write(out, cast_from<i16>(from)); break;
        case dtype::int32: write(out, cast_from<i32>(from)); break;
        case dtype::int64: write(out, cast_from<i64>(from)); break;
        case dtype::uint8: write(out, cast_from<u8>(from)); break;
        case dtype::uint16: write(out, cast_from<u16>(from)); break;
        case dtype::uint32: write(out, cast_from<u32>(from)); break;
        case dtype::uint64: write(out, cast_from<u64>(from)); break;
        case dtype::float32: write(out, cast_from<f32>(from)); break;
        case dtype::float64: write(out, cast_from<f64>(from)); break;
        case dtype::complex64: write(out, cast_from<c64>(from)); break;
        case dtype::complex128: write(out, cast_from<c128>(from)); break;
        case dtype::float16: write(out, cast_from<f16>(from)); break;
        case dtype::bfloat16: write(out, cast_from<bf16>(from)); break;
    }
    return out;
}

scalar_value make_scalar(std::int64_t v) {
    scalar_value s;
    s.type = dtype::int64;
    write(s, static_cast<i64>(v));
    return s;
}

scalar_value make_scalar(std::uint64_t v) {
    scalar_value s;
    s.type = dtype::uint64;
    write(s, static_cast<u64>(v));
    return s;
}

scalar_value make_scalar(double v) {
    scalar_value s;
    s.type = dtype::float64;
    write(s, v);
    return s;
}

scalar_value make_scalar(double re, double im) {
    scalar_value s;
    s.type = dtype::complex128;
    write(s, c128{re, im});
    return s;
}

scalar_value make_scalar(bool v) {
    scalar_value s;
    s.type = dtype::bool_;
    write(s, v);
    return s;
}

}  // namespace nu
