// src/kernels/nu_scalar.cuh: scalar types, casts and NumPy-exact arithmetic for translated functions
//
// The translator emits calls such as nu::floordiv<T>(a, b) with operands already cast to the
// result type T (NumPy's loop type); these helpers give each operation NumPy 2 semantics:
// integer overflow wraps, integer // and % floor with 0 for a zero divisor, shifts by the
// type's width or more give 0 (or -1 for negative values shifted right), floats are IEEE.
// Compiled by NVRTC as is and by the host compiler after host_prelude.h.
#pragma once

#ifndef NU_DEVICE
#define NU_DEVICE __device__ __forceinline__
#endif

// `#pragma unroll` for NVRTC; nothing for the host compiler, where GCC's -Wall warns about
// the unknown pragma (tests/test_kernel_runtime.py builds the headers with -Werror).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define NU_UNROLL _Pragma("unroll")
#else
#define NU_UNROLL
#endif

namespace nu {

using b1 = bool;
using i8 = signed char;
using i16 = short;
using i32 = int;
using i64 = long long;
using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;
using f32 = float;
using f64 = double;

template <class T>
struct complex {
    using value_type = T;
    T re, im;
};
using c64 = complex<float>;
using c128 = complex<double>;

// ---- traits (no <type_traits>: NVRTC compiles this without the standard library) --------
template <class T> constexpr bool is_bool = false;
template <> constexpr bool is_bool<bool> = true;
template <class T> constexpr bool is_int = false;  // bool excluded
template <> constexpr bool is_int<i8> = true;
template <> constexpr bool is_int<i16> = true;
template <> constexpr bool is_int<i32> = true;
template <> constexpr bool is_int<i64> = true;
template <> constexpr bool is_int<u8> = true;
template <> constexpr bool is_int<u16> = true;
template <> constexpr bool is_int<u32> = true;
template <> constexpr bool is_int<u64> = true;
template <class T> constexpr bool is_signed = T(-1) < T(0);
template <class T> constexpr bool is_float = false;
template <> constexpr bool is_float<float> = true;
template <> constexpr bool is_float<double> = true;
template <class T> constexpr bool is_complex = false;
template <class T> constexpr bool is_complex<complex<T>> = true;
}  // namespace nu

#include "nu_half.cuh"  // nu::f16, nu::bf16: is_float, and is_half<T> below

// A translated function that calls itself, directly or through others, opens with
// NU_RECURSION_GUARD("name"). A host kernel thread runs on a fixed stack (a fiber's, or the
// launching thread's): past its budget the launch fails with an error naming the function,
// where unbounded recursion used to overflow the stack and kill the process. The GPU checks
// nothing (a device stack overflow fails the launch there); unchecked host builds (cpu and
// parallel ufuncs) neither. Defined here because every unit includes this header (an
// elementwise unit nothing else).
#if defined(NU_HOST_BUILD) && defined(NU_BOUNDSCHECK)
#define NU_RECURSION_GUARD(name) ::nu::kern::check_recursion(name)
#else
#define NU_RECURSION_GUARD(name) ((void)0)
#endif

namespace nu {

template <class T> struct unsigned_of;
template <> struct unsigned_of<i8> { using type = u8; };
template <> struct unsigned_of<i16> { using type = u16; };
template <> struct unsigned_of<i32> { using type = u32; };
template <> struct unsigned_of<i64> { using type = u64; };
template <> struct unsigned_of<u8> { using type = u8; };
template <> struct unsigned_of<u16> { using type = u16; };
template <> struct unsigned_of<u32> { using type = u32; };
template <> struct unsigned_of<u64> { using type = u64; };
template <class T> using unsigned_t = typename unsigned_of<T>::type;

template <class T> constexpr int bits_of = int(sizeof(T) * 8);
template <class T> constexpr T max_of = is_signed<T> ? T(unsigned_t<T>(-1) >> 1) : T(-1);
template <class T> constexpr T min_of = is_signed<T> ? T(-max_of<T> - 1) : T(0);

#ifdef NU_HOST_BUILD
NU_DEVICE double inf64() { return __builtin_huge_val(); }
NU_DEVICE double nan64() { return __builtin_nan(""); }
#else  // NVRTC has no GCC builtins; build the bit patterns
NU_DEVICE double inf64() { return __longlong_as_double(0x7ff0000000000000LL); }
NU_DEVICE double nan64() { return __longlong_as_double(0x7ff8000000000000LL); }
#endif

template <class T> NU_DEVICE bool isnan(T x) { return x != x; }
template <class T> NU_DEVICE bool isinf(T x) { return !isnan(x) && isnan(x - x); }
template <class T> NU_DEVICE bool isfinite(T x) { return !isnan(x - x); }

// ---- casts ------------------------------------------------------------------------------
// Float -> int gives what NumPy gives on x86-64, where its casts are C casts compiled to
// cvttsd2si/cvttss2si: a value out of the instruction's range, and NaN, give the
// "integer indefinite" INT_MIN of the conversion width. GCC converts to int8..int32 and
// uint8/uint16 through a 32-bit conversion, to uint32 through a 64-bit one (then keeps the
// low bits), and to uint64 as x < 2^63 ? cvt(x) : cvt(x - 2^63) ^ 2^63. NumPy warns
// ("invalid value encountered in cast") for exactly the values that differ between
// platforms; the GPU's saturating cvt would give other values, so the rule is spelled out.
template <class F>
NU_DEVICE i64 cvt_i64(F x) {  // cvttsd2si with a 64-bit destination
    if (!(x >= F(-9223372036854775808.0) && x < F(9223372036854775808.0))) return min_of<i64>;
    return i64(x);
}
template <class F>
NU_DEVICE i32 cvt_i32(F x) {  // cvttsd2si with a 32-bit destination
    if (!(x > F(-2147483649.0) && x < F(2147483648.0))) return min_of<i32>;
    return i32(x);
}
template <class To, class F>
NU_DEVICE To float_to_int(F x) {
    if constexpr (sizeof(To) == 8 && !is_signed<To>) {
        if (x >= F(9223372036854775808.0))
            return To(u64(cvt_i64(F(x - F(9223372036854775808.0)))) ^ (u64(1) << 63));
        return To(u64(cvt_i64(x)));
    } else if constexpr (sizeof(To) == 8 || (sizeof(To) == 4 && !is_signed<To>)) {
        return To(u64(cvt_i64(x)));
    } else {
        return To(u32(cvt_i32(x)));
    }
}

// float16 -> int: every finite half (|x| <= 65504) is in range of the 32-bit conversion, so
// only inf and NaN take float_to_int's x86 values (the integer indefinite of the conversion
// width; for uint64, +inf - 2^63 is still out of range and flips to 0); the rest truncate
// toward zero, one cvt.rzi on the GPU (NumPy truncates; Numba's cvt.rni rounds to nearest).
template <class To>
NU_DEVICE To half_to_int(f16 x) {
    if ((x.bits & 0x7c00u) == 0x7c00u) {
        if constexpr (sizeof(To) == 8 && !is_signed<To>) return x.bits == 0x7c00u ? To(0) : To(u64(1) << 63);
        else if constexpr (sizeof(To) == 8 || (sizeof(To) == 4 && !is_signed<To>)) return To(u64(min_of<i64>));
        else return To(u32(min_of<i32>));
    }
#if !defined(NU_HOST_BUILD) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 530
    if constexpr (sizeof(To) == 8 || (sizeof(To) == 4 && !is_signed<To>)) {
        i64 r;  // as float_to_int: through a 64-bit conversion, keeping the low bits
        asm("cvt.rzi.s64.f16 %0, %1;" : "=l"(r) : "h"(x.bits));
        return To(u64(r));
    } else {
        i32 r;
        asm("cvt.rzi.s32.f16 %0, %1;" : "=r"(r) : "h"(x.bits));
        return To(u32(r));
    }
#else
    return float_to_int<To>(float(x));
#endif
}

template <class To, class From>
NU_DEVICE To cast(From x) {
    if constexpr (is_complex<To>) {
        using V = typename To::value_type;
        if constexpr (is_complex<From>) {
            return To{V(x.re), V(x.im)};
        } else {
            return To{cast<V>(x), V(0)};
        }
    } else if constexpr (is_complex<From>) {
        return cast<To>(x.re);  // NumPy drops the imaginary part (ComplexWarning)
    } else if constexpr (is_bool<To>) {
        return x != From(0);  // NaN is true, as in NumPy
    } else if constexpr (is_int<To> && is_f16<From>) {
        return half_to_int<To>(x);
    } else if constexpr (is_int<To> && is_float<From>) {
        return float_to_int<To>(x);
    } else if constexpr (is_half<From> && is_float<To> && sizeof(To) == 8) {
        return half_to_f64(x);
    } else {
        return To(x);
    }
}

// Python's len(range(start, stop, step)), without overflow for any int64 arguments; a
// zero step (a ValueError in Python) runs no iteration.
NU_DEVICE u64 range_count(i64 start, i64 stop, i64 step) {
    if (step > 0 && start < stop) return (u64(stop) - u64(start) - 1) / u64(step) + 1;
    if (step < 0 && start > stop) return (u64(start) - u64(stop) - 1) / (u64(0) - u64(step)) + 1;
    return 0;
}

// Python's int.bit_count(): the ones in the binary form of |x|.
template <class T>
NU_DEVICE i64 bit_count(T x) {
    using U = unsigned_t<T>;
    U u = (is_signed<T> && x < T(0)) ? U(U(0) - U(x)) : U(x);
    i64 n = 0;
    for (; u; u &= U(u - 1)) ++n;
    return n;
}

template <class T>
NU_DEVICE bool truth(T x) {
    if constexpr (is_complex<T>) {
        return x.re != 0 || x.im != 0;
    } else {
        return x != T(0);
    }
}

// ---- integer and float arithmetic on the result type T -----------------------------------
// Signed overflow is undefined in C++, so integers are computed in the unsigned type of
// the same width, which wraps as NumPy does.
template <class T>
NU_DEVICE T add(T a, T b) {
    if constexpr (is_bool<T>) return a || b;
    else if constexpr (is_int<T>) return T(unsigned_t<T>(a) + unsigned_t<T>(b));
    else return a + b;
}
template <class T>
NU_DEVICE T sub(T a, T b) {
    if constexpr (is_int<T>) return T(unsigned_t<T>(a) - unsigned_t<T>(b));
    else return a - b;
}
template <class T>
NU_DEVICE T mul(T a, T b) {
    if constexpr (is_bool<T>) return a && b;
    else if constexpr (is_int<T>) return T(unsigned_t<T>(a) * unsigned_t<T>(b));
    else return a * b;
}
// -x of a float flips its sign bit alone, a NaN's too, as NumPy and CPython do. On the GPU
// `-a` compiles to an add (FADD/DADD on an H100), which returns a NaN of positive sign.
NU_DEVICE float flip_sign(float a) {
#ifdef __CUDA_ARCH__
    return __int_as_float(__float_as_int(a) ^ int(0x80000000u));
#else
    return -a;
#endif
}
NU_DEVICE double flip_sign(double a) {
#ifdef __CUDA_ARCH__
    return __longlong_as_double(__double_as_longlong(a) ^ (long long)(1ull << 63));
#else
    return -a;
#endif
}
template <class T>
NU_DEVICE T neg(T a) {
    if constexpr (is_int<T>) return T(unsigned_t<T>(0) - unsigned_t<T>(a));
    else if constexpr (is_float<T> && sizeof(T) >= 4) return flip_sign(a);
    else return -a;
}
template <class T>
NU_DEVICE T truediv(T a, T b) {
    return a / b;  // floats only: the translator casts integer operands to the float type
}

template <class T>
NU_DEVICE T floordiv(T a, T b);
template <class T>
NU_DEVICE T mod(T a, T b);

// NumPy's npy_divmod for floats: fmod, then fix the sign to follow the divisor and snap
// the quotient to an integer, so // and % agree with Python.
template <class T>
NU_DEVICE T float_divmod(T a, T b, T* modulus) {
    T m = T(::fmod(a, b));
    if (!b) {
        *modulus = m;
        return a / b;
    }
    T div = (a - m) / b;
    if (m) {
        if ((b < 0) != (m < 0)) {
            m += b;
            div -= T(1);
        }
    } else {
        m = T(::copysign(T(0), b));
    }
    T floordiv;
    if (div) {
        floordiv = T(::floor(div));
        if (div - floordiv > T(0.5)) floordiv += T(1);
    } else {
        floordiv = T(::copysign(T(0), a / b));
    }
    *modulus = m;
    return floordiv;
}

template <class T>
NU_DEVICE T floordiv(T a, T b) {
    if constexpr (is_half<T>) {
        return T(floordiv<float>(float(a), float(b)));  // NumPy: in float32, rounded back
    } else if constexpr (is_float<T>) {
        if (!b) return a / b;
        T m;
        return float_divmod(a, b, &m);
    } else if constexpr (is_bool<T>) {
        return b ? a : false;
    } else {
        if (b == 0) return T(0);
        if constexpr (is_signed<T>) {
            if (b == T(-1)) return neg(a);
            T q = T(a / b);
            if (T(a % b) != 0 && ((a < 0) != (b < 0))) q = T(q - 1);
            return q;
        } else {
            return T(a / b);
        }
    }
}

template <class T>
NU_DEVICE T mod(T a, T b) {
    if constexpr (is_half<T>) {
        return T(mod<float>(float(a), float(b)));
    } else if constexpr (is_float<T>) {
        if (!b) return T(::fmod(a, b));
        T m;
        float_divmod(a, b, &m);
        return m;
    } else if constexpr (is_bool<T>) {
        return false;
    } else {
        if (b == 0) return T(0);
        if constexpr (is_signed<T>) {
            if (b == T(-1)) return T(0);
            T r = T(a % b);
            if (r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
            return r;
        } else {
            return T(a % b);
        }
    }
}

// Integer power by squaring with wrap-around. NumPy raises for a negative exponent; we
// return the exact result where it is an integer (base 1 or -1) and 0 otherwise.
template <class T>
NU_DEVICE T ipow(T a, T b) {
    if constexpr (is_bool<T>) {
        return a || !b;
    } else {
        if constexpr (is_signed<T>) {
            if (b < 0) {
                if (a == 1) return T(1);
                if (a == -1) return (b & 1) ? T(-1) : T(1);
                return T(0);
            }
        }
        T r = T(1);
        T base = a;
        unsigned_t<T> e = unsigned_t<T>(b);
        while (e) {
            if (e & 1u) r = mul(r, base);
            e >>= 1;
            if (e) base = mul(base, base);
        }
        return r;
    }
}

template <class T>
NU_DEVICE T lshift(T a, T b) {
    if constexpr (is_bool<T>) {
        return T(int(a) << int(b));
    } else {
        if (unsigned_t<T>(b) >= unsigned_t<T>(bits_of<T>)) return T(0);
        return T(unsigned_t<T>(a) << int(b));
    }
}
template <class T>
NU_DEVICE T rshift(T a, T b) {
    if constexpr (is_bool<T>) {
        return T(int(a) >> int(b));
    } else {
        if (unsigned_t<T>(b) >= unsigned_t<T>(bits_of<T>)) return (a < 0) ? T(-1) : T(0);
        return T(a >> int(b));
    }
}
template <class T>
NU_DEVICE T invert(T a) {
    if constexpr (is_bool<T>) return !a;
    else return T(~a);
}
template <class T>
NU_DEVICE T abs(T a) {
    if constexpr (is_int<T>) return (a < 0) ? neg(a) : a;
    else if constexpr (is_bool<T>) return a;
    else if constexpr (is_half<T>) return T::from_bits(u16(a.bits & 0x7fffu));  // NumPy's: the sign bit
    else return T(::fabs(a));
}

// ---- comparisons --------------------------------------------------------------------------
// Integers (and bools) compare exactly even across signedness, as NumPy 2 does for mixed
// int64/uint64 and for Python ints out of the other operand's range. Other operands arrive
// already cast to their common type.
template <class A, class B>
NU_DEVICE bool int_less(A a, B b) {
    if constexpr (is_signed<A> == is_signed<B>) {
        return a < b;
    } else if constexpr (is_signed<A>) {
        return a < 0 || u64(a) < u64(b);
    } else {
        return b >= 0 && u64(a) < u64(b);
    }
}
template <class A, class B>
NU_DEVICE bool int_equal(A a, B b) {
    if constexpr (is_signed<A> == is_signed<B>) {
        return a == b;
    } else if constexpr (is_signed<A>) {
        return a >= 0 && u64(a) == u64(b);
    } else {
        return b >= 0 && u64(a) == u64(b);
    }
}

template <class A, class B> NU_DEVICE bool lt(A a, B b) {
    if constexpr (is_int<A> || is_bool<A>) return int_less(a, b);
    else return a < b;
}
// Floats use the operator asked for (setp.gt, setp.neu ... rather than a swapped or negated
// one): the same result, IEEE's unordered != included, and the PTX reads as the source.
template <class A, class B> NU_DEVICE bool gt(A a, B b) {
    if constexpr (is_float<A>) return a > b;
    else return lt(b, a);
}
template <class A, class B> NU_DEVICE bool le(A a, B b) {
    if constexpr (is_int<A> || is_bool<A>) return !int_less(b, a);
    else return a <= b;
}
template <class A, class B> NU_DEVICE bool ge(A a, B b) {
    if constexpr (is_float<A>) return a >= b;
    else return le(b, a);
}
template <class A, class B> NU_DEVICE bool eq(A a, B b) {
    if constexpr (is_int<A> || is_bool<A>) return int_equal(a, b);
    else return a == b;
}
template <class A, class B> NU_DEVICE bool ne(A a, B b) {
    if constexpr (is_float<A>) return a != b;
    else return !eq(a, b);
}

// Python's min/max keep the first of equal candidates and never pick a later NaN:
// min(a, b) is b only when b < a.
template <class T> NU_DEVICE T py_min(T a, T b) { return lt(b, a) ? b : a; }
template <class T> NU_DEVICE T py_max(T a, T b) { return lt(a, b) ? b : a; }

// A value or None (OptionalType in the translator): a device function that returns a value
// on some paths and None on others. {} is None.
template <class T> struct optional {
    T value;
    bool present;
};

// ---- tuples (divmod, frexp, modf, tuple-valued locals and returns) --------------------------
// Tuples of 0 to 8 values (kernel arguments may be any of these; the translator's own
// results use 2 to 4).
struct tuple0 {};  // (): an empty tuple argument or value
template <class A> struct tuple1 { A v0; };
template <class A, class B> struct tuple2 { A v0; B v1; };
template <class A, class B, class C> struct tuple3 { A v0; B v1; C v2; };
template <class A, class B, class C, class D> struct tuple4 { A v0; B v1; C v2; D v3; };
template <class A, class B, class C, class D, class E> struct tuple5 { A v0; B v1; C v2; D v3; E v4; };
template <class A, class B, class C, class D, class E, class F>
struct tuple6 { A v0; B v1; C v2; D v3; E v4; F v5; };
template <class A, class B, class C, class D, class E, class F, class G>
struct tuple7 { A v0; B v1; C v2; D v3; E v4; F v5; G v6; };
template <class A, class B, class C, class D, class E, class F, class G, class H>
struct tuple8 { A v0; B v1; C v2; D v3; E v4; F v5; G v6; H v7; };

template <class T>
NU_DEVICE tuple2<T, T> divmod(T a, T b) {
    if constexpr (is_half<T>) {
        const tuple2<float, float> r = divmod<float>(float(a), float(b));
        return {T(r.v0), T(r.v1)};
    } else if constexpr (is_float<T>) {
        T m;
        T q;
        if (!b) {
            q = a / b;
            m = T(::fmod(a, b));
        } else {
            q = float_divmod(a, b, &m);
        }
        return {q, m};
    } else {
        return {floordiv(a, b), mod(a, b)};
    }
}

}  // namespace nu

#include "nu_math.cuh"
#include "nu_complex.cuh"
#include "nu_datetime.cuh"  // datetime64/timedelta64 arithmetic
