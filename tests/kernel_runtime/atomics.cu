// tests/kernel_runtime/atomics.cu: every atomic operation on every supported type
//
// Written by hand in the shape the kernel translator generates; one kernel per element
// type, spelled once through a test-only macro.
#define NU_BOUNDSCHECK 1
#include "kernel.cuh"

// def atomics(acc, olds, vals):
//     i = cuda.grid(1); v = vals[i]
//     olds[i, 0] = cuda.atomic.add(acc, 0, v);  cuda.atomic.sub(acc, 1, v)
//     cuda.atomic.max(acc, 2, v); cuda.atomic.min(acc, 3, v)
//     cuda.atomic.nanmax(acc, 4, v); cuda.atomic.nanmin(acc, 5, v)
//     olds[i, 1] = cuda.atomic.exch(acc, 6, v)
//     old = acc[7]                                   # increment acc[7] through a CAS loop
//     while (prev := cuda.atomic.compare_and_swap(acc[7:], old, old + 1)) != old: old = prev
//     if integer: and/or/xor into acc[8], acc[9], acc[10]
//     if unsigned: olds[i, 2] = cuda.atomic.inc(acc, 11, 5); olds[i, 3] = cuda.atomic.dec(acc, 12, 5)
//     if float: cuda.atomic.nanmax(acc, 8, v); cuda.atomic.max(acc, 9, v)   # both start as NaN
#define NU_TEST_ATOMICS(T, NAME)                                                                  \
    __device__ void nu_atomics_##NAME(nu::array<T, 1> v_acc, nu::array<T, 2> v_olds,              \
                                      nu::array<T, 1> v_vals);                                    \
    __device__ void nu_atomics_##NAME(nu::array<T, 1> v_acc, nu::array<T, 2> v_olds,              \
                                      nu::array<T, 1> v_vals) {                                   \
        long long v_i = nu::kern::thread_idx(0) + nu::kern::block_idx(0) * nu::kern::block_dim(0); \
        if (v_i >= v_vals.size()) return;                                                         \
        T v_v = v_vals(v_i);                                                                      \
        v_olds(v_i, 0) = nu::kern::atomic_add(v_acc(0), v_v);                                     \
        nu::kern::atomic_sub(v_acc(1), v_v);                                                      \
        nu::kern::atomic_max(v_acc(2), v_v);                                                      \
        nu::kern::atomic_min(v_acc(3), v_v);                                                      \
        nu::kern::atomic_nanmax(v_acc(4), v_v);                                                   \
        nu::kern::atomic_nanmin(v_acc(5), v_v);                                                   \
        v_olds(v_i, 1) = nu::kern::atomic_exch(v_acc(6), v_v);                                    \
        T v_old = v_acc(7);                                                                       \
        for (;;) {                                                                                \
            T v_prev = nu::kern::atomic_cas(v_acc(7), v_old, T(v_old + T(1)));                    \
            if (v_prev == v_old) break;                                                           \
            v_old = v_prev;                                                                       \
        }                                                                                         \
        if constexpr (nu::is_int<T>) {                                                            \
            nu::kern::atomic_and(v_acc(8), v_v);                                                  \
            nu::kern::atomic_or(v_acc(9), v_v);                                                   \
            nu::kern::atomic_xor(v_acc(10), v_v);                                                 \
            if constexpr (!nu::is_signed<T>) {                                                    \
                v_olds(v_i, 2) = nu::kern::atomic_inc(v_acc(11), T(5));                           \
                v_olds(v_i, 3) = nu::kern::atomic_dec(v_acc(12), T(5));                           \
            }                                                                                     \
        } else {                                                                                  \
            nu::kern::atomic_nanmax(v_acc(8), v_v);                                               \
            nu::kern::atomic_max(v_acc(9), v_v);                                                  \
        }                                                                                         \
    }                                                                                             \
    NU_KERNEL_ENTRY(nu_kernel_atomics_##NAME, nu_atomics_##NAME, 11, 0, nu::karg<T, 1>,           \
                    nu::karg<T, 2>, nu::karg<T, 1>)

NU_TEST_ATOMICS(nu::i32, i4_00000030)
NU_TEST_ATOMICS(nu::u32, u4_00000031)
NU_TEST_ATOMICS(nu::i64, i8_00000032)
NU_TEST_ATOMICS(nu::u64, u8_00000033)
NU_TEST_ATOMICS(nu::f32, f4_00000034)
NU_TEST_ATOMICS(nu::f64, f8_00000035)
