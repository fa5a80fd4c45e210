// A thread's state, in one initial-exec TLS struct (ct_self, ct_thread.h): its stack of open calls
// and its stream. The layout alone, beneath the thread's life cycle (ct_thread.c): the drain
// thread's view of the recording threads' open calls (ct_open_frames.c) reads it too.
#ifndef CT_THREAD_STATE_H
#define CT_THREAD_STATE_H

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

// A frame pushed by a call made on another stack inside a frame of this one has no slot (0): its
// address says nothing about this stack's frames, and every hook near it takes the slow path.
#define CT_SLOT_ELSEWHERE ((uintptr_t)0)

// The `hook_ra` of a frame pushed by a sled: 0, or this for a call entered as the tail callee of
// the frame beneath it (same slot: that frame tail-called it, and ends when it does). A hook's
// frame holds where its enter hook returned to, never this.
#define CT_FRAME_TAIL_JOINED ((uintptr_t)1)

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

#endif
