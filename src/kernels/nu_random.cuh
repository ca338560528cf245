// src/kernels/nu_random.cuh: xoroshiro128+ generators of numba.cuda.random, for kernels
//
// Bit for bit Numba's algorithm (numba/cuda/random.py): xoroshiro128+ with rotations 55, 36
// and shift 14, uniforms from the top 53 bits, Box-Muller normals that discard the second
// value. Numba keeps a generator in a record {s0, s1}; the engine has no record dtypes, so
// the states are a uint64 array of shape (n, 2) and row i holds (s0, s1) of generator i.
// The host seeds the states (numbacuda_ufunc/cuda/random.py); kernels only advance them.
#pragma once

#include "nu_array.cuh"

namespace nu {
namespace detail {

NU_DEVICE u64 xoroshiro128p_rotl(u64 x, unsigned k) { return (x << k) | (x >> (64u - k)); }

// One step on a state held in registers; returns the output of the step.
NU_DEVICE u64 xoroshiro128p_step(u64& s0, u64& s1) {
    const u64 result = s0 + s1;
    const u64 x = s1 ^ s0;
    s0 = xoroshiro128p_rotl(s0, 55) ^ x ^ (x << 14);
    s1 = xoroshiro128p_rotl(x, 36);
    return result;
}

// Numba's uint64_to_unit_float64: the top 53 bits, scaled into [0, 1).
NU_DEVICE f64 xoroshiro128p_unit_f64(u64 x) {
    return f64(x >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace detail

namespace kern {

// Numba's states: a 1-d array of records (s0, s1), 16 bytes each, seen as the (n, 2) array
// of their words that the functions below take (the translator checks the record layout).
template <class R>
NU_DEVICE array<u64, 2> xoroshiro128p_words(const array<R, 1>& states) {
    static_assert(sizeof(R) == 2 * sizeof(u64), "xoroshiro128p states are records of two uint64");
    array<u64, 2> w;
    w.data = states.data;
    w.shape[0] = states.shape[0];
    w.shape[1] = 2;
    w.strides[0] = states.strides[0];
    w.strides[1] = static_cast<long long>(sizeof(u64));
    return w;
}

NU_DEVICE u64 xoroshiro128p_next(const array<u64, 2>& states, long long index) {
    u64& r0 = states(index, 0);
    u64& r1 = states(index, 1);
    u64 s0 = r0, s1 = r1;
    const u64 result = detail::xoroshiro128p_step(s0, s1);
    r0 = s0;
    r1 = s1;
    return result;
}

// Advances generator `index` by 2**64 steps (Numba's jump polynomial).
NU_DEVICE void xoroshiro128p_jump(const array<u64, 2>& states, long long index) {
    const u64 jump[2] = {0xBEAC0467EBA5FACBull, 0xD86B048B86AA9922ull};
    u64& r0 = states(index, 0);
    u64& r1 = states(index, 1);
    u64 s0 = r0, s1 = r1, j0 = 0, j1 = 0;
    for (int i = 0; i < 2; ++i) {
        for (int b = 0; b < 64; ++b) {
            if (jump[i] & (1ull << b)) {
                j0 ^= s0;
                j1 ^= s1;
            }
            detail::xoroshiro128p_step(s0, s1);
        }
    }
    r0 = j0;
    r1 = j1;
}

NU_DEVICE f64 xoroshiro128p_uniform_float64(const array<u64, 2>& states, long long index) {
    return detail::xoroshiro128p_unit_f64(xoroshiro128p_next(states, index));
}

// Rounded from the float64 value, as Numba does: it can round up to exactly 1.0f.
NU_DEVICE f32 xoroshiro128p_uniform_float32(const array<u64, 2>& states, long long index) {
    return f32(detail::xoroshiro128p_unit_f64(xoroshiro128p_next(states, index)));
}

NU_DEVICE f32 xoroshiro128p_normal_float32(const array<u64, 2>& states, long long index) {
    const f32 u1 = xoroshiro128p_uniform_float32(states, index);
    const f32 u2 = xoroshiro128p_uniform_float32(states, index);
    return nu::sqrt(-2.0f * nu::log(u1)) * nu::cos(6.283185307179586f * u2);
}

// Numba draws float32 uniforms here too, and takes the logarithm in float32.
NU_DEVICE f64 xoroshiro128p_normal_float64(const array<u64, 2>& states, long long index) {
    const f32 u1 = xoroshiro128p_uniform_float32(states, index);
    const f32 u2 = xoroshiro128p_uniform_float32(states, index);
    return nu::sqrt(-2.0 * f64(nu::log(u1))) * nu::cos(6.283185307179586 * f64(u2));
}

}  // namespace kern
}  // namespace nu
