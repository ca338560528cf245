// src/kernels/nu_half.cuh: float16 (NumPy's half) and bfloat16 (ml_dtypes) for translated code
//
// Both types are plain 16-bit structs with the same code on the GPU and on the host, so the
// host backend gives the GPU's results bit for bit. NumPy computes float16 arithmetic and
// math in float32 and rounds the result back (ml_dtypes does the same for bfloat16); float32
// carries at least 2p+2 bits for p = 11 (half) and p = 8 (bfloat16), so one float
// operation rounded back equals the correctly rounded half result.
//
// Conversions are bit-exact with NumPy and ml_dtypes: round to nearest even, NaN payloads
// kept as NumPy keeps them; float64 -> float16 rounds once (npy_double_to_half), while
// everything else reaches bfloat16 through float32 (ml_dtypes' casts). NumPy casts integers
// to float16 through float32; one rounding straight to half (cvt.rn.f16.<int> on the GPU)
// gives the same value, since any integer beyond 2^24 overflows half to inf either way. No CUDA header is needed: cuda_fp16.h would cost every NVRTC
// build its parse time, and the toolkit's conversions differ from NumPy's on NaN payloads.
#pragma once

namespace nu {

using u16 = unsigned short;

namespace half_detail {

#ifdef NU_HOST_BUILD
NU_DEVICE unsigned int f32_bits(float x) { unsigned int u; memcpy(&u, &x, 4); return u; }
NU_DEVICE float f32_from_bits(unsigned int u) { float x; memcpy(&x, &u, 4); return x; }
NU_DEVICE unsigned long long f64_bits(double x) { unsigned long long u; memcpy(&u, &x, 8); return u; }
NU_DEVICE double f64_from_bits(unsigned long long u) { double x; memcpy(&x, &u, 8); return x; }
#else
NU_DEVICE unsigned int f32_bits(float x) { return __float_as_uint(x); }
NU_DEVICE float f32_from_bits(unsigned int u) { return __uint_as_float(u); }
NU_DEVICE unsigned long long f64_bits(double x) { return (unsigned long long)__double_as_longlong(x); }
NU_DEVICE double f64_from_bits(unsigned long long u) { return __longlong_as_double((long long)u); }
#endif

// Rounds an IEEE value (bits `x`: MBITS mantissa bits, EBITS exponent bits) to the 16-bit
// format with HM mantissa and HE exponent bits, to nearest even. `nan` is the result for
// NaN inputs without a payload of their own (0: keep the top payload bits, as NumPy does).
template <int HM, int HE, int MBITS, int EBITS, class U>
NU_DEVICE u16 narrow(U x) {
    constexpr int sign_pos = MBITS + EBITS;
    const u16 sign = u16((x >> (sign_pos - 15)) & 0x8000u);
    const U a = x & ((U(1) << sign_pos) - 1);
    constexpr U exp_mask = ((U(1) << EBITS) - 1) << MBITS;
    constexpr u16 h_inf = u16(((1u << HE) - 1) << HM);
    if ((a & exp_mask) == exp_mask) {  // inf or NaN
        if (a == exp_mask) return u16(sign | h_inf);
        if constexpr (HE == 8) {
            return u16(sign | 0x7fc0u);  // ml_dtypes: every NaN becomes the quiet NaN
        } else {
            const u16 m = u16((a >> (MBITS - HM)) & ((1u << HM) - 1));
            return u16(sign | h_inf | (m ? m : 1u));
        }
    }
    constexpr int bias = (1 << (EBITS - 1)) - 1;
    constexpr int hbias = (1 << (HE - 1)) - 1;
    U mant = a & ((U(1) << MBITS) - 1);
    int e = 1 - bias;  // a subnormal source: no implicit bit
    if (a >> MBITS) {
        mant |= U(1) << MBITS;
        e = int(a >> MBITS) - bias;
    }
    if (e > hbias) return u16(sign | h_inf);
    if (e < -(hbias + HM)) return sign;  // below half the smallest subnormal
    const bool normal = e >= 1 - hbias;
    const int shift = MBITS - HM + (normal ? 0 : (1 - hbias - e));
    const U half = U(1) << (shift - 1);
    const U rem = mant & ((U(1) << shift) - 1);
    U r = mant >> shift;
    if (rem > half || (rem == half && (r & 1u))) ++r;
    // A normal result's r carries the implicit bit, which adds one to the exponent field;
    // a carry out of the mantissa moves to the next binade (or to inf) by itself.
    if (normal) return u16(sign | u16((U(e + hbias - 1) << HM) + r));
    return u16(sign | u16(r));
}

NU_DEVICE float widen_f16(u16 h) {
#ifndef NU_HOST_BUILD
    // One instruction on the GPU. A NaN keeps its payload bits, as NumPy's does (the
    // hardware conversion does not promise that).
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0)
        return f32_from_bits(((unsigned int)(h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13));
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#endif
    const unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
    const unsigned int e = (h >> 10) & 0x1fu;
    const unsigned int m = h & 0x3ffu;
    if (e == 0x1f) return f32_from_bits(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        const float v = float(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
        return sign ? -v : v;
    }
    return f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}

NU_DEVICE float widen_bf16(u16 h) { return f32_from_bits((unsigned int)h << 16); }

// float32 -> float16, to nearest even: cvt.rn.f16.f32 on the GPU (the same rounding,
// overflow to inf and subnormals), the bit path for NaNs (NumPy keeps payload bits).
NU_DEVICE u16 narrow_f32_f16(float x) {
#ifndef NU_HOST_BUILD
    if (x != x) {  // NumPy keeps the top payload bits (a payload of 0 becomes 1)
        const unsigned int u = f32_bits(x), m = (u >> 13) & 0x3ffu;
        return u16(((u >> 16) & 0x8000u) | 0x7c00u | (m ? m : 1u));
    }
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
#else
    return narrow<10, 5, 23, 8>(f32_bits(x));
#endif
}

// float32 -> bfloat16, to nearest even: cvt.rn.bf16.f32 on sm_80 and newer, the bit path
// for NaNs (ml_dtypes makes every NaN the quiet NaN) and on the host.
NU_DEVICE u16 narrow_f32_bf16(float x) {
#if !defined(NU_HOST_BUILD) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (x != x) return u16(((f32_bits(x) >> 16) & 0x8000u) | 0x7fc0u);  // ml_dtypes' quiet NaN
    u16 h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
#else
    return narrow<7, 8, 23, 8>(f32_bits(x));
#endif
}

// float16 -> float64 in one step, as NumPy does (through float32, a NaN would be quieted).
NU_DEVICE double widen_f16_f64(u16 h) {
    if ((h & 0x7c00u) != 0x7c00u || (h & 0x3ffu) == 0) {
#ifndef NU_HOST_BUILD
        double d;  // exact for every number: one instruction
        asm("cvt.f64.f16 %0, %1;" : "=d"(d) : "h"(h));
        return d;
#else
        return double(widen_f16(h));
#endif
    }
    const unsigned long long u = ((unsigned long long)(h & 0x8000u) << 48) |
                                 0x7ff0000000000000ull | ((unsigned long long)(h & 0x3ffu) << 42);
    return f64_from_bits(u);
}

// Integer (or bool) -> float16 bits, rounded to nearest even. On sm_53 and later one
// cvt.rn.f16.{s,u}{8,16,32,64}: IEEE rounding, so a value beyond half's range becomes inf, as
// NumPy's cast through float32 does.
template <class I>
NU_DEVICE u16 int_to_f16(I x) {
#if !defined(NU_HOST_BUILD) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    u16 h;
    if constexpr (!is_int<I>) {  // bool, or a type with a conversion to float
        return narrow_f32_f16(float(x));
    } else if constexpr (sizeof(I) == 1 && is_signed<I>) {
        asm("cvt.rn.f16.s8 %0, %1;" : "=h"(h) : "h"((short)x));
    } else if constexpr (sizeof(I) == 1) {
        asm("cvt.rn.f16.u8 %0, %1;" : "=h"(h) : "h"((unsigned short)x));
    } else if constexpr (sizeof(I) == 2 && is_signed<I>) {
        asm("cvt.rn.f16.s16 %0, %1;" : "=h"(h) : "h"((short)x));
    } else if constexpr (sizeof(I) == 2) {
        asm("cvt.rn.f16.u16 %0, %1;" : "=h"(h) : "h"((unsigned short)x));
    } else if constexpr (sizeof(I) == 4 && is_signed<I>) {
        asm("cvt.rn.f16.s32 %0, %1;" : "=h"(h) : "r"((int)x));
    } else if constexpr (sizeof(I) == 4) {
        asm("cvt.rn.f16.u32 %0, %1;" : "=h"(h) : "r"((unsigned int)x));
    } else if constexpr (sizeof(I) == 8 && is_signed<I>) {
        asm("cvt.rn.f16.s64 %0, %1;" : "=h"(h) : "l"((long long)x));
    } else {
        asm("cvt.rn.f16.u64 %0, %1;" : "=h"(h) : "l"((unsigned long long)x));
    }
    return h;
#else
    return narrow_f32_f16(float(x));
#endif
}

}  // namespace half_detail

struct bf16;

// NumPy's float16 (binary16).
struct f16 {
    u16 bits;
    f16() = default;
    explicit NU_DEVICE f16(float x) : bits(half_detail::narrow_f32_f16(x)) {}
    explicit NU_DEVICE f16(double x) : bits(half_detail::narrow<10, 5, 52, 11>(half_detail::f64_bits(x))) {}
    // Integers round once to half (one cvt.rn.f16 instruction on the GPU).
    template <class I>
    explicit NU_DEVICE f16(I x) : bits(half_detail::int_to_f16(x)) {}
    explicit NU_DEVICE f16(bf16 x);
    NU_DEVICE operator float() const { return half_detail::widen_f16(bits); }
    static NU_DEVICE f16 from_bits(u16 b) {
        f16 h;
        h.bits = b;
        return h;
    }
};

// ml_dtypes' bfloat16: float32's exponent, 8 significant bits.
struct bf16 {
    u16 bits;
    bf16() = default;
    explicit NU_DEVICE bf16(float x) : bits(half_detail::narrow_f32_bf16(x)) {}
    template <class I>
    explicit NU_DEVICE bf16(I x) : bf16(float(x)) {}  // float64 too: ml_dtypes rounds twice
    NU_DEVICE operator float() const { return half_detail::widen_bf16(bits); }
    static NU_DEVICE bf16 from_bits(u16 b) {
        bf16 h;
        h.bits = b;
        return h;
    }
};

NU_DEVICE double half_to_f64(f16 x) { return half_detail::widen_f16_f64(x.bits); }
NU_DEVICE double half_to_f64(bf16 x) { return double(float(x)); }  // ml_dtypes: via float32

// ml_dtypes turns a bfloat16 NaN into float16's quiet NaN 0x7e00 (keeping the sign).
NU_DEVICE f16::f16(bf16 x) : bits(half_detail::narrow<10, 5, 23, 8>(half_detail::f32_bits(float(x)))) {
    if ((x.bits & 0x7f80u) == 0x7f80u && (x.bits & 0x7fu) != 0) bits = u16((x.bits & 0x8000u) | 0x7e00u);
}

template <class T> constexpr bool is_f16 = false;
template <> constexpr bool is_f16<f16> = true;
template <class T> constexpr bool is_half = false;
template <> constexpr bool is_half<f16> = true;
template <> constexpr bool is_half<bf16> = true;
template <> constexpr bool is_float<f16> = true;
template <> constexpr bool is_float<bf16> = true;

// Arithmetic in float32, rounded back once; comparisons exact in float32. For + - * of
// float16 on the GPU the native instructions give the same results: float32 has
// 24 >= 2 * 11 + 2 significant bits, so rounding its exact-enough sum, difference or
// product to float16 equals rounding the exact one (only NaN payloads may differ, which
// the GPU's float32 arithmetic does not keep either).
//
// add.f16, sub.f16 and mul.f16 carry no rounding modifier (as CUDA's __hadd and Numba
// emit them), so fastmath may contract a*b+c into one fma.f16, as it does for float32.
// Without fastmath nothing is contracted: NVRTC builds the CUBIN with --fmad=false, which
// reaches ptxas, and a link through nvJitLink passes -Xptxas=-fmad=false (measured: SASS
// HMUL2 + HADD2 instead of HFMA2 for sm_90, tests/test_float16_native.py). PTX that the
// driver compiles at load time (a GPU newer than this NVRTC) gets no such option, so the
// engine builds it with NU_F16_EXPLICIT_RN, which spells .rn on each instruction.
#if !defined(NU_HOST_BUILD) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
#ifdef NU_F16_EXPLICIT_RN
#define NU_F16_RND ".rn"
#else
#define NU_F16_RND ""
#endif
#define NU_F16_NATIVE_OP(op, instr)                                                             \
    NU_DEVICE f16 operator op(f16 a, f16 b) {                                                    \
        u16 r;                                                                                   \
        asm(instr NU_F16_RND ".f16 %0, %1, %2;" : "=h"(r) : "h"(a.bits), "h"(b.bits));           \
        return f16::from_bits(r);                                                                \
    }
NU_F16_NATIVE_OP(+, "add")
NU_F16_NATIVE_OP(-, "sub")
NU_F16_NATIVE_OP(*, "mul")
#undef NU_F16_NATIVE_OP
#undef NU_F16_RND
// Comparisons: ordered (a NaN gives false), except != (true), as in float32.
#define NU_F16_NATIVE_CMP(op, cmp)                                                              \
    NU_DEVICE bool operator op(f16 a, f16 b) {                                                   \
        u16 r;                                                                                   \
        asm("{ .reg .pred p; setp." cmp ".f16 p, %1, %2; selp.u16 %0, 1, 0, p; }"                \
            : "=h"(r) : "h"(a.bits), "h"(b.bits));                                               \
        return r != 0;                                                                           \
    }
NU_F16_NATIVE_CMP(==, "eq")
NU_F16_NATIVE_CMP(!=, "neu")
NU_F16_NATIVE_CMP(<, "lt")
NU_F16_NATIVE_CMP(<=, "le")
NU_F16_NATIVE_CMP(>, "gt")
NU_F16_NATIVE_CMP(>=, "ge")
#undef NU_F16_NATIVE_CMP
#define NU_F16_IN_FLOAT32 0
#else
NU_DEVICE f16 operator+(f16 a, f16 b) { return f16(float(a) + float(b)); }
NU_DEVICE f16 operator-(f16 a, f16 b) { return f16(float(a) - float(b)); }
NU_DEVICE f16 operator*(f16 a, f16 b) { return f16(float(a) * float(b)); }
#define NU_F16_IN_FLOAT32 1
#endif
NU_DEVICE bf16 operator+(bf16 a, bf16 b) { return bf16(float(a) + float(b)); }
NU_DEVICE bf16 operator-(bf16 a, bf16 b) { return bf16(float(a) - float(b)); }
NU_DEVICE bf16 operator*(bf16 a, bf16 b) { return bf16(float(a) * float(b)); }

#define NU_HALF_OPERATORS(H)                                                                    \
    NU_DEVICE H operator/(H a, H b) { return H(float(a) / float(b)); }                           \
    NU_DEVICE H operator-(H a) { return H::from_bits(u16(a.bits ^ 0x8000u)); }                   \
    NU_DEVICE H operator+(H a) { return a; }                                                     \
    NU_DEVICE H& operator+=(H& a, H b) { return a = a + b; }                                     \
    NU_DEVICE H& operator-=(H& a, H b) { return a = a - b; }                                     \
    NU_DEVICE H& operator*=(H& a, H b) { return a = a * b; }                                     \
    NU_DEVICE H& operator/=(H& a, H b) { return a = a / b; }
#define NU_HALF_COMPARISONS(H)                                                                  \
    NU_DEVICE bool operator==(H a, H b) { return float(a) == float(b); }                         \
    NU_DEVICE bool operator!=(H a, H b) { return float(a) != float(b); }                         \
    NU_DEVICE bool operator<(H a, H b) { return float(a) < float(b); }                           \
    NU_DEVICE bool operator<=(H a, H b) { return float(a) <= float(b); }                         \
    NU_DEVICE bool operator>(H a, H b) { return float(a) > float(b); }                           \
    NU_DEVICE bool operator>=(H a, H b) { return float(a) >= float(b); }

NU_HALF_OPERATORS(f16)
NU_HALF_OPERATORS(bf16)
NU_HALF_COMPARISONS(bf16)
#if NU_F16_IN_FLOAT32
NU_HALF_COMPARISONS(f16)
#endif
#undef NU_HALF_OPERATORS
#undef NU_HALF_COMPARISONS
#undef NU_F16_IN_FLOAT32

}  // namespace nu

// ---- cuda.fp16 (Numba's names): half-precision intrinsics --------------------------------
// Each computes in float32 (float64 for hfma and hrsqrt) and rounds once; comparisons are
// ordered, as CUDA's __heq ... __hne are: a NaN operand gives false.
namespace nu {
namespace fp16 {

NU_DEVICE f16 hadd(f16 a, f16 b) { return a + b; }
NU_DEVICE f16 hsub(f16 a, f16 b) { return a - b; }
NU_DEVICE f16 hmul(f16 a, f16 b) { return a * b; }
NU_DEVICE f16 hdiv(f16 a, f16 b) { return a / b; }
// CUDA's __hneg and __habs: neg.f16 and abs.f16 on the GPU (one HADD2 with operand
// modifiers on sm_90), whose NaN result PTX leaves unspecified, so a NaN may come back
// without its payload or sign. The operators -x and abs(x) flip or clear the sign bit
// instead, as NumPy does, NaN included.
NU_DEVICE f16 hneg(f16 a) {
#if !defined(NU_HOST_BUILD) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    u16 r;
    asm("neg.f16 %0, %1;" : "=h"(r) : "h"(a.bits));
    return f16::from_bits(r);
#else
    return -a;
#endif
}
NU_DEVICE f16 habs(f16 a) {
#if !defined(NU_HOST_BUILD) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    u16 r;
    asm("abs.f16 %0, %1;" : "=h"(r) : "h"(a.bits));
    return f16::from_bits(r);
#else
    return f16::from_bits(u16(a.bits & 0x7fffu));
#endif
}
// a*b is exact in float64 (22 significant bits) and the sum rounds once more to half: the
// correctly rounded fused result.
// On the GPU fma.rn.f16 computes that very result in one instruction.
NU_DEVICE f16 hfma(f16 a, f16 b, f16 c) {
#if !defined(NU_HOST_BUILD) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    u16 r;
    asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r) : "h"(a.bits), "h"(b.bits), "h"(c.bits));
    return f16::from_bits(r);
#else
    return f16(::fma(double(float(a)), double(float(b)), double(float(c))));
#endif
}
// max/min of a NaN and a number is the number (CUDA's __hmax, PTX max.f16)
NU_DEVICE f16 hmax(f16 a, f16 b) { return a != a ? b : (b != b ? a : (b > a ? b : a)); }
NU_DEVICE f16 hmin(f16 a, f16 b) { return a != a ? b : (b != b ? a : (b < a ? b : a)); }
NU_DEVICE bool heq(f16 a, f16 b) { return a == b; }
NU_DEVICE bool hne(f16 a, f16 b) { return a < b || a > b; }
NU_DEVICE bool hlt(f16 a, f16 b) { return a < b; }
NU_DEVICE bool hle(f16 a, f16 b) { return a <= b; }
NU_DEVICE bool hgt(f16 a, f16 b) { return a > b; }
NU_DEVICE bool hge(f16 a, f16 b) { return a >= b; }
NU_DEVICE f16 hsqrt(f16 a) { return f16(::sqrtf(float(a))); }
NU_DEVICE f16 hrsqrt(f16 a) { return f16(1.0 / ::sqrt(double(float(a)))); }
NU_DEVICE f16 hrcp(f16 a) { return f16(1.0f / float(a)); }
NU_DEVICE f16 hexp(f16 a) { return f16(::expf(float(a))); }
NU_DEVICE f16 hexp2(f16 a) { return f16(::exp2f(float(a))); }
NU_DEVICE f16 hexp10(f16 a) { return f16(::exp10f(float(a))); }
NU_DEVICE f16 hlog(f16 a) { return f16(::logf(float(a))); }
NU_DEVICE f16 hlog2(f16 a) { return f16(::log2f(float(a))); }
NU_DEVICE f16 hlog10(f16 a) { return f16(::log10f(float(a))); }
NU_DEVICE f16 hcos(f16 a) { return f16(::cosf(float(a))); }
NU_DEVICE f16 hsin(f16 a) { return f16(::sinf(float(a))); }
NU_DEVICE f16 hceil(f16 a) { return f16(::ceilf(float(a))); }
NU_DEVICE f16 hfloor(f16 a) { return f16(::floorf(float(a))); }
NU_DEVICE f16 htrunc(f16 a) { return f16(::truncf(float(a))); }
NU_DEVICE f16 hrint(f16 a) { return f16(::rintf(float(a))); }

}  // namespace fp16
}  // namespace nu

#include "nu_bf16.cuh"  // numba.cuda.bf16: CUDA's bfloat16 intrinsics over nu::bf16
