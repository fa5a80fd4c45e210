// The sleds' hot path: ct_sled_enter, ct_sled_exit and ct_sled_tail, the handlers a patched sled's
// stub calls (calltrace_sleds.h, docs/design.md "Sleds").
//
// A sled sits where the function keeps nothing for a call: before its prologue, after its
// epilogue. So these handlers, unlike the hooks, must leave every register as they found it
// (gcc's IPA-RA even lets a caller keep values in registers it knows the function leaves alone).
// They are built to touch no vector register (general-regs-only, for this whole file) and to save
// every general register they use (no_caller_saved_registers), so the common case costs what the
// hooks' does; everything else goes to ct_sled_slow.c through ct_sled_vsave_call, which saves the
// vector state too. clang's warning about calls from such a function fires for every call, inline
// helpers and builtins included, unless the whole file is built with -mgeneral-regs-only, so it is
// off here; SledHandlerCodeTests reads the built code instead: no vector register, and no call but
// to ct_sled_vsave_call.
//
// What they do in the common case, as the hooks do (ct_hooks.c has the reasons): enter pushes a
// frame when the call is plainly a callee of the top frame; exit pops its own frame, reading the
// clock, counting down to a muting sample. A sled's slot is exact, so no search: the slot is the
// stub's to give. A frame whose exit sled never comes is found skipped by slot, as the hooks find
// it. Once a frame is published, enter reads its function's CT_SLED_ENTRY_MUTED: a function muted
// while its handler ran may have lost its exits already, and the frame is taken back (ct_mute.c).
//
// Tail calls. A tail sled runs after the function's epilogue, just before it jumps to its tail
// callee, which then returns to the function's caller. The function's frame stays open, marked as
// having left (the thread's tail_* fields): when the next entry on the thread, with the same slot,
// is the function the jump goes to, that call joins it (it is pushed above it, as a callee, and the
// two end together), so the tree shows `f` calling `g` as the source says, as -finstrument-functions
// builds do. Anything else shows that the function has ended (ct_sled_slow.c): at its tail sled, or
// later when its tail callee, not instrumented or muted, ran on.
#pragma clang diagnostic ignored "-Wexcessive-regsave"
#pragma clang attribute push(__attribute__((target("general-regs-only"))), apply_to = function)

#include "ct_sled_hooks.h"
#include "ct_calls.h"
#include "ct_mute.h"
#include "ct_mute_levels.h"
#include "ct_sled_table.h"
#include "ct_stack.h"

#include <x86intrin.h>

// Neither muting's in-hook check nor the filter's included calls is on, and the clock is rdtsc:
// the fast paths may run.
CT_NO_INSTRUMENT static inline bool fast_paths(void) {
    return CT_LIKELY(!atomic_load_explicit(&ct_mute_filter_on, memory_order_relaxed) && ct_clock_is_tsc);
}

// The paths below cost what the registers they use cost to save (every one a handler touches), so
// the commonest cheap case of each handler has a function of its own, the rest another.
CT_SLED_HANDLER __attribute__((noinline)) static void enter(uint32_t fn_number, uintptr_t *slot);
CT_SLED_HANDLER __attribute__((noinline)) static void exit_(uint32_t fn_number, uintptr_t *slot);

// A call inside a recursion deeper than its function's cap (ct_mute_levels.h), on the thread's own
// stack, plainly a callee of the top frame: not timed, only counted (for its callers' compensation).
CT_SLED_HANDLER void ct_sled_enter(uint32_t fn_number, uintptr_t *slot) {
    struct ct_thread *t = &ct_self;
    uint16_t lv = atomic_load_explicit(&ct_sled_levels[fn_number], memory_order_relaxed);
    uint64_t d = t->depth;
    uintptr_t s = (uintptr_t)slot;
    if (ct_levels_cap(lv) && t->state == CT_THREAD_ACTIVE && d - 1 < t->cap && fast_paths() &&
        t->levels_epoch == atomic_load_explicit(&ct_levels_epoch, memory_order_relaxed) && s >= t->stack_lo &&
        s < t->stack_hi) {
        const struct ct_frame *top = &t->frames[d - 1];
        if (s < top->slot && s + sizeof(uintptr_t) <= top->sp && ct_levels_untimed(top->levels, lv)) {
            t->untimed++;
            return;
        }
    }
    enter(fn_number, slot);
}

// The exit of a call that pushed no frame (one not timed inside a recursion, or a muted function's
// whose exits wait until no call of it is open, ct_mute.c): the top frame is a caller of it, or
// there is none. Back at once, without a clock read: no frame counts it.
CT_SLED_HANDLER void ct_sled_exit(uint32_t fn_number, uintptr_t *slot) {
    struct ct_thread *t = &ct_self;
    uint64_t d = t->depth;
    uintptr_t s = (uintptr_t)slot;
    if (t->state == CT_THREAD_ACTIVE && d <= t->cap && fast_paths() && t->tail_depth != d && s >= t->stack_lo &&
        s < t->stack_hi && (d == 0 || t->frames[d - 1].slot > s))
        return;
    exit_(fn_number, slot);
}

CT_SLED_HANDLER static void enter(uint32_t fn_number, uintptr_t *slot) {
    struct ct_thread *t = &ct_self;
    if (CT_UNLIKELY(t->state != CT_THREAD_ACTIVE)) {
        // Not recorded: back at once, but for one call in about 128, a sample that mutes what only
        // such threads run. A thread's first call attaches it, out of line.
        if (t->state == CT_THREAD_PASSIVE) {
            if (CT_UNLIKELY(--ct_mute_countdown == 0)) ct_sled_vsave_call(ct_sled_passive_sample, fn_number, 0, 0);
        } else if (t->state == CT_THREAD_NEW || t->state == CT_THREAD_FORKED) {
            ct_sled_vsave_call(ct_sled_enter_slow, fn_number, (uintptr_t)slot, 0);
        }
        return;
    }
    if (CT_UNLIKELY(!(atomic_load_explicit(&ct_sled_flags[fn_number], memory_order_relaxed) & CT_SLED_ENTERED)))
        atomic_fetch_or_explicit(&ct_sled_flags[fn_number], CT_SLED_ENTERED, memory_order_relaxed);
    uintptr_t s = (uintptr_t)slot;
    uint64_t d = t->depth;
    // Counted by level inside a recursion (ct_mute_levels.h), once this thread has counted its
    // frames since the last function got a slot.
    uint16_t lv = atomic_load_explicit(&ct_sled_levels[fn_number], memory_order_relaxed);
    if (fast_paths() && d < t->cap && s >= t->stack_lo && s < t->stack_hi &&
        (lv == 0 || t->levels_epoch == atomic_load_explicit(&ct_levels_epoch, memory_order_relaxed))) {
        uintptr_t fn = ct_sled_fns[fn_number];
        uintptr_t joined = 0;
        uint64_t below = 0;
        if (d > 0) {
            struct ct_frame *top = &t->frames[d - 1];
            below = top->levels;
            if (s < top->slot && s + sizeof(uintptr_t) <= top->sp) {
                // A callee of the top frame; not timed when it is that deep inside its own calls
                // (counted, for its callers' compensation).
                if (CT_UNLIKELY(ct_levels_untimed(below, lv))) {
                    t->untimed++;
                    return;
                }
                ct_stack_learn_body(top, s + sizeof(uintptr_t));
            } else if (s == top->slot && t->tail_depth == d && fn == ct_thread_tail_target(t) &&
                       top->hook_ra != CT_FRAME_TAIL_JOINED) {
                // The tail callee of the top frame: it joins it (always timed: it ends with it).
                t->tail_depth = 0;
                joined = CT_FRAME_TAIL_JOINED;
            } else {
                d = UINT64_MAX;
            }
        }
        if (d != UINT64_MAX) {
            ct_stack_push(t, d, fn, *slot, s, s, joined, ct_levels_push(below, lv), __rdtsc());
            // Read after the frame is published: muted meanwhile, the call is taken back.
            if (CT_UNLIKELY(atomic_load_explicit(&ct_sled_flags[fn_number], memory_order_relaxed) & CT_SLED_ENTRY_MUTED))
                ct_stack_take_back(t, d);
            return;
        }
    }
    ct_sled_vsave_call(ct_sled_enter_slow, fn_number, s, 0);
}

// The top frame's call (at `d`), not joined by a tail callee, ended near the threshold: pops it and
// records it as ct_stack_exit_slow_call does, writing in place when the stream lets it (so that a
// recorded call costs no saving of the vector state, which is most of the cost of a slow path
// with AVX-512: ct_sled_vsave_call), else through the slow path's writer.
CT_NO_INSTRUMENT static inline void exit_near(struct ct_thread *t, uint32_t fn_number, uint64_t d, uint64_t duration) {
    if (CT_UNLIKELY(--ct_mute_countdown == 0))
        ct_sled_vsave_call(ct_sled_sample, fn_number, t->frames[d - 1].site, t->frames[d - 1].levels);
    struct ct_frame f = t->frames[d - 1];
    atomic_signal_fence(memory_order_seq_cst);
    t->depth = d - 1;
    if (ct_mute_near_ticks != ct_threshold_ticks) {
        // Near, so a tenth of the threshold long at least: the thunk's cost is nothing beside it.
        bool keeps = true;
        ct_sled_vsave_call(ct_sled_keeps, (uintptr_t)&f, duration, (uintptr_t)&keeps);
        if (!keeps) return;
    }
    struct ct_call_record call;
    if (ct_calls_decide(t, &f, d - 1, duration, 0, &call) && !ct_stream_write_call_in_place(&t->stream, &call))
        ct_sled_vsave_call(ct_sled_write_call, (uintptr_t)&call, 0, 0);
    uint64_t end = f.start + duration;
    if (CT_UNLIKELY(end >= atomic_load_explicit(&ct_overhead_due_tick, memory_order_relaxed)))
        ct_sled_vsave_call(ct_sled_recalibrate, end, 0, 0);
}

CT_SLED_HANDLER static void exit_(uint32_t fn_number, uintptr_t *slot) {
    struct ct_thread *t = &ct_self;
    if (CT_UNLIKELY(t->state != CT_THREAD_ACTIVE)) {
        if (t->state == CT_THREAD_FORKED) ct_sled_vsave_call(ct_sled_exit_slow, fn_number, (uintptr_t)slot, 0);
        return;
    }
    uintptr_t s = (uintptr_t)slot;
    uint64_t d = t->depth;
    if (fast_paths() && d <= t->cap && t->tail_depth != d && s >= t->stack_lo && s < t->stack_hi) {
        if (d == 0 || t->frames[d - 1].slot > s) return; // no frame of its own (ct_sled_exit)
        const struct ct_frame *top = &t->frames[d - 1];
        uintptr_t fn = ct_sled_fns[fn_number];
        if (top->fn == fn && top->slot == s && top->hook_ra != CT_FRAME_TAIL_JOINED) {
            uint64_t now = __rdtsc();
            uint64_t duration = now - top->start;
            if (CT_UNLIKELY(duration >= ct_mute_near_ticks) && t->recording) {
                exit_near(t, fn_number, d, duration);
                return;
            }
            if (CT_UNLIKELY(--ct_mute_countdown == 0)) ct_sled_vsave_call(ct_sled_sample, fn_number, *slot, top->levels);
            atomic_signal_fence(memory_order_seq_cst);
            t->depth = d - 1;
            return;
        }
    }
    ct_sled_vsave_call(ct_sled_exit_slow, fn_number, s, ct_clock_is_tsc ? __rdtsc() : 0);
}

CT_SLED_HANDLER void ct_sled_tail(uint32_t tail_number, uintptr_t *slot, const uintptr_t *regs) {
    struct ct_thread *t = &ct_self;
    if (CT_UNLIKELY(t->state != CT_THREAD_ACTIVE)) {
        if (t->state == CT_THREAD_FORKED) ct_sled_vsave_call(ct_sled_tail_slow, tail_number, (uintptr_t)slot, (uintptr_t)regs);
        return;
    }
    uintptr_t s = (uintptr_t)slot;
    uint64_t d = t->depth;
    if (fast_paths() && d <= t->cap && t->tail_depth == 0 && s >= t->stack_lo && s < t->stack_hi) {
        if (d == 0 || t->frames[d - 1].slot > s) return; // a call that pushed no frame (see ct_sled_exit)
        const struct ct_frame *top = &t->frames[d - 1];
        const struct ct_sled_tail *tail = &ct_sled_tails[tail_number];
        if (top->fn == tail->fn && top->slot == s && top->hook_ra != CT_FRAME_TAIL_JOINED) {
            // Its time so far decides nothing: it may be the tail callee's too (ct_stack_end_tail).
            if (CT_UNLIKELY(--ct_mute_countdown == 0))
                ct_sled_vsave_call(ct_sled_sample, tail->fn_number, *slot, top->levels);
            t->tail_tick = __rdtsc();
            t->tail_calls = t->calls;
            t->tail_target = ct_sled_tail_target(tail, regs, &t->tail_target_slot);
            atomic_signal_fence(memory_order_seq_cst);
            t->tail_depth = d;
            return;
        }
    }
    ct_sled_vsave_call(ct_sled_tail_slow, tail_number, s, (uintptr_t)regs);
}

#pragma clang attribute pop
