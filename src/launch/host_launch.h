// src/launch/host_launch.h: host kernels over a persistent thread pool, in interruptible chunks
#pragma once

namespace nu {

// Every elementwise and gufunc host entry: runs items [begin, end); returns 0, or 1 at an
// out-of-bounds index of a checked gufunc with {index, axis, size, item} in report[4].
using host_entry = int (*)(const void* params, long long begin, long long end, long long* report);

// Runs items [0, n) in chunks of at least `grain` items: on this thread, or with the pool's
// threads too when `parallel` (the pool is created once per process, not per call). SIGINT
// stops the work at the next chunk boundary: interrupted is thrown when the interpreter's
// handler raised, else the work resumes. Returns true with report[4] filled when an item
// was out of bounds (the earliest item among the chunks that ran).
bool run_host_items(host_entry entry, const void* params, long long n, bool parallel,
                    long long grain, long long* report);

// Runs items [0, n) to the end, as run_host_items does but without watching SIGINT (no
// handler installed, no interpreter call, nothing thrown): for NumPy's inner loops, which
// may run without the GIL and have no way to report an interruption (NumPy's own loops do
// not stop on Ctrl-C either). Elementwise entries only (they never report).
void run_host_items_to_end(host_entry entry, const void* params, long long n, bool parallel,
                           long long grain);

}  // namespace nu
