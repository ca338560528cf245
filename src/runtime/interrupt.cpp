// src/runtime/interrupt.cpp: a chaining SIGINT handler that host launches poll
#include "runtime/interrupt.h"

#include <signal.h>

#include <atomic>
#include <mutex>

namespace nu {
namespace {

std::atomic<int> g_pending{0};
std::atomic<bool (*)()> g_hook{nullptr};
std::mutex g_mutex;
int g_scopes = 0;
struct sigaction g_previous;

void on_sigint(int sig, siginfo_t* info, void* context) {
    const struct sigaction& prev = g_previous;
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_DFL) {
        // The process would have died: it still does.
        ::signal(sig, SIG_DFL);
        ::raise(sig);
        return;
    }
    g_pending.store(1, std::memory_order_relaxed);
    if (prev.sa_flags & SA_SIGINFO) {
        if (prev.sa_sigaction) prev.sa_sigaction(sig, info, context);
    } else if (prev.sa_handler != SIG_IGN && prev.sa_handler != SIG_DFL) {
        prev.sa_handler(sig);
    }
}

}  // namespace

interrupt_scope::interrupt_scope() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_scopes++ > 0) return;
    struct sigaction current;
    if (::sigaction(SIGINT, nullptr, &current) != 0) return;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) {
        g_previous = current;  // ignored: nothing to stop for; leave it alone
        g_previous.sa_handler = nullptr;
        return;
    }
    g_previous = current;
    struct sigaction ours = {};
    ours.sa_sigaction = on_sigint;
    ours.sa_flags = SA_SIGINFO | SA_RESTART | (current.sa_flags & SA_ONSTACK);
    sigemptyset(&ours.sa_mask);
    ::sigaction(SIGINT, &ours, nullptr);
}

interrupt_scope::~interrupt_scope() {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (--g_scopes > 0) return;
    struct sigaction current;
    // Restore only our own handler: one installed meanwhile (signal.signal) stays.
    if (::sigaction(SIGINT, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == on_sigint)
        ::sigaction(SIGINT, &g_previous, nullptr);
}

bool interrupt_pending() { return g_pending.load(std::memory_order_relaxed) != 0; }

bool interrupt_should_stop() {
    bool (*hook)() = g_hook.load();
    g_pending.store(0);
    return hook && hook();
}

void set_interrupt_hook(bool (*check_signals)()) { g_hook.store(check_signals); }

extern "C" int nu_host_interrupt_poll() {
    return interrupt_pending() && interrupt_should_stop() ? 1 : 0;
}

}  // namespace nu
