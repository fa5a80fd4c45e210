// The run-delay sampler: how long each recording thread was runnable but waiting for a CPU (the
// second field of /proc/self/task/TID/schedstat: the kernel's sched_info run_delay, in ns). The
// drain thread runs it in its passes; whenever a thread's run delay grew since its
// last sample, a RUN_DELAY record goes into the metadata stream, so that `report` can tell a slow
// call from a call whose thread was preempted (docs/design.md, "Preempted time").
#ifndef CT_SCHED_H
#define CT_SCHED_H

#include "ct_feature.h"

// The feature (ct_feature.h). Its pass samples at most every 2 ms; a pass sooner (the drain thread
// woken early by a thread that wants blocks) returns after one clock read. It wants the next pass
// 2 ms after the last one while a thread is kept waiting, up to 8 ms while none is.
extern const struct ct_feature ct_sched_feature;

#endif
