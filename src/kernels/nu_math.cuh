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
NU_MATH2(hypot, hypotf, hypot)
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

// Python's round(x, ndigits) as Numba computes it (CPython's algorithm without its
// correctly rounded decimal conversion): in double for every float type, so float32 x
// rounds its exact value (round(float32(0.3425), 3) == 0.343, as Python gives for the
// float); half to even at the scaled value; x itself when the scaling overflows (it has
// fewer decimals than asked) or x is inf or NaN; a signed zero when ndigits is so negative
// that 10**-ndigits overflows (CPython).
template <class T>
NU_DEVICE T round_digits(T x, i64 ndigits) {
    const double xd = double(x);
    if (isinf(xd) || isnan(xd) || ndigits > 1074) return x;
    if (ndigits < -308) return T(0.0 * xd);
    double pow1, pow2 = 1.0, y;
    if (ndigits >= 0) {
        if (ndigits > 22) {  // each factor finite where their product may not be
            pow1 = ::pow(10.0, double(ndigits - 22));
            pow2 = 1e22;
        } else {
            pow1 = ::pow(10.0, double(ndigits));
        }
        y = (xd * pow1) * pow2;
        if (isinf(y)) return x;
    } else {
        pow1 = ::pow(10.0, double(-ndigits));
        y = xd / pow1;
    }
    double z = ::round(y);
    if (::fabs(y - z) == 0.5) z = 2.0 * ::round(y / 2.0);  // halfway: to even
    z = ndigits >= 0 ? (z / pow2) / pow1 : z * pow1;
    return T(z);
}

}  // namespace nu
