// src/kernels/nu_datetime.cuh: NumPy's datetime64/timedelta64 arithmetic on int64 counts
//
// A datetime64[unit] or timedelta64[unit] value is held as its int64 count of `unit`; NaT is
// INT64_MIN. The translator converts operands to a common unit (scale) and calls these,
// which follow NumPy's loops (numpy/_core/src/umath/loops.c.src): NaT in, NaT out; NaT
// compares unequal to everything (and != is true); sums and products wrap as int64 does.
#pragma once

namespace nu {
namespace dt {

constexpr long long nat = -9223372036854775807LL - 1;

NU_DEVICE long long wrap_add(long long a, long long b) {
    return static_cast<long long>(static_cast<unsigned long long>(a) + static_cast<unsigned long long>(b));
}
NU_DEVICE long long wrap_sub(long long a, long long b) {
    return static_cast<long long>(static_cast<unsigned long long>(a) - static_cast<unsigned long long>(b));
}
NU_DEVICE long long wrap_mul(long long a, long long b) {
    return static_cast<long long>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
}

// A count in a coarser unit as a count of a finer one (factor: finer units per coarser).
NU_DEVICE long long scale(long long x, long long factor) { return x == nat ? nat : wrap_mul(x, factor); }

NU_DEVICE long long add(long long a, long long b) { return a == nat || b == nat ? nat : wrap_add(a, b); }
NU_DEVICE long long sub(long long a, long long b) { return a == nat || b == nat ? nat : wrap_sub(a, b); }
NU_DEVICE long long neg(long long a) { return a == nat ? nat : wrap_sub(0, a); }
NU_DEVICE long long abs(long long a) { return a == nat ? nat : (a < 0 ? wrap_sub(0, a) : a); }

// timedelta * integer (NumPy checks only the timedelta for NaT).
NU_DEVICE long long mul_int(long long td, long long k) { return td == nat ? nat : wrap_mul(td, k); }
// timedelta * float: NaT for NaT or a NaN factor, else the product converted as NumPy does.
NU_DEVICE long long mul_float(long long td, double f) {
    if (td == nat || f != f) return nat;
    return nu::cast<long long>(static_cast<double>(td) * f);
}
// timedelta / integer: C's truncating division; NaT for NaT or a zero divisor.
NU_DEVICE long long div_int(long long td, long long k) {
    if (td == nat || k == 0) return nat;
    if (k == -1) return wrap_sub(0, td);
    return td / k;
}
// timedelta / timedelta: a float64, NaN when either is NaT.
NU_DEVICE double div(long long a, long long b) {
    if (a == nat || b == nat) return nu::nan64();
    return static_cast<double>(a) / static_cast<double>(b);
}

NU_DEVICE bool eq(long long a, long long b) { return a != nat && b != nat && a == b; }
NU_DEVICE bool ne(long long a, long long b) { return a == nat || b == nat || a != b; }
NU_DEVICE bool lt(long long a, long long b) { return a != nat && b != nat && a < b; }
NU_DEVICE bool le(long long a, long long b) { return a != nat && b != nat && a <= b; }
NU_DEVICE bool gt(long long a, long long b) { return a != nat && b != nat && a > b; }
NU_DEVICE bool ge(long long a, long long b) { return a != nat && b != nat && a >= b; }

}  // namespace dt
}  // namespace nu
