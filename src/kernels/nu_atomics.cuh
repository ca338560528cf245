// src/kernels/nu_atomics.cuh: cuda.atomic.* for @cuda.jit kernels (part of kernel.cuh)
//
// Not a standalone header: kernel.cuh includes it, outside its namespaces, after the thread
// geometry, barriers and nu::detail's word helpers (to_word, from_word, is_word_int, ...)
// that these use. Each intrinsic has a device form (the CUDA atomic) and a host form run by
// host_emulation.h, as everything in kernel.cuh.
#pragma once

namespace nu {
namespace kern {

// ---- atomics: each returns the old value -------------------------------------------------
#define NU_ATOMIC_TYPES(op)                                                   \
    static_assert(detail::is_word_int<T> || detail::is_word_float<T>,        \
                  "nu::kern::atomic_" #op                                    \
                  ": supported on int32, int64, uint32, uint64, float16, bfloat16, float32 " \
                  "and float64")
#define NU_ATOMIC_INTS(op)                                                    \
    static_assert(detail::is_word_int<T>,                                     \
                  "nu::kern::atomic_" #op ": supported on int32, int64, uint32 and uint64")

template <class T>
NU_DEVICE T atomic_add(T& ref, T v) {
    NU_ATOMIC_TYPES(add);
#ifdef NU_HOST_BUILD
    if constexpr (detail::is_word_float<T>)
        return detail::atomic_update(ref, [v](T old) { return old + v; });
    else
        return __atomic_fetch_add(&ref, v, __ATOMIC_RELAXED);
#else
    if constexpr (is_half<T>) return detail::atomic_update(ref, [v](T old) { return old + v; });
    else if constexpr (detail::same<T, i64>) return T(atomicAdd(reinterpret_cast<u64*>(&ref), u64(v)));
    else return atomicAdd(&ref, v);
#endif
}

template <class T>
NU_DEVICE T atomic_sub(T& ref, T v) {
    NU_ATOMIC_TYPES(sub);
#ifdef NU_HOST_BUILD
    if constexpr (detail::is_word_float<T>)
        return detail::atomic_update(ref, [v](T old) { return old - v; });
    else
        return __atomic_fetch_sub(&ref, v, __ATOMIC_RELAXED);
#else
    if constexpr (is_half<T>)
        return detail::atomic_update(ref, [v](T old) { return old - v; });
    else if constexpr (detail::is_word_float<T>)
        return atomicAdd(&ref, -v);  // a - b == a + (-b) in IEEE
    else if constexpr (sizeof(T) == 8)
        return T(atomicAdd(reinterpret_cast<u64*>(&ref), u64(0) - u64(v)));
    else
        return atomicSub(&ref, v);
#endif
}

// max/min: Python's max(ary[idx], val), as numba-cuda: a NaN argument changes nothing and
// a stored NaN stays.
template <class T>
NU_DEVICE T atomic_max(T& ref, T v) {
    NU_ATOMIC_TYPES(max);
    if constexpr (detail::is_word_float<T>) {
        return detail::atomic_update(ref, [v](T old) { return detail::max_nan(old, v); });
    } else {
#ifdef NU_HOST_BUILD
        return detail::atomic_update(ref, [v](T old) { return v > old ? v : old; });
#else
        return atomicMax(&ref, v);
#endif
    }
}

template <class T>
NU_DEVICE T atomic_min(T& ref, T v) {
    NU_ATOMIC_TYPES(min);
    if constexpr (detail::is_word_float<T>) {
        return detail::atomic_update(ref, [v](T old) { return detail::min_nan(old, v); });
    } else {
#ifdef NU_HOST_BUILD
        return detail::atomic_update(ref, [v](T old) { return v < old ? v : old; });
#else
        return atomicMin(&ref, v);
#endif
    }
}

// nanmax/nanmin: NaN is a missing value (np.fmax): a NaN argument changes nothing, a stored
// NaN is replaced. On integers (which Numba also allows) they are max/min.
template <class T>
NU_DEVICE T atomic_nanmax(T& ref, T v) {
    NU_ATOMIC_TYPES(nanmax);
    if constexpr (detail::is_word_float<T>) {
        return detail::atomic_update(ref, [v](T old) { return detail::fmax_nan(old, v); });
    } else {
        return atomic_max(ref, v);
    }
}

template <class T>
NU_DEVICE T atomic_nanmin(T& ref, T v) {
    NU_ATOMIC_TYPES(nanmin);
    if constexpr (detail::is_word_float<T>) {
        return detail::atomic_update(ref, [v](T old) { return detail::fmin_nan(old, v); });
    } else {
        return atomic_min(ref, v);
    }
}

// i64 goes through the u64 overloads: the bitwise result is the same.
template <class T>
NU_DEVICE T atomic_and(T& ref, T v) {
    NU_ATOMIC_INTS(and);
#ifdef NU_HOST_BUILD
    return __atomic_fetch_and(&ref, v, __ATOMIC_RELAXED);
#else
    if constexpr (detail::same<T, i64>) return T(atomicAnd(reinterpret_cast<u64*>(&ref), u64(v)));
    else return atomicAnd(&ref, v);
#endif
}

template <class T>
NU_DEVICE T atomic_or(T& ref, T v) {
    NU_ATOMIC_INTS(or);
#ifdef NU_HOST_BUILD
    return __atomic_fetch_or(&ref, v, __ATOMIC_RELAXED);
#else
    if constexpr (detail::same<T, i64>) return T(atomicOr(reinterpret_cast<u64*>(&ref), u64(v)));
    else return atomicOr(&ref, v);
#endif
}

template <class T>
NU_DEVICE T atomic_xor(T& ref, T v) {
    NU_ATOMIC_INTS(xor);
#ifdef NU_HOST_BUILD
    return __atomic_fetch_xor(&ref, v, __ATOMIC_RELAXED);
#else
    if constexpr (detail::same<T, i64>) return T(atomicXor(reinterpret_cast<u64*>(&ref), u64(v)));
    else return atomicXor(&ref, v);
#endif
}

template <class T>
NU_DEVICE T atomic_exch(T& ref, T v) {
    NU_ATOMIC_TYPES(exch);
    using W = detail::word_t<T>;
#ifdef NU_HOST_BUILD
    return detail::from_word<T>(
        __atomic_exchange_n(reinterpret_cast<W*>(&ref), detail::to_word(v), __ATOMIC_RELAXED));
#else
    if constexpr (is_half<T>)
        return detail::atomic_update(ref, [v](T) { return v; });
    else if constexpr (detail::same<T, f32> || detail::same<T, i32> || detail::same<T, u32> ||
                       detail::same<T, u64>)
        return atomicExch(&ref, v);
    else
        return detail::from_word<T>(atomicExch(reinterpret_cast<W*>(&ref), detail::to_word(v)));
#endif
}

// CUDA's atomicInc / atomicDec: inc wraps to 0 past v, dec wraps to v below 0 or above v.
template <class T>
NU_DEVICE T atomic_inc(T& ref, T v) {
    static_assert(detail::same<T, u32> || detail::same<T, u64>,
                  "nu::kern::atomic_inc: supported on uint32 and uint64");
#ifndef NU_HOST_BUILD
    if constexpr (detail::same<T, u32>) return atomicInc(&ref, v);
#endif
    return detail::atomic_update(ref, [v](T old) { return old >= v ? T(0) : T(old + 1); });
}

template <class T>
NU_DEVICE T atomic_dec(T& ref, T v) {
    static_assert(detail::same<T, u32> || detail::same<T, u64>,
                  "nu::kern::atomic_dec: supported on uint32 and uint64");
#ifndef NU_HOST_BUILD
    if constexpr (detail::same<T, u32>) return atomicDec(&ref, v);
#endif
    return detail::atomic_update(ref,
                                 [v](T old) { return (old == 0 || old > v) ? v : T(old - 1); });
}

// Floats compare bit patterns, as the hardware does: -0.0 does not match 0.0, a NaN
// matches the identical NaN.
template <class T>
NU_DEVICE T atomic_cas(T& ref, T expected, T desired) {
    NU_ATOMIC_TYPES(cas);
    using W = detail::word_t<T>;
#ifndef NU_HOST_BUILD
    if constexpr (detail::same<T, i32> || detail::same<T, u32> || detail::same<T, u64>)
        return atomicCAS(&ref, expected, desired);
#endif
    const W old = detail::cas_word(reinterpret_cast<W*>(&ref), detail::to_word(expected),
                                   detail::to_word(desired));
    return detail::from_word<T>(old);
}

#undef NU_ATOMIC_TYPES
#undef NU_ATOMIC_INTS

}  // namespace kern
}  // namespace nu
