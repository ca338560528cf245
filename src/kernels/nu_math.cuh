// src/kernels/nu_math.cuh: float/double overloads of the CUDA math API used by translated code
//
// Each function picks the single-precision CUDA routine (sinf) for float and the double
// one (sin) for double, so float32 code never silently runs in double precision on the GPU.
// float16 and bfloat16 compute in float32 and round back, as NumPy's half loops do.
#pragma once

namespace nu {

#define NU_MATH1(name, f32, f64) \
    NU_DEVICE float name(float x) { return ::f32(x); } \
    NU_DEVICE double name(double x) { return ::f64(x); } \
    NU_DEVICE f16 name(f16 x) { return f16(::f32(float(x))); } \
    NU_DEVICE bf16 name(bf16 x) { return bf16(::f32(float(x))); }
#define NU_MATH2(name, f32, f64) \
    NU_DEVICE float name(float x, float y) { return ::f32(x, y); } \
    NU_DEVICE double name(double x, double y) { return ::f64(x, y); } \
    NU_DEVICE f16 name(f16 x, f16 y) { return f16(::f32(float(x), float(y))); } \
    NU_DEVICE bf16 name(bf16 x, bf16 y) { return bf16(::f32(float(x), float(y))); }

// hypot(x, y) where one operand is at most 2**-54 (float: 2**-25) times the other is the
// larger one exactly: sqrt(1 + r*r) rounds to 1. CUDA's hypot returned inf for
// hypot(5e-324, 1.8e308) on an H100 (complex ** then gave nan); such pairs are answered
// here, the others by CUDA. NaN and inf operands keep C's rules (hypot(inf, nan) = inf).
NU_DEVICE double hypot_of(double x, double y) {
    const double ax = ::fabs(x), ay = ::fabs(y);
    const double big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
    return small <= big * 0x1p-54 ? big : ::hypot(x, y);
}
NU_DEVICE float hypot_of(float x, float y) {
    const float ax = ::fabsf(x), ay = ::fabsf(y);
    const float big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
    return small <= big * 0x1p-25f ? big : ::hypotf(x, y);
}

NU_MATH1(sin, sinf, sin)
NU_MATH1(cos, cosf, cos)
NU_MATH1(tan, tanf, tan)
NU_MATH1(asin, asinf, asin)
NU_MATH1(acos, acosf, acos)
NU_MATH1(atan, atanf, atan)
NU_MATH1(sinh, sinhf, sinh)
NU_MATH1(cosh, coshf, cosh)
NU_MATH1(tanh, tanhf, tanh)
NU_MATH1(asinh, asinhf, asinh)
NU_MATH1(acosh, acoshf, acosh)
NU_MATH1(atanh, atanhf, atanh)
NU_MATH1(exp, expf, exp)
NU_MATH1(exp2, exp2f, exp2)
NU_MATH1(expm1, expm1f, expm1)
NU_MATH1(log, logf, log)
NU_MATH1(log2, log2f, log2)
NU_MATH1(log10, log10f, log10)
NU_MATH1(log1p, log1pf, log1p)
NU_MATH1(sqrt, sqrtf, sqrt)
NU_MATH1(cbrt, cbrtf, cbrt)
NU_MATH1(fabs, fabsf, fabs)
NU_MATH1(floor, floorf, floor)
NU_MATH1(ceil, ceilf, ceil)
NU_MATH1(trunc, truncf, trunc)
NU_MATH1(rint, rintf, rint)
NU_MATH1(erf, erff, erf)
NU_MATH1(erfc, erfcf, erfc)
NU_MATH1(tgamma, tgammaf, tgamma)
NU_MATH1(lgamma, lgammaf, lgamma)
NU_MATH2(atan2, atan2f, atan2)
NU_MATH2(pow, powf, pow)
NU_DEVICE float hypot(float x, float y) { return hypot_of(x, y); }
NU_DEVICE double hypot(double x, double y) { return hypot_of(x, y); }
NU_DEVICE f16 hypot(f16 x, f16 y) { return f16(hypot_of(float(x), float(y))); }
NU_DEVICE bf16 hypot(bf16 x, bf16 y) { return bf16(hypot_of(float(x), float(y))); }
NU_MATH2(fmod, fmodf, fmod)
NU_MATH2(copysign, copysignf, copysign)
NU_MATH2(fmin, fminf, fmin)
NU_MATH2(fmax, fmaxf, fmax)
NU_MATH2(nextafter, nextafterf, nextafter)
NU_MATH2(remainder, remainderf, remainder)

#undef NU_MATH1
#undef NU_MATH2

NU_DEVICE float ldexp(float x, i64 e) { return ::ldexpf(x, int(e < -100000 ? -100000 : e > 100000 ? 100000 : e)); }
NU_DEVICE double ldexp(double x, i64 e) { return ::ldexp(x, int(e < -100000 ? -100000 : e > 100000 ? 100000 : e)); }
NU_DEVICE f16 ldexp(f16 x, i64 e) { return f16(ldexp(float(x), e)); }
NU_DEVICE bf16 ldexp(bf16 x, i64 e) { return bf16(ldexp(float(x), e)); }

template <class T>
NU_DEVICE tuple2<T, i64> frexp(T x) {
    if constexpr (is_half<T>) {
        const tuple2<float, i64> r = frexp(float(x));
        return {T(r.v0), r.v1};
    } else {
        int e = 0;
        T m = T(::frexp(x, &e));
        if (!isfinite(x)) return {x, 0};  // Python: frexp(inf) == (inf, 0), frexp(nan) == (nan, 0)
        return {m, i64(e)};
    }
}
// Python's math.modf returns (fractional part, integral part), both with x's sign.
template <class T>
NU_DEVICE tuple2<T, T> modf(T x) {
    if constexpr (is_half<T>) {
        const tuple2<float, float> r = modf(float(x));
        return {T(r.v0), T(r.v1)};
    } else {
        T ip;
        T fp = T(::modf(x, &ip));
        return {fp, ip};
    }
}

// NumPy's np.sign: -1, 0 or 1 with the argument's type; NaN stays NaN.
template <class T>
NU_DEVICE T sign(T x) {
    if constexpr (is_float<T>) {
        if (isnan(x)) return x;
    }
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
}

// np.maximum/np.minimum propagate NaN from either side (unlike Python's max/min).
template <class T> NU_DEVICE T np_maximum(T a, T b) {
    if constexpr (is_float<T>) {
        if (isnan(a)) return a;
        if (isnan(b)) return b;
    }
    return a >= b ? a : b;
}
template <class T> NU_DEVICE T np_minimum(T a, T b) {
    if constexpr (is_float<T>) {
        if (isnan(a)) return a;
        if (isnan(b)) return b;
    }
    return a <= b ? a : b;
}

template <class T> NU_DEVICE bool signbit(T x) {
    if constexpr (is_half<T>) return (x.bits >> 15) != 0;
    else return ::signbit(x);
}

// Python's math.radians/degrees multiply by a pre-rounded constant; do the same.
template <class T> NU_DEVICE T radians(T x) {
    if constexpr (is_half<T>) return T(radians(float(x)));
    else return x * T(3.141592653589793 / 180.0);
}
template <class T> NU_DEVICE T degrees(T x) {
    if constexpr (is_half<T>) return T(degrees(float(x)));
    else return x * T(180.0 / 3.141592653589793);
}

// Float power: C pow for both NumPy and Python semantics (a negative base with a
// non-integer exponent gives NaN, as for NumPy scalars).
template <class T> NU_DEVICE T fpow(T a, T b) { return pow(a, b); }

// 10**n for 0 <= n <= 22, exact (every intermediate power is a double).
NU_DEVICE double exact_pow10(int n) {
    double p = 1.0;
    for (int i = 0; i < n; ++i) p *= 10.0;
    return p;
}

// round(x, nd) for |nd| <= 22 rounded as CPython does, from x's exact decimal value:
// the nearest multiple k * 10**-nd (ties to even k), then the double nearest to it. The
// tie test compares x with the midpoint exactly (fma gives the exact error of a product),
// so 2.675 (below 2.675 as a double) rounds to 2.67 and 0.3425 (above) to 0.343, as in
// Python. |x| * 10**nd >= 2**53: x is within half an ulp of the result, which is x.
NU_DEVICE double round_exact(double x, int nd) {
    double r;
    if (nd >= 0) {
        const double p = exact_pow10(nd);
        const double hi = x * p;
        if (!(::fabs(hi) < 9007199254740992.0)) return x;  // 2**53, or an overflow
        const double lo = ::fma(x, p, -hi);                  // x * p == hi + lo exactly
        double f = ::floor(hi);
        if (f == hi && lo < 0) f -= 1;  // the exact floor of hi + lo
        const double d = ((hi - f) - 0.5) + lo;              // sign of (x * p - f - 0.5)
        const double k = d > 0 ? f + 1 : d < 0 ? f : (::fmod(f, 2.0) == 0 ? f : f + 1);
        r = k / p;  // k and p exact: one correctly rounded division
    } else {
        const double p = exact_pow10(-nd);
        double q = ::floor(x / p);
        if (::fma(-q, p, x) < 0) q -= 1;  // the exact floor of x / p
        else if (::fma(-(q + 1), p, x) >= 0) q += 1;
        const double e = ::fma(-(2 * q + 1), p, 2 * x);  // sign of x - (q + 0.5) * p
        const double k = e > 0 ? q + 1 : e < 0 ? q : (::fmod(q, 2.0) == 0 ? q : q + 1);
        r = k * p;
    }
    return r == 0 ? ::copysign(0.0, x) : r;
}

// Python's round(x, ndigits) on a float, computed in double for every float type (so
// float32 x rounds its exact value: round(float32(0.3425), 3) == 0.343, as Numba and Python
// give): correctly rounded for |ndigits| <= 22; beyond, CPython's scaling algorithm (as
// Numba uses), which may be 1 ulp off. x itself when inf, NaN or when the scaling overflows
// (it has fewer decimals than asked); a signed zero when 10**-ndigits overflows (CPython).
template <class T>
NU_DEVICE T round_digits(T x, i64 ndigits) {
    const double xd = double(x);
    if (isinf(xd) || isnan(xd) || xd == 0.0 || ndigits > 1074) return x;
    if (ndigits < -308) return T(0.0 * xd);
    if (ndigits >= -22 && ndigits <= 22) return T(round_exact(xd, int(ndigits)));
    double pow1, pow2 = 1.0, y;
    if (ndigits > 0) {  // ndigits > 22: each factor finite where their product may not be
        pow1 = ::pow(10.0, double(ndigits - 22));
        pow2 = 1e22;
        y = (xd * pow1) * pow2;
        if (isinf(y)) return x;
    } else {
        pow1 = ::pow(10.0, double(-ndigits));
        y = xd / pow1;
    }
    double z = ::round(y);
    if (::fabs(y - z) == 0.5) z = 2.0 * ::round(y / 2.0);  // halfway: to even
    z = ndigits >= 0 ? (z / pow2) / pow1 : z * pow1;
    return T(z == 0 ? ::copysign(0.0, xd) : z);
}

}  // namespace nu
