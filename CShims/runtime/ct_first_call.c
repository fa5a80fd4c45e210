#include "ct_first_call.h"
#include "ct_start.h"
#include "ct_trace.h"

#include <pthread.h>

// Opening the trace on the first thread: an asynchronous cancel acted on in the middle would leave
// the trace opening for ever and other threads waiting on it. Cancellation is held off until the
// thread is attached (or not); one that came meanwhile is acted on then. Attaching only allocates;
// the trace is opened here, so that nothing below the entry points calls up into the trace's life
// cycle.
CT_NO_INSTRUMENT static bool attach_and_open(struct ct_thread *t) {
    if (t->state == CT_THREAD_NEW) {
        // A signal handler's hooks that run while this one attaches (opening the trace, say) see
        // ATTACHING and return at once: they must not open the trace a second time.
        t->state = CT_THREAD_ATTACHING;
        if (!ct_runtime_init()) { // another thread is initialising: try again on a later hook
            t->state = CT_THREAD_NEW;
            return false;
        }
        if (!ct_thread_attach(t)) return false;
    } else {
        // The child's first hook: its own trace opens now, and the calls open at the fork go on in it.
        t->state = CT_THREAD_ATTACHING;
    }
    if (!ct_trace_open()) {
        ct_thread_detach(t);
        return false;
    }
    ct_thread_start_recording(t);
    return true;
}

CT_NO_INSTRUMENT bool ct_first_call(struct ct_thread *t, bool entering) {
    if (t->state != CT_THREAD_FORKED && !(t->state == CT_THREAD_NEW && entering)) return false;
    // It may have inherited a seccomp filter that forbids attaching (ct_restrict.h).
    if (atomic_load_explicit(&ct_rt.new_threads_restricted, memory_order_acquire)) {
        t->state = CT_THREAD_RESTRICTED;
        return false;
    }
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    bool attached = attach_and_open(t);
    pthread_setcancelstate(cancel_state, NULL);
    return attached;
}
