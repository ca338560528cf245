// src/kernels/nu_vector.cuh: CUDA's vector types (float4, short2...) under Numba's names
//
// Numba's cuda.float32x4 is CUDA's float4: the translator names it nu::float32x4, which is
// the built-in type on the device (so a value reaches foreign CUDA C++ as a float4) and a
// struct of the same members, size and alignment in host builds. CUDA 13 deprecates the
// 16-byte-aligned 4 x 64-bit names (double4...) in favour of *_16a: the same layout.
//
// make_vector<V>(parts...) builds a vector from scalars of its element type and vectors of
// the same element type, flattened in order (cuda.float32x4(float32x2(a, b), c, d)); the
// translator has checked the count and cast the scalars.
#pragma once

namespace nu {

#ifdef NU_HOST_BUILD
#define NU_VECTOR_1(name, T, align) struct alignas(align) name { T x; };
#define NU_VECTOR_2(name, T, align) struct alignas(align) name { T x, y; };
#define NU_VECTOR_3(name, T, align) struct alignas(align) name { T x, y, z; };
#define NU_VECTOR_4(name, T, align) struct alignas(align) name { T x, y, z, w; };
// (name, element, alignment of CUDA's type: vector_types.h)
#define NU_VECTOR_FAMILY(prefix, T, a1, a2, a3, a4, c1, c2, c3, c4) \
    NU_VECTOR_1(prefix##x1, T, a1)                                  \
    NU_VECTOR_2(prefix##x2, T, a2)                                  \
    NU_VECTOR_3(prefix##x3, T, a3)                                  \
    NU_VECTOR_4(prefix##x4, T, a4)
#else
#define NU_VECTOR_FAMILY(prefix, T, a1, a2, a3, a4, c1, c2, c3, c4) \
    using prefix##x1 = ::c1;                                        \
    using prefix##x2 = ::c2;                                        \
    using prefix##x3 = ::c3;                                        \
    using prefix##x4 = ::c4;
#endif

#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 13
#define NU_WIDE4(name) name##4_16a
#else
#define NU_WIDE4(name) name##4
#endif

NU_VECTOR_FAMILY(int8, i8, 1, 2, 1, 4, char1, char2, char3, char4)
NU_VECTOR_FAMILY(int16, i16, 2, 4, 2, 8, short1, short2, short3, short4)
NU_VECTOR_FAMILY(int32, i32, 4, 8, 4, 16, int1, int2, int3, int4)
NU_VECTOR_FAMILY(int64, i64, 8, 16, 8, 16, longlong1, longlong2, longlong3, NU_WIDE4(longlong))
NU_VECTOR_FAMILY(uint8, u8, 1, 2, 1, 4, uchar1, uchar2, uchar3, uchar4)
NU_VECTOR_FAMILY(uint16, u16, 2, 4, 2, 8, ushort1, ushort2, ushort3, ushort4)
NU_VECTOR_FAMILY(uint32, u32, 4, 8, 4, 16, uint1, uint2, uint3, uint4)
NU_VECTOR_FAMILY(uint64, u64, 8, 16, 8, 16, ulonglong1, ulonglong2, ulonglong3, NU_WIDE4(ulonglong))
NU_VECTOR_FAMILY(float32, f32, 4, 8, 4, 16, float1, float2, float3, float4)
NU_VECTOR_FAMILY(float64, f64, 8, 16, 8, 16, double1, double2, double3, NU_WIDE4(double))

#undef NU_VECTOR_FAMILY
#undef NU_WIDE4
#ifdef NU_HOST_BUILD
#undef NU_VECTOR_1
#undef NU_VECTOR_2
#undef NU_VECTOR_3
#undef NU_VECTOR_4
#endif

// The element type and component count of a vector type. Every CUDA vector type is
// exactly its components (no tail padding: float3 is 12 bytes, double4_16a 32).
template <class V>
struct vector_info {
    using elem = decltype(V{}.x);
    static constexpr int n = int(sizeof(V) / sizeof(elem));
    static_assert(n >= 1 && n <= 4 && sizeof(V) == n * sizeof(elem), "a CUDA vector type");
};

namespace detail {
template <class T>
NU_DEVICE void append_components(T* out, int& k, const T& scalar) {
    out[k++] = scalar;
}
// A scalar argument matches both overloads and partial ordering picks the one above; a
// vector argument cannot deduce T twice there, so it gets this one.
template <class T, class V>
NU_DEVICE void append_components(T* out, int& k, const V& v) {
    constexpr int n = vector_info<V>::n;
    out[k++] = v.x;
    if constexpr (n > 1) out[k++] = v.y;
    if constexpr (n > 2) out[k++] = v.z;
    if constexpr (n > 3) out[k++] = v.w;
}
}  // namespace detail

template <class V, class... Parts>
NU_DEVICE V make_vector(const Parts&... parts) {
    using T = typename vector_info<V>::elem;
    constexpr int n = vector_info<V>::n;
    T c[4] = {};
    int k = 0;
    (detail::append_components(c, k, parts), ...);
    V v{};
    v.x = c[0];
    if constexpr (n > 1) v.y = c[1];
    if constexpr (n > 2) v.z = c[2];
    if constexpr (n > 3) v.w = c[3];
    return v;
}

}  // namespace nu
