// Calibration of the hooks' cost (the method of TAU's overhead compensation: Malony and Shende,
// "Overhead compensation in performance profiling").
//
// The constants are measured with the real hooks, called exactly as -finstrument-functions code
// calls them (the function's address and its own return address, through the PLT), under a timed
// parent frame so the return-slot search takes its usual path. A round times a loop of plain calls
// and a loop of hooked calls; the hooks' cost per call is the difference of the two loops' fastest
// rounds. Minimums, because interrupts, preemption and a busy machine only ever add time, and
// taken of each loop separately, because the minimum of a difference would keep a round whose
// plain loop was the one slowed down. Real code (colder caches, mispredicted branches) costs at
// least as much, so the compensation errs on the side of leaving overhead in, never of taking
// the program's own time out.
//
// The constant is not constant: the first calibration (on the drain thread, as the trace opens)
// may fall in a busy moment. So it is
// repeated, shorter, at most every 50 ms on a recording thread (after a recorded call, when the
// exit hook is out of line anyway) and once at exit, and the minimums only ever go down. The
// trace keeps each call's count of timed descendants, and the reader applies the final constants
// (docs/design.md, "Overhead compensation").
#include "ct_overhead.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_mute_levels.h"
#include "ct_runtime.h"
#include "ct_sled_table.h"
#include "ct_thread.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

// Many short rounds rather than a few long ones: a round of 200 calls (about 5 us) is seldom hit
// by an interrupt.
#define CT_CALIB_CALLS 200
#define CT_CALIB_ROUNDS_FIRST 40
#define CT_CALIB_ROUNDS_AGAIN 8
// At an exit before the first measurement, after fewer than this many hooks (halves of a pair)
// on the exiting thread: CT_CALIB_ROUNDS_FEW rounds (close_trace).
#define CT_CALIB_FEW_CALLS 20000u
#define CT_CALIB_ROUNDS_FEW 2
#define CT_CALIB_WARMUP_CALLS 2000
#define CT_CALIB_EVERY_NS 50000000ull
#define CT_CALIB_FIRST_AFTER_NS 5000000ull

uint64_t ct_overhead_pair_ticks;
uint64_t ct_overhead_own_ticks;
uint64_t ct_overhead_untimed_ticks;

// The fastest rounds so far (ticks for CT_CALIB_CALLS calls), and when the last calibration began.
static _Atomic uint64_t plain_min = UINT64_MAX, hooked_min = UINT64_MAX, own_min = UINT64_MAX,
                        untimed_min = UINT64_MAX;
_Atomic uint64_t ct_overhead_due_tick = UINT64_MAX;
_Atomic uint32_t ct_overhead_running;
static uint64_t every_ticks;

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

CT_NO_INSTRUMENT static void to_header(void);

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

// The same with sleds (ct_sled_stubs.S): an empty function with its two sleds, patched like any
// module's, and one that calls ct_overhead_sled_probe between them.
void ct_calib_sled_empty(void);
void ct_calib_sled_own(void);
// And a recursion of CT_CALIB_CALLS inner calls its handlers do not time (ct_mute_levels.h), whose
// cost per inner call is what compensation takes out for each call a recording thread's handlers
// did not time.
void ct_calib_sled_nested(long calls);
static uint64_t sled_own_ticks;

// The nested function's cap of 1 (its calls inside itself are not timed), once its sleds are
// registered (ct_sled_modules.c registers the runtime's own before any module's).
CT_NO_INSTRUMENT static void fix_nested(void) {
    static _Atomic uint32_t fixed;
    if (atomic_load_explicit(&fixed, memory_order_acquire) || !ct_sled_fns) return;
    for (uint32_t n = 1; n < 64 && ct_sled_fns[n]; n++) {
        if (ct_sled_fns[n] != (uintptr_t)ct_calib_sled_nested) continue;
        ct_mute_levels_fix(n, 1);
        atomic_store_explicit(&fixed, 1, memory_order_release);
        return;
    }
}

CT_NO_INSTRUMENT void ct_overhead_sled_probe(void) {
    uint64_t now = ct_now();
    const struct ct_thread *t = &ct_self;
    uint64_t d = t->depth;
    uint64_t start = d > 0 && d <= t->cap ? t->frames[d - 1].start : now;
    sled_own_ticks = now > start ? now - start : 0;
}

CT_NO_INSTRUMENT __attribute__((noinline)) static uint64_t calib_sled_own(void) {
    ct_calib_sled_own();
    return sled_own_ticks;
}

CT_NO_INSTRUMENT static void lower(_Atomic uint64_t *min, uint64_t value) {
    uint64_t seen = atomic_load_explicit(min, memory_order_relaxed);
    while (value < seen &&
           !atomic_compare_exchange_weak_explicit(min, &seen, value, memory_order_relaxed, memory_order_relaxed)) { }
}

// Which mechanisms' calls to time: the hooks, the sleds, or both, as the program uses them (a
// program with both gets the lower cost of the two: compensation leaves overhead in rather than
// takes the program's own time out).
CT_NO_INSTRUMENT static void mechanisms(bool *hooks, bool *sleds) {
    uint32_t seen = atomic_load_explicit(&ct_rt.instrument, memory_order_relaxed);
    *sleds = (seen & CT_INSTRUMENT_SLEDS) != 0;
    *hooks = (seen & CT_INSTRUMENT_HOOKS) != 0 || !*sleds;
}

CT_NO_INSTRUMENT __attribute__((noinline)) static void calib_rounds(struct ct_thread *t, int rounds, int warmup) {
    void *site = __builtin_return_address(0);
    __cyg_profile_func_enter((void *)calib_rounds, site);
    bool hooks, sleds;
    mechanisms(&hooks, &sleds);
    // Not counted: the first calls resolve the PLT entries and fault in the runtime's pages, and
    // a CPU that was idle may still run at a low clock frequency.
    if (sleds) fix_nested();
    for (int i = 0; i < warmup; i++) {
        if (hooks) calib_hooked();
        if (sleds) ct_calib_sled_empty();
    }
    if (sleds) ct_calib_sled_nested(warmup ? 64 : 1); // counts this thread's frames by level, once
    for (int round = 0; round < rounds; round++) {
        uint64_t t0 = ct_now();
        for (int i = 0; i < CT_CALIB_CALLS; i++) calib_plain();
        uint64_t t1 = ct_now();
        lower(&plain_min, t1 - t0);
        if (hooks) {
            for (int i = 0; i < CT_CALIB_CALLS; i++) calib_hooked();
            lower(&hooked_min, ct_now() - t1);
            lower(&own_min, calib_own(t));
        }
        if (sleds) {
            uint64_t t2 = ct_now();
            for (int i = 0; i < CT_CALIB_CALLS; i++) ct_calib_sled_empty();
            uint64_t t3 = ct_now();
            lower(&hooked_min, t3 - t2);
            lower(&own_min, calib_sled_own());
            uint64_t t4 = ct_now();
            ct_calib_sled_nested(CT_CALIB_CALLS);
            lower(&untimed_min, ct_now() - t4);
        }
    }
    __cyg_profile_func_exit((void *)calib_rounds, site);
}

CT_NO_INSTRUMENT static void calibrate_uncancelled(struct ct_thread *t, int rounds, int warmup);

// Signals are blocked meanwhile (about 50 us every 50 ms, half a millisecond the first time): a
// handler running inside the calibration would nest the program's calls under the calibration's
// frames, and one that longjmps out would leave recording switched off. A pending signal is
// delivered when the mask is restored. The calibration's calls are never recorded: recording is
// off while it runs, and its functions are told apart anyway (ct_overhead_is_calibration).
// Cancellation is held off too: glibc never blocks its cancellation signal, and an asynchronous
// cancel acted on in here would end the thread with recording off, its open calls never written.
// A cancel that came meanwhile is acted on when the state is restored, last.
CT_NO_INSTRUMENT static void calibrate(struct ct_thread *t, int rounds, int warmup) {
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    calibrate_uncancelled(t, rounds, warmup);
    pthread_setcancelstate(cancel_state, NULL);
}

CT_NO_INSTRUMENT static void calibrate_uncancelled(struct ct_thread *t, int rounds, int warmup) {
    sigset_t all, old;
    sigfillset(&all);
    if (pthread_sigmask(SIG_BLOCK, &all, &old) != 0) return;
    uint32_t recording = t->recording;
    t->recording = 0;
    atomic_fetch_add_explicit(&ct_overhead_running, 1, memory_order_relaxed);
    calib_rounds(t, rounds, warmup);
    atomic_fetch_sub_explicit(&ct_overhead_running, 1, memory_order_relaxed);
    t->recording = recording;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    uint64_t plain = atomic_load_explicit(&plain_min, memory_order_relaxed);
    uint64_t hooked = atomic_load_explicit(&hooked_min, memory_order_relaxed);
    uint64_t pair = hooked > plain ? (hooked - plain) / CT_CALIB_CALLS : 0;
    uint64_t own = atomic_load_explicit(&own_min, memory_order_relaxed);
    ct_overhead_own_ticks = own < pair ? own : pair; // more would be a measuring accident
    ct_overhead_pair_ticks = pair;
    // The nested round holds one timed call (the outer one) besides its untimed inner calls.
    uint64_t nested = atomic_load_explicit(&untimed_min, memory_order_relaxed);
    if (nested != UINT64_MAX && nested > plain + pair) {
        uint64_t untimed = (nested - plain - pair) / CT_CALIB_CALLS;
        ct_overhead_untimed_ticks = untimed < pair ? untimed : pair; // never more than a timed call's
    }
    to_header();
}

CT_NO_INSTRUMENT bool ct_overhead_is_calibration(uintptr_t fn) {
    return fn == (uintptr_t)calib_hooked || fn == (uintptr_t)calib_own || fn == (uintptr_t)calib_rounds ||
           fn == (uintptr_t)ct_calib_sled_empty || fn == (uintptr_t)ct_calib_sled_own ||
           fn == (uintptr_t)ct_calib_sled_nested;
}

CT_NO_INSTRUMENT static void schedule(void) {
    if (ct_rt.ticks_per_ns <= 0) return;
    every_ticks = (uint64_t)(ct_rt.ticks_per_ns * (double)CT_CALIB_EVERY_NS);
    atomic_store_explicit(&ct_overhead_due_tick, ct_now() + every_ticks, memory_order_relaxed);
}

CT_NO_INSTRUMENT static void recalibrate(struct ct_thread *t, uint64_t now, bool at_exit, int rounds);

CT_NO_INSTRUMENT void ct_overhead_recalibrate(struct ct_thread *t, uint64_t now, bool at_exit) {
    recalibrate(t, now, at_exit, CT_CALIB_ROUNDS_AGAIN);
}

CT_NO_INSTRUMENT static void recalibrate(struct ct_thread *t, uint64_t now, bool at_exit, int rounds) {
    // Near the stack's capacity the calibration's calls would take the cheaper beyond-capacity
    // path, and the minimums would come down for good.
    if (t->state != CT_THREAD_ACTIVE || t->depth + 4 > t->cap) return;
    uint64_t due = atomic_load_explicit(&ct_overhead_due_tick, memory_order_relaxed);
    if (!at_exit && now < due) return;
    // The thread that moves the due tick on calibrates; the others (and this thread's own exit
    // hooks inside the calibration, at threshold 0) find it in the future and skip.
    uint64_t next = (at_exit ? ct_now() : now) + every_ticks;
    if (!atomic_compare_exchange_strong_explicit(&ct_overhead_due_tick, &due, next, memory_order_relaxed,
                                                 memory_order_relaxed))
        return;
    calibrate(t, rounds, 0);
}

CT_NO_INSTRUMENT static void to_header(void) {
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    h->overhead_pair_ticks = ct_overhead_pair_ticks;
    h->overhead_own_ticks = ct_overhead_own_ticks;
    h->overhead_untimed_ticks = (uint32_t)ct_overhead_untimed_ticks;
}

// The first measurement runs in a pass of the drain thread, which keeps a stack of calls for it
// but never records: the program's start path does not wait for it (it was half a millisecond of
// a hello world's start-up). Not before the trace has been open for CT_CALIB_FIRST_AFTER_NS: a
// program that ends sooner would wait at exit for the drain thread to finish it, and has the
// exit's measurement. Until then the constants are 0 and the threshold decisions take nothing out
// (a call recorded in excess is not lost: the reader applies the final constants).
static _Atomic uint32_t first_done;
static uint64_t opened_ns;

CT_NO_INSTRUMENT static void open_trace(struct ct_file_header *h) {
    (void)h;
    opened_ns = ct_monotonic_ns();
    schedule();
    to_header();
}

CT_NO_INSTRUMENT static void first_calibration(void) {
    if (atomic_load_explicit(&first_done, memory_order_relaxed) || ct_monotonic_ns() - opened_ns < CT_CALIB_FIRST_AFTER_NS)
        return;
    atomic_store_explicit(&first_done, 1, memory_order_relaxed);
    if (ct_thread_attach_unrecorded(&ct_self)) calibrate(&ct_self, CT_CALIB_ROUNDS_FIRST, CT_CALIB_WARMUP_CALLS);
}

// A last measurement at exit: the reader applies the lowest one to every call. Not in a process
// that ends before any call can have lasted the threshold (a hello world at 10 ms): it records
// none, at exit either, and the measurement was a tenth of its start-up cost. A process that ends
// before the first measurement (a short one at threshold 0) with few calls made gets a shorter
// one: what the constants can move is the calls' count times their error, and the eight rounds
// were 0.2 ms of a hello world's start-up at threshold 0. One that made fewer calls than a round
// of the measurement makes gets none: the hooks it would correct cost less in all (200 calls, some
// 10 us) than the measurement itself, and `info` says the trace is not compensated.
CT_NO_INSTRUMENT static void close_trace(void) {
    if (ct_now() - ct_rt.first_call_tick < ct_threshold_ticks) return;
    bool first = atomic_load_explicit(&first_done, memory_order_relaxed);
    if (!first && ct_self.calls < 2 * CT_CALIB_CALLS) return;
    bool few = !first && ct_self.calls < CT_CALIB_FEW_CALLS;
    recalibrate(&ct_self, 0, true, few ? CT_CALIB_ROUNDS_FEW : CT_CALIB_ROUNDS_AGAIN);
}

const struct ct_feature ct_overhead_feature = {
    .name = "overhead",
    .open = open_trace,
    .pass = first_calibration,
    .close = close_trace,
};
