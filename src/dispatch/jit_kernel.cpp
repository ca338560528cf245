// src/dispatch/jit_kernel.cpp: @cuda.jit kernels: specializations, launch checks and launches
#include "dispatch/jit_kernel.h"

#include <cstdio>
#include <cstring>
#include <optional>

#include "array/device_array.h"
#include "compile/host_build.h"
#include "launch/elementwise_launch.h"
#include "runtime/blocking.h"
#include "runtime/errors.h"
#include "runtime/interrupt.h"

namespace nu {
namespace {

// Mirrors nu::kernel_launch_info in src/kernels/kernel.cuh (the host entry's argument).
struct host_launch_info {
    unsigned grid[3];
    unsigned block[3];
    unsigned long long dynamic_shared_bytes;
    int (*poll)();
};
static_assert(sizeof(host_launch_info) == 40, "must match nu::kernel_launch_info");

using host_kernel_entry = int (*)(const long long* words, const host_launch_info* info, char* message,
                                  int message_size);

// Parameter words of one argument (src/kernels/kernel.cuh): an array is its nu::array
// image (data, shape, strides); a scalar one word, complex128 two.
int words_of(const kernel_param& p) {
    if (p.ndim >= 0) return 1 + 2 * p.ndim;
    return itemsize(p.type) > 8 ? 2 : 1;
}

std::string dims_text(const unsigned (&d)[3]) {
    return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
}

std::string param_text(const kernel_param& p) {
    if (p.ndim <= 0) return dtype_name(p.type);
    std::string s = std::string(dtype_name(p.type)) + "[";
    for (int k = 0; k < p.ndim; ++k) s += k ? ", :" : ":";
    return s + "]";
}

}  // namespace

jit_kernel::jit_kernel(std::string name, bool debug, bool fastmath)
    : m_name(std::move(name)), m_debug(debug), m_fastmath(fastmath) {}

void jit_kernel::set_device_codegen(std::string entry_prefix, std::vector<std::string> nvrtc_extra,
                                    int max_threads) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_built.empty()) throw value_error("kernel '" + m_name + "': code generation options are set before the first build");
    m_entry_prefix = std::move(entry_prefix);
    m_nvrtc_extra = std::move(nvrtc_extra);
    m_bounds_threads = max_threads;
}

void jit_kernel::set_carveout(int percent) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_built.empty()) throw value_error("kernel '" + m_name + "': the carveout is set before the first build");
    m_carveout = percent;
}

namespace {

// Translated code with line information (#line to the Python file) ends each function with
// this marker; the lines after it are the unit's own again, numbered where they stand.
constexpr const char* k_line_reset = "// nu: end of python lines";

std::string reset_line_numbers(const std::string& unit) {
    if (unit.find(k_line_reset) == std::string::npos) return unit;
    std::string out;
    std::size_t start = 0;
    for (int line = 1; start <= unit.size(); ++line) {
        std::size_t end = unit.find('\n', start);
        if (end == std::string::npos) end = unit.size();
        const std::string text = unit.substr(start, end - start);
        out += text == k_line_reset ? "#line " + std::to_string(line + 1) + " \"nu_module.cu\"" : text;
        if (end == unit.size()) break;
        out += '\n';
        start = end + 1;
    }
    return out;
}

}  // namespace

int jit_kernel::add_spec(kernel_spec spec) {
    auto shared = std::make_shared<const kernel_spec>(std::move(spec));
    std::lock_guard<std::mutex> lock(m_mutex);
    m_specs.push_back(std::move(shared));
    return static_cast<int>(m_specs.size()) - 1;
}

void jit_kernel::replace_spec(int index, kernel_spec spec) {
    auto shared = std::make_shared<const kernel_spec>(std::move(spec));
    std::lock_guard<std::mutex> lock(m_mutex);
    NU_ASSERT(index >= 0 && static_cast<std::size_t>(index) < m_specs.size());
    m_specs[static_cast<std::size_t>(index)] = std::move(shared);
    for (int host = 0; host < 2; ++host) {
        auto it = m_built.find(index * 2 + host);
        if (it == m_built.end()) continue;
        m_retired.push_back(std::move(it->second));
        m_built.erase(it);
    }
}

void jit_kernel::bind_key(const std::string& key, int spec) {
    std::lock_guard<std::mutex> lock(m_mutex);
    NU_ASSERT(spec >= 0 && static_cast<std::size_t>(spec) < m_specs.size());
    m_keys[key] = spec;
}

void jit_kernel::set_launch_config_sensitive() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_config_sensitive.exchange(true)) m_keys.clear();
}

int jit_kernel::find(const std::string& key) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_keys.find(key);
    return it == m_keys.end() ? -1 : it->second;
}

std::shared_ptr<const kernel_spec> jit_kernel::spec(int index) {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_specs.at(static_cast<std::size_t>(index));
}

std::size_t jit_kernel::spec_count() {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_specs.size();
}

std::string jit_kernel::entry(int index) { return spec(index)->function + "_kernel"; }

std::string jit_kernel::source(int index, bool host) { return source_of(*spec(index), host); }

std::string jit_kernel::source_of(const kernel_spec& s, bool host) const {
    int words = 0;
    std::string args;
    for (const kernel_param& p : s.params) {
        words += words_of(p);
        const std::string ctype = p.ctype.empty() ? std::string(c_type_name(p.type)) : p.ctype;
        args += ", nu::karg<" + ctype + ", " + std::to_string(p.ndim) + ">";
    }
    // The emulation always checks bounds: a stray write would corrupt the interpreter.
    std::string src = host || m_debug ? "#define NU_BOUNDSCHECK 1\n" : "";
    src += "#include \"kernel.cuh\"\n";
    // raise and assert report to the host in debug builds (kernel.cuh's raise_exception). A
    // constant the translated code reads, not a macro: kernel.cuh may come precompiled.
    src += std::string("static constexpr bool nu_kernel_debug = ") + (m_debug ? "true" : "false") + ";\n";
    // Python's error model in debug builds without fastmath (Numba): division by zero raises.
    src += std::string("static constexpr bool nu_kernel_zero_division = ") +
           (m_debug && !m_fastmath ? "true" : "false") + ";\n\n";
    src += s.source + "\n";
    if (!host) src += m_entry_prefix;
    src += "NU_KERNEL_ENTRY(" + s.function + "_kernel, " + s.function + ", " + std::to_string(words) +
           ", " + (s.grid_sync ? "2" : s.cooperative ? "1" : "0") + args + ")\n";
    return reset_line_numbers(src);
}

const jit_kernel::built& jit_kernel::build(int index, const std::shared_ptr<const kernel_spec>& spec, bool host) {
    const int key = index * 2 + (host ? 1 : 0);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_built.find(key);
        if (it != m_built.end() && it->second->from == spec) return *it->second;
    }
    // Built without the lock (a build releases the GIL; see ufunc::kernel).
    const std::string src = source_of(*spec, host);
    const std::string entry_name = spec->function + "_kernel";
    auto b = std::make_unique<built>();
    b->from = spec;
    {
        blocking_section compiling;
        // On the host a @cuda.jit kernel is emulation (built at -O1, see kernel.h).
        b->module = build_module(src, host, m_fastmath, host ? std::vector<std::string>{} : m_nvrtc_extra, {entry_name}, spec->links,
                                 "kernel '" + m_name + "'", emulation_host_options());
    }
    b->function = module_entry(b->module, entry_name);
    if (m_carveout && !host) active_backend().set_function_carveout(b->function, *m_carveout);
    b->max_threads = host ? (m_bounds_threads > 0 ? m_bounds_threads : 1024)
                          : active_backend().function_max_threads(b->function);
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_specs[static_cast<std::size_t>(index)] != spec) {  // replaced meanwhile: this launch only
        m_retired.push_back(std::move(b));
        return *m_retired.back();
    }
    std::unique_ptr<built>& slot = m_built[key];
    if (slot && slot->from == spec) return *slot;  // another thread built it first
    if (slot) m_retired.push_back(std::move(slot));
    slot = std::move(b);
    return *slot;
}

// Before the build: ptxas refuses more than 48 KiB of static __shared__ with a message of its
// own, and only dynamic shared memory can opt in above that limit.
void jit_kernel::check_static_shared(const kernel_spec& spec) const {
    const device_info& info = current_device_info();
    if (spec.static_shared > info.shared_per_block) {
        throw value_error("kernel '" + m_name + "': " + std::to_string(spec.static_shared) +
                          " bytes of static shared memory (cuda.shared.array with a fixed shape) is more than "
                          "the device's limit of " + std::to_string(info.shared_per_block) +
                          "; use dynamic shared memory (cuda.shared.array(0, dtype) and the launch's "
                          "shared bytes) for more");
    }
}

void jit_kernel::check_shape(const built& b, const kernel_spec& spec, const launch_shape& shape, bool host) const {
    const device_info& info = current_device_info();
    static const char* axis[] = {"x", "y", "z"};
    auto api = [this] { return "kernel '" + m_name + "'"; };  // built only for messages
    const std::string invalid = "CUDA_ERROR_INVALID_VALUE";
    std::int64_t threads = 1;
    for (int k = 0; k < 3; ++k) {
        if (shape.block[k] > static_cast<unsigned>(info.max_block_dim[k])) {
            throw launch_config_error(invalid, api() + ": block dimension " + axis[k] + " is " + std::to_string(shape.block[k]) +
                              ", above the device's limit of " + std::to_string(info.max_block_dim[k]));
        }
        if (shape.grid[k] > static_cast<unsigned>(info.max_grid_dim[k])) {
            throw launch_config_error(invalid, api() + ": grid dimension " + axis[k] + " is " + std::to_string(shape.grid[k]) +
                              ", above the device's limit of " + std::to_string(info.max_grid_dim[k]));
        }
        threads *= shape.block[k];
    }
    const int limit = std::min(info.max_threads_per_block, b.max_threads > 0 ? b.max_threads : 1024);
    if (threads > limit) {
        const bool registers = limit != m_bounds_threads && limit < info.max_threads_per_block;
        throw launch_config_error(registers ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" : invalid, api() + ": " + std::to_string(threads) + " threads per block " + dims_text(shape.block) +
                          " is more than the " + std::to_string(limit) + " this kernel can be launched with" +
                          (limit == m_bounds_threads ? " (its launch_bounds)"
                           : limit < info.max_threads_per_block ? " (its register use limits it)" : "") + " on " +
                          (host ? "the host backend" : info.name));
    }
    const std::int64_t shared = spec.static_shared + shape.dynamic_shared;
    if (shared > info.shared_per_block_optin) {
        throw launch_config_error(invalid, api() + ": " + std::to_string(shared) + " bytes of shared memory per block (" +
                          std::to_string(spec.static_shared) + " static + " + std::to_string(shape.dynamic_shared) +
                          " dynamic) is more than the device's limit of " +
                          std::to_string(info.shared_per_block_optin));
    }
}

void jit_kernel::check_debug_record(const built& b, const stream_ref& stream) {
    // A debug build records the first out-of-bounds access, exception or failed reshape in
    // nu_kernel_error (kernel.cuh): {kind, three values, threadIdx xyz, blockIdx xyz}.
    backend& be = active_backend();
    std::size_t bytes = 0;
    void* record = be.module_global(b.module.cuda_module, "nu_kernel_error", &bytes);
    unsigned long long r[10] = {};
    be.synchronize_stream(live_handle(stream, m_name.c_str()));
    be.copy_to_host(r, record, sizeof(r), nullptr);
    if (r[0] == 0) return;
    const unsigned long long zero[10] = {};
    be.copy_to_device(record, zero, sizeof(zero), nullptr);
    be.synchronize_stream(nullptr);
    if (r[0] == 2) {  // an exception: {2, code, 0, 0, threadIdx xyz, blockIdx xyz}
        const long long tid[3] = {static_cast<long long>(r[4]), static_cast<long long>(r[5]),
                                  static_cast<long long>(r[6])};
        const long long ctaid[3] = {static_cast<long long>(r[7]), static_cast<long long>(r[8]),
                                    static_cast<long long>(r[9])};
        throw kernel_exception(static_cast<long long>(r[1]), tid, ctaid);
    }
    auto i = [](unsigned long long v) { return std::to_string(static_cast<long long>(v)); };
    if (r[0] == 3) {  // a failed reshape: {3, size, 0, 0, threadIdx xyz, blockIdx xyz}
        throw error("kernel '" + m_name + "': a.reshape(): the array is not C-contiguous or the new shape "
                    "has another size (" + i(r[1]) + " elements) (thread (" + i(r[4]) + ", " + i(r[5]) + ", " +
                    i(r[6]) + ") of block (" + i(r[7]) + ", " + i(r[8]) + ", " + i(r[9]) + "))");
    }
    throw index_error("kernel '" + m_name + "': index " + i(r[1]) + " is out of bounds for axis " + i(r[2]) +
                      " with size " + i(r[3]) + " (thread (" + i(r[4]) + ", " + i(r[5]) + ", " + i(r[6]) +
                      ") of block (" + i(r[7]) + ", " + i(r[8]) + ", " + i(r[9]) + "))");
}

void jit_kernel::launch(int index, const std::vector<kernel_arg>& args, const launch_shape& shape,
                        const stream_ref& stream) {
    const std::shared_ptr<const kernel_spec> held = spec(index);  // recompile() may replace it
    const kernel_spec& s = *held;
    auto api = [this] { return "kernel '" + m_name + "'"; };  // built only for messages
    if (args.size() != s.params.size()) {
        throw type_error(api() + " takes " + std::to_string(s.params.size()) + " argument(s) (got " +
                         std::to_string(args.size()) + ")");
    }
    const bool host = active_backend().emulated();
    const stream_handle live = live_handle(stream, m_name.c_str());
    check_static_shared(s);
    const built& b = build(index, held, host);
    launch_shape sized = shape;
    if (shape.forall_tasks >= 0) {
        const unsigned tpb = static_cast<unsigned>(std::min(b.max_threads > 0 ? b.max_threads : 1024, 1024));
        sized.block[0] = tpb;
        sized.block[1] = sized.block[2] = 1;
        sized.grid[0] = static_cast<unsigned>((shape.forall_tasks + tpb - 1) / tpb);
        sized.grid[1] = sized.grid[2] = 1;
    }
    check_shape(b, s, sized, host);

    std::vector<long long> words;
    words.reserve(16);
    std::vector<device_array> staged(args.size());  // host arrays on the device, for the launch
    for (std::size_t k = 0; k < args.size(); ++k) {
        const kernel_param& p = s.params[k];
        const kernel_arg& a = args[k];
        if (p.ndim < 0) {
            if (a.is_array) throw type_error(api() + ": argument " + std::to_string(k + 1) + " must be a scalar");
            const scalar_value v = convert_scalar(a.value, p.type);
            long long w[2] = {};
            std::memcpy(w, v.bytes, itemsize(p.type));
            for (int j = 0; j < words_of(p); ++j) words.push_back(w[j]);
            continue;
        }
        if (!a.is_array || a.view.type != p.type || a.view.ndim() != p.ndim) {
            throw type_error(api() + ": argument " + std::to_string(k + 1) + " must be a " + param_text(p) +
                             (p.ndim == 0 ? " record" : " array") + " for this specialization");
        }
        array_view v = a.view;
        if (a.host && !host) {
            // The host array's layout (order='K'): an F-order array stays F-order, so a.strides
            // and the K-order sums of np.sum(a) in the kernel are those of the array passed.
            staged[k] = device_array::empty(v.shape, v.type, 'C', k_order_strides(v), stream, m_name.c_str());
            if (a.copy_in) staged[k].copy_from_host(v, stream);
            v = staged[k].view();
        }
        words.push_back(reinterpret_cast<long long>(v.data));
        for (int d = 0; d < p.ndim; ++d) words.push_back(v.shape[d]);
        for (int d = 0; d < p.ndim; ++d) words.push_back(v.strides[d]);
    }
    std::int64_t blocks = 1;
    for (unsigned g : sized.grid) blocks *= g;
    for (unsigned t : sized.block) blocks *= t;
    if (blocks == 0) return;  // an empty launch runs nothing (CUDA would refuse it)
    // A grid barrier counts on a counter of this launch's own (kernel.cuh's grid_sync), zeroed
    // and freed in stream order around the launch: concurrent launches never share one.
    std::unique_ptr<device_buffer> grid_counter;
    if (s.grid_sync && !host) {
        const unsigned zero[2] = {0, 0};
        grid_counter = std::make_unique<device_buffer>(sizeof(zero), stream);
        active_backend().copy_to_device(grid_counter->data(), zero, sizeof(zero), live);
        words.push_back(reinterpret_cast<long long>(grid_counter->data()));
    }
    if (words.empty()) words.push_back(0);

    if (host) {
        host_launch_info info{};
        std::memcpy(info.grid, sized.grid, sizeof(info.grid));
        std::memcpy(info.block, sized.block, sizeof(info.block));
        info.dynamic_shared_bytes = shape.dynamic_shared;
        // Ctrl-C stops a long launch at the next block. Small launches end before anyone
        // could press it, and skip the handler's install (four syscalls, ~1 us, more
        // than the launch itself).
        const bool long_launch = blocks >= (1 << 12);  // threads in all
        info.poll = long_launch ? &nu_host_interrupt_poll : nullptr;
        char message[512] = {};
        int status = 0;
        {
            std::optional<interrupt_scope> ctrl_c;
            if (long_launch) ctrl_c.emplace();
            blocking_section running;  // the emulation may run long: let other threads in
            status = reinterpret_cast<host_kernel_entry>(b.function)(words.data(), &info, message, sizeof(message));
        }
        if (status == 4) throw interrupted(api() + ": interrupted");
        if (status == 1) throw index_error(api() + ": " + message);
        if (status == 5) {  // an exception: code, threadIdx xyz, blockIdx xyz (host_emulation.h)
            long long n[7] = {};
            if (std::sscanf(message, "%lld %lld %lld %lld %lld %lld %lld", &n[0], &n[1], &n[2], &n[3], &n[4],
                            &n[5], &n[6]) != 7) {
                throw error(api() + ": unreadable exception record '" + message + "'");
            }
            const long long tid[3] = {n[1], n[2], n[3]};
            const long long ctaid[3] = {n[4], n[5], n[6]};
            throw kernel_exception(n[0], tid, ctaid);
        }
        if (status != 0) throw error(api() + ": " + message);
        return;
    }
    launch_shape device_shape = sized;
    device_shape.cooperative = s.grid_sync;  // every block resident, or the launch fails
    active_backend().launch_shaped(b.function, device_shape, live, words.data());
    if (m_debug) check_debug_record(b, stream);
    bool any_staged = false;
    for (std::size_t k = 0; k < args.size(); ++k) {
        if (!staged[k].buffer() || args[k].read_only) continue;
        staged[k].copy_to_host(args[k].view, stream);  // Numba copies every host array back
        any_staged = true;
    }
    if (any_staged) active_backend().synchronize_stream(live);
}

}  // namespace nu
