// src/kernels/host_math.h: the C++ overloads of the C math library, without <cmath>
//
// Host builds only (host_prelude.h). libstdc++'s <math.h> pulls in <cmath> and its
// templates (special functions, type traits): parsing it is about 0.2 s of every host
// build, and it is most of the precompiled header. host_prelude.h includes the C library's
// math.h instead and this file adds what <cmath> adds to the global namespace, with the
// same signatures and results (libstdc++ also forwards to the __builtin_ functions):
// float and long double overloads of every C99 function, integer arguments computed in
// double, mixed arithmetic arguments promoted (float and int -> double), and the
// classification macros (isnan, signbit...) replaced by overloaded functions.
// tests/test_host_build.py checks the result types against the C++ standard's.
#pragma once

#undef fpclassify
#undef isfinite
#undef isinf
#undef isnan
#undef isnormal
#undef signbit
#undef isgreater
#undef isgreaterequal
#undef isless
#undef islessequal
#undef islessgreater
#undef isunordered

namespace nu_host_math {
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { using type = T; };
template <class T> struct is_int { static constexpr bool value = false; };
#define NU_HOST_INT(T) template <> struct is_int<T> { static constexpr bool value = true; };
NU_HOST_INT(bool)
NU_HOST_INT(char)
NU_HOST_INT(signed char)
NU_HOST_INT(unsigned char)
NU_HOST_INT(wchar_t)
NU_HOST_INT(char16_t)
NU_HOST_INT(char32_t)
NU_HOST_INT(short)
NU_HOST_INT(unsigned short)
NU_HOST_INT(int)
NU_HOST_INT(unsigned int)
NU_HOST_INT(long)
NU_HOST_INT(unsigned long)
NU_HOST_INT(long long)
NU_HOST_INT(unsigned long long)
NU_HOST_INT(__int128)
NU_HOST_INT(unsigned __int128)
#undef NU_HOST_INT
// The type <cmath> computes a mixed call in: long double if either is, else double. The
// traits have no member for other types, so the templates below drop out of overload
// resolution for them (a class converting to float then takes the float overload).
template <class T, bool = is_int<T>::value> struct level {};
template <class T> struct level<T, true> { static constexpr int value = 1; };
template <> struct level<float, false> { static constexpr int value = 0; };
template <> struct level<double, false> { static constexpr int value = 1; };
template <> struct level<long double, false> { static constexpr int value = 2; };
constexpr int max_level(int a, int b) { return a > b ? a : b; }
template <int L> struct of_level { using type = double; };
template <> struct of_level<2> { using type = long double; };
template <class A, class B> struct same { static constexpr bool value = false; };
template <class A> struct same<A, A> { static constexpr bool value = true; };
// Arguments that are not all the same floating type: double, or long double.
template <class A, class B>
using mixed2 = typename enable_if<!(same<A, B>::value && !is_int<A>::value),
                                  typename of_level<max_level(level<A>::value, level<B>::value)>::type>::type;
template <class A, class B, class C>
using mixed3 = typename enable_if<
    !(same<A, B>::value && same<B, C>::value && !is_int<A>::value),
    typename of_level<max_level(max_level(level<A>::value, level<B>::value), level<C>::value)>::type>::type;
template <class T> using int_double = typename enable_if<is_int<T>::value, double>::type;
template <class T, class R> using if_int = typename enable_if<is_int<T>::value, R>::type;
}  // namespace nu_host_math

// f(float), f(long double), f(integer) -> double; f(double) is the C library's.
#define NU_HOST_M1(fn)                                                                           \
    inline constexpr float fn(float x) { return __builtin_##fn##f(x); }                          \
    inline constexpr long double fn(long double x) { return __builtin_##fn##l(x); }              \
    template <class T> inline constexpr nu_host_math::int_double<T> fn(T x) { return __builtin_##fn(double(x)); }
// The same with another result type R (ilogb: int, lrint: long...).
#define NU_HOST_M1R(fn, R)                                                                       \
    inline constexpr R fn(float x) { return __builtin_##fn##f(x); }                              \
    inline constexpr R fn(long double x) { return __builtin_##fn##l(x); }                        \
    template <class T> inline constexpr nu_host_math::if_int<T, R> fn(T x) { return __builtin_##fn(double(x)); }
#define NU_HOST_M2(fn)                                                                           \
    inline constexpr float fn(float x, float y) { return __builtin_##fn##f(x, y); }              \
    inline constexpr long double fn(long double x, long double y) { return __builtin_##fn##l(x, y); } \
    template <class A, class B> inline constexpr nu_host_math::mixed2<A, B> fn(A x, B y) {      \
        using R = nu_host_math::mixed2<A, B>;                                                   \
        return fn(R(x), R(y));                                                                   \
    }

NU_HOST_M1(acos)
NU_HOST_M1(asin)
NU_HOST_M1(atan)
NU_HOST_M1(cos)
NU_HOST_M1(sin)
NU_HOST_M1(tan)
NU_HOST_M1(acosh)
NU_HOST_M1(asinh)
NU_HOST_M1(atanh)
NU_HOST_M1(cosh)
NU_HOST_M1(sinh)
NU_HOST_M1(tanh)
NU_HOST_M1(exp)
NU_HOST_M1(exp2)
NU_HOST_M1(expm1)
NU_HOST_M1(log)
NU_HOST_M1(log10)
NU_HOST_M1(log1p)
NU_HOST_M1(log2)
NU_HOST_M1(logb)
NU_HOST_M1(cbrt)
NU_HOST_M1(fabs)
NU_HOST_M1(sqrt)
NU_HOST_M1(erf)
NU_HOST_M1(erfc)
NU_HOST_M1(lgamma)
NU_HOST_M1(tgamma)
NU_HOST_M1(ceil)
NU_HOST_M1(floor)
NU_HOST_M1(nearbyint)
NU_HOST_M1(rint)
NU_HOST_M1(round)
NU_HOST_M1(trunc)
NU_HOST_M1R(ilogb, int)
NU_HOST_M1R(lrint, long)
NU_HOST_M1R(llrint, long long)
NU_HOST_M1R(lround, long)
NU_HOST_M1R(llround, long long)
NU_HOST_M2(atan2)
NU_HOST_M2(hypot)
NU_HOST_M2(pow)
NU_HOST_M2(fmod)
NU_HOST_M2(remainder)
NU_HOST_M2(copysign)
NU_HOST_M2(nextafter)
NU_HOST_M2(fdim)
NU_HOST_M2(fmax)
NU_HOST_M2(fmin)

#undef NU_HOST_M1
#undef NU_HOST_M1R
#undef NU_HOST_M2

inline constexpr float fma(float x, float y, float z) { return __builtin_fmaf(x, y, z); }
inline constexpr long double fma(long double x, long double y, long double z) { return __builtin_fmal(x, y, z); }
template <class A, class B, class C>
inline constexpr nu_host_math::mixed3<A, B, C> fma(A x, B y, C z) {
    using R = nu_host_math::mixed3<A, B, C>;
    return fma(R(x), R(y), R(z));
}

inline float frexp(float x, int* e) { return __builtin_frexpf(x, e); }
inline long double frexp(long double x, int* e) { return __builtin_frexpl(x, e); }
template <class T> inline nu_host_math::int_double<T> frexp(T x, int* e) { return __builtin_frexp(double(x), e); }
inline constexpr float ldexp(float x, int e) { return __builtin_ldexpf(x, e); }
inline constexpr long double ldexp(long double x, int e) { return __builtin_ldexpl(x, e); }
template <class T> inline constexpr nu_host_math::int_double<T> ldexp(T x, int e) { return __builtin_ldexp(double(x), e); }
inline constexpr float scalbn(float x, int e) { return __builtin_scalbnf(x, e); }
inline constexpr long double scalbn(long double x, int e) { return __builtin_scalbnl(x, e); }
template <class T> inline constexpr nu_host_math::int_double<T> scalbn(T x, int e) { return __builtin_scalbn(double(x), e); }
inline constexpr float scalbln(float x, long e) { return __builtin_scalblnf(x, e); }
inline constexpr long double scalbln(long double x, long e) { return __builtin_scalblnl(x, e); }
template <class T> inline constexpr nu_host_math::int_double<T> scalbln(T x, long e) { return __builtin_scalbln(double(x), e); }
inline float modf(float x, float* i) { return __builtin_modff(x, i); }
inline long double modf(long double x, long double* i) { return __builtin_modfl(x, i); }
inline float remquo(float x, float y, int* q) { return __builtin_remquof(x, y, q); }
inline long double remquo(long double x, long double y, int* q) { return __builtin_remquol(x, y, q); }
template <class A, class B> inline nu_host_math::mixed2<A, B> remquo(A x, B y, int* q) {
    using R = nu_host_math::mixed2<A, B>;
    return remquo(R(x), R(y), q);
}
inline constexpr float nexttoward(float x, long double y) { return __builtin_nexttowardf(x, y); }
inline constexpr long double nexttoward(long double x, long double y) { return __builtin_nexttowardl(x, y); }
template <class T> inline constexpr nu_host_math::int_double<T> nexttoward(T x, long double y) { return __builtin_nexttoward(double(x), y); }

// abs: the C library has abs(int) (stdlib.h); <cmath>/<cstdlib> add these.
inline long abs(long x) { return __builtin_labs(x); }
inline long long abs(long long x) { return __builtin_llabs(x); }
inline constexpr float abs(float x) { return __builtin_fabsf(x); }
inline constexpr double abs(double x) { return __builtin_fabs(x); }
inline constexpr long double abs(long double x) { return __builtin_fabsl(x); }

// Classification, for float, double, long double and (as double) integers.
#define NU_HOST_C1(f, R, builtin)                                                        \
    inline constexpr R f(float x) { return builtin(x); }                                  \
    inline constexpr R f(double x) { return builtin(x); }                                 \
    inline constexpr R f(long double x) { return builtin(x); }                            \
    template <class T> inline constexpr nu_host_math::if_int<T, R> f(T x) { return builtin(double(x)); }
#define NU_HOST_C2(fn)                                                                     \
    template <class A, class B, int = nu_host_math::level<A>::value + nu_host_math::level<B>::value> \
    inline constexpr bool fn(A x, B y) {                       \
        using R = typename nu_host_math::of_level<nu_host_math::max_level(                \
            nu_host_math::level<A>::value, nu_host_math::level<B>::value)>::type;        \
        if constexpr (nu_host_math::same<A, B>::value && !nu_host_math::is_int<A>::value) \
            return __builtin_##fn(x, y);                                                   \
        else                                                                              \
            return __builtin_##fn(R(x), R(y));                                             \
    }

NU_HOST_C1(isfinite, bool, __builtin_isfinite)
NU_HOST_C1(isinf, bool, __builtin_isinf)
NU_HOST_C1(isnan, bool, __builtin_isnan)
NU_HOST_C1(isnormal, bool, __builtin_isnormal)
NU_HOST_C1(signbit, bool, __builtin_signbit)
inline constexpr int fpclassify(float x) { return __builtin_fpclassify(FP_NAN, FP_INFINITE, FP_NORMAL, FP_SUBNORMAL, FP_ZERO, x); }
inline constexpr int fpclassify(double x) { return __builtin_fpclassify(FP_NAN, FP_INFINITE, FP_NORMAL, FP_SUBNORMAL, FP_ZERO, x); }
inline constexpr int fpclassify(long double x) { return __builtin_fpclassify(FP_NAN, FP_INFINITE, FP_NORMAL, FP_SUBNORMAL, FP_ZERO, x); }
template <class T> inline constexpr nu_host_math::if_int<T, int> fpclassify(T x) { return fpclassify(double(x)); }
NU_HOST_C2(isgreater)
NU_HOST_C2(isgreaterequal)
NU_HOST_C2(isless)
NU_HOST_C2(islessequal)
NU_HOST_C2(islessgreater)
NU_HOST_C2(isunordered)

#undef NU_HOST_C1
#undef NU_HOST_C2
