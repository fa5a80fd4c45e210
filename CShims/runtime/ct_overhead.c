// Calibration of the hooks' cost (the method of TAU's overhead compensation: Malony and Shende,
// "Overhead compensation in performance profiling").
//
// The constants are measured with the real hooks, called exactly as -finstrument-functions code
// calls them (the function's address and its own return address), under a timed parent frame so
// the return-slot search takes its usual path. Each round times a loop of plain calls and a loop
// of hooked calls; the difference per call is the cost one timed call adds to its caller. The
// minimum over the rounds is kept: interrupts and preemption only ever add time, and a call in
// real code (colder caches, mispredicted branches) costs at least as much, so the compensation
// errs on the side of leaving overhead in rather than taking real work out.
#include "ct_overhead.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_thread.h"

#include <stdatomic.h>

#define CT_CALIB_CALLS 1000
#define CT_CALIB_ROUNDS 7

uint64_t ct_overhead_pair_ticks;
uint64_t ct_overhead_own_ticks;

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

CT_NO_INSTRUMENT __attribute__((noinline)) static void calib_plain(void) {
    __asm__ volatile("" ::: "memory");
}

// What the compiler makes of an empty instrumented function.
CT_NO_INSTRUMENT __attribute__((noinline)) static void calib_hooked(void) {
    void *site = __builtin_return_address(0);
    __cyg_profile_func_enter((void *)calib_hooked, site);
    __asm__ volatile("" ::: "memory");
    __cyg_profile_func_exit((void *)calib_hooked, site);
}

// The part of an empty call's own hooks between its two clock reads: from the enter hook's read
// (the frame's start) to just before the exit hook is called, whose read follows within a few
// instructions.
CT_NO_INSTRUMENT __attribute__((noinline)) static uint64_t calib_own(struct ct_thread *t) {
    void *site = __builtin_return_address(0);
    __cyg_profile_func_enter((void *)calib_own, site);
    __asm__ volatile("" ::: "memory");
    uint64_t now = ct_now();
    uint64_t d = t->depth;
    uint64_t start = d > 0 && d <= t->cap ? t->frames[d - 1].start : now;
    __cyg_profile_func_exit((void *)calib_own, site);
    return now > start ? now - start : 0;
}

CT_NO_INSTRUMENT __attribute__((noinline)) static void calib_rounds(struct ct_thread *t, uint64_t *pair,
                                                                    uint64_t *own) {
    void *site = __builtin_return_address(0);
    __cyg_profile_func_enter((void *)calib_rounds, site);
    *pair = *own = UINT64_MAX;
    for (int round = 0; round < CT_CALIB_ROUNDS; round++) {
        uint64_t t0 = ct_now();
        for (int i = 0; i < CT_CALIB_CALLS; i++) calib_plain();
        uint64_t t1 = ct_now();
        for (int i = 0; i < CT_CALIB_CALLS; i++) calib_hooked();
        uint64_t t2 = ct_now();
        uint64_t plain = t1 - t0, hooked = t2 - t1;
        uint64_t per_call = hooked > plain ? (hooked - plain) / CT_CALIB_CALLS : 0;
        if (per_call < *pair) *pair = per_call;
        for (int i = 0; i < 16; i++) {
            uint64_t o = calib_own(t);
            if (o < *own) *own = o;
        }
    }
    __cyg_profile_func_exit((void *)calib_rounds, site);
}

CT_NO_INSTRUMENT void ct_overhead_calibrate(struct ct_thread *t) {
    static _Atomic uint32_t done;
    if (atomic_exchange_explicit(&done, 1, memory_order_relaxed)) return;
    // The calibration's own calls must not become records (at threshold 0 they would).
    uint32_t recording = t->recording;
    t->recording = 0;
    uint64_t pair, own;
    calib_rounds(t, &pair, &own);
    t->recording = recording;
    // An own part larger than the whole pair would be a measuring accident.
    if (own > pair) own = pair;
    ct_overhead_own_ticks = own;
    ct_overhead_pair_ticks = pair;
    ct_overhead_to_header();
}

CT_NO_INSTRUMENT void ct_overhead_to_header(void) {
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    h->overhead_pair_ticks = ct_overhead_pair_ticks;
    h->overhead_own_ticks = ct_overhead_own_ticks;
}
