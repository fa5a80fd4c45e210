// The hang watchdog (CALLTRACE_HANG): when the main thread has been inside a call with no hook
// activity for the hang threshold, its whole native stack (libc and library frames included) is
// captured once, into a HANG record in the metadata stream. The drain thread is the watchdog: it
// makes passes at most 8 ms apart anyway, so watching costs a few loads per pass and nothing per call.
#ifndef CT_HANG_H
#define CT_HANG_H

#include "ct_format.h"

// The capture signal: a realtime signal away from both ends of the range (programs take theirs
// from SIGRTMIN up for timers; some profilers take SIGRTMAX). Used only while the program has no
// handler for it.
#define CT_HANG_SIGNAL (SIGRTMAX - 4)

// When the trace opens (in the process and in each fork child): the threshold into the header,
// libunwind loaded (once per process image), the capture handler installed where the signal is free.
void ct_hang_start(struct ct_file_header *h);
// In a fork child, before its drain thread starts: the parent's watch is not the child's.
void ct_hang_forget(void);
// From the drain thread on every pass: watches the main thread, asks for a capture, writes records.
void ct_hang_check(void);
// When (CLOCK_MONOTONIC ns) the watchdog next wants a pass: soon while it waits for a capture's
// answer; 0 otherwise (its quiet time is counted in whatever passes come, at most 8 ms apart).
uint64_t ct_hang_next_due_ns(void);

#endif
