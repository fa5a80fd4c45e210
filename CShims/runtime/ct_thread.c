#include "ct_thread.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_overhead.h"
#include "ct_mute.h"
#include "ct_open_frames.h"
#include "ct_runtime.h"
#include "ct_trace.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

CT_TLS struct ct_thread ct_self;

// The main thread's state: another thread may close it at exit, and the hang watchdog reads its
// depth and call count (ct_hang.c).
static struct ct_thread *ct_main_thread;

CT_NO_INSTRUMENT struct ct_thread *ct_thread_main(void) { return ct_main_thread; }

CT_NO_INSTRUMENT static pid_t current_tid(void) { return (pid_t)syscall(SYS_gettid); }

// ---- Alternate signal stack ------------------------------------------------------------------
// A stack overflow raises SIGSEGV with no stack left to run a handler on, so the runtime gives a
// recording thread that has no alternate signal stack one of its own (our handler runs with
// SA_ONSTACK): the crash is then recorded like any other. The sigaltstack wrapper hides it from the
// program, which sees "none" until it installs its own. Raw syscalls: never our own wrapper.
#define CT_ALTSTACK_GUARD 4096u

// As large as the thread's own stack (address space only: MAP_NORESERVE), since a program's own
// SA_ONSTACK handlers now run on it too; at least 64 KiB, at most 64 MiB.
CT_NO_INSTRUMENT static size_t altstack_size(const struct ct_thread *t) {
    long min = sysconf(_SC_SIGSTKSZ);
    size_t size = t->stack_hi - t->stack_lo;
    if (t->stack_hi == UINTPTR_MAX || size > (64u << 20)) size = 64u << 20;
    if (size < (64u << 10)) size = 64u << 10;
    if (min > 0 && (size_t)min * 4 > size) size = (size_t)min * 4;
    return (size + 4095) & ~(size_t)4095;
}

// The thread's stack, from pthread_getattr_np; everything, if that fails.
CT_NO_INSTRUMENT static void find_stack(struct ct_thread *t) {
    t->stack_lo = 0;
    t->stack_hi = UINTPTR_MAX;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr && size) {
        t->stack_lo = (uintptr_t)addr;
        t->stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

CT_NO_INSTRUMENT static void give_altstack(struct ct_thread *t) {
    stack_t cur;
    if (syscall(SYS_sigaltstack, NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE)) return;
    size_t size = altstack_size(t);
    void *p = mmap(NULL, size + CT_ALTSTACK_GUARD, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) return;
    mprotect(p, CT_ALTSTACK_GUARD, PROT_NONE);
    stack_t ss = { .ss_sp = (char *)p + CT_ALTSTACK_GUARD, .ss_flags = 0, .ss_size = size };
    if (syscall(SYS_sigaltstack, &ss, NULL) != 0) {
        munmap(p, size + CT_ALTSTACK_GUARD);
        return;
    }
    t->altstack = p;
    t->altstack_size = size;
}

// Is `sp` (a stack_t's ss_sp) the alternate stack the runtime gave the calling thread?
CT_NO_INSTRUMENT bool ct_thread_is_our_altstack(const void *sp) {
    return ct_self.altstack && sp == (char *)ct_self.altstack + CT_ALTSTACK_GUARD;
}

CT_NO_INSTRUMENT static void take_altstack_back(struct ct_thread *t) {
    if (!t->altstack) return;
    stack_t cur;
    if (syscall(SYS_sigaltstack, NULL, &cur) == 0 && ct_thread_is_our_altstack(cur.ss_sp)) {
        stack_t off = { .ss_flags = SS_DISABLE };
        if (syscall(SYS_sigaltstack, &off, NULL) != 0) return; // still in use: keep it mapped
    }
    munmap(t->altstack, t->altstack_size + CT_ALTSTACK_GUARD);
    t->altstack = NULL;
}

// ---- Life cycle --------------------------------------------------------------------------------

CT_NO_INSTRUMENT static void start_recording(struct ct_thread *t) {
    t->stream = (struct ct_stream){ 0 };
    t->stream.id = atomic_fetch_add_explicit(&ct_rt.next_stream, 1, memory_order_relaxed);
    t->stream.tid = (uint64_t)current_tid();
    t->stream.stack_lo = t->stack_lo;
    t->stream.stack_hi = t->stack_hi;
    ct_meta_register_thread(t->stream.id, t->stream.tid);
    // The key's destructor runs when the thread exits (its value must be non-NULL).
    pthread_setspecific(ct_rt.thread_key, t);
    if ((pid_t)t->stream.tid == ct_rt.pid) ct_main_thread = t;
    give_altstack(t);
    ct_open_frames_add(t);
    t->recording = 1;
}

static bool attach(struct ct_thread *t);

// Attaching opens the trace (the first thread) and calibrates: an asynchronous cancel acted on in
// the middle would leave the trace opening for ever and other threads waiting on it. Cancellation
// is held off until the thread is attached (or not); one that came meanwhile is acted on then.
CT_NO_INSTRUMENT CT_SLOW_PATH bool ct_thread_attach(struct ct_thread *t) {
    if (t->state != CT_THREAD_NEW) return false;
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    bool attached = attach(t);
    pthread_setcancelstate(cancel_state, NULL);
    return attached;
}

CT_NO_INSTRUMENT static bool attach(struct ct_thread *t) {
    // A signal handler's hooks that run while this one attaches (opening the trace, say) see
    // ATTACHING and return at once: they must not open the trace a second time.
    t->state = CT_THREAD_ATTACHING;
    if (!ct_runtime_init()) { // another thread is initialising: try again on a later hook
        t->state = CT_THREAD_NEW;
        return false;
    }
    bool is_main = current_tid() == ct_rt.pid;
    if (!ct_rt.enabled || (!is_main && ct_rt.settings.threads == CT_THREADS_MAIN)) {
        t->state = CT_THREAD_PASSIVE;
        return false;
    }
    uint64_t cap = ct_rt.settings.max_depth;
    void *frames = mmap(NULL, cap * sizeof(struct ct_frame), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (frames == MAP_FAILED) {
        t->state = CT_THREAD_GONE;
        return false;
    }
    t->frames = frames;
    t->cap = cap;
    t->depth = 0;
    find_stack(t);
    // The first thread measures the hooks' cost (once per process), with a stack and no stream
    // yet, before the trace opens: the drain thread's start-up work (mapping and faulting in the
    // first blocks) would otherwise compete with the measurement on a small machine.
    if (!ct_trace_is_open()) {
        t->state = CT_THREAD_ACTIVE;
        ct_overhead_calibrate(t);
        t->state = CT_THREAD_ATTACHING;
    }
    if (!ct_trace_open()) {
        munmap(frames, cap * sizeof(struct ct_frame));
        t->frames = NULL;
        t->cap = 0;
        t->state = CT_THREAD_PASSIVE;
        return false;
    }
    start_recording(t);
    t->state = CT_THREAD_ACTIVE;
    return true;
}

CT_NO_INSTRUMENT CT_SLOW_PATH bool ct_thread_wake(struct ct_thread *t, bool entering) {
    if (t->state == CT_THREAD_NEW) return entering && ct_thread_attach(t);
    if (t->state != CT_THREAD_FORKED) return false;
    // The child's first hook: its own trace opens now, and the calls open at the fork go on in it.
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state); // as in ct_thread_attach
    t->state = CT_THREAD_ATTACHING;
    bool open = ct_trace_open();
    if (open) start_recording(t);
    t->state = open ? CT_THREAD_ACTIVE : CT_THREAD_PASSIVE;
    pthread_setcancelstate(cancel_state, NULL);
    return open;
}

// A thread is exiting (its key destructor, or pthread_exit on the main thread): calls it leaves
// open are recorded as unfinished; its block goes on to the next thread; its name is written.
CT_NO_INSTRUMENT void ct_thread_end(struct ct_thread *t) {
    if (t->state != CT_THREAD_ACTIVE) {
        ct_open_frames_remove(t); // whatever its state: the drain thread must not read it once it is gone
        return;
    }
    // Counted as a jump: a record write the thread was in when it was cancelled asynchronously
    // (unwound from there without any wrapper of ours seeing it) is over for good, and its lane
    // is taken over rather than this thread's last records dropped as nested (ct_stream.h).
    t->stream.jumps++;
    ct_thread_close_open_frames(t, ct_now());
    ct_open_frames_remove(t);    // after its open calls are recorded: muting waits for them till then
    ct_stream_retire(&t->stream);
    ct_meta_thread_final(t->stream.id, t->stream.tid);
    take_altstack_back(t);
    t->state = CT_THREAD_GONE; // hooks run by later TLS destructors return at once
}

CT_NO_INSTRUMENT void ct_thread_after_fork(void) {
    struct ct_thread *t = &ct_self;
    ct_main_thread = NULL;
    atomic_store_explicit(&ct_rt.next_stream, 1, memory_order_relaxed);
    if (t->state == CT_THREAD_PASSIVE && ct_rt.enabled) t->state = CT_THREAD_NEW; // forked from a worker
    ct_open_frames_after_fork(t->state == CT_THREAD_ACTIVE ? t : NULL);
    if (t->state != CT_THREAD_ACTIVE) return;
    t->recording = 0;
    t->stream = (struct ct_stream){ 0 };  // its block belongs to the parent
    t->state = CT_THREAD_FORKED;
}

CT_NO_INSTRUMENT void ct_thread_vfork_begin(void) {
    ct_self.saved_state = ct_self.state;
    atomic_signal_fence(memory_order_seq_cst);
    ct_self.state = CT_THREAD_VFORKED;
}

CT_NO_INSTRUMENT void ct_thread_vfork_end(void) {
    ct_self.state = ct_self.saved_state;
}

// ---- Closing frames ----------------------------------------------------------------------------


CT_NO_INSTRUMENT void ct_thread_close_frames(struct ct_thread *t, uint64_t depth, uint64_t new_depth,
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
        if (duration >= ct_threshold_ticks && t->recording) {
            // A muted function's frame whose exit hook went while it was open: it began as the
            // function was being muted (ct_mute.c). When it ended is not known: counted, not recorded.
            if (ct_mute_exit_lost(f.fn)) ct_header_drop(CT_LOST_MUTING);
            else ct_thread_record_call(t, &f, depth, duration, flags);
        }
        // Its exit hook never ran: its callers count half of its pair (after its own record,
        // which counts from its own entry on).
        if (flags == CT_CALL_UNWOUND) t->calls--;
    }
    t->jump_tick = 0;
}

CT_NO_INSTRUMENT void ct_thread_close_open_frames(struct ct_thread *t, uint64_t end) {
    if (t->state != CT_THREAD_ACTIVE) return;
    uint64_t depth = t->depth > t->cap ? t->cap : t->depth;
    t->jump_tick = 0;
    ct_thread_close_frames(t, depth, 0, end, CT_CALL_UNFINISHED);
    t->recording = 0;
}

CT_NO_INSTRUMENT void ct_thread_note_jump(uintptr_t caller_sp) {
    struct ct_thread *t = &ct_self;
    if (t->state != CT_THREAD_ACTIVE) return;
    t->stream.jumps++;
    uint64_t now = ct_now();
    // From another stack nothing on this one can be judged by address: the next hooks will tell.
    if (!ct_on_own_stack(t, caller_sp) || ct_in_hole(t, caller_sp)) {
        t->jump_tick = now;
        return;
    }
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
    if (live < depth) ct_thread_close_frames(t, depth, live, now, CT_CALL_UNWOUND); // at the earlier jump
    t->jump_tick = now;
}

// exit() or a crash on another thread while the main thread is inside calls: those calls are the
// root of the tree, so record them (unfinished) rather than lose them. The main thread is still
// running, so first take its stream over: set `closed`, then membarrier() so that any record write
// the main thread started before is visible in its lane's busy_sp (and any it starts later sees
// `closed`), then wait for that write to end. Async-signal-safe; gives up after 20 ms. Where it cannot, the
// trace says so (CT_LOST_MAIN_AT_EXIT).
CT_NO_INSTRUMENT void ct_thread_close_main_from_elsewhere(uint64_t end) {
    ct_thread_close_from_elsewhere(ct_main_thread, end, true);
}

CT_NO_INSTRUMENT void ct_thread_close_from_elsewhere(struct ct_thread *m, uint64_t end, bool running) {
    if (!m || m == &ct_self || !m->recording) return;
    if (running && !ct_rt.membarrier_ok) {
        ct_header_lose(CT_LOST_MAIN_AT_EXIT, 0);
        return;
    }
    atomic_store_explicit(&m->stream.closed, 1, memory_order_relaxed);
    if (running && (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0 ||
                    !ct_stream_wait_idle(&m->stream, ct_monotonic_ns() + 20 * 1000000ull))) {
        ct_header_lose(CT_LOST_MAIN_AT_EXIT, 0);
        return;
    }
    atomic_thread_fence(memory_order_acquire);
    uint64_t depth = *(volatile uint64_t *)&m->depth;
    uint64_t calls = *(volatile uint64_t *)&m->calls;
    if (depth > m->cap) depth = m->cap;
    while (depth > 0) {
        depth--;
        struct ct_frame f = m->frames[depth];
        uint64_t duration = end > f.start ? end - f.start : 0;
        // The main thread goes on meanwhile: a frame it pushed after `calls` was read counts none.
        uint64_t descendants = calls >= f.calls ? (calls - f.calls) / 2 : 0;
        if (duration >= ct_threshold_ticks && ct_thread_keeps_call(f.fn, duration, descendants))
            ct_stream_write_call_owned(&m->stream, f.fn, f.site, f.start, duration, descendants, depth,
                                       CT_CALL_UNFINISHED);
    }
    ct_stream_seal(&m->stream);
}
