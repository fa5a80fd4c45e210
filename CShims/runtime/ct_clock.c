#include "ct_clock.h"
#include "ct_syscall.h"

#include <stdatomic.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <sys/prctl.h>

bool ct_clock_is_tsc = false;
bool ct_clock_needs_syscall = false;

// Set when the TSC was given up after calibration: ticks = base_tick + (ns - base_ns) * rate.
static struct {
    uint64_t base_tick, base_ns;
    double ticks_per_ns;
} emulated;

CT_NO_INSTRUMENT CT_SLOW_PATH uint64_t ct_now_without_tsc(void) {
    uint64_t ns = ct_monotonic_ns();
    if (emulated.ticks_per_ns == 0) return ns;
    return emulated.base_tick + (uint64_t)((double)(ns - emulated.base_ns) * emulated.ticks_per_ns);
}

CT_NO_INSTRUMENT void ct_clock_stop_tsc(uint64_t tick0, uint64_t ns0) {
#if defined(__x86_64__)
    if (!ct_clock_is_tsc) return;
    // A fresh pair now, while rdtsc still works, and the rate over the whole run since calibration
    // point 0 (a short measurement here would be at the mercy of one preemption).
    uint64_t tick, ns;
    ct_clock_pair(&tick, &ns);
    if (tick0 == 0 || ns <= ns0 + 1000000 || tick <= tick0) { // too early for a long baseline
        tick0 = tick;
        ns0 = ns;
        while (ct_monotonic_ns() - ns0 < 2000000) { }
        ct_clock_pair(&tick, &ns);
    }
    emulated.ticks_per_ns = ns > ns0 && tick > tick0 ? (double)(tick - tick0) / (double)(ns - ns0) : 1.0;
    emulated.base_tick = tick;
    emulated.base_ns = ns;
    atomic_signal_fence(memory_order_seq_cst);
    ct_clock_needs_syscall = true;
    ct_clock_is_tsc = false;
#else
    (void)tick0;
    (void)ns0;
#endif
}

CT_NO_INSTRUMENT static bool ct_tsc_is_invariant(void) {
#if defined(__x86_64__)
    // A process started with the TSC disabled (PR_TSC_SIGSEGV is inherited) would die on rdtsc.
    int mode = 0;
    // A raw system call: prctl() would be the runtime's own wrapper (ct_wrappers.c).
    if (ct_syscall(SYS_prctl, PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode == PR_TSC_SIGSEGV) {
        ct_clock_needs_syscall = true;
        return false;
    }
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1; // "Invariant TSC": constant rate across P-, C- and T-states
#else
    return false;
#endif
}

// Reads the tick counter between two CLOCK_MONOTONIC reads and keeps the tightest of a few tries, so
// that the pair is off by at most half of the (small) bracket.
CT_NO_INSTRUMENT void ct_clock_pair(uint64_t *tick, uint64_t *ns) {
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = ct_monotonic_ns();
        uint64_t t = ct_now();
        uint64_t b = ct_monotonic_ns();
        if (b - a < best_gap) {
            best_gap = b - a;
            *tick = t;
            *ns = a + (b - a) / 2;
        }
    }
}

CT_NO_INSTRUMENT void ct_clock_start(uint64_t *tick0, uint64_t *ns0, uint64_t *realtime0) {
    ct_clock_is_tsc = ct_tsc_is_invariant();
    struct timespec rt;
    ct_clock_pair(tick0, ns0);
    ct_clock_gettime(CLOCK_REALTIME, &rt);
    *realtime0 = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
}

CT_NO_INSTRUMENT bool ct_clock_ticks_are_tsc(void) { return ct_clock_is_tsc || emulated.ticks_per_ns != 0; }

CT_NO_INSTRUMENT double ct_clock_rate(uint64_t *tick0, uint64_t *ns0, uint64_t *tick1, uint64_t *ns1) {
    if (emulated.ticks_per_ns != 0) { // the TSC was given up (perhaps by the parent of this fork child)
        ct_clock_pair(tick1, ns1);
        if (*ns1 <= *ns0 || *tick1 <= *tick0) {
            *tick0 = *tick1;
            *ns0 = *ns1;
        }
        return emulated.ticks_per_ns;
    }
    if (!ct_clock_is_tsc) {
        *tick1 = *tick0;
        *ns1 = *ns0;
        return 1.0;
    }
    // 100 us gives a rate good to a few 1e-4, plenty to compare durations with a threshold (point 0
    // was taken at start-up, so this is usually long past); exit takes point 1 again, over the
    // whole run, for the times the trace reports.
    while (ct_monotonic_ns() - *ns0 < 100000) { }
    ct_clock_pair(tick1, ns1);
    if (*ns1 <= *ns0 || *tick1 <= *tick0) { // a TSC that does not move: do not trust it
        ct_clock_is_tsc = false;
        ct_clock_pair(tick0, ns0);
        *tick1 = *tick0;
        *ns1 = *ns0;
        return 1.0;
    }
    return (double)(*tick1 - *tick0) / (double)(*ns1 - *ns0);
}
