// Calls the hooks did not end the usual way (see ct_calls.h).
#include "ct_calls.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_mute.h"

#include <time.h>

CT_NO_INSTRUMENT void ct_calls_close(struct ct_thread *t, uint64_t depth, uint64_t new_depth, uint64_t end,
                                    unsigned flags) {
    uint64_t jump = flags == CT_CALL_UNWOUND ? t->jump_tick : 0;
    while (depth > new_depth) {
        depth--;
        struct ct_frame f = t->frames[depth];
        atomic_signal_fence(memory_order_seq_cst);
        t->depth = depth;
        atomic_signal_fence(memory_order_seq_cst);
        uint64_t stop = jump > f.start ? jump : end;
        unsigned how = flags;
        if (CT_UNLIKELY(t->tail_depth == depth + 1)) {
            // It left by a tail call (a sled's: ct_sled_hooks.c). With no call made since, it
            // ended there, as any call that returns; otherwise its tail callee ran on, up to now.
            t->tail_depth = 0;
            if (t->calls == t->tail_calls) {
                stop = t->tail_tick;
                how = 0;
            }
        }
        uint64_t duration = stop > f.start ? stop - f.start : 0;
        if (duration >= ct_threshold_ticks && t->recording) {
            // A muted function's frame whose exit hook went while it was open. Muting lets exits go
            // only once no frame can be there (ct_mute.c); should one be, when it ended is not
            // known: counted under its own reason, not recorded.
            if (ct_mute_exit_lost(f.fn)) ct_header_drop_muted_call();
            else ct_calls_record(t, &f, depth, duration, how);
        }
        // Its exit hook never ran: its callers count half of its pair (after its own record,
        // which counts from its own entry on).
        if (how == CT_CALL_UNWOUND) t->calls--;
    }
    t->jump_tick = 0;
}

CT_NO_INSTRUMENT void ct_calls_close_open(struct ct_thread *t, uint64_t end) {
    if (t->state != CT_THREAD_ACTIVE) return;
    uint64_t depth = t->depth > t->cap ? t->cap : t->depth;
    t->jump_tick = 0;
    ct_calls_close(t, depth, 0, end, CT_CALL_UNFINISHED);
    t->recording = 0;
}

CT_NO_INSTRUMENT void ct_calls_note_jump(uintptr_t caller_sp) {
    struct ct_thread *t = &ct_self;
    if (t->state != CT_THREAD_ACTIVE) return;
    t->stream.jumps++;
    uint64_t now = ct_now();
    // From another stack nothing on this one can be judged by address: the next hooks will tell.
    if (!ct_on_own_stack(t, caller_sp) || ct_in_hole(t, caller_sp)) {
        t->jump_tick = now;
        return;
    }
    uint64_t depth = t->depth;
    if (depth > t->cap) {
        if (caller_sp < t->overflow_slot) { // jumping from beyond capacity: nothing kept is gone yet
            t->jump_tick = now;
            return;
        }
        depth = t->cap;
        t->depth = depth;
    }
    uint64_t live = depth; // beneath a coroutine's floor nothing is judged (ct_switch.c)
    while (live > t->away_floor && t->frames[live - 1].slot < caller_sp) live--;
    if (live < depth) ct_calls_close(t, depth, live, now, CT_CALL_UNWOUND); // at the earlier jump
    t->jump_tick = now;
}

// exit() or a crash on another thread while the main thread is inside calls: those calls are the
// root of the tree, so record them (unfinished) rather than lose them. The main thread is still
// running, so first take its stream over: set `closed`, then membarrier() so that any record write
// the main thread started before is visible in its lane's busy_sp (and any it starts later sees
// `closed`), then wait for that write to end. Async-signal-safe; gives up after 20 ms. Where it cannot, the
// trace says so (CT_LOST_MAIN_AT_EXIT).
CT_NO_INSTRUMENT void ct_calls_close_main_from_elsewhere(uint64_t end) {
    ct_calls_close_from_elsewhere(ct_thread_main(), end, true);
}

CT_NO_INSTRUMENT void ct_calls_close_from_elsewhere(struct ct_thread *m, uint64_t end, bool running) {
    if (!m || m == &ct_self || !m->recording) return;
    if (running && !ct_rt.membarrier_ok) {
        ct_header_lose(CT_LOST_MAIN_AT_EXIT, 0);
        return;
    }
    // Once: several threads that crash at once each come here (and a crash may follow exit's close),
    // and a second pass would write the same calls again, into a ring the first one's stop emptied.
    // A later one waits (a second at most) for the first to have written them: its re-raised
    // signal would otherwise end the process first. `closed`: 1 while they are written, 2 after.
    uint32_t open = 0;
    if (!atomic_compare_exchange_strong_explicit(&m->stream.closed, &open, 1, memory_order_relaxed,
                                                 memory_order_relaxed)) {
        uint64_t deadline = ct_monotonic_ns() + 1000000000ull;
        while (atomic_load_explicit(&m->stream.closed, memory_order_acquire) == 1 && ct_monotonic_ns() < deadline) {
            struct timespec pause = { 0, 100000 };
            nanosleep(&pause, NULL);
        }
        return;
    }
    if (running && (!ct_runtime_barrier() ||
                    !ct_stream_wait_idle(&m->stream, ct_monotonic_ns() + 20 * 1000000ull))) {
        ct_header_lose(CT_LOST_MAIN_AT_EXIT, 0);
        atomic_store_explicit(&m->stream.closed, 2, memory_order_release);
        return;
    }
    atomic_thread_fence(memory_order_acquire);
    uint64_t depth = *(volatile uint64_t *)&m->depth;
    uint64_t calls = *(volatile uint64_t *)&m->calls;
    uint64_t untimed = *(volatile uint64_t *)&m->untimed;
    if (depth > m->cap) depth = m->cap;
    while (depth > 0) {
        depth--;
        struct ct_frame f = m->frames[depth];
        uint64_t duration = end > f.start ? end - f.start : 0;
        // The main thread goes on meanwhile: a frame it pushed after `calls` was read counts none.
        uint64_t descendants = calls >= f.calls ? (calls - f.calls) / 2 : 0;
        uint64_t inside = untimed >= f.untimed ? untimed - f.untimed : 0;
        if (duration >= ct_threshold_ticks &&
            ct_calls_keep(f.fn, duration, descendants, inside, ct_calls_callee_kept(m, depth, f.start))) {
            m->kept_starts[depth] = f.start;
            struct ct_call_record c = { f.fn, f.site, f.start, duration, depth, descendants, inside, CT_CALL_UNFINISHED };
            ct_stream_write_call_owned(&m->stream, &c);
        }
    }
    ct_stream_seal(&m->stream);
    atomic_store_explicit(&m->stream.closed, 2, memory_order_release);
}
