// src/runtime/cuda_staging.cpp: rings of pinned buffers for copies between pageable memory and a device
#include "runtime/cuda_staging.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/host_copy.h"

namespace nu {

std::size_t staging_rings::piece_bytes() {
    static const std::size_t bytes = [] {
        const char* env = std::getenv("NUMBACUDA_UFUNC_STAGING_PIECE_MIB");
        const long mib = env != nullptr ? std::atol(env) : 0;
        return mib >= 1 && mib <= 64 ? static_cast<std::size_t>(mib) << 20 : k_staging_piece;
    }();
    return bytes;
}

void staging_rings::copy_piece(void* dst, const void* src, std::size_t bytes) {
    // Streaming stores by default. NUMBACUDA_UFUNC_STAGING_STORES=cached keeps the pieces
    // in the CPU's caches instead, for a GPU machine to compare: a DMA that reads the
    // last-level cache (Intel's DDIO) may prefer a ring the caches hold.
    static const bool cached = [] {
        const char* env = std::getenv("NUMBACUDA_UFUNC_STAGING_STORES");
        return env != nullptr && std::strcmp(env, "cached") == 0;
    }();
    if (cached) {
        host_copy(dst, src, bytes);
    } else {
        host_copy_streaming(dst, src, bytes);
    }
}

staging_rings::ring& staging_rings::ring_for(CUcontext ctx, CUstream stream, bool to_device) {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_uses;
    ring* oldest = nullptr;
    std::size_t same_kind = 0;
    for (const auto& r : m_rings) {
        if (r->context != ctx || r->to_device != to_device) continue;
        if (r->stream == stream) {
            r->last_use = m_uses;
            return *r;
        }
        ++same_kind;
        if (oldest == nullptr || r->last_use < oldest->last_use) oldest = r.get();
    }
    if (same_kind >= k_rings_per_context) {
        // Safe while another thread still copies through it: the copies then take turns
        // on the ring's mutex, and each waits for the buffers' previous DMA.
        oldest->stream = stream;
        oldest->last_use = m_uses;
        return *oldest;
    }
    auto r = std::make_unique<ring>();
    r->context = ctx;
    r->stream = stream;
    r->to_device = to_device;
    r->last_use = m_uses;
    r->slots.resize(k_staging_depth);
    m_rings.push_back(std::move(r));
    return *m_rings.back();
}

// The ring's slot `index` pieces after r.next, its previous DMA complete; nullptr when no
// page-locked memory is left for it (the caller copies that piece without staging).
staging_rings::slot* staging_rings::ready_slot(ring& r, std::size_t index) {
    slot& s = r.slots[(r.next + index) % r.slots.size()];
    if (s.done == nullptr) NU_CU(m_api, cuEventCreate, &s.done, CU_EVENT_DISABLE_TIMING);
    if (s.host == nullptr) {
        const CUresult status = m_api.cuMemHostAlloc(&s.host, piece_bytes(), CU_MEMHOSTALLOC_PORTABLE);
        if (status == CUDA_ERROR_OUT_OF_MEMORY) {
            s.host = nullptr;
            return nullptr;
        }
        check(status, "cuMemHostAlloc");
        return &s;  // never used: nothing to wait for
    }
    NU_CU(m_api, cuEventSynchronize, s.done);
    return &s;
}

// After a failure part-way: a piece may be in DMA without its event recorded. Waiting for
// the stream keeps the next use of the ring from overwriting a buffer still being read.
void staging_rings::drain(ring& r) noexcept { m_api.cuStreamSynchronize(r.stream); }

void staging_rings::to_device(CUcontext ctx, CUdeviceptr dst, const void* src, std::size_t bytes,
                              CUstream stream) {
    ring& r = ring_for(ctx, stream, /*to_device=*/true);
    std::lock_guard<std::mutex> lock(r.mutex);
    r.stream = stream;  // a ring handed to this stream while we waited for its mutex
    const std::size_t piece = piece_bytes();
    const std::size_t pieces = (bytes + piece - 1) / piece;
    try {
        for (std::size_t i = 0; i < pieces; ++i) {
            const std::size_t offset = i * piece;
            const std::size_t n = std::min(piece, bytes - offset);
            const char* from = static_cast<const char*>(src) + offset;
            slot* s = ready_slot(r, i);
            if (s == nullptr) {  // the driver stages pageable memory itself, before returning
                NU_CU(m_api, cuMemcpyHtoDAsync, dst + offset, from, n, stream);
                continue;
            }
            copy_piece(s->host, from, n);
            NU_CU(m_api, cuMemcpyHtoDAsync, dst + offset, s->host, n, stream);
            NU_CU(m_api, cuEventRecord, s->done, stream);
        }
    } catch (...) {
        drain(r);
        throw;
    }
    r.next = (r.next + pieces) % r.slots.size();
}

void staging_rings::to_host(CUcontext ctx, void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream) {
    ring& r = ring_for(ctx, stream, /*to_device=*/false);
    std::lock_guard<std::mutex> lock(r.mutex);
    r.stream = stream;
    const std::size_t piece = piece_bytes();
    const std::size_t pieces = (bytes + piece - 1) / piece;
    const std::size_t depth = k_staging_depth;
    slot* issued[k_staging_depth] = {};  // by i % depth
    bool unstaged = false;
    // Piece i goes into its slot once the CPU has copied piece i - depth out of it; up to
    // `depth` pieces are in DMA while the CPU copies the oldest out.
    auto issue = [&](std::size_t i) {
        const std::size_t offset = i * piece;
        const std::size_t n = std::min(piece, bytes - offset);
        slot* s = ready_slot(r, i);
        issued[i % depth] = s;
        if (s == nullptr) {
            NU_CU(m_api, cuMemcpyDtoHAsync, static_cast<char*>(dst) + offset, src + offset, n, stream);
            unstaged = true;
            return;
        }
        NU_CU(m_api, cuMemcpyDtoHAsync, s->host, src + offset, n, stream);
        NU_CU(m_api, cuEventRecord, s->done, stream);
    };
    try {
        for (std::size_t i = 0; i < std::min(pieces, depth); ++i) issue(i);
        for (std::size_t i = 0; i < pieces; ++i) {
            slot* s = issued[i % depth];
            if (s != nullptr) {
                NU_CU(m_api, cuEventSynchronize, s->done);
                const std::size_t offset = i * piece;
                copy_piece(static_cast<char*>(dst) + offset, s->host, std::min(piece, bytes - offset));
            }
            if (i + depth < pieces) issue(i + depth);
        }
        if (unstaged) NU_CU(m_api, cuStreamSynchronize, stream);
    } catch (...) {
        drain(r);
        throw;
    }
    r.next = (r.next + pieces) % depth;
}

}  // namespace nu
