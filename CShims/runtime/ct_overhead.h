// Overhead compensation: what the hooks cost, so that a call's cost can leave it out.
//
// A call's measured time includes the hooks of every timed call beneath it (each costs its caller
// `ct_overhead_pair_ticks`) and part of its own (`ct_overhead_own_ticks`, from the enter hook's
// clock read to the exit hook's). Both are measured by timing the real hooks in a tight loop
// (ct_overhead.c), at start-up and again now and then; they only go down. The runtime decides the
// threshold with the current values; the trace keeps each call's number of timed descendants and
// the final values, which the reader applies. The method and its limits: docs/design.md.
#ifndef CT_OVERHEAD_H
#define CT_OVERHEAD_H

#include "ct_base.h"

struct ct_thread;

extern uint64_t ct_overhead_pair_ticks;
extern uint64_t ct_overhead_own_ticks;

// The overhead inside a call of `duration` ticks with `descendants` timed calls beneath it: never
// more than the duration itself (the calibrated constant is a minimum, but a call can still run
// faster than the loop it was measured in).
CT_NO_INSTRUMENT static inline uint64_t ct_overhead_of(uint64_t descendants, uint64_t duration) {
    unsigned __int128 total = (unsigned __int128)descendants * ct_overhead_pair_ticks + ct_overhead_own_ticks;
    return total > duration ? duration : (uint64_t)total;
}

// Measures both constants, once per process, on an ACTIVE thread with its stack (its first hook,
// while attaching, before the trace opens). Takes about half a millisecond.
void ct_overhead_calibrate(struct ct_thread *t);
// Measures again, shorter, when 50 ms have passed since the last time (or `at_exit`), on an ACTIVE
// thread outside any hook's critical part: after a recorded call's pop, or at exit.
void ct_overhead_recalibrate(struct ct_thread *t, uint64_t now, bool at_exit);
// Writes the constants into the trace header (a forked child's new trace, too).
void ct_overhead_to_header(void);

#endif
