// src/runtime/runtime.cpp: backend selection and stream lifetimes
#include "runtime/runtime.h"

#include <atomic>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "runtime/blocking.h"
#include "runtime/errors.h"

namespace nu {
namespace {

// Deliberately never destroyed: arrays that Python frees during interpreter shutdown may
// outlive C++ static destructors, and the driver reclaims everything at process exit.
backend* g_backend = nullptr;
std::string g_reason;

void choose_backend() {
    if (emulation_requested()) {
        g_backend = make_host_backend().release();
        return;
    }
    g_backend = make_cuda_backend(&g_reason).release();
}

backend* backend_or_null() {
    static std::once_flag once;
    std::call_once(once, choose_backend);
    return g_backend;
}

}  // namespace

bool emulation_requested() {
    const char* value = std::getenv("NUMBACUDA_UFUNC_ENABLE_CUDASIM");
    return value != nullptr && std::strcmp(value, "") != 0 && std::strcmp(value, "0") != 0;
}

backend& active_backend() {
    backend* b = backend_or_null();
    if (b == nullptr) {
        throw cuda_support_error("no CUDA GPU is usable: " + g_reason +
                                 ". Set NUMBACUDA_UFUNC_ENABLE_CUDASIM=1 to run the cuda "
                                 "target on the host backend instead.");
    }
    return *b;
}

bool backend_available() { return backend_or_null() != nullptr; }

bool cuda_target_emulated() {
    const backend* b = backend_or_null();
    return b != nullptr && b->emulated();
}

backend& host_backend() {
    // Under emulation the active backend is already a host backend: one pool, not two.
    static backend* const b = cuda_target_emulated() ? &active_backend() : make_host_backend().release();
    return *b;
}

std::string unavailable_reason() {
    backend_or_null();
    return g_reason;
}

namespace {
std::atomic<stream_destroy_hook> g_stream_destroy_hook{nullptr};
}  // namespace

void set_stream_destroy_hook(stream_destroy_hook hook) { g_stream_destroy_hook.store(hook); }

void notify_stream_destroy(stream_handle s) noexcept {
    if (stream_destroy_hook hook = g_stream_destroy_hook.load()) hook(s);
}

stream_state::~stream_state() {
    if (owned && !closed && handle != nullptr && g_backend != nullptr) g_backend->destroy_stream(handle);
}

namespace {
blocking_hooks g_hooks;
}  // namespace

void set_blocking_hooks(blocking_hooks hooks) { g_hooks = hooks; }
const blocking_hooks& current_blocking_hooks() { return g_hooks; }

stream_ref new_stream() {
    auto s = std::make_shared<stream_state>();
    s->handle = active_backend().create_stream();
    s->owned = true;
    return s;
}

const stream_ref& default_stream() {
    static const stream_ref* s = new stream_ref(std::make_shared<stream_state>());
    return *s;
}

namespace {
const stream_ref& named_stream(std::uintptr_t handle) {
    auto s = std::make_shared<stream_state>();
    s->handle = reinterpret_cast<stream_handle>(handle);
    return *new stream_ref(std::move(s));  // never destroyed, like default_stream()
}
}  // namespace

const stream_ref& legacy_default_stream() {
    static const stream_ref& s = named_stream(0x1);  // CU_STREAM_LEGACY
    return s;
}

const stream_ref& per_thread_default_stream() {
    static const stream_ref& s = named_stream(0x2);  // CU_STREAM_PER_THREAD
    return s;
}

stream_ref external_stream(stream_handle handle) {
    if (handle == nullptr) return default_stream();
    auto s = std::make_shared<stream_state>();
    s->handle = handle;
    s->external = true;
    s->blocking = active_backend().stream_is_blocking(handle);
    return s;
}

stream_handle live_handle(const stream_ref& s, const char* api) {
    if (!s) return nullptr;
    if (s->closed) {
        throw value_error(std::string(api) + "(): the stream was closed; create a new one "
                          "with cuda.stream()");
    }
    return s->handle;
}

}  // namespace nu
