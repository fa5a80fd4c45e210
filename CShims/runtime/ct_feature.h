// A feature of the runtime (muting, overhead calibration, run-delay sampling, marks, hangs) is one
// entry in one table (ct_features.c): what it does at each moment of a trace's life. The moments'
// owners walk the table and name no feature: ct_trace.c (open, close), ct_drain.c (the passes, the
// stop) and ct_start.c (fork). So a feature is added in its own file and one line of the table, as
// an LLVM XRay mode registers its handlers; the layers below never call a feature.
//
// Every entry point may be NULL. The drain thread's own are called on it alone, in table order
// (`stop` excepted, see there).
#ifndef CT_FEATURE_H
#define CT_FEATURE_H

#include "ct_format.h"

struct ct_feature {
    const char *name;
    // A new trace (the process's, or a fork child's), on the thread that opened it, once the
    // header exists. On the program's start path: keep it short, leave what can wait to a pass.
    // (Not on the drain thread: what it opens there, in its own descriptor table, the program's
    // threads could not use; libunwind's pipe, for one.)
    void (*open)(struct ct_file_header *h);
    // One pass of the drain thread's loop (passes are 1-8 ms apart).
    void (*pass)(void);
    // When the feature wants the next pass (CLOCK_MONOTONIC ns); 0: no wish (8 ms at most).
    uint64_t (*next_due_ns)(void);
    // The drain thread ends for good (exit, or the main thread's pthread_exit), after its last
    // pass, while blocks can still be had. On the drain thread; at exit, while it sleeps between
    // passes with no block to cut off, on the exiting thread instead (ct_drain_stop_at_exit): never
    // both, never during a pass.
    void (*stop)(void);
    // The trace closes at exit, on the exiting thread (still recording), before anything else.
    // Not at _exit, which may come from a signal handler (ct_trace_exit_quickly): `stop` is all then.
    void (*close)(void);
    // In a fork child, before its trace opens. Async-signal-safe: only the forking thread runs.
    void (*after_fork)(void);
    // The program is about to exec (ct_wrappers.c), on the thread that calls it: perhaps inside a
    // signal handler, or a vfork child. Async-signal-safe, no lock; bounded if it waits.
    void (*before_exec)(void);
};

void ct_features_open(struct ct_file_header *h);
void ct_features_pass(void);
// The earliest pass any feature wants, or `due` when that is earlier.
uint64_t ct_features_next_due_ns(uint64_t due);
void ct_features_stop(void);
void ct_features_close(void);
void ct_features_after_fork(void);
void ct_features_before_exec(void);

#endif
