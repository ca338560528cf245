// src/launch/reduce_launch.cpp: reduction kernels: generated source, build, plan, launch
#include "launch/reduce_launch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "array/device_array.h"
#include "compile/host_build.h"
#include "compile/nvrtc.h"
#include "compile/toolkit.h"
#include "launch/elementwise_launch.h"
#include "launch/kernel.h"
#include "runtime/blocking.h"
#include "runtime/errors.h"
#include "runtime/memory_hooks.h"
#include "runtime/runtime.h"

namespace nu {

namespace {

constexpr int k_dims = 8;    // reduce.cuh's k_reduce_dims
constexpr int k_warps = 8;   // reduce.cuh's k_reduce_warps
constexpr unsigned k_block = 32 * k_warps;
// Outputs below which a thread per output leaves the device idle; the warp units spread
// the work of few outputs over many warps instead.
constexpr long long k_columns_min_rows = 1024;
constexpr long long k_short_row = 32;
// Outer-axis reductions with at least a warp's worth of adjacent outputs use the tiled
// columns kernel; each of its warps folds at least this many elements per chunk, so the
// chunk partials stay a small fraction of the traffic.
constexpr long long k_tiled_min_rows = 32;
constexpr long long k_tiled_min_per_warp = 16;

// Parameter block of reduce.cuh's reduce_params, as 8-byte words.
std::vector<long long> pack(const reduce_layout& l, long long rows, long long len,
                            long long chunks, long long chunk_len, bool aligned, void* partials,
                            unsigned* counter = nullptr) {
    std::vector<long long> w;
    w.reserve(15 + 5 * k_dims);
    w.push_back(rows);
    w.push_back(len);
    w.push_back(chunks);
    w.push_back(chunk_len);
    w.push_back(l.init != nullptr);
    long long init[2] = {0, 0};
    if (l.init) std::memcpy(init, l.init, sizeof init);
    w.push_back(init[0]);
    w.push_back(init[1]);
    w.push_back(aligned);
    w.push_back(reinterpret_cast<long long>(l.in));
    w.push_back(reinterpret_cast<long long>(l.out));
    w.push_back(reinterpret_cast<long long>(partials));
    w.push_back(reinterpret_cast<long long>(counter));
    w.push_back(static_cast<long long>(l.row_shape.size()));
    w.push_back(static_cast<long long>(l.red_shape.size()));
    for (const shape_t* v : {&l.row_shape, &l.in_row_strides, &l.out_row_strides, &l.red_shape,
                             &l.red_strides}) {
        for (int d = 0; d < k_dims; ++d) w.push_back(d < static_cast<int>(v->size()) ? (*v)[d] : 0);
    }
    return w;
}

long long product(const shape_t& s) {
    long long n = 1;
    for (long long x : s) n *= x;
    return n;
}

long long min_abs(const shape_t& s) {
    long long m = -1;
    for (long long x : s) m = m < 0 ? std::llabs(x) : std::min(m, std::llabs(x));
    return m;
}

void run(const reduce_kernel_set& k, void* function, unsigned grid, backend& b, stream_handle s,
         std::vector<long long>& params, unsigned grid_y = 1) {
    if (k.host()) {
        reinterpret_cast<reduce_kernel_set::host_fn>(function)(params.data());
    } else if (grid_y == 1) {
        b.launch(function, std::max(1u, grid), k_block, s, params.data());
    } else {
        launch_shape shape;
        shape.grid[0] = std::max(1u, grid);
        shape.grid[1] = grid_y;
        shape.block[0] = k_block;
        b.launch_shaped(function, shape, s, params.data());
    }
}

// Blocks of `function` (256 threads) that fill the device: the occupancy API's answer
// per multiprocessor (registers decide: 37 to 60 per thread for reduce kernels on sm_90
// allow 4 to 6 blocks, not 8), times the multiprocessors.
long long device_blocks(const reduce_kernel_set& k, void* function, backend& b, long long sms) {
    return sms * std::max(1, b.max_active_blocks(k.host() ? nullptr : function, k_block, 0));
}

const char* const k_suffixes[k_reduce_kernel_kinds] = {"_units_contig",  "_units_strided", "_final",
                                                       "_columns",       "_columns_tiled", "_columns_final",
                                                       "_full_contig"};
const char* const k_calls[k_reduce_kernel_kinds] = {"template units<true>", "template units<false>",
                                                    "final_pass",           "columns",
                                                    "columns_tiled",        "columns_final",
                                                    "template units<true, true>"};

}  // namespace

std::string reduce_source(const std::string& function, const std::string& function_source,
                          dtype acc, dtype in, dtype out, const std::string& entry, unsigned kernels) {
    std::string src = "#include \"reduce.cuh\"\n\n" + function_source + "\n\n";
    src += "struct nu_op {\n"
           "    template <class... A>\n"
           "    __device__ __forceinline__ auto operator()(A... a) const { return " + function + "(a...); }\n"
           "};\n\n";
    src += "NU_REDUCE_ENTRY(" + entry + ", nu::reduce_kernels<nu_op, " + c_type_name(acc) + ", " +
           c_type_name(in) + ", " + c_type_name(out) + ">)\n";
    for (int i = 0; i < k_reduce_kernel_kinds; ++i) {
        if (kernels & (1u << i)) src += "NU_REDUCE_KERNEL(" + entry + ", " + k_suffixes[i] + ", " + k_calls[i] + ")\n";
    }
    return src;
}

std::vector<std::string> reduce_nvrtc_extra() {
    const std::string cub = cub_include_dir();
    if (cub.empty()) {
        throw cuda_support_error(
            "accumulate(): the CUB headers were not found (looked for cub/cub.cuh under the CUDA "
            "toolkit's include/cccl and include); set NUMBACUDA_UFUNC_CUDA_HOME or pip "
            "install nvidia-cuda-cccl");
    }
    return {"-I" + cub};  // nvrtc_build adds -pch after a process's first build
}

reduce_kernel_set::reduce_kernel_set(std::string function, std::string function_source, dtype acc, dtype in,
                                     dtype out, std::string entry, bool host, bool fastmath, bool emulated)
    : m_function(std::move(function)), m_function_source(std::move(function_source)), m_entry(std::move(entry)),
      m_acc(acc), m_in(in), m_out(out), m_host(host), m_fastmath(fastmath), m_emulated(emulated) {}

void* reduce_kernel_set::get(reduce_kernel which) const {
    const int i = static_cast<int>(which);
    std::lock_guard<std::mutex> lock(m_mutex);  // a second thread waits for the same build
    if (m_functions[i] != nullptr) return m_functions[i];
    const unsigned kernels = m_host ? k_all_reduce_kernels : 1u << i;
    const std::string source = reduce_source(m_function, m_function_source, m_acc, m_in, m_out, m_entry, kernels);
    blocking_section compiling;  // other Python threads run meanwhile (see ufunc::kernel)
    const kernel_module m = build_module(source, m_host, m_fastmath, {}, {}, {}, "",
                                         m_host && m_emulated ? emulation_host_options() : std::vector<std::string>{});
    if (m.library) m_libraries.push_back(m.library);
    for (int j = 0; j < k_reduce_kernel_kinds; ++j) {
        if (kernels & (1u << j)) m_functions[j] = module_entry(m, m_entry + k_suffixes[j]);
    }
    return m_functions[i];
}

unsigned reduce_kernel_set::built() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    unsigned mask = 0;
    for (int i = 0; i < k_reduce_kernel_kinds; ++i)
        if (m_functions[i] != nullptr) mask |= 1u << i;
    return mask;
}

namespace {

// Scratch of one call, freed on `s` when it goes out of scope (after the passes queued
// before then): the host backend's partials, and the GPU's while an EMM plugin is
// installed (the plugin backs every device allocation, so nothing is kept past a call).
// The active backend's scratch is a device_buffer, so a plugin backs it; host targets
// (their own backend, with or without a GPU) allocate directly.
class call_scratch {
public:
    call_scratch(backend& b, std::size_t bytes, stream_handle s) : m_backend(b), m_bytes(bytes), m_stream(s) {
        if (bytes == 0) return;
        if (backend_available() && &b == &active_backend()) {
            m_buffer.emplace(bytes, external_stream(s));
            m_ptr = m_buffer->data();
        } else {
            m_ptr = b.allocate(bytes, s);
        }
    }
    ~call_scratch() {
        if (m_ptr != nullptr && !m_buffer) m_backend.release(m_ptr, m_bytes, m_stream);
    }
    call_scratch(const call_scratch&) = delete;
    call_scratch& operator=(const call_scratch&) = delete;
    void* data() const { return m_ptr; }

private:
    backend& m_backend;
    std::size_t m_bytes;
    stream_handle m_stream;
    std::optional<device_buffer> m_buffer;
    void* m_ptr = nullptr;
};

// The GPU's reduction scratch of one (device, stream): the partials, the one-pass counter
// and a mapped page-locked slot for results read on the host. Allocated at the first
// reduction on the stream and kept, so a steady-state call allocates nothing (before, each
// call allocated and freed its partials and, for a host scalar, a result array). `mutex`
// is held from a plan's use of the partials to its launch (work on one stream runs in
// order, so a later call may then reuse them) and, for a host result, until the result is
// read. Memory comes from the backend's pool directly, not from an EMM plugin: it is the
// engine's own, kept for the life of the stream.
struct stream_scratch {
    std::mutex mutex;
    int device = 0;
    stream_handle stream = nullptr;
    std::thread::id thread;  // the per-thread default stream is one stream per thread
    void* partials = nullptr;
    std::size_t partial_bytes = 0;
    unsigned* counter = nullptr;   // device memory, zero between launches
    void* result_host = nullptr;   // mapped, 16 bytes: the largest result type
    void* result_device = nullptr;
    bool no_mapping = false;       // allocate_mapped failed: results are staged
};

std::mutex g_scratch_mutex;
std::vector<std::unique_ptr<stream_scratch>> g_scratch;  // few: one per stream used

stream_scratch& scratch_for(backend& b, stream_handle s) {
    const int device = b.current_device();
    const std::thread::id thread =
        s != nullptr && s == per_thread_default_stream()->handle ? std::this_thread::get_id() : std::thread::id{};
    std::lock_guard<std::mutex> lock(g_scratch_mutex);
    for (auto& e : g_scratch)
        if (e->device == device && e->stream == s && e->thread == thread) return *e;
    g_scratch.push_back(std::make_unique<stream_scratch>());
    g_scratch.back()->device = device;
    g_scratch.back()->stream = s;
    g_scratch.back()->thread = thread;
    return *g_scratch.back();
}

// With scratch.mutex held: partials of at least `bytes`, and the counter.
void* reserve_partials(stream_scratch& sc, backend& b, std::size_t bytes) {
    if (sc.counter == nullptr) {
        // 256 bytes: the pool's granularity. Zeroed once; the last block of each one-pass
        // launch leaves it zero again.
        void* c = b.allocate(256, sc.stream);
        const unsigned char zeros[256] = {};
        try {
            b.copy_to_device(c, zeros, sizeof zeros, sc.stream);
        } catch (...) {
            b.release(c, 256, sc.stream);
            throw;
        }
        sc.counter = static_cast<unsigned*>(c);
    }
    if (bytes > sc.partial_bytes) {
        // Rare: the first large plan on this stream. Grows to at least 64 KiB and doubles,
        // so a few plans settle it; the old block is freed after the work queued on it.
        const std::size_t grown = std::max({bytes, sc.partial_bytes * 2, std::size_t{64} << 10});
        void* p = b.allocate(grown, sc.stream);
        if (sc.partials) b.release(sc.partials, sc.partial_bytes, sc.stream);
        sc.partials = p;
        sc.partial_bytes = grown;
    }
    return sc.partials;
}

// False where the device cannot map page-locked memory: the caller then stages the result.
bool reserve_result(stream_scratch& sc, backend& b) {
    if (sc.result_host != nullptr) return true;
    if (sc.no_mapping) return false;
    void* h = nullptr;
    try {
        h = b.allocate_mapped(16, false, false);
    } catch (const std::exception&) {
        sc.no_mapping = true;
        return false;
    }
    try {
        sc.result_device = b.mapped_device_pointer(h);
    } catch (...) {
        b.release_mapped(h);
        throw;
    }
    sc.result_host = h;
    return true;
}

}  // namespace

void release_reduce_scratch(stream_handle s) noexcept {
    if (!backend_available()) return;
    std::unique_ptr<stream_scratch> gone;
    {
        std::lock_guard<std::mutex> lock(g_scratch_mutex);
        for (auto it = g_scratch.begin(); it != g_scratch.end(); ++it) {
            if ((*it)->stream == s) {
                gone = std::move(*it);
                g_scratch.erase(it);
                break;
            }
        }
    }
    if (!gone) return;
    backend& b = active_backend();
    std::lock_guard<std::mutex> lock(gone->mutex);  // no call is using it
    if (gone->partials) b.release(gone->partials, gone->partial_bytes, s);
    if (gone->counter) b.release(gone->counter, 256, s);
    if (gone->result_host) b.release_mapped(gone->result_host);  // read by its call: idle
}

namespace {
// A stream's scratch goes with the stream (src/runtime/runtime.h): registered at load.
const bool g_scratch_hook = (set_stream_destroy_hook(&release_reduce_scratch), true);
}  // namespace

void launch_reduce(const reduce_kernel_set& k, const reduce_layout& l_in, int multiprocessors,
                   backend& b, stream_handle s, void* host_result) {
    reduce_layout l = l_in;
    NU_ASSERT(l.row_shape.size() <= k_dims && l.red_shape.size() <= k_dims);
    const long long rows = product(l.row_shape), len = product(l.red_shape);
    if (rows == 0) return;
    NU_ASSERT(len > 0 || l.init != nullptr);
    NU_ASSERT(host_result == nullptr || (rows == 1 && !k.host()));
    const long long sms = std::max(1, multiprocessors);
    const std::size_t acc_size = itemsize(l.acc);

    // The GPU's scratch for this stream, locked until the launches are queued (and, for a
    // host result, until it is read).
    stream_scratch* sc = k.host() || current_external_allocator() ? nullptr : &scratch_for(b, s);
    std::unique_lock<std::mutex> lock;
    if (sc) lock = std::unique_lock<std::mutex>(sc->mutex);
    // Without mapped memory the result goes through a device temporary and a copy.
    std::optional<call_scratch> staged_result;
    if (host_result) {
        if (sc && reserve_result(*sc, b)) {
            l.out = sc->result_device;
        } else {
            staged_result.emplace(b, 16, s);
            l.out = staged_result->data();
        }
    }

    // Outputs adjacent in memory (an outer-axis reduction): the tiled columns kernel, a
    // warp's lanes on 32 adjacent outputs. With too few output tiles to fill the device
    // the folded range is split into chunks over blockIdx.y; the chunk partials are then
    // folded in chunk order by columns_final.
    if (len > 0 && rows >= k_tiled_min_rows && !l.row_shape.empty() &&
        std::llabs(l.in_row_strides.back()) < min_abs(l.red_strides)) {
        void* tiled = k.get(reduce_kernel::columns_tiled);
        const long long tiles = (rows + 31) / 32;
        const long long fill = device_blocks(k, tiled, b, sms);
        long long chunks = 1;
        if (tiles < fill) {
            const long long most = std::max(1LL, len / (k_warps * k_tiled_min_per_warp));
            chunks = std::min({(fill + tiles - 1) / tiles, most, 65535LL});
        }
        const long long chunk_len = (len + chunks - 1) / chunks;
        chunks = (len + chunk_len - 1) / chunk_len;  // every chunk non-empty
        const std::size_t partial_bytes = chunks > 1 ? static_cast<std::size_t>(rows * chunks) * acc_size : 0;
        call_scratch cs(b, sc ? 0 : partial_bytes, s);
        void* partials = !partial_bytes ? nullptr : sc ? reserve_partials(*sc, b, partial_bytes) : cs.data();
        std::vector<long long> p = pack(l, rows, len, chunks, chunk_len, false, partials);
        const long long grid_x = std::min(tiles, 1LL << 30);  // the kernel strides over tiles
        run(k, tiled, static_cast<unsigned>(grid_x), b, s, p, static_cast<unsigned>(chunks));
        if (partials) {
            void* final_columns = k.get(reduce_kernel::columns_final);
            const long long grid = std::min(device_blocks(k, final_columns, b, sms), (rows + k_block - 1) / k_block);
            run(k, final_columns, static_cast<unsigned>(grid), b, s, p);
        }
        return;
    }

    // Many short rows whose outputs are not adjacent: a thread per output (a warp unit
    // would leave most lanes idle).
    if (len > 0 && rows >= k_columns_min_rows && !l.row_shape.empty() && len <= k_short_row) {
        void* columns = k.get(reduce_kernel::columns);
        std::vector<long long> p = pack(l, rows, len, 1, len, false, nullptr);
        const long long grid = std::min(device_blocks(k, columns, b, sms), (rows + k_block - 1) / k_block);
        run(k, columns, static_cast<unsigned>(grid), b, s, p);
        return;
    }

    // Warp units: enough of them to fill the device (8 warps x the blocks that fit), split
    // over the rows; a row longer than its share gets several units, whose partials the
    // last block folds (one row) or a final kernel does (several rows: one block per row
    // instead of one block for all).
    const std::size_t in_size = itemsize(l.in_type);
    const long long vec = in_size >= 16 ? 1 : static_cast<long long>(16 / in_size);
    const long long tile = 32 * 4 * vec;  // reduce.cuh's k_tile
    const bool contig = l.red_shape.empty() ||
                        (l.red_shape.size() == 1 && l.red_strides[0] == static_cast<long long>(in_size));
    void* units = k.get(!contig ? reduce_kernel::units_strided
                        : rows == 1 ? reduce_kernel::full_contig : reduce_kernel::units_contig);
    const long long max_blocks = device_blocks(k, units, b, sms);
    const long long target_units = max_blocks * k_warps;
    const long long tiles = std::max(1LL, (len + tile - 1) / tile);
    long long chunks = std::min(tiles, std::max(1LL, target_units / rows));
    const long long chunk_len = ((tiles + chunks - 1) / chunks) * tile;
    chunks = len > 0 ? (len + chunk_len - 1) / chunk_len : 1;  // every chunk non-empty

    bool aligned = contig && reinterpret_cast<std::uintptr_t>(l.in) % 16 == 0;
    for (std::size_t d = 0; aligned && d < l.row_shape.size(); ++d) aligned = l.in_row_strides[d] % 16 == 0;

    const std::size_t partial_bytes = chunks > 1 ? static_cast<std::size_t>(rows * chunks) * acc_size : 0;
    call_scratch cs(b, sc ? 0 : partial_bytes, s);
    void* partials = !partial_bytes ? nullptr : sc ? reserve_partials(*sc, b, partial_bytes) : cs.data();
    const bool one_pass = partials != nullptr && rows == 1 && sc != nullptr;
    std::vector<long long> p = pack(l, rows, len, chunks, chunk_len, aligned, partials,
                                    one_pass ? sc->counter : nullptr);
    const long long unit_blocks = std::min(max_blocks, (rows * chunks + k_warps - 1) / k_warps);
    run(k, units, static_cast<unsigned>(unit_blocks), b, s, p);
    if (partials && !one_pass) {
        void* final_pass = k.get(reduce_kernel::final_pass);
        run(k, final_pass, static_cast<unsigned>(std::min(device_blocks(k, final_pass, b, sms), rows)), b, s, p);
    }
    if (staged_result) {
        b.copy_to_host(host_result, staged_result->data(), itemsize(l.out_type), s);
        b.synchronize_stream(s);
    } else if (host_result) {
        b.synchronize_stream(s);
        std::memcpy(host_result, sc->result_host, itemsize(l.out_type));
    }
}

}  // namespace nu
