// src/kernels/nu_bf16.cuh: numba.cuda.bf16's intrinsics (CUDA's __hadd, __float2bfloat16_rz...)
//
// The results are CUDA's (cuda_bf16.h on sm_90, i.e. the PTX instructions it emits), not
// ml_dtypes': a NaN result is the canonical NaN 0x7fff, float64 and the integers reach
// bfloat16 in one rounding, conversions to integers saturate (a NaN gives 0, or 2^63 for the
// 64-bit ones). One portable implementation serves the GPU and the host backend, so both give
// the same bits; cuda_bf16.h is not included (its parse time would be paid by every NVRTC
// build of a kernel that uses bfloat16).
//
// Rounding: a sum or product of bfloat16 values is formed in double and rounded to odd there
// (53 >= 8 + 2 bits), then once to bfloat16: the correctly rounded result in every mode.
#pragma once

namespace nu {
namespace bf16_ops {

using half_detail::f32_bits;
using half_detail::f32_from_bits;
using half_detail::f64_from_bits;
using half_detail::f64_bits;

constexpr u16 canonical_nan = 0x7fffu;

NU_DEVICE bool is_nan(bf16 a) { return (a.bits & 0x7fffu) > 0x7f80u; }
NU_DEVICE bf16 bits_of(u16 b) { return bf16::from_bits(b); }

// float64 -> bfloat16, round to nearest even, one rounding; a NaN becomes 0x7fff.
NU_DEVICE bf16 from_f64_rn(double x) {
    if (x != x) return bits_of(canonical_nan);
    return bits_of(half_detail::narrow<7, 8, 52, 11>(f64_bits(x)));
}

// s + e is exact (s = fl(s + e) as in two-sum): rounds s to odd at 53 bits, so that one more
// rounding to bfloat16 is correct.
NU_DEVICE double round_to_odd(double s, double e) {
    if (e == 0.0 || s != s || s - s != 0.0) return s;
    unsigned long long u = f64_bits(s);
    // s was rounded away from zero when e has the other sign: step back toward zero.
    if ((e < 0.0) != (s < 0.0)) u -= 1;
    return f64_from_bits(u | 1ull);
}

// a*b + c exactly rounded to odd in double: a*b of two bfloat16 values is exact (16 bits).
NU_DEVICE double fma_odd(bf16 a, bf16 b, bf16 c) {
    const double p = double(float(a)) * double(float(b));
    const double q = double(float(c));
    const double s = p + q;
    const double bb = s - p;
    const double e = (p - (s - bb)) + (q - bb);
    return round_to_odd(s, e);
}

NU_DEVICE bf16 rn(double odd) { return from_f64_rn(odd); }

NU_DEVICE bf16 hmax(bf16 a, bf16 b);
NU_DEVICE bf16 hmin(bf16 a, bf16 b);
NU_DEVICE bf16 saturate(bf16 x) { return hmin(hmax(x, bits_of(0)), bits_of(0x3f80u)); }

// ---- arithmetic -------------------------------------------------------------------------
NU_DEVICE bf16 hadd(bf16 a, bf16 b) { return rn(fma_odd(a, bits_of(0x3f80u), b)); }
NU_DEVICE bf16 hsub(bf16 a, bf16 b) { return rn(fma_odd(a, bits_of(0x3f80u), -b)); }
NU_DEVICE bf16 hmul(bf16 a, bf16 b) { return rn(double(float(a)) * double(float(b))); }
// The _rn forms differ from the plain ones only in forbidding contraction into an fma.
NU_DEVICE bf16 hadd_rn(bf16 a, bf16 b) { return hadd(a, b); }
NU_DEVICE bf16 hsub_rn(bf16 a, bf16 b) { return hsub(a, b); }
NU_DEVICE bf16 hmul_rn(bf16 a, bf16 b) { return hmul(a, b); }
// double's quotient carries 53 >= 2*8 + 2 bits: rounding it again is the correct rounding.
NU_DEVICE bf16 hdiv(bf16 a, bf16 b) { return rn(double(float(a)) / double(float(b))); }
NU_DEVICE bf16 hfma(bf16 a, bf16 b, bf16 c) { return rn(fma_odd(a, b, c)); }
NU_DEVICE bf16 hneg(bf16 a) { return bits_of(u16(a.bits ^ 0x8000u)); }
NU_DEVICE bf16 habs(bf16 a) { return bits_of(u16(a.bits & 0x7fffu)); }
// _sat: clamped to [+0, 1]; a NaN result gives +0 (CUDA's max/min with 0 and 1).
NU_DEVICE bf16 hadd_sat(bf16 a, bf16 b) { return saturate(hadd(a, b)); }
NU_DEVICE bf16 hsub_sat(bf16 a, bf16 b) { return saturate(hsub(a, b)); }
NU_DEVICE bf16 hmul_sat(bf16 a, bf16 b) { return saturate(hmul(a, b)); }
NU_DEVICE bf16 hfma_sat(bf16 a, bf16 b, bf16 c) { return saturate(hfma(a, b, c)); }
// fma.rn.relu: a negative result (-0 included) gives +0, a NaN the canonical NaN.
NU_DEVICE bf16 hfma_relu(bf16 a, bf16 b, bf16 c) {
    const bf16 r = hfma(a, b, c);
    if (is_nan(r)) return bits_of(canonical_nan);
    return (r.bits & 0x8000u) ? bits_of(0) : r;
}

// ---- comparisons ------------------------------------------------------------------------
// Ordered (heq...): false when either is NaN. Unordered (hequ...): true when either is NaN.
NU_DEVICE bool heq(bf16 a, bf16 b) { return float(a) == float(b); }
NU_DEVICE bool hne(bf16 a, bf16 b) { return float(a) < float(b) || float(a) > float(b); }
NU_DEVICE bool hlt(bf16 a, bf16 b) { return float(a) < float(b); }
NU_DEVICE bool hle(bf16 a, bf16 b) { return float(a) <= float(b); }
NU_DEVICE bool hgt(bf16 a, bf16 b) { return float(a) > float(b); }
NU_DEVICE bool hge(bf16 a, bf16 b) { return float(a) >= float(b); }
NU_DEVICE bool hequ(bf16 a, bf16 b) { return !hne(a, b); }
NU_DEVICE bool hneu(bf16 a, bf16 b) { return !heq(a, b); }
NU_DEVICE bool hltu(bf16 a, bf16 b) { return !hge(a, b); }
NU_DEVICE bool hleu(bf16 a, bf16 b) { return !hgt(a, b); }
NU_DEVICE bool hgtu(bf16 a, bf16 b) { return !hle(a, b); }
NU_DEVICE bool hgeu(bf16 a, bf16 b) { return !hlt(a, b); }
NU_DEVICE bool hisnan(bf16 a) { return is_nan(a); }
NU_DEVICE int hisinf(bf16 a) { return a.bits == 0xff80u ? -1 : (a.bits == 0x7f80u ? 1 : 0); }

// max.bf16: a NaN operand loses to a number; two NaNs give the canonical NaN; +0 > -0.
NU_DEVICE bf16 hmax(bf16 a, bf16 b) {
    if (is_nan(a)) return is_nan(b) ? bits_of(canonical_nan) : b;
    if (is_nan(b)) return a;
    if (float(a) == float(b)) return (a.bits & 0x8000u) ? b : a;
    return float(a) > float(b) ? a : b;
}
NU_DEVICE bf16 hmin(bf16 a, bf16 b) {
    if (is_nan(a)) return is_nan(b) ? bits_of(canonical_nan) : b;
    if (is_nan(b)) return a;
    if (float(a) == float(b)) return (a.bits & 0x8000u) ? a : b;
    return float(a) < float(b) ? a : b;
}
// max.NaN.bf16: any NaN operand gives the canonical NaN.
NU_DEVICE bf16 hmax_nan(bf16 a, bf16 b) {
    return is_nan(a) || is_nan(b) ? bits_of(canonical_nan) : hmax(a, b);
}
NU_DEVICE bf16 hmin_nan(bf16 a, bf16 b) {
    return is_nan(a) || is_nan(b) ? bits_of(canonical_nan) : hmin(a, b);
}

// ---- conversions: floating point --------------------------------------------------------
NU_DEVICE float bfloat162float(bf16 a) { return float(a); }
NU_DEVICE bf16 double2bfloat16(double x) { return from_f64_rn(x); }
NU_DEVICE bf16 float2bfloat16_rn(float x) { return from_f64_rn(double(x)); }
NU_DEVICE bf16 float2bfloat16(float x) { return float2bfloat16_rn(x); }

// Directed roundings of float32: keep the top 16 bits, step away from zero when the dropped
// bits are not zero and the direction asks for it (the magnitude grows by one ulp).
NU_DEVICE bf16 f32_directed(float x, int mode /* 0 rz, -1 rd, +1 ru */) {
    const unsigned int u = f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return bits_of(canonical_nan);
    u16 r = u16(u >> 16);
    const bool negative = (u >> 31) != 0;
    if ((u & 0xffffu) != 0 && ((mode > 0 && !negative) || (mode < 0 && negative))) ++r;
    return bits_of(r);
}
NU_DEVICE bf16 float2bfloat16_rz(float x) { return f32_directed(x, 0); }
NU_DEVICE bf16 float2bfloat16_rd(float x) { return f32_directed(x, -1); }
NU_DEVICE bf16 float2bfloat16_ru(float x) { return f32_directed(x, 1); }

// ---- conversions: integers -> bfloat16 (one rounding, in the given mode) -----------------
// mode: 2 nearest even, 0 toward zero, -1 down, +1 up.
NU_DEVICE bf16 from_magnitude(unsigned long long m, bool negative, int mode) {
    int width = 0;
    for (unsigned long long t = m; t != 0; t >>= 1) ++width;
    const int shift = width > 8 ? width - 8 : 0;
    unsigned long long r = m >> shift;
    if (shift > 0) {
        const unsigned long long rem = m & ((1ull << shift) - 1);
        const unsigned long long half = 1ull << (shift - 1);
        bool up = false;
        if (mode == 2) up = rem > half || (rem == half && (r & 1u));
        else if (mode == 1) up = rem != 0 && !negative;
        else if (mode == -1) up = rem != 0 && negative;
        r += up ? 1 : 0;
    }
    // r <= 256 and 2^shift <= 2^56: the product is exact in float32 and in bfloat16.
    const float v = float(r) * float(1ull << shift);
    return bf16(negative ? -v : v);
}
NU_DEVICE bf16 from_signed(long long i, int mode) {
    return from_magnitude(i < 0 ? 0ull - (unsigned long long)i : (unsigned long long)i, i < 0, mode);
}
NU_DEVICE bf16 from_unsigned(unsigned long long i, int mode) { return from_magnitude(i, false, mode); }

#define NU_BF16_FROM_INT(CNAME, CTYPE, HOW)                                                      \
    NU_DEVICE bf16 CNAME##2bfloat16_rn(CTYPE i) { return HOW(i, 2); }                             \
    NU_DEVICE bf16 CNAME##2bfloat16_rz(CTYPE i) { return HOW(i, 0); }                             \
    NU_DEVICE bf16 CNAME##2bfloat16_rd(CTYPE i) { return HOW(i, -1); }                            \
    NU_DEVICE bf16 CNAME##2bfloat16_ru(CTYPE i) { return HOW(i, 1); }
NU_BF16_FROM_INT(short, short, from_signed)
NU_BF16_FROM_INT(ushort, unsigned short, from_unsigned)
NU_BF16_FROM_INT(int, int, from_signed)
NU_BF16_FROM_INT(uint, unsigned int, from_unsigned)
NU_BF16_FROM_INT(ll, long long, from_signed)
NU_BF16_FROM_INT(ull, unsigned long long, from_unsigned)
#undef NU_BF16_FROM_INT

// ---- conversions: bfloat16 -> integers (cvt.r*i: saturating) ----------------------------
// mode: 2 nearest even, 0 toward zero, -1 down, +1 up. NaN gives `nan_value`.
template <class I>
NU_DEVICE I to_int(bf16 a, int mode, double lo, double hi, I nan_value) {
    if (is_nan(a)) return nan_value;
    const float f = float(a);
    const float r = mode == 2 ? ::rintf(f) : mode == 0 ? ::truncf(f) : mode < 0 ? ::floorf(f) : ::ceilf(f);
    const double d = double(r);
    if (d <= lo) return I(lo);
    if (d >= hi) return I(hi);
    return I(d);
}

#define NU_BF16_TO_INT(CNAME, CTYPE, LO, HI, NANV)                                              \
    NU_DEVICE CTYPE bfloat162##CNAME##_rn(bf16 a) { return to_int<CTYPE>(a, 2, LO, HI, NANV); }  \
    NU_DEVICE CTYPE bfloat162##CNAME##_rz(bf16 a) { return to_int<CTYPE>(a, 0, LO, HI, NANV); }  \
    NU_DEVICE CTYPE bfloat162##CNAME##_rd(bf16 a) { return to_int<CTYPE>(a, -1, LO, HI, NANV); } \
    NU_DEVICE CTYPE bfloat162##CNAME##_ru(bf16 a) { return to_int<CTYPE>(a, 1, LO, HI, NANV); }
NU_BF16_TO_INT(short, short, -32768.0, 32767.0, short(0))
NU_BF16_TO_INT(ushort, unsigned short, 0.0, 65535.0, (unsigned short)0)
NU_BF16_TO_INT(int, int, -2147483648.0, 2147483647.0, 0)
NU_BF16_TO_INT(uint, unsigned int, 0.0, 4294967295.0, 0u)
#undef NU_BF16_TO_INT

// 64 bits: the limits are not doubles; a bfloat16 at or beyond 2^63 (2^64) saturates.
template <class I>
NU_DEVICE I to_int64(bf16 a, int mode, bool is_signed) {
    if (is_nan(a)) return I(0x8000000000000000ull);
    const float f = float(a);
    const float r = mode == 2 ? ::rintf(f) : mode == 0 ? ::truncf(f) : mode < 0 ? ::floorf(f) : ::ceilf(f);
    if (is_signed) {
        if (r >= 9223372036854775808.0f) return I(0x7fffffffffffffffull);
        if (r <= -9223372036854775808.0f) return I(0x8000000000000000ull);
        return I((long long)r);
    }
    if (r >= 18446744073709551616.0f) return I(0xffffffffffffffffull);
    if (r <= 0.0f) return I(0);
    return I((unsigned long long)r);
}
#define NU_BF16_TO_INT64(CNAME, CTYPE, SIGNED)                                                  \
    NU_DEVICE CTYPE bfloat162##CNAME##_rn(bf16 a) { return to_int64<CTYPE>(a, 2, SIGNED); }      \
    NU_DEVICE CTYPE bfloat162##CNAME##_rz(bf16 a) { return to_int64<CTYPE>(a, 0, SIGNED); }      \
    NU_DEVICE CTYPE bfloat162##CNAME##_rd(bf16 a) { return to_int64<CTYPE>(a, -1, SIGNED); }     \
    NU_DEVICE CTYPE bfloat162##CNAME##_ru(bf16 a) { return to_int64<CTYPE>(a, 1, SIGNED); }
NU_BF16_TO_INT64(ll, long long, true)
NU_BF16_TO_INT64(ull, unsigned long long, false)
#undef NU_BF16_TO_INT64

NU_DEVICE signed char bfloat162char_rz(bf16 a) { return (signed char)to_int<int>(a, 0, -128.0, 127.0, 0); }
NU_DEVICE unsigned char bfloat162uchar_rz(bf16 a) { return (unsigned char)to_int<int>(a, 0, 0.0, 255.0, 0); }

NU_DEVICE short bfloat16_as_short(bf16 a) { return (short)a.bits; }
NU_DEVICE unsigned short bfloat16_as_ushort(bf16 a) { return a.bits; }
NU_DEVICE bf16 short_as_bfloat16(short i) { return bits_of((u16)i); }
NU_DEVICE bf16 ushort_as_bfloat16(unsigned short i) { return bits_of(i); }

// ---- math: computed in float32 (float64 for hrsqrt and hrcp), rounded once ---------------
NU_DEVICE bf16 rn_f(float x) { return from_f64_rn(double(x)); }
NU_DEVICE bf16 htrunc(bf16 a) { return rn_f(::truncf(float(a))); }
NU_DEVICE bf16 hceil(bf16 a) { return rn_f(::ceilf(float(a))); }
NU_DEVICE bf16 hfloor(bf16 a) { return rn_f(::floorf(float(a))); }
NU_DEVICE bf16 hrint(bf16 a) { return rn_f(::rintf(float(a))); }
NU_DEVICE bf16 hsqrt(bf16 a) { return rn_f(::sqrtf(float(a))); }
NU_DEVICE bf16 hrsqrt(bf16 a) { return rn(1.0 / ::sqrt(double(float(a)))); }
NU_DEVICE bf16 hrcp(bf16 a) { return rn(1.0 / double(float(a))); }
NU_DEVICE bf16 hlog(bf16 a) { return rn_f(::logf(float(a))); }
NU_DEVICE bf16 hlog2(bf16 a) { return rn_f(::log2f(float(a))); }
NU_DEVICE bf16 hlog10(bf16 a) { return rn_f(::log10f(float(a))); }
NU_DEVICE bf16 hcos(bf16 a) { return rn_f(::cosf(float(a))); }
NU_DEVICE bf16 hsin(bf16 a) { return rn_f(::sinf(float(a))); }
NU_DEVICE bf16 hexp(bf16 a) { return rn_f(::expf(float(a))); }
NU_DEVICE bf16 hexp2(bf16 a) { return rn_f(::exp2f(float(a))); }
NU_DEVICE bf16 hexp10(bf16 a) { return rn_f(::exp10f(float(a))); }
NU_DEVICE bf16 htanh(bf16 a) { return rn_f(::tanhf(float(a))); }
NU_DEVICE bf16 htanh_approx(bf16 a) { return htanh(a); }

}  // namespace bf16_ops
}  // namespace nu
