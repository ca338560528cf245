// src/kernels/nu_fp8.cuh: numba.cuda's FP8 types and conversions (CUDA's cuda_fp8.h)
//
// nu::fp8_e4m3, nu::fp8_e5m2 and nu::fp8_e8m0 hold one storage byte, as CUDA's __nv_fp8_*
// do; nu::bf16_raw is __nv_bfloat16_raw. On the GPU every conversion is CUDA's own
// (cuda_fp8.h through NVRTC, found in the toolkit's include directory: nvrtc.cpp adds it
// for units that include this header, which only units using FP8 do, so no other build
// pays for parsing cuda_fp16.h and cuda_bf16.h). In host builds the same conversions are
// computed in software here, to the bit, following cuda_fp8.h's documented rules:
//   * e4m3/e5m2 from float/double: round to nearest even. Beyond the largest finite value
//     (448, 57344) SATFINITE gives it with the input's sign; NOSAT gives NaN 0x7F|sign
//     (e4m3 has no infinity) or infinity 0x7C|sign (e5m2). A float NaN gives 0x7F; a double
//     NaN gives 0x7F|sign (e4m3) or 0x7E|sign|its top two significand bits (e5m2).
//   * the type constructors saturate (SATFINITE); integers and half/bfloat16 go through
//     float (so an int64 is rounded to float first, as CUDA does).
//   * e8m0 (a power of two 2^(b-127), 0xFF is NaN) from |x|: cudaRoundZero takes the power
//     at or below, cudaRoundPosInf the power at or above; results below 2^-127 become
//     2^-127; above 2^127 NaN (NOSAT) or 2^127 (SATFINITE; an infinity too). A double
//     first becomes a float rounded toward zero with a sticky last bit.
//   * to float/double/half: exact (e8m0 to half rounds to nearest even), a NaN becomes
//     the canonical NaN; to integers: toward zero, saturating, a NaN gives 0 (2^63 for
//     the 64-bit types); to bool: not +-0 (e8m0: always true).
#pragma once

#include "nu_vector.cuh"  // cuda.float32x2/x4 results; elementwise units do not include it

#ifndef NU_HOST_BUILD
#include <cuda_fp8.h>
#endif

namespace nu {

struct bf16_raw {  // __nv_bfloat16_raw: the bits of a bfloat16
    u16 x;
};

namespace fp8 {

// cuda_fp8.h's enums by value: __nv_saturation_t, __nv_fp8_interpretation_t, cudaRoundMode.
constexpr int nosat = 0, satfinite = 1;
constexpr int e4m3 = 0, e5m2 = 1;
constexpr int round_nearest = 0, round_zero = 1, round_pos_inf = 2, round_min_inf = 3;
constexpr int kind_e8m0 = 2;  // the third storage kind, for the type template below

using half_detail::f32_bits;
using half_detail::f32_from_bits;
using half_detail::f64_bits;
using half_detail::f64_from_bits;

template <bool B, class T, class F> struct pick { using type = T; };  // no <type_traits>
template <class T, class F> struct pick<false, T, F> { using type = F; };

#ifdef NU_HOST_BUILD
// ---- host software ------------------------------------------------------------------------
namespace soft {

// double -> e4m3 / e5m2, round to nearest even (see the header comment for the rest).
inline u8 from_double(double x, int sat, int interp) {
    const bool e4 = interp == e4m3;
    const unsigned long long b = f64_bits(x);
    const u8 sign = u8((b >> 56) & 0x80u);
    const unsigned long long a = b & 0x7fffffffffffffffull;
    if (a > 0x7ff0000000000000ull) return u8(sign | (e4 ? 0x7fu : 0x7eu | unsigned((b >> 50) & 3u)));
    const int m_bits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
    const unsigned first_special = e4 ? 0x7fu : 0x7cu;  // e4m3's NaN, e5m2's infinity
    const u8 overflow = sat == satfinite ? u8(e4 ? 0x7eu : 0x7bu) : u8(first_special);
    if (a >= 0x7ff0000000000000ull) return u8(sign | overflow);
    unsigned long long mant = a & 0xfffffffffffffull;
    int e = int(a >> 52) - 1023;
    if (a >> 52) mant |= 1ull << 52;
    else e = -1022;
    const int emin = 1 - bias;
    const int shift = 52 - m_bits + (e < emin ? emin - e : 0);
    unsigned long long r = 0;
    if (shift <= 54) {  // else below half the smallest subnormal: zero
        const unsigned long long half = 1ull << (shift - 1);
        const unsigned long long rem = mant & ((half << 1) - 1);
        r = mant >> shift;
        if (rem > half || (rem == half && (r & 1u))) ++r;
    }
    // A normal r carries the implicit bit, which adds one to the exponent field; a carry
    // out of the significand moves to the next binade by itself.
    const long long code = e >= emin ? ((long long)(e + bias - 1) << m_bits) + (long long)r : (long long)r;
    if (code >= (long long)first_special) return u8(sign | overflow);
    return u8(sign | unsigned(code));
}

inline u8 from_float(float x, int sat, int interp) {
    if (x != x) return 0x7fu;  // cuda_fp8.h makes a float NaN canonical first
    return from_double(double(x), sat, interp);
}

// bfloat16 bits -> e8m0: the exponent field, rounded up when asked and the value has
// significand bits, lies above 2^-127 and is finite.
inline u8 e8m0_from_bf16(u16 x, int sat, int rounding) {
    const unsigned a = x & 0x7fffu;
    u8 r = u8(x >> 7);
    if (rounding == round_pos_inf && (x & 0x7fu) != 0 && a > 0x40u && a < 0x7f80u) ++r;
    if (sat == satfinite && a <= 0x7f80u && r == 0xffu) r = 0xfeu;  // not a NaN
    return r;
}

inline u8 e8m0_from_float(float x, int sat, int rounding) {
    unsigned u = f32_bits(x);
    if (rounding == round_zero) {  // bfloat16 rounded toward zero, then its exponent
        return e8m0_from_bf16((u & 0x7fffffffu) > 0x7f800000u ? u16(0x7fffu) : u16(u >> 16), sat, rounding);
    }
    u &= 0x7fffffffu;  // |x| rounded up to bfloat16 (cuda_fp8.h's path for cudaRoundPosInf)
    u16 h = u16(u >> 16);
    if (u > 0x7f800000u) h = 0x7fffu;
    else if (u < 0x7f800000u && (u & 0xffffu) != 0) ++h;
    return e8m0_from_bf16(h, sat, rounding);
}

// double -> float rounded toward zero, with the last bit set when inexact (not for NaN):
// one more rounding of that float is the rounding of the double.
inline float sticky_float(double x) {
    const float f = float(x);
    const double d = double(f);
    unsigned u = f32_bits(f);
    const bool not_nan = (u << 1) <= 0xff000000u;
    if ((x > 0.0 && d > x) || (x < 0.0 && d < x)) --u;
    if (d != x && not_nan) u |= 1u;
    return f32_from_bits(u);
}

inline u8 e8m0_from_double(double x, int sat, int rounding) {
    return e8m0_from_float(sticky_float(x), sat, rounding);
}

inline u16 e8m0_to_bf16(u8 x) {
    if (x == 0xffu) return 0x7fffu;
    if (x == 0) return 0x0040u;  // 2^-127: a bfloat16 subnormal
    return u16(unsigned(x) << 7);
}

// e8m0 from an integer: |v| rounded up to a power of two (what CUDA's constructors give
// for every integer type; 0 gives 2^-127).
inline u8 e8m0_from_magnitude(unsigned long long m) {
    if (m == 0) return 0;
    int e = 0;
    while (e < 64 && (1ull << e) < m) ++e;  // the least e with 2^e >= m
    return u8(127 + e);
}

// e4m3 / e5m2 -> float (exact), a NaN as float's canonical NaN.
inline float to_float(u8 b, int interp) {
    const float sign = (b & 0x80u) ? -1.0f : 1.0f;
    const unsigned a = b & 0x7fu;
    if (interp == e4m3) {
        if (a == 0x7fu) return f32_from_bits(0x7fffffffu);
        const unsigned e = a >> 3, m = a & 7u;
        return sign * (e == 0 ? float(m) * 0x1p-9f : ::ldexpf(float(8u + m), int(e) - 10));
    }
    if (a > 0x7cu) return f32_from_bits(0x7fffffffu);
    if (a == 0x7cu) return sign * f32_from_bits(0x7f800000u);
    const unsigned e = a >> 2, m = a & 3u;
    return sign * (e == 0 ? float(m) * 0x1p-16f : ::ldexpf(float(4u + m), int(e) - 17));
}

}  // namespace soft
#endif  // NU_HOST_BUILD

// ---- the cvt functions of numba.cuda._internal.cuda_fp8 -------------------------------------
#ifdef NU_HOST_BUILD
#define NU_FP8(dev, host) host
#else
#define NU_FP8(dev, host) dev
#define NU_SAT(s) static_cast<__nv_saturation_t>(s)
#define NU_INTERP(i) static_cast<__nv_fp8_interpretation_t>(i)
#define NU_ROUND(r) static_cast<cudaRoundMode>(r)
NU_DEVICE __nv_bfloat16_raw cuda_raw(bf16_raw x) {
    __nv_bfloat16_raw r;
    r.x = x.x;
    return r;
}
#endif

NU_DEVICE u8 cvt_float_to_fp8(float x, int sat, int interp) {
    return NU_FP8(__nv_cvt_float_to_fp8(x, NU_SAT(sat), NU_INTERP(interp)), soft::from_float(x, sat, interp));
}
NU_DEVICE u8 cvt_double_to_fp8(double x, int sat, int interp) {
    return NU_FP8(__nv_cvt_double_to_fp8(x, NU_SAT(sat), NU_INTERP(interp)), soft::from_double(x, sat, interp));
}
NU_DEVICE u8 cvt_bfloat16raw_to_fp8(bf16_raw x, int sat, int interp) {
    return NU_FP8(__nv_cvt_bfloat16raw_to_fp8(cuda_raw(x), NU_SAT(sat), NU_INTERP(interp)),
                  soft::from_float(f32_from_bits(unsigned(x.x) << 16), sat, interp));
}
NU_DEVICE u8 cvt_bfloat16raw_to_e8m0(bf16_raw x, int sat, int rounding) {
    return NU_FP8(__nv_cvt_bfloat16raw_to_e8m0(cuda_raw(x), NU_SAT(sat), NU_ROUND(rounding)),
                  soft::e8m0_from_bf16(x.x, sat, rounding));
}
NU_DEVICE u8 cvt_float_to_e8m0(float x, int sat, int rounding) {
    return NU_FP8(__nv_cvt_float_to_e8m0(x, NU_SAT(sat), NU_ROUND(rounding)), soft::e8m0_from_float(x, sat, rounding));
}
NU_DEVICE u8 cvt_double_to_e8m0(double x, int sat, int rounding) {
    return NU_FP8(__nv_cvt_double_to_e8m0(x, NU_SAT(sat), NU_ROUND(rounding)), soft::e8m0_from_double(x, sat, rounding));
}
NU_DEVICE bf16_raw cvt_e8m0_to_bf16raw(u8 x) {
    return bf16_raw{NU_FP8(__nv_cvt_e8m0_to_bf16raw(x).x, soft::e8m0_to_bf16(x))};
}

// Pairs: the x component in the low byte, as cuda_fp8.h packs them.
NU_DEVICE u16 pack2(u8 lo, u8 hi) { return u16(unsigned(lo) | (unsigned(hi) << 8)); }
NU_DEVICE u16 cvt_float2_to_fp8x2(float32x2 x, int sat, int interp) {
    return NU_FP8(__nv_cvt_float2_to_fp8x2(x, NU_SAT(sat), NU_INTERP(interp)),
                  pack2(soft::from_float(x.x, sat, interp), soft::from_float(x.y, sat, interp)));
}
NU_DEVICE u16 cvt_double2_to_fp8x2(float64x2 x, int sat, int interp) {
    return NU_FP8(__nv_cvt_double2_to_fp8x2(x, NU_SAT(sat), NU_INTERP(interp)),
                  pack2(soft::from_double(x.x, sat, interp), soft::from_double(x.y, sat, interp)));
}
NU_DEVICE u16 cvt_float2_to_e8m0x2(float32x2 x, int sat, int rounding) {
    return NU_FP8(__nv_cvt_float2_to_e8m0x2(x, NU_SAT(sat), NU_ROUND(rounding)),
                  pack2(soft::e8m0_from_float(x.x, sat, rounding), soft::e8m0_from_float(x.y, sat, rounding)));
}
NU_DEVICE u16 cvt_double2_to_e8m0x2(float64x2 x, int sat, int rounding) {
    return NU_FP8(__nv_cvt_double2_to_e8m0x2(x, NU_SAT(sat), NU_ROUND(rounding)),
                  pack2(soft::e8m0_from_double(x.x, sat, rounding), soft::e8m0_from_double(x.y, sat, rounding)));
}

// ---- the value types --------------------------------------------------------------------
#ifndef NU_HOST_BUILD
template <int K> struct cuda_type;
template <> struct cuda_type<e4m3> { using type = __nv_fp8_e4m3; };
template <> struct cuda_type<e5m2> { using type = __nv_fp8_e5m2; };
template <> struct cuda_type<kind_e8m0> { using type = __nv_fp8_e8m0; };
template <int K>
NU_DEVICE typename cuda_type<K>::type as_cuda(u8 bits) {
    typename cuda_type<K>::type v;
    v.__x = bits;
    return v;
}
#endif

template <class T> constexpr bool is_bf16 = false;
template <> constexpr bool is_bf16<bf16> = true;

// One storage byte of kind K (e4m3, e5m2, kind_e8m0).
template <int K>
struct value {
    u8 bits;
};

// value<K> from any number the constructors take: CUDA's constructor on the GPU.
template <int K, class T>
NU_DEVICE value<K> make(T x) {
#ifndef NU_HOST_BUILD
    using C = typename cuda_type<K>::type;
    if constexpr (is_bf16<T>) {
        __nv_bfloat16_raw b;
        b.x = x.bits;
        return value<K>{C(__nv_bfloat16(b)).__x};
    } else if constexpr (is_half<T>) {
        __half_raw r;
        r.x = x.bits;
        return value<K>{C(__half(r)).__x};
    } else if constexpr (is_bool<T>) {
        return value<K>{C(int(x)).__x};
    } else {
        return value<K>{C(x).__x};
    }
#else
    if constexpr (K == kind_e8m0) {
        if constexpr (is_int<T> || is_bool<T>) {
            const long long s = (long long)x;
            const bool neg = is_signed<T> && s < 0;
            return value<K>{soft::e8m0_from_magnitude(neg ? 0ull - (unsigned long long)s : (unsigned long long)x)};
        } else if constexpr (is_float<T> && sizeof(T) == 8) {
            return value<K>{soft::e8m0_from_double(x, satfinite, round_pos_inf)};
        } else {
            return value<K>{soft::e8m0_from_float(float(x), satfinite, round_pos_inf)};
        }
    } else if constexpr (is_float<T> && sizeof(T) == 8) {
        return value<K>{soft::from_double(x, satfinite, K)};
    } else {
        return value<K>{soft::from_float(float(x), satfinite, K)};  // ints: through float
    }
#endif
}

#ifdef NU_HOST_BUILD
template <int K>
NU_DEVICE float host_float(value<K> v) {
    if constexpr (K == kind_e8m0) return f32_from_bits(unsigned(soft::e8m0_to_bf16(v.bits)) << 16);
    else return soft::to_float(v.bits, K);
}
// Toward zero, saturating; a NaN gives nan_value (CUDA's __half2*_rz / __bfloat162*_rz).
template <class I>
NU_DEVICE I host_int(float f, I nan_value) {
    if (f != f) return nan_value;
    const double t = double(::truncf(f));
    if constexpr (sizeof(I) == 8 && is_signed<I>) {
        if (t >= 9223372036854775808.0) return I(0x7fffffffffffffffull);
        if (t <= -9223372036854775808.0) return I(0x8000000000000000ull);
    } else if constexpr (sizeof(I) == 8) {
        if (t >= 18446744073709551616.0) return I(0xffffffffffffffffull);
        if (t <= 0.0) return I(0);
    } else {
        const double lo = is_signed<I> ? -double(1ull << (8 * sizeof(I) - 1)) : 0.0;
        const double hi = is_signed<I> ? double(1ull << (8 * sizeof(I) - 1)) - 1.0
                                       : double(1ull << (8 * sizeof(I))) - 1.0;
        if (t <= lo) return I(lo);
        if (t >= hi) return I(hi);
    }
    return I(t);
}
#endif

// value<K> -> T (float, double, f16, bf16, an integer, bool): CUDA's conversion operators.
template <class T, int K>
NU_DEVICE T to(value<K> v) {
#ifndef NU_HOST_BUILD
    const auto c = as_cuda<K>(v.bits);
    if constexpr (is_bf16<T>) {
        const __nv_bfloat16_raw r = __nv_bfloat16(c);
        return T::from_bits(r.x);
    } else if constexpr (is_half<T>) {
        const __half_raw r = __half(c);
        return T::from_bits(r.x);
    } else {
        return static_cast<T>(c);
    }
#else
    const float f = host_float(v);
    if constexpr (is_bool<T>) {
        return K == kind_e8m0 || (v.bits & 0x7fu) != 0;
    } else if constexpr (is_half<T>) {
        if (f != f) return T::from_bits(0x7fffu);  // CUDA's canonical NaN
        return T(f);  // exact, or (e8m0 to half) rounded to nearest even
    } else if constexpr (is_float<T>) {
        return T(f);
    } else if constexpr (sizeof(T) == 1) {  // CUDA's own 8-bit rule: through float
        return host_int<T>(f, T(0));
    } else {
        return host_int<T>(f, sizeof(T) == 8 ? T(0x8000000000000000ull) : T(0));
    }
#endif
}

// ---- pairs and quadruples: fp8x2_e4m3 (two bytes, x low), fp8x4_e4m3 (four) ---------------
template <int K, int N>
struct vec {
    using storage = typename pick<N == 2, u16, u32>::type;
    storage bits;
};

#ifndef NU_HOST_BUILD
template <int K, int N> struct cuda_vec;
template <> struct cuda_vec<e4m3, 2> { using type = __nv_fp8x2_e4m3; };
template <> struct cuda_vec<e5m2, 2> { using type = __nv_fp8x2_e5m2; };
template <> struct cuda_vec<kind_e8m0, 2> { using type = __nv_fp8x2_e8m0; };
template <> struct cuda_vec<e4m3, 4> { using type = __nv_fp8x4_e4m3; };
template <> struct cuda_vec<e5m2, 4> { using type = __nv_fp8x4_e5m2; };
template <> struct cuda_vec<kind_e8m0, 4> { using type = __nv_fp8x4_e8m0; };
#endif

// From a float32x2/float64x2 (N = 2) or float32x4/float64x4 (N = 4): each component as
// the scalar constructor converts it (SATFINITE; e8m0 rounded up).
template <int K, int N, class V>
NU_DEVICE vec<K, N> make_vec(V v) {
#ifndef NU_HOST_BUILD
    return vec<K, N>{typename cuda_vec<K, N>::type(v).__x};
#else
    if constexpr (N == 2) {
        return vec<K, N>{pack2(make<K>(v.x).bits, make<K>(v.y).bits)};
    } else {
        return vec<K, N>{u32(pack2(make<K>(v.x).bits, make<K>(v.y).bits)) |
                         (u32(pack2(make<K>(v.z).bits, make<K>(v.w).bits)) << 16)};
    }
#endif
}

// To float32x2 / float32x4 (CUDA's operator float2 / float4).
template <int K, int N>
NU_DEVICE typename pick<N == 2, float32x2, float32x4>::type to_floats(vec<K, N> v) {
#ifndef NU_HOST_BUILD
    typename cuda_vec<K, N>::type c;
    c.__x = v.bits;
    if constexpr (N == 2) return float2(c);
    else return float4(c);
#else
    auto f = [&](int i) { return to<float>(value<K>{u8(v.bits >> (8 * i))}); };
    if constexpr (N == 2) return float32x2{f(0), f(1)};
    else return float32x4{f(0), f(1), f(2), f(3)};
#endif
}

#undef NU_FP8
#ifndef NU_HOST_BUILD
#undef NU_SAT
#undef NU_INTERP
#undef NU_ROUND
#endif

// Storage bits in and out (numbacuda_ufunc extensions: fp8_e4m3_from_bits...).
template <int K>
NU_DEVICE value<K> from_bits(u8 b) { return value<K>{b}; }

// bfloat16 <-> its raw bits (Numba converts one to the other implicitly).
NU_DEVICE bf16_raw raw_of(bf16 b) { return bf16_raw{b.bits}; }
NU_DEVICE bf16 bf16_of(bf16_raw r) { return bf16::from_bits(r.x); }

}  // namespace fp8

using fp8_e4m3 = fp8::value<fp8::e4m3>;
using fp8_e5m2 = fp8::value<fp8::e5m2>;
using fp8_e8m0 = fp8::value<fp8::kind_e8m0>;
using fp8x2_e4m3 = fp8::vec<fp8::e4m3, 2>;
using fp8x2_e5m2 = fp8::vec<fp8::e5m2, 2>;
using fp8x2_e8m0 = fp8::vec<fp8::kind_e8m0, 2>;
using fp8x4_e4m3 = fp8::vec<fp8::e4m3, 4>;
using fp8x4_e5m2 = fp8::vec<fp8::e5m2, 4>;
using fp8x4_e8m0 = fp8::vec<fp8::kind_e8m0, 4>;

}  // namespace nu
