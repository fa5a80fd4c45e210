// Per-thread state, in one initial-exec TLS struct (its layout: ct_thread_state.h), and the thread's
// life cycle: attach on its first hook, record its open calls when it ends.
#ifndef CT_THREAD_H
#define CT_THREAD_H

#include "ct_runtime.h"
#include "ct_thread_state.h"

extern CT_TLS struct ct_thread ct_self;

// The hooks' frame pointer (the runtime keeps frame pointers) is 16 bytes below the stack pointer
// of the function that called them: the return address and the saved frame pointer.
#define CT_CALLER_SP() ((uintptr_t)__builtin_frame_address(0) + 16)

// Attaching allocates, nothing more: the trace is opened by the hook that attaches (ct_first_call.c).
// A NEW thread's first hook, state ATTACHING, runtime set up: decides whether the thread is
// traced (else PASSIVE) and allocates its stack of calls. True when it is to record.
bool ct_thread_attach(struct ct_thread *t);
// The trace is open: the thread gets its stream and starts recording (ACTIVE).
void ct_thread_start_recording(struct ct_thread *t);
// The trace could not be opened: the stack goes, the thread runs untraced (PASSIVE).
void ct_thread_detach(struct ct_thread *t);
// A thread that keeps a stack of calls but never records (ACTIVE): the drain thread, for the
// overhead calibration's calls of the real hooks. True when it has one.
bool ct_thread_attach_unrecorded(struct ct_thread *t);
// The calling thread ends (pthread_exit from main, or its key destructor), its open calls already
// closed (ct_calls_close_open): retires its stream and writes its name.
void ct_thread_end(struct ct_thread *t);
// In a forked child: the calling thread goes on (its open calls are the child's too) with a new
// stream in the child's trace, once it opens.
void ct_thread_after_fork(void);
// A vfork child is about to run on the calling thread's memory (and when the parent resumes).
void ct_thread_vfork_begin(void);
void ct_thread_vfork_end(void);
// Is `sp` on the stack the thread runs on (its own, or the coroutine's it switched to: ct_switch.c)?
// Calls on another one (a handler on an alternate signal stack, a coroutine that code of its own
// switched to) cannot be compared with the frames on this one by address.
CT_NO_INSTRUMENT static inline bool ct_on_own_stack(const struct ct_thread *t, uintptr_t sp) {
    return sp >= t->stack_lo && sp < t->stack_hi;
}
// Is `sp` inside the body of the open frame that holds another stack (see hole_lo)? Slow paths only.
CT_NO_INSTRUMENT static inline bool ct_in_hole(const struct ct_thread *t, uintptr_t sp) {
    if (sp <= t->hole_lo || sp >= t->hole_hi) return false;
    uint64_t depth = t->depth > t->cap ? t->cap : t->depth;
    const struct ct_frame *f = &t->frames[t->hole_frame];
    return t->hole_frame < depth && f->sp == t->hole_lo && f->slot == t->hole_hi;
}
// Was frame `f` pushed by a call on another stack (elsewhere in memory, or inside a frame)?
CT_NO_INSTRUMENT static inline bool ct_frame_elsewhere(const struct ct_thread *t, const struct ct_frame *f) {
    return f->slot == CT_SLOT_ELSEWHERE || !ct_on_own_stack(t, f->sp);
}
// Where the frame that left by a tail call jumped (t->tail_target).
CT_NO_INSTRUMENT static inline uintptr_t ct_thread_tail_target(const struct ct_thread *t) {
    return t->tail_target_slot ? *t->tail_target_slot : t->tail_target;
}
// The main thread's state while it records (NULL otherwise), for the hang watchdog: only its
// depth, call count and frames may be read from another thread, and they may change meanwhile.
struct ct_thread *ct_thread_main(void);
// Is `sp` (a stack_t's ss_sp) the alternate signal stack the runtime gave the calling thread?
bool ct_thread_is_our_altstack(const void *sp);

#endif
