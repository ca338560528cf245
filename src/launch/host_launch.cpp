// src/launch/host_launch.cpp: host kernels over a persistent thread pool, in interruptible chunks
#include "launch/host_launch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/interrupt.h"

namespace nu {
namespace {

// Items [next, n) still to hand out; every chunk taken is run to its end, so after a stop
// [0, min(next, n)) is done and a resumed launch starts there.
struct host_job {
    host_entry entry;
    const void* params;
    long long n, chunk;
    std::atomic<long long> next;
    std::atomic<bool> stop{false};
    std::mutex mutex;
    bool failed = false;
    long long report[4] = {};

    void work() {
        while (!stop.load(std::memory_order_relaxed)) {
            if (interrupt_pending()) {  // before taking a chunk, so taken chunks all finish
                stop.store(true);
                break;
            }
            const long long begin = next.fetch_add(chunk);
            if (begin >= n) break;
            long long r[4];
            if (entry(params, begin, std::min(n, begin + chunk), r)) {
                std::lock_guard<std::mutex> lock(mutex);
                if (!failed || r[3] < report[3]) std::copy(r, r + 4, report);
                failed = true;
                stop.store(true);
            }
        }
    }
};

// cores - 1 workers that sleep between jobs; the calling thread is the last worker. One
// job at a time: a second caller meanwhile runs its job on its own thread.
class host_pool {
public:
    explicit host_pool(unsigned workers) {
        for (unsigned t = 0; t < workers; ++t) m_threads.emplace_back([this] { serve(); });
    }
    // Never destroyed (workers may outlive static destruction); leaked after fork().
    unsigned threads() const { return unsigned(m_threads.size()) + 1; }

    // False when busy with another caller's job.
    bool run(host_job& job) {
        std::unique_lock<std::mutex> submit(m_submit, std::try_to_lock);
        if (!submit.owns_lock()) return false;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_job = &job;
            m_busy = unsigned(m_threads.size());
            ++m_generation;
        }
        m_wake.notify_all();
        job.work();
        std::unique_lock<std::mutex> lock(m_mutex);
        m_done.wait(lock, [&] { return m_busy == 0; });
        m_job = nullptr;
        return true;
    }

private:
    void serve() {
        unsigned long long seen = 0;
        for (;;) {
            host_job* job;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_wake.wait(lock, [&] { return m_generation != seen; });
                seen = m_generation;
                job = m_job;
            }
            job->work();
            std::lock_guard<std::mutex> lock(m_mutex);
            if (--m_busy == 0) m_done.notify_one();
        }
    }

    std::vector<std::thread> m_threads;
    std::mutex m_submit, m_mutex;
    std::condition_variable m_wake, m_done;
    host_job* m_job = nullptr;
    unsigned m_busy = 0;
    unsigned long long m_generation = 0;
};

host_pool* pool() {
    static std::mutex mutex;
    static host_pool* instance = nullptr;
    static pid_t owner = 0;
    std::lock_guard<std::mutex> lock(mutex);
    // A forked child has none of the parent's threads: it gets its own pool.
    if (!instance || owner != ::getpid()) {
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        instance = new host_pool(cores - 1);
        owner = ::getpid();
    }
    return instance;
}

}  // namespace

bool run_host_items(host_entry entry, const void* params, long long n, bool parallel,
                    long long grain, long long* report) {
    static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    grain = std::max(1LL, grain);
    if (n <= grain) {  // one chunk: nothing to split or to interrupt
        long long r[4];
        if (!entry(params, 0, n, r)) return false;
        std::copy(r, r + 4, report);
        return true;
    }
    const bool split = parallel && cores > 1 && n >= 4 * grain;
    long long begin = 0;
    if (!split) {
        // A short launch never touches SIGINT: installing and restoring the handler (four
        // sigaction calls, a few us) was measurable on a 10^5-element a*b+c. Chunks run without the
        // Ctrl-C scope for the first 2 ms; a launch still running then becomes interruptible.
        const auto t0 = std::chrono::steady_clock::now();
        while (begin < n) {
            const long long end = std::min(n, begin + grain);
            long long r[4];
            if (entry(params, begin, end, r)) {
                std::copy(r, r + 4, report);
                return true;
            }
            begin = end;
            if (std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(2)) break;
        }
        if (begin >= n) return false;
    }
    interrupt_scope ctrl_c;
    for (;;) {
        host_job job;
        job.entry = entry;
        job.params = params;
        job.n = n;
        // Parallel: about four chunks per thread, so a slow thread does not hold the rest up.
        job.chunk = split ? std::max(grain, (n - begin + 4 * cores - 1) / (4 * cores)) : grain;
        job.next.store(begin);
        if (!split || !pool()->run(job)) job.work();
        if (job.failed) {
            std::copy(job.report, job.report + 4, report);
            return true;
        }
        begin = std::min(n, job.next.load());
        if (interrupt_pending() && interrupt_should_stop())
            throw interrupted("host launch interrupted");
        if (begin >= n) return false;
    }
}

}  // namespace nu
