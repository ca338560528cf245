// src/kernels/nu_cache_hints.cuh: cuda.ldca/ldcg/ldcs/ldlu/ldcv and cuda.stcg/stcs/stwb/stwt
//
// Loads and stores of one element with a PTX cache operator (ld.global.<op>.b<bits>,
// st.global.<op>.b<bits>). The operator is a hint to the memory system only, so the host
// emulation does a plain load or store. The translator hands these an element's address
// (checked and wrapped as a[i] is) and the element type: integers, float16/32/64.
#pragma once

#include "nu_scalar.cuh"

namespace nu {
namespace kern {

enum class cache_op { ca, cg, cs, lu, cv, wb, wt };

#ifdef NU_HOST_BUILD

template <cache_op Op, class T>
inline T cache_load(const T* p) {
    return *p;
}

template <cache_op Op, class T, class V>
inline void cache_store(T* p, V v) {
    *p = static_cast<T>(v);
}

#else

namespace cache_detail {

// The element's bits in an unsigned word of its width (a 16-bit register for 8-bit
// elements: PTX loads and stores .b8 through .b16 registers).
template <int Bytes> struct cache_word;
template <> struct cache_word<1> { using type = unsigned short; };
template <> struct cache_word<2> { using type = unsigned short; };
template <> struct cache_word<4> { using type = unsigned int; };
template <> struct cache_word<8> { using type = unsigned long long; };

template <cache_op Op, int Bytes> struct cache_load_asm;
template <cache_op Op, int Bytes> struct cache_store_asm;

// One specialisation per (operator, width); the asm text must be a literal, so a macro
// writes them. The address is converted to the global window first (cvta.to.global), as
// ld.global/st.global take global addresses, not generic ones.
#define NU_CACHE_LOAD(OP, BYTES, BITS, REG)                                                   \
    template <> struct cache_load_asm<cache_op::OP, BYTES> {                                 \
        static __device__ __forceinline__ cache_word<BYTES>::type load(const void* p) {      \
            cache_word<BYTES>::type r;                                                        \
            asm volatile("ld.global." #OP ".b" #BITS " %0, [%1];"                             \
                         : "=" REG(r) : "l"(__cvta_generic_to_global(p)) : "memory");         \
            return r;                                                                         \
        }                                                                                     \
    };
#define NU_CACHE_STORE(OP, BYTES, BITS, REG)                                                  \
    template <> struct cache_store_asm<cache_op::OP, BYTES> {                                \
        static __device__ __forceinline__ void store(void* p, cache_word<BYTES>::type v) {    \
            asm volatile("st.global." #OP ".b" #BITS " [%0], %1;"                             \
                         : : "l"(__cvta_generic_to_global(p)), REG(v) : "memory");            \
        }                                                                                     \
    };
#define NU_CACHE_WIDTHS(MACRO, OP) \
    MACRO(OP, 1, 8, "h") MACRO(OP, 2, 16, "h") MACRO(OP, 4, 32, "r") MACRO(OP, 8, 64, "l")

NU_CACHE_WIDTHS(NU_CACHE_LOAD, ca)
NU_CACHE_WIDTHS(NU_CACHE_LOAD, cg)
NU_CACHE_WIDTHS(NU_CACHE_LOAD, cs)
NU_CACHE_WIDTHS(NU_CACHE_LOAD, lu)
NU_CACHE_WIDTHS(NU_CACHE_LOAD, cv)
NU_CACHE_WIDTHS(NU_CACHE_STORE, cg)
NU_CACHE_WIDTHS(NU_CACHE_STORE, cs)
NU_CACHE_WIDTHS(NU_CACHE_STORE, wb)
NU_CACHE_WIDTHS(NU_CACHE_STORE, wt)

#undef NU_CACHE_WIDTHS
#undef NU_CACHE_STORE
#undef NU_CACHE_LOAD

}  // namespace cache_detail

template <cache_op Op, class T>
NU_DEVICE T cache_load(const T* p) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "cache_load: 1, 2, 4 or 8-byte elements");
    using W = typename cache_detail::cache_word<sizeof(T)>::type;
    const W w = cache_detail::cache_load_asm<Op, sizeof(T)>::load(p);
    union {
        W word;
        unsigned char bytes[sizeof(W)];
    } in{w};
    T out;
    unsigned char* dst = reinterpret_cast<unsigned char*>(&out);
    for (unsigned k = 0; k < sizeof(T); ++k) dst[k] = in.bytes[k];  // little-endian: low bytes
    return out;
}

template <cache_op Op, class T, class V>
NU_DEVICE void cache_store(T* p, V value) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "cache_store: 1, 2, 4 or 8-byte elements");
    using W = typename cache_detail::cache_word<sizeof(T)>::type;
    const T v = static_cast<T>(value);
    union {
        W word;
        unsigned char bytes[sizeof(W)];
    } out{0};
    const unsigned char* src = reinterpret_cast<const unsigned char*>(&v);
    for (unsigned k = 0; k < sizeof(T); ++k) out.bytes[k] = src[k];
    cache_detail::cache_store_asm<Op, sizeof(T)>::store(p, out.word);
}

#endif

}  // namespace kern
}  // namespace nu
