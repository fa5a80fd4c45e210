// The hot path: __cyg_profile_func_enter and __cyg_profile_func_exit.
//
// Every instrumented call runs both, so they do as little as they can: a TLS load, one scan of a few
// stack words, a clock read and a push on enter; a clock read, a compare and a pop on exit. No
// syscall, lock, allocation or __tls_get_addr. Only a call that lasted at least the threshold
// (compared in ticks: no division) goes on to ct_stream_write_call.
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
// frame recorded twice. atomic_signal_fence keeps the compiler from reordering those steps; no
// other thread reads them.
#include "ct_thread.h"
#include "ct_clock.h"
#include "ct_file.h"
#include "ct_meta.h"
#include "ct_runtime.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

CT_TLS struct ct_thread ct_self;
uint64_t ct_threshold_ticks = UINT64_MAX;

// How many words above the caller's stack pointer the hook looks for its return address at once;
// frames larger than that (arrays on the stack) take a second, out-of-line scan of up to 64 KiB.
#define CT_SLOT_SCAN_WORDS 64
#define CT_SLOT_FAR_SCAN_WORDS 8192

// The rest of the upward scan for a big frame. Still stops at the first match, so it never reads
// above the real slot; a frame over 64 KiB gets the scan's end, an underestimate that can make the
// skipped-frame checks take that one frame for a skipped one.
CT_NO_INSTRUMENT CT_SLOW_PATH static uintptr_t ct_return_slot_far(const uintptr_t *word, uintptr_t site) {
    for (int i = CT_SLOT_SCAN_WORDS; i < CT_SLOT_FAR_SCAN_WORDS; i++) {
        if (word[i] == site) return (uintptr_t)&word[i];
    }
    return (uintptr_t)&word[CT_SLOT_FAR_SCAN_WORDS];
}

// Finds the stack word holding the instrumented function's return address (`site`): it lies in the
// function's frame, above the stack pointer the function had when it called the hook. When the
// parent's slot is close above (the usual case), the scan goes down from just under it, so the
// first match is the real slot even when the function keeps a copy of its return address lower in
// its frame (clang does, to pass it to both hooks). Otherwise it goes up from the stack pointer and
// stops at the first match, never reading above the real slot (a stack may end just above it).
CT_NO_INSTRUMENT static inline uintptr_t ct_return_slot(uintptr_t caller_sp, uintptr_t site, uintptr_t parent_slot) {
    const uintptr_t *word = (const uintptr_t *)caller_sp;
    if (parent_slot > caller_sp && parent_slot - caller_sp <= CT_SLOT_SCAN_WORDS * sizeof(uintptr_t)) {
        for (const uintptr_t *p = (const uintptr_t *)parent_slot - 1; p >= word; p--) {
            if (*p == site) return (uintptr_t)p;
        }
    }
    for (int i = 0; i < CT_SLOT_SCAN_WORDS; i++) {
        if (word[i] == site) return (uintptr_t)&word[i];
    }
    return ct_return_slot_far(word, site);
}

CT_NO_INSTRUMENT CT_SLOW_PATH static void record(struct ct_thread *t, const struct ct_frame *f, uint64_t depth,
                                                 uint64_t duration, unsigned flags) {
    enum ct_write_result r = ct_stream_write_call(&t->stream, f->fn, f->site, f->start, duration, depth, flags);
    struct ct_file_header *h = ct_file_header();
    if (CT_UNLIKELY(r == CT_DROPPED_FULL) && h) atomic_fetch_add_explicit(&h->drops, 1, memory_order_relaxed);
    if (CT_UNLIKELY(r == CT_DROPPED_NESTED) && h) atomic_fetch_add_explicit(&h->nested_drops, 1, memory_order_relaxed);
}

// Pops frames [new_depth, depth) that will never see their exit hook, recording the slow ones with
// `flags` and a cost that runs to `end` (or to the longjmp/throw that left them, when it was seen).
CT_NO_INSTRUMENT static void close_frames(struct ct_thread *t, uint64_t depth, uint64_t new_depth,
                                          uint64_t end, unsigned flags) {
    uint64_t jump = flags == CT_CALL_UNWOUND ? t->jump_tick : 0;
    while (depth > new_depth) {
        depth--;
        struct ct_frame f = t->frames[depth];
        atomic_signal_fence(memory_order_seq_cst);
        t->depth = depth;
        atomic_signal_fence(memory_order_seq_cst);
        uint64_t stop = jump > f.start ? jump : end;
        uint64_t duration = stop > f.start ? stop - f.start : 0;
        if (duration >= ct_threshold_ticks && t->recording) record(t, &f, depth, duration, flags);
    }
    t->jump_tick = 0;
}

// Can frame `f` still be live, given a new call with this slot, call site and hook return address?
CT_NO_INSTRUMENT static inline bool is_skipped(const struct ct_frame *f, uintptr_t slot, uintptr_t site,
                                               uintptr_t hook_ra) {
    if (slot != f->slot) return slot > f->slot;
    return site != f->site || hook_ra == f->hook_ra; // equal slot: a sibling, or an inlined call
}

// Pops the frames a new call proves skipped. Returns the new depth.
CT_NO_INSTRUMENT CT_SLOW_PATH static uint64_t pop_skipped_frames(struct ct_thread *t, uint64_t depth,
                                                                uintptr_t slot, uintptr_t site,
                                                                uintptr_t hook_ra) {
    uint64_t live = depth;
    while (live > 0 && is_skipped(&t->frames[live - 1], slot, site, hook_ra)) live--;
    if (live < depth) close_frames(t, depth, live, ct_now(), CT_CALL_UNWOUND);
    return live;
}

// Beyond the stack's capacity calls are only counted. Returns true when this call is one of them;
// otherwise we are back at or above the first uncounted call's slot, and every counted call is gone.
CT_NO_INSTRUMENT CT_SLOW_PATH static bool enter_beyond_capacity(struct ct_thread *t, uintptr_t slot) {
    if (slot < t->overflow_slot) {
        t->depth++;
        return true;
    }
    t->depth = t->cap;
    return false;
}

CT_EXPORT CT_NO_INSTRUMENT void __cyg_profile_func_enter(void *fn, void *site) {
    struct ct_thread *t = &ct_self;
    if (CT_UNLIKELY(t->state != CT_THREAD_ACTIVE) && !ct_thread_attach(t)) return;
    uint64_t d = t->depth;
    uintptr_t parent_slot = d > 0 && d <= t->cap ? t->frames[d - 1].slot : 0;
    uintptr_t slot = ct_return_slot(CT_CALLER_SP(), (uintptr_t)site, parent_slot);
    uintptr_t hook_ra = (uintptr_t)__builtin_return_address(0);
    if (CT_UNLIKELY(d > t->cap)) {
        if (enter_beyond_capacity(t, slot)) return;
        d = t->depth;
    }
    if (d > 0 && CT_UNLIKELY(slot >= t->frames[d - 1].slot)) d = pop_skipped_frames(t, d, slot, (uintptr_t)site, hook_ra);
    if (CT_LIKELY(d < t->cap)) {
        // The clock is read last but before the entry is published: a signal handler that nests
        // under this call starts after it, and only the stores below are charged to the call.
        struct ct_frame entry = { (uintptr_t)fn, (uintptr_t)site, slot, hook_ra, ct_now() };
        t->frames[d] = entry;           // complete before it is published (see the top comment)...
        atomic_signal_fence(memory_order_seq_cst);
        t->depth = d + 1;
        atomic_signal_fence(memory_order_seq_cst);
        t->frames[d] = entry;           // ...and again after
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
    if (depth > t->cap) {
        if (sp < t->overflow_slot) { // a counted call beyond capacity returns
            t->depth = depth - 1;
            return 0;
        }
        depth = t->cap;              // back above the first counted call: all of them are gone
        t->depth = depth;
    }
    uint64_t live = depth;
    while (live > 0 && t->frames[live - 1].slot < sp) live--;
    if (live > 0 && t->frames[live - 1].fn != fn) {
        // Inlined calls share their container's slot: if our frame is further down that run of
        // equal slots, the frames above it were left by a jump.
        uint64_t i = live - 1;
        uintptr_t run = t->frames[i].slot;
        while (i > 0 && t->frames[i].fn != fn && t->frames[i - 1].slot == run) i--;
        if (t->frames[i].fn == fn) live = i + 1;
    }
    close_frames(t, depth, live, now, CT_CALL_UNWOUND);
    return (live > 0 && t->frames[live - 1].fn == fn) ? live : 0;
}

CT_EXPORT CT_NO_INSTRUMENT void __cyg_profile_func_exit(void *fn, void *site) {
    struct ct_thread *t = &ct_self;
    if (CT_UNLIKELY(t->state != CT_THREAD_ACTIVE)) return;
    uint64_t now = ct_now();            // first, so the hook's own work is not charged to the call
    uintptr_t sp = CT_CALLER_SP();
    // gcc often tail-calls the exit hook: the function's frame is already popped and our return
    // address is its own, stored in its return slot. Then that slot is the reference: the frames
    // below it are the skipped ones.
    if ((uintptr_t)__builtin_return_address(0) == (uintptr_t)site) sp = (uintptr_t)__builtin_frame_address(0) + 8;
    uint64_t d = t->depth;
    if (CT_UNLIKELY(d == 0 || d > t->cap || t->frames[d - 1].fn != (uintptr_t)fn ||
                    t->frames[d - 1].slot < sp)) {
        d = find_exiting_frame(t, d, (uintptr_t)fn, sp, now);
        if (d == 0) return;
    }
    struct ct_frame f = t->frames[d - 1];
    atomic_signal_fence(memory_order_seq_cst);
    t->depth = d - 1;
    uint64_t duration = now - f.start;
    if (CT_UNLIKELY(duration >= ct_threshold_ticks) && t->recording) record(t, &f, d - 1, duration, 0);
}

// First hook on a thread: allocate its stack, decide whether it records.
CT_NO_INSTRUMENT CT_SLOW_PATH bool ct_thread_attach(struct ct_thread *t) {
    if (t->state != CT_THREAD_NEW) return false;
    bool ready = atomic_load_explicit(&ct_rt.ready, memory_order_acquire);
    bool is_main = syscall(SYS_gettid) == getpid();
    if (ready && !is_main && ct_rt.settings.threads == CT_THREADS_MAIN) {
        t->state = CT_THREAD_PASSIVE;
        return false;
    }
    if (!is_main && !ready) { // a thread started before the runtime: leave it alone
        t->state = CT_THREAD_PASSIVE;
        return false;
    }
    uint64_t cap = ready ? ct_rt.settings.max_depth : 4096;
    void *frames = mmap(NULL, cap * sizeof(struct ct_frame), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (frames == MAP_FAILED) {
        t->state = CT_THREAD_GONE;
        return false;
    }
    t->frames = frames;
    t->cap = cap;
    t->depth = 0;
    t->state = CT_THREAD_ACTIVE;
    if (ready) ct_thread_start_recording(t);
    return true;
}

CT_NO_INSTRUMENT void ct_thread_note_jump(uintptr_t caller_sp) {
    struct ct_thread *t = &ct_self;
    if (t->state != CT_THREAD_ACTIVE) return;
    t->stream.jumps++;
    uint64_t now = ct_now();
    uint64_t depth = t->depth;
    if (depth > t->cap) {
        if (caller_sp < t->overflow_slot) { // jumping from beyond capacity: nothing kept is gone yet
            t->jump_tick = now;
            return;
        }
        depth = t->cap;
        t->depth = depth;
    }
    uint64_t live = depth;
    while (live > 0 && t->frames[live - 1].slot < caller_sp) live--;
    if (live < depth) close_frames(t, depth, live, now, CT_CALL_UNWOUND); // at the earlier jump
    t->jump_tick = now;
}

// Records the open frames (innermost first, as exits would) with `flags`, and stops recording.
CT_NO_INSTRUMENT void ct_thread_close_open_frames(struct ct_thread *t, uint64_t end, unsigned flags) {
    if (t->state != CT_THREAD_ACTIVE) return;
    uint64_t depth = t->depth > t->cap ? t->cap : t->depth;
    t->jump_tick = 0;
    close_frames(t, depth, 0, end, flags);
    t->recording = 0;
}
