// src/kernels/nu_libdevice.cuh: numba.cuda.libdevice (CUDA's libdevice functions, by name)
//
// nu::libdevice::<name> for each name of compiler/_libdevice.py's table, with its types.
// On the GPU each is the CUDA math API function or intrinsic that NVRTC lowers to the
// __nv_ function. On the host backend: the C library's function where it computes the same
// thing (C99/POSIX math), a bit-exact emulation where CUDA defines the result exactly
// (integer intrinsics, conversions, directed-rounding arithmetic, which runs with the FPU's
// rounding mode set), and an accurate implementation where CUDA's is approximate
// (cospi, erfinv, normcdf, the fast_ intrinsics...): tests/test_libdevice.py states the
// tolerance per function. Included only by units that call a libdevice function.
#pragma once

#ifdef NU_HOST_BUILD
#include <fenv.h>
#define NU_LD(dev, host) host
#else
#define NU_LD(dev, host) dev
#endif

namespace nu {
namespace libdevice {

using half_detail::f32_bits;
using half_detail::f32_from_bits;
using half_detail::f64_bits;
using half_detail::f64_from_bits;
using u32 = unsigned int;
using u64 = unsigned long long;

// ---- host emulation helpers ---------------------------------------------------------------
#ifdef NU_HOST_BUILD
namespace host {
constexpr int modes[4] = {FE_DOWNWARD, FE_TONEAREST, FE_UPWARD, FE_TOWARDZERO};  // rd rn ru rz

// op() with the FPU rounding in mode m. Its operands are read from volatiles and its
// result stored to one, so the compiler neither folds the operation nor moves it outside
// the window in which the mode is set.
template <class T, class Op>
inline T rounded(int m, Op op) {
    const int old = fegetround();
    fesetround(modes[m]);
    volatile T r = op();
    fesetround(old);
    return r;
}
template <class T> inline T add(int m, T x, T y) {
    return rounded<T>(m, [&] { volatile T a = x, b = y; return T(a + b); });
}
template <class T> inline T sub(int m, T x, T y) {
    return rounded<T>(m, [&] { volatile T a = x, b = y; return T(a - b); });
}
template <class T> inline T mul(int m, T x, T y) {
    return rounded<T>(m, [&] { volatile T a = x, b = y; return T(a * b); });
}
template <class T> inline T div(int m, T x, T y) {
    return rounded<T>(m, [&] { volatile T a = x, b = y; return T(a / b); });
}
inline double sqrt_(int m, double x) { return rounded<double>(m, [&] { volatile double a = x; return ::sqrt(a); }); }
inline float sqrt_(int m, float x) { return rounded<float>(m, [&] { volatile float a = x; return ::sqrtf(a); }); }
inline double fma_(int m, double x, double y, double z) {
    return rounded<double>(m, [&] { volatile double a = x, b = y, c = z; return ::fma(a, b, c); });
}
inline float fma_(int m, float x, float y, float z) {
    return rounded<float>(m, [&] { volatile float a = x, b = y, c = z; return ::fmaf(a, b, c); });
}
template <class To, class From> inline To convert(int m, From x) {
    return rounded<To>(m, [&] { volatile From a = x; return To(a); });
}
// Rounds to an integral value in mode m (rn: half to even).
template <class T> inline T integral(int m, T x) {
    return m == 0 ? ::floor(x) : m == 2 ? ::ceil(x) : m == 3 ? ::trunc(x) : ::nearbyint(x);
}
// CUDA's saturating float -> integer conversions: out-of-range values clamp; a NaN gives 0
// (32-bit results) or 0x8000000000000000 (64-bit results), but 0x80000000 from
// __double2int_* and __double2uint_* (an H100's answers).
template <class I> inline I to_int(int m, double x, bool from_double = false) {
    constexpr bool is_signed = I(-1) < I(0);
    constexpr bool wide = sizeof(I) == 8;
    if (x != x) return wide || from_double ? I(u64(1) << (sizeof(I) * 8 - 1)) : I(0);
    const double v = integral(m, x);
    const double lo = is_signed ? -(wide ? 9223372036854775808.0 : 2147483648.0) : 0.0;
    const double hi = wide ? (is_signed ? 9223372036854775808.0 : 18446744073709551616.0)
                           : (is_signed ? 2147483648.0 : 4294967296.0);
    using U = decltype(u64(0) + I(0));  // the unsigned type of I's width (or wider)
    constexpr U top = U(1) << (sizeof(I) * 8 - 1);
    if (v <= lo) return is_signed ? I(top) : I(0);              // the minimum
    if (v >= hi) return is_signed ? I(top - 1) : I(~U(0));      // the maximum
    return I(v);
}
// erfc(x) = c for 0 < c < 1, by Newton's method on log(erfc(x)) - log(c).
inline double erfcinv_small(double c) {
    const double lc = ::log(c);
    double x = c > 0.25 ? (1.0 - c) * 0.886226925452758 : ::sqrt(-lc - 0.5 * ::log(-lc));
    for (int i = 0; i < 100; ++i) {
        const double e = ::erfc(x);
        const double slope = -1.1283791670955126 * ::exp(-x * x) / e;  // d log(erfc) / dx
        const double dx = (::log(e) - lc) / slope;
        x -= dx;
        if (::fabs(dx) <= 1e-17 * ::fabs(x)) break;
    }
    return x;
}
inline double erfcinv(double c) {
    if (c != c) return c;
    if (c < 0.0 || c > 2.0) return __builtin_nan("");
    if (c == 0.0) return __builtin_inf();
    if (c == 2.0) return -__builtin_inf();
    if (c == 1.0) return 0.0;
    return c < 1.0 ? erfcinv_small(c) : -erfcinv_small(2.0 - c);  // 2 - c is exact
}
inline double erfinv(double y) {
    if (y != y) return y;
    if (y < -1.0 || y > 1.0) return __builtin_nan("");
    if (y == 1.0 || y == -1.0) return y * __builtin_inf();
    if (y == 0.0) return y;
    const double a = ::fabs(y);
    double x;
    if (a >= 0.5) {
        x = erfcinv(1.0 - a);  // 1 - a is exact
    } else {  // Newton's method on erf(x) - a from the first term of the series
        x = a * 0.886226925452758;
        for (int i = 0; i < 50; ++i) {
            const double dx = (::erf(x) - a) / (1.1283791670955126 * ::exp(-x * x));
            x -= dx;
            if (::fabs(dx) <= 1e-17 * x) break;
        }
    }
    return y < 0 ? -x : x;
}
inline double erfcx(double x) {
    if (x != x) return x;
    if (x < 26.0) {  // exp(x*x) with x*x split exactly in two parts
        const double h = x * x, l = ::fma(x, x, -h);
        return ::exp(h) * (1.0 + l) * ::erfc(x);
    }
    // asymptotic series: 1/(x sqrt(pi)) * sum (-1)^k (2k-1)!! / (2x^2)^k
    const double t = 1.0 / (2.0 * x * x);
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 10; ++k) {
        term *= -(2.0 * k - 1.0) * t;
        sum += term;
    }
    return sum * 0.5641895835477563 / x;
}
// sin(pi x) and cos(pi x) for x = remainder(x, 2): exact arguments reduce exactly.
inline double sinpi(double x) {
    if (x - x != 0.0) return __builtin_nan("");
    const double r = ::remainder(x, 2.0);  // [-1, 1], exact
    double y = ::fabs(r);
    if (y > 0.5) y = 1.0 - y;  // exact
    double s = y == 0.0 ? 0.0 : ::sin(3.141592653589793 * y);
    if (y > 0.25) s = ::cos(3.141592653589793 * (0.5 - y));
    return (r < 0 || (r == 0 && f64_bits(x) >> 63)) ? -s : s;
}
inline double cospi(double x) {
    if (x - x != 0.0) return __builtin_nan("");
    const double r = ::fabs(::remainder(x, 2.0));  // [0, 1]
    const double c = sinpi(0.5 - r);               // exact argument
    return c == 0.0 ? 0.0 : c;
}
inline u32 brev32(u32 x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
inline u64 brev64(u64 x) { return (u64(brev32(u32(x))) << 32) | brev32(u32(x >> 32)); }
}  // namespace host
#endif

// ---- float math: the CUDA math API function of the same name ------------------------------
#define NU_LD_1(name, fname)                                                   \
    NU_DEVICE double name(double x) { return ::name(x); }                      \
    NU_DEVICE float fname(float x) { return ::fname(x); }
#define NU_LD_2(name, fname)                                                   \
    NU_DEVICE double name(double x, double y) { return ::name(x, y); }         \
    NU_DEVICE float fname(float x, float y) { return ::fname(x, y); }

NU_LD_1(acos, acosf) NU_LD_1(acosh, acoshf) NU_LD_1(asin, asinf) NU_LD_1(asinh, asinhf)
NU_LD_1(atan, atanf) NU_LD_1(atanh, atanhf) NU_LD_1(cbrt, cbrtf) NU_LD_1(ceil, ceilf)
NU_LD_1(cos, cosf) NU_LD_1(cosh, coshf) NU_LD_1(erf, erff) NU_LD_1(erfc, erfcf)
NU_LD_1(exp, expf) NU_LD_1(exp10, exp10f) NU_LD_1(exp2, exp2f) NU_LD_1(expm1, expm1f)
NU_LD_1(fabs, fabsf) NU_LD_1(floor, floorf) NU_LD_1(j0, j0f) NU_LD_1(j1, j1f)
NU_LD_1(lgamma, lgammaf) NU_LD_1(log, logf) NU_LD_1(log10, log10f) NU_LD_1(log1p, log1pf)
NU_LD_1(log2, log2f) NU_LD_1(logb, logbf) NU_LD_1(nearbyint, nearbyintf) NU_LD_1(rint, rintf)
NU_LD_1(round, roundf) NU_LD_1(sin, sinf) NU_LD_1(sinh, sinhf) NU_LD_1(sqrt, sqrtf)
NU_LD_1(tan, tanf) NU_LD_1(tanh, tanhf) NU_LD_1(tgamma, tgammaf) NU_LD_1(trunc, truncf)
NU_LD_1(y0, y0f) NU_LD_1(y1, y1f)
NU_LD_2(atan2, atan2f) NU_LD_2(copysign, copysignf) NU_LD_2(fdim, fdimf) NU_LD_2(fmax, fmaxf)
NU_LD_2(fmin, fminf) NU_LD_2(fmod, fmodf) NU_LD_2(hypot, hypotf) NU_LD_2(nextafter, nextafterf)
NU_LD_2(pow, powf) NU_LD_2(remainder, remainderf)
#undef NU_LD_1
#undef NU_LD_2

// CUDA-only functions: on the host, the accurate double implementations above.
#define NU_LD_CUDA_1(name, fname, host_expr)                                                \
    NU_DEVICE double name(double x) { return NU_LD(::name(x), host_expr); }                 \
    NU_DEVICE float fname(float x) {                                                        \
        return NU_LD(::fname(x), float([](double x) { return host_expr; }(double(x))));     \
    }
NU_LD_CUDA_1(cospi, cospif, host::cospi(x))
NU_LD_CUDA_1(sinpi, sinpif, host::sinpi(x))
NU_LD_CUDA_1(rsqrt, rsqrtf, 1.0 / ::sqrt(x))
NU_LD_CUDA_1(rcbrt, rcbrtf, 1.0 / ::cbrt(x))
NU_LD_CUDA_1(erfinv, erfinvf, host::erfinv(x))
NU_LD_CUDA_1(erfcinv, erfcinvf, host::erfcinv(x))
NU_LD_CUDA_1(erfcx, erfcxf, host::erfcx(x))
NU_LD_CUDA_1(normcdf, normcdff, 0.5 * ::erfc(-x * 0.7071067811865476))
NU_LD_CUDA_1(normcdfinv, normcdfinvf, -1.4142135623730951 * host::erfcinv(2.0 * x))
#undef NU_LD_CUDA_1

NU_DEVICE double fma(double x, double y, double z) { return ::fma(x, y, z); }
NU_DEVICE float fmaf(float x, float y, float z) { return ::fmaf(x, y, z); }
NU_DEVICE int ilogb(double x) { return ::ilogb(x); }
NU_DEVICE int ilogbf(float x) { return ::ilogbf(x); }
NU_DEVICE long long llrint(double x) { return ::llrint(x); }
NU_DEVICE long long llrintf(float x) { return ::llrintf(x); }
NU_DEVICE long long llround(double x) { return ::llround(x); }
NU_DEVICE long long llroundf(float x) { return ::llroundf(x); }
NU_DEVICE double ldexp(double x, int e) { return ::ldexp(x, e); }
NU_DEVICE float ldexpf(float x, int e) { return ::ldexpf(x, e); }
NU_DEVICE double scalbn(double x, int e) { return ::scalbn(x, e); }
NU_DEVICE float scalbnf(float x, int e) { return ::scalbnf(x, e); }
NU_DEVICE double powi(double x, int n) { return ::pow(x, double(n)); }
NU_DEVICE float powif(float x, int n) { return ::powf(x, float(n)); }
NU_DEVICE double jn(int n, double x) { return ::jn(n, x); }
NU_DEVICE float jnf(int n, float x) { return ::jnf(n, x); }
NU_DEVICE double yn(int n, double x) { return ::yn(n, x); }
NU_DEVICE float ynf(int n, float x) { return ::ynf(n, x); }

// ---- several results: a tuple, the function's own result first ----------------------------
NU_DEVICE tuple2<double, int> frexp(double x) { tuple2<double, int> r; r.v0 = ::frexp(x, &r.v1); return r; }
NU_DEVICE tuple2<float, int> frexpf(float x) { tuple2<float, int> r; r.v0 = ::frexpf(x, &r.v1); return r; }
NU_DEVICE tuple2<double, double> modf(double x) { tuple2<double, double> r; r.v0 = ::modf(x, &r.v1); return r; }
NU_DEVICE tuple2<float, float> modff(float x) { tuple2<float, float> r; r.v0 = ::modff(x, &r.v1); return r; }
NU_DEVICE tuple2<double, int> remquo(double x, double y) {
    tuple2<double, int> r; r.v0 = ::remquo(x, y, &r.v1); return r;
}
NU_DEVICE tuple2<float, int> remquof(float x, float y) {
    tuple2<float, int> r; r.v0 = ::remquof(x, y, &r.v1); return r;
}
NU_DEVICE tuple2<double, double> sincos(double x) { tuple2<double, double> r; ::sincos(x, &r.v0, &r.v1); return r; }
NU_DEVICE tuple2<float, float> sincosf(float x) { tuple2<float, float> r; ::sincosf(x, &r.v0, &r.v1); return r; }
NU_DEVICE tuple2<double, double> sincospi(double x) {
    tuple2<double, double> r;
    NU_LD(::sincospi(x, &r.v0, &r.v1), (r.v0 = host::sinpi(x), r.v1 = host::cospi(x)));
    return r;
}
NU_DEVICE tuple2<float, float> sincospif(float x) {
    tuple2<float, float> r;
    NU_LD(::sincospif(x, &r.v0, &r.v1),
          (r.v0 = float(host::sinpi(x)), r.v1 = float(host::cospi(x))));
    return r;
}
NU_DEVICE tuple2<float, float> fast_sincosf(float x) {
    tuple2<float, float> r;
    NU_LD(__sincosf(x, &r.v0, &r.v1), ::sincosf(x, &r.v0, &r.v1));
    return r;
}

// ---- classification (int results) ----------------------------------------------------------
NU_DEVICE int isfinited(double x) { return x - x == 0.0; }
NU_DEVICE int finitef(float x) { return x - x == 0.0f; }
NU_DEVICE int isinfd(double x) { return x == x && x - x != 0.0; }
NU_DEVICE int isinff(float x) { return x == x && x - x != 0.0f; }
NU_DEVICE int isnand(double x) { return x != x; }
NU_DEVICE int isnanf(float x) { return x != x; }
NU_DEVICE int signbitd(double x) { return int(f64_bits(x) >> 63); }
NU_DEVICE int signbitf(float x) { return int(f32_bits(x) >> 31); }

// ---- fast (approximate) intrinsics: CUDA's on the GPU, the accurate function on the host ---
NU_DEVICE float fast_cosf(float x) { return NU_LD(__cosf(x), ::cosf(x)); }
NU_DEVICE float fast_sinf(float x) { return NU_LD(__sinf(x), ::sinf(x)); }
NU_DEVICE float fast_tanf(float x) { return NU_LD(__tanf(x), ::tanf(x)); }
NU_DEVICE float fast_expf(float x) { return NU_LD(__expf(x), ::expf(x)); }
NU_DEVICE float fast_exp10f(float x) { return NU_LD(__exp10f(x), ::exp10f(x)); }
NU_DEVICE float fast_logf(float x) { return NU_LD(__logf(x), ::logf(x)); }
NU_DEVICE float fast_log2f(float x) { return NU_LD(__log2f(x), ::log2f(x)); }
NU_DEVICE float fast_log10f(float x) { return NU_LD(__log10f(x), ::log10f(x)); }
// exp2(y * log2(x)), as CUDA documents and an H100 computes it: NaN for x < 0 and for 0**0.
NU_DEVICE float fast_powf(float x, float y) { return NU_LD(__powf(x, y), ::exp2f(y * ::log2f(x))); }
NU_DEVICE float fast_fdividef(float x, float y) { return NU_LD(__fdividef(x, y), x / y); }
NU_DEVICE float saturatef(float x) { return NU_LD(__saturatef(x), x >= 1.0f ? 1.0f : x > 0.0f ? x : 0.0f); }
NU_DEVICE float frsqrt_rn(float x) { return NU_LD(__frsqrt_rn(x), float(1.0 / ::sqrt(double(x)))); }

// ---- directed rounding: __dadd_rd... on the GPU, the FPU in that mode on the host ---------
// Mode index: 0 rd, 1 rn, 2 ru, 3 rz (host::modes).
#define NU_LD_MODES(X) X(rd, 0) X(rn, 1) X(ru, 2) X(rz, 3)
#define NU_LD_ARITH(m, k)                                                                        \
    NU_DEVICE double dadd_##m(double x, double y) { return NU_LD(__dadd_##m(x, y), host::add(k, x, y)); } \
    NU_DEVICE double dmul_##m(double x, double y) { return NU_LD(__dmul_##m(x, y), host::mul(k, x, y)); } \
    NU_DEVICE double ddiv_##m(double x, double y) { return NU_LD(__ddiv_##m(x, y), host::div(k, x, y)); } \
    NU_DEVICE float fadd_##m(float x, float y) { return NU_LD(__fadd_##m(x, y), host::add(k, x, y)); }    \
    NU_DEVICE float fsub_##m(float x, float y) { return NU_LD(__fsub_##m(x, y), host::sub(k, x, y)); }    \
    NU_DEVICE float fmul_##m(float x, float y) { return NU_LD(__fmul_##m(x, y), host::mul(k, x, y)); }    \
    NU_DEVICE float fdiv_##m(float x, float y) { return NU_LD(__fdiv_##m(x, y), host::div(k, x, y)); }    \
    NU_DEVICE double drcp_##m(double x) { return NU_LD(__drcp_##m(x), host::div(k, 1.0, x)); }            \
    NU_DEVICE float frcp_##m(float x) { return NU_LD(__frcp_##m(x), host::div(k, 1.0f, x)); }             \
    NU_DEVICE double dsqrt_##m(double x) { return NU_LD(__dsqrt_##m(x), host::sqrt_(k, x)); }             \
    NU_DEVICE float fsqrt_##m(float x) { return NU_LD(__fsqrt_##m(x), host::sqrt_(k, x)); }               \
    NU_DEVICE double fma_##m(double x, double y, double z) {                                              \
        return NU_LD(__fma_##m(x, y, z), host::fma_(k, x, y, z));                                          \
    }                                                                                                      \
    NU_DEVICE float fmaf_##m(float x, float y, float z) {                                                 \
        return NU_LD(__fmaf_##m(x, y, z), host::fma_(k, x, y, z));                                         \
    }
NU_LD_MODES(NU_LD_ARITH)
#undef NU_LD_ARITH

// ---- conversions ---------------------------------------------------------------------------
#define NU_LD_CONV(m, k)                                                                                 \
    NU_DEVICE float double2float_##m(double x) { return NU_LD(__double2float_##m(x), host::convert<float>(k, x)); } \
    NU_DEVICE int double2int_##m(double x) { return NU_LD(__double2int_##m(x), host::to_int<int>(k, x, true)); }    \
    NU_DEVICE int double2uint_##m(double x) { return int(NU_LD(__double2uint_##m(x), host::to_int<u32>(k, x, true))); } \
    NU_DEVICE long long double2ll_##m(double x) { return NU_LD(__double2ll_##m(x), host::to_int<long long>(k, x)); } \
    NU_DEVICE long long double2ull_##m(double x) {                                                       \
        return (long long)NU_LD(__double2ull_##m(x), host::to_int<u64>(k, x));                           \
    }                                                                                                    \
    NU_DEVICE int float2int_##m(float x) { return NU_LD(__float2int_##m(x), host::to_int<int>(k, x)); }             \
    NU_DEVICE int float2uint_##m(float x) { return int(NU_LD(__float2uint_##m(x), host::to_int<u32>(k, x))); }      \
    NU_DEVICE long long float2ll_##m(float x) { return NU_LD(__float2ll_##m(x), host::to_int<long long>(k, x)); }   \
    NU_DEVICE long long float2ull_##m(float x) {                                                         \
        return (long long)NU_LD(__float2ull_##m(x), host::to_int<u64>(k, x));                            \
    }                                                                                                    \
    NU_DEVICE float int2float_##m(int x) { return NU_LD(__int2float_##m(x), host::convert<float>(k, x)); }          \
    NU_DEVICE float uint2float_##m(int x) { return NU_LD(__uint2float_##m(u32(x)), host::convert<float>(k, u32(x))); } \
    NU_DEVICE float ll2float_##m(long long x) { return NU_LD(__ll2float_##m(x), host::convert<float>(k, x)); }      \
    NU_DEVICE float ull2float_##m(long long x) {                                                         \
        return NU_LD(__ull2float_##m(u64(x)), host::convert<float>(k, u64(x)));                          \
    }                                                                                                    \
    NU_DEVICE double ll2double_##m(long long x) { return NU_LD(__ll2double_##m(x), host::convert<double>(k, x)); }  \
    NU_DEVICE double ull2double_##m(long long x) {                                                       \
        return NU_LD(__ull2double_##m(u64(x)), host::convert<double>(k, u64(x)));                        \
    }
NU_LD_MODES(NU_LD_CONV)
#undef NU_LD_CONV
#undef NU_LD_MODES

NU_DEVICE double int2double_rn(int x) { return double(x); }
NU_DEVICE double uint2double_rn(int x) { return double(u32(x)); }
NU_DEVICE int double2hiint(double x) { return int(u32(f64_bits(x) >> 32)); }
NU_DEVICE int double2loint(double x) { return int(u32(f64_bits(x))); }
NU_DEVICE double hiloint2double(int hi, int lo) { return f64_from_bits((u64(u32(hi)) << 32) | u32(lo)); }
NU_DEVICE long long double_as_longlong(double x) { return (long long)f64_bits(x); }
NU_DEVICE double longlong_as_double(long long x) { return f64_from_bits(u64(x)); }
NU_DEVICE int float_as_int(float x) { return int(f32_bits(x)); }
NU_DEVICE float int_as_float(int x) { return f32_from_bits(u32(x)); }
NU_DEVICE short float2half_rn(float x) { return short(f16(x).bits); }
NU_DEVICE float half2float(short h) { return float(f16::from_bits(u16(h))); }

// ---- integer intrinsics --------------------------------------------------------------------
NU_DEVICE int abs(int x) { return x < 0 ? int(0u - u32(x)) : x; }  // abs(INT_MIN) = INT_MIN
NU_DEVICE long long llabs(long long x) { return x < 0 ? (long long)(0ull - u64(x)) : x; }
NU_DEVICE int brev(int x) { return int(NU_LD(__brev(u32(x)), host::brev32(u32(x)))); }
NU_DEVICE long long brevll(long long x) { return (long long)NU_LD(__brevll(u64(x)), host::brev64(u64(x))); }
NU_DEVICE int clz(int x) { return NU_LD(__clz(x), x ? __builtin_clz(u32(x)) : 32); }
NU_DEVICE int clzll(long long x) { return NU_LD(__clzll(x), x ? __builtin_clzll(u64(x)) : 64); }
NU_DEVICE int ffs(int x) { return NU_LD(__ffs(x), __builtin_ffs(x)); }
NU_DEVICE int ffsll(long long x) { return NU_LD(__ffsll(x), __builtin_ffsll(x)); }
NU_DEVICE int popc(int x) { return NU_LD(__popc(u32(x)), __builtin_popcount(u32(x))); }
NU_DEVICE int popcll(long long x) { return NU_LD(__popcll(u64(x)), __builtin_popcountll(u64(x))); }
NU_DEVICE int hadd(int x, int y) { return int((long long)x + y >> 1); }
NU_DEVICE int rhadd(int x, int y) { return int((long long)x + y + 1 >> 1); }
NU_DEVICE int uhadd(int x, int y) { return int(u32((u64(u32(x)) + u32(y)) >> 1)); }
NU_DEVICE int urhadd(int x, int y) { return int(u32((u64(u32(x)) + u32(y) + 1) >> 1)); }
// The low 24 bits of each, as signed (mul24) or unsigned (umul24) values; the low 32 bits
// of the product (PTX mul24.lo).
NU_DEVICE int mul24(int x, int y) {
    const long long a = (long long)(int(u32(x) << 8) >> 8), b = (long long)(int(u32(y) << 8) >> 8);
    return int(u32(u64(a * b)));
}
NU_DEVICE int umul24(int x, int y) { return int(u32(u64(u32(x) & 0xffffffu) * (u32(y) & 0xffffffu))); }
NU_DEVICE int mulhi(int x, int y) { return int((long long)x * y >> 32); }
NU_DEVICE int umulhi(int x, int y) { return int(u32(u64(u32(x)) * u32(y) >> 32)); }
NU_DEVICE long long mul64hi(long long x, long long y) {
    return NU_LD(__mul64hi(x, y), (long long)((__int128)x * y >> 64));
}
NU_DEVICE long long umul64hi(long long x, long long y) {
    return (long long)NU_LD(__umul64hi(u64(x), u64(y)), u64((unsigned __int128)u64(x) * u64(y) >> 64));
}
NU_DEVICE int sad(int x, int y, int z) { return int((x > y ? u32(x) - u32(y) : u32(y) - u32(x)) + u32(z)); }
NU_DEVICE int usad(int x, int y, int z) {
    const u32 a = u32(x), b = u32(y);
    return int((a > b ? a - b : b - a) + u32(z));
}
NU_DEVICE int max(int x, int y) { return x > y ? x : y; }
NU_DEVICE int min(int x, int y) { return x < y ? x : y; }
NU_DEVICE int umax(int x, int y) { return u32(x) > u32(y) ? x : y; }
NU_DEVICE int umin(int x, int y) { return u32(x) < u32(y) ? x : y; }
NU_DEVICE long long llmax(long long x, long long y) { return x > y ? x : y; }
NU_DEVICE long long llmin(long long x, long long y) { return x < y ? x : y; }
NU_DEVICE long long ullmax(long long x, long long y) { return u64(x) > u64(y) ? x : y; }
NU_DEVICE long long ullmin(long long x, long long y) { return u64(x) < u64(y) ? x : y; }
// byte s of the 8 bytes {y, x} for each selector nibble s (its low 3 bits): PTX prmt.
NU_DEVICE int byte_perm(int x, int y, int s) {
    const u64 v = (u64(u32(y)) << 32) | u32(x);
    u32 r = 0;
    for (int i = 0; i < 4; ++i) r |= u32((v >> (8 * ((u32(s) >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
    return int(r);
}

}  // namespace libdevice
}  // namespace nu
#undef NU_LD
