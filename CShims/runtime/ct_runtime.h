// Process-wide state of the runtime, written once at start-up (and again in a forked child) and read
// by the hooks.
#ifndef CT_RUNTIME_H
#define CT_RUNTIME_H

#include "ct_settings.h"
#include <pthread.h>
#include <stdatomic.h>

struct ct_runtime {
    struct ct_settings settings;
    _Atomic bool ready;             // settings loaded and the trace file open
    double ticks_per_ns;
    pthread_key_t thread_key;       // its destructor closes a thread's stream when the thread exits
    _Atomic uint32_t next_stream;
};

extern struct ct_runtime ct_rt;
// Calls lasting at least this many ticks are recorded. UINT64_MAX until start-up is done.
extern uint64_t ct_threshold_ticks;

#endif
