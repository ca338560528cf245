// src/dispatch/gufunc.cpp: core dimension checks, loop broadcasting and gufunc launches
#include "dispatch/gufunc.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "dispatch/broadcast.h"
#include "dispatch/device_cast.h"
#include "launch/elementwise_launch.h"
#include "runtime/blocking.h"
#include "runtime/errors.h"

namespace nu {
namespace {

std::string layout_of(const std::vector<core_dim>& core, const std::vector<std::string>& names) {
    std::string s = "(";
    for (std::size_t j = 0; j < core.size(); ++j) {
        if (j) s += ",";
        s += core[j].name >= 0 ? names[core[j].name] : std::to_string(core[j].fixed);
    }
    return s + ")";
}

shape_t leading(const shape_t& shape, std::size_t core) {
    return shape_t(shape.begin(), shape.end() - static_cast<std::ptrdiff_t>(core));
}

}  // namespace

gufunc::gufunc(std::string name, int nin, int nout, std::vector<std::vector<core_dim>> core,
               std::vector<std::string> dim_names, target where, bool fastmath,
               std::vector<int> writable_inputs)
    : m_name(std::move(name)),
      m_nin(nin),
      m_nout(nout),
      m_core(std::move(core)),
      m_dim_names(std::move(dim_names)),
      m_target(where),
      m_fastmath(fastmath),
      m_writable(std::move(writable_inputs)) {
    NU_ASSERT(static_cast<int>(m_core.size()) == nin + nout);
}

bool gufunc::writable(int input) const {
    return std::find(m_writable.begin(), m_writable.end(), input) != m_writable.end();
}

void gufunc::add_loop(gufunc_loop l) {
    NU_ASSERT(static_cast<int>(l.types.size()) == m_nin + m_nout);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_loops.push_back(std::move(l));
}

std::vector<std::string> gufunc::type_strings() const {
    std::vector<std::string> out;
    for (const gufunc_loop& l : m_loops) {
        std::string s;
        for (int k = 0; k < m_nin + m_nout; ++k) {
            if (k == m_nin) s += "->";
            s += dtype_char(l.types[k]);
        }
        out.push_back(s);
    }
    return out;
}

int gufunc::select_loop(const std::vector<operand>& inputs) const {
    if (static_cast<int>(inputs.size()) != m_nin) return -1;
    return first_matching_loop(
        m_loops, [](const gufunc_loop& l) -> const std::vector<dtype>& { return l.types; }, inputs);
}

std::string gufunc::no_loop_message(const std::vector<operand>& inputs) const {
    std::string loops;
    for (const std::string& t : type_strings()) loops += (loops.empty() ? "'" : ", '") + t + "'";
    return m_name + "(): no loop matches the input types (" + operand_types(inputs) +
           ") with safe casting; the loops are [" + loops + "]";
}

gufunc_plan gufunc::plan(int loop, const std::vector<operand>& inputs,
                         const std::vector<const operand*>& outputs) const {
    gufunc_plan p;
    p.loop = loop;
    p.sizes.assign(m_dim_names.size(), -1);
    std::vector<shape_t> loop_shapes;
    auto bind = [&](const shape_t& shape, int k, const std::string& what) {
        const std::vector<core_dim>& core = m_core[k];
        if (shape.size() < core.size()) {
            throw value_error(m_name + "(): " + what + " has " + std::to_string(shape.size()) +
                              " dimension(s), but its core signature " + layout_of(core, m_dim_names) +
                              " needs at least " + std::to_string(core.size()));
        }
        const std::size_t first = shape.size() - core.size();
        for (std::size_t j = 0; j < core.size(); ++j) {
            const std::int64_t size = shape[first + j];
            const core_dim& cd = core[j];
            if (cd.name < 0) {
                if (size != cd.fixed) {
                    throw value_error(m_name + "(): " + what + " has size " + std::to_string(size) +
                                      " in core dimension " + std::to_string(j) + ", but the layout " +
                                      layout_of(core, m_dim_names) + " fixes it to " +
                                      std::to_string(cd.fixed));
                }
                continue;
            }
            std::int64_t& bound = p.sizes[cd.name];
            if (bound < 0) {
                bound = size;
            } else if (bound != size) {
                throw value_error(m_name + "(): dimension '" + m_dim_names[cd.name] + "' of " + what +
                                  " has size " + std::to_string(size) + ", but an earlier argument gave it size " +
                                  std::to_string(bound));
            }
        }
        loop_shapes.push_back(leading(shape, core.size()));
    };
    for (int k = 0; k < m_nin; ++k) {
        bind(inputs[k].is_array() ? inputs[k].view.shape : shape_t{}, k,
             "argument " + std::to_string(k + 1));
    }
    for (int k = 0; k < m_nout; ++k) {
        if (outputs[k] != nullptr) bind(outputs[k]->view.shape, m_nin + k, "output " + std::to_string(k + 1));
    }
    p.loop_shape = broadcast_shapes(loop_shapes, m_name.c_str());
    for (int k = 0; k < m_nout; ++k) {
        shape_t full = p.loop_shape;
        for (const core_dim& cd : m_core[m_nin + k]) {
            const std::int64_t size = cd.name >= 0 ? p.sizes[cd.name] : cd.fixed;
            if (size < 0) {
                throw value_error(m_name + "(): cannot infer the size of dimension '" + m_dim_names[cd.name] +
                                  "' of output " + std::to_string(k + 1) +
                                  ": it appears in no input; pass the output with out=");
            }
            full.push_back(size);
        }
        if (outputs[k] != nullptr && outputs[k]->view.shape != full) {
            throw value_error(m_name + "(): output " + std::to_string(k + 1) + " has shape " +
                              shape_string(outputs[k]->view.shape) + ", but the call needs " +
                              shape_string(full) + " (outputs are not broadcast)");
        }
        p.out_shapes.push_back(full);
    }
    return p;
}

std::vector<std::pair<std::string, std::string>> gufunc::kernel_sources() {
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& kv : m_kernels) out.emplace_back(kv.second->name, kv.second->source);
    return out;
}

const gufunc_loop& gufunc::loop_at(int index) {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_loops[static_cast<std::size_t>(index)];
}

std::string staged_spec::key() const {
    std::string k;
    for (std::size_t j = 0; j < modes.size(); ++j) {
        k += "|" + std::to_string(modes[j]);
        for (std::int64_t e : extents[j]) k += "," + std::to_string(e);
    }
    return k;
}

const compiled_kernel& gufunc::kernel(int loop, int nloop, bool host, const staged_spec* spec) {
    const bool staged = spec != nullptr;
    const std::string key = std::to_string(loop) + "/" + std::to_string(nloop) + (staged ? "/staged" + spec->key() : "");
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_kernels.find(key);
        if (it != m_kernels.end()) return *it->second;
    }
    // Built without the lock (see ufunc::kernel: the build releases the GIL).
    std::string entry;
    // Host builds check indices under emulation (as @cuda.jit kernels do) and where asked
    // for; the checks cost a compare and branch per index (README, guvectorize section).
    const char* env = std::getenv("NUMBACUDA_UFUNC_BOUNDSCHECK");
    const bool checked = host && (m_target == target::cuda || m_boundscheck ||
                                  (env && std::string(env) == "1"));
    const std::string src = std::string(checked ? "#define NU_BOUNDSCHECK 1\n" : "") +
                            kernel_source(loop, nloop, &entry, staged, spec);
    std::unique_ptr<compiled_kernel> k;
    {
        blocking_section compiling;
        // Emulation (target cuda on the host backend) builds at -O1, cpu/parallel at -O3.
        const bool emulated = host && m_target == target::cuda;
        k = std::make_unique<compiled_kernel>(build_kernel(
            src, entry, host, m_fastmath, emulated ? emulation_host_options() : std::vector<std::string>{}));
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    return *m_kernels.emplace(key, std::move(k)).first->second;
}

std::string gufunc::kernel_source(int loop, int nloop, std::string* entry_out, bool staged,
                                  const staged_spec* spec) {
    const gufunc_loop& l = loop_at(loop);
    if (staged && nloop != 1) throw value_error(m_name + "(): staged kernels have one loop dimension");
    const std::string entry = l.function + "_gufunc" + std::to_string(nloop) + (staged ? "_staged" : "");
    if (entry_out) *entry_out = entry;
    const int nops = m_nin + m_nout;
    int words = 1 + nloop + (staged ? 4 * nops : 0);
    std::string args;
    for (int k = 0; k < nops; ++k) {
        const int core = l.kinds[k] == arg_kind::view ? static_cast<int>(m_core[k].size()) : 0;
        words += 1 + nloop + 2 * core;
        args += std::string(", nu::garg<") + c_type_name(l.types[k]) + ", " + std::to_string(core) + ", " +
                std::to_string(static_cast<int>(l.kinds[k]));
        if (staged) {
            const int mode = spec ? spec->modes[k] : l.kinds[k] == arg_kind::scalar ? 0 : k < m_nin ? 1 : 3;
            args += ", " + std::to_string(mode);
            if (spec && core > 0 && static_cast<int>(spec->extents[k].size()) == core) {
                for (std::int64_t e : spec->extents[k]) args += ", " + std::to_string(e);
            }
        }
        args += ">";
    }
    std::string src = "#include \"gufunc.cuh\"\n\n" + l.source + "\n\n";
    src += "struct nu_op {\n"
           "    template <class... A>\n"
           "    __device__ __forceinline__ void operator()(A... a) const { " + l.function + "(a...); }\n"
           "};\n\n";
    src += std::string(staged ? "NU_GUFUNC_STAGED_ENTRY(" : "NU_GUFUNC_ENTRY(") + entry + ", " +
           std::to_string(words) + ", nu::gufunc<nu_op, " + std::to_string(nloop) + args + ">)\n";
    return src;
}

namespace {

// How a GPU launch of one loop dimension stages its operands through shared memory (see
// gufunc.cuh's run_device_staged): per operand its mode, copy width, shared stride and item
// bytes; then (size_staging) threads per block, dynamic shared bytes and the four words
// per operand. `any` is false when no operand gains from staging.
struct staging {
    bool any = false;
    std::vector<long long> mode, width, stride, item;
    unsigned block = 0;
    std::size_t bytes = 0;
    std::vector<long long> words;

    // Shared bytes of a block of `block` threads, and each operand's offset in them.
    std::size_t layout(unsigned block, std::vector<long long>* offsets) const {
        std::size_t total = 0;
        for (std::size_t k = 0; k < mode.size(); ++k) {
            if (offsets) offsets->push_back(static_cast<long long>(total));
            if (mode[k] == 0) continue;
            total += static_cast<std::size_t>(stride[k]) * (mode[k] == 2 ? 1 : block);
            total = (total + 15) / 16 * 16;
        }
        return total;
    }
};

staging plan_staging(const std::vector<array_view>& views, const std::vector<shape_t>& loop_strides,
                     const std::vector<std::size_t>& core_ndim, const std::vector<arg_kind>& kinds,
                     int nin, const std::vector<bool>& written, const std::vector<bool>& allocated) {
    const std::size_t nops = views.size();
    staging st;
    std::vector<long long>&mode = st.mode, &width = st.width, &stride = st.stride, &item = st.item;
    mode.assign(nops, 0);
    width.assign(nops, 4);
    stride.assign(nops, 0);
    item.assign(nops, 0);
    for (std::size_t k = 0; k < nops; ++k) {
        if (kinds[k] == arg_kind::scalar) continue;  // read by value, in place
        const array_view& v = views[k];
        const std::size_t size = itemsize(v.type);
        // The item must be C-contiguous (extents of 1 aside) ...
        std::int64_t bytes = static_cast<std::int64_t>(size);
        bool contiguous = true;
        for (std::size_t j = v.shape.size(); j-- > v.shape.size() - core_ndim[k];) {
            if (v.shape[j] != 1 && v.strides[j] != bytes) contiguous = false;
            bytes *= v.shape[j];
        }
        const auto base = reinterpret_cast<std::uintptr_t>(v.data);
        const std::int64_t step = loop_strides[k][0];
        // ... of whole words, and big enough that reading it in place would scatter a
        // warp's loads: smaller items are read coalesced enough where they lie.
        if (!contiguous || bytes < 32 || bytes % 4 != 0 || base % 4 != 0) continue;
        const bool out = static_cast<int>(k) >= nin || written[k];
        if (step == bytes) {
            // An output the engine allocated has no contents to read: written back only.
            mode[k] = out ? (allocated[k] ? 4 : 3) : 1;
        } else if (step == 0 && !out) {
            mode[k] = 2;
        } else {
            continue;
        }
        width[k] = bytes % 16 == 0 && base % 16 == 0 ? 16 : bytes % 8 == 0 && base % 8 == 0 ? 8 : 4;
        // An odd number of elements (of at least 4 bytes) between items: no bank conflicts
        // when every thread reads the same element of its own item.
        const std::int64_t e = static_cast<std::int64_t>(std::clamp<std::size_t>(size, 4, 16));
        std::int64_t s = (bytes + e - 1) / e * e;
        if ((s / e) % 2 == 0) s += e;
        stride[k] = s;
        item[k] = bytes;
        st.any = true;
    }
    return st;
}

// Threads per block: of the sizes up to the kernel's launch bound (128) whose items fit in
// the opt-in shared memory, the one with the most threads resident per multiprocessor by
// the occupancy API (`occupancy(block, shared bytes)`: blocks per multiprocessor), which
// counts the block's shared memory with its registers; the larger block on a tie. A fixed
// 48 KiB budget gave 16x16 float32 matmul 2 warps per multiprocessor (issue 30).
void size_staging(staging& st, std::size_t shared_limit, const std::function<int(unsigned, std::size_t)>& occupancy) {
    long long best = -1;
    for (unsigned block : {128u, 96u, 64u, 32u}) {
        const std::size_t bytes = st.layout(block, nullptr);
        if (bytes > shared_limit) continue;
        const long long threads = static_cast<long long>(occupancy(block, bytes)) * block;
        if (threads > best) {
            best = threads;
            st.block = block;
        }
    }
    if (st.block == 0) return;
    std::vector<long long> offsets;
    st.bytes = st.layout(st.block, &offsets);
    const std::vector<long long>&mode = st.mode, &width = st.width, &stride = st.stride, &item = st.item;
    for (std::size_t k = 0; k < mode.size(); ++k) {
        st.words.push_back(mode[k] | width[k] << 8);
        st.words.push_back(offsets[k]);
        st.words.push_back(stride[k]);
        st.words.push_back(item[k]);
    }
}

}  // namespace

std::int64_t gufunc::execute(const gufunc_plan& plan, const std::vector<operand>& inputs,
                             const std::vector<operand>& outputs, const stream_ref& stream,
                             const std::vector<bool>& fresh_outputs) {
    const std::int64_t n = checked_size(plan.loop_shape, m_name.c_str());
    const gufunc_loop& l = loop_at(plan.loop);
    const bool emulated = cuda_target_emulated();
    const bool host = m_target != target::cuda || emulated;
    // A closed stream is refused on every backend, so emulation catches the mistake too.
    const stream_handle live = live_handle(stream, m_name.c_str());
    const stream_handle s = host ? nullptr : live;
    const int nops = m_nin + m_nout;

    // Views the kernel uses. Host data goes to device memory on a GPU; under emulation a
    // host input is still copied (unless writable), so writes the kernel makes to it are
    // lost exactly as on a GPU (Numba's semantics).
    std::vector<device_array> keep;
    keep.reserve(2 * static_cast<std::size_t>(nops));
    std::vector<array_view> views(static_cast<std::size_t>(nops));
    std::vector<std::pair<std::size_t, const array_view*>> copy_back;  // (operand, host view)
    for (int k = 0; k < nops; ++k) {
        const operand& op = k < m_nin ? inputs[k] : outputs[k - m_nin];
        array_view v = op.view;
        const bool is_host = op.where == operand::kind::host;
        const bool is_output = k >= m_nin;
        const bool stage = is_host && m_target == target::cuda &&
                           (!emulated || (!is_output && !writable(k)));
        if (stage) {
            device_array tmp = device_array::empty(v.shape, v.type, 'C', std::nullopt, stream, m_name.c_str());
            // Outputs are read-write: their contents go too, unless allocated for this call.
            const bool fresh = is_output && k - m_nin < static_cast<int>(fresh_outputs.size()) &&
                               fresh_outputs[k - m_nin];
            if (!fresh) tmp.copy_from_host(v, stream);
            keep.push_back(tmp);
            if (!emulated && (is_output || writable(k))) copy_back.emplace_back(k, &op.view);
            v = tmp.view();
        } else if (op.where == operand::kind::device && v.type != l.types[k]) {
            // A device array of another dtype: convert on the device (and back for outputs).
            device_array converted = cast_to(op.device, l.types[k], stream);
            keep.push_back(converted);
            v = converted.view();
            if (is_output) copy_back.emplace_back(k, nullptr);
        }
        views[k] = v;
    }
    // An input sharing memory with an output is read from a copy, as NumPy does: a thread
    // reads whole core slices, which other threads' outputs may already have overwritten.
    operand_copies copies;
    for (int k = 0; k < m_nin; ++k) {
        for (int j = m_nin; j < nops; ++j) {
            if (may_overlap(views[k], views[j])) {
                views[k] = copy_of(views[k], host, stream, copies);
                break;
            }
        }
    }
    std::int64_t blocks = 0;
    if (n > 0) {
        // Loop dimensions: broadcast, then coalesced like an elementwise iteration space.
        shape_t shape = plan.loop_shape;
        std::vector<shape_t> strides;
        for (int k = 0; k < nops; ++k) {
            const std::size_t core = m_core[k].size();
            const shape_t& full_shape = views[k].shape;
            const shape_t& full_strides = views[k].strides;
            strides.push_back(broadcast_strides(leading(full_shape, core), leading(full_strides, core), shape));
        }
        // Outputs first decide the iteration order, as for ufuncs.
        std::rotate(strides.begin(), strides.begin() + m_nin, strides.end());
        coalesce_dims(shape, strides);
        std::rotate(strides.begin(), strides.end() - m_nin, strides.end());
        const int nloop = static_cast<int>(shape.size());
        staging st;
        staged_spec spec;
        if (!host && nloop == 1) {
            std::vector<std::size_t> core_ndim;
            std::vector<bool> written, allocated;
            for (int k = 0; k < nops; ++k) {
                core_ndim.push_back(l.kinds[k] == arg_kind::view ? m_core[k].size() : 0);
                written.push_back(k < m_nin && writable(k));
                allocated.push_back(k >= m_nin && k - m_nin < static_cast<int>(fresh_outputs.size()) &&
                                    fresh_outputs[k - m_nin]);
            }
            st = plan_staging(views, strides, core_ndim, l.kinds, m_nin, written, allocated);
            if (st.any) {
                for (int k = 0; k < nops; ++k) {
                    spec.modes.push_back(static_cast<int>(st.mode[k]));
                    // Small core extents become constants of the kernel: with the staging
                    // mode fixed too, the function indexes a staged item with shared loads
                    // at constant offsets (issue 30: generic 64-bit loads before).
                    std::vector<std::int64_t> fixed;
                    const std::size_t core = core_ndim[k];
                    const shape_t& sh = views[k].shape;
                    for (std::size_t j = sh.size() - core; core <= 4 && j < sh.size(); ++j) fixed.push_back(sh[j]);
                    const bool small = core > 0 && core <= 4 &&
                                       std::all_of(fixed.begin(), fixed.end(), [](std::int64_t e) {
                                           return e >= 1 && e <= staged_spec::k_fixed_extent;
                                       });
                    spec.extents.push_back(small ? fixed : std::vector<std::int64_t>{});
                }
            }
        }
        const compiled_kernel* staged_kernel = st.any ? &kernel(plan.loop, nloop, host, &spec) : nullptr;
        if (staged_kernel != nullptr) {
            backend& b = active_backend();
            size_staging(st, static_cast<std::size_t>(current_device_info().shared_per_block_optin),
                         [&](unsigned block, std::size_t bytes) {
                             return b.max_active_blocks(staged_kernel->function, block, bytes);
                         });
        }
        const compiled_kernel& kern = st.block != 0 ? *staged_kernel : kernel(plan.loop, nloop, host, nullptr);

        std::vector<long long> words;
        words.push_back(n);
        for (std::int64_t d : shape) words.push_back(d);
        for (int k = 0; k < nops; ++k) {
            words.push_back(reinterpret_cast<long long>(views[k].data));
            for (std::int64_t st : strides[k]) words.push_back(st);
            if (l.kinds[k] != arg_kind::view) continue;
            const std::size_t core = m_core[k].size();
            const std::size_t first = views[k].shape.size() - core;
            for (std::size_t j = 0; j < core; ++j) words.push_back(views[k].shape[first + j]);
            for (std::size_t j = 0; j < core; ++j) words.push_back(views[k].strides[first + j]);
        }
        const std::int64_t block = st.block != 0 ? st.block : 128;
        if (m_target == target::cuda) blocks = (n + block - 1) / block;
        if (st.block != 0) {
            words.insert(words.end(), st.words.begin(), st.words.end());
            launch_staged(kern, words.data(), n, st.block, st.bytes, s);
        } else if (long long oob[4]; launch_kernel(kern, words.data(), n, host, m_target == target::parallel, 128, 1, s, oob)) {
            throw index_error(m_name + "(): index " + std::to_string(oob[0]) +
                              " is out of bounds for axis " + std::to_string(oob[1]) +
                              " with size " + std::to_string(oob[2]) + " (loop index " +
                              std::to_string(oob[3]) + ")");
        }
    }
    // Results back where they belong: host arrays on a GPU, converted device outputs.
    for (const auto& [k, host_view] : copy_back) {
        const device_array staged(nullptr, views[k], stream);  // view of a kept temporary
        if (host_view != nullptr) {
            staged.copy_to_host(*host_view, stream);
        } else {
            cast_into(outputs[k - m_nin].device, staged, stream);
        }
    }
    return blocks;
}

}  // namespace nu
