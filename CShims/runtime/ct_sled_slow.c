// The sleds' slow paths (see ct_sled_hooks.h): everything the handlers' fast paths leave out,
// reached with the vector state saved. What the hooks do out of line, the same way (ct_stack.c):
// a thread's first call, muting's in-hook check and CALLTRACE_FILTER, calls on another stack,
// beyond the stack's capacity, frames a jump skipped, slow calls; and the end of a frame that left
// by a tail call (ct_sled_hooks.c's top comment).
#include "ct_sled_hooks.h"
#include "ct_first_call.h"
#include "ct_mute.h"
#include "ct_mute_levels.h"
#include "ct_skip.h"
#include "ct_sled_table.h"
#include "ct_stack.h"
#include "ct_switch.h"

// Frames a chain of tail calls keeps on one slot (see settle_tail).
#define CT_TAIL_NESTING 16

CT_NO_INSTRUMENT static bool awake(struct ct_thread *t, bool entering) {
    if (CT_LIKELY(t->state == CT_THREAD_ACTIVE)) return true;
    return ct_first_call(t, entering);
}

// A call or return at `slot` while a coroutine runs: is it the thread's own context again
// (ct_switch.h)? Then the thread is home before the event is judged.
CT_NO_INSTRUMENT static void maybe_home(struct ct_thread *t, uintptr_t slot) {
    uintptr_t caller_sp = slot + sizeof(uintptr_t);
    if (ct_switch_maybe_home(t, caller_sp) && !ct_on_own_stack(t, slot)) ct_switch_home_again(t, caller_sp);
}

// Is the call with this slot elsewhere than on the thread's own stack (another stack, or one that
// lives in an open frame)? Then nothing on this stack can be judged by its address.
CT_NO_INSTRUMENT static bool elsewhere(const struct ct_thread *t, uintptr_t slot) {
    return !ct_on_own_stack(t, slot) || ct_in_hole(t, slot);
}

// Is `slot` a deeper slot than `above` on the same stack: both on the thread's own stack, or both
// elsewhere and within a megabyte of each other (another stack's bounds are not known)?
CT_NO_INSTRUMENT static bool below(const struct ct_thread *t, uintptr_t slot, uintptr_t above) {
    if (slot >= above) return false;
    bool own = !elsewhere(t, slot);
    if (own != !elsewhere(t, above)) return false;
    return own || above - slot < (1u << 20);
}

// A frame that left by a tail call is on top (ct_sled_hooks.c): does the call entering with this
// slot join it, show that it ended, or neither (a callee of it: a signal handler's call, or one
// its tail callee made without a sled of its own)? Returns the depth to push at; the join is done
// here (true in *joined).
CT_NO_INSTRUMENT static uint64_t settle_tail(struct ct_thread *t, uint64_t d, uintptr_t fn, uintptr_t slot,
                                            bool *joined) {
    const struct ct_frame *top = &t->frames[d - 1];
    if (slot == top->slot && fn == ct_thread_tail_target(t)) {
        // A tail callee that tail-calls in turn nests too, as the source reads (f calls g calls h),
        // up to CT_TAIL_NESTING frames on one slot; past that it ends, and the new one takes its
        // place, so that an endless chain of tail calls (a state machine) keeps a bounded stack.
        uint64_t nested = 1;
        while (nested < d && nested <= CT_TAIL_NESTING && t->frames[d - 1 - nested].slot == slot) nested++;
        if (nested > CT_TAIL_NESTING) {
            ct_stack_end_tail(t, ct_now(), false, true);
            d = t->depth;
        } else {
            t->tail_depth = 0;
        }
        *joined = d > 0 && t->frames[d - 1].slot == slot;
        return d;
    }
    if (below(t, slot, top->slot)) return d;
    ct_stack_end_tail(t, ct_now(), false, false);
    return t->depth;
}

CT_NO_INSTRUMENT void ct_sled_enter_slow(uintptr_t fn_number, uintptr_t slot, uintptr_t unused) {
    (void)unused;
    struct ct_thread *t = &ct_self;
    if (!awake(t, true)) return;
    uintptr_t fn = ct_sled_fn((uint32_t)fn_number);
    uintptr_t site = *(const uintptr_t *)slot, caller_sp = slot + sizeof(uintptr_t);
    if (!fn || ct_mute_skips(fn, false, caller_sp, site)) return;
    uint16_t lv = atomic_load_explicit(&ct_sled_levels[(uint32_t)fn_number], memory_order_relaxed);
    if (lv && t->levels_epoch != atomic_load_explicit(&ct_levels_epoch, memory_order_acquire)) ct_mute_levels_recount(t);
    maybe_home(t, slot);
    uint64_t d = t->depth;
    bool own = !elsewhere(t, slot);
    bool joined = false;
    if (t->tail_depth && t->tail_depth == d && d <= t->cap) {
        uint64_t before = d;
        d = settle_tail(t, d, fn, slot, &joined);
        // The frame that tail-called ended: if it was CALLTRACE_FILTER's included call, this one
        // may be outside every included call now (ct_stack_settle asks the same).
        if (d < before && (atomic_load_explicit(&ct_mute_filter_on, memory_order_relaxed) & CT_SKIP_INCLUDED) &&
            ct_filter_settled(fn, d))
            return;
    }
    if (CT_UNLIKELY(d > t->cap)) {
        if (!own || ct_stack_enter_beyond_capacity(t, slot, fn)) {
            if (!own) t->depth++;
            return;
        }
        d = t->depth;
    }
    if (d > 0 && !joined && own && (slot >= t->frames[d - 1].slot || caller_sp > t->frames[d - 1].sp)) {
        d = ct_stack_settle(t, d, &slot, caller_sp, site, 0, fn, true);
        if (d == CT_STACK_OUTSIDE) return;
    }
    if (d < t->cap) {
        uint64_t levels = d > 0 ? t->frames[d - 1].levels : 0;
        // Inside its own calls, deeper than its cap (ct_mute_levels.h): not timed. A tail callee
        // that joins a frame always is (it ends with it).
        if (!joined && ct_levels_untimed(levels, lv)) {
            t->untimed++;
            return;
        }
        if (d > 0 && !joined && slot != CT_SLOT_ELSEWHERE && below(t, slot, t->frames[d - 1].slot))
            ct_stack_learn_body(&t->frames[d - 1], caller_sp);
        ct_stack_push(t, d, fn, site, slot, slot, joined ? CT_FRAME_TAIL_JOINED : 0, ct_levels_push(levels, lv), ct_now());
        // As in the fast path: muted while this handler ran (a thread's first call attaching it, say).
        if (atomic_load_explicit(&ct_sled_flags[(uint32_t)fn_number], memory_order_relaxed) & CT_SLED_ENTRY_MUTED)
            ct_stack_take_back(t, d);
    } else {
        t->overflow_slot = slot;
        t->depth = d + 1;
    }
}

// Pops the exiting call's own frame (on top, at `d`), and the frames its tail callee joined (they
// end with it).
CT_NO_INSTRUMENT static void pop_own(struct ct_thread *t, uint64_t d, uintptr_t slot, uint64_t now) {
    bool joined = t->frames[d - 1].hook_ra == CT_FRAME_TAIL_JOINED;
    ct_stack_pop_ended(t, d, now);
    while (joined && (d = t->depth) > 0 && d <= t->cap && t->frames[d - 1].slot == slot) {
        joined = t->frames[d - 1].hook_ra == CT_FRAME_TAIL_JOINED;
        ct_stack_pop_ended(t, d, now);
    }
}

// An exit or tail sled while a frame that left by a tail call is on top: true when the event is
// that frame's business and nothing more is to be done. The same slot: its tail callee, which has
// no frame of its own (not instrumented, or muted), returns (the frame's time runs to here) or
// tail-calls on (the chain goes on). A deeper slot: the exit of a call that pushed no frame.
// Anything else shows that the frame ended before.
CT_NO_INSTRUMENT static bool past_tail(struct ct_thread *t, uint64_t d, uintptr_t slot, uint64_t now, bool tail) {
    if (!t->tail_depth || t->tail_depth != d || d > t->cap) return false;
    uintptr_t top = t->frames[d - 1].slot;
    if (slot == top) {
        if (!tail) ct_stack_end_tail(t, now, true, false);
        return true;
    }
    if (!below(t, slot, top)) ct_stack_end_tail(t, now, false, false);
    return false;
}

// The frames above this call's own (their slots lie below its slot) were left by a jump; then is
// the top frame this call's? 0 when not (a call that pushed no frame), else the depth.
CT_NO_INSTRUMENT static uint64_t own_frame(struct ct_thread *t, uint64_t d, uintptr_t fn, uintptr_t slot,
                                          uint64_t now) {
    // Beyond capacity a muted function's exit is one of a call that was never counted (its exits
    // wait for calls open from before it was muted), as for the hooks (ct_hooks.c). Beneath a
    // coroutine's floor nothing is judged (ct_switch.c).
    if (d > t->cap && (ct_mute_is_muted(fn) || ct_stack_exit_beyond_capacity(t, &d, slot))) return 0;
    uint64_t live = d, floor = t->away_floor;
    while (live > floor && t->frames[live - 1].slot < slot) live--;
    if (live < d) ct_calls_close(t, d, live, now, CT_CALL_UNWOUND);
    return live > floor && t->frames[live - 1].slot == slot && t->frames[live - 1].fn == fn ? live : 0;
}

// On another stack only the top frame can be this call's, and only if it was pushed there too.
CT_NO_INSTRUMENT static uint64_t own_frame_elsewhere(struct ct_thread *t, uint64_t d, uintptr_t fn, uintptr_t slot) {
    if (d > t->cap) {
        if (ct_mute_is_muted(fn)) return 0; // as in own_frame
        t->depth = d - 1;
        return 0;
    }
    // The first call on a stack inside an open frame was pushed with no slot (ct_stack_settle).
    if (d == 0 || d <= t->away_floor || t->frames[d - 1].fn != fn ||
        (t->frames[d - 1].slot != slot && t->frames[d - 1].slot != CT_SLOT_ELSEWHERE))
        return 0;
    return d;
}

CT_NO_INSTRUMENT void ct_sled_exit_slow(uintptr_t fn_number, uintptr_t slot, uintptr_t now) {
    struct ct_thread *t = &ct_self;
    if (!awake(t, false)) return;
    uintptr_t fn = ct_sled_fn((uint32_t)fn_number);
    uintptr_t site = *(const uintptr_t *)slot;
    if (!fn || ct_mute_skips(fn, true, slot + sizeof(uintptr_t), site)) return;
    if (!now) now = ct_now();
    maybe_home(t, slot);
    if (past_tail(t, t->depth, slot, now, false)) return;
    uint64_t d = elsewhere(t, slot) ? own_frame_elsewhere(t, t->depth, fn, slot) : own_frame(t, t->depth, fn, slot, now);
    if (d == 0) return;
    if (CT_UNLIKELY(--ct_mute_countdown == 0)) ct_mute_sample(fn, 0, 0, site, (uint32_t)fn_number, t->frames[d - 1].levels);
    pop_own(t, d, slot, now);
}

CT_NO_INSTRUMENT void ct_sled_tail_slow(uintptr_t tail_number, uintptr_t slot, uintptr_t registers) {
    struct ct_thread *t = &ct_self;
    if (!awake(t, false) || tail_number >= CT_SLED_MAX_TAILS) return;
    const struct ct_sled_tail *tail = &ct_sled_tails[tail_number];
    const uintptr_t *regs = (const uintptr_t *)registers;
    uintptr_t fn = tail->fn;
    uintptr_t site = *(const uintptr_t *)slot;
    if (!fn || ct_mute_skips(fn, true, slot + sizeof(uintptr_t), site)) return;
    uint64_t now = ct_now();
    maybe_home(t, slot);
    if (past_tail(t, t->depth, slot, now, true)) return;
    uint64_t d = elsewhere(t, slot) ? own_frame_elsewhere(t, t->depth, fn, slot) : own_frame(t, t->depth, fn, slot, now);
    if (d == 0) return;
    if (CT_UNLIKELY(--ct_mute_countdown == 0)) ct_mute_sample(fn, 0, 0, site, tail->fn_number, t->frames[d - 1].levels);
    if (t->tail_depth) {
        // Another frame beneath still waits for its tail callee to show: this one simply ends here.
        pop_own(t, d, slot, now);
        return;
    }
    t->tail_tick = now;
    t->tail_calls = t->calls;
    t->tail_target = ct_sled_tail_target(tail, regs, &t->tail_target_slot);
    atomic_signal_fence(memory_order_seq_cst);
    t->tail_depth = d;
}

CT_NO_INSTRUMENT void ct_sled_sample(uintptr_t fn_number, uintptr_t site, uintptr_t levels) {
    ct_mute_sample(ct_sled_fn((uint32_t)fn_number), 0, 0, site, (uint32_t)fn_number, levels);
}

CT_NO_INSTRUMENT void ct_sled_passive_sample(uintptr_t fn_number, uintptr_t unused, uintptr_t unused2) {
    (void)unused, (void)unused2;
    uintptr_t fn = ct_sled_fn((uint32_t)fn_number);
    if (fn) ct_mute_passive_sample(fn, atomic_load_explicit(&ct_sled_flags[fn_number], memory_order_relaxed) & CT_SLED_ENTERED);
}

CT_NO_INSTRUMENT void ct_sled_keeps(uintptr_t frame, uintptr_t duration, uintptr_t keeps) {
    const struct ct_frame *f = (const struct ct_frame *)frame;
    *(bool *)keeps = ct_mute_keeps(f->fn, duration, (ct_self.calls - f->calls) / 2, f->levels);
}

CT_NO_INSTRUMENT void ct_sled_write_call(uintptr_t call, uintptr_t unused, uintptr_t unused2) {
    (void)unused, (void)unused2;
    ct_stream_write_call(&ct_self.stream, (const struct ct_call_record *)call);
}

CT_NO_INSTRUMENT void ct_sled_recalibrate(uintptr_t now, uintptr_t unused, uintptr_t unused2) {
    (void)unused, (void)unused2;
    ct_overhead_recalibrate(&ct_self, now, false);
}
