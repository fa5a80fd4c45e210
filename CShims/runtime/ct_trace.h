// The trace of this process, opened on first use: a process that never runs instrumented code on a
// recording thread (an uninstrumented `sh` under `calltrace record`, a configure test) leaves no
// file behind.
#ifndef CT_TRACE_H
#define CT_TRACE_H

#include "ct_base.h"

// Opens the trace if it is not open yet (once per process; the drain thread creates the file).
// True when recording can go on; false when the program runs untraced.
bool ct_trace_open(void);
bool ct_trace_is_open(void);
// At normal exit, on the exiting thread: the features close (the final calibration), this thread's
// and the main thread's open calls are recorded as unfinished, the drain thread ends (the module
// list, the unused tail cut off), and the closed flag is set.
void ct_trace_close(void);
// At _exit, which may come from a signal handler: the same close, with this thread's part limited to
// async-signal-safe steps and the drain thread doing the rest, waited for a bounded time.
void ct_trace_exit_quickly(void);
// At exit on a thread that restricted itself (ct_restrict.h), whose calls were written then: the
// drain thread does the whole close (the end read from its clock, main's open calls, the rest as
// above) while this thread spins a bounded time, making no system call and reading no clock.
void ct_trace_close_restricted(void);
// In a forked child: the parent's trace is not ours; the child opens its own on first use.
void ct_trace_forget(void);

#endif
