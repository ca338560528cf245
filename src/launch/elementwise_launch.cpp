// src/launch/elementwise_launch.cpp: elementwise variants: generated source, build, launch
#include "launch/elementwise_launch.h"

#include <algorithm>
#include <utility>

#include "runtime/errors.h"
#include "runtime/runtime.h"

namespace nu {

std::size_t elementwise_variant_hash::operator()(const elementwise_variant& v) const {
    std::size_t h = static_cast<std::size_t>(v.loop) * 1000003u;
    h ^= static_cast<std::size_t>(v.ndim) * 0x9e3779b97f4a7c15ull;
    h ^= static_cast<std::size_t>(v.scalars) * 0xbf58476d1ce4e5b9ull + (v.index64 ? 7 : 0);
    h = h * 31 + static_cast<std::size_t>(v.out);
    for (dtype t : v.in) h = h * 31 + static_cast<std::size_t>(t);
    return h;
}

const char* c_type_name(dtype t) {
    static constexpr const char* names[] = {"nu::b1",  "nu::i8",  "nu::i16", "nu::i32", "nu::i64",
                                            "nu::u8",  "nu::u16", "nu::u32", "nu::u64", "nu::f32",
                                            "nu::f64", "nu::c64", "nu::c128", "nu::f16", "nu::bf16"};
    // A record's C++ struct is the translator's (kernel_param::ctype); no loop takes one.
    // datetime64/timedelta64 values are int64 counts of their unit.
    if (is_datetime(t)) return "nu::i64";
    return is_record(t) ? "void" : names[static_cast<int>(t)];
}

int vector_width(dtype out, const std::vector<dtype>& in) {
    std::size_t widest = itemsize(out);
    for (dtype t : in) widest = std::max(widest, itemsize(t));
    return static_cast<int>(16 / widest);
}

int piece_width(dtype out, const std::vector<dtype>& in) { return std::max(4, vector_width(out, in)); }

inner_stride_plan plan_inner_strides(const std::vector<const void*>& pointers, const std::vector<dtype>& types,
                                     const std::vector<shape_t>& strides, unsigned long long scalars) {
    std::vector<dtype> in(types.begin() + 1, types.end());
    const int piece = piece_width(types[0], in);
    inner_stride_plan plan;
    plan.aligned = true;
    for (std::size_t k = 0; k < types.size(); ++k) {
        if ((scalars >> k) & 1ull) continue;
        const shape_t& st = strides[k];
        const auto size = static_cast<std::int64_t>(itemsize(types[k]));
        const std::int64_t inner = st.empty() ? 0 : st.back();
        // The output never takes class 2: its stores must land in element order.
        const unsigned long long cls = inner == size ? 1 : (inner == 0 && k > 0 ? 2 : 0);
        plan.classes |= cls << (2 * k);
        if (cls != 1) continue;
        // elementwise.cuh's piece_vec: up to 16 bytes, at most a piece.
        const std::int64_t bytes = size >= 16 ? size : std::min<std::int64_t>(16, size * piece);
        bool ok = reinterpret_cast<std::uintptr_t>(pointers[k]) % static_cast<std::uintptr_t>(bytes) == 0;
        for (std::size_t d = 0; d + 1 < st.size(); ++d) ok = ok && st[d] % bytes == 0;
        plan.aligned = plan.aligned && ok;
    }
    return plan;
}

std::string elementwise_source(const std::string& function, const std::string& function_source,
                               dtype loop_out, const std::vector<dtype>& loop_in,
                               const elementwise_variant& v, const std::string& entry) {
    auto join = [](const std::vector<dtype>& types) {
        std::string s;
        for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + std::string(c_type_name(types[i]));
        return s;
    };
    std::string src = "#include \"elementwise.cuh\"\n\n" + function_source + "\n\n";
    src += "struct nu_op {\n"
           "    template <class... A>\n"
           "    __device__ __forceinline__ auto operator()(A... a) const { return " + function + "(a...); }\n"
           "};\n\n";
    src += "NU_ELEMENTWISE_ENTRY(" + entry + ", nu::elementwise<nu_op, " + std::to_string(v.ndim) +
           ", " + std::to_string(v.scalars) + "ull, " + (v.index64 ? "long long" : "unsigned int") +
           ", " + c_type_name(loop_out) + ", " + c_type_name(v.out) + ", nu::types<" + join(loop_in) +
           ">, nu::types<" + join(v.in) + ">, " + std::to_string(v.inner) + "ull>)\n";
    return src;
}

elementwise_params::elementwise_params(long long n, bool aligned, const shape_t& shape)
    : m_dims(std::max<std::size_t>(shape.size(), 1)) {
    m_words.push_back(n);
    m_words.push_back(aligned ? 1 : 0);
    for (std::size_t d = 0; d < m_dims; ++d) m_words.push_back(d < shape.size() ? shape[d] : n);
}

void elementwise_params::add(const void* ptr, const unsigned char* scalar16,
                             const shape_t& strides) {
    m_words.push_back(reinterpret_cast<long long>(ptr));
    long long value[2] = {0, 0};
    if (scalar16 != nullptr) std::copy(scalar16, scalar16 + 16, reinterpret_cast<unsigned char*>(value));
    m_words.push_back(value[0]);
    m_words.push_back(value[1]);
    for (std::size_t d = 0; d < m_dims; ++d) m_words.push_back(d < strides.size() ? strides[d] : 0);
}

void launch_elementwise(const elementwise_kernel& k, elementwise_params& params, long long n,
                        bool host, bool parallel, bool vectorized, bool strided, stream_handle stream) {
    // A strided variant's thread takes a piece at a time: its grid is sized in pieces (the
    // host keeps its chunks of 256 * 16 elements).
    const long long per_thread = vectorized ? k.vec : strided && !host ? k.piece : 1;
    launch_kernel(k.kernel, params.data(), n, host, parallel, 256, per_thread, stream);
}

void elementwise_params::set_pointer(std::size_t k, const void* ptr) {
    // Layout of add(): n, aligned, shape[m_dims], then per operand ptr, value[2], strides.
    m_words[2 + m_dims + k * (3 + m_dims)] = reinterpret_cast<long long>(ptr);
}

namespace {

// Bytes [lo, hi) that `n` elements of `itemsize` bytes, `step` apart from `p`, touch.
std::pair<std::uintptr_t, std::uintptr_t> span_of(const char* p, long long n, std::intptr_t step,
                                                  long long itemsize) {
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    const std::intptr_t last = step * static_cast<std::intptr_t>(n - 1);
    const std::uintptr_t lo = last < 0 ? base + last : base;
    const std::uintptr_t hi = (last < 0 ? base : base + last) + static_cast<std::uintptr_t>(itemsize);
    return {lo, hi};
}

// Whether an input shares memory with the output other than element for element (the
// same pointer and the same nonzero stride, which a vectorised loop handles).
bool output_fed_back(const numpy_inner_loop& loop, char* const* args, long long n,
                     const std::intptr_t* steps) {
    const char* out = args[loop.nin];
    const auto o = span_of(out, n, steps[loop.nin], loop.itemsizes[0]);
    for (int k = 0; k < loop.nin; ++k) {
        if (args[k] == out && steps[k] == steps[loop.nin] && steps[k] != 0 &&
            loop.itemsizes[k + 1] == loop.itemsizes[0]) {
            continue;
        }
        const auto a = span_of(args[k], n, steps[k], loop.itemsizes[k + 1]);
        if (a.first < o.second && o.first < a.second) return true;
    }
    return false;
}

}  // namespace

void run_numpy_inner_loop(const numpy_inner_loop& loop, char* const* args, long long n,
                          const std::intptr_t* steps) noexcept {
    if (n <= 0) return;
    if (n > 1 && output_fed_back(loop, args, n, steps)) {
        elementwise_params one(1, false, shape_t{1});
        for (int k = 0; k <= loop.nin; ++k) one.add(nullptr, nullptr, shape_t{0});
        long long report[4];
        for (long long i = 0; i < n; ++i) {
            one.set_pointer(0, args[loop.nin] + i * steps[loop.nin]);
            for (int k = 0; k < loop.nin; ++k) one.set_pointer(k + 1, args[k] + i * steps[k]);
            loop.entry(one.data(), 0, 1, report);
        }
        return;
    }
    // The kernel takes the output first, NumPy passes it last.
    elementwise_params params(n, false, shape_t{n});
    params.add(args[loop.nin], nullptr, shape_t{static_cast<std::int64_t>(steps[loop.nin])});
    for (int k = 0; k < loop.nin; ++k) {
        params.add(args[k], nullptr, shape_t{static_cast<std::int64_t>(steps[k])});
    }
    // 4 Ki elements per chunk, as launch_kernel's strided elementwise chunks (256 * 16).
    run_host_items_to_end(loop.entry, params.data(), n, loop.parallel, 4096);
}

}  // namespace nu
