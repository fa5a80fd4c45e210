// The hang watchdog, and why it is done this way:
//
// - A hang: the main thread is inside a call (depth > 0) and has made no hook activity (its call
//   count `calls` and its depth have not changed) for at least CALLTRACE_HANG. A call that computes
//   without calling a timed function (a loop calling muted or uninstrumented code only) counts too:
//   the main thread is as unresponsive then as in a blocking wait.
// - The drain thread is the watchdog. Its passes come at most 8 ms apart anyway (ct_drain.c), so a
//   pass adds two loads and a compare, no thread and no wake-up of its own; the hooks do nothing
//   more at all.
//   Activity is seen as a change between passes, so a hang's start is known to a pass (1-8 ms;
//   while the ring is starved of space, 100 ms).
// - Once per hang: after a capture the watchdog waits for the main thread's activity to change
//   before it arms again.
// - The capture itself (a signal, its handler, libunwind) is ct_hang_capture.c's. The handler only
//   fills a buffer; the record is written here, by the drain thread, through ct_event_stream.c
//   (whose writers take a lock a handler must not take). When no signal may be sent (a wait a
//   signal would cut short, a signal the program owns), the record holds the syscall's pc and the
//   open instrumented calls, flagged partial.
#include "ct_hang.h"
#include "ct_clock.h"
#include "ct_hang_capture.h"
#include "ct_header.h"
#include "ct_event_stream.h"
#include "ct_runtime.h"
#include "ct_thread.h"
#include "ct_writer.h"

#include <signal.h>
#include <string.h>

// A handler that has not answered after this long (the main thread blocks the signal after all,
// or the machine is starved) is given up on, and the hang counted as dropped.
#define CT_HANG_ANSWER_NS 1000000000ull

// Set once the state below is ready (release), read by the drain thread first (acquire).
static _Atomic bool watching;

static struct {
    uint64_t threshold_ticks;
    struct ct_thread *main;      // the main thread as last seen, its depth and call count...
    uint64_t depth, calls;
    uint64_t since;              // ...and the tick they were first seen at
    bool armed;                  // no capture yet for this stretch of inactivity
    bool asked;                  // a capture signal was sent, and not answered yet
    uint64_t asked_ns;
    uint32_t stream;
    uint64_t tid;
} W;

CT_NO_INSTRUMENT static void set_flag(struct ct_file_header *h, uint32_t flag) {
    if (!(atomic_load_explicit(&h->hang_flags, memory_order_relaxed) & flag))
        atomic_fetch_or_explicit(&h->hang_flags, flag, memory_order_relaxed);
}

CT_NO_INSTRUMENT static void start(struct ct_file_header *h) {
    atomic_store_explicit(&watching, false, memory_order_relaxed);
    memset(&W, 0, sizeof W);
    h->hang_threshold_ns = ct_rt.settings.hang;
    if (ct_rt.settings.hang == 0) return;
    double ticks = (double)ct_rt.settings.hang * ct_rt.ticks_per_ns;
    W.threshold_ticks = ticks < 1.0 ? 1 : (uint64_t)ticks;
    uint32_t flags = ct_hang_capture_setup();
    if (flags) set_flag(h, flags);
    atomic_store_explicit(&watching, true, memory_order_release);
}

CT_NO_INSTRUMENT static void forget(void) { atomic_store_explicit(&watching, false, memory_order_relaxed); }

CT_NO_INSTRUMENT static void write_record(struct ct_file_header *h, const struct ct_hang_stack *st) {
    uint8_t body[10 * 10 + 10 * CT_HANG_MAX_PCS], *q = body;
    q = ct_put_varint(q, W.stream);
    q = ct_put_varint(q, W.tid);
    q = ct_put_varint(q, st->tick);
    q = ct_put_varint(q, st->start);
    q = ct_put_varint(q, st->fn);
    q = ct_put_varint(q, st->depth);
    q = ct_put_varint(q, st->tick > W.since ? st->tick - W.since : 0);
    q = ct_put_varint(q, st->flags);
    q = ct_put_varint(q, st->n);
    for (uint32_t i = 0; i < st->n; i++) q = ct_put_varint(q, st->pcs[i]);
    ct_event_stream_write(CT_REC_HANG, body, (size_t)(q - body));
    atomic_fetch_add_explicit(&h->hang_count, 1, memory_order_relaxed);
}

// Without a signal: the syscall's pc (when /proc gave one), then the open instrumented calls,
// innermost first, read from the main thread's stack while it goes on (or not) meanwhile.
CT_NO_INSTRUMENT static void write_partial(struct ct_file_header *h, struct ct_thread *m,
                                           const struct ct_syscall_state *s) {
    struct ct_hang_stack st = { .tick = ct_now(), .flags = CT_HANG_REC_PARTIAL };
    if (s && s->in_syscall && s->pc) st.pcs[st.n++] = s->pc - 1;  // inside the syscall instruction
    uint64_t depth = *(volatile uint64_t *)&m->depth;
    if (depth > m->cap) depth = m->cap;
    if (depth == 0) return;
    const volatile struct ct_frame *inner = &m->frames[depth - 1];
    st.fn = inner->fn;
    st.start = inner->start;
    st.depth = depth - 1;
    for (uint64_t i = depth; i > 0 && st.n < CT_HANG_MAX_PCS; i--)
        st.pcs[st.n++] = ((const volatile struct ct_frame *)&m->frames[i - 1])->fn;
    write_record(h, &st);
    set_flag(h, CT_HANG_PARTIAL);
}

CT_NO_INSTRUMENT static void capture(struct ct_file_header *h, struct ct_thread *m) {
    W.stream = m->stream.id;
    W.tid = m->stream.tid;
    struct ct_syscall_state s;
    if (!ct_hang_read_syscall(W.tid, &s)) {
        write_partial(h, m, NULL);  // where it waits is unknown: a signal might cut the wait short
        return;
    }
    enum ct_hang_resume resume = ct_hang_resume_for(&s);
    uint32_t problem = resume == CT_RESUME_IMPOSSIBLE ? 0 : ct_hang_capture_problem(W.tid);
    if (problem & ~CT_HANG_PARTIAL) set_flag(h, problem);  // PARTIAL: write_partial's own
    if (resume == CT_RESUME_IMPOSSIBLE || problem || !ct_hang_capture_ask(ct_rt.pid, W.tid, &s, resume)) {
        write_partial(h, m, &s);
        return;
    }
    W.asked = true;
    W.asked_ns = ct_monotonic_ns();
}

// An ask in flight: write its answer, or give up on it after a while.
CT_NO_INSTRUMENT static void collect(struct ct_file_header *h) {
    struct ct_hang_stack st;
    if (ct_hang_capture_poll(&st)) {
        W.asked = false;
        if (st.depth || st.fn) write_record(h, &st); // else the main thread had left every call
        return;
    }
    if (ct_monotonic_ns() - W.asked_ns < CT_HANG_ANSWER_NS || !ct_hang_capture_abandon()) return;
    W.asked = false;
    set_flag(h, CT_HANG_DROPPED);
}

CT_NO_INSTRUMENT static uint64_t next_due_ns(void) {
    if (!atomic_load_explicit(&watching, memory_order_acquire) || !W.asked) return 0;
    return ct_monotonic_ns() + 2000000ull;
}

CT_NO_INSTRUMENT static void check(void) {
    if (!atomic_load_explicit(&watching, memory_order_acquire)) return;
    struct ct_file_header *h = ct_header_get();
    if (!h) return;
    if (W.asked) {
        collect(h);
        return;
    }
    struct ct_thread *m = ct_thread_main();
    if (!m || !m->recording) {
        W.main = NULL;
        return;
    }
    // Read while the main thread runs: a torn or stale value only delays the next capture a pass.
    uint64_t depth = *(volatile uint64_t *)&m->depth;
    uint64_t calls = *(volatile uint64_t *)&m->calls;
    uint64_t now = ct_now();
    if (m != W.main || depth != W.depth || calls != W.calls || depth == 0) {
        W.main = m;
        W.depth = depth;
        W.calls = calls;
        W.since = now;
        W.armed = true;
        return;
    }
    if (!W.armed) return;
    // libunwind is loaded once a capture is near, so that a program that never hangs never pays
    // for it; a capture waits for it up to half the threshold more, then goes without.
    if (now - W.since >= W.threshold_ticks / 2) ct_hang_capture_prepare();
    if (now - W.since < W.threshold_ticks) return;
    if (ct_hang_capture_preparing() && now - W.since < W.threshold_ticks + W.threshold_ticks / 2) return;
    W.armed = false;
    capture(h, m);
}

const struct ct_feature ct_hang_feature = {
    .name = "hang",
    .open = start,
    .pass = check,
    .next_due_ns = next_due_ns,
    .after_fork = forget,
};
