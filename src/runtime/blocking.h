// src/runtime/blocking.h: let the bindings release the GIL around long engine work
#pragma once

namespace nu {

// The bindings register how to leave and re-enter the interpreter (release and retake the
// GIL); engine code marks long operations (compiles) with a blocking_section, so other
// Python threads run meanwhile, without the engine knowing about Python.
struct blocking_hooks {
    void* (*leave)() = nullptr;        // returns a token for enter, or nullptr (nothing to do)
    void (*enter)(void* token) = nullptr;
};

void set_blocking_hooks(blocking_hooks hooks);
const blocking_hooks& current_blocking_hooks();

class blocking_section {
public:
    blocking_section() {
        const blocking_hooks& h = current_blocking_hooks();
        if (h.leave) m_token = h.leave();
    }
    // noexcept(false): re-entering the interpreter at its finalization may end the thread
    // with pthread_exit, a forced unwind that a noexcept destructor turns into an abort.
    ~blocking_section() noexcept(false) {
        const blocking_hooks& h = current_blocking_hooks();
        if (m_token && h.enter) h.enter(m_token);
    }
    blocking_section(const blocking_section&) = delete;
    blocking_section& operator=(const blocking_section&) = delete;

private:
    void* m_token = nullptr;
};

}  // namespace nu
