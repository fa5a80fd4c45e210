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
// At normal exit, or when the last thread of a process whose main thread left ends it: the final
// calibration, the module list, the closed flag, the unused tail cut off.
void ct_trace_close(uint64_t end_tick);
// ct_trace_close's steps before the drain thread stops and after, for the drain thread when it
// closes the trace itself (ct_raw_exit.c).
void ct_trace_close_begin(uint64_t end_tick);
void ct_trace_close_end(void);
// In a forked child: the parent's trace is not ours; the child opens its own on first use.
void ct_trace_forget(void);

#endif
