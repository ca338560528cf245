// src/runtime/host_backend.cpp: the emulated device: host memory, work done in order
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/backend.h"
#include "runtime/errors.h"

namespace nu {
namespace {

// Device pointers are aligned like cudaMalloc's, so vectorized kernels behave the same.
constexpr std::size_t k_alignment = 256;

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
        m_live.emplace(reinterpret_cast<std::uintptr_t>(ptr), bytes);
        m_in_use += bytes;
        return ptr;
    }

    void release(void* ptr, std::size_t bytes, stream_handle) noexcept override {
        if (ptr == nullptr) return;
        std::lock_guard<std::mutex> lock(m_mutex);
        m_live.erase(reinterpret_cast<std::uintptr_t>(ptr));
        m_in_use -= bytes;
        std::free(ptr);
    }

    memory_stats memory() const override {
        std::lock_guard<std::mutex> lock(m_mutex);
        memory_stats stats;
        stats.in_use = m_in_use;
        stats.reserved = m_in_use;
        stats.allocations = m_live.size();
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
        std::memmove(dst, src, bytes);
    }
    void copy_to_host(void* dst, const void* src, std::size_t bytes, stream_handle) override {
        std::memmove(dst, src, bytes);
    }
    void copy_device_to_device(void* dst, const void* src, std::size_t bytes,
                               stream_handle) override {
        std::memmove(dst, src, bytes);
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
    void* module_global(void*, const std::string&, std::size_t*) override {
        throw cuda_support_error("the host backend has no CUDA modules");
    }

    void* allocate_pinned(std::size_t bytes) override {
        void* ptr = std::aligned_alloc(k_alignment, round_up(bytes ? bytes : 1));
        if (ptr == nullptr) throw out_of_memory("pinned_array(): out of host memory");
        return ptr;
    }
    void release_pinned(void* ptr) noexcept override { std::free(ptr); }

private:
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
    std::size_t m_in_use = 0;
    std::uintptr_t m_next_stream = 0;
};

}  // namespace

std::unique_ptr<backend> make_host_backend() { return std::make_unique<host_backend>(); }

}  // namespace nu
