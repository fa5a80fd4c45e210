// The hang watchdog (CALLTRACE_HANG): when the main thread has been inside a call with no hook
// activity for the hang threshold, its whole native stack (libc and library frames included) is
// captured once, into a HANG record (ct_event_stream.c). The drain thread is the watchdog: it
// makes passes at most 8 ms apart anyway, so watching costs a few loads per pass and nothing per call.
#ifndef CT_HANG_H
#define CT_HANG_H

#include "ct_feature.h"

// The feature (ct_feature.h).
//   open (the process's trace and each fork child's): the threshold into the header, libunwind
//     loaded (once per process image), the capture handler installed where the signal is free;
//   pass: watches the main thread, asks for a capture, writes records;
//   next due: soon while it waits for a capture's answer (its quiet time is counted in whatever
//     passes come, at most 8 ms apart);
//   after fork: the parent's watch is not the child's.
extern const struct ct_feature ct_hang_feature;

#endif
