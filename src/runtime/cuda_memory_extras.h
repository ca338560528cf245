// src/runtime/cuda_memory_extras.h: events, mapped/managed memory, IPC on the driver API
#pragma once

#include <cstddef>
#include <string>

#include "runtime/backend.h"
#include "runtime/driver_api.h"

// The CUDA backend's half of the host API beyond arrays and launches (issue 17). Each
// function assumes the caller made its context current; cuda_backend.cpp forwards to them.
namespace nu::cuda_extras {

void* create_event(const driver_api& api, bool timing);
void destroy_event(const driver_api& api, void* event) noexcept;
void record_event(const driver_api& api, void* event, stream_handle s);
bool query_event(const driver_api& api, void* event);
void synchronize_event(const driver_api& api, void* event);
void stream_wait_event(const driver_api& api, stream_handle s, void* event);
float event_elapsed_ms(const driver_api& api, void* start, void* end);
bool query_stream(const driver_api& api, stream_handle s);
void launch_host_callback(const driver_api& api, stream_handle s, void (*fn)(void*), void* data);

void* allocate_mapped(const driver_api& api, std::size_t bytes, bool portable, bool write_combined);
void* allocate_managed(const driver_api& api, std::size_t bytes);
void release_managed(const driver_api& api, void* ptr) noexcept;
bool register_host(const driver_api& api, void* ptr, std::size_t bytes, bool mapped, bool portable);
void unregister_host(const driver_api& api, void* ptr) noexcept;
void* mapped_device_pointer(const driver_api& api, void* host);
bool address_range(const driver_api& api, const void* ptr, const void** base, std::size_t* bytes);

std::string ipc_handle(const driver_api& api, void* base);
void* open_ipc_handle(const driver_api& api, const std::string& handle);
void close_ipc_handle(const driver_api& api, void* ptr) noexcept;

void profiler(const driver_api& api, bool start);

}  // namespace nu::cuda_extras
