// src/array/device_array.h: device memory with NumPy-style views (DeviceNDArray's core)
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "array/array_view.h"
#include "runtime/runtime.h"

namespace nu {

// One device allocation, or borrowed device memory kept alive by `keepalive` (CuPy,
// PyTorch and other __cuda_array_interface__ producers).
class device_buffer {
public:
    // Allocates from the active backend's pool, ordered on `stream`.
    device_buffer(std::size_t bytes, stream_ref stream);
    // Borrows memory owned elsewhere.
    device_buffer(void* ptr, std::size_t bytes, std::shared_ptr<void> keepalive);
    ~device_buffer();
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;

    void* data() const { return m_ptr; }
    std::size_t bytes() const { return m_bytes; }
    bool owned() const { return m_owned; }
    int device() const { return m_device; }  // ordinal, -1 when unknown

    // Work on this memory was queued on `s` (a call's stream=, perhaps CuPy's or PyTorch's).
    // Uses on a stream other than the allocating one are remembered as an event per stream:
    // the free waits for every one of them (the memory is not reused while a kernel there
    // still reads it), and `write` uses make `s` the stream the interface export names.
    // Events, not streams, are kept, so a foreign stream may be destroyed first.
    void note_use(const stream_ref& s, bool write);
    // The stream of the last write noted on a stream other than the allocating one; null
    // when the last noted write was on the allocating stream (or none was noted).
    stream_ref last_writer() const;

private:
    stream_handle alloc_handle() const { return m_stream && !m_stream->closed ? m_stream->handle : nullptr; }
    // The stream the free is ordered on: the allocating one, or the legacy default stream
    // where that one may be gone (closed; or another library's blocking stream, which its
    // owner may destroy first: the legacy stream still waits for its queued work).
    stream_handle free_handle() const {
        return m_stream && m_stream->external && m_stream->blocking ? nullptr : alloc_handle();
    }

    void* m_ptr = nullptr;
    std::size_t m_bytes = 0;
    bool m_owned = false;
    int m_device = -1;
    stream_ref m_stream;             // frees are ordered on the allocating stream
    std::shared_ptr<void> m_keepalive;
    mutable std::mutex m_use_mutex;  // guards the two below: calls may come from threads
    std::vector<std::pair<stream_handle, void*>> m_use_events;  // foreign stream -> event
    stream_ref m_last_writer;
    std::atomic<bool> m_foreign_use{false};  // fast path: nothing noted off the allocating stream
};

// One index of a subscript: an integer, a slice, np.newaxis or Ellipsis.
struct index_item {
    enum class kind { integer, slice, newaxis, ellipsis } what = kind::integer;
    std::int64_t value = 0;                      // integer
    std::optional<std::int64_t> start, stop, step;  // slice
};

class device_array {
public:
    device_array() = default;
    device_array(std::shared_ptr<device_buffer> buffer, array_view view, stream_ref stream)
        : m_buffer(std::move(buffer)), m_view(std::move(view)), m_stream(std::move(stream)) {}

    // A new uninitialised array in C or F order, or with explicit byte strides.
    static device_array empty(const shape_t& shape, dtype type, char order,
                              const std::optional<shape_t>& strides, stream_ref stream,
                              const char* api);

    const array_view& view() const { return m_view; }
    const std::shared_ptr<device_buffer>& buffer() const { return m_buffer; }
    const stream_ref& stream() const { return m_stream; }

    device_array index(const std::vector<index_item>& items) const;
    device_array reshape(const shape_t& shape, char order) const;
    device_array ravel(char order) const;
    device_array transpose(const std::vector<int>& axes) const;

    // Copies between this array and host memory (`host` must have the same shape and
    // dtype; callers check and name the API in their errors). Any layout on either side.
    void copy_from_host(const array_view& host, const stream_ref& stream) const;
    void copy_to_host(const array_view& host, const stream_ref& stream) const;
    void copy_from_device(const device_array& src, const stream_ref& stream) const;

private:
    std::shared_ptr<device_buffer> m_buffer;
    array_view m_view;  // m_view.data points into m_buffer
    stream_ref m_stream;
};

// Copies between device views of any strides without a host round trip. The dispatch
// layer registers its elementwise kernel here (module init); until then, and when it is
// missing, non-contiguous views move through the bytes they span on the host.
using strided_device_copy = void (*)(const device_array& dst, const device_array& src,
                                     const stream_ref& stream);
void set_strided_device_copy(strided_device_copy copy);

}  // namespace nu
