// A thread's life: attach (its stack of calls), start recording (its stream), end, fork and vfork,
// and the alternate signal stack the runtime gives it.
#include "ct_thread.h"
#include "ct_meta.h"
#include "ct_open_frames.h"
#include "ct_syscall.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

CT_TLS struct ct_thread ct_self;

// The main thread's state: another thread may close it at exit, and the hang watchdog reads its
// depth and call count (ct_hang.c).
static struct ct_thread *ct_main_thread;

CT_NO_INSTRUMENT struct ct_thread *ct_thread_main(void) { return ct_main_thread; }

CT_NO_INSTRUMENT static pid_t current_tid(void) { return (pid_t)ct_syscall(SYS_gettid); }

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

extern void *__libc_stack_end;

// The main thread's stack without pthread_getattr_np, which reads all of /proc/self/maps for it (7
// system calls and the kernel's listing of every mapping, on the launch path): its top is just
// above where the loader left the stack pointer (__libc_stack_end: argv and the environment lie
// between, where no frame goes), and it may grow down as far as RLIMIT_STACK. False when the limit
// is too large to bound it by (unlimited: the mappings must be read after all).
CT_NO_INSTRUMENT static bool find_main_stack(struct ct_thread *t) {
    struct rlimit rl;
    if (!__libc_stack_end || getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur > (1ull << 30))
        return false;
    uintptr_t top = ((uintptr_t)__libc_stack_end + 4095) & ~(uintptr_t)4095;
    if (top < rl.rlim_cur) return false;
    // Not the stack it runs on (a fork child's main thread that was a worker of its parent's).
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (here >= top || here < top - (uintptr_t)rl.rlim_cur) return false;
    t->stack_hi = top;
    t->stack_lo = top - (uintptr_t)rl.rlim_cur;
    return true;
}

// The thread's stack, from pthread_getattr_np; everything, if that fails.
CT_NO_INSTRUMENT static void find_stack(struct ct_thread *t, bool is_main) {
    t->stack_lo = 0;
    t->stack_hi = UINTPTR_MAX;
    if (is_main && find_main_stack(t)) return;
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

// Its own stack is where it runs until a swapcontext takes it to a coroutine (ct_switch.c).
CT_NO_INSTRUMENT static void find_home(struct ct_thread *t, bool is_main) {
    find_stack(t, is_main);
    t->home_lo = t->stack_lo;
    t->home_hi = t->stack_hi;
    t->away = 0;
    t->away_floor = 0;
}

CT_NO_INSTRUMENT static void give_altstack(struct ct_thread *t) {
    stack_t cur;
    if (ct_syscall(SYS_sigaltstack, NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE)) return;
    size_t size = altstack_size(t);
    void *p = mmap(NULL, size + CT_ALTSTACK_GUARD, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) return;
    mprotect(p, CT_ALTSTACK_GUARD, PROT_NONE);
    stack_t ss = { .ss_sp = (char *)p + CT_ALTSTACK_GUARD, .ss_flags = 0, .ss_size = size };
    if (ct_syscall(SYS_sigaltstack, &ss, NULL) != 0) {
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
    if (ct_syscall(SYS_sigaltstack, NULL, &cur) == 0 && ct_thread_is_our_altstack(cur.ss_sp)) {
        stack_t off = { .ss_flags = SS_DISABLE };
        if (ct_syscall(SYS_sigaltstack, &off, NULL) != 0) return; // still in use: keep it mapped
    }
    munmap(t->altstack, t->altstack_size + CT_ALTSTACK_GUARD);
    t->altstack = NULL;
}

// ---- Life cycle --------------------------------------------------------------------------------

CT_NO_INSTRUMENT void ct_thread_start_recording(struct ct_thread *t) {
    t->stream = (struct ct_stream){ 0 };
    // Streams 0 and CT_STREAM_EVENTS are the runtime's own (after 2^32 threads the count wraps).
    do t->stream.id = atomic_fetch_add_explicit(&ct_rt.next_stream, 1, memory_order_relaxed);
    while (t->stream.id == 0 || t->stream.id == CT_STREAM_EVENTS);
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
    t->state = CT_THREAD_ACTIVE;
}

// The thread's stack of calls and, after it, its kept_starts: address space only (MAP_NORESERVE),
// touched as deep as it goes.
CT_NO_INSTRUMENT static size_t stack_bytes(uint64_t cap) { return cap * (sizeof(struct ct_frame) + sizeof(uint64_t)); }

CT_NO_INSTRUMENT static bool allocate(struct ct_thread *t, bool is_main) {
    uint64_t cap = ct_rt.settings.max_depth;
    void *frames = mmap(NULL, stack_bytes(cap), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (frames == MAP_FAILED) return false;
    t->frames = frames;
    t->kept_starts = (uint64_t *)(t->frames + cap);
    t->cap = cap;
    t->depth = 0;
    find_home(t, is_main);
    return true;
}

CT_NO_INSTRUMENT bool ct_thread_attach(struct ct_thread *t) {
    bool is_main = current_tid() == ct_rt.pid;
    if (!ct_rt.enabled) {
        t->state = CT_THREAD_UNTRACED;
        return false;
    }
    if (!is_main && ct_rt.settings.threads == CT_THREADS_MAIN) {
        t->state = CT_THREAD_PASSIVE;
        return false;
    }
    if (!allocate(t, is_main)) {
        t->state = CT_THREAD_GONE;
        return false;
    }
    return true;
}

CT_NO_INSTRUMENT void ct_thread_detach(struct ct_thread *t) {
    if (t->frames) munmap(t->frames, stack_bytes(t->cap));
    t->frames = NULL;
    t->kept_starts = NULL;
    t->cap = 0;
    t->depth = 0;
    t->state = CT_THREAD_PASSIVE;
}

CT_NO_INSTRUMENT bool ct_thread_attach_unrecorded(struct ct_thread *t) {
    if (t->state == CT_THREAD_ACTIVE) return true;
    if (t->state != CT_THREAD_NEW || !allocate(t, false)) return false;
    t->recording = 0;
    t->state = CT_THREAD_ACTIVE;
    return true;
}

// A thread is exiting (its key destructor, or pthread_exit on the main thread), the calls it left
// open recorded as unfinished by the caller: its name is written (into its own stream in a flight
// recorder's trace, else the metadata stream) and its block goes on to the next thread.
CT_NO_INSTRUMENT void ct_thread_end(struct ct_thread *t) {
    // Whatever its state: the drain thread must not read it once it is gone. After its open calls
    // are recorded: muting waits for them till then.
    ct_open_frames_remove(t);
    if (t->state != CT_THREAD_ACTIVE) return;
    bool named = ct_stream_name_at_end(&t->stream);
    ct_stream_retire(&t->stream);
    if (named) ct_meta_thread_forget(t->stream.id);
    else ct_meta_thread_final(t->stream.id, t->stream.tid);
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

