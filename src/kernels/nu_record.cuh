// src/kernels/nu_record.cuh: record (structured dtype) support for translated functions
//
// The translator emits one C++ struct per NumPy record dtype, with every field at NumPy's
// byte offset (explicit padding members, checked by static_assert). A record value in
// translated code is a pointer to its bytes, so `r = a[i]; r.x = 1` writes the array, as
// Numba's records do. What the structs need from here:
//
// * `unaligned<T>`: a field of a packed dtype that does not sit at a multiple of its
//   type's alignment in every element (e.g. the float64 of [('x', f8), ('y', i4)], whose
//   elements are 12 bytes apart). It is stored as bytes and copied, so the GPU never issues
//   a misaligned load or store.
// * `field_view`: `a.x` of an array of records, the field of every element as an array of
//   the same shape and byte strides (NumPy's field view).
// * `member_array`: `r.h` of a field of sub-array type ('h', f4, (3, 2)), a C-contiguous
//   view of the bytes inside the record.
// * `chars<N>` and `store_chars`: an element of a fixed-width bytes or str array (S12, U12),
//   or such a field, and the store of a constant into it.
#pragma once

// The structs' offset checks. NVRTC has no constant offsetof (only the null-pointer form,
// which static_assert refuses); there the layout rests on its construction (every member
// starts at a multiple of its alignment, after explicit padding) and on the sizeof check,
// and the host backend's build of the same struct text checks every offset.
#ifdef __CUDACC_RTC__
#define NU_RECORD_OFFSET(T, member, offset)
#else
#define NU_RECORD_OFFSET(T, member, offset) \
    static_assert(__builtin_offsetof(T, member) == (offset), #T ": NumPy's offset of " #member)
#endif

namespace nu {

// One element of a fixed-width bytes (S<N>) or str (U<N/4>, UTF-32) array: its N bytes.
// Kernels store constants into them; the translator encodes the constant as NumPy does
// (truncated to the width, padded with NULs) into constant data, copied here byte by byte
// (S elements need not be aligned beyond a byte).
template <int N>
struct chars {
    unsigned char bytes[N];
};

NU_DEVICE void store_chars(void* dst, const unsigned char* src, int n) {
    unsigned char* out = static_cast<unsigned char*>(dst);
    for (int k = 0; k < n; ++k) out[k] = src[k];
}

template <class T>
struct unaligned {
    unsigned char bytes[sizeof(T)];

    NU_DEVICE T get() const {
        T v;
        unsigned char* out = reinterpret_cast<unsigned char*>(&v);
        for (unsigned k = 0; k < sizeof(T); ++k) out[k] = bytes[k];
        return v;
    }
    NU_DEVICE operator T() const { return get(); }
    NU_DEVICE unaligned& operator=(const T& v) {
#ifndef NU_HOST_BUILD
        if constexpr (sizeof(T) == 2) {
            // `st.u8` of the 16-bit register holding a native f16 result (mul.rn.f16) wrote
            // a wrong low byte on an H100, where the bytes of a 32-bit copy are right; the
            // widening is an asm statement, which NVVM cannot fold back into that store.
            const unsigned char* in = reinterpret_cast<const unsigned char*>(&v);
            const unsigned short h = (unsigned short)(in[0] | (in[1] << 8));
            unsigned int w;
            asm("cvt.u32.u16 %0, %1;" : "=r"(w) : "h"(h));
            bytes[0] = (unsigned char)w;
            bytes[1] = (unsigned char)(w >> 8);
            return *this;
        }
#endif
        const unsigned char* in = reinterpret_cast<const unsigned char*>(&v);
        for (unsigned k = 0; k < sizeof(T); ++k) bytes[k] = in[k];
        return *this;
    }
};

// The value of a field, whichever way it is stored.
template <class T>
NU_DEVICE const T& field_value(const T& v) {
    return v;
}
template <class T>
NU_DEVICE T field_value(const unaligned<T>& v) {
    return v.get();
}

template <class F, class T, int N>
NU_DEVICE array<F, N> field_view(const array<T, N>& a, long long offset) {
    array<F, N> r;
    r.data = a.data + offset;
    for (int k = 0; k < N; ++k) {
        r.shape[k] = a.shape[k];
        r.strides[k] = a.strides[k];
    }
    return r;
}

template <class F, int N>
NU_DEVICE array<F, N> member_array(void* p, const long long (&shape)[N]) {
    array<F, N> r;
    r.data = static_cast<char*>(p);
    long long stride = static_cast<long long>(sizeof(F));
    for (int k = N - 1; k >= 0; --k) {
        r.shape[k] = shape[k];
        r.strides[k] = stride;
        stride *= shape[k];
    }
    return r;
}

}  // namespace nu
