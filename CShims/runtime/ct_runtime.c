// Start-up, exit, fork and thread life cycle; the few libc functions the runtime wraps.

#include "ct_runtime.h"
#include "ct_clock.h"
#include "ct_file.h"
#include "ct_log.h"
#include "ct_meta.h"
#include "ct_thread.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct ct_runtime ct_rt;

// Process start from /proc/self/stat (field 22, clock ticks since boot), as CLOCK_MONOTONIC ns, so
// that the time the program spent before the runtime (the dynamic loader, constructors) shows.
CT_NO_INSTRUMENT static uint64_t process_start_ns(void) {
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); // the command name may hold spaces and parentheses
    if (!p) return 0;
    unsigned long long start = 0;
    // p moves to the space before each field in turn: field 3 (state) after ")", up to field 22.
    for (int field = 3; field <= 22 && p; field++) p = strchr(p + 1, ' ');
    if (!p || sscanf(p + 1, "%llu", &start) != 1) return 0;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0) return 0;
    // CLOCK_BOOTTIME runs ahead of CLOCK_MONOTONIC by the time the machine was suspended.
    struct timespec mono, boot;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    int64_t suspended = ((int64_t)boot.tv_sec - (int64_t)mono.tv_sec) * 1000000000 + (boot.tv_nsec - mono.tv_nsec);
    if (suspended < 0) suspended = 0;
    uint64_t start_boot_ns = start * (1000000000u / (uint64_t)hz);
    if (start_boot_ns < (uint64_t)suspended) return 0;
    return start_boot_ns - (uint64_t)suspended;
}

// The main thread's state: another thread may close it at exit (and nothing else).
static struct ct_thread *ct_main_thread;
static bool ct_membarrier_ok;

CT_NO_INSTRUMENT void ct_thread_start_recording(struct ct_thread *t) {
    t->stream = (struct ct_stream){ 0 };
    t->stream.id = atomic_fetch_add_explicit(&ct_rt.next_stream, 1, memory_order_relaxed);
    t->stream.tid = (uint64_t)syscall(SYS_gettid);
    ct_meta_register_thread(t->stream.id, t->stream.tid);
    // The key's destructor runs when the thread exits (its value must be non-NULL).
    pthread_setspecific(ct_rt.thread_key, t);
    if (syscall(SYS_gettid) == getpid()) ct_main_thread = t;
    t->recording = 1;
}

// exit() or a crash on another thread while the main thread is inside calls: those calls are the
// root of the tree, so record them (unfinished) rather than lose them. The main thread is still
// running, so first take its stream over: set `closed`, then membarrier() so that any record write
// the main thread started before is visible in busy_sp (and any it starts later sees `closed`),
// then wait for that write to end. Async-signal-safe; gives up after 20 ms.
CT_NO_INSTRUMENT void ct_close_main_thread_from_elsewhere(uint64_t end) {
    struct ct_thread *m = ct_main_thread;
    if (!m || m == &ct_self || !m->recording || !ct_membarrier_ok) return;
    atomic_store_explicit(&m->stream.closed, 1, memory_order_relaxed);
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) return;
    uint64_t deadline = ct_monotonic_ns() + 20 * 1000000ull;
    while (*(volatile uintptr_t *)&m->stream.busy_sp != 0) {
        if (ct_monotonic_ns() > deadline) return;
    }
    atomic_thread_fence(memory_order_acquire);
    uint64_t depth = *(volatile uint64_t *)&m->depth;
    if (depth > m->cap) depth = m->cap;
    while (depth > 0) {
        depth--;
        struct ct_frame f = m->frames[depth];
        uint64_t duration = end > f.start ? end - f.start : 0;
        if (duration >= ct_threshold_ticks)
            ct_stream_write_call_owned(&m->stream, f.fn, f.site, f.start, duration, depth, CT_CALL_UNFINISHED);
    }
    ct_stream_seal(&m->stream);
}

// A thread is exiting: calls it leaves open (pthread_exit from inside them, or a cancellation) are
// recorded as unfinished; seal its block and write its name.
CT_NO_INSTRUMENT static void on_thread_exit(void *arg) {
    struct ct_thread *t = arg;
    ct_thread_close_open_frames(t, ct_now(), CT_CALL_UNFINISHED);
    ct_stream_seal(&t->stream);
    ct_meta_thread_final(t->stream.id, t->stream.tid);
    t->state = CT_THREAD_GONE; // hooks run by later TLS destructors return at once
}

// Normal exit (return from main or exit()): calls still open on this thread are written as
// unfinished, with their cost so far; then the last metadata, calibration and the closed flag.
CT_NO_INSTRUMENT static void on_exit_handler(void) {
    if (!atomic_load_explicit(&ct_rt.ready, memory_order_acquire)) return;
    uint64_t now = ct_now();
    ct_file_stop_drain();
    ct_thread_close_open_frames(&ct_self, now, CT_CALL_UNFINISHED);
    ct_close_main_thread_from_elsewhere(now); // exit() called on another thread
    ct_stream_seal(&ct_self.stream);
    ct_meta_scan_modules();
    ct_meta_thread_final(ct_self.stream.id, ct_self.stream.tid);
    ct_meta_close();
    ct_file_close(now);
}

// ---- Fatal signals -------------------------------------------------------------------------------
// A crash keeps every committed record (the file is mapped). The handler adds what it can do safely:
// the crashing thread's open calls as unfinished records (the stream writer is async-signal-safe),
// and the signal number in the header. Then the default action runs as if we had never been there:
// a fault (SIGSEGV, SIGBUS, SIGILL or SIGFPE with si_code > 0) simply happens again when the
// handler returns, with SIG_DFL in place, so the exit status, siginfo and core dump are the
// program's own; anything else (a signal sent by kill() or raise(), abort() among them, an int3
// trap or a seccomp SIGSYS, after which the CPU has moved past the instruction) is raised again
// and delivered when the handler returns.
static const int ct_fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };

CT_NO_INSTRUMENT static void on_fatal_signal(int sig, siginfo_t *info, void *context) {
    (void)context;
    int saved_errno = errno;
    struct ct_file_header *h = ct_file_header();
    if (h && atomic_load_explicit(&ct_rt.ready, memory_order_acquire)) {
        h->signal = (uint64_t)sig;
        atomic_fetch_or_explicit(&h->flags, CT_FILE_CRASHED, memory_order_release);
        uint64_t now = ct_now();
        ct_thread_close_open_frames(&ct_self, now, CT_CALL_UNFINISHED);
        ct_close_main_thread_from_elsewhere(now);
    }
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    bool fault = info->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE);
    if (!fault) raise(sig); // pending (the signal is blocked in its handler) until we return
    errno = saved_errno;
}

// Installs the handler only where the program has none yet (a library constructor may have set
// one); a handler the program installs later simply replaces ours.
CT_NO_INSTRUMENT static void install_fatal_signal_handlers(void) {
    for (size_t i = 0; i < sizeof ct_fatal_signals / sizeof ct_fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(ct_fatal_signals[i], NULL, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL) continue;
        if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction != NULL) continue;
        struct sigaction sa = { .sa_sigaction = on_fatal_signal, .sa_flags = SA_SIGINFO | SA_ONSTACK };
        sigemptyset(&sa.sa_mask);
        sigaction(ct_fatal_signals[i], &sa, NULL);
    }
}

// Opens the trace and fills in the header; false when the program must run untraced.
CT_NO_INSTRUMENT static bool open_trace(void) {
    if (!ct_file_open(&ct_rt.settings)) return false;
    struct ct_file_header *h = ct_file_header();
    h->threshold_ns = ct_rt.settings.threshold;
    uint64_t t0, n0, r0, t1, n1;
    ct_rt.ticks_per_ns = ct_clock_init(&t0, &n0, &r0, &t1, &n1);
    h->calib_tick0 = t0;
    h->calib_ns0 = n0;
    h->calib_tick1 = t1;
    h->calib_ns1 = n1;
    h->realtime_ns0 = r0;
    h->process_start_ns = process_start_ns();
    h->init_tick = ct_now();
    if (ct_clock_is_tsc) atomic_fetch_or_explicit(&h->flags, CT_FILE_TSC, memory_order_relaxed);
    // The start-up calibration is good to about 1e-4, far below a threshold's meaning.
    double ticks = (double)ct_rt.settings.threshold * ct_rt.ticks_per_ns;
    ct_threshold_ticks = ticks < 1.0 ? 0 : (uint64_t)ticks;
    h->threshold_ticks = ct_threshold_ticks;
    ct_meta_write_process();
    ct_meta_scan_modules();
    ct_file_start_drain();
    return true;
}

// Starts recording on the calling thread (the main thread, or the forking thread in a child).
CT_NO_INSTRUMENT static void adopt_calling_thread(void) {
    struct ct_thread *t = &ct_self;
    if (t->state == CT_THREAD_PASSIVE) t->state = CT_THREAD_NEW; // e.g. forked from a worker
    if (t->state == CT_THREAD_NEW) ct_thread_attach(t);          // attaches and starts recording
    else if (t->state == CT_THREAD_ACTIVE) ct_thread_start_recording(t);
}

// In the child of fork(): the parent's trace and blocks are not ours. Start a new trace named with
// the child's pid; the calls open at the fork go on in the child and are recorded there.
CT_NO_INSTRUMENT static void after_fork_in_child(void) {
    if (!atomic_load_explicit(&ct_rt.ready, memory_order_acquire)) return;
    atomic_store_explicit(&ct_rt.ready, false, memory_order_relaxed);
    struct ct_thread *t = &ct_self;
    t->recording = 0;
    t->stream = (struct ct_stream){ 0 };  // its block belongs to the parent
    ct_meta_forget_after_fork();
    ct_file_forget_after_fork();
    atomic_store_explicit(&ct_rt.next_stream, 1, memory_order_relaxed);
    ct_threshold_ticks = UINT64_MAX;
    if (!open_trace()) return;
    atomic_store_explicit(&ct_rt.ready, true, memory_order_release);
    adopt_calling_thread();
}

__attribute__((constructor(101))) CT_NO_INSTRUMENT static void ct_start(void) {
    ct_settings_load(&ct_rt.settings);
    atomic_store_explicit(&ct_rt.next_stream, 1, memory_order_relaxed);
    if (pthread_key_create(&ct_rt.thread_key, on_thread_exit) != 0) return;
    ct_membarrier_ok = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    if (!open_trace()) return;
    pthread_atfork(NULL, NULL, after_fork_in_child);
    atexit(on_exit_handler);
    install_fatal_signal_handlers();
    atomic_store_explicit(&ct_rt.ready, true, memory_order_release);
    adopt_calling_thread();
}

// ---- Wrapped libc functions -------------------------------------------------------------------
// The runtime is linked before libc (or preloaded), so these definitions win; each calls the real
// one found with dlsym(RTLD_NEXT).

// __libc_start_main: to learn where main is and when it is entered.
typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
static main_fn real_main;

CT_NO_INSTRUMENT static int main_trampoline(int argc, char **argv, char **envp) {
    struct ct_file_header *h = ct_file_header();
    if (h) {
        h->main_addr = (uint64_t)(uintptr_t)real_main;
        h->main_tick = ct_now();
    }
    return real_main(argc, argv, envp);
}

CT_EXPORT CT_NO_INSTRUMENT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                                                 void (*fini)(void), void (*rtld_fini)(void), void *stack_end) {
    start_main_fn real = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    real_main = main;
    return real(main_trampoline, argc, argv, init, fini, rtld_fini, stack_end);
}

// dlclose: write the modules down before one goes away, so its functions still get names.
CT_EXPORT CT_NO_INSTRUMENT int dlclose(void *handle) {
    static int (*real)(void *);
    if (!real) real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    ct_meta_scan_modules();
    int r = real(handle);
    ct_meta_scan_modules();
    return r;
}

// longjmp and friends, C++ exceptions: each notes the moment it leaves frames behind, so that
// those frames are charged up to it rather than up to whatever hook notices them later.
typedef void (*jump_fn)(struct __jmp_buf_tag *, int);
#define CT_WRAP_JUMP(name)                                                                       \
    static jump_fn real_##name;                                                                  \
    CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void name(struct __jmp_buf_tag *env, int val) { \
        if (!real_##name) real_##name = (jump_fn)dlsym(RTLD_NEXT, #name);                        \
        ct_thread_note_jump(CT_CALLER_SP());                                                     \
        real_##name(env, val);                                                                   \
        __builtin_unreachable();                                                                 \
    }
CT_WRAP_JUMP(longjmp)
CT_WRAP_JUMP(_longjmp)
CT_WRAP_JUMP(siglongjmp)
CT_WRAP_JUMP(__longjmp_chk)

// The unwinder's entry points (libgcc_s): a throw starts unwinding, a rethrow restarts it, and
// _Unwind_Resume continues it at the end of every cleanup (destructors) on the way up.
typedef int (*unwind_fn)(void *);
#define CT_WRAP_UNWIND(name)                                                                     \
    static unwind_fn real_##name;                                                                \
    CT_EXPORT CT_NO_INSTRUMENT int name(void *exception) {                                       \
        if (!real_##name) real_##name = (unwind_fn)dlsym(RTLD_NEXT, #name);                      \
        ct_thread_note_jump(CT_CALLER_SP());                                                     \
        return real_##name(exception);                                                           \
    }
CT_WRAP_UNWIND(_Unwind_RaiseException)
CT_WRAP_UNWIND(_Unwind_Resume_or_Rethrow)

typedef void (*resume_fn)(void *);
static resume_fn real_unwind_resume;
CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void _Unwind_Resume(void *exception) {
    if (!real_unwind_resume) real_unwind_resume = (resume_fn)dlsym(RTLD_NEXT, "_Unwind_Resume");
    ct_thread_note_jump(CT_CALLER_SP());
    real_unwind_resume(exception);
    __builtin_unreachable();
}
