// src/bindings/runtime.cpp: devices, streams and memory statistics
#include "bindings/common.h"
#include "runtime/blocking.h"
#include "runtime/host_copy.h"
#include "runtime/pinned_results.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>


namespace nu::bindings {

namespace {

bool interpreter_finalizing() {  // an atomic of the runtime: no GIL needed
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

}  // namespace

void reenter_interpreter(void* state) {
    if (interpreter_finalizing()) {
        for (;;) ::pause();
    }
    PyEval_RestoreThread(static_cast<PyThreadState*>(state));
}

void bind_runtime(py::module_& m) {
    // For tests of the exit path: waits with the GIL released, the engine's two ways (a
    // blocking_section, as compiles do; release_gil, as launches and copies do), until the
    // interpreter starts finalizing or `seconds` pass, so that it comes back during the
    // finalization.
    m.def("_wait_without_gil", [](double seconds, bool engine_section) {
        auto wait = [seconds] {
            const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
            while (std::chrono::steady_clock::now() < end) {
                if (interpreter_finalizing()) return;
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
        };
        if (engine_section) {
            nu::blocking_section section;
            wait();
        } else {
            release_gil nogil;
            wait();
        }
    }, py::arg("seconds"), py::arg("engine_section"));
    // For the tests and the benchmark of the staging copy (benchmarks/bench_staging.py):
    // copies the bytes of buffer `src` into buffer `dst` (same size, both contiguous) the
    // way `how` names: "memcpy" (one thread), "pool" (host_copy: memcpy over the thread
    // pool), "streaming" (host_copy_streaming: the staging copy), "streaming_single"
    // (copy_streaming_stores on this thread alone).
    m.def("_host_copy", [](py::buffer dst, py::buffer src, const std::string& how) {
        const py::buffer_info d = dst.request(/*writable=*/true), s = src.request();
        const auto bytes = static_cast<std::size_t>(d.size * d.itemsize);
        if (static_cast<std::size_t>(s.size * s.itemsize) != bytes) {
            throw py::value_error("_host_copy(): dst and src differ in size (got " + std::to_string(bytes) +
                                  " and " + std::to_string(s.size * s.itemsize) + " bytes)");
        }
        auto contiguous = [](const py::buffer_info& b) {
            py::ssize_t step = b.itemsize;
            for (py::ssize_t k = b.ndim; k-- > 0;) {
                if (b.shape[k] != 1 && b.strides[k] != step) return false;
                step *= b.shape[k];
            }
            return true;
        };
        if (!contiguous(d) || !contiguous(s)) throw py::value_error("_host_copy(): buffers must be C-contiguous");
        if (nu::ranges_overlap(d.ptr, s.ptr, bytes)) throw py::value_error("_host_copy(): dst and src overlap");
        void (*copy)(void*, const void*, std::size_t) = nullptr;
        if (how == "memcpy") {
            copy = [](void* a, const void* b, std::size_t n) { std::memcpy(a, b, n); };
        } else if (how == "pool") {
            copy = nu::host_copy;
        } else if (how == "streaming") {
            copy = nu::host_copy_streaming;
        } else if (how == "streaming_single") {
            copy = [](void* a, const void* b, std::size_t n) { nu::copy_streaming_stores(a, b, n); };
        } else {
            throw py::value_error("_host_copy(): how must be 'memcpy', 'pool', 'streaming' or "
                                  "'streaming_single' (got '" + how + "')");
        }
        release_gil nogil;
        copy(d.ptr, s.ptr, bytes);
    }, py::arg("dst"), py::arg("src"), py::arg("how"));
    m.def("_host_copy_piece", &nu::host_copy_piece,
          "Bytes one pool thread copies at a time in a parallel copy of this many bytes.");
    m.def("is_available", &nu::backend_available, "True when a GPU or emulation can be used");
    m.def("unavailable_reason", &nu::unavailable_reason);
    m.def("emulation_enabled", &nu::emulation_requested);
    m.def("driver_version", [] { return nu::active_backend().driver_version(); });
    m.def("device_count", [] { return nu::backend_available() ? nu::active_backend().device_count() : 0; });
    m.def("current_device", [] { return nu::active_backend().current_device(); });
    m.def("select_device", [](int i) { nu::active_backend().select_device(i); });
    m.def("current_device_cc", [] {
        nu::backend& b = nu::active_backend();
        const nu::device_info info = b.device(b.current_device());
        return py::make_tuple(info.cc_major, info.cc_minor);
    }, "(major, minor) of the current device; the host backend reports (9, 0).");
    m.def("synchronize", [] {
        {
            release_gil nogil;
            nu::active_backend().synchronize();
        }
        report_release_errors();
    });
    m.def("device_info", [](int i) {
        const nu::device_info info = nu::active_backend().device(i);
        py::dict d;
        d["id"] = info.ordinal;
        d["name"] = info.name;
        d["compute_capability"] = py::make_tuple(info.cc_major, info.cc_minor);
        d["total_memory"] = info.total_memory;
        d["multiprocessors"] = info.multiprocessors;
        d["max_threads_per_block"] = info.max_threads_per_block;
        d["warp_size"] = info.warp_size;
        return d;
    });
    m.def("device_attribute", [](int ordinal, int attribute) {
        return nu::active_backend().device_attribute(ordinal, attribute);
    }, py::arg("ordinal"), py::arg("attribute"),
       "cuDeviceGetAttribute for a CU_DEVICE_ATTRIBUTE_* value; -1 on the host backend.");
    m.def("memory_stats", [] {
        const nu::memory_stats s = nu::active_backend().memory();
        report_release_errors();
        py::dict d;
        d["in_use_bytes"] = s.in_use;
        d["reserved_bytes"] = s.reserved;
        d["allocations"] = s.allocations;
        d["free_bytes"] = s.free;
        d["total_bytes"] = s.total;
        return d;
    });
    // The device pool's cache and the idle page-locked result blocks.
    m.def("trim_pool", [] {
        nu::active_backend().trim_pool();
        nu::trim_pinned_results();
    });
    m.def("pinned_results", [] {
        const nu::pinned_results_usage u = nu::pinned_results_in_use();
        return py::make_tuple(u.idle, u.total);
    }, "(idle, total) bytes of page-locked NumPy result blocks.");

    py::class_<py_stream>(m, "Stream", "A CUDA stream; pass it as stream= to order work on it.")
        .def_property_readonly("handle", [](const py_stream& s) {
            return reinterpret_cast<std::uintptr_t>(s.ref->handle);
        })
        .def_property_readonly("closed", [](const py_stream& s) { return s.ref->closed; })
        .def_property_readonly("external", [](const py_stream& s) { return s.ref->external; },
                               "True for a stream made by cuda.external_stream().")
        .def("synchronize", [](const py_stream& s) {
            const nu::stream_handle h = nu::live_handle(s.ref, "Stream.synchronize");
            release_gil nogil;
            nu::active_backend().synchronize_stream(h);
        })
        .def("close", [](py_stream& s) {
            // The default streams are shared by everyone and never destroyed: closing one
            // is harmless (it would otherwise break every later stream=0 call).
            if (!s.ref->owned && !s.ref->external) return;
            // Work already queued still completes; later use raises ValueError.
            if (s.ref->owned && !s.ref->closed) {
                nu::active_backend().destroy_stream(s.ref->handle);
            }
            s.ref->closed = true;
        }, "Destroy the stream now; using it afterwards raises ValueError.")
        .def("auto_synchronize", [](py::object self) {
            nu::live_handle(self.cast<const py_stream&>().ref, "Stream.auto_synchronize");
            return self;
        }, "Context manager that synchronizes the stream on exit (Numba's API).")
        .def("__enter__", [](py::object self) {
            nu::live_handle(self.cast<const py_stream&>().ref, "Stream.auto_synchronize");
            return self;
        })
        .def("__exit__", [](const py_stream& s, py::args exc) {
            // Closed inside the block: raise, unless that would hide the block's own error.
            if (s.ref->closed && !exc[0].is_none()) return;
            const nu::stream_handle h = nu::live_handle(s.ref, "Stream.auto_synchronize");
            release_gil nogil;
            nu::active_backend().synchronize_stream(h);
        })
        .def("__int__", [](const py_stream& s) { return reinterpret_cast<std::uintptr_t>(s.ref->handle); })
        .def("__eq__", [](const py_stream& a, py::handle b) {
            return py::isinstance<py_stream>(b) && b.cast<const py_stream&>().ref->handle == a.ref->handle;
        })
        .def("__hash__", [](const py_stream& s) { return reinterpret_cast<std::uintptr_t>(s.ref->handle); })
        .def("__repr__", [](const py_stream& s) {
            if (s.ref->handle == nullptr) return std::string("<Stream default>");
            return "<Stream 0x" + [&] {
                char buf[32];
                std::snprintf(buf, sizeof(buf), "%lx", reinterpret_cast<unsigned long>(s.ref->handle));
                return std::string(buf);
            }() + (s.ref->closed ? " closed>" : ">");
        });
    m.def("stream", [] { return py_stream{nu::new_stream()}; });
    m.def("default_stream", [] { return py_stream{nu::default_stream()}; });
    m.def("external_stream", [](py::handle obj) { return py_stream{as_stream(obj, "external_stream")}; });
}


}  // namespace nu::bindings
