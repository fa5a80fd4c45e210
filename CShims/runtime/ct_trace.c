// The trace of this process (see ct_trace.h): opened by the first recording hook, closed at exit,
// forgotten in a fork child. The features' part in each moment is theirs (ct_feature.h): open and
// close here, the passes on the drain thread, after-fork in ct_start.c.
#include "ct_trace.h"
#include "ct_calls.h"
#include "ct_clock.h"
#include "ct_drain.h"
#include "ct_raw_exit.h"
#include "ct_feature.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_event_stream.h"
#include "ct_ring.h"
#include "ct_runtime.h"
#include "ct_signals.h"
#include "ct_sled_table.h"
#include "ct_syscall.h"

#include <linux/futex.h>
#include <unistd.h>

enum { TRACE_CLOSED, TRACE_OPENING, TRACE_OPEN, TRACE_FAILED };
static _Atomic uint32_t trace_state;   // futex word

CT_NO_INSTRUMENT bool ct_trace_is_open(void) {
    return atomic_load_explicit(&trace_state, memory_order_acquire) == TRACE_OPEN;
}

// The rate (calibration point 1) and the threshold in ticks, just before the first call is timed:
// a process that never records never spends the time.
CT_NO_INSTRUMENT static void calibrate_clock(void) {
    ct_rt.ticks_per_ns = ct_clock_rate(&ct_rt.calib_tick0, &ct_rt.calib_ns0, &ct_rt.calib_tick1, &ct_rt.calib_ns1);
    // The start-up calibration is good to about 1e-4, far below a threshold's meaning.
    double ticks = (double)ct_rt.settings.threshold * ct_rt.ticks_per_ns;
    ct_threshold_ticks = ticks < 1.0 ? 0 : (uint64_t)ticks;
}

CT_NO_INSTRUMENT static void fill_header(struct ct_file_header *h) {
    h->threshold_ns = ct_rt.settings.threshold;
    h->threshold_ticks = ct_threshold_ticks;
    h->calib_tick0 = ct_rt.calib_tick0;
    h->calib_ns0 = ct_rt.calib_ns0;
    h->calib_tick1 = ct_rt.calib_tick1;
    h->calib_ns1 = ct_rt.calib_ns1;
    h->realtime_ns0 = ct_rt.realtime_ns0;
    h->init_tick = ct_rt.init_tick;
    h->main_tick = atomic_load_explicit(&ct_rt.main_tick, memory_order_relaxed);
    h->main_addr = atomic_load_explicit(&ct_rt.main_addr, memory_order_relaxed);
    h->frame_interval_ns = ct_rt.settings.frame;
    if (ct_clock_ticks_are_tsc()) atomic_fetch_or_explicit(&h->flags, CT_FILE_TSC, memory_order_relaxed);
    atomic_fetch_or_explicit(&h->instrument, atomic_load_explicit(&ct_rt.instrument, memory_order_relaxed),
                             memory_order_relaxed);
    atomic_fetch_or_explicit(&h->lost, atomic_load_explicit(&ct_rt.lost, memory_order_relaxed), memory_order_relaxed);
    ct_sled_table_to_header(h);
}

// ct_trace_close's steps before the drain thread stops (the end, a better calibration, the last
// marks) and after (the metadata stream sealed, the closed flag); also the drain thread's own when
// it closes the trace itself (below), the features closed first (ct_raw_exit_poll).
static void close_begin(uint64_t end_tick);
static void close_end(void);

// The drain thread's watch over the program's threads (ct_raw_exit.h): when none is left, the
// trace is closed here, as at exit, and the process ends with the status its last thread gave.
CT_NO_INSTRUMENT static enum ct_program_state watch_program(int *status) {
    enum ct_program_state state = ct_raw_exit_poll(status);
    if (state == CT_PROGRAM_GONE) close_begin(ct_now());
    return state;
}

CT_NO_INSTRUMENT static void end_process(int status) {
    close_end();
    for (;;) ct_syscall(SYS_exit, status);
}

// The exiting thread's stream, whose final THREAD record the drain thread writes for
// ct_trace_exit_quickly.
static struct { uint32_t stream; uint64_t tid; bool restricted; } exiting;

CT_NO_INSTRUMENT static void finish_for_exit(void) {
    if (exiting.restricted) {
        uint64_t now = ct_now();
        ct_calls_close_main_from_elsewhere(now);
        close_begin(now);
    } else {
        ct_meta_thread_final(exiting.stream, exiting.tid);
    }
    close_end();
}

static const struct ct_drain_watch program_watch = { watch_program, end_process, finish_for_exit };

CT_NO_INSTRUMENT bool ct_trace_open(void) {
    uint32_t s = atomic_load_explicit(&trace_state, memory_order_acquire);
    if (s == TRACE_OPEN) return true;
    if (s == TRACE_FAILED || !ct_rt.enabled) return false;
    if (s == TRACE_CLOSED &&
        atomic_compare_exchange_strong_explicit(&trace_state, &s, TRACE_OPENING, memory_order_acq_rel,
                                                memory_order_acquire)) {
        calibrate_clock();
        struct ct_file_header *h = NULL;
        if (ct_drain_start(&ct_rt.settings, &program_watch)) {
            // What the process and module records say is read while the drain thread creates the
            // file (on another core, the two overlap: "Start-up" in docs/design.md).
            struct ct_process_facts *process = ct_meta_process_gather();
            struct ct_module_scan *modules = ct_meta_modules_gather();
            h = ct_drain_wait_open();
            if (h) fill_header(h);
            // Written by the opening thread before it records anything: a program killed a moment
            // later still has the names of its calls. Cheap: the drain thread has taken the
            // stream's first block and paid its first page fault (ct_meta_start). (On the drain
            // thread they cost more: its first malloc makes glibc an arena for it, 0.025 ms.)
            // At a threshold the ring has no spare yet: records that may not fit the metadata
            // block wait for them here, holding no lock (the metadata writer never waits).
            if (h && ct_meta_room() < ct_meta_process_bytes(process) + ct_meta_modules_bytes(modules))
                ct_ring_wait_for_first();
            ct_meta_process_write(process);
            ct_meta_modules_write(modules);
        }
        if (h) {
            ct_signals_install();
            ct_features_open(h);
        }
        atomic_store_explicit(&trace_state, h ? TRACE_OPEN : TRACE_FAILED, memory_order_release);
        ct_syscall(SYS_futex, &trace_state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
        return h != NULL;
    }
    // Another thread is opening it: wait for the outcome (bounded, as the opener's wait is).
    for (int i = 0; i < 100 && atomic_load_explicit(&trace_state, memory_order_acquire) == TRACE_OPENING; i++) {
        struct timespec ts = { 0, 20 * 1000000 };
        ct_syscall(SYS_futex, &trace_state, FUTEX_WAIT_PRIVATE, TRACE_OPENING, &ts, NULL, 0);
    }
    return atomic_load_explicit(&trace_state, memory_order_acquire) == TRACE_OPEN;
}

CT_NO_INSTRUMENT static void close_begin(uint64_t end_tick) {
    struct ct_file_header *h = ct_header_get();
    uint64_t tick, ns;
    ct_clock_pair(&tick, &ns);
    if (ct_clock_ticks_are_tsc() && ns > h->calib_ns0 + 1000000) { // a longer baseline gives a better rate
        h->calib_tick1 = tick;
        h->calib_ns1 = ns;
    }
    h->end_tick = end_tick;
}

CT_NO_INSTRUMENT static void close_end(void) {
    ct_event_stream_close();
    ct_meta_close();
    atomic_fetch_or_explicit(&ct_header_get()->flags, CT_FILE_CLOSED, memory_order_release);
}

CT_NO_INSTRUMENT void ct_trace_close(void) {
    if (!ct_trace_is_open() || !ct_header_get()) return;
    ct_features_close();    // the last calibration (on this thread), the last marks
    uint64_t now = ct_now();
    ct_calls_close_open(&ct_self, now);
    ct_calls_close_main_from_elsewhere(now);
    ct_stream_seal(&ct_self.stream);
    ct_meta_thread_final(ct_self.stream.id, ct_self.stream.tid);
    close_begin(now);
    ct_drain_stop_at_exit();    // the features' last writes, the last module scan, the unused tail cut off
    close_end();
}

// _exit may come from a signal handler that cut into the runtime, or into malloc, on this thread:
// only async-signal-safe steps here and no lock. This thread records its open calls (and main's,
// as a crash does) and the end; the drain thread does the rest of a close (the features' last
// writes, the last module scan, the tail cut off, the metadata sealed, the closed flag) while this
// thread waits for it, a second at most, as exit's stop does: a drain thread blocked on a lock
// this thread holds leaves the trace not closed rather than the process hung. The last
// calibration on this thread is left out (ct_features_close runs the hooks).
CT_NO_INSTRUMENT void ct_trace_exit_quickly(void) {
    if (!ct_trace_is_open() || !ct_header_get()) return;
    uint64_t now = ct_now();
    ct_calls_close_open(&ct_self, now);
    ct_calls_close_main_from_elsewhere(now);
    ct_stream_seal(&ct_self.stream);
    exiting.stream = ct_self.stream.id;
    exiting.tid = ct_self.stream.tid;
    close_begin(now);
    ct_drain_finish(1000000000ull);
}

// About a second of pause instructions (10 to 140 cycles each): the drain thread's next pass comes
// within 8 ms, unless it is held up.
#define CT_RESTRICTED_CLOSE_SPINS (1ull << 25)

CT_NO_INSTRUMENT void ct_trace_close_restricted(void) {
    if (!ct_trace_is_open() || !ct_header_get()) return;
    exiting.restricted = true;
    ct_drain_finish_unwoken(CT_RESTRICTED_CLOSE_SPINS);
}

CT_NO_INSTRUMENT void ct_trace_forget(void) {
    ct_meta_forget();
    ct_drain_forget();
    // A trace that could not be opened in the parent (an unwritable directory) would fail the
    // same way in the child: one warning is enough.
    if (atomic_load_explicit(&trace_state, memory_order_relaxed) != TRACE_FAILED)
        atomic_store_explicit(&trace_state, TRACE_CLOSED, memory_order_relaxed);
}
