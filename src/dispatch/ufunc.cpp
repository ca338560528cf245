// src/dispatch/ufunc.cpp: loop selection (NumPy casting, NEP 50 scalars) and the call path
#include "dispatch/ufunc.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "dispatch/broadcast.h"
#include "dispatch/device_cast.h"
#include "runtime/blocking.h"
#include "runtime/errors.h"

namespace nu {
namespace {

bool same_view(const array_view& a, const array_view& b) {
    return a.data == b.data && a.strides == b.strides && a.shape == b.shape;
}

}  // namespace

ufunc::ufunc(std::string name, int nin, target where, bool fastmath)
    : m_name(std::move(name)), m_nin(nin), m_target(where), m_fastmath(fastmath) {}

void ufunc::add_loop(loop l) {
    NU_ASSERT(static_cast<int>(l.in.size()) == m_nin);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_loops.push_back(std::move(l));
}

std::vector<std::string> ufunc::type_strings() const {
    std::vector<std::string> out;
    for (const loop& l : m_loops) {
        std::string s;
        for (dtype t : l.in) s += dtype_char(t);
        out.push_back(s + "->" + dtype_char(l.out));
    }
    return out;
}

int ufunc::select_loop(const std::vector<operand>& inputs) const {
    if (static_cast<int>(inputs.size()) != m_nin) return -1;
    auto types_of = [](const loop& l) -> const std::vector<dtype>& { return l.in; };
    if (m_lazy) return exact_loop(m_loops, types_of, resolved_types(inputs));
    return first_matching_loop(m_loops, [](const loop& l) -> const std::vector<dtype>& { return l.in; },
                               inputs);
}

std::string ufunc::no_loop_message(const std::vector<operand>& inputs) const {
    std::string loops;
    for (const std::string& t : type_strings()) loops += (loops.empty() ? "'" : ", '") + t + "'";
    return m_name + "(): no loop matches the input types (" + operand_types(inputs) +
           ") with safe casting; the loops are [" + loops + "]";
}

call_plan ufunc::plan(const std::vector<operand>& inputs, const operand* out) const {
    const int loop = select_loop(inputs);
    if (loop < 0) throw type_error(no_loop_message(inputs));
    return plan_with(loop, inputs, out, casting_rule::same_kind, nullptr);
}

call_plan ufunc::plan_with(int loop, const std::vector<operand>& inputs, const operand* out,
                           casting_rule out_casting, const operand* extra) const {
    call_plan p;
    p.loop = loop;
    check_weak_scalars(inputs, m_loops[p.loop].in, m_name);
    p.out_type = m_loops[p.loop].out;
    small_vector<const shape_t*, 8> shapes;
    if (extra != nullptr && extra->is_array()) shapes.push_back(&extra->view.shape);
    bool all_fortran = false;
    for (const operand& op : inputs) {
        if (!op.is_array()) continue;
        shapes.push_back(&op.view.shape);
        const bool f = op.view.ndim() > 1 && op.view.is_f_contiguous() && !op.view.is_c_contiguous();
        all_fortran = shapes.size() == 1 ? f : (all_fortran && f);
    }
    p.order = all_fortran ? 'F' : 'C';
    const char* api = m_name.c_str();
    if (out == nullptr) {
        p.shape = broadcast_shapes(shapes.data(), shapes.size(), api);
        return p;
    }
    // The inputs broadcast to out's shape; out itself is never broadcast.
    const shape_t in_shape = broadcast_shapes(shapes.data(), shapes.size(), api);
    const shape_t& out_shape = out->view.shape;
    bool fits = in_shape.size() <= out_shape.size();
    for (std::size_t i = 0; fits && i < in_shape.size(); ++i) {
        const std::int64_t o = out_shape[out_shape.size() - in_shape.size() + i];
        fits = in_shape[i] == o || in_shape[i] == 1;
    }
    if (!fits) {
        throw value_error(m_name + "(): out has shape " + shape_string(out_shape) +
                          ", but the inputs broadcast to " + shape_string(in_shape));
    }
    if (!can_cast(p.out_type, out->view.type, out_casting)) {
        throw type_error(m_name + "(): cannot cast the loop's output " + dtype_name(p.out_type) +
                         " to out's dtype " + dtype_name(out->view.type) + " with casting rule '" +
                         casting_name(out_casting) + "'");
    }
    p.shape = out->view.shape;
    return p;
}

ufunc& ufunc::where_ufunc() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_where) m_where = std::make_unique<ufunc>(m_name, m_nin + 2, m_target, m_fastmath);
    return *m_where;
}

int ufunc::where_loop(int index, dtype out_type) {
    ufunc& w = where_ufunc();
    const long long key = static_cast<long long>(index) * 64 + static_cast<int>(out_type);
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_where_loops.find(key);
        if (it != m_where_loops.end()) return it->second;
    }
    const loop& l = loop_at(index);
    loop masked;
    masked.in = {dtype::bool_, out_type};
    masked.in.insert(masked.in.end(), l.in.begin(), l.in.end());
    masked.out = out_type;
    masked.function = l.function + "_where" + typestr(out_type).substr(1);
    // The function is not called where the mask is false, so it has no effect there.
    std::string params = "nu::b1 nu_mask, " + std::string(c_type_name(out_type)) + " nu_old";
    std::string args;
    for (std::size_t k = 0; k < l.in.size(); ++k) {
        params += ", " + std::string(c_type_name(l.in[k])) + " a" + std::to_string(k);
        args += (k ? ", a" : "a") + std::to_string(k);
    }
    masked.source = l.source + "\n\n__device__ " + c_type_name(out_type) + " " + masked.function + "(" + params +
                    ") {\n    return nu_mask ? nu::cast<" + c_type_name(out_type) + ">(" + l.function + "(" + args +
                    ")) : nu_old;\n}\n";
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_where_loops.find(key);
    if (it != m_where_loops.end()) return it->second;
    w.add_loop(std::move(masked));  // only this function adds to w, under our lock
    const int where_index = static_cast<int>(w.loops().size()) - 1;
    m_where_loops.emplace(key, where_index);
    return where_index;
}

std::vector<std::pair<std::string, std::string>> ufunc::kernel_sources() {
    std::vector<std::pair<std::string, std::string>> out;
    ufunc* masked = nullptr;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        for (const auto& kv : m_kernels) out.emplace_back(kv.second->kernel.name, kv.second->kernel.source);
        masked = m_where.get();  // never replaced once made
    }
    if (masked != nullptr) {
        for (auto& kv : masked->kernel_sources()) out.push_back(std::move(kv));  // where= variants
    }
    return out;
}

std::pair<std::string, std::string> ufunc::variant_source(int loop, int ndim, const std::string& inner) {
    if (loop < 0 || loop >= static_cast<int>(loops().size()) || ndim < 0) {
        throw value_error(m_name + "._variant_source(): no loop " + std::to_string(loop) +
                          " or bad ndim " + std::to_string(ndim));
    }
    const nu::loop& l = loop_at(loop);
    elementwise_variant v;
    v.loop = loop;
    v.ndim = ndim;
    v.out = l.out;
    v.in = l.in;
    for (std::size_t k = 0; k < inner.size() && k < 32; ++k) {
        v.inner |= static_cast<unsigned long long>(inner[k] == 'c' ? 1 : inner[k] == 'z' ? 2 : 0) << (2 * k);
    }
    const std::string entry = l.function + (ndim == 0 ? "_contig" : "_strided" + std::to_string(ndim));
    return {entry, elementwise_source(l.function, l.source, l.out, l.in, v, entry)};
}

const loop& ufunc::loop_at(int index) {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_loops[static_cast<std::size_t>(index)];
}

const elementwise_kernel& ufunc::kernel(const elementwise_variant& v, bool host) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_kernels.find(v);
        if (it != m_kernels.end()) return *it->second;
    }
    // Built without the lock: the build releases the GIL, and a thread waiting here for
    // the lock while holding the GIL would otherwise deadlock with it. Two threads may
    // build the same variant; the first one stored wins.
    const loop& l = loop_at(v.loop);
    std::string entry = l.function + (v.ndim == 0 ? "_contig" : "_strided" + std::to_string(v.ndim));
    const std::string source = elementwise_source(l.function, l.source, l.out, l.in, v, entry);
    // Emulation (target cuda on the host backend) builds at -O1, cpu/parallel at -O3;
    // emulation runs the device's strided loop (elementwise.cuh, run_pieces).
    std::vector<std::string> host_extra;
    if (host && m_target == target::cuda) {
        host_extra = emulation_host_options();
        host_extra.push_back("-DNU_EMULATE_DEVICE_LOOP=1");
    }
    std::unique_ptr<elementwise_kernel> k;
    {
        blocking_section compiling;  // milliseconds (cache) to seconds (compiler)
        k = std::make_unique<elementwise_kernel>(
            elementwise_kernel{build_kernel(source, entry, host, m_fastmath, host_extra),
                               vector_width(v.out, v.in), piece_width(v.out, v.in)});
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    return *m_kernels.emplace(v, std::move(k)).first->second;
}

numpy_inner_loop ufunc::numpy_loop(int index) {
    if (m_target == target::cuda) {
        throw type_error(m_name + "(): a NumPy ufunc needs host loops (target 'cpu' or 'parallel'; "
                         "got target 'cuda')");
    }
    if (index < 0 || static_cast<std::size_t>(index) >= m_loops.size()) {
        throw value_error(m_name + "(): no loop " + std::to_string(index));
    }
    const loop& l = loop_at(index);
    elementwise_variant v;
    v.loop = index;
    v.ndim = 1;
    v.index64 = true;
    v.out = l.out;
    v.in = l.in;
    const elementwise_kernel& k = kernel(v, /*host=*/true);
    numpy_inner_loop result{k.kernel.entry, k.kernel.library, m_nin, m_target == target::parallel, {}};
    result.itemsizes.push_back(static_cast<long long>(itemsize(l.out)));
    for (dtype t : l.in) result.itemsizes.push_back(static_cast<long long>(itemsize(t)));
    return result;
}

void ufunc::execute(const call_plan& plan, const std::vector<operand>& inputs, const operand& out,
                    const stream_ref& stream) {
    const std::int64_t n = checked_size(plan.shape, m_name.c_str());
    if (n == 0) return;
    const bool emulated = cuda_target_emulated();
    const bool host = m_target != target::cuda || emulated;
    live_handle(stream, m_name.c_str());  // a closed stream is refused on every backend
    if (!host) {
        const int current = active_backend().current_device();
        auto check_device = [&](const operand& op, const std::string& what) {
            const device_buffer* b = op.device.buffer().get();
            if (op.where == operand::kind::device && b && b->device() >= 0 && b->device() != current) {
                throw value_error(m_name + "(): " + what + " is on device " + std::to_string(b->device()) +
                                  ", but the current device is " + std::to_string(current) +
                                  " (use cuda.select_device() or copy it)");
            }
        };
        for (std::size_t k = 0; k < inputs.size(); ++k) check_device(inputs[k], "argument " + std::to_string(k + 1));
        check_device(out, "out");
    }
    if (m_target == target::cuda) {
        if (const std::int64_t chunk = pipeline_chunk(plan, inputs, out, n)) {
            run_pipelined(plan, inputs, out, n, chunk, stream);
            return;
        }
    }
    staged_launch pending = launch(plan, inputs, out, stream, /*stage_host=*/!host);
    finish(pending, out, stream);
}

namespace {

// Bytes of the widest operand per chunk of a pipelined call: large enough that a launch
// and two copies per chunk cost little, small enough that several chunks overlap.
constexpr std::int64_t k_pipeline_bytes = std::int64_t{16} << 20;

// NUMBACUDA_UFUNC_PIPELINE_CHUNK (elements) overrides the chunk size, and turns the
// pipeline on under emulation too, so tests exercise the chunking without a GPU.
std::int64_t chunk_override() {
    static const std::int64_t value = [] {
        const char* v = std::getenv("NUMBACUDA_UFUNC_PIPELINE_CHUNK");
        return v != nullptr ? std::max<std::int64_t>(0, std::atoll(v)) : 0;
    }();
    return value;
}

array_view flat_slice(const array_view& v, std::int64_t offset, std::int64_t length) {
    const std::int64_t item = static_cast<std::int64_t>(itemsize(v.type));
    return array_view{static_cast<char*>(v.data) + offset * item, v.type, shape_t{length}, shape_t{item}};
}

}  // namespace

std::int64_t ufunc::pipeline_chunk(const call_plan& plan, const std::vector<operand>& inputs,
                                   const operand& out, std::int64_t n) const {
    const bool emulated = cuda_target_emulated();
    if (out.where != operand::kind::host || (emulated && chunk_override() == 0)) return 0;
    // Every array is a C-ordered block of the result's shape, so chunks are flat ranges;
    // a host input partly overlapping `out` would be read after earlier chunks wrote it.
    auto flat = [&](const array_view& v) { return v.shape == plan.shape && v.is_c_contiguous(); };
    if (!flat(out.view)) return 0;
    std::size_t widest = itemsize(out.view.type);
    for (const operand& op : inputs) {
        if (!op.is_array()) continue;
        if (!flat(op.view)) return 0;
        if (op.where == operand::kind::host && may_overlap(op.view, out.view) && op.view.data != out.view.data) {
            return 0;
        }
        widest = std::max(widest, itemsize(op.view.type));
    }
    const std::int64_t chunk = chunk_override() > 0 ? chunk_override()
                                                    : k_pipeline_bytes / static_cast<std::int64_t>(widest);
    return n > chunk ? chunk : 0;
}

void ufunc::run_pipelined(const call_plan& plan, const std::vector<operand>& inputs, const operand& out,
                          std::int64_t n, std::int64_t chunk, const stream_ref& stream) {
    // Two streams take alternate chunks: while chunk c's result comes back, chunk c+1 is
    // already uploaded and computing. They wait for the caller's stream first, so device
    // inputs written there are complete.
    static const stream_ref* lanes = new stream_ref[2]{new_stream(), new_stream()};
    ++m_pipelined_calls;
    backend& b = active_backend();
    const stream_handle user = live_handle(stream, m_name.c_str());
    for (int i = 0; i < 2; ++i) b.wait_for(lanes[i]->handle, user);

    call_plan part = plan;
    part.order = 'C';
    staged_launch pending[2];
    operand part_out[2];
    int c = 0;
    for (std::int64_t offset = 0; offset < n; offset += chunk, ++c) {
        const std::int64_t length = std::min(chunk, n - offset);
        std::vector<operand> part_in = inputs;
        for (operand& op : part_in) {
            if (op.is_array()) op.view = flat_slice(op.view, offset, length);
        }
        const int lane = c % 2;
        part_out[lane] = out;
        part_out[lane].view = flat_slice(out.view, offset, length);
        part.shape = shape_t{length};
        staged_launch queued = launch(part, part_in, part_out[lane], lanes[lane], /*stage_host=*/true);
        if (c > 0) finish(pending[1 - lane], part_out[1 - lane], lanes[1 - lane]);
        pending[lane] = std::move(queued);
    }
    const int last = (c - 1) % 2;
    finish(pending[last], part_out[last], lanes[last]);
    // A copy into pinned `out` may still be in flight on a lane: later work on the
    // caller's stream waits for the lanes, and on the legacy default stream the call
    // returns with the result in place (Numba is synchronous for stream=0).
    for (int i = 0; i < 2; ++i) b.wait_for(user, lanes[i]->handle);
    if (user == nullptr) b.synchronize_stream(user);
}

void ufunc::finish(staged_launch& pending, const operand& out, const stream_ref& stream) {
    if (pending.staged_out.buffer()) pending.staged_out.copy_to_host(out.view, stream);
    pending = staged_launch{};
}

ufunc::staged_launch ufunc::launch(const call_plan& plan, const std::vector<operand>& inputs,
                                   const operand& out, const stream_ref& stream, bool stage_host) {
    const std::int64_t n = checked_size(plan.shape, m_name.c_str());
    const loop& l = loop_at(plan.loop);
    const bool host = m_target != target::cuda || cuda_target_emulated();
    // A closed stream is refused on every backend, so emulation catches the mistake too.
    const stream_handle live = live_handle(stream, m_name.c_str());
    const stream_handle s = host ? nullptr : live;

    // Operand views the kernel will use; temporaries live until the launch is queued
    // (their frees are stream-ordered after it).
    staged_launch pending;
    std::vector<device_array>& temporaries = pending.temporaries;
    auto on_device = [&](const array_view& v) {
        device_array tmp = device_array::empty(v.shape, v.type, 'C', std::nullopt, stream, m_name.c_str());
        tmp.copy_from_host(v, stream);
        temporaries.push_back(tmp);
        return tmp.view();
    };
    array_view out_view = out.view;
    if (stage_host && out.where == operand::kind::host) {
        pending.staged_out = device_array::empty(out.view.shape, out.view.type, plan.order, std::nullopt,
                                                 stream, m_name.c_str());
        out_view = pending.staged_out.view();
    }
    // Per-call scratch kept across calls on this thread: no heap allocation in the steady
    // state of a small call. A launch can re-enter (copying an overlapping input runs the
    // cast kernel), and the inner one then uses scratch of its own.
    thread_local launch_scratch reused;
    thread_local bool reused_busy = false;
    launch_scratch fresh;
    const bool nested = reused_busy;
    launch_scratch& scratch = nested ? fresh : reused;
    reused_busy = true;
    struct release_scratch {
        bool nested;
        ~release_scratch() {
            if (!nested) reused_busy = false;
        }
    } release{nested};
    elementwise_variant& v = scratch.variant;
    v.loop = plan.loop;
    v.out = out.view.type;
    v.scalars = 0;
    v.in.clear();
    std::vector<array_view>& views = scratch.views;
    std::vector<scalar_value>& values = scratch.values;
    views.resize(inputs.size());
    values.resize(inputs.size());
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const operand& op = inputs[k];
        if (!op.is_array()) {
            values[k] = convert_scalar(op.value, l.in[k]);
            v.scalars |= 1ull << (k + 1);
            v.in.push_back(l.in[k]);
            continue;
        }
        views[k] = op.view;
        if (stage_host && op.where == operand::kind::host) views[k] = on_device(op.view);
        // An input that partly overlaps the output is read from a copy (NumPy does the same).
        if (may_overlap(views[k], out_view) &&
            !same_view(views[k], array_view{out_view.data, views[k].type, out_view.shape, out_view.strides})) {
            views[k] = copy_of(views[k], host, stream, pending.copies);
        }
        v.in.push_back(views[k].type);
    }

    // Iteration space: output first, then the inputs, broadcast and coalesced. The common
    // case, every array a C-ordered block of the result's shape, is contiguous as it is.
    shape_t shape = plan.shape;
    std::vector<shape_t>& strides = scratch.strides;
    bool contiguous = out_view.shape == shape && out_view.is_c_contiguous();
    for (std::size_t k = 0; contiguous && k < inputs.size(); ++k) {
        contiguous = !inputs[k].is_array() || (views[k].shape == shape && views[k].is_c_contiguous());
    }
    if (!contiguous) {
        strides.resize(inputs.size() + 1);
        strides[0] = out_view.strides;
        for (std::size_t k = 0; k < inputs.size(); ++k) {
            strides[k + 1] = inputs[k].is_array() ? broadcast_strides(views[k].shape, views[k].strides, shape)
                                                  : shape_t(shape.size(), 0);
        }
        coalesce_dims(shape, strides);
        contiguous = shape.size() <= 1;
        for (std::size_t k = 0; contiguous && k < strides.size(); ++k) {
            const bool is_scalar = k > 0 && !inputs[k - 1].is_array();
            const dtype t = k == 0 ? v.out : v.in[k - 1];
            contiguous = is_scalar || shape.empty() || strides[k][0] == static_cast<std::int64_t>(itemsize(t));
        }
    }
    v.ndim = contiguous ? 0 : static_cast<int>(shape.size());
    v.index64 = n > std::numeric_limits<std::int32_t>::max();
    v.inner = 0;
    bool strided_aligned = false;
    // Stride classes specialise the device loop (and its emulation); cpu and parallel
    // loops step through runs with the strides they are given, so they share one variant.
    if (!contiguous && (m_target == target::cuda)) {
        std::vector<const void*>& pointers = scratch.pointers;
        std::vector<dtype>& types = scratch.types;
        pointers.assign(1, out_view.data);
        types.assign(1, v.out);
        for (std::size_t k = 0; k < inputs.size(); ++k) {
            pointers.push_back(inputs[k].is_array() ? views[k].data : nullptr);
            types.push_back(v.in[k]);
        }
        const inner_stride_plan inner = plan_inner_strides(pointers, types, strides, v.scalars);
        v.inner = inner.classes;
        strided_aligned = inner.aligned;
    }

    const int vec = vector_width(v.out, v.in);
    bool aligned = contiguous && vec > 1;
    auto check_alignment = [&](const void* p, dtype t) {
        aligned = aligned && reinterpret_cast<std::uintptr_t>(p) % (itemsize(t) * vec) == 0;
    };
    check_alignment(out_view.data, v.out);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].is_array()) check_alignment(views[k].data, v.in[k]);
    }

    const elementwise_kernel& kern = kernel(v, host);
    elementwise_params params(n, aligned || strided_aligned, contiguous ? shape_t{n} : shape);
    params.add(out_view.data, nullptr, contiguous ? shape_t{static_cast<long long>(itemsize(v.out))} : strides[0]);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (inputs[k].is_array()) {
            params.add(views[k].data, nullptr,
                       contiguous ? shape_t{static_cast<long long>(itemsize(v.in[k]))} : strides[k + 1]);
        } else {
            params.add(nullptr, values[k].bytes, {});
        }
    }
    launch_elementwise(kern, params, n, host, m_target == target::parallel, aligned, !contiguous, s);
    return pending;
}

}  // namespace nu
