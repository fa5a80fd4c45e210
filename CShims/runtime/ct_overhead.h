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

#include "ct_feature.h"
#include <stdatomic.h>

struct ct_thread;

extern uint64_t ct_overhead_pair_ticks;
extern uint64_t ct_overhead_own_ticks;
// What a call its handlers chose not to time costs its caller (sleds: ct_mute_levels.h).
extern uint64_t ct_overhead_untimed_ticks;

// The overhead the runtime takes out of a call of `duration` ticks with `descendants` timed calls
// and `untimed` untimed ones beneath it to decide whether it reaches the threshold: half the
// calibrated cost of each, never more than the duration. Half, because the constants may still come down (a calibration
// in a busy moment): a call dropped here would be lost for good, while one recorded here whose
// final cost falls short of the threshold is left out by the reader.
// Never more than half the duration either: a calibration taken in a busy moment can put the
// constant above what the hooks cost in a recursion's code, and a call measured at twice the
// threshold must never be dropped for that (the reader marks its cost as uncertain instead).
CT_NO_INSTRUMENT static inline uint64_t ct_overhead_of(uint64_t descendants, uint64_t untimed, uint64_t duration) {
    unsigned __int128 total = (unsigned __int128)descendants * (ct_overhead_pair_ticks / 2) +
                              (unsigned __int128)untimed * (ct_overhead_untimed_ticks / 2) + ct_overhead_own_ticks;
    return total > duration / 2 ? duration / 2 : (uint64_t)total;
}

// The feature (ct_feature.h).
//   open: repeated calibrations are due every 50 ms, and the constants go into the header (a fork
//     child's new trace, too);
//   pass: the first measurement of both constants, once per process (about half a millisecond),
//     on the drain thread, 5 ms after the trace opened: off the program's start path;
//   close (at exit, on the exiting thread): a last, short measurement.
extern const struct ct_feature ct_overhead_feature;
// Measures again, shorter, when 50 ms have passed since the last time (or `at_exit`), on an ACTIVE
// thread outside any hook's critical part: after a recorded call's pop, or at exit.
void ct_overhead_recalibrate(struct ct_thread *t, uint64_t now, bool at_exit);
// The tick when the next calibration is due (UINT64_MAX until the clock rate is known), so the
// check after every recorded call is one load and one compare.
extern _Atomic uint64_t ct_overhead_due_tick;
CT_NO_INSTRUMENT static inline void ct_overhead_maybe_recalibrate(struct ct_thread *t, uint64_t now) {
    if (CT_UNLIKELY(now >= atomic_load_explicit(&ct_overhead_due_tick, memory_order_relaxed)))
        ct_overhead_recalibrate(t, now, false);
}
// Is `fn` one of the calibration's functions? Their calls are never recorded. Their frames exist
// only while a calibration runs (`ct_overhead_running` threads), so the check is needed only then.
bool ct_overhead_is_calibration(uintptr_t fn);
extern _Atomic uint32_t ct_overhead_running;

#endif
