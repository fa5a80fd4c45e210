// Program threads that end with the raw exit system call (not exit_group, not pthread_exit; strict
// seccomp programs do this): no exit handler, no thread-key destructor and no wrapper of ours runs.
// Untraced, the process ends when its last thread does. Traced, the drain thread would keep it
// alive for ever; so the drain thread looks (docs/design.md, "Threads that end with the raw exit
// system call").
#ifndef CT_RAW_EXIT_H
#define CT_RAW_EXIT_H

#include "ct_base.h"

enum ct_program_state {
    CT_PROGRAM_RUNS,        // the main thread runs (or this cannot be told: no /proc)
    CT_PROGRAM_MAIN_GONE,   // the main thread ended so; other program threads run on
    CT_PROGRAM_GONE,        // no program thread is left
};

// From the drain thread's poll. On MAIN_GONE the main thread's open calls were recorded
// (unfinished), and the drain thread must end now, as when main calls pthread_exit (ct_start.c).
// On GONE every open call was recorded and the trace's close begun; the drain thread finishes the
// file and then calls ct_raw_exit_end_process(*status).
enum ct_program_state ct_raw_exit_poll(int *status);
// The trace is marked closed and the process ends with the status its last thread gave.
_Noreturn void ct_raw_exit_end_process(int status);

#endif
