// src/runtime/host_backend.cpp: the emulated device: host memory, work done in order
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include "runtime/backend.h"
#include "runtime/errors.h"
#include "runtime/host_copy.h"

namespace nu {
namespace {

// Device pointers are aligned like cudaMalloc's, so vectorized kernels behave the same.
constexpr std::size_t k_alignment = 256;
// Marks an IPC handle made by the host backend (the rest: pid, base address).
constexpr char k_ipc_magic[] = "numbacuda_ufunc host ipc";

// Work is done by the time it is queued, so an event is complete when recorded and its
// time is the time of recording.
struct host_event {
    bool timing = false;
    bool recorded = false;
    std::chrono::steady_clock::time_point when;
};

// Host <-> "device" copies: large ones over the thread pool, as the CUDA backend stages
// them; overlapping ranges (views of one buffer) keep memmove.
void copy_between(void* dst, const void* src, std::size_t bytes) {
    if (ranges_overlap(dst, src, bytes)) {
        std::memmove(dst, src, bytes);
    } else {
        host_copy(dst, src, bytes);
    }
}

// Large buffers in 2 MiB pages where the kernel leaves that to madvise: their first
// touch then faults once per 2 MiB, not once per 4 KiB (a 256 MiB buffer's first copy took
// 313 ms in 4 KiB faults on the 2-core development VM). A hint: failure changes nothing.
void advise_huge_pages(void* ptr, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    if (bytes < 2 * huge) return;
    const auto begin = (reinterpret_cast<std::uintptr_t>(ptr) + huge - 1) & ~(huge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(ptr) + bytes) & ~(huge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)ptr;
    (void)bytes;
#endif
}

std::size_t physical_memory() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) * page_size
                                      : std::size_t{1} << 34;
}

class host_backend final : public backend {
public:
    host_backend() : m_total(physical_memory()) {}

    bool emulated() const override { return true; }
    int driver_version() const override { return 0; }
    int device_count() const override { return 1; }

    device_info device(int ordinal) const override {
        check_ordinal(ordinal);
        device_info info;
        info.ordinal = 0;
        info.name = "host backend (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1)";
        info.cc_major = 9;  // kernels are built for the architecture we target most
        info.cc_minor = 0;
        info.total_memory = m_total;
        const unsigned cores = std::thread::hardware_concurrency();
        info.multiprocessors = cores ? static_cast<int>(cores) : 1;
        info.max_threads_per_block = 1024;
        // Shared memory limits of the GPU emulated most (sm_90): kernels that fit here fit there.
        info.shared_per_block = 48 * 1024;
        info.shared_per_block_optin = 227 * 1024;
        return info;
    }

    int current_device() const override { return 0; }
    void select_device(int ordinal) override { check_ordinal(ordinal); }
    void synchronize() override {}

    stream_handle create_stream() override {
        // A distinct non-null token per stream so handles compare like real ones.
        return reinterpret_cast<stream_handle>(++m_next_stream);
    }
    void destroy_stream(stream_handle) noexcept override {}
    void synchronize_stream(stream_handle) override {}
    void wait_for(stream_handle, stream_handle) override {}  // everything runs in order

    void* allocate(std::size_t bytes, stream_handle) override {
        std::lock_guard<std::mutex> lock(m_mutex);
        // The emulated device has the machine's physical memory; refusing beyond it keeps
        // overcommit from turning an impossible request into a later crash.
        if (bytes > m_total - m_in_use) throw_oom(bytes);
        void* ptr = std::aligned_alloc(k_alignment, round_up(bytes ? bytes : 1));
        if (ptr == nullptr) throw_oom(bytes);
        advise_huge_pages(ptr, bytes);
        m_live.emplace(reinterpret_cast<std::uintptr_t>(ptr), bytes);
        m_in_use += bytes;
        ++m_allocations;
        return ptr;
    }

    void release(void* ptr, std::size_t bytes, stream_handle) noexcept override {
        if (ptr == nullptr) return;
        std::lock_guard<std::mutex> lock(m_mutex);
        m_live.erase(reinterpret_cast<std::uintptr_t>(ptr));
        m_in_use -= bytes;
        --m_allocations;
        std::free(ptr);
    }

    memory_stats memory() const override {
        std::lock_guard<std::mutex> lock(m_mutex);
        memory_stats stats;
        stats.in_use = m_in_use;
        stats.reserved = m_in_use;
        stats.allocations = m_allocations;
        stats.total = m_total;
        stats.free = m_total - m_in_use;
        return stats;
    }

    void trim_pool() override {}

    bool is_device_pointer(const void* ptr) const override {
        const auto address = reinterpret_cast<std::uintptr_t>(ptr);
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_live.upper_bound(address);
        if (it == m_live.begin()) return false;
        --it;
        return address < it->first + (it->second ? it->second : 1);
    }

    int device_of(const void*) const override { return 0; }

    void copy_to_device(void* dst, const void* src, std::size_t bytes, stream_handle) override {
        copy_between(dst, src, bytes);
    }
    void copy_to_host(void* dst, const void* src, std::size_t bytes, stream_handle) override {
        copy_between(dst, src, bytes);
    }
    void copy_device_to_device(void* dst, const void* src, std::size_t bytes,
                               stream_handle) override {
        std::memmove(dst, src, bytes);
    }
    void fill32(void* dst, std::uint32_t value, std::size_t words, stream_handle) override {
        auto* p = static_cast<std::uint32_t*>(dst);
        std::fill(p, p + words, value);
    }

    void* load_module(const std::string&) override {
        throw cuda_support_error("the host backend cannot load CUDA modules");
    }
    void* module_function(void*, const std::string& name) override {
        throw cuda_support_error("the host backend cannot load CUDA kernel " + name);
    }
    void launch(void*, unsigned, unsigned, stream_handle, void*) override {
        throw cuda_support_error("the host backend cannot launch CUDA kernels");
    }
    void launch_shaped(void*, const launch_shape&, stream_handle, void*) override {
        throw cuda_support_error("the host backend cannot launch CUDA kernels");
    }
    int function_max_threads(void*) override { return 1024; }
    void set_function_carveout(void*, int) override {}  // no L1/shared split to prefer
    void* module_global(void*, const std::string&, std::size_t*) override {
        throw cuda_support_error("the host backend has no CUDA modules");
    }

    void* allocate_pinned(std::size_t bytes) override {
        void* ptr = std::aligned_alloc(k_alignment, round_up(bytes ? bytes : 1));
        if (ptr == nullptr) throw out_of_memory("pinned_array(): out of host memory");
        return ptr;
    }
    void release_pinned(void* ptr) noexcept override { std::free(ptr); }

    void* event_create(bool timing) override { return new host_event{timing, false, {}}; }
    void event_destroy(void* e) noexcept override { delete static_cast<host_event*>(e); }
    void event_record(void* e, stream_handle) override {
        auto* ev = static_cast<host_event*>(e);
        ev->recorded = true;
        ev->when = std::chrono::steady_clock::now();
    }
    bool event_query(void*) override { return true; }
    void event_synchronize(void*) override {}
    void stream_wait_event(stream_handle, void*) override {}
    float event_elapsed_ms(void* start, void* end) override {
        const auto* a = static_cast<const host_event*>(start);
        const auto* b = static_cast<const host_event*>(end);
        if (!a->timing || !b->timing || !a->recorded || !b->recorded) {
            // What the driver answers (CUDA_ERROR_INVALID_HANDLE), in the same words.
            throw value_error("elapsed_time(): both events must be created with timing=True and "
                              "recorded (CUDA_ERROR_INVALID_HANDLE)");
        }
        return std::chrono::duration<float, std::milli>(b->when - a->when).count();
    }
    bool query_stream(stream_handle) override { return true; }
    void launch_host_callback(stream_handle, void (*fn)(void*), void* data) override { fn(data); }

    // Mapped and managed memory is ordinary host memory that kernels may use: it joins the
    // table of device-visible allocations, so array-interface checks accept it.
    void* allocate_mapped(std::size_t bytes, bool, bool) override { return allocate_visible(bytes, "mapped_array"); }
    void release_mapped(void* ptr) noexcept override { release_visible(ptr); }
    void* allocate_managed(std::size_t bytes) override { return allocate_visible(bytes, "managed_array"); }
    void release_managed(void* ptr) noexcept override { release_visible(ptr); }
    bool register_host(void* ptr, std::size_t bytes, bool mapped, bool) override {
        std::lock_guard<std::mutex> lock(m_mutex);
        const auto address = reinterpret_cast<std::uintptr_t>(ptr);
        if (!m_registered.insert(address).second) return false;  // as CUDA: already registered
        if (mapped) m_live.emplace(address, bytes);
        return true;
    }
    void unregister_host(void* ptr) noexcept override {
        std::lock_guard<std::mutex> lock(m_mutex);
        const auto address = reinterpret_cast<std::uintptr_t>(ptr);
        m_registered.erase(address);
        m_live.erase(address);
    }
    void* mapped_device_pointer(void* host) override { return host; }

    bool address_range(const void* ptr, const void** base, std::size_t* bytes) const override {
        const auto address = reinterpret_cast<std::uintptr_t>(ptr);
        std::lock_guard<std::mutex> lock(m_mutex);
        auto it = m_live.upper_bound(address);
        if (it == m_live.begin()) return false;
        --it;
        if (address >= it->first + (it->second ? it->second : 1)) return false;
        *base = reinterpret_cast<const void*>(it->first);
        *bytes = it->second;
        return true;
    }

    void* allocate_shareable(std::size_t bytes) override { return allocate(bytes, nullptr); }
    void release_shareable(void* ptr, std::size_t bytes) noexcept override { release(ptr, bytes, nullptr); }

    // IPC needs a GPU; within one process the handle opens to the same memory, so code
    // that shares arrays can be tested here.
    std::string ipc_handle(void* base) override {
        std::string h(64, '\0');
        const std::int64_t pid = getpid();
        std::memcpy(&h[0], k_ipc_magic, sizeof(k_ipc_magic));
        std::memcpy(&h[32], &pid, sizeof(pid));
        std::memcpy(&h[40], &base, sizeof(base));
        return h;
    }
    void* open_ipc_handle(const std::string& h) override {
        if (h.size() != 64) {
            throw value_error("open_ipc_array(): an IPC handle has 64 bytes (got " +
                              std::to_string(h.size()) + ")");
        }
        if (std::memcmp(h.data(), k_ipc_magic, sizeof(k_ipc_magic)) != 0) {
            throw value_error("open_ipc_array(): not an IPC handle of the host backend");
        }
        std::int64_t pid = 0;
        void* base = nullptr;
        std::memcpy(&pid, &h[32], sizeof(pid));
        std::memcpy(&base, &h[40], sizeof(base));
        if (pid != getpid()) {
            throw cuda_support_error("open_ipc_array(): sharing device memory between processes "
                                     "needs a real GPU (the host backend cannot)");
        }
        if (!is_device_pointer(base)) {
            throw value_error("open_ipc_array(): the shared allocation no longer exists");
        }
        return base;
    }
    void close_ipc_handle(void*) noexcept override {}
    void profiler(bool) override {}

private:
    void* allocate_visible(std::size_t bytes, const char* api) {
        {
            // As for device memory: never more than the emulated device has free.
            std::lock_guard<std::mutex> lock(m_mutex);
            if (bytes > m_total - m_in_use) {
                throw out_of_memory(std::string(api) + "(): cannot allocate " + std::to_string(bytes) +
                                    " bytes (" + std::to_string(m_total - m_in_use) + " bytes free)");
            }
        }
        void* ptr = std::aligned_alloc(k_alignment, round_up(bytes ? bytes : 1));
        if (ptr == nullptr) {
            throw out_of_memory(std::string(api) + "(): cannot allocate " + std::to_string(bytes) +
                                " bytes of host memory");
        }
        std::lock_guard<std::mutex> lock(m_mutex);
        m_live.emplace(reinterpret_cast<std::uintptr_t>(ptr), bytes);
        return ptr;
    }
    void release_visible(void* ptr) noexcept {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_live.erase(reinterpret_cast<std::uintptr_t>(ptr));
        }
        std::free(ptr);
    }

    static std::size_t round_up(std::size_t n) {
        return (n + k_alignment - 1) / k_alignment * k_alignment;
    }
    static void check_ordinal(int ordinal) {
        if (ordinal != 0) {
            throw value_error("select_device(): the host backend has one device, 0 (got " +
                              std::to_string(ordinal) + ")");
        }
    }
    [[noreturn]] void throw_oom(std::size_t bytes) const {
        throw out_of_memory("out of device memory: cannot allocate " + std::to_string(bytes) +
                            " bytes (" + std::to_string(m_in_use) + " of " +
                            std::to_string(m_total) + " bytes in use on the host backend)");
    }

    const std::size_t m_total;
    mutable std::mutex m_mutex;
    std::map<std::uintptr_t, std::size_t> m_live;  // address -> bytes, for pointer checks
    std::set<std::uintptr_t> m_registered;          // register_host()ed host memory
    std::size_t m_in_use = 0;
    std::size_t m_allocations = 0;  // device allocations (m_live also holds mapped memory)
    std::uintptr_t m_next_stream = 0x10;  // above CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2)
};

}  // namespace

std::unique_ptr<backend> make_host_backend() { return std::make_unique<host_backend>(); }

}  // namespace nu
