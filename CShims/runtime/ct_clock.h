// The clock. On x86-64 with an invariant TSC (constant rate, does not stop in idle states) a call is
// timed with two `rdtsc` reads, a few ns each and no syscall; elsewhere we fall back to
// clock_gettime(CLOCK_MONOTONIC) through the vDSO. Ticks are converted to ns only when reading the
// trace, with two calibration points against CLOCK_MONOTONIC kept in the file header.
#ifndef CT_CLOCK_H
#define CT_CLOCK_H

#include "ct_base.h"
#include "ct_syscall.h"
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

// Ticks are read with rdtsc (set at start-up; cleared when the program forbids the TSC).
extern bool ct_clock_is_tsc;
// Set once the program has disabled the TSC: the vDSO's clock_gettime reads it too, so from then on
// only the system call will do.
extern bool ct_clock_needs_syscall;

// clock_gettime, by system call once the TSC is forbidden. Every clock read of the runtime's goes
// through here.
CT_NO_INSTRUMENT static inline void ct_clock_gettime(clockid_t clock, struct timespec *ts) {
    if (CT_UNLIKELY(ct_clock_needs_syscall)) ct_syscall(SYS_clock_gettime, clock, ts);
    else clock_gettime(clock, ts);
}

CT_NO_INSTRUMENT static inline uint64_t ct_monotonic_ns(void) {
    struct timespec ts;
    ct_clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// clock_gettime, for machines without an invariant TSC (in ns), or after the program disabled the
// TSC (then in TSC ticks, from the rate measured before); out of line, to keep the hooks small.
CT_SLOW_PATH uint64_t ct_now_without_tsc(void);

// The program is about to forbid `rdtsc` (prctl(PR_SET_TSC, PR_TSC_SIGSEGV)): from now on the
// clock is CLOCK_MONOTONIC converted to TSC ticks at the rate measured since calibration point 0
// (tick0, ns0), so times already taken stay comparable.
void ct_clock_stop_tsc(uint64_t tick0, uint64_t ns0);

CT_NO_INSTRUMENT static inline uint64_t ct_now(void) {
#if defined(__x86_64__)
    if (CT_LIKELY(ct_clock_is_tsc)) return __rdtsc();
#endif
    return ct_now_without_tsc();
}

// Chooses the clock and takes calibration point 0 (at start-up: cheap).
void ct_clock_start(uint64_t *tick0, uint64_t *ns0, uint64_t *realtime0);
// Takes calibration point 1, at least a tenth of a millisecond after point 0, so that thresholds
// can be converted to ticks. Returns ticks per ns.
double ct_clock_rate(uint64_t *tick0, uint64_t *ns0, uint64_t *tick1, uint64_t *ns1);

// Ticks are TSC ticks (read from the TSC, or converted from CLOCK_MONOTONIC once it was forbidden).
bool ct_clock_ticks_are_tsc(void);

// A fresh (tick, CLOCK_MONOTONIC ns) pair, read as close together as we can.
void ct_clock_pair(uint64_t *tick, uint64_t *ns);

#endif
