// src/launch/elementwise_launch.cpp: elementwise variants: generated source, build, launch
#include "launch/elementwise_launch.h"

#include <algorithm>
#include <thread>

#include "compile/host_build.h"
#include "compile/nvrtc.h"
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
                                            "nu::f64", "nu::c64", "nu::c128"};
    return names[static_cast<int>(t)];
}

int vector_width(dtype out, const std::vector<dtype>& in) {
    std::size_t widest = itemsize(out);
    for (dtype t : in) widest = std::max(widest, itemsize(t));
    return static_cast<int>(16 / widest);
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
           ">, nu::types<" + join(v.in) + ">>)\n";
    return src;
}

elementwise_kernel build_elementwise(const std::string& source, const std::string& entry,
                                     bool host, bool fastmath, int vec) {
    elementwise_kernel k;
    k.vec = vec;
    k.name = entry;
    k.source = source;
    if (host) {
        std::vector<std::string> options;
        if (fastmath) options.push_back("-ffast-math");
        k.library = build_host(source, options);
        k.entry = reinterpret_cast<host_entry>(k.library->symbol(entry));
        return k;
    }
    backend& b = active_backend();
    const device_info info = b.device(b.current_device());
    nvrtc_options opts;
    opts.cc_major = info.cc_major;
    opts.cc_minor = info.cc_minor;
    opts.cubin = true;
    opts.fastmath = fastmath;
    k.function = b.load_function(nvrtc_build(source, opts), entry);
    return k;
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

namespace {

constexpr unsigned k_block = 256;
// Below this many elements a parallel host launch is not worth starting threads for.
constexpr long long k_parallel_min = 1 << 16;

int multiprocessors() {
    // Queried once per device: launches must not pay for driver attribute calls.
    static int cached[64] = {};
    backend& b = active_backend();
    const int dev = b.current_device();
    if (dev < 64 && cached[dev] == 0) cached[dev] = b.device(dev).multiprocessors;
    return dev < 64 ? cached[dev] : b.device(dev).multiprocessors;
}

}  // namespace

void launch_elementwise(const elementwise_kernel& k, elementwise_params& params, long long n,
                        bool host, bool parallel, bool vectorized, stream_handle stream) {
    if (host) {
        // hardware_concurrency() reads sysfs: once per process, not per launch.
        static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        if (!parallel || cores == 1 || n < k_parallel_min) {
            k.entry(params.data(), 0, n);
            return;
        }
        std::vector<std::thread> workers;
        const long long chunk = (n + cores - 1) / cores;
        for (unsigned t = 0; t < cores; ++t) {
            const long long begin = t * chunk, end = std::min(n, begin + chunk);
            if (begin < end) workers.emplace_back(k.entry, params.data(), begin, end);
        }
        for (std::thread& w : workers) w.join();
        return;
    }
    const long long per_thread = vectorized ? k.vec : 1;
    const long long wanted = (n + k_block * per_thread - 1) / (k_block * per_thread);
    // A grid-stride loop needs no more blocks than fill the device (8 x 256 threads per SM).
    const long long limit = static_cast<long long>(multiprocessors()) * 8;
    const unsigned grid = static_cast<unsigned>(std::max(1LL, std::min(wanted, limit)));
    active_backend().launch(k.function, grid, k_block, stream, params.data());
}

}  // namespace nu
