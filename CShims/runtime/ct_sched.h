// The run-delay sampler: how long each recording thread was runnable but waiting for a CPU (the
// second field of /proc/self/task/TID/schedstat: the kernel's sched_info run_delay, in ns). The
// drain thread calls it on every pass of its loop; whenever a thread's run delay grew since its
// last sample, a RUN_DELAY record goes into the metadata stream, so that `report` can tell a slow
// call from a call whose thread was preempted (docs/design.md, "Preempted time").
#ifndef CT_SCHED_H
#define CT_SCHED_H

#include "ct_base.h"

// From the drain thread only. Samples at most every CT_SCHED_PERIOD_NS; a call sooner (the drain
// thread woken early by a thread that wants blocks) returns after one clock read.
void ct_sched_sample(void);
// When (CLOCK_MONOTONIC ns) the sampler next wants a pass: 2 ms after the last one while a thread is
// kept waiting, up to 8 ms while none is; 0 when it wants none (nothing to sample).
uint64_t ct_sched_next_due_ns(void);

#endif
