// src/runtime/interrupt.h: Ctrl-C during long host launches (stop at the next block boundary)
#pragma once

#include "runtime/errors.h"

namespace nu {

// Thrown when a host launch stopped because of SIGINT and the interpreter's signal handler
// raised (module.cpp leaves that Python exception, usually KeyboardInterrupt, in place).
struct interrupted : error {
    using error::error;
};

// While one exists (reference counted across threads), SIGINT also sets a flag that host
// launches poll between blocks or chunks; the previous handler (Python's) still runs, so
// the interpreter sees the signal as usual. A handler that is SIG_IGN stays in charge.
class interrupt_scope {
public:
    interrupt_scope();
    ~interrupt_scope();
    interrupt_scope(const interrupt_scope&) = delete;
    interrupt_scope& operator=(const interrupt_scope&) = delete;
};

// True when SIGINT arrived since the last clear (one atomic load: cheap enough per block).
bool interrupt_pending();

// Called when interrupt_pending(): asks the interpreter (the hook registered by the
// bindings takes the GIL and runs its signal handlers). True: stop, an exception is set;
// false: the handler did not raise (or no hook), the flag is cleared and work goes on.
bool interrupt_should_stop();

// The bindings' hook: runs pending signal handlers, returns true when one raised.
void set_interrupt_hook(bool (*check_signals)());

// For kernel modules (kernel_launch_info::poll): 1 when the launch must stop.
extern "C" int nu_host_interrupt_poll();

}  // namespace nu
