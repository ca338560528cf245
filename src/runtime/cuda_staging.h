// src/runtime/cuda_staging.h: rings of pinned buffers for copies between pageable memory and a device
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/driver_api.h"

namespace nu {

// A copy between pageable host memory and the device goes through page-locked buffers: the
// CPU copies one piece into a buffer (host_copy_streaming, every core, streaming stores)
// while the DMA of the pieces before it runs. Each (context, stream, direction) has its own
// ring of k_staging_depth buffers, so the two streams of a pipelined ufunc call and the two
// directions never wait for each other's buffers: the CPU waits only for the DMA that last
// used the buffer it fills next, k_staging_depth pieces back on the same stream.
//
// Every use of a buffer starts after the CPU has seen its previous DMA complete (an event
// per buffer; a device-to-host copy waits for all its pieces before it returns), so a ring
// can also serve another stream of its context: past k_rings_per_context rings per
// direction, the ring used least recently is handed to the new stream. Buffers are
// allocated on first use and kept; the steady state allocates nothing.
class staging_rings {
public:
    explicit staging_rings(const driver_api& api) : m_api(api) {}
    staging_rings(const staging_rings&) = delete;
    staging_rings& operator=(const staging_rings&) = delete;

    // Queues the copy on `stream` and returns once `src` may be reused (the last pieces may
    // still be in DMA from the ring). The context must be current.
    void to_device(CUcontext ctx, CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream);

    // Returns with the bytes in `dst`. The context must be current.
    void to_host(CUcontext ctx, void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream);

    // Bytes per piece: k_staging_piece, or NUMBACUDA_UFUNC_STAGING_PIECE_MIB (1 to 64) to
    // compare piece sizes on a GPU without a rebuild.
    static std::size_t piece_bytes();

    // The CPU's copy of one piece into or out of a ring: host_copy_streaming, or
    // host_copy with NUMBACUDA_UFUNC_STAGING_STORES=cached.
    static void copy_piece(void* dst, const void* src, std::size_t bytes);

private:
    struct slot {
        void* host = nullptr;
        CUevent done = nullptr;  // recorded after the last DMA that used `host`
    };
    struct ring {
        CUcontext context = nullptr;
        CUstream stream = nullptr;
        bool to_device = false;
        unsigned long long last_use = 0;
        std::mutex mutex;  // held for a whole copy
        std::vector<slot> slots;
        std::size_t next = 0;  // the slot the next piece uses (the one used longest ago)
    };

    ring& ring_for(CUcontext ctx, CUstream stream, bool to_device);
    slot* ready_slot(ring& r, std::size_t index);
    void drain(ring& r) noexcept;

    const driver_api& m_api;
    std::mutex m_mutex;  // the list of rings and their keys
    std::vector<std::unique_ptr<ring>> m_rings;
    unsigned long long m_uses = 0;
};

constexpr std::size_t k_staging_piece = std::size_t{4} << 20;
constexpr std::size_t k_staging_depth = 4;
constexpr std::size_t k_rings_per_context = 4;

}  // namespace nu
