// src/launch/reduce_launch.cpp: reduction kernels: generated source, build, plan, launch
#include "launch/reduce_launch.h"

#include <algorithm>
#include <optional>
#include <cstdlib>
#include <cstring>

#include "array/device_array.h"
#include "compile/host_build.h"
#include "compile/nvrtc.h"
#include "compile/toolkit.h"
#include "launch/elementwise_launch.h"
#include "launch/kernel.h"
#include "runtime/errors.h"
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
                            long long chunks, long long chunk_len, bool aligned, void* partials) {
    std::vector<long long> w;
    w.reserve(14 + 5 * k_dims);
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
    if (k.host) {
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
    return sms * std::max(1, b.max_active_blocks(k.host ? nullptr : function, k_block, 0));
}

}  // namespace

std::string reduce_source(const std::string& function, const std::string& function_source,
                          dtype acc, dtype in, dtype out, const std::string& entry) {
    std::string src = "#include \"reduce.cuh\"\n\n" + function_source + "\n\n";
    src += "struct nu_op {\n"
           "    template <class... A>\n"
           "    __device__ __forceinline__ auto operator()(A... a) const { return " + function + "(a...); }\n"
           "};\n\n";
    src += "NU_REDUCE_ENTRY(" + entry + ", nu::reduce_kernels<nu_op, " + c_type_name(acc) + ", " +
           c_type_name(in) + ", " + c_type_name(out) + ">)\n";
    return src;
}

std::vector<std::string> reduce_nvrtc_extra() {
    const std::string cub = cub_include_dir();
    if (cub.empty()) {
        throw cuda_support_error(
            "reduce(): the CUB headers were not found (looked for cub/cub.cuh under the CUDA "
            "toolkit's include/cccl and include); set NUMBACUDA_UFUNC_CUDA_HOME or pip "
            "install nvidia-cuda-cccl");
    }
    return {"-I" + cub};  // nvrtc_build adds -pch after a process's first build
}

reduce_kernel_set build_reduce(const std::string& source, const std::string& entry, bool host,
                               bool fastmath, bool emulated) {
    reduce_kernel_set k;
    k.host = host;
    static const char* const suffixes[] = {"_units_contig",  "_units_strided", "_final",
                                           "_columns",       "_columns_tiled", "_columns_final"};
    void** slots[] = {&k.units_contig, &k.units_strided,  &k.final_pass,
                      &k.columns,      &k.columns_tiled, &k.columns_final};
    const kernel_module m = build_module(
        source, host, fastmath, host ? std::vector<std::string>{} : reduce_nvrtc_extra(), {}, {}, "",
        host && emulated ? emulation_host_options() : std::vector<std::string>{});
    k.library = m.library;
    for (int i = 0; i < 6; ++i) *slots[i] = module_entry(m, entry + suffixes[i]);
    return k;
}

namespace {

// Scratch for partial results, freed on `s` when it goes out of scope (after the passes
// queued before then). The device's scratch is a device_buffer, so an EMM plugin backs it
// too; host targets (their own backend, with or without a GPU) allocate directly.
class reduce_scratch {
public:
    reduce_scratch(backend& b, std::size_t bytes, stream_handle s) : m_backend(b), m_bytes(bytes), m_stream(s) {
        if (bytes == 0) return;
        if (backend_available() && &b == &active_backend()) {
            m_buffer.emplace(bytes, external_stream(s));
            m_ptr = m_buffer->data();
        } else {
            m_ptr = b.allocate(bytes, s);
        }
    }
    ~reduce_scratch() {
        if (m_ptr != nullptr && !m_buffer) m_backend.release(m_ptr, m_bytes, m_stream);
    }
    reduce_scratch(const reduce_scratch&) = delete;
    reduce_scratch& operator=(const reduce_scratch&) = delete;
    void* data() const { return m_ptr; }

private:
    backend& m_backend;
    std::size_t m_bytes;
    stream_handle m_stream;
    std::optional<device_buffer> m_buffer;
    void* m_ptr = nullptr;
};

}  // namespace

void launch_reduce(const reduce_kernel_set& k, const reduce_layout& l, int multiprocessors,
                   backend& b, stream_handle s) {
    NU_ASSERT(l.row_shape.size() <= k_dims && l.red_shape.size() <= k_dims);
    const long long rows = product(l.row_shape), len = product(l.red_shape);
    if (rows == 0) return;
    NU_ASSERT(len > 0 || l.init != nullptr);
    const long long sms = std::max(1, multiprocessors);

    // Outputs adjacent in memory (an outer-axis reduction): the tiled columns kernel, a
    // warp's lanes on 32 adjacent outputs. With too few output tiles to fill the device
    // the folded range is split into chunks over blockIdx.y; the chunk partials are then
    // folded in chunk order by columns_final.
    if (len > 0 && rows >= k_tiled_min_rows && !l.row_shape.empty() &&
        std::llabs(l.in_row_strides.back()) < min_abs(l.red_strides)) {
        const long long tiles = (rows + 31) / 32;
        const long long fill = device_blocks(k, k.columns_tiled, b, sms);
        long long chunks = 1;
        if (tiles < fill) {
            const long long most = std::max(1LL, len / (k_warps * k_tiled_min_per_warp));
            chunks = std::min({(fill + tiles - 1) / tiles, most, 65535LL});
        }
        const long long chunk_len = (len + chunks - 1) / chunks;
        chunks = (len + chunk_len - 1) / chunk_len;  // every chunk non-empty
        const std::size_t partial_bytes =
            chunks > 1 ? static_cast<std::size_t>(rows * chunks) * itemsize(l.acc) : 0;
        reduce_scratch scratch(b, partial_bytes, s);
        void* partials = scratch.data();
        std::vector<long long> p = pack(l, rows, len, chunks, chunk_len, false, partials);
        const long long grid_x = std::min(tiles, 1LL << 30);  // the kernel strides over tiles
        run(k, k.columns_tiled, static_cast<unsigned>(grid_x), b, s, p, static_cast<unsigned>(chunks));
        if (partials) {
            const long long grid = std::min(device_blocks(k, k.columns_final, b, sms), (rows + k_block - 1) / k_block);
            run(k, k.columns_final, static_cast<unsigned>(grid), b, s, p);
        }
        return;
    }

    // Many short rows whose outputs are not adjacent: a thread per output (a warp unit
    // would leave most lanes idle).
    if (len > 0 && rows >= k_columns_min_rows && !l.row_shape.empty() && len <= k_short_row) {
        std::vector<long long> p = pack(l, rows, len, 1, len, false, nullptr);
        const long long grid = std::min(device_blocks(k, k.columns, b, sms), (rows + k_block - 1) / k_block);
        run(k, k.columns, static_cast<unsigned>(grid), b, s, p);
        return;
    }

    // Warp units: enough of them to fill the device (8 warps x the blocks that fit), split
    // over the rows; a row longer than its share gets several units and a final pass.
    const std::size_t in_size = itemsize(l.in_type);
    const long long vec = in_size >= 16 ? 1 : static_cast<long long>(16 / in_size);
    const long long tile = 32 * 4 * vec;  // reduce.cuh's k_tile
    const bool contig = l.red_shape.empty() ||
                        (l.red_shape.size() == 1 && l.red_strides[0] == static_cast<long long>(in_size));
    void* units = contig ? k.units_contig : k.units_strided;
    const long long max_blocks = device_blocks(k, units, b, sms);
    const long long target_units = max_blocks * k_warps;
    const long long tiles = std::max(1LL, (len + tile - 1) / tile);
    long long chunks = std::min(tiles, std::max(1LL, target_units / rows));
    const long long chunk_len = ((tiles + chunks - 1) / chunks) * tile;
    chunks = len > 0 ? (len + chunk_len - 1) / chunk_len : 1;  // every chunk non-empty

    bool aligned = contig && reinterpret_cast<std::uintptr_t>(l.in) % 16 == 0;
    for (std::size_t d = 0; aligned && d < l.row_shape.size(); ++d) aligned = l.in_row_strides[d] % 16 == 0;

    const std::size_t partial_bytes =
        chunks > 1 ? static_cast<std::size_t>(rows * chunks) * itemsize(l.acc) : 0;
    reduce_scratch scratch(b, partial_bytes, s);
    void* partials = scratch.data();
    std::vector<long long> p = pack(l, rows, len, chunks, chunk_len, aligned, partials);
    const long long unit_blocks = std::min(max_blocks, (rows * chunks + k_warps - 1) / k_warps);
    run(k, units, static_cast<unsigned>(unit_blocks), b, s, p);
    if (partials) {
        run(k, k.final_pass, static_cast<unsigned>(std::min(device_blocks(k, k.final_pass, b, sms), rows)), b, s, p);
    }
}

}  // namespace nu
