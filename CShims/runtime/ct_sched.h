// The thread-state sampler: where each recording thread's time goes while it is inside a long
// call: on a CPU, runnable but waiting for one, or blocked, and blocked in what. The drain thread
// runs it in its passes and writes THREAD_STATE records into the metadata stream, so that the
// reader can split each slow call's cost (docs/design.md, "Why a call was slow").
#ifndef CT_SCHED_H
#define CT_SCHED_H

#include "ct_feature.h"

// The feature (ct_feature.h). Its pass samples at most every 2 ms; a pass sooner (the drain thread
// woken early by a thread that wants blocks) returns after one clock read. It wants the next pass
// 2 ms after the last one while a sampled thread's state changes, up to 8 ms while none does.
extern const struct ct_feature ct_sched_feature;

#endif
