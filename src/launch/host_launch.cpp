// src/launch/host_launch.cpp: host kernels over a persistent thread pool, in interruptible chunks
#include "launch/host_launch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "runtime/interrupt.h"
#include "runtime/thread_pool.h"

namespace nu {
namespace {

// Items [next, n) still to hand out; every chunk taken is run to its end, so after a stop
// [0, min(next, n)) is done and a resumed launch starts there.
struct host_job final : pool_job {
    host_entry entry;
    const void* params;
    long long n, chunk;
    std::atomic<long long> next;
    std::atomic<bool> stop{false};
    std::mutex mutex;
    bool failed = false;
    bool interruptible = true;
    long long report[4] = {};

    void work() override {
        while (!stop.load(std::memory_order_relaxed)) {
            if (interruptible && interrupt_pending()) {  // before taking a chunk, so taken chunks all finish
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

}  // namespace

bool run_host_items(host_entry entry, const void* params, long long n, bool parallel,
                    long long grain, long long* report) {
    const unsigned cores = pool_threads();
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
        // Parallel: about four chunks per thread, so a slow thread does not hold the rest up,
        // but at most 16 grains: Ctrl-C waits for the chunks being run, and a quarter of a
        // thread's share of a long launch took 25 s with a costly function on 2 cores.
        job.chunk = split ? std::clamp((n - begin + 4 * cores - 1) / (4 * cores), grain, 16 * grain) : grain;
        job.next.store(begin);
        if (!split || !run_on_pool(job)) job.work();
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

void run_host_items_to_end(host_entry entry, const void* params, long long n, bool parallel,
                           long long grain) {
    const unsigned cores = pool_threads();
    grain = std::max(1LL, grain);
    long long report[4];
    if (!parallel || cores < 2 || n < 4 * grain) {
        entry(params, 0, n, report);
        return;
    }
    host_job job;
    job.entry = entry;
    job.params = params;
    job.n = n;
    job.interruptible = false;
    job.chunk = std::clamp((n + 4 * cores - 1) / (4 * cores), grain, 16 * grain);
    job.next.store(0);
    if (!run_on_pool(job)) job.work();
}

}  // namespace nu
