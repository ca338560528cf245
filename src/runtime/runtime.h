// src/runtime/runtime.h: process-wide choice of backend, and streams
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.h"

namespace nu {

// True when NUMBACUDA_UFUNC_ENABLE_CUDASIM=1: the cuda target runs on the host backend.
bool emulation_requested();

// The backend every device operation goes through, chosen once per process. Throws
// cuda_support_error (naming NUMBACUDA_UFUNC_ENABLE_CUDASIM) when there is no GPU and
// emulation is off.
backend& active_backend();
// Never throws: false when active_backend() would.
bool backend_available();
// True when the cuda target runs on the host backend (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1).
// Never throws: targets cpu and parallel ask it in processes that have no GPU.
bool cuda_target_emulated();
// The host backend that targets cpu and parallel always run on, in any process: with no
// GPU and no emulation, or beside the CUDA backend that serves the cuda target.
backend& host_backend();
// The backend a target runs on: host targets the host backend, cuda the active one.
inline backend& backend_for(bool host_target) { return host_target ? host_backend() : active_backend(); }
// Why there is no GPU backend ("" when there is one or emulation is on).
std::string unavailable_reason();

// A stream as the user holds it. Arrays and staged copies keep a shared_ptr to the state,
// so a closed stream is detected instead of being used after destruction.
struct stream_state {
    stream_handle handle = nullptr;
    bool owned = false;   // created by us: destroyed by close() or at the last reference
    bool closed = false;
    bool external = false;  // from external_stream(): another library's stream
    bool blocking = true;   // orders with the legacy default stream (not CU_STREAM_NON_BLOCKING)
    ~stream_state();
};
using stream_ref = std::shared_ptr<stream_state>;

stream_ref new_stream();
// The legacy default stream (handle 0), shared by everyone.
const stream_ref& default_stream();
// CUDA's named default streams (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD), shared by everyone.
const stream_ref& legacy_default_stream();
const stream_ref& per_thread_default_stream();
// A stream created by another library (CuPy, Numba, PyTorch); never destroyed by us.
stream_ref external_stream(stream_handle handle);
// The handle to enqueue on; throws value_error when the stream was closed.
stream_handle live_handle(const stream_ref& s, const char* api);

// Engine state kept per stream (the reduction scratch of src/launch/reduce_launch.cpp) is
// released by this hook, which the CUDA backend calls with a stream's handle just before
// destroying the stream (a later stream may get the same handle). One hook, set once.
using stream_destroy_hook = void (*)(stream_handle) noexcept;
void set_stream_destroy_hook(stream_destroy_hook hook);
void notify_stream_destroy(stream_handle s) noexcept;

}  // namespace nu
