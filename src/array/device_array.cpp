// src/array/device_array.cpp: allocation, views (indexing, reshape) and host transfers
#include "array/device_array.h"

#include <algorithm>
#include <string>

#include "runtime/errors.h"
#include "runtime/memory_hooks.h"

namespace nu {
namespace {

std::string shape_str(const shape_t& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        s += std::to_string(shape[i]);
        if (shape.size() == 1 || i + 1 < shape.size()) s += shape.size() == 1 ? "," : ", ";
    }
    return s + ")";
}

char* byte_ptr(void* p) { return static_cast<char*>(p); }

// Python's slice.indices(): clamp start/stop to the axis, return the element count.
std::int64_t adjust_slice(const index_item& item, std::int64_t length, std::int64_t* start,
                          std::int64_t* step) {
    *step = item.step.value_or(1);
    if (*step == 0) throw value_error("DeviceNDArray.__getitem__(): slice step cannot be zero");
    const bool down = *step < 0;
    auto clamp = [&](std::optional<std::int64_t> v, std::int64_t fallback) {
        if (!v) return fallback;
        std::int64_t x = *v;
        if (x < 0) {
            x += length;
            if (x < 0) x = down ? -1 : 0;
        } else if (x >= length) {
            x = down ? length - 1 : length;
        }
        return x;
    };
    *start = clamp(item.start, down ? length - 1 : 0);
    const std::int64_t stop = clamp(item.stop, down ? -1 : length);
    if (down) return stop < *start ? (*start - stop - 1) / (-*step) + 1 : 0;
    return *start < stop ? (stop - *start - 1) / *step + 1 : 0;
}

}  // namespace

device_buffer::device_buffer(std::size_t bytes, stream_ref stream)
    : m_bytes(bytes), m_owned(true), m_stream(std::move(stream)) {
    // Zero-byte arrays own no memory: their data pointer is null, as CAI allows.
    backend& b = active_backend();
    m_device = b.current_device();
    if (bytes == 0) return;
    const stream_handle s = live_handle(m_stream, "allocate");
    if (auto plugin = current_external_allocator()) {
        // An EMM plugin's memory: the plugin frees it when m_keepalive lets go.
        m_ptr = plugin->allocate(bytes, s, &m_keepalive);
        m_owned = false;
        return;
    }
    m_ptr = b.allocate(bytes, s);
}

device_buffer::device_buffer(void* ptr, std::size_t bytes, std::shared_ptr<void> keepalive)
    : m_ptr(ptr), m_bytes(bytes), m_owned(false), m_keepalive(std::move(keepalive)) {
    if (ptr != nullptr) m_device = active_backend().device_of(ptr);
}

device_buffer::~device_buffer() {
    backend* b = m_use_events.empty() && (!m_owned || m_ptr == nullptr) ? nullptr : &active_backend();
    const stream_handle s = free_handle();
    for (const auto& [foreign, event] : m_use_events) {
        if (m_owned && m_ptr != nullptr) {
            try {
                b->wait_event(s, event);  // the free (below) waits for that stream's last use
            } catch (...) {
                // The event cannot be waited on (driver shutting down): wait on the host
                // rather than let the memory be reused under a running kernel.
                try {
                    b->synchronize();
                } catch (...) {
                }
            }
        }
        b->destroy_event(event);
    }
    if (!m_owned || m_ptr == nullptr) return;
    release_device_memory(m_ptr, m_bytes, s, m_stream);  // or queued by defer_cleanup()
}

void device_buffer::note_use(const stream_ref& s, bool write) {
    const stream_handle h = s ? s->handle : nullptr;
    if (h == alloc_handle()) {
        if (!write || !m_foreign_use.load(std::memory_order_relaxed)) return;  // the common case
        std::lock_guard<std::mutex> lock(m_use_mutex);
        m_last_writer.reset();
        return;
    }
    backend& b = active_backend();
    std::lock_guard<std::mutex> lock(m_use_mutex);
    m_foreign_use.store(true, std::memory_order_relaxed);
    if (write) m_last_writer = s;
    for (auto& [foreign, event] : m_use_events) {
        if (foreign == h) {
            event = b.record_event(h, event);
            return;
        }
    }
    void* event = b.record_event(h, nullptr);
    if (event != nullptr) m_use_events.emplace_back(h, event);
}

stream_ref device_buffer::last_writer() const {
    if (!m_foreign_use.load(std::memory_order_relaxed)) return nullptr;
    std::lock_guard<std::mutex> lock(m_use_mutex);
    return m_last_writer;
}

device_array device_array::empty(const shape_t& shape, dtype type, char order,
                                 const std::optional<shape_t>& strides, stream_ref stream,
                                 const char* api) {
    const std::int64_t count = checked_size(shape, api);
    array_view view;
    view.type = type;
    view.shape = shape;
    if (strides) {
        if (strides->size() != shape.size()) {
            throw value_error(std::string(api) + "(): strides must have one entry per dimension (got " +
                              std::to_string(strides->size()) + " strides for shape " +
                              shape_str(shape) + ")");
        }
        view.strides = *strides;
    } else {
        if (order != 'C' && order != 'F') {
            throw value_error(std::string(api) + "(): order must be 'C' or 'F' (got '" +
                              std::string(1, order) + "')");
        }
        view.strides = contiguous_strides(shape, itemsize(type), order);
    }
    // Bytes must fit too (NumPy: "array is too big"); strides may make the span larger.
    std::int64_t span = 0;
    bool too_big = __builtin_mul_overflow(count, static_cast<std::int64_t>(itemsize(type)), &span);
    for (std::size_t d = 0; !too_big && d < shape.size() && count > 0; ++d) {
        std::int64_t reach = 0;
        too_big = __builtin_mul_overflow(shape[d] - 1, view.strides[d] < 0 ? -view.strides[d] : view.strides[d], &reach) ||
                  __builtin_add_overflow(span, reach, &span);
    }
    if (too_big) {
        throw value_error(std::string(api) + "(): array is too big (" + std::to_string(count) +
                          " elements of " + dtype_name(type) + " do not fit in memory addresses)");
    }
    std::int64_t lo = 0, hi = 0;
    view.byte_extent(&lo, &hi);
    auto buffer = std::make_shared<device_buffer>(static_cast<std::size_t>(hi - lo), stream);
    view.data = buffer->data() ? byte_ptr(buffer->data()) - lo : nullptr;
    return device_array(std::move(buffer), std::move(view), std::move(stream));
}

device_array device_array::index(const std::vector<index_item>& items) const {
    int consumed = 0, ellipses = 0;
    for (const index_item& it : items) {
        if (it.what == index_item::kind::integer || it.what == index_item::kind::slice) ++consumed;
        if (it.what == index_item::kind::ellipsis) ++ellipses;
    }
    if (ellipses > 1) {
        throw index_error("DeviceNDArray.__getitem__(): an index can only have a single ellipsis ('...')");
    }
    const int ndim = m_view.ndim();
    if (consumed > ndim) {
        throw index_error("DeviceNDArray.__getitem__(): too many indices: the array is " +
                          std::to_string(ndim) + "-dimensional, but " + std::to_string(consumed) +
                          " were indexed");
    }
    array_view out;
    out.type = m_view.type;
    std::int64_t offset = 0;
    int dim = 0;
    auto take_full = [&](int count) {
        for (int k = 0; k < count; ++k, ++dim) {
            out.shape.push_back(m_view.shape[dim]);
            out.strides.push_back(m_view.strides[dim]);
        }
    };
    for (const index_item& it : items) {
        switch (it.what) {
            case index_item::kind::ellipsis:
                take_full(ndim - consumed);
                break;
            case index_item::kind::newaxis:
                out.shape.push_back(1);
                out.strides.push_back(0);
                break;
            case index_item::kind::integer: {
                const std::int64_t length = m_view.shape[dim];
                const std::int64_t i = it.value < 0 ? it.value + length : it.value;
                if (i < 0 || i >= length) {
                    throw index_error("DeviceNDArray.__getitem__(): index " + std::to_string(it.value) +
                                      " is out of bounds for axis " + std::to_string(dim) +
                                      " with size " + std::to_string(length));
                }
                offset += i * m_view.strides[dim];
                ++dim;
                break;
            }
            case index_item::kind::slice: {
                std::int64_t start = 0, step = 1;
                const std::int64_t n = adjust_slice(it, m_view.shape[dim], &start, &step);
                if (n > 0) offset += start * m_view.strides[dim];
                out.shape.push_back(n);
                out.strides.push_back(m_view.strides[dim] * step);
                ++dim;
                break;
            }
        }
    }
    take_full(ndim - dim);
    out.data = m_view.data ? byte_ptr(m_view.data) + offset : nullptr;
    return device_array(m_buffer, std::move(out), m_stream);
}

device_array device_array::reshape(const shape_t& requested, char order) const {
    if (order != 'C' && order != 'F') {
        throw value_error("DeviceNDArray.reshape(): order must be 'C' or 'F' (got '" +
                          std::string(1, order) + "')");
    }
    shape_t shape = requested;
    const std::int64_t total = m_view.size();
    int unknown = -1;
    std::int64_t known = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1 && unknown < 0) {
            unknown = static_cast<int>(i);
        } else if (shape[i] < 0) {
            throw value_error("DeviceNDArray.reshape(): can only specify one unknown dimension "
                              "and no other negative one (got " + shape_str(requested) + ")");
        } else {
            known *= shape[i];
        }
    }
    if (unknown >= 0 && known != 0 && total % known == 0) shape[unknown] = total / known;
    if ((unknown >= 0 && (known == 0 || total % known != 0)) || checked_size(shape, "reshape") != total) {
        throw value_error("DeviceNDArray.reshape(): cannot reshape array of size " +
                          std::to_string(total) + " into shape " + shape_str(requested));
    }
    const bool viewable = order == 'C' ? m_view.is_c_contiguous() : m_view.is_f_contiguous();
    if (viewable) {
        array_view out = m_view;
        out.shape = shape;
        out.strides = contiguous_strides(shape, itemsize(m_view.type), order);
        return device_array(m_buffer, std::move(out), m_stream);
    }
    // Not expressible as a view: copy into a contiguous array first, as NumPy does.
    device_array packed = empty(m_view.shape, m_view.type, order, std::nullopt, m_stream, "reshape");
    packed.copy_from_device(*this, m_stream);
    return packed.reshape(shape, order);
}

device_array device_array::ravel(char order) const {
    return reshape(shape_t{m_view.size()}, order);
}

device_array device_array::transpose(const std::vector<int>& axes) const {
    const int ndim = m_view.ndim();
    std::vector<int> perm = axes;
    if (perm.empty()) {
        for (int i = ndim - 1; i >= 0; --i) perm.push_back(i);
    }
    if (static_cast<int>(perm.size()) != ndim) {
        throw value_error("DeviceNDArray.transpose(): axes don't match array (got " +
                          std::to_string(perm.size()) + " axes for " + std::to_string(ndim) +
                          " dimensions)");
    }
    std::vector<bool> seen(static_cast<std::size_t>(ndim), false);
    array_view out = m_view;
    for (int i = 0; i < ndim; ++i) {
        int a = perm[i] < 0 ? perm[i] + ndim : perm[i];
        if (a < 0 || a >= ndim || seen[a]) {
            throw value_error("DeviceNDArray.transpose(): axes must be a permutation of 0.." +
                              std::to_string(ndim - 1) + " (got axis " + std::to_string(perm[i]) + ")");
        }
        seen[a] = true;
        out.shape[i] = m_view.shape[a];
        out.strides[i] = m_view.strides[a];
    }
    return device_array(m_buffer, std::move(out), m_stream);
}

namespace {

strided_device_copy g_strided_copy = nullptr;

// A contiguous layout for staging `host`'s data: its own order when it has one.
char staging_order(const array_view& host) {
    return host.is_f_contiguous() && !host.is_c_contiguous() ? 'F' : 'C';
}

}  // namespace

void set_strided_device_copy(strided_device_copy copy) { g_strided_copy = copy; }

// Non-contiguous device views go through a contiguous device temporary and the strided
// copy kernel; without it, or for dtypes it has no loop for (records, datetimes, S/U: ids
// past the builtin dtypes, which indexed past its loops and crashed), through the byte
// range they span, laid out exactly as on the device and (un)packed on the host with
// copy_strided.
void device_array::copy_from_host(const array_view& host, const stream_ref& stream) const {
    NU_ASSERT(host.shape == m_view.shape && host.type == m_view.type);
    if (m_view.size() == 0) return;
    backend& b = active_backend();
    const stream_handle s = live_handle(stream, "copy_to_device");
    const std::size_t nbytes = m_view.nbytes();
    if (m_view.is_contiguous() && host.strides == m_view.strides) {
        notify_transfer(true, m_view.data, host.data, nbytes);
        b.copy_to_device(m_view.data, host.data, nbytes, s);
        return;
    }
    if (g_strided_copy != nullptr && !m_view.is_contiguous() && !is_record(m_view.type)) {
        const device_array packed = empty(m_view.shape, m_view.type, staging_order(host), std::nullopt,
                                          stream, "copy_to_device");
        packed.copy_from_host(host, stream);
        g_strided_copy(*this, packed, stream);
        return;
    }
    std::int64_t lo = 0, hi = 0;
    m_view.byte_extent(&lo, &hi);
    std::vector<char> staging(static_cast<std::size_t>(hi - lo));
    if (!m_view.is_contiguous()) {  // keep the bytes between the view's elements intact
        notify_transfer(false, staging.data(), byte_ptr(m_view.data) + lo, staging.size());
        b.copy_to_host(staging.data(), byte_ptr(m_view.data) + lo, staging.size(), s);
    }
    array_view packed = m_view;
    packed.data = staging.data() - lo;
    copy_strided(packed, host);
    notify_transfer(true, byte_ptr(m_view.data) + lo, staging.data(), staging.size());
    b.copy_to_device(byte_ptr(m_view.data) + lo, staging.data(), staging.size(), s);
}

void device_array::copy_to_host(const array_view& host, const stream_ref& stream) const {
    NU_ASSERT(host.shape == m_view.shape && host.type == m_view.type);
    if (m_view.size() == 0) return;
    backend& b = active_backend();
    const stream_handle s = live_handle(stream, "copy_to_host");
    if (m_view.is_contiguous() && host.strides == m_view.strides) {
        notify_transfer(false, host.data, m_view.data, m_view.nbytes());
        b.copy_to_host(host.data, m_view.data, m_view.nbytes(), s);
        return;
    }
    if (g_strided_copy != nullptr && !m_view.is_contiguous() && !is_record(m_view.type)) {
        const device_array packed = empty(m_view.shape, m_view.type, staging_order(host), std::nullopt,
                                          stream, "copy_to_host");
        g_strided_copy(packed, *this, stream);
        packed.copy_to_host(host, stream);
        return;
    }
    std::int64_t lo = 0, hi = 0;
    m_view.byte_extent(&lo, &hi);
    std::vector<char> staging(static_cast<std::size_t>(hi - lo));
    notify_transfer(false, staging.data(), byte_ptr(m_view.data) + lo, staging.size());
    b.copy_to_host(staging.data(), byte_ptr(m_view.data) + lo, staging.size(), s);
    array_view packed = m_view;
    packed.data = staging.data() - lo;
    copy_strided(host, packed);
}

void device_array::copy_from_device(const device_array& src, const stream_ref& stream) const {
    NU_ASSERT(src.m_view.shape == m_view.shape && src.m_view.type == m_view.type);
    if (m_view.size() == 0) return;
    if (m_view.is_contiguous() && src.m_view.strides == m_view.strides) {
        active_backend().copy_device_to_device(m_view.data, src.m_view.data, m_view.nbytes(),
                                               live_handle(stream, "copy_to_device"));
        return;
    }
    if (g_strided_copy != nullptr && !is_record(m_view.type)) {
        g_strided_copy(*this, src, stream);
        return;
    }
    array_view host = src.m_view;
    std::vector<char> staging(m_view.nbytes());
    host.data = staging.data();
    host.strides = contiguous_strides(host.shape, itemsize(host.type), 'C');
    src.copy_to_host(host, stream);
    copy_from_host(host, stream);
}

}  // namespace nu
