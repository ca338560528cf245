// src/runtime/thread_pool.h: the process's persistent host thread pool
#pragma once

namespace nu {

// Work that several threads share: each calls work() once and takes pieces from the job's
// own counter until none is left, so the caller alone can also finish it.
struct pool_job {
    virtual void work() = 0;

protected:
    ~pool_job() = default;
};

// Threads of the pool, the caller included (the machine's cores).
unsigned pool_threads();

// Runs job.work() on every pool thread and on the caller, and returns when all have
// returned. The pool runs one job at a time: false, with nothing run, while another
// caller's job holds it (that caller then runs its job alone). Created on first use, and
// anew in a forked child.
bool run_on_pool(pool_job& job);

}  // namespace nu
