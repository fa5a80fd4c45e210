// The hot path: __cyg_profile_func_enter and __cyg_profile_func_exit.
//
// Every instrumented call runs both, so they do as little as they can: a TLS load, usually one
// stack word compared, a clock read and a push on enter; a clock read, a compare and a pop on exit.
// No syscall, lock, allocation or __tls_get_addr. A thread that is not recorded returns after one
// TLS load. Only a call that lasted at least the threshold (compared in ticks: no division) goes on
// to ct_calls_record, which takes out the overhead of the hooks beneath it (ct_overhead.h).
// Adaptive muting (ct_mute.h) adds a per-thread countdown on exit (one exit in ~128 is sampled, out
// of line), lowers that compare to a tenth of the threshold, checks a global that is 0 unless
// some muted function could not be patched out, and after a push reads the function's bit of the
// muted entries (a function muted while its enter hook ran takes its frame back: ct_mute.h).
//
// Skipped frames. longjmp, siglongjmp and (with clang++) C++ exceptions leave functions without
// running their exit hooks, so a naive depth counter drifts for ever. Each frame therefore remembers
// where its return address lives on the machine stack (`slot`). The stack grows down, so a live
// caller's slot is always above its callee's; a new call whose slot is above the top frame's proves
// that the top frame is gone, and the frame is closed, flagged "unwound", before the new one is
// pushed. Equal slots need care: a sibling that replaced a skipped frame has the same slot, but so
// does a function gcc inlined into the top frame (gcc instruments inlined calls, passing the
// container's call site). The inlined call shares the call site too but is entered from a different
// place in the code (`hook_ra`); a repeat of the skipped call has either another call site or the
// same entry point. Exit hooks use the same slots: frames whose slot lies below the exiting
// function's stack pointer cannot be live. Raw stack pointers would not do: they depend on each
// function's frame size, while siblings called from the same place always share their return slot.
//
// Signals. A handler can run between any two instructions here, may itself call instrumented
// functions, and may even longjmp out and never come back. So the stack is consistent at every
// instruction: the push writes the whole entry before it publishes the new depth, and writes it
// again after (a handler that ran just before the publish, or even in the middle of the first
// write, used the same entry and left its own values there); the pop copies the frame before it
// publishes the lower depth and records the copy after, so a handler that runs meanwhile is a
// sibling that ended first (the tree builder expects that) and one that jumps away cannot get the
// frame recorded twice. atomic_signal_fence keeps the compiler from reordering those steps. Only
// one other thread ever reads a thread's stack: at exit, after taking it over (ct_calls.c).
#include "ct_first_call.h"
#include "ct_mute.h"
#include "ct_skip.h"
#include "ct_stack.h"
#include "ct_switch.h"

#include <stdatomic.h>

// Without a live caller frame to start from (the thread's first call, or beyond the stack's
// capacity) the slot is searched upwards from the stack pointer, near words first, then out of
// line up to 64 KiB, never past the top of the thread's stack.
#define CT_SLOT_SCAN_WORDS 64
#define CT_SLOT_FAR_SCAN_WORDS 8192

CT_NO_INSTRUMENT CT_SLOW_PATH static uintptr_t return_slot_upwards_far(const struct ct_thread *t, const uintptr_t *word,
                                                                      uintptr_t site) {
    int end = CT_SLOT_FAR_SCAN_WORDS;
    if ((uintptr_t)&word[end] > t->stack_hi) end = (int)((t->stack_hi - (uintptr_t)word) / sizeof(uintptr_t));
    for (int i = CT_SLOT_SCAN_WORDS; i < end; i++) {
        if (word[i] == site) return (uintptr_t)&word[i];
    }
    return (uintptr_t)&word[end];
}

CT_NO_INSTRUMENT static inline uintptr_t return_slot_upwards(const struct ct_thread *t, uintptr_t caller_sp,
                                                             uintptr_t site) {
    const uintptr_t *word = (const uintptr_t *)caller_sp;
    for (int i = 0; i < CT_SLOT_SCAN_WORDS; i++) {
        if (word[i] == site) return (uintptr_t)&word[i];
    }
    return return_slot_upwards_far(t, word, site);
}

// On another stack (a handler on an alternate signal stack, a coroutine) nothing is known of its
// bounds, so the search stays within the page the stack pointer is in: memory that surely exists.
// The slot is usually a few words up; if it is not on that page, the page's end stands for it.
CT_NO_INSTRUMENT CT_SLOW_PATH static uintptr_t return_slot_elsewhere(uintptr_t caller_sp, uintptr_t site) {
    uintptr_t end = (caller_sp | 4095) + 1;
    for (const uintptr_t *p = (const uintptr_t *)caller_sp; (uintptr_t)p < end; p++) {
        if (*p == site) return (uintptr_t)p;
    }
    return end - sizeof(uintptr_t);
}

// Finds the stack word holding the instrumented function's return address (`site`).
//
// The function was called by the innermost live frame, the first one (from the top) whose stack
// pointer lies above ours: the call pushed the return address just below that caller's stack
// pointer. So the search goes *down* from just under the caller's stack pointer, and the first
// match is the slot, normally at the very first word. Searching up from our own stack pointer
// instead would cross the function's own frame, where uninitialised locals (a large array) can
// hold stale copies of the same return address left by earlier, deeper calls, and stop at one of
// them. Going down never reaches our frame's locals before the slot, nor copies of the return
// address that a function keeps lower in its frame (clang does, to pass it to both hooks).
//
// A call that gcc inlined into the top frame runs on that frame's stack pointer, so the search
// starts under the top frame's caller and finds the container's own slot: equal slots, as the
// skipped-frame logic expects. Frames a longjmp left behind lie below our stack pointer and are
// passed over the same way.
//
// Both the caller's stack pointer and ours are on the thread's own stack here (frames pushed on
// another stack are passed over), and the walk down is bounded, so it reads only the stack.
CT_NO_INSTRUMENT static inline uintptr_t return_slot(const struct ct_thread *t, uint64_t depth,
                                                    uintptr_t caller_sp, uintptr_t site) {
    if (depth <= t->cap) {
        for (uint64_t i = depth; i > 0; i--) {
            uintptr_t above = t->frames[i - 1].sp;
            if (above <= caller_sp || above > t->stack_hi) continue;
            uintptr_t floor = above - caller_sp > CT_SLOT_FAR_SCAN_WORDS * sizeof(uintptr_t)
                                  ? above - CT_SLOT_FAR_SCAN_WORDS * sizeof(uintptr_t) : caller_sp;
            for (const uintptr_t *p = (const uintptr_t *)above - 1; (uintptr_t)p >= floor; p--) {
                if (*p == site) return (uintptr_t)p;
            }
            break;
        }
    }
    return return_slot_upwards(t, caller_sp, site);
}

CT_EXPORT CT_NO_INSTRUMENT void __cyg_profile_func_enter(void *fn, void *site) {
    struct ct_thread *t = &ct_self;
    // Not recorded: one TLS load and back (and on a thread of a traced process, for one call in
    // about 128, a sample that mutes what only such threads run). The first hook on a thread
    // attaches it, out of line.
    if (CT_UNLIKELY(t->state != CT_THREAD_ACTIVE)) {
        if (t->state == CT_THREAD_PASSIVE) {
            if (CT_UNLIKELY(--ct_mute_countdown == 0))
                ct_mute_passive_hook_sample((uintptr_t)fn, false, (uintptr_t)__builtin_return_address(0), (uintptr_t)site);
            return;
        }
        if (t->state > CT_THREAD_NEW && t->state != CT_THREAD_FORKED) return;
        if (!ct_first_call(t, true)) return;
        ct_runtime_note_instrument(CT_INSTRUMENT_HOOKS);
    }
    if (ct_mute_skips((uintptr_t)fn, false, CT_CALLER_SP(), (uintptr_t)site)) return;
    uint64_t d = t->depth;
    uintptr_t caller_sp = CT_CALLER_SP();
    // On another stack, addresses say nothing about this stack's frames: push, never pop. Unless a
    // coroutine ran and this is the thread's own context again (ct_switch.h).
    bool own = ct_on_own_stack(t, caller_sp);
    uintptr_t slot;
    if (CT_LIKELY(own)) {
        slot = return_slot(t, d, caller_sp, (uintptr_t)site);
    } else if (CT_UNLIKELY(ct_switch_maybe_home(t, caller_sp)) && ct_switch_home_again_hook(t, caller_sp, (uintptr_t)site)) {
        own = true;
        d = t->depth;
        slot = return_slot(t, d, caller_sp, (uintptr_t)site);
    } else {
        slot = return_slot_elsewhere(caller_sp, (uintptr_t)site);
    }
    uintptr_t hook_ra = (uintptr_t)__builtin_return_address(0);
    if (CT_UNLIKELY(d > t->cap)) {
        if (!own || ct_stack_enter_beyond_capacity(t, slot, (uintptr_t)fn)) {
            if (!own) t->depth++;
            return;
        }
        d = t->depth;
    }
    if (d > 0 && CT_UNLIKELY(slot >= t->frames[d - 1].slot || caller_sp > t->frames[d - 1].sp) && CT_LIKELY(own)) {
        d = ct_stack_settle(t, d, &slot, caller_sp, (uintptr_t)site, hook_ra, (uintptr_t)fn, false);
        if (CT_UNLIKELY(d == CT_STACK_OUTSIDE)) return;
    }
    if (CT_LIKELY(d < t->cap)) {
        // Calls beyond capacity are cheaper and not counted for overhead compensation.
        // A hook's function is never counted by level (sleds only): it inherits the frame's below.
        ct_stack_push(t, d, (uintptr_t)fn, (uintptr_t)site, slot, caller_sp, hook_ra, d ? t->frames[d - 1].levels : 0,
                      ct_now());
        // Read after the frame is published: its function muted meanwhile, the call is taken back.
        if (CT_UNLIKELY(ct_mute_entry_may_be_muted((uintptr_t)fn)) && ct_mute_entry_muted((uintptr_t)fn, hook_ra))
            ct_stack_take_back(t, d);
    } else {
        t->overflow_slot = slot;        // the first call beyond capacity
        t->depth = d + 1;
    }
}

// The exit hook did not find its own frame on top: close the frames a jump skipped (their slots lie
// below our stack pointer) and say whether the frame under them is ours. 0: not ours (an exit
// whose enter we never saw); ignore it.
CT_NO_INSTRUMENT CT_SLOW_PATH static uint64_t find_exiting_frame(struct ct_thread *t, uint64_t depth,
                                                                uintptr_t fn, uintptr_t sp, uint64_t now) {
    if (depth > t->cap && ct_stack_exit_beyond_capacity(t, &depth, sp)) return 0;
    // Frames pushed on another stack have no slot (0, below any stack pointer) or one elsewhere: a
    // call beneath them that ends leaves them behind. Beneath a coroutine's floor nothing is judged.
    uint64_t live = depth, floor = t->away_floor;
    while (live > floor && t->frames[live - 1].slot < sp) live--;
    if (live > floor && t->frames[live - 1].fn != fn) {
        // Inlined calls share their container's slot: if our frame is further down that run of
        // equal slots, the frames above it were left by a jump.
        uint64_t i = live - 1;
        uintptr_t run = t->frames[i].slot;
        while (i > floor && t->frames[i].fn != fn && t->frames[i - 1].slot == run) i--;
        if (t->frames[i].fn == fn) live = i + 1;
    }
    ct_calls_close(t, depth, live, now, CT_CALL_UNWOUND);
    return (live > floor && t->frames[live - 1].fn == fn) ? live : 0;
}

// Is this the exit of a call that pushed no frame, made beneath the top frame? Its stack pointer
// lies below the one the top frame's function had at its enter hook (which its own exit hook sees
// again), while the top frame's return slot is still live. Its enter hook was muted while a call of
// its function was open (the exits wait for those: ct_mute.c). The top frame's own exit looks the
// same only if its function lowered its stack pointer since its enter hook (alloca): then the
// function is not muted, or the frame is closed later as unwound.
CT_NO_INSTRUMENT CT_SLOW_PATH static bool exits_beneath_top(const struct ct_thread *t, uint64_t d, uintptr_t fn,
                                                            uintptr_t sp) {
    // No frame at all, or only counted ones beyond capacity: a muted function's exit is one of
    // those (a counted call's exit would take one off the count it never added to).
    if (d == 0 || d > t->cap) return ct_mute_is_muted(fn);
    if (d <= t->away_floor) return true; // a coroutine's call whose frame a switch closed, or a muted one
    const struct ct_frame *top = &t->frames[d - 1];
    if (top->slot < sp || top->sp <= sp) return false;
    return top->fn != fn || ct_mute_is_muted(fn);
}

CT_EXPORT CT_NO_INSTRUMENT void __cyg_profile_func_exit(void *fn, void *site) {
    struct ct_thread *t = &ct_self;
    if (CT_UNLIKELY(t->state != CT_THREAD_ACTIVE)) {
        if (t->state == CT_THREAD_PASSIVE) {
            if (CT_UNLIKELY(--ct_mute_countdown == 0))
                ct_mute_passive_hook_sample((uintptr_t)fn, true, (uintptr_t)__builtin_return_address(0), (uintptr_t)site);
            return;
        }
        if (t->state != CT_THREAD_FORKED || !ct_first_call(t, false)) return;
    }
    if (ct_mute_skips((uintptr_t)fn, true, CT_CALLER_SP(), (uintptr_t)site)) return;
    uintptr_t sp = CT_CALLER_SP();
    // gcc often tail-calls the exit hook: the function's frame is already popped and our return
    // address is its own, stored in its return slot. Then that slot is the reference: the frames
    // below it are the skipped ones.
    if ((uintptr_t)__builtin_return_address(0) == (uintptr_t)site) sp = (uintptr_t)__builtin_frame_address(0) + 8;
    uint64_t d = t->depth;
    if (CT_UNLIKELY(d == 0 || d > t->cap || t->frames[d - 1].fn != (uintptr_t)fn ||
                    t->frames[d - 1].slot < sp || t->frames[d - 1].sp > sp)) {
        // The thread's own context again, after a coroutine (ct_switch.h): its stack's rules hold.
        if (CT_UNLIKELY(ct_switch_maybe_home(t, sp)) && !ct_on_own_stack(t, sp) && ct_switch_home_again(t, sp))
            d = t->depth;
        if (CT_UNLIKELY(!ct_on_own_stack(t, sp) || ct_in_hole(t, sp))) {
            // On another stack: only our own frame on top can be ours, and only if it was pushed on
            // another stack too (a call exits on the stack it entered on: a muted function's call
            // on an alternate stack is not the call of it open beneath); nothing is closed by address.
            if (d > t->cap) t->depth = d - 1;
            if (d == 0 || d > t->cap || d <= t->away_floor || t->frames[d - 1].fn != (uintptr_t)fn ||
                !ct_frame_elsewhere(t, &t->frames[d - 1]))
                return;
        } else if (exits_beneath_top(t, d, (uintptr_t)fn, sp)) {
            // Its own countdown: these exits must not weigh in the call counts' samples.
            if (CT_UNLIKELY(--ct_mute_stray_countdown == 0)) {
                ct_mute_stray_countdown = 128;
                ct_mute_stray_exit((uintptr_t)fn, (uintptr_t)__builtin_return_address(0), (uintptr_t)site);
            }
            return;
        } else {
            d = find_exiting_frame(t, d, (uintptr_t)fn, sp, ct_now());
            if (d == 0) {
                ct_mute_stray_exit((uintptr_t)fn, (uintptr_t)__builtin_return_address(0), (uintptr_t)site);
                return;
            }
        }
    }
    // The clock is read once the frame is known to be ours: early (the few loads and compares
    // above are the hook's own work charged to the call, which the calibration measures with the
    // rest: ct_overhead.c), and not at all for an exit that pops nothing (a muted function's calls
    // while its exit hooks wait for its open calls: those exits must cost as little as they can,
    // since no frame counts them for compensation). The measured duration bounds the cost from
    // above, so one compare decides for nearly every call, before the pop: nothing is read from
    // the frame after the lower depth is published (a handler may reuse the entry from then on).
    // The few calls that pass are popped out of line.
    // Muting (ct_mute.h) lowers the bound to a tenth of the threshold, to count near hits.
    uint64_t now = ct_now();
    uint64_t duration = now - t->frames[d - 1].start;
    if (CT_UNLIKELY(duration >= ct_mute_near_ticks) && t->recording) {
        ct_stack_exit_slow_call(t, d, duration);
        return;
    }
    if (CT_UNLIKELY(--ct_mute_countdown == 0))
        ct_mute_sample((uintptr_t)fn, t->frames[d - 1].hook_ra, (uintptr_t)__builtin_return_address(0), (uintptr_t)site, 0, 0);
    atomic_signal_fence(memory_order_seq_cst);
    t->depth = d - 1;
}
