// src/launch/elementwise_launch.h: elementwise kernel variants: source, build, launch
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "array/array_view.h"
#include "launch/kernel.h"
#include "runtime/backend.h"

namespace nu {

// What distinguishes two kernels of one loop. The element types are the operands' own
// (the kernel converts to and from the loop's types), so inputs are never cast on the
// host or in a separate pass.
struct elementwise_variant {
    int loop = 0;
    int ndim = 0;                    // 0: contiguous 1-d; else strided over ndim dims
    unsigned long long scalars = 0;  // bit k: operand k (0 = output) passed by value
    bool index64 = false;            // more than 2^31 - 1 elements
    // Strided variants: 2 bits per operand (0 = the output), the class of its innermost
    // stride (elementwise.cuh's run_pieces): 0 any, 1 unit (one element), 2 zero.
    unsigned long long inner = 0;
    dtype out = dtype::float64;
    std::vector<dtype> in;

    bool operator==(const elementwise_variant& o) const {
        return loop == o.loop && ndim == o.ndim && scalars == o.scalars &&
               index64 == o.index64 && inner == o.inner && out == o.out && in == o.in;
    }
};

struct elementwise_variant_hash {
    std::size_t operator()(const elementwise_variant& v) const;
};

struct elementwise_kernel {
    compiled_kernel kernel;
    int vec = 1;    // elements per vector access in the contiguous variant
    int piece = 1;  // elements per thread step in the strided variants (elementwise.cuh's k_piece)
};

const char* c_type_name(dtype t);  // "nu::f32"

// Elements per thread step of the contiguous variant: one 16-byte access of the widest
// operand. Must agree with elementwise.cuh's k_vec.
int vector_width(dtype out, const std::vector<dtype>& in);

// Elements per piece of the strided variants: must agree with elementwise.cuh's k_piece.
int piece_width(dtype out, const std::vector<dtype>& in);

// Strided variants: each operand's innermost-stride class (elementwise_variant::inner) for
// the coalesced `strides` (output first; `scalar` bit k: operand k by value), and whether
// every unit-stride row allows the kernel's vector accesses: each such operand's pointer
// and outer strides are multiples of its vector's bytes.
struct inner_stride_plan {
    unsigned long long classes = 0;
    bool aligned = false;
};
inner_stride_plan plan_inner_strides(const std::vector<const void*>& pointers, const std::vector<dtype>& types,
                                     const std::vector<shape_t>& strides, unsigned long long scalars);

// The translation unit for one variant: the header, the translated function, a functor
// and one entry point named `entry`.
std::string elementwise_source(const std::string& function, const std::string& function_source,
                               dtype loop_out, const std::vector<dtype>& loop_in,
                               const elementwise_variant& v, const std::string& entry);

// Parameter block of elementwise.cuh's ew_params, as 8-byte words.
class elementwise_params {
public:
    elementwise_params(long long n, bool aligned, const shape_t& shape);
    // Appends one operand (output first): pointer, by-value scalar bytes, strides.
    void add(const void* ptr, const unsigned char* scalar16, const shape_t& strides);
    void* data() { return m_words.data(); }
    // Moves operand `k`'s pointer (0 = the output), e.g. to step a one-element call along.
    void set_pointer(std::size_t k, const void* ptr);

private:
    std::size_t m_dims;
    small_vector<long long, 64> m_words;  // inline: built on every call
};

// A host loop as NumPy's inner loop calls it (np.ufunc over a cpu/parallel ufunc): the
// strided 1-d variant of one loop over the loop's own dtypes, with 64-bit indices.
struct numpy_inner_loop {
    host_entry entry = nullptr;
    std::shared_ptr<host_library> library;  // keeps `entry` loaded while NumPy may call it
    int nin = 0;
    bool parallel = false;
    std::vector<long long> itemsizes;  // bytes of the output's element, then each input's
};

// One call of NumPy's inner loop (PyUFuncGenericFunction): `args` holds the inputs, then
// the output; `n` elements; `steps` the byte strides in the same order (zero for a
// broadcast operand, negative for a reversed view). Runs to the end: nothing is thrown.
// NumPy's reduce and accumulate pass the output again as an input, shifted or with stride
// 0, and expect each element to see the one written before it: such a call runs one
// element at a time, in order (the kernel's unit-stride loop takes restrict pointers).
void run_numpy_inner_loop(const numpy_inner_loop& loop, char* const* args, long long n,
                          const std::intptr_t* steps) noexcept;

// Runs `n` elements with the contiguous variant's vector width when `vectorized`, in
// pieces when `strided`.
void launch_elementwise(const elementwise_kernel& k, elementwise_params& params, long long n,
                        bool host, bool parallel, bool vectorized, bool strided, stream_handle stream);

}  // namespace nu
