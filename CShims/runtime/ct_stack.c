// A thread's stack of calls, the rules both mechanisms share (see ct_stack.h).
#include "ct_stack.h"
#include "ct_mute.h"
#include "ct_skip.h"
#include "ct_sled_table.h"

// Can frame `f` still be live, given a new call with this slot, call site and hook return address?
CT_NO_INSTRUMENT static inline bool is_skipped(const struct ct_frame *f, uintptr_t slot, uintptr_t site,
                                               uintptr_t hook_ra, bool sled) {
    if (slot != f->slot) return slot > f->slot;
    if (sled) return true;                               // a sibling: sleds are never inlined
    return site != f->site || hook_ra == f->hook_ra;     // equal slot: a sibling, or an inlined call
}

// A callee's stack pointer is always below its caller's, so a call whose stack pointer lies above
// the one the top frame had at its enter hook, inside the body of an open frame (between that
// frame's stack pointer and its return slot), is a call on another stack that lives there: a
// coroutine whose stack is an array in a caller's locals. It closes nothing and is pushed with no
// slot, as a call on any other stack is, and the frame that holds that stack is remembered
// (ct_thread.h). While a coroutine runs, the frames beneath its floor are another context's
// (ct_switch.c): none is skipped, and none holds a stack.
CT_NO_INSTRUMENT uint64_t ct_stack_settle(struct ct_thread *t, uint64_t depth, uintptr_t *slot, uintptr_t caller_sp,
                                          uintptr_t site, uintptr_t hook_ra, uintptr_t fn, bool sled) {
    uint64_t live = depth, floor = t->away_floor;
    while (live > floor && is_skipped(&t->frames[live - 1], *slot, site, hook_ra, sled)) live--;
    bool inside = ct_in_hole(t, caller_sp);
    if (!inside && live > floor) {
        const struct ct_frame *holder = &t->frames[live - 1];
        // A sled's frame knows its body only from the calls it made (ct_sled_hooks.c), and one
        // whose stack pointer went up again (a variable-length array gone) may call from higher
        // up: the call must come from outside the instrumented code too (makecontext's start).
        if (!ct_frame_elsewhere(t, holder) && holder->sp < caller_sp && caller_sp < holder->slot &&
            (!sled || !ct_sled_table_holds(site))) {
            t->hole_lo = holder->sp;
            t->hole_hi = holder->slot;
            t->hole_frame = live - 1;
            inside = true;
        }
    }
    if (inside) {
        *slot = CT_SLOT_ELSEWHERE;
        return depth;
    }
    if (live < depth) {
        ct_calls_close(t, depth, live, ct_now(), CT_CALL_UNWOUND);
        if ((atomic_load_explicit(&ct_mute_filter_on, memory_order_relaxed) & CT_SKIP_INCLUDED) &&
            ct_filter_settled(fn, live))
            return CT_STACK_OUTSIDE;
    }
    return live;
}

CT_NO_INSTRUMENT bool ct_stack_enter_beyond_capacity(struct ct_thread *t, uintptr_t slot, uintptr_t fn) {
    if (slot < t->overflow_slot) {
        t->depth++;
        return true;
    }
    t->depth = t->cap;
    return (atomic_load_explicit(&ct_mute_filter_on, memory_order_relaxed) & CT_SKIP_INCLUDED) &&
           ct_filter_settled(fn, t->cap);
}

// The frame is copied before the lower depth is published (a handler that runs in between is a
// sibling that ended first, and one that jumps away cannot get the frame recorded twice).
CT_NO_INSTRUMENT void ct_stack_exit_slow_call(struct ct_thread *t, uint64_t d, uint64_t duration) {
    struct ct_frame f = t->frames[d - 1];
    atomic_signal_fence(memory_order_seq_cst);
    t->depth = d - 1;
    // Under the threshold (only near it), or muted: not recorded. While muting counts nothing
    // (off, or threshold 0) the bound is the threshold itself and there is nothing to ask.
    if (ct_mute_near_ticks != ct_threshold_ticks && !ct_mute_keeps(f.fn, duration, (t->calls - f.calls) / 2, f.levels)) return;
    ct_calls_record(t, &f, d - 1, duration, 0);
    ct_overhead_maybe_recalibrate(t, f.start + duration);
}

CT_NO_INSTRUMENT void ct_stack_pop_ended(struct ct_thread *t, uint64_t d, uint64_t end) {
    uint64_t start = t->frames[d - 1].start;
    uint64_t duration = end > start ? end - start : 0;
    if (duration >= ct_mute_near_ticks && t->recording) {
        ct_stack_exit_slow_call(t, d, duration);
        return;
    }
    atomic_signal_fence(memory_order_seq_cst);
    t->depth = d - 1;
}

CT_NO_INSTRUMENT void ct_stack_end_tail(struct ct_thread *t, uint64_t now, bool returned, bool alone) {
    uint64_t d = t->tail_depth;
    t->tail_depth = 0;
    if (d == 0 || d != t->depth || d > t->cap) return;
    uint64_t end = t->calls == t->tail_calls && !returned ? t->tail_tick : now;
    uintptr_t slot = t->frames[d - 1].slot;
    bool joined = t->frames[d - 1].hook_ra == CT_FRAME_TAIL_JOINED && !alone;
    ct_stack_pop_ended(t, d, end);
    while (joined && (d = t->depth) > 0 && d <= t->cap && t->frames[d - 1].slot == slot) {
        joined = t->frames[d - 1].hook_ra == CT_FRAME_TAIL_JOINED;
        ct_stack_pop_ended(t, d, end);
    }
}
