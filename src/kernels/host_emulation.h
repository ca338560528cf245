// src/kernels/host_emulation.h: the CUDA execution model on one OS thread (kernel.cuh, host)
//
// A launch runs its blocks one after another in linear order (x fastest). A kernel that
// uses no barrier and no warp-synchronous intrinsic runs a block's threads with a plain
// loop. Otherwise every thread of the block is a fiber on its own mmap'd stack, scheduled
// round-robin: a fiber runs until it waits at a barrier or returns, then switches straight
// to the next runnable fiber (one switch, not two via a scheduler context); the calling
// thread's context regains control when the block is done or deadlocked. On x86-64 a
// switch is a few instructions (fiber_switch below); elsewhere it is ucontext's.
//
// Barriers follow CUDA on sm_70+: __syncthreads releases when every thread of the block
// that has not exited waits at it; a warp barrier (syncwarp, and the two barriers of each
// shuffle or vote) releases when every live lane of its mask waits at one. When nothing is
// runnable and no barrier can release, the block is deadlocked and the launch returns 2.
//
// State is per launch and reached through g_current, the running thread's record; the
// scheduler sets it before each switch. Everything with storage here has internal linkage:
// a kernel module is one translation unit, and an inline (vague-linkage) variable would get
// STB_GNU_UNIQUE binding from g++, which keeps dlclose from unloading the module.
#pragma once

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

namespace nu {
namespace detail {

// ---- fiber switching. glibc's swapcontext saves and restores the signal mask with a
// system call on every switch, which made a block with barriers cost about 4 us per thread
// (a 256x256 launch with 9 barriers: 280 ms). On x86-64 a switch pushes the callee-saved
// registers on the stack it leaves, stores its stack pointer and pops the other fiber's:
// the signal mask, identical in every fiber of one OS thread, is left alone. A new fiber's
// stack is laid out as if it had switched away at fiber_entry_raw, which calls
// fiber_main (held in rbx) on a 16-byte aligned stack.
#if defined(__x86_64__)
// Naked functions (bodies of basic asm, no prologue) rather than top-level asm, so that
// the precompiled header carries them like any other static function. noipa: g++ must not
// assume from the body that a call leaves caller-saved registers intact (-fipa-ra), since
// the fibers switched to in between use them.
#if defined(__clang__)
#define NU_FIBER_RAW __attribute__((naked, noinline))
#else
#define NU_FIBER_RAW __attribute__((naked, noinline, noipa))
#endif
NU_FIBER_RAW static void fiber_switch_raw(void** /*save_sp*/, void* /*next_sp*/) {
    asm("pushq %rbp\n\t"
        "pushq %rbx\n\t"
        "pushq %r12\n\t"
        "pushq %r13\n\t"
        "pushq %r14\n\t"
        "pushq %r15\n\t"
        "movq %rsp, (%rdi)\n\t"
        "movq %rsi, %rsp\n\t"
        "popq %r15\n\t"
        "popq %r14\n\t"
        "popq %r13\n\t"
        "popq %r12\n\t"
        "popq %rbx\n\t"
        "popq %rbp\n\t"
        "ret");
}

NU_FIBER_RAW static void fiber_entry_raw() {
    asm("callq *%rbx\n\t"
        "ud2");
}

struct fiber_context {
    void* sp;
};

static inline void fiber_prepare(fiber_context* c, char* stack, size_t bytes, void (*entry)()) {
    const unsigned long long top = (reinterpret_cast<unsigned long long>(stack) + bytes) & ~15ull;
    void** sp = reinterpret_cast<void**>(top - 24);  // the return address sits at 8 mod 16
    sp[0] = reinterpret_cast<void*>(&fiber_entry_raw);
    sp -= 6;  // popped in this order: r15 r14 r13 r12 rbx rbp
    for (int k = 0; k < 6; ++k) sp[k] = nullptr;
    sp[4] = reinterpret_cast<void*>(entry);
    c->sp = sp;
}

static inline void fiber_switch(fiber_context* from, fiber_context* to) {
    fiber_switch_raw(&from->sp, to->sp);
}
#else
struct fiber_context {
    ucontext_t uc;
    bool initialized;
};

static inline void fiber_prepare(fiber_context* c, char* stack, size_t bytes, void (*entry)()) {
    if (!c->initialized) getcontext(&c->uc);  // makecontext needs an initialized context
    c->initialized = true;
    c->uc.uc_stack.ss_sp = stack;
    c->uc.uc_stack.ss_size = bytes;
    c->uc.uc_link = nullptr;  // fiber_main never returns
    makecontext(&c->uc, entry, 0);
}

static inline void fiber_switch(fiber_context* from, fiber_context* to) {
    swapcontext(&from->uc, &to->uc);
}
#endif

enum class fiber_state : int { runnable, at_block_barrier, at_warp_barrier, at_activemask, done };

struct host_launch;

// One CUDA thread. The geometry fields are what the intrinsics read; the rest is the
// scheduler's (cooperative launches only).
struct host_thread {
    unsigned idx[3];
    unsigned linear, lane, warp;
    host_launch* launch;
    fiber_state state;
    unsigned warp_mask;       // lanes this thread waits for at a warp barrier (itself included)
    unsigned long long slot;  // the value it offers to a shuffle or vote
    unsigned long long site;  // the activemask() call it waits at (ordered as in the source)
    unsigned converged;       // the lanes released with it from that call
    fiber_context context;
    jmp_buf exit_point;       // where a raise ends the thread (exit_thread)
    const char* stack_floor;  // a recursion reaching below this fails (check_recursion)
};

constexpr unsigned k_max_threads = 1024;
constexpr unsigned k_max_warps = k_max_threads / 32;
// 768 KiB per fiber: local arrays (cuda.local.array) live there, up to CUDA's 512 KiB per
// thread (the translator refuses more), and only the pages a fiber touches are committed.
// A PROT_NONE page below each stack turns an overflow into a fault instead of silent
// corruption of the neighbouring fiber.
constexpr size_t k_fiber_stack_bytes = 768 * 1024;
// The stack a recursive translated function may use, from where its thread started: a
// fiber's less a margin for the frame that checks and the failure path. Threads run in a
// plain loop on the launching thread's stack get the same budget, so a kernel fails alike in
// both modes.
constexpr size_t k_recursion_stack_bytes = k_fiber_stack_bytes - 64 * 1024;

// cuda.cg.this_grid().sync(): every block runs on its own OS thread (so that each has its
// own __shared__ variables, which are thread_local), and a block whose live threads all wait
// at the grid barrier waits here for the other blocks. Blocks that have finished no longer
// count.
struct grid_barrier_state {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    unsigned running;  // blocks not finished
    unsigned arrived;  // of those, waiting at the barrier
    unsigned long long generation;
};

struct host_launch {
    void (*body)(const long long*);  // one thread: decode the words, call the kernel function
    const long long* words;
    unsigned grid[3], block[3], block_idx[3];
    unsigned nthreads, nwarps;
    unsigned char* dynamic_shared;
    unsigned long long dynamic_shared_bytes;
    bool cooperative;
    grid_barrier_state* grid_sync;  // grid-synchronized launches only
    bool grid_pending;         // the block barrier in progress is a grid barrier

    int status;         // 0, or the first failure that stops the launch (2 deadlock, 3 other)
    char failure[256];  // its message
    bool oob_set;       // the first out-of-bounds access: index, axis, size, thread, block
    long long oob[9];
    bool exc_set;       // or the first exception raised (debug builds): code, thread, block
    long long exc[7];

    host_thread plain;  // the one record a non-cooperative launch reuses for every thread

    // Cooperative launches only.
    host_thread* threads;
    unsigned* ready;  // ring of runnable threads (each at most once), in release order
    unsigned ready_head, ready_count;
    unsigned live;           // threads of the block not yet returned
    unsigned block_waiting;  // of those, waiting at __syncthreads
    int block_pred_sum;      // syncthreads_count's sum, accumulating
    int block_result, block_participants;  // of the barrier last released
    unsigned warp_live[k_max_warps];       // per warp: lanes that exist and have not returned
    unsigned warp_waiting[k_max_warps];    // per warp: lanes waiting at a warp barrier
    unsigned warp_converging[k_max_warps];  // per warp: lanes waiting at an activemask()
    fiber_context scheduler;
    char* stacks;
    size_t stacks_bytes, stack_stride;
};

static thread_local host_thread* g_current = nullptr;

__attribute__((format(printf, 3, 4))) static inline void fail(host_launch* l, int status,
                                                             const char* format, ...) {
    if (l->status) return;
    l->status = status;
    va_list args;
    va_start(args, format);
    vsnprintf(l->failure, sizeof(l->failure), format, args);
    va_end(args);
}

static inline void record_out_of_bounds(long long index, int axis, long long size) {
    host_thread* t = g_current;
    // Outside a kernel launch (a checked gufunc): ignore. Only the first failure counts.
    if (!t || t->launch->oob_set || t->launch->exc_set) return;
    host_launch* l = t->launch;
    const long long rec[9] = {index, axis, size, t->idx[0], t->idx[1], t->idx[2],
                              l->block_idx[0], l->block_idx[1], l->block_idx[2]};
    memcpy(l->oob, rec, sizeof(rec));
    l->oob_set = true;
}

static inline void record_exception(long long code) {
    host_thread* t = g_current;
    host_launch* l = t->launch;
    if (l->oob_set || l->exc_set) return;
    const long long rec[7] = {code, t->idx[0], t->idx[1], t->idx[2],
                              l->block_idx[0], l->block_idx[1], l->block_idx[2]};
    memcpy(l->exc, rec, sizeof(rec));
    l->exc_set = true;
}

// A raise ends the running thread: back to where it started (run_thread), on its own stack.
[[noreturn]] static inline void exit_thread() { longjmp(g_current->exit_point, 1); }

// NU_RECURSION_GUARD (nu_array.cuh): `frame` is the caller's stack position.
static inline void check_recursion(const char* frame, const char* function) {
    host_thread* t = g_current;
    if (!t || !t->stack_floor || frame >= t->stack_floor) return;  // a checked gufunc: no launch
    host_launch* l = t->launch;
    fail(l, 3, "recursion in '%s' is too deep: it used the %zu KiB of stack an emulated thread "
         "has (thread (%u, %u, %u) of block (%u, %u, %u))", function,
         k_recursion_stack_bytes / 1024, t->idx[0], t->idx[1], t->idx[2], l->block_idx[0],
         l->block_idx[1], l->block_idx[2]);
    exit_thread();
}

// One thread's kernel body; returns early when the thread raises.
static inline void run_thread(host_launch* l, host_thread* t) {
    t->stack_floor = static_cast<const char*>(__builtin_frame_address(0)) - k_recursion_stack_bytes;
    if (setjmp(t->exit_point) == 0) l->body(l->words);
}

// ---- fiber stacks: one mapping per launch, [guard page | stack] per thread, reused by
// every block. MAP_NORESERVE: only the pages a fiber touches are ever committed.
static inline bool map_fiber_stacks(host_launch* l) {
    const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    l->stack_stride = size_t(page) + k_fiber_stack_bytes;
    l->stacks_bytes = l->stack_stride * l->nthreads;
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
#ifdef MAP_STACK
    flags |= MAP_STACK;
#endif
    void* p = mmap(nullptr, l->stacks_bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED) {
        fail(l, 3, "cannot map fiber stacks for %u threads (%zu bytes): %s", l->nthreads,
             l->stacks_bytes, strerror(errno));
        return false;
    }
    l->stacks = static_cast<char*>(p);
    for (unsigned i = 0; i < l->nthreads; ++i) {
        if (mprotect(l->stacks + i * l->stack_stride, size_t(page), PROT_NONE) != 0) {
            fail(l, 3, "cannot protect a fiber stack guard page: %s", strerror(errno));
            return false;
        }
    }
    return true;
}

// ---- scheduler
static inline void push_ready(host_launch* l, host_thread* t) {
    t->state = fiber_state::runnable;
    l->ready[(l->ready_head + l->ready_count++) % l->nthreads] = t->linear;
}

static inline host_thread* pop_ready(host_launch* l) {
    if (!l->ready_count) return nullptr;
    const unsigned i = l->ready[l->ready_head];
    l->ready_head = (l->ready_head + 1) % l->nthreads;
    --l->ready_count;
    return &l->threads[i];
}

static inline void grid_release(grid_barrier_state* g) {
    g->arrived = 0;
    ++g->generation;
    pthread_cond_broadcast(&g->cond);
}

// This block's live threads all wait at the grid barrier: wait for the other blocks.
static inline void grid_wait(grid_barrier_state* g) {
    pthread_mutex_lock(&g->mutex);
    const unsigned long long generation = g->generation;
    if (++g->arrived == g->running) {
        grid_release(g);
    } else {
        while (g->generation == generation) pthread_cond_wait(&g->cond, &g->mutex);
    }
    pthread_mutex_unlock(&g->mutex);
}

// A block has finished: the others no longer wait for it.
static inline void grid_leave(grid_barrier_state* g) {
    pthread_mutex_lock(&g->mutex);
    --g->running;
    if (g->arrived && g->arrived == g->running) grid_release(g);
    pthread_mutex_unlock(&g->mutex);
}

static inline void release_block_barrier(host_launch* l) {
    if (l->grid_pending) {
        l->grid_pending = false;
        grid_wait(l->grid_sync);
    }
    l->block_result = l->block_pred_sum;
    l->block_participants = int(l->block_waiting);
    l->block_pred_sum = 0;
    l->block_waiting = 0;
    for (unsigned i = 0; i < l->nthreads; ++i)
        if (l->threads[i].state == fiber_state::at_block_barrier) push_ready(l, &l->threads[i]);
}

// Releases every group of waiting lanes whose mask is complete: all live lanes of a
// waiting lane's mask wait too. Lanes that returned no longer count (CUDA: exited threads).
static inline void try_release_warp(host_launch* l, unsigned w) {
    unsigned waiting = l->warp_waiting[w];
    for (bool changed = true; changed;) {
        changed = false;
        for (unsigned bits = waiting; bits; bits &= bits - 1) {
            const host_thread& t = l->threads[w * 32 + unsigned(__builtin_ctz(bits))];
            const unsigned need = t.warp_mask & l->warp_live[w];
            if ((waiting & need) != need) continue;
            for (unsigned r = need; r; r &= r - 1)
                push_ready(l, &l->threads[w * 32 + unsigned(__builtin_ctz(r))]);
            waiting &= ~need;
            changed = true;
            break;
        }
    }
    l->warp_waiting[w] = waiting;
}

// activemask(): the lanes that execute the same activemask() call together. A lane that
// reaches one waits until no lane of its warp can run any more (every live lane waits at an
// activemask, a barrier, or has returned). Then the lanes waiting at the call that comes
// first in the source go on together, and the others wait on: so the lanes of an if branch
// meet only each other, and reconverge with the lanes that skipped the branch at a call
// after it; in a loop, the lanes still looping meet at each round.
static inline void try_release_converged(host_launch* l, unsigned w) {
    const unsigned converging = l->warp_converging[w];
    if (!converging) return;
    for (unsigned r = l->warp_live[w]; r; r &= r - 1)
        if (l->threads[w * 32 + unsigned(__builtin_ctz(r))].state == fiber_state::runnable) return;
    unsigned long long first = ~0ull;
    for (unsigned r = converging; r; r &= r - 1) {
        const unsigned long long site = l->threads[w * 32 + unsigned(__builtin_ctz(r))].site;
        if (site < first) first = site;
    }
    unsigned group = 0;
    for (unsigned r = converging; r; r &= r - 1) {
        const unsigned lane = unsigned(__builtin_ctz(r));
        if (l->threads[w * 32 + lane].site == first) group |= 1u << lane;
    }
    l->warp_converging[w] = converging & ~group;
    for (unsigned r = group; r; r &= r - 1) {
        host_thread* u = &l->threads[w * 32 + unsigned(__builtin_ctz(r))];
        u->converged = group;
        push_ready(l, u);
    }
}

static inline void report_deadlock(host_launch* l) {
    unsigned at_block = 0, at_warp = 0;
    for (unsigned i = 0; i < l->nthreads; ++i) {
        at_block += l->threads[i].state == fiber_state::at_block_barrier;
        at_warp += l->threads[i].state == fiber_state::at_warp_barrier;
    }
    fail(l, 2,
         "deadlock in block (%u, %u, %u): %u of %u threads wait at syncthreads and %u at a warp "
         "barrier (syncwarp, shuffle or vote) that cannot complete",
         l->block_idx[0], l->block_idx[1], l->block_idx[2], at_block, l->nthreads, at_warp);
}

// The running fiber t stops (it waits, or has returned): run the next runnable thread, or
// go back to the scheduler when none is left. Returns when t is resumed.
static inline void switch_from(host_thread* t) {
    host_launch* l = t->launch;
    host_thread* next = pop_ready(l);
    if (next == t) return;  // t released the barrier and is first in line
    if (!next) {
        if (l->live) report_deadlock(l);
        fiber_switch(&t->context, &l->scheduler);  // a deadlocked block is never resumed
        return;
    }
    g_current = next;
    fiber_switch(&t->context, &next->context);
}

static inline void fiber_main() {
    host_thread* t = g_current;
    host_launch* l = t->launch;
    run_thread(l, t);
    t->state = fiber_state::done;
    --l->live;
    l->warp_live[t->warp] &= ~(1u << t->lane);
    if (l->block_waiting && l->block_waiting == l->live) release_block_barrier(l);
    try_release_warp(l, t->warp);
    try_release_converged(l, t->warp);
    switch_from(t);  // never resumed
}

static inline int block_barrier(int pred, int* participants) {
    host_thread* t = g_current;
    host_launch* l = t->launch;
    if (!l->cooperative) {
        fail(l, 3, "a barrier in a kernel built with COOPERATIVE = 0");
        *participants = 1;
        return pred != 0;
    }
    t->state = fiber_state::at_block_barrier;
    ++l->block_waiting;
    l->block_pred_sum += pred != 0;
    if (l->block_waiting == l->live) release_block_barrier(l);
    try_release_converged(l, t->warp);
    switch_from(t);
    // Safe to read after resuming: the next release needs this thread to arrive again.
    *participants = l->block_participants;
    return l->block_result;
}

static inline void grid_barrier() {
    host_thread* t = g_current;
    host_launch* l = t->launch;
    if (!l->grid_sync) {
        fail(l, 3, "cuda.cg.this_grid().sync() in a kernel not built for grid synchronization");
        return;
    }
    t->state = fiber_state::at_block_barrier;
    ++l->block_waiting;
    l->grid_pending = true;
    if (l->block_waiting == l->live) release_block_barrier(l);
    try_release_converged(l, t->warp);
    switch_from(t);
}

static inline void warp_barrier(unsigned mask) {
    host_thread* t = g_current;
    host_launch* l = t->launch;
    if (!l->cooperative) {
        fail(l, 3, "a warp-synchronous intrinsic in a kernel built with COOPERATIVE = 0");
        return;
    }
    t->state = fiber_state::at_warp_barrier;
    t->warp_mask = mask | (1u << t->lane);
    l->warp_waiting[t->warp] |= 1u << t->lane;
    try_release_warp(l, t->warp);
    try_release_converged(l, t->warp);
    switch_from(t);
}

static inline unsigned converged_lanes(unsigned long long site) {
    host_thread* t = g_current;
    host_launch* l = t->launch;
    t->state = fiber_state::at_activemask;
    t->site = site;
    l->warp_converging[t->warp] |= 1u << t->lane;
    try_release_converged(l, t->warp);
    switch_from(t);
    return t->converged;
}

// Lanes of the caller's warp that take part in a warp operation with `mask`.
static inline unsigned warp_participants(unsigned mask) {
    const host_thread* t = g_current;
    return (mask | (1u << t->lane)) & t->launch->warp_live[t->warp];
}

// Shuffle: every participant offers its value, then reads lane src's (its own when src is
// outside the warp or the block, or not taking part). The second barrier keeps a fast
// lane from overwriting its slot in the next shuffle before the others have read it.
static inline unsigned long long warp_shuffle(unsigned mask, unsigned long long own,
                                              long long src) {
    host_thread* t = g_current;
    host_launch* l = t->launch;
    t->slot = own;
    warp_barrier(mask);
    unsigned long long r = own;
    if (src >= 0 && src < 32 && ((warp_participants(mask) >> src) & 1u))
        r = l->threads[t->warp * 32 + unsigned(src)].slot;
    warp_barrier(mask);
    return r;
}

// Vote: every participant offers a value; the caller gets them all (values[lane]) and
// the participating lanes.
static inline unsigned warp_gather(unsigned mask, unsigned long long own,
                                   unsigned long long* values) {
    host_thread* t = g_current;
    host_launch* l = t->launch;
    t->slot = own;
    warp_barrier(mask);
    const unsigned lanes = warp_participants(mask);
    for (unsigned r = lanes; r; r &= r - 1) {
        const unsigned lane = unsigned(__builtin_ctz(r));
        values[lane] = l->threads[t->warp * 32 + lane].slot;
    }
    warp_barrier(mask);
    return lanes;
}

static inline void set_geometry(host_thread* t, const unsigned* block, unsigned linear) {
    t->linear = linear;
    t->idx[0] = linear % block[0];
    t->idx[1] = linear / block[0] % block[1];
    t->idx[2] = linear / (block[0] * block[1]);
    t->lane = linear % 32;
    t->warp = linear / 32;
}

static inline void run_block_cooperative(host_launch* l) {
    l->live = l->nthreads;
    l->block_waiting = 0;
    l->block_pred_sum = 0;
    l->ready_head = l->ready_count = 0;
    for (unsigned w = 0; w < l->nwarps; ++w) {
        const unsigned lanes = l->nthreads - w * 32 < 32 ? l->nthreads - w * 32 : 32;
        l->warp_live[w] = lanes == 32 ? ~0u : (1u << lanes) - 1;
        l->warp_waiting[w] = 0;
        l->warp_converging[w] = 0;
    }
    for (unsigned i = 0; i < l->nthreads; ++i) {
        host_thread* t = &l->threads[i];
        // The stack sits above its guard page.
        fiber_prepare(&t->context, l->stacks + i * l->stack_stride + (l->stack_stride - k_fiber_stack_bytes),
                      k_fiber_stack_bytes, fiber_main);
        push_ready(l, t);
    }
    g_current = pop_ready(l);
    fiber_switch(&l->scheduler, &g_current->context);
}

static inline void run_block_plain(host_launch* l) {
    l->plain.launch = l;
    g_current = &l->plain;
    for (unsigned i = 0; i < l->nthreads && !l->status; ++i) {
        set_geometry(&l->plain, l->block, i);
        run_thread(l, &l->plain);
    }
}

// What running blocks needs, allocated once per launch (per block when grid-synchronized):
// dynamic shared memory (16-byte aligned, like CUDA's), and for cooperative blocks the
// thread records, the ready ring and the fiber stacks.
static inline void prepare_blocks(host_launch* l) {
    const size_t bytes = size_t((l->dynamic_shared_bytes + 15) & ~15ull);
    void* shared = nullptr;
    if (posix_memalign(&shared, 16, bytes ? bytes : 16) != 0) {
        fail(l, 3, "cannot allocate %llu bytes of dynamic shared memory", l->dynamic_shared_bytes);
        return;
    }
    l->dynamic_shared = static_cast<unsigned char*>(shared);
    if (!l->cooperative) return;
    l->threads = static_cast<host_thread*>(calloc(l->nthreads, sizeof(host_thread)));
    l->ready = static_cast<unsigned*>(calloc(l->nthreads, sizeof(unsigned)));
    if (!l->threads || !l->ready) {
        fail(l, 3, "cannot allocate %u thread records", l->nthreads);
        return;
    }
    for (unsigned i = 0; i < l->nthreads; ++i) {
        l->threads[i].launch = l;
        set_geometry(&l->threads[i], l->block, i);
    }
    map_fiber_stacks(l);
}

static inline void release_blocks(host_launch* l) {
    if (l->stacks) munmap(l->stacks, l->stacks_bytes);
    free(l->ready);
    free(l->threads);
    free(l->dynamic_shared);
    l->stacks = nullptr;
    l->ready = nullptr;
    l->threads = nullptr;
    l->dynamic_shared = nullptr;
}

// One block of a grid-synchronized launch, on its own OS thread, with its own state.
static inline void* run_grid_block(void* arg) {
    host_launch* l = static_cast<host_launch*>(arg);
    prepare_blocks(l);
    if (!l->status) run_block_cooperative(l);
    grid_leave(l->grid_sync);
    release_blocks(l);
    return nullptr;
}

// Every block at once, one OS thread each: a grid barrier needs them all resident, as a
// cooperative launch on the GPU does. Failures are reported in block order.
static inline void run_grid_synchronized(host_launch* l) {
    const unsigned long long blocks = (unsigned long long)l->grid[0] * l->grid[1] * l->grid[2];
    if (blocks > 1024) {
        fail(l, 3, "a grid-synchronized launch of %llu blocks: the emulation runs every block on "
             "its own thread, at most 1024", blocks);
        return;
    }
    grid_barrier_state g;
    pthread_mutex_init(&g.mutex, nullptr);
    pthread_cond_init(&g.cond, nullptr);
    g.running = unsigned(blocks);
    g.arrived = 0;
    g.generation = 0;
    host_launch* parts = static_cast<host_launch*>(calloc(blocks, sizeof(host_launch)));
    pthread_t* threads = static_cast<pthread_t*>(calloc(blocks, sizeof(pthread_t)));
    bool* started = static_cast<bool*>(calloc(blocks, sizeof(bool)));
    if (!parts || !threads || !started) {
        fail(l, 3, "cannot allocate the state of %llu blocks", blocks);
    } else {
        for (unsigned long long b = 0; b < blocks; ++b) {
            host_launch* p = &parts[b];
            memcpy(p, l, sizeof(host_launch));
            p->grid_sync = &g;
            p->block_idx[0] = unsigned(b % l->grid[0]);
            p->block_idx[1] = unsigned(b / l->grid[0] % l->grid[1]);
            p->block_idx[2] = unsigned(b / (l->grid[0] * l->grid[1]));
            started[b] = pthread_create(&threads[b], nullptr, run_grid_block, p) == 0;
            if (!started[b]) {
                fail(p, 3, "cannot start a thread for block %llu", b);
                grid_leave(&g);
            }
        }
        for (unsigned long long b = 0; b < blocks; ++b)
            if (started[b]) pthread_join(threads[b], nullptr);
        for (unsigned long long b = 0; b < blocks; ++b) {
            if (parts[b].status && !l->status) {
                l->status = parts[b].status;
                memcpy(l->failure, parts[b].failure, sizeof(l->failure));
            }
            if (parts[b].oob_set && !l->oob_set && !l->exc_set) {
                l->oob_set = true;
                memcpy(l->oob, parts[b].oob, sizeof(l->oob));
            }
            if (parts[b].exc_set && !l->oob_set && !l->exc_set) {
                l->exc_set = true;
                memcpy(l->exc, parts[b].exc, sizeof(l->exc));
            }
        }
    }
    free(started);
    free(threads);
    free(parts);
    pthread_cond_destroy(&g.cond);
    pthread_mutex_destroy(&g.mutex);
}

// The host entry of every kernel: runs the grid, returns 0, 1 (out of bounds), 2 (deadlock),
// 3 (another failure), 4 (interrupted: info->poll asked to stop) or 5 (an exception raised
// in a debug build: its code, thread and block as 7 numbers), with the message (empty for
// 0) in message[message_size].
static inline int launch_grid(void (*body)(const long long*), const long long* words,
                              const kernel_launch_info* info, char* message, int message_size,
                              int mode) {
    // mode 0: threads as a loop; 1: fibers (barriers, warp intrinsics); 2: fibers, and every
    // block on its own OS thread (grid synchronization).
    const bool cooperative = mode != 0;
    host_launch l;
    memset(&l, 0, sizeof(l));
    l.body = body;
    l.words = words;
    l.cooperative = cooperative;
    memcpy(l.grid, info->grid, sizeof(l.grid));
    memcpy(l.block, info->block, sizeof(l.block));
    // CUDA's limits, so that a launch the GPU would refuse fails here too.
    const unsigned long long threads = (unsigned long long)l.block[0] * l.block[1] * l.block[2];
    if (!l.grid[0] || !l.grid[1] || !l.grid[2] || !l.block[0] || !l.block[1] || !l.block[2])
        fail(&l, 3, "empty launch: grid (%u, %u, %u), block (%u, %u, %u)", l.grid[0], l.grid[1],
             l.grid[2], l.block[0], l.block[1], l.block[2]);
    else if (l.block[0] > k_max_threads || l.block[1] > k_max_threads || l.block[2] > 64 ||
             threads > k_max_threads)
        fail(&l, 3, "block (%u, %u, %u) exceeds CUDA's limits (x and y <= 1024, z <= 64, at most "
             "1024 threads)", l.block[0], l.block[1], l.block[2]);
    else if (l.grid[0] > 0x7fffffffu || l.grid[1] > 65535 || l.grid[2] > 65535)
        fail(&l, 3, "grid (%u, %u, %u) exceeds CUDA's limits (x < 2**31, y and z <= 65535)",
             l.grid[0], l.grid[1], l.grid[2]);
    l.nthreads = l.status ? 0 : unsigned(threads);
    l.nwarps = (l.nthreads + 31) / 32;
    l.dynamic_shared_bytes = info->dynamic_shared_bytes;

    if (mode == 2 && !l.status) {
        run_grid_synchronized(&l);
    } else if (!l.status) {
        prepare_blocks(&l);
        host_thread* const outer = g_current;
        for (unsigned z = 0; !l.status && z < l.grid[2]; ++z)
            for (unsigned y = 0; !l.status && y < l.grid[1]; ++y)
                for (unsigned x = 0; !l.status && x < l.grid[0]; ++x) {
                    if (info->poll && info->poll()) {  // SIGINT: stop at this block boundary
                        fail(&l, 4, "interrupted");
                        break;
                    }
                    l.block_idx[0] = x;
                    l.block_idx[1] = y;
                    l.block_idx[2] = z;
                    if (l.cooperative)
                        run_block_cooperative(&l);
                    else
                        run_block_plain(&l);
                }
        g_current = outer;
        release_blocks(&l);
    }

    int status = l.status;
    if (!status && l.oob_set) {
        status = 1;
        snprintf(l.failure, sizeof(l.failure),
                 "index %lld is out of bounds for axis %lld with size %lld "
                 "(thread (%lld, %lld, %lld) of block (%lld, %lld, %lld))",
                 l.oob[0], l.oob[1], l.oob[2], l.oob[3], l.oob[4], l.oob[5], l.oob[6], l.oob[7],
                 l.oob[8]);
    }
    if (!status && l.exc_set) {  // the engine reads these numbers back (jit_kernel.cpp)
        status = 5;
        snprintf(l.failure, sizeof(l.failure), "%lld %lld %lld %lld %lld %lld %lld", l.exc[0],
                 l.exc[1], l.exc[2], l.exc[3], l.exc[4], l.exc[5], l.exc[6]);
    }
    if (message && message_size > 0)
        snprintf(message, size_t(message_size), "%s", status ? l.failure : "");
    return status;
}

}  // namespace detail
}  // namespace nu
