// Process-wide state of the runtime: set once by ct_runtime_init (start-up, or the first hook,
// whichever comes first; again in a forked child) and read by the hooks.
#ifndef CT_RUNTIME_H
#define CT_RUNTIME_H

#include "ct_settings.h"
#include <pthread.h>
#include <stdatomic.h>

struct ct_runtime {
    struct ct_settings settings;
    _Atomic uint32_t init;          // CT_INIT_*
    bool enabled;                   // a CALLTRACE_* setting asked for a trace
    bool membarrier_ok;             // another thread can take the main thread's stream over
    double ticks_per_ns;
    uint64_t calib_tick0, calib_ns0, calib_tick1, calib_ns1, realtime_ns0;
    uint64_t process_start_ns, init_tick;
    _Atomic uint64_t main_tick, main_addr;   // from __libc_start_main, perhaps before the trace opens
    pthread_key_t thread_key;       // its destructor ends a recording thread's stream
    _Atomic uint32_t next_stream;
    pid_t pid;                      // of the process the runtime set up for (vfork children differ)
    bool exit_handler_lost;         // a vfork child's exit() ran (and so removed) our exit handler
};

enum { CT_INIT_NOT_YET, CT_INIT_RUNNING, CT_INIT_DONE };

extern struct ct_runtime ct_rt;
// Calls lasting at least this many ticks are recorded. UINT64_MAX until start-up is done.
extern uint64_t ct_threshold_ticks;

// Reads the settings and calibrates the clock, once. False while another thread is doing it.
bool ct_runtime_init(void);
// Normal exit: records the open calls and closes the trace (registered with atexit).
void ct_start_exit(void);
// exit() or main's return, when a vfork child's exit() took our handler (ct_wrappers.c).
void ct_start_exit_if_handler_lost(void);
// The main thread calls pthread_exit (ct_wrappers.c).
void ct_start_main_thread_exits(void);

#endif
