// Program threads that end with the raw exit system call (not exit_group, not pthread_exit; strict
// seccomp programs do this): no exit handler, no thread-key destructor and no wrapper of ours runs.
// Untraced, the process ends when its last thread does. Traced, the drain thread would keep it
// alive for ever; so the drain thread looks (docs/design.md, "Threads that end with the raw exit
// system call").
#ifndef CT_RAW_EXIT_H
#define CT_RAW_EXIT_H

#include "ct_drain.h"

// For the drain thread's poll (through the watch ct_trace.c gives it). On MAIN_GONE the main
// thread's open calls were recorded (unfinished), and the drain thread must end now, as when main
// calls pthread_exit (ct_start.c). On GONE every listed thread's open calls were recorded and the
// features closed; *status is the status the process must end with.
enum ct_program_state ct_raw_exit_poll(int *status);

#endif
