// Per-thread state, in one initial-exec TLS struct: the stack of open calls and the thread's stream,
// and the thread's life cycle: attach on its first hook, record its open calls when it ends.
#ifndef CT_THREAD_H
#define CT_THREAD_H

#include "ct_runtime.h"
#include "ct_stream.h"

// One open call. `slot` is the address of the stack word holding the call's return address (found
// by the enter hook): it tells a frame that is still live from one a longjmp or exception skipped.
// `sp` is the stack pointer the function had when it called the enter hook: its callees' return
// slots lie just below it. `hook_ra` is where the enter hook was called from; it tells an inlined
// call (gcc instruments those too, and they share their container's slot and call site) from a
// repeat of the same call. `calls` is the thread's count of timed calls (in halves of a hook pair),
// this one included: the calls entered since are its descendants, whose hooks' cost is taken out
// of its own.
struct ct_frame {
    uintptr_t fn;
    uintptr_t site;
    uintptr_t slot;
    uintptr_t sp;
    uintptr_t hook_ra;
    uint64_t start;
    uint64_t calls;
    uint64_t levels;        // calls open of the functions counted by level, this one's included (ct_mute_levels.h)
    uint64_t untimed;       // the thread's `untimed` at its entry
};

enum ct_thread_state {
    CT_THREAD_NEW = 0,      // no hook has run on this thread yet
    CT_THREAD_ACTIVE = 1,   // keeps a stack (and records, if `recording`)
    CT_THREAD_PASSIVE = 2,  // not recorded (another thread with CALLTRACE_THREADS=main, or no trace could open)
    CT_THREAD_GONE = 3,     // the thread is exiting, or its stack could not be allocated
    CT_THREAD_VFORKED = 4,  // a vfork child runs on this thread's memory: hooks must not touch it
    CT_THREAD_FORKED = 5,   // a fork child's thread with open calls: records once the child's trace opens
    CT_THREAD_ATTACHING = 6,// its first hook is attaching it: a signal handler's hooks meanwhile return
    CT_THREAD_UNTRACED = 7, // no setting asked for a trace: the hooks return at once, for good
    CT_THREAD_RESTRICTED = 8,// the thread forbade itself what the runtime needs (ct_restrict.h): nothing
                            // of ours runs on it any more, no clock read and no system call
};

struct ct_thread {
    uint32_t state;
    uint32_t recording;     // this thread's slow calls become records
    uint64_t depth;         // calls open now; may exceed cap (those are counted, not kept)
    uint64_t calls;         // hooks run on this thread, in halves of a pair (overhead compensation)
    uint64_t untimed;       // calls its sleds' handlers chose not to time (ct_mute_levels.h): compensated too
    uint64_t cap;
    struct ct_frame *frames;
    uintptr_t overflow_slot; // return slot of the first call beyond cap, while depth > cap
    uint64_t jump_tick;     // when a longjmp or throw last left frames behind (0: none pending)
    // A sled frame that left by a tail call and is not known to have ended (ct_sled_hooks.c): its
    // depth (index + 1; 0: none), the tick of its tail sled, the thread's count of timed calls
    // then (a call made since means its tail callee ran on: it ends later), and where the jump
    // goes (0: not known; or the GOT slot to read when the next call enters, the loader having
    // filled it in by then): that function's entry joins it as its tail callee.
    uint64_t tail_depth, tail_tick, tail_calls;
    uint32_t levels_epoch;  // ct_levels_epoch when this thread last counted its frames' levels
    uintptr_t tail_target;
    const uintptr_t *tail_target_slot;
    // Per stack index (cap of them, after the frames): when the last call kept for recording at
    // that index started. A call one index up that started after a frame's own start is its callee
    // (or a signal handler's call nested under it), so that frame is kept whatever its cost
    // (ct_calls_keep). Written only on the slow path; an older value is simply earlier than any
    // later frame's start, so nothing is ever reset.
    uint64_t *kept_starts;
    uintptr_t stack_lo, stack_hi; // the stack it runs on (its own, or a coroutine's: ct_switch.c)
    // Another stack that lives inside a frame on this one (a coroutine's stack that is an array in a
    // caller's locals): the body (hole_lo, hole_hi) of the open frame `hole_frame` (its enter stack
    // pointer and its return slot). Meaningful while that frame is open (ct_in_hole).
    uintptr_t hole_lo, hole_hi;
    uint64_t hole_frame;
    // Coroutines (ct_switch.c). The thread's own stack (home_lo, home_hi). While `away`, a coroutine
    // that swapcontext or setcontext switched to runs: frames from `away_floor` up are its, those
    // beneath are the thread's own context's, suspended at stack pointer `home_sp`, and no rule
    // compares the two by address. `left_lo`, `left_hi`: the coroutine stack the last switch between
    // two coroutines left; `home_tick`: when a switch back to the thread's own context was made
    // (0: none), which that context's first event takes up.
    uintptr_t home_lo, home_hi, home_sp;
    uint64_t away_floor;
    uintptr_t left_lo, left_hi;
    uint64_t home_tick;
    uint32_t away;
    void *altstack;         // the alternate signal stack the runtime gave this thread, if any
    size_t altstack_size;
    uint32_t saved_state;   // the state before a vfork, restored in the parent
    struct ct_stream stream;
};

extern CT_TLS struct ct_thread ct_self;

// The hooks' frame pointer (the runtime keeps frame pointers) is 16 bytes below the stack pointer
// of the function that called them: the return address and the saved frame pointer.
#define CT_CALLER_SP() ((uintptr_t)__builtin_frame_address(0) + 16)

// Attaching allocates, nothing more: the trace is opened by the hook that attaches (ct_hooks.c).
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
// A frame pushed by a call made on another stack inside a frame of this one has no slot (0): its
// address says nothing about this stack's frames, and every hook near it takes the slow path.
#define CT_SLOT_ELSEWHERE ((uintptr_t)0)
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
