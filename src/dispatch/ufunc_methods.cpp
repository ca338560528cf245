// src/dispatch/ufunc_methods.cpp: ufunc.accumulate, reduceat and at: layouts, staging, kernels
#include "dispatch/ufunc_methods.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "dispatch/broadcast.h"
#include "dispatch/device_cast.h"
#include "launch/elementwise_launch.h"
#include "launch/kernel.h"
#include "runtime/blocking.h"
#include "runtime/errors.h"
#include "runtime/runtime.h"

namespace nu {
namespace {

constexpr std::size_t k_dims = 8;         // ufunc_methods.cuh's k_methods_dims
constexpr unsigned k_block = 256;         // its k_methods_block
// Lines from which a thread per line fills the device, when each line is strided: below
// it, or when lines are contiguous and at least a block long, accumulate scans tiles.
constexpr long long k_line_scan_min_rows = 1 << 16;

// ufunc_methods.cuh's k_scan_items: elements per thread of an acc_tiles tile.
long long scan_tile_elements(std::size_t type_size) {
    return k_block * (type_size <= 4 ? 8 : type_size <= 8 ? 6 : 3);
}

// Bytes of cub::ScanTileState<T> storage for `tiles` tiles, an upper bound for any T of
// `type_size` bytes: 32 padding states plus the tiles, each at most a 16-byte status word
// and two values, and three 256-byte alignments.
long long scan_state_bytes(long long tiles, std::size_t type_size) {
    return (tiles + 32) * (16 + 2 * static_cast<long long>(type_size)) + 4 * 256;
}

struct methods_layout {
    long long rows = 1, len = 0, count = 0;
    void* in = nullptr;
    void* out = nullptr;
    const void* indices = nullptr;
    const void* values = nullptr;
    long long in_axis_stride = 0, out_axis_stride = 0;
    shape_t row_shape, in_row_strides, out_row_strides;
    void* scan_state = nullptr;
    long long scan_state_bytes = 0, line_tiles = 0;
    long long at_index_bytes = 0, at_len = 0, at_stride = 0, at_value_stride = 0;
    void* at_bad = nullptr;
    long long at_scalar[2] = {0, 0};
};

// Parameter block of ufunc_methods.cuh's methods_params, as 8-byte words.
std::vector<long long> pack(const methods_layout& l) {
    std::vector<long long> w = {l.rows,
                                l.len,
                                l.count,
                                reinterpret_cast<long long>(l.in),
                                reinterpret_cast<long long>(l.out),
                                reinterpret_cast<long long>(l.indices),
                                reinterpret_cast<long long>(l.values),
                                l.in_axis_stride,
                                l.out_axis_stride,
                                static_cast<long long>(l.row_shape.size())};
    for (const shape_t* v : {&l.row_shape, &l.in_row_strides, &l.out_row_strides}) {
        for (std::size_t d = 0; d < k_dims; ++d) w.push_back(d < v->size() ? (*v)[d] : 0);
    }
    w.push_back(reinterpret_cast<long long>(l.scan_state));
    w.push_back(l.scan_state_bytes);
    w.push_back(l.line_tiles);
    w.insert(w.end(), {l.at_index_bytes, l.at_len, l.at_stride, l.at_value_stride,
                       reinterpret_cast<long long>(l.at_bad), l.at_scalar[0], l.at_scalar[1]});
    return w;
}

// Lines of `in` and `out` (the last axis is the method's): row dimensions coalesced.
// False when they need more than the kernels' k_dims dimensions.
bool set_lines(methods_layout& l, const array_view& in, const array_view& out) {
    l.row_shape = shape_t(in.shape.begin(), in.shape.end() - 1);
    std::vector<shape_t> strides = {shape_t(in.strides.begin(), in.strides.end() - 1),
                                    shape_t(out.strides.begin(), out.strides.end() - 1)};
    l.rows = 1;
    for (std::int64_t d : l.row_shape) l.rows *= d;
    coalesce_dims(l.row_shape, strides);
    if (l.row_shape.size() > k_dims) return false;
    l.in_row_strides = strides[0];
    l.out_row_strides = strides[1];
    l.in = in.data;
    l.out = out.data;
    l.in_axis_stride = in.strides.back();
    l.out_axis_stride = out.strides.back();
    return true;
}

// Host memory a GPU kernel reads (and, for `writes`, writes back): staged through device
// memory; a no-op on the host backend.
struct staging {
    bool host;
    const stream_ref& stream;
    const char* api;
    std::vector<std::pair<device_array, array_view>> write_back;
    std::vector<device_array> keep;
    operand_copies copies;

    array_view place(const reduce_operand& op, bool reads, bool writes) {
        if (host || !op.on_host) return op.view;
        device_array d = device_array::empty(op.view.shape, op.view.type, 'C', std::nullopt, stream, api);
        if (reads) d.copy_from_host(op.view, stream);
        keep.push_back(d);
        if (writes) write_back.emplace_back(d, op.view);
        return d.view();
    }
    const void* place_bytes(const void* data, std::int64_t count, dtype type) {
        if (host || count == 0) return data;
        const array_view v{const_cast<void*>(data), type, shape_t{count},
                           shape_t{static_cast<std::int64_t>(itemsize(type))}};
        device_array d = device_array::empty(v.shape, type, 'C', std::nullopt, stream, api);
        d.copy_from_host(v, stream);
        keep.push_back(d);
        return d.view().data;
    }
    void finish() {
        for (auto& [d, view] : write_back) d.copy_to_host(view, stream);
    }
    // The input as the kernel may read it while writing `dst`: a private copy where the two
    // overlap (NumPy buffers such an input), except the very same elements when
    // `same_is_safe` (accumulate reads each element before it writes it).
    array_view unaliased(const array_view& src, const array_view& dst, bool same_is_safe) {
        if (!may_overlap(src, dst)) return src;
        if (same_is_safe && src.data == dst.data && src.shape == dst.shape && src.strides == dst.strides) return src;
        return copy_of(src, host, stream, copies);
    }
    // The lines of src and dst; when src's strides leave more row dimensions than the
    // kernels index, from a C-ordered copy of src (whose rows then merge into one).
    void lines(methods_layout& l, array_view& src, const array_view& dst) {
        if (set_lines(l, src, dst)) return;
        src = copy_of(src, host, stream, copies);
        if (set_lines(l, src, dst)) return;
        throw value_error(std::string(api) + "(): the output's layout needs more than " + std::to_string(k_dims) +
                          " dimensions after merging contiguous ones (got shape " + shape_string(dst.shape) + ")");
    }
};

}  // namespace

at_operator at_operator_named(const std::string& name, const char* api) {
    static const char* const names[] = {"", "add", "min", "max", "and", "or", "xor"};
    for (int i = 0; i < 7; ++i)
        if (name == names[i]) return static_cast<at_operator>(i);
    throw value_error(std::string(api) + "(): atomic must be '', 'add', 'min', 'max', 'and', 'or' or 'xor' (got '" +
                      name + "')");
}

namespace {

// float32 add.at through the hardware's atomic add, which flushes subnormal inputs and
// results to zero (an opt-in: the default CAS loop is exact).
bool native_float32_add_requested() {
    const char* v = std::getenv("NUMBACUDA_UFUNC_AT_NATIVE_FLOAT32_ADD");
    return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace

ufunc_methods::ufunc_methods(std::string name, bool host_target, bool fastmath, at_operator at_op)
    : m_name(std::move(name)),
      m_host_target(host_target),
      m_fastmath(fastmath),
      m_at_op(at_op),
      m_native_f32_add(native_float32_add_requested()) {}

int ufunc_methods::add_loop(reduce_loop l) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_loops.push_back(std::move(l));
    return static_cast<int>(m_loops.size()) - 1;
}

int ufunc_methods::find_loop(dtype t) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    for (std::size_t i = 0; i < m_loops.size(); ++i)
        if (m_loops[i].type == t) return static_cast<int>(i);
    return -1;
}

dtype ufunc_methods::loop_type(int loop) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_loops.at(static_cast<std::size_t>(loop)).type;
}

std::string ufunc_methods::source(int loop, dtype in, dtype out, std::string* entry) const {
    reduce_loop l;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        l = m_loops.at(static_cast<std::size_t>(loop));
    }
    const std::string name = l.function + "_m" + typestr(in).substr(1) + typestr(out).substr(1);
    if (entry) *entry = name;
    std::string src = "#include \"ufunc_methods.cuh\"\n\n" + l.source + "\n\n";
    src += "struct nu_op {\n"
           "    template <class... A>\n"
           "    __device__ __forceinline__ auto operator()(A... a) const { return " + l.function + "(a...); }\n"
           "};\n\n";
    src += "NU_METHODS_ENTRY(" + name + ", nu::methods_kernels<nu_op, " + c_type_name(l.type) + ", " +
           c_type_name(in) + ", " + c_type_name(out) + ", " + std::to_string(static_cast<int>(m_at_op)) + ", " +
           (m_native_f32_add ? "true" : "false") + ">)\n";
    return src;
}

bool ufunc_methods::runs_on_host() const { return m_host_target || cuda_target_emulated(); }

const methods_kernel_set& ufunc_methods::kernels(const kernel_key& key, bool host) {
    std::string entry, src;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_kernels.find(key);
        if (it != m_kernels.end()) return *it->second;
    }
    src = source(key.loop, key.in, key.out, &entry);
    auto k = std::make_unique<methods_kernel_set>();
    {
        blocking_section compiling;  // built without the lock, the GIL released (see ufunc::kernel)
        const kernel_module m =
            build_module(src, host, m_fastmath, host ? std::vector<std::string>{} : reduce_nvrtc_extra(),
                         {}, {}, "",
                         host && !m_host_target ? emulation_host_options() : std::vector<std::string>{});
        k->host = host;
        k->library = m.library;
        static const char* const suffixes[] = {"_acc_rows", "_acc_tiles_init", "_acc_tiles", "_reduceat",
                                               "_at_check", "_at_seq",          "_at_cas"};
        void** slots[] = {&k->acc_rows, &k->acc_tiles_init, &k->acc_tiles, &k->reduceat,
                          &k->at_check, &k->at_seq,         &k->at_cas};
        for (int i = 0; i < 7; ++i) *slots[i] = module_entry(m, entry + suffixes[i]);
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    return *m_kernels.emplace(key, std::move(k)).first->second;
}

namespace {

void run(const methods_kernel_set& k, void* function, long long work, bool one_block, stream_handle s,
         std::vector<long long>& params) {
    if (k.host) {
        reinterpret_cast<void (*)(const void*)>(function)(params.data());
        return;
    }
    const long long limit = static_cast<long long>(current_device_info().multiprocessors) * 8;
    const long long blocks = one_block ? work : (work + k_block - 1) / k_block;
    active_backend().launch(function, static_cast<unsigned>(std::max(1LL, std::min(limit, blocks))), k_block, s,
                            params.data());
}

// ufunc.at's updates: a compare-and-swap per update where the element is exactly the
// operator's type of at most 8 bytes (commutative operators, any order), else one thread
// in index order (complex128, and targets of another dtype).
void apply_at(const methods_kernel_set& k, std::vector<long long>& params, long long count, dtype target,
              dtype op, stream_handle s) {
    if (target == op && itemsize(op) <= 8) {
        run(k, k.at_cas, count, false, s, params);
    } else {
        run(k, k.at_seq, 1, true, s, params);
    }
}

}  // namespace

void ufunc_methods::accumulate(int loop, const reduce_operand& in, const reduce_operand& out,
                               const stream_ref& stream, const char* api) {
    NU_ASSERT(in.view.ndim() >= 1 && in.view.shape == out.view.shape);
    if (in.view.size() == 0) return;
    const bool host = runs_on_host();
    const stream_handle live = live_handle(stream, api);
    staging st{host, stream, api, {}, {}};
    const array_view dst = st.place(out, false, true);
    array_view src = st.unaliased(st.place(in, true, false), dst, true);
    methods_layout l;
    st.lines(l, src, dst);
    l.len = src.shape.back();
    const methods_kernel_set& k = kernels(kernel_key{loop, src.type, dst.type}, host);
    // A thread per line when there are enough lines to fill the device and they are strided
    // (threads then read neighbouring addresses); otherwise a device-wide scan of tiles.
    const std::size_t t_size = itemsize(loop_type(loop));
    const long long tile = scan_tile_elements(t_size);
    const long long line_tiles = (l.len + tile - 1) / tile;
    const bool contiguous_lines = l.in_axis_stride == static_cast<long long>(itemsize(src.type));
    const bool tiles = !host && l.len >= static_cast<long long>(k_block) &&
                       (l.rows < k_line_scan_min_rows || contiguous_lines) &&
                       l.rows * line_tiles <= std::numeric_limits<int>::max();
    if (!tiles) {
        std::vector<long long> p = pack(l);
        run(k, k.acc_rows, l.rows, false, host ? nullptr : live, p);
        st.finish();
        return;
    }
    const long long n_tiles = l.rows * line_tiles;
    device_array state = device_array::empty(shape_t{scan_state_bytes(n_tiles, t_size)}, dtype::uint8, 'C',
                                             std::nullopt, stream, api);
    st.keep.push_back(state);
    l.scan_state = state.view().data;
    l.scan_state_bytes = state.view().shape[0];
    l.line_tiles = line_tiles;
    std::vector<long long> p = pack(l);
    // cub::ScanTileState::InitializeStatus: a thread per tile, block 0 also sets the padding.
    active_backend().launch(k.acc_tiles_init, static_cast<unsigned>((n_tiles + k_block - 1) / k_block), k_block,
                            live, p.data());
    active_backend().launch(k.acc_tiles, static_cast<unsigned>(n_tiles), k_block, live, p.data());
    st.finish();
}

void ufunc_methods::reduceat(int loop, const reduce_operand& in, const std::vector<long long>& starts,
                             const reduce_operand& out, const stream_ref& stream, const char* api) {
    NU_ASSERT(in.view.ndim() >= 1 && out.view.ndim() == in.view.ndim());
    if (out.view.size() == 0) return;
    const bool host = runs_on_host();
    const stream_handle live = live_handle(stream, api);
    staging st{host, stream, api, {}, {}};
    const array_view dst = st.place(out, false, true);
    array_view src = st.unaliased(st.place(in, true, false), dst, false);
    methods_layout l;
    st.lines(l, src, dst);
    l.len = src.shape.back();
    l.count = static_cast<long long>(starts.size());
    l.indices = st.place_bytes(starts.data(), l.count, dtype::int64);
    const methods_kernel_set& k = kernels(kernel_key{loop, src.type, dst.type}, host);
    std::vector<long long> p = pack(l);
    run(k, k.reduceat, l.rows * l.count, false, host ? nullptr : live, p);
    st.finish();
}

void ufunc_methods::at(int loop, const reduce_operand& target, const std::vector<long long>& flat,
                       const array_view& values, const stream_ref& stream, const char* api) {
    if (flat.empty()) return;
    const bool host = runs_on_host();
    const stream_handle live = live_handle(stream, api);
    const dtype t = loop_type(loop);
    NU_ASSERT(values.type == t && values.size() == static_cast<std::int64_t>(flat.size()));
    staging st{host, stream, api, {}, {}};
    // The whole target moves when it is host memory on a GPU: offsets are relative to it.
    const array_view dst = st.place(target, true, true);
    // C-order element numbers -> byte offsets in the memory the kernel writes.
    // One multiply per index where the layout allows (a 1-d or C-contiguous target): the
    // divisions of the general case took most of add.at's 2^22 host-side updates.
    std::vector<long long> offsets(flat.size());
    if (dst.ndim() == 1 || dst.is_c_contiguous()) {
        const long long step = dst.ndim() == 1 ? dst.strides[0] : static_cast<long long>(itemsize(dst.type));
        for (std::size_t i = 0; i < flat.size(); ++i) offsets[i] = flat[i] * step;
    } else {
        for (std::size_t i = 0; i < flat.size(); ++i) {
            long long rest = flat[i], off = 0;
            for (int d = dst.ndim() - 1; d >= 0; --d) {
                off += (rest % dst.shape[d]) * dst.strides[d];
                rest /= dst.shape[d];
            }
            offsets[i] = off;
        }
    }
    methods_layout l;
    l.count = static_cast<long long>(offsets.size());
    l.in = dst.data;
    l.indices = st.place_bytes(offsets.data(), l.count, dtype::int64);
    l.values = st.place_bytes(values.data, l.count, t);
    l.at_value_stride = static_cast<long long>(itemsize(t));
    const methods_kernel_set& k = kernels(kernel_key{loop, target.view.type, target.view.type}, host);
    std::vector<long long> p = pack(l);
    apply_at(k, p, l.count, target.view.type, t, host ? nullptr : live);
    st.finish();
}

namespace {

// The word at_check reports in: mapped pinned memory, one per device for the process
// (never freed, like the primary context it lives in), reset by the host and read after
// one stream synchronization, so a call allocates and copies nothing. The mutex holds it
// for one check's round trip.
struct check_word {
    unsigned long long* host = nullptr;
    void* device = nullptr;
};
std::mutex g_check_mutex;

check_word& check_word_for(backend& be, int device) {
    static std::unordered_map<int, check_word> words;  // guarded by g_check_mutex
    check_word& w = words[device];
    if (w.host == nullptr) {
        w.host = static_cast<unsigned long long*>(be.allocate_mapped(sizeof(unsigned long long), true, false));
        w.device = be.mapped_device_pointer(w.host);
    }
    return w;
}

}  // namespace

void ufunc_methods::at_device(int loop, const array_view& target, const array_view& indices,
                              const array_view& values, bool values_on_host, const stream_ref& stream,
                              const char* api) {
    NU_ASSERT(target.ndim() == 1 && indices.ndim() == 1 && indices.is_c_contiguous());
    NU_ASSERT(indices.type == dtype::int32 || indices.type == dtype::int64);
    const dtype t = loop_type(loop);
    NU_ASSERT(values.type == t && (values.size() == 1 || (values.size() == indices.size() && values.is_c_contiguous())));
    const long long count = indices.size();
    if (count == 0) return;
    const bool host = runs_on_host();
    const stream_handle live = live_handle(stream, api);
    const stream_handle s = host ? nullptr : live;
    methods_layout l;
    l.count = count;
    l.in = target.data;
    l.indices = indices.data;
    l.values = values_on_host ? nullptr : values.data;
    if (values_on_host) {
        NU_ASSERT(values.size() == 1 && itemsize(t) <= sizeof(l.at_scalar));
        std::memcpy(l.at_scalar, values.data, itemsize(t));
    }
    l.at_index_bytes = static_cast<long long>(itemsize(indices.type));
    l.at_len = target.shape[0];
    l.at_stride = target.strides[0];
    l.at_value_stride = values.size() == 1 ? 0 : static_cast<long long>(itemsize(t));
    const methods_kernel_set& k = kernels(kernel_key{loop, target.type, target.type}, host);
    // The first update number whose index is out of bounds, found before any update.
    const unsigned long long none = ~0ull;
    unsigned long long first_bad = none;
    {
        backend& be = active_backend();
        std::lock_guard<std::mutex> lock(g_check_mutex);
        check_word& word = check_word_for(be, be.current_device());
        *word.host = none;  // no check is in flight: each one is waited for under the lock
        l.at_bad = static_cast<unsigned long long*>(word.device);
        std::vector<long long> p = pack(l);
        run(k, k.at_check, count, false, s, p);
        if (!host) be.synchronize_stream(s);
        first_bad = *static_cast<volatile unsigned long long*>(word.host);
    }
    if (first_bad != none) {
        // The check names some bad update; the first in index order is at or before it.
        const std::size_t size = itemsize(indices.type);
        const std::size_t n = static_cast<std::size_t>(first_bad) + 1;
        std::vector<char> prefix(n * size);
        active_backend().copy_to_host(prefix.data(), indices.data, prefix.size(), s);  // in place on return
        long long index = 0;
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t v64 = 0;
            std::int32_t v32 = 0;
            if (size == 4) std::memcpy(&v32, prefix.data() + i * 4, 4);
            else std::memcpy(&v64, prefix.data() + i * 8, 8);
            index = size == 4 ? v32 : v64;
            if (index < -target.shape[0] || index >= target.shape[0]) break;
        }
        throw index_error(std::string(api) + "(): index " + std::to_string(index) +
                          " is out of bounds for axis 0 with size " + std::to_string(target.shape[0]));
    }
    std::vector<long long> p = pack(l);
    apply_at(k, p, count, target.type, t, s);
}

}  // namespace nu
