// src/bindings/memory_api.cpp: events, mapped/managed memory, EMM plugins, IPC, profiler
#include "bindings/common.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime/memory_hooks.h"

namespace nu::bindings {
namespace {

// ---------------------------------------------------------------- events

struct event_state {
    void* handle = nullptr;
    bool timing = true;
    ~event_state() {
        if (handle != nullptr && nu::backend_available()) nu::active_backend().event_destroy(handle);
    }
};

struct py_event {
    std::shared_ptr<event_state> state;
};

float elapsed_between(const py_event& start, py::handle end, const char* api) {
    if (!py::isinstance<py_event>(end)) {
        throw nu::type_error(std::string(api) + "(): the other event must be an Event from "
                             "cuda.event() (got " + repr_of(end) + ")");
    }
    const py_event& e = end.cast<const py_event&>();
    release_gil nogil;
    return nu::active_backend().event_elapsed_ms(start.state->handle, e.state->handle);
}

// ---------------------------------------------------------------- stream callbacks

// Callbacks of Stream.add_callback. The driver's host function only queues the call: a
// worker thread runs it with the GIL. Were the driver thread to wait for the GIL, a
// thread holding it while synchronizing the stream (a small copy to the host, say) would
// wait for the callback forever.
struct stream_callback {
    py::object stream, fn, arg;
};

class callback_runner {
public:
    static callback_runner& instance() {
        static callback_runner* runner = new callback_runner();  // never destroyed: see run()
        return *runner;
    }

    // Called by the driver (any thread, no GIL).
    static void enqueue(void* data) {
        callback_runner& r = instance();
        {
            std::lock_guard<std::mutex> lock(r.m_mutex);
            r.m_queue.push_back(static_cast<stream_callback*>(data));
        }
        r.m_ready.notify_one();
    }

    void start() {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_started) return;
        m_started = true;
        // Detached: it blocks on the queue with no Python state, so it needs no joining
        // at exit, and never touches Python once the interpreter has finalized.
        std::thread([this] { run(); }).detach();
    }

private:
    void run() {
        for (;;) {
            stream_callback* cb = nullptr;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_ready.wait(lock, [this] { return !m_queue.empty(); });
                cb = m_queue.front();
                m_queue.pop_front();
            }
            if (!Py_IsInitialized()) return;
            py::gil_scoped_acquire gil;
            std::unique_ptr<stream_callback> owned(cb);
            try {
                owned->fn(owned->stream, 0, owned->arg);
            } catch (py::error_already_set& e) {
                e.discard_as_unraisable("Stream.add_callback() callback");
            }
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<stream_callback*> m_queue;
    bool m_started = false;
};

// ---------------------------------------------------------------- EMM plugins

// Calls the plugin's memalloc(size) (Numba's BaseCUDAMemoryManager interface) and keeps
// the returned MemoryPointer as the owner of the memory.
class python_allocator final : public nu::external_allocator {
public:
    explicit python_allocator(py::object memalloc) : m_memalloc(std::move(memalloc)) {}
    ~python_allocator() override {
        if (!Py_IsInitialized()) {  // at exit: the interpreter already released everything
            m_memalloc.release();
            return;
        }
        py::gil_scoped_acquire gil;
        m_memalloc = py::object();
    }

    void* allocate(std::size_t bytes, nu::stream_handle, std::shared_ptr<void>* owner) override {
        py::gil_scoped_acquire gil;
        py::object mem;
        try {
            mem = m_memalloc(bytes);
        } catch (py::error_already_set& e) {
            const std::string what = e.what();
            if (e.matches(PyExc_MemoryError)) {
                throw nu::out_of_memory("memory manager: memalloc(" + std::to_string(bytes) +
                                        ") failed: " + what);
            }
            throw nu::value_error("memory manager: memalloc(" + std::to_string(bytes) + ") failed: " + what);
        }
        py::object ptr = py::getattr(mem, "device_pointer", py::none());
        if (py::hasattr(ptr, "value")) ptr = ptr.attr("value");  // ctypes c_void_p, as Numba's
        if (ptr.is_none() || !is_integer(ptr)) {
            throw nu::type_error("memory manager: memalloc() must return a MemoryPointer whose "
                                 "device_pointer is a pointer (got " + repr_of(mem) + ")");
        }
        py::object size = py::getattr(mem, "size", py::none());
        if (!size.is_none() && size.cast<std::size_t>() < bytes) {
            throw nu::value_error("memory manager: memalloc(" + std::to_string(bytes) + ") returned only " +
                                  repr_of(size) + " bytes");
        }
        auto* held = new py::object(std::move(mem));
        *owner = std::shared_ptr<void>(held, [](void* p) {
            if (!Py_IsInitialized()) return;  // freed at exit with the process
            py::gil_scoped_acquire gil;
            delete static_cast<py::object*>(p);
        });
        return reinterpret_cast<void*>(ptr.cast<std::uintptr_t>());
    }

private:
    py::object m_memalloc;
};

// Device memory straight from the backend's pool, bypassing any plugin: what our own
// managers (and test plugins) hand out.
// With `shareable`, from cuMemAlloc instead (CUDA IPC cannot share pool memory).
struct raw_allocation {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    bool shareable = false;
    raw_allocation(std::size_t n, bool share) : bytes(n), shareable(share) {
        if (n == 0) return;
        nu::backend& b = nu::active_backend();
        ptr = shareable ? b.allocate_shareable(n) : b.allocate(n, nullptr);
    }
    ~raw_allocation() { free(); }
    void free() {
        if (ptr == nullptr) return;
        nu::backend& b = nu::active_backend();
        if (shareable) {
            b.release_shareable(ptr, bytes);
        } else {
            b.release(ptr, bytes, nullptr);
        }
        ptr = nullptr;
    }
};

// ---------------------------------------------------------------- host memory

// A NumPy array of layout `l` over the allocation at `base`, freed by `release`.
struct host_layout;
py::array host_array_over(void* base, const host_layout& l, void (*release)(void*));

struct host_layout {
    nu::shape_t shape;
    nu::shape_t strides;
    nu::dtype type;
    std::size_t bytes = 0;
    std::int64_t offset = 0;  // of element 0 from the allocation's start (negative strides)
};

host_layout layout_of(py::handle shape, py::handle dtype, py::object strides, const std::string& order,
                      const char* api) {
    host_layout l;
    l.shape = as_shape(shape, api);
    l.type = as_dtype(dtype, api);
    nu::checked_size(l.shape, api);
    if (strides.is_none()) {
        l.strides = nu::contiguous_strides(l.shape, nu::itemsize(l.type), as_order(order, api));
    } else {
        l.strides = as_shape(strides, api, "strides");
        if (l.strides.size() != l.shape.size()) {
            throw nu::value_error(std::string(api) + "(): strides must have one entry per dimension (got " +
                                  shape_repr(l.strides) + " for shape " + shape_repr(l.shape) + ")");
        }
    }
    nu::array_view v;
    v.type = l.type;
    v.shape = l.shape;
    v.strides = l.strides;
    std::int64_t lo = 0, hi = 0;
    v.byte_extent(&lo, &hi);
    l.bytes = static_cast<std::size_t>(hi - lo);
    l.offset = -lo;
    return l;
}

py::array host_array_over(void* base, const host_layout& l, void (*release)(void*)) {
    py::capsule owner(base, release);
    std::vector<py::ssize_t> shp(l.shape.begin(), l.shape.end());
    std::vector<py::ssize_t> st(l.strides.begin(), l.strides.end());
    return py::array(to_numpy_dtype(l.type), shp, st, static_cast<char*>(base) + l.offset, owner);
}

}  // namespace

void bind_memory_api(py::module_& m) {
    // ---- events
    py::class_<py_event>(m, "Event", "A CUDA event (Numba's cuda.event()).")
        .def_property_readonly("handle", [](const py_event& e) { return reinterpret_cast<std::uintptr_t>(e.state->handle); })
        .def_property_readonly("timing", [](const py_event& e) { return e.state->timing; })
        .def("record", [](const py_event& e, py::handle stream) {
            nu::active_backend().event_record(e.state->handle, nu::live_handle(as_stream(stream, "Event.record"), "Event.record"));
        }, py::arg("stream") = 0, "Record the event on `stream`: it completes after the work queued there so far.")
        .def("synchronize", [](const py_event& e) {
            release_gil nogil;
            nu::active_backend().event_synchronize(e.state->handle);
        }, "Wait on the host until the event completes.")
        .def("wait", [](const py_event& e, py::handle stream) {
            nu::active_backend().stream_wait_event(nu::live_handle(as_stream(stream, "Event.wait"), "Event.wait"),
                                                   e.state->handle);
        }, py::arg("stream") = 0, "Make later work on `stream` wait for the event.")
        .def("query", [](const py_event& e) { return nu::active_backend().event_query(e.state->handle); },
             "True when the event has completed.")
        .def("elapsed_time", [](const py_event& e, py::handle other) {
            return elapsed_between(e, other, "Event.elapsed_time");
        }, py::arg("evtend"), "Milliseconds from this event to `evtend` (both recorded, timing=True).")
        .def("__repr__", [](const py_event& e) {
            return std::string("<Event") + (e.state->timing ? "" : " timing=False") + ">";
        });
    m.def("event", [](py::handle timing) {
        if (!PyBool_Check(timing.ptr())) {
            throw nu::type_error("event(): timing must be True or False (got " + repr_of(timing) + ")");
        }
        auto s = std::make_shared<event_state>();
        s->timing = timing.ptr() == Py_True;
        s->handle = nu::active_backend().event_create(s->timing);
        return py_event{s};
    }, py::arg("timing") = true);
    m.def("event_elapsed_time", [](py::handle start, py::handle end) {
        if (!py::isinstance<py_event>(start)) {
            throw nu::type_error("event_elapsed_time(): evtstart must be an Event from cuda.event() (got " +
                                 repr_of(start) + ")");
        }
        return elapsed_between(start.cast<const py_event&>(), end, "event_elapsed_time");
    }, py::arg("evtstart"), py::arg("evtend"));

    // ---- streams
    m.def("legacy_default_stream", [] { return py_stream{nu::legacy_default_stream()}; });
    m.def("per_thread_default_stream", [] { return py_stream{nu::per_thread_default_stream()}; });
    m.def("stream_query", [](const py_stream& s) {
        return nu::active_backend().query_stream(nu::live_handle(s.ref, "Stream.query"));
    });
    m.def("stream_add_callback", [](const py_stream& s, py::function fn, py::object arg) {
        // fn(stream, status, arg) as Numba calls it (status 0: success), on a worker thread
        // once the work queued so far on the stream is done.
        const nu::stream_handle h = nu::live_handle(s.ref, "Stream.add_callback");
        callback_runner::instance().start();
        auto* cb = new stream_callback{py::cast(s), std::move(fn), std::move(arg)};
        try {
            nu::active_backend().launch_host_callback(h, &callback_runner::enqueue, cb);
        } catch (...) {
            delete cb;
            throw;
        }
    });

    // ---- mapped, managed and registered host memory
    m.def("mapped_array", [](py::handle shape, py::handle dtype, py::object strides, const std::string& order,
                             bool portable, bool wc) {
        const host_layout l = layout_of(shape, dtype, strides, order, "mapped_array");
        void* base = nu::active_backend().allocate_mapped(l.bytes, portable, wc);
        return host_array_over(base, l, [](void* p) { nu::active_backend().release_mapped(p); });
    }, py::arg("shape"), py::arg("dtype"), py::arg("strides"), py::arg("order"), py::arg("portable"),
       py::arg("wc"));
    m.def("managed_array", [](py::handle shape, py::handle dtype, py::object strides, const std::string& order) {
        const host_layout l = layout_of(shape, dtype, strides, order, "managed_array");
        void* base = nu::active_backend().allocate_managed(l.bytes);
        return host_array_over(base, l, [](void* p) { nu::active_backend().release_managed(p); });
    }, py::arg("shape"), py::arg("dtype"), py::arg("strides"), py::arg("order"));
    m.def("register_host", [](std::uintptr_t ptr, std::size_t bytes, bool mapped, bool portable) {
        return nu::active_backend().register_host(reinterpret_cast<void*>(ptr), bytes, mapped, portable);
    });
    m.def("unregister_host", [](std::uintptr_t ptr) { nu::active_backend().unregister_host(reinterpret_cast<void*>(ptr)); });
    m.def("mapped_device_pointer", [](std::uintptr_t ptr) {
        return reinterpret_cast<std::uintptr_t>(nu::active_backend().mapped_device_pointer(reinterpret_cast<void*>(ptr)));
    });
    m.def("address_range", [](std::uintptr_t ptr) -> py::object {
        const void* base = nullptr;
        std::size_t bytes = 0;
        if (!nu::active_backend().address_range(reinterpret_cast<void*>(ptr), &base, &bytes)) return py::none();
        return py::make_tuple(reinterpret_cast<std::uintptr_t>(base), bytes);
    });

    // ---- transfer observers: cudadrv.driver.cuMemcpyHtoD / cuMemcpyDtoH set from Python
    m.def("set_transfer_observers", [](py::object to_device, py::object to_host) {
        // Leaked on purpose: the observer may run until exit, after interpreter teardown
        // has begun; objects held here are released when replaced.
        static py::object* observers = new py::object[2];
        observers[0] = std::move(to_device);
        observers[1] = std::move(to_host);
        if (observers[0].is_none() && observers[1].is_none()) {
            nu::set_transfer_observer(nullptr);
            return;
        }
        nu::set_transfer_observer([](bool to_dev, void* dst, const void* src, std::size_t bytes) {
            py::gil_scoped_acquire gil;
            const py::object& fn = observers[to_dev ? 0 : 1];
            if (fn.is_none()) return;
            fn(reinterpret_cast<std::uintptr_t>(dst), reinterpret_cast<std::uintptr_t>(src), bytes);
        });
    }, py::arg("to_device"), py::arg("to_host"));

    // ---- deferred cleanup and EMM plugins
    m.def("begin_deferred_cleanup", &nu::begin_deferred_cleanup);
    m.def("end_deferred_cleanup", &nu::end_deferred_cleanup);
    m.def("cleanup_deferred", &nu::cleanup_deferred);
    m.def("pending_deallocations", &nu::pending_deallocations);
    m.def("flush_deallocations", &nu::flush_deallocations);
    m.def("set_external_allocator", [](py::object memalloc) {
        if (memalloc.is_none()) {
            nu::set_external_allocator(nullptr);
            return;
        }
        nu::set_external_allocator(std::make_shared<python_allocator>(std::move(memalloc)));
    });
    py::class_<raw_allocation>(m, "RawDeviceAllocation", "Device memory from our pool, for memory managers.")
        .def(py::init<std::size_t, bool>(), py::arg("size"), py::arg("shareable") = false)
        .def_property_readonly("ptr", [](const raw_allocation& a) { return reinterpret_cast<std::uintptr_t>(a.ptr); })
        .def_property_readonly("size", [](const raw_allocation& a) { return a.bytes; })
        .def("free", &raw_allocation::free);

    // ---- IPC and the profiler
    m.def("ipc_handle", [](std::uintptr_t base) {
        return py::bytes(nu::active_backend().ipc_handle(reinterpret_cast<void*>(base)));
    });
    m.def("open_ipc_handle", [](py::bytes handle) {
        return reinterpret_cast<std::uintptr_t>(nu::active_backend().open_ipc_handle(std::string(handle)));
    });
    m.def("close_ipc_handle", [](std::uintptr_t ptr) { nu::active_backend().close_ipc_handle(reinterpret_cast<void*>(ptr)); });
    m.def("profiler", [](bool start) { nu::active_backend().profiler(start); });
}

}  // namespace nu::bindings
