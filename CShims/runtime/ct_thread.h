// Per-thread state, in one initial-exec TLS struct: the stack of open calls and the thread's stream.
#ifndef CT_THREAD_H
#define CT_THREAD_H

#include "ct_stream.h"

// One open call. `slot` is the address of the stack word holding the call's return address (found
// by ct_return_slot): it tells a frame that is still live from one a longjmp or exception skipped.
// `hook_ra` is where the enter hook was called from; it tells an inlined call (gcc instruments those
// too, and they share their container's slot and call site) from a repeat of the same call.
struct ct_frame {
    uintptr_t fn;
    uintptr_t site;
    uintptr_t slot;
    uintptr_t hook_ra;
    uint64_t start;
};

enum ct_thread_state {
    CT_THREAD_NEW = 0,      // no hook has run on this thread yet
    CT_THREAD_ACTIVE = 1,   // keeps a stack (and records, if `recording`)
    CT_THREAD_PASSIVE = 2,  // not traced (another thread with CALLTRACE_THREADS=main): hooks return
    CT_THREAD_GONE = 3,     // the thread is exiting, or its stack could not be allocated
};

struct ct_thread {
    uint32_t state;
    uint32_t recording;     // this thread's slow calls become records (the main-thread test)
    uint64_t depth;         // calls open now; may exceed cap (those are counted, not kept)
    uint64_t cap;
    struct ct_frame *frames;
    uintptr_t overflow_slot; // return slot of the first call beyond cap, while depth > cap
    uint64_t jump_tick;     // when a longjmp or throw last left frames behind (0: none pending)
    struct ct_stream stream;
};

extern CT_TLS struct ct_thread ct_self;

// The hooks' frame pointer (the runtime keeps frame pointers) is 16 bytes below the stack pointer
// of the function that called them: the return address and the saved frame pointer.
#define CT_CALLER_SP() ((uintptr_t)__builtin_frame_address(0) + 16)

// Slow paths of the hooks (ct_hooks.c).
bool ct_thread_attach(struct ct_thread *t);
// At exit or a crash on another thread: records the main thread's open calls as unfinished and
// closes its stream (ct_runtime.c).
void ct_close_main_thread_from_elsewhere(uint64_t end);
// Gives the thread a stream and turns recording on (ct_runtime.c).
void ct_thread_start_recording(struct ct_thread *t);
void ct_thread_close_open_frames(struct ct_thread *t, uint64_t end, unsigned flags);
// A longjmp or an unwinding step is about to leave frames behind, called from `caller_sp`: frames
// below it are gone already (left by an earlier jump); the next ones to go leave now.
void ct_thread_note_jump(uintptr_t caller_sp);

#endif
