// A thread's stack of calls as both instrumentation mechanisms keep it: -finstrument-functions'
// hooks (ct_hooks.c) and sleds (ct_sled_hooks.c, ct_sled_slow.c). They find a call's return slot
// differently (the hooks search the stack for it; a sled's stub is handed its address) and the
// sleds have tail calls to follow; the rest is shared: how a frame is pushed so that a signal
// handler sees a consistent stack, which frames a new call proves skipped, calls beyond the
// stack's capacity, and what a slow call's exit does (a thread's first call: ct_first_call.h).
// The reasons are in ct_hooks.c's top comment and docs/design.md ("Skipped frames", "Signals").
#ifndef CT_STACK_H
#define CT_STACK_H

#include "ct_calls.h"
#include "ct_clock.h"

// Pushes a timed call at depth `d` (below the capacity), the clock read last but before the entry
// is published: a signal handler that nests under this call starts after it, and only the stores
// below are charged to the call. The entry is complete before it is published and written again
// after (a handler that ran just before the publish used the same entry). Timed calls are counted
// for overhead compensation, in halves of a hook pair: the calls entered after this one are its
// descendants (ct_calls_record).
CT_NO_INSTRUMENT static inline void ct_stack_push(struct ct_thread *t, uint64_t d, uintptr_t fn, uintptr_t site,
                                                  uintptr_t slot, uintptr_t sp, uintptr_t hook_ra, uint64_t levels,
                                                  uint64_t now) {
    uint64_t calls = t->calls + 2;
    t->calls = calls;
    struct ct_frame entry = { fn, site, slot, sp, hook_ra, now, calls, levels, t->untimed };
    t->frames[d] = entry;
    atomic_signal_fence(memory_order_seq_cst);
    t->depth = d + 1;
    atomic_signal_fence(memory_order_seq_cst);
    t->frames[d] = entry;
}

// The call just pushed at depth `d` is of a function whose entry was muted while its entry handler
// ran (the handler read the function's mark after publishing the frame: ct_sled_table.h, ct_mute.h).
// Its exits may be gone already, so it would never pop: it is taken back, and not timed, as any
// call of a muted function (docs/design.md, "The moment of muting"). A tail callee that joined the
// frame beneath (CT_FRAME_TAIL_JOINED) leaves that frame waiting for its tail callee again. (Read
// from the frame, so that the handlers keep nothing more alive across the push for this.)
CT_NO_INSTRUMENT static inline void ct_stack_take_back(struct ct_thread *t, uint64_t d) {
    atomic_signal_fence(memory_order_seq_cst);
    bool joined = t->frames[d].hook_ra == CT_FRAME_TAIL_JOINED;
    t->depth = d;
    t->calls -= 2;
    if (joined) t->tail_depth = d;
}

// An exit while the depth is beyond the stack's capacity, from `slot`: a counted call beyond it
// returns (true: nothing else to do), or the exit is back above the first of them, all of which
// are gone (*depth, and the thread's, come back to the capacity; false).
CT_NO_INSTRUMENT static inline bool ct_stack_exit_beyond_capacity(struct ct_thread *t, uint64_t *depth, uintptr_t slot) {
    if (slot < t->overflow_slot) {
        t->depth = *depth - 1;
        return true;
    }
    *depth = t->cap;
    t->depth = *depth;
    return false;
}

// The top frame, a sled's whose body is not known yet (its `sp` is its slot), calls from `caller_sp`:
// that is where its body ends.
CT_NO_INSTRUMENT static inline void ct_stack_learn_body(struct ct_frame *top, uintptr_t caller_sp) {
    if (top->sp == top->slot) top->sp = caller_sp;
}

// A call on the thread's own stack that is not plainly a callee of the top frame (its slot is at
// or above the top frame's, or its stack pointer above the one the top frame had): pops the frames
// it proves skipped, or finds it is a call on another stack inside an open frame (then *slot
// becomes CT_SLOT_ELSEWHERE and nothing is popped). For a hook (`sled` false) an equal slot with
// the same call site and another hook return address is a call gcc inlined into the top frame,
// not a sibling; sleds are never inlined, so for them an equal slot is always a sibling.
// Returns the new depth, or CT_STACK_OUTSIDE when the frames it closed held CALLTRACE_FILTER's
// included call and this one is outside every included call (not to be pushed).
// A sled's frame has no stack pointer of its own at first (its entry sled runs before its
// prologue): `sp` is its slot until its first callee says where its body ends (the callee's slot
// plus a word: its caller's stack pointer at the call, ct_stack_learn_body).
#define CT_STACK_OUTSIDE UINT64_MAX
uint64_t ct_stack_settle(struct ct_thread *t, uint64_t depth, uintptr_t *slot, uintptr_t caller_sp, uintptr_t site,
                         uintptr_t hook_ra, uintptr_t fn, bool sled);

// A call entered beyond the stack's capacity (depth > cap), where calls are only counted: true when
// it is one of them (or is outside the filter's included calls); otherwise the counted calls are
// gone and the depth is back at the capacity.
bool ct_stack_enter_beyond_capacity(struct ct_thread *t, uintptr_t slot, uintptr_t fn);

// Pops the top frame of a call that lasted at least the near bound (the threshold, or a tenth of
// it while muting counts near hits) and records it if, its hooks' overhead out, it reached the
// threshold; now and then calibrates the hooks again (out of line already).
void ct_stack_exit_slow_call(struct ct_thread *t, uint64_t d, uint64_t duration);

// Pops the top frame (depth `d`, within the capacity) of a call that ended at `end`: recorded if
// it was slow, as its exit hook would have done.
void ct_stack_pop_ended(struct ct_thread *t, uint64_t d, uint64_t end);

// The frame that left by a tail call (t->tail_depth), on top, is known to have ended: at its tail
// sled if no call was made since and `returned` is false, else now (its tail callee ran on until
// something showed that it had returned: `returned`, its return seen). A tail callee that joined
// its caller (CT_FRAME_TAIL_JOINED) takes the frames it joined with it, unless `alone`: they end
// when it does.
void ct_stack_end_tail(struct ct_thread *t, uint64_t now, bool returned, bool alone);

#endif
