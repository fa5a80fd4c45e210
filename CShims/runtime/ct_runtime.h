// Process-wide state of the runtime (defined in ct_runtime.c): set once by ct_runtime_init (start-up,
// or the first hook, whichever comes first; again in a forked child) and read by the hooks.
#ifndef CT_RUNTIME_H
#define CT_RUNTIME_H

#include "ct_settings.h"
#include <pthread.h>
#include <stdatomic.h>

struct ct_runtime {
    struct ct_settings settings;
    _Atomic uint32_t init;          // CT_INIT_*
    bool enabled;                   // a CALLTRACE_* setting asked for a trace
    bool membarrier_ok;             // registered: another thread can take the main thread's stream over
    double ticks_per_ns;
    uint64_t calib_tick0, calib_ns0, calib_tick1, calib_ns1, realtime_ns0;
    uint64_t init_tick;
    uint64_t first_call_tick;       // no open call started earlier (a fork child's inherited ones included)
    _Atomic uint64_t main_tick, main_addr;   // from __libc_start_main, perhaps before the trace opens
    pthread_key_t thread_key;       // its destructor ends a recording thread's stream
    _Atomic uint32_t next_stream;
    pid_t pid;                      // of the process the runtime set up for (vfork children differ)
    bool exit_handler_lost;         // a vfork child's exit() ran (and so removed) our exit handler
    bool quick_exit_handler_lost;   // a vfork child's quick_exit() ran (and so removed) our at_quick_exit one
    _Atomic uint32_t instrument;    // CT_INSTRUMENT_* bits seen so far (the header's, before it exists)
    // A seccomp filter forbids what the runtime does on a program thread (ct_restrict.h): threads
    // that start from then on may have inherited it, so they are not timed (new_threads_restricted);
    // with a filter on every thread, no program thread makes a system call of ours any more (no_calls).
    _Atomic bool new_threads_restricted;
    _Atomic bool no_calls;
    // A filter on every thread let the drain thread go on: it starts no other thread (ct_restrict.c).
    _Atomic bool drain_filtered;
    _Atomic uint32_t lost;          // CT_LOST_* bits noted before the header exists (ct_runtime_note_lost)
};

enum { CT_INIT_NOT_YET, CT_INIT_RUNNING, CT_INIT_DONE };

extern struct ct_runtime ct_rt;
// Calls lasting at least this many ticks are recorded. UINT64_MAX until the trace opens.
extern uint64_t ct_threshold_ticks;

// Registers for the membarrier commands, while the process has one thread (ct_runtime.c says why):
// the expedited barrier (ct_runtime_barrier) always, the one that serialises every core's
// instruction stream (ct_runtime_sync_cores, for patching code) with `sync_core`.
void ct_runtime_register_barriers(bool sync_core);
// Registers for ct_runtime_sync_cores if that was not done (slow once threads run).
void ct_runtime_prepare_sync_cores(void);
// Every thread of the process serialises its instruction stream (where the kernel can), and passes
// a memory barrier (as ct_runtime_barrier); false where the kernel could not.
bool ct_runtime_sync_cores(void);
// A memory barrier on every running thread of the process; false where the kernel has none.
bool ct_runtime_barrier(void);
// A mechanism timed calls (CT_INSTRUMENT_* bits): noted for the header, now and when it opens.
void ct_runtime_note_instrument(uint32_t bits);
// Records were lost (CT_LOST_* bits) perhaps before the trace opened: noted for the header, now and
// when it opens.
void ct_runtime_note_lost(uint32_t bits);

#endif
