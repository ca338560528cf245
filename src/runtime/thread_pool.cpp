// src/runtime/thread_pool.cpp: the process's persistent host thread pool
#include "runtime/thread_pool.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace nu {
namespace {

// cores - 1 workers that sleep between jobs; the calling thread is the last worker.
class host_pool {
public:
    explicit host_pool(unsigned workers) {
        for (unsigned t = 0; t < workers; ++t) m_threads.emplace_back([this] { serve(); });
    }
    // Never destroyed (workers may outlive static destruction); leaked after fork().

    bool run(pool_job& job) {
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
            pool_job* job;
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
    pool_job* m_job = nullptr;
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
        instance = new host_pool(pool_threads() - 1);
        owner = ::getpid();
    }
    return instance;
}

}  // namespace

unsigned pool_threads() {
    static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return cores;
}

bool run_on_pool(pool_job& job) { return pool()->run(job); }

}  // namespace nu
