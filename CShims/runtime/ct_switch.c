// Stack switches (see ct_switch.h). A thread is home (its own stack) or away (a coroutine runs,
// its frames above `away_floor`, the home context's beneath). A switch away from a coroutine
// closes its frames; a switch home is followed from the home context, once it runs. The reasons
// are in docs/design.md, "Coroutines".
#include "ct_switch.h"
#include "ct_calls.h"
#include "ct_clock.h"
#include "ct_stack.h"

// uc_stack as makecontext's caller set it: getcontext and swapcontext leave it as it was, so a
// context that has never been a coroutine's holds what its memory held (stack garbage, zero). A
// stack that holds `target` and is of a plausible size is believed.
#define CT_SWITCH_MIN_STACK 2048u
#define CT_SWITCH_MAX_STACK (1ull << 32)

CT_NO_INSTRUMENT static bool coroutine_stack(const ucontext_t *ucp, uintptr_t target, uintptr_t *lo, uintptr_t *hi) {
    uintptr_t sp = (uintptr_t)ucp->uc_stack.ss_sp;
    size_t size = ucp->uc_stack.ss_size;
    if (!sp || size < CT_SWITCH_MIN_STACK || size > CT_SWITCH_MAX_STACK || sp + size < sp) return false;
    if (target < sp || target >= sp + size) return false;
    *lo = sp;
    *hi = sp + size;
    return true;
}

CT_NO_INSTRUMENT static bool within(uintptr_t sp, uintptr_t lo, uintptr_t hi) { return sp >= lo && sp < hi; }

// Closes the running coroutine's frames (those above the floor) at `end`; the calls it counted
// beyond the stack's capacity go with them.
CT_NO_INSTRUMENT static void close_coroutine(struct ct_thread *t, uint64_t end) {
    uint64_t depth = t->depth, floor = t->away_floor;
    if (depth > t->cap) {
        depth = t->cap > floor ? t->cap : floor;
        t->depth = depth;
    }
    if (depth > floor) ct_calls_close(t, depth, floor, end, CT_CALL_UNWOUND);
}

// The stores a signal handler may see half done are in an order it can live with: the floor first
// (it only keeps rules from closing frames), the bounds and `away` last.
CT_NO_INSTRUMENT static void go_away(struct ct_thread *t, uintptr_t lo, uintptr_t hi, uintptr_t sp, uint64_t now) {
    if (!t->away) {
        // Beyond the capacity, counted calls are told apart by address alone: left to the rules.
        if (t->depth >= t->cap) return;
        // A frame that left by a tail call (swapcontext was its tail callee) ended there.
        if (t->tail_depth) ct_stack_end_tail(t, now, false, false);
        uint64_t d = t->depth;
        t->away_floor = d;
        t->home_sp = sp;
        t->left_lo = t->left_hi = 0;
        // A sled's frame whose body is not known yet (ct_stack_learn_body) must not learn it from
        // the coroutine's first call: parked at 0 (every call compared with it takes the slow
        // path) until the thread is home again.
        if (d > 0 && t->frames[d - 1].sp == t->frames[d - 1].slot) t->frames[d - 1].sp = 0;
    } else {
        close_coroutine(t, now);
        t->left_lo = t->stack_lo;
        t->left_hi = t->stack_hi;
    }
    t->hole_lo = t->hole_hi = 0;
    t->home_tick = 0;
    atomic_signal_fence(memory_order_seq_cst);
    t->stack_lo = lo;
    t->stack_hi = hi;
    t->away = 1;
}

CT_NO_INSTRUMENT static void come_home(struct ct_thread *t, uint64_t end) {
    close_coroutine(t, end);
    uint64_t floor = t->away_floor;
    if (floor > 0 && floor <= t->depth && t->frames[floor - 1].sp == 0 && t->frames[floor - 1].slot != 0)
        t->frames[floor - 1].sp = t->frames[floor - 1].slot; // unparked
    t->hole_lo = t->hole_hi = 0;
    t->left_lo = t->left_hi = 0;
    t->home_tick = 0;
    atomic_signal_fence(memory_order_seq_cst);
    t->stack_lo = t->home_lo;
    t->stack_hi = t->home_hi;
    t->away = 0;
    t->away_floor = 0;
}

CT_NO_INSTRUMENT void ct_switch_leave(uintptr_t caller_sp, const ucontext_t *ucp, struct ct_switch_from *from) {
    struct ct_thread *t = &ct_self;
    *from = (struct ct_switch_from){ t->away, t->stack_lo, t->stack_hi };
    if (t->state != CT_THREAD_ACTIVE || !ucp) return;
    uintptr_t target = (uintptr_t)ucp->uc_mcontext.gregs[REG_RSP];
    uint64_t now = ct_now();
    uintptr_t lo, hi;
    bool coroutine = coroutine_stack(ucp, target, &lo, &hi);
    if (coroutine && !(t->away && lo == t->stack_lo && hi == t->stack_hi)) {
        go_away(t, lo, hi, caller_sp, now);
    } else if (within(target, t->home_lo, t->home_hi) && !(t->away && within(target, t->stack_lo, t->stack_hi))) {
        // The thread's own stack: from home, a jump (to a context getcontext saved, as longjmp);
        // from a coroutine, the way home, followed once the home context runs.
        if (t->away) t->home_tick = now;
        else ct_calls_note_jump(caller_sp);
    } else if (t->away && within(target, t->stack_lo, t->stack_hi)) {
        ct_calls_note_jump(caller_sp); // within the coroutine
    } else {
        go_away(t, 0, 0, caller_sp, now); // a stack whose bounds are not known: every call on it is elsewhere
    }
}

CT_NO_INSTRUMENT void ct_switch_resumed(const struct ct_switch_from *from) {
    struct ct_thread *t = &ct_self;
    if (t->state != CT_THREAD_ACTIVE || !t->away) return;
    if (!from->away) {
        come_home(t, t->home_tick ? t->home_tick : ct_now());
    } else if (t->stack_lo != from->lo || t->stack_hi != from->hi) {
        go_away(t, from->lo, from->hi, t->home_sp, ct_now());
    }
}

CT_NO_INSTRUMENT bool ct_switch_home_again(struct ct_thread *t, uintptr_t sp) {
    if (!ct_switch_maybe_home(t, sp) || within(sp, t->stack_lo, t->stack_hi) || within(sp, t->left_lo, t->left_hi) ||
        sp < t->home_sp)
        return false;
    come_home(t, t->home_tick ? t->home_tick : ct_now());
    return true;
}

// The slot is a few words above the function's stack pointer, within 64 KiB (the hooks' own bound:
// ct_hooks.c), never past the top of the thread's stack.
CT_NO_INSTRUMENT bool ct_switch_home_again_hook(struct ct_thread *t, uintptr_t callee_sp, uintptr_t site) {
    if (!ct_switch_maybe_home(t, callee_sp)) return false;
    const uintptr_t *p = (const uintptr_t *)callee_sp;
    uintptr_t end = t->home_hi - callee_sp > (64u << 10) ? callee_sp + (64u << 10) : t->home_hi;
    for (; (uintptr_t)p + sizeof(uintptr_t) <= end; p++) {
        if (*p == site) return ct_switch_home_again(t, (uintptr_t)p + sizeof(uintptr_t));
    }
    return false;
}
