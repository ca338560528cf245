// src/dispatch/reduce.cpp: reductions: axes -> coalesced rows and folds, staging, kernels
#include "dispatch/reduce.h"

#include <algorithm>

#include "dispatch/broadcast.h"
#include "dispatch/device_cast.h"
#include "runtime/errors.h"

namespace nu {

namespace {

constexpr std::size_t k_max_dims = 8;  // reduce.cuh's k_reduce_dims

// The folded dimensions keep their order (it is the fold's order, which matters for a
// non-commutative operator): drop size-1 dimensions, merge neighbours walked contiguously.
void coalesce_in_order(shape_t& shape, shape_t& strides) {
    shape_t s, st;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 1) continue;
        if (!s.empty() && st.back() == shape[d] * strides[d]) {
            s.back() *= shape[d];
            st.back() = strides[d];
        } else {
            s.push_back(shape[d]);
            st.push_back(strides[d]);
        }
    }
    shape = std::move(s);
    strides = std::move(st);
}

int multiprocessors(backend& b) {
    // Queried once per device: calls must not pay for driver attribute queries.
    static int cached[64] = {};
    const int dev = b.current_device();
    if (dev >= 64) return b.device(dev).multiprocessors;
    if (cached[dev] == 0) cached[dev] = b.device(dev).multiprocessors;
    return cached[dev];
}

}  // namespace

reducer::reducer(std::string name, bool host_target, bool fastmath)
    : m_name(std::move(name)), m_host_target(host_target), m_fastmath(fastmath) {}

void reducer::add_loop(reduce_loop l) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_loops.push_back(std::move(l));
}

int reducer::find_loop(dtype t) const {
    for (std::size_t i = 0; i < m_loops.size(); ++i)
        if (m_loops[i].type == t) return static_cast<int>(i);
    return -1;
}

std::string reducer::source(int loop, dtype in, dtype out, std::string* entry, unsigned kernels) const {
    const reduce_loop& l = m_loops.at(static_cast<std::size_t>(loop));
    // "<f4" -> "f4": typecodes that are valid in a C identifier (dtype_char(bool) is '?').
    const std::string name = l.function + "_r" + typestr(in).substr(1) + typestr(out).substr(1);
    if (entry) *entry = name;
    return reduce_source(l.function, l.source, l.type, in, out, name, kernels);
}

unsigned reducer::built_kernels(int loop, dtype in, dtype out) {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_kernels.find(kernel_key{loop, in, out});
    return it == m_kernels.end() ? 0u : it->second->built();
}

const reduce_kernel_set& reducer::kernels(const kernel_key& key, bool host) {
    // The set builds each kernel at its first use (src/launch/reduce_launch.h), in the
    // call's blocking section: the GIL is released around every engine call that may build.
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_kernels.find(key);
    if (it != m_kernels.end()) return *it->second;
    const reduce_loop& l = m_loops.at(static_cast<std::size_t>(key.loop));
    std::string entry;
    source(key.loop, key.in, key.out, &entry);
    auto k = std::make_unique<reduce_kernel_set>(l.function, l.source, l.type, key.in, key.out, entry, host,
                                                 m_fastmath, host && !m_host_target);
    return *m_kernels.emplace(key, std::move(k)).first->second;
}

void reducer::execute(int loop, const reduce_operand& in, const std::vector<int>& axes,
                      const unsigned char* init, const reduce_operand& out,
                      const stream_ref& stream, const char* api) {
    NU_ASSERT(loop >= 0 && loop < static_cast<int>(m_loops.size()));
    const array_view& v = in.view;
    std::vector<bool> folded(v.shape.size(), false);
    for (int a : axes) {
        NU_ASSERT(a >= 0 && a < v.ndim());
        folded[a] = true;
    }
    reduce_layout l;
    {
        std::lock_guard<std::mutex> lock(m_mutex);  // another thread may be adding a loop
        l.acc = m_loops[loop].type;
    }
    l.in_type = v.type;
    l.init = init;
    shape_t row_shape;
    for (int d = 0; d < v.ndim(); ++d) {
        if (folded[d]) continue;
        row_shape.push_back(v.shape[d]);
    }
    NU_ASSERT(row_shape == out.view.shape);
    std::int64_t rows = 1, len = 1;
    for (int d = 0; d < v.ndim(); ++d) (folded[d] ? len : rows) *= v.shape[d];
    if (rows == 0) return;
    if (len == 0 && init == nullptr) {
        throw value_error(std::string(api) + "(): zero-size reduction without an initial value");
    }

    const bool host = m_host_target || cuda_target_emulated();
    backend& b = backend_for(host);  // cpu/parallel reducers run in any process
    // A closed stream is refused on every backend, so emulation catches the mistake too.
    const stream_handle live = live_handle(stream, api);
    const stream_handle s = host ? nullptr : live;
    // A GPU reads host inputs from a device copy and writes host outputs through one; the
    // temporaries' frees are ordered on the stream after the kernels.
    array_view src = v, dst = out.view;
    device_array staged_in, staged_out;
    if (!host && in.on_host) {
        staged_in = device_array::empty(v.shape, v.type, 'C', std::nullopt, stream, api);
        staged_in.copy_from_host(v, stream);
        src = staged_in.view();
    }
    // A full reduction's host result comes back through the stream's mapped scratch slot
    // (src/launch/reduce_launch.h): no result array to allocate, no copy to queue.
    const bool mapped_result = !host && out.on_host && rows == 1;
    if (!host && out.on_host && !mapped_result) {
        staged_out = device_array::empty(dst.shape, dst.type, 'C', std::nullopt, stream, api);
        dst = staged_out.view();
    }

    std::vector<shape_t> row_strides(2);
    operand_copies copies;  // a C-ordered copy of an input whose strides do not merge
    const shape_t all_rows = row_shape;
    for (bool copied = false;; copied = true) {
        row_shape = all_rows;
        row_strides.assign(2, shape_t{});
        l.red_shape.clear();
        l.red_strides.clear();
        std::size_t j = 0;
        for (int d = 0; d < src.ndim(); ++d) {
            if (folded[d]) {
                l.red_shape.push_back(src.shape[d]);
                l.red_strides.push_back(src.strides[d]);
            } else {
                row_strides[0].push_back(src.strides[d]);
                row_strides[1].push_back(dst.strides[j++]);
            }
        }
        coalesce_dims(row_shape, row_strides);
        coalesce_in_order(l.red_shape, l.red_strides);
        if (row_shape.size() <= k_max_dims && l.red_shape.size() <= k_max_dims) break;
        if (copied || src.is_c_contiguous()) {
            throw value_error(std::string(api) + "(): the array's layout needs more than " +
                              std::to_string(k_max_dims) + " dimensions after merging contiguous ones (got shape " +
                              shape_string(v.shape) + ")");
        }
        src = copy_of(src, host, stream, copies);
    }
    l.row_shape = row_shape;
    l.in_row_strides = row_strides[0];
    l.out_row_strides = row_strides[1];
    l.in = src.data;
    l.out = dst.data;

    const reduce_kernel_set& k = kernels(kernel_key{loop, src.type, dst.type}, host);
    l.out_type = dst.type;
    launch_reduce(k, l, multiprocessors(b), b, s, mapped_result ? out.view.data : nullptr);
    if (staged_out.buffer()) staged_out.copy_to_host(out.view, stream);
}

}  // namespace nu
