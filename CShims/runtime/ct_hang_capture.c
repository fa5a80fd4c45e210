// Capturing a hung main thread's native stack, and why it is done this way:
//
// - Only the thread itself can unwind its stack portably: its registers are nowhere else (ptrace
//   cannot attach to a thread of its own process; /proc/self/task/TID/syscall gives the stack
//   pointer and pc of a blocked thread, but not the frame pointer and callee-saved registers that
//   unwinding needs). So the watchdog sends the main thread a signal and its handler unwinds, with
//   libunwind (local only, which is async-signal-safe: it takes its locks with signals blocked),
//   from the interrupted context (unw_init_local2 with UNW_INIT_SIGNAL_FRAME): libc's poll or read
//   and a library's internals are there, not only the instrumented calls.
// - libunwind is loaded with dlopen(RTLD_LOCAL) when CALLTRACE_HANG is set, not linked: it exports
//   _Unwind_RaiseException and the rest of the C++ unwinder's ABI (and `backtrace`), which the
//   runtime's own exception wrappers find with RTLD_NEXT; linked, it could come before libgcc_s
//   in a traced program's lookup order. It is loaded once a hang is near (half the hang
//   threshold), not at start-up (a quarter of a millisecond of every launch), on a short-lived
//   thread of its own (ct_hang_capture_prepare): dlopen takes the loader's lock, which a program
//   thread may hold for as long as a library's constructor runs (the very hang being watched), and
//   the drain thread must never wait for it. Missing, the stacks hold the instrumented calls only
//   (CT_HANG_UNAVAILABLE).
// - libunwind sets itself up on its first walk, in the main thread's handler, and never on the
//   drain thread: the setup opens the pipe its memory checks read and write (every step, with
//   Debian's build), and the drain thread has a descriptor table of its own (ct_drain.c). Opened
//   there, the pipe's numbers would name the program's own files in the main thread's table, and
//   each capture would read a byte from one and write a byte into another
//   (HangTests.testCaptureLeavesTheProgramsFilesAlone).
// - The signal must not change what the program sees. The handler runs with SA_RESTART, so the
//   waits the kernel restarts (read, write, wait4, futex without a timeout: pthread_mutex_lock...)
//   go on untouched. The waits SA_RESTART does not restart would return EINTR, so the watchdog
//   first reads /proc/self/task/TID/syscall and decides (ct_hang_resume_for):
//     * a timed sleep whose kernel side keeps its deadline in the thread's restart block (poll,
//       nanosleep, relative clock_nanosleep, futex with a timeout): the handler calls
//       restart_syscall(2), which goes on to that deadline, and puts its result where the
//       interrupted syscall's result goes; the handler returns when the wait would have ended.
//       restart_syscall is only valid right after that very syscall was interrupted, so the
//       handler checks that the interrupted context is the one the watchdog saw (pc, stack
//       pointer, the six argument registers) and that it returned EINTR.
//     * a wait with no timeout or an absolute one (epoll_wait(-1), select/pselect/ppoll without a
//       timeout, pause, clock_nanosleep TIMER_ABSTIME): the handler moves the pc back onto the
//       syscall instruction and puts the syscall number back, so the same call runs again.
//     * anything else (epoll_wait or select with a timeout, msgrcv, sigtimedwait, ...): no signal;
//       the watchdog records the syscall's pc and the instrumented calls (CT_HANG_REC_PARTIAL).
//   The resume steps use x86-64's register names; elsewhere only the SA_RESTART waits get a signal.
// - The signal is one the program does not use: the watchdog checks before each capture that its
//   handler is still ours and that the main thread does not block the signal (a blocked signal
//   would arrive later, at another place); otherwise it leaves the signal alone
//   (CT_HANG_SIGNAL_OWNED) and records the partial stack. A copy of the signal that does not come
//   from the watchdog gets the default action (the program's fate had we not been there).
#include "ct_hang_capture.h"
#include "ct_clock.h"
#include "ct_proc.h"
#include "ct_thread.h"
#include "ct_syscall.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/futex.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

// The symbol a libunwind macro names (unw_step is _ULx86_64_step), for dlsym.
#define CT_SYMBOL_NAME(x) CT_SYMBOL_NAME_(x)
#define CT_SYMBOL_NAME_(x) #x

enum { ASK_IDLE, ASK_SENT, ASK_RUNNING, ASK_DONE };

enum { UNWIND_NOT_LOADED, UNWIND_LOADING, UNWIND_LOADED, UNWIND_FAILED };

static struct {
    _Atomic uint32_t unwind;  // UNWIND_*: libunwind's functions below are set once LOADED (kept across fork)
    int (*init_local2)(unw_cursor_t *, unw_context_t *, int);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*is_signal_frame)(unw_cursor_t *);
    _Atomic uint32_t ask;   // ASK_*: the watchdog sends, the handler runs and answers
    // Written by the watchdog before it sends the signal (published by the release store of `ask`).
    enum ct_hang_resume resume;
    struct ct_syscall_state seen;
    // Written by the handler before ASK_DONE.
    struct ct_hang_stack stack;
} C;

CT_NO_INSTRUMENT static void on_capture_signal(int sig, siginfo_t *info, void *context);

CT_NO_INSTRUMENT static bool load_libunwind(void) {
    void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    C.init_local2 = (int (*)(unw_cursor_t *, unw_context_t *, int))dlsym(lib, CT_SYMBOL_NAME(unw_init_local2));
    C.step = (int (*)(unw_cursor_t *))dlsym(lib, CT_SYMBOL_NAME(unw_step));
    C.get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(lib, CT_SYMBOL_NAME(unw_get_reg));
    C.is_signal_frame = (int (*)(unw_cursor_t *))dlsym(lib, CT_SYMBOL_NAME(unw_is_signal_frame));
    return C.init_local2 && C.step && C.get_reg && C.is_signal_frame;
}

CT_NO_INSTRUMENT static void *loader_main(void *arg) {
    (void)arg;
    ct_syscall(SYS_prctl, PR_SET_NAME, "calltrace-load", 0, 0, 0);
    atomic_store_explicit(&C.unwind, load_libunwind() ? UNWIND_LOADED : UNWIND_FAILED, memory_order_release);
    return NULL;
}

CT_NO_INSTRUMENT void ct_hang_capture_prepare(void) {
    uint32_t none = UNWIND_NOT_LOADED;
    if (!atomic_compare_exchange_strong_explicit(&C.unwind, &none, UNWIND_LOADING, memory_order_acq_rel,
                                                 memory_order_acquire))
        return;
    if (atomic_load_explicit(&ct_rt.drain_filtered, memory_order_acquire)) {
        atomic_store_explicit(&C.unwind, UNWIND_FAILED, memory_order_release);
        return;
    }
    // Created from the drain thread, it inherits its mask (every signal blocked) and its table.
    pthread_attr_t attr;
    pthread_t t;
    bool made = pthread_attr_init(&attr) == 0 && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                pthread_create(&t, &attr, loader_main, NULL) == 0;
    pthread_attr_destroy(&attr);
    if (!made) atomic_store_explicit(&C.unwind, UNWIND_FAILED, memory_order_release);
}

CT_NO_INSTRUMENT bool ct_hang_capture_preparing(void) {
    return atomic_load_explicit(&C.unwind, memory_order_acquire) == UNWIND_LOADING;
}

CT_NO_INSTRUMENT static bool handler_is_ours(const struct sigaction *sa) {
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_capture_signal;
}

CT_NO_INSTRUMENT uint32_t ct_hang_capture_setup(void) {
    atomic_store_explicit(&C.ask, ASK_IDLE, memory_order_relaxed);
    // A fork child whose parent was loading libunwind: that thread is not here to finish.
    uint32_t loading = UNWIND_LOADING;
    atomic_compare_exchange_strong_explicit(&C.unwind, &loading, UNWIND_NOT_LOADED, memory_order_relaxed,
                                            memory_order_relaxed);
    uint32_t flags = 0;
    struct sigaction old;
    if (sigaction(CT_HANG_SIGNAL, NULL, &old) != 0) return flags | CT_HANG_SIGNAL_OWNED;
    if (handler_is_ours(&old)) return flags;        // a fork child: inherited
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) return flags | CT_HANG_SIGNAL_OWNED;
    struct sigaction sa = { .sa_sigaction = on_capture_signal, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigemptyset(&sa.sa_mask);   // the program's signals still reach a wait the handler resumes
    if (sigaction(CT_HANG_SIGNAL, &sa, NULL) != 0) return flags | CT_HANG_SIGNAL_OWNED;
    return flags;
}

// /proc/self/task/TID/`file` into `buf`, NUL-terminated; false when it cannot be read.
CT_NO_INSTRUMENT static bool read_task_file(uint64_t tid, const char *file, char *buf, size_t size) {
    return ct_proc_read_task(tid, file, buf, size) > 0;
}

// "nr a1 .. a6 sp pc" (blocked in a syscall), "-1 sp pc" (blocked elsewhere) or "running".
CT_NO_INSTRUMENT bool ct_hang_read_syscall(uint64_t tid, struct ct_syscall_state *s) {
    char buf[256];
    if (!read_task_file(tid, "syscall", buf, sizeof buf)) return false;
    memset(s, 0, sizeof *s);
    if (strncmp(buf, "running", 7) == 0) return true;
    unsigned long long v[9];
    long nr;
    if (sscanf(buf, "%ld", &nr) != 1) return false;
    if (nr < 0) return true;   // blocked, but not in a syscall: nothing a signal could cut short
    if (sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) != 9)
        return false;
    s->in_syscall = true;
    s->nr = nr;
    for (int i = 0; i < 6; i++) s->args[i] = v[i];
    s->sp = v[6];
    s->pc = v[7];
    return true;
}

// Which waits a signal with SA_RESTART leaves alone, and which the handler can resume (signal(7),
// "Interruption of system calls and library functions by signal handlers").
CT_NO_INSTRUMENT enum ct_hang_resume ct_hang_resume_for(const struct ct_syscall_state *s) {
    if (!s->in_syscall) return CT_RESUME_NONE;
    const uint64_t *a = s->args;
    switch (s->nr) {
    case SYS_read: case SYS_write: case SYS_readv: case SYS_writev: case SYS_pread64: case SYS_pwrite64:
    case SYS_openat: case SYS_ioctl: case SYS_wait4: case SYS_waitid: case SYS_flock: case SYS_fcntl:
    case SYS_accept: case SYS_accept4: case SYS_connect: case SYS_recvfrom: case SYS_recvmsg:
    case SYS_sendto: case SYS_sendmsg: case SYS_getrandom:
#ifdef SYS_open
    case SYS_open:
#endif
        return CT_RESUME_NONE;
    case SYS_futex: {
        int op = (int)a[1] & FUTEX_CMD_MASK;
        if (op == FUTEX_LOCK_PI) return CT_RESUME_NONE; // always restarted by the kernel
        if (op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET) return CT_RESUME_IMPOSSIBLE;
        if (a[3] == 0) return CT_RESUME_NONE;           // no timeout: restarted with SA_RESTART
#if defined(__x86_64__)
        return CT_RESUME_RESTART_BLOCK;
#else
        return CT_RESUME_IMPOSSIBLE;
#endif
    }
#if defined(__x86_64__)
    case SYS_poll: case SYS_nanosleep:
        return CT_RESUME_RESTART_BLOCK;
    case SYS_clock_nanosleep:
        return (a[1] & TIMER_ABSTIME) ? CT_RESUME_REISSUE : CT_RESUME_RESTART_BLOCK;
    case SYS_epoll_wait: case SYS_epoll_pwait:
        return (int)a[3] < 0 ? CT_RESUME_REISSUE : CT_RESUME_IMPOSSIBLE;
    case SYS_select: case SYS_pselect6:
        return a[4] == 0 ? CT_RESUME_REISSUE : CT_RESUME_IMPOSSIBLE;
    case SYS_ppoll:
        return a[2] == 0 ? CT_RESUME_REISSUE : CT_RESUME_IMPOSSIBLE;
    case SYS_pause:
        return CT_RESUME_REISSUE;
#endif
    default:
        return CT_RESUME_IMPOSSIBLE;
    }
}

// The SigBlk line of /proc/self/task/TID/status: is the capture signal blocked?
CT_NO_INSTRUMENT static bool signal_blocked(uint64_t tid) {
    char buf[2048];
    if (!read_task_file(tid, "status", buf, sizeof buf)) return true;
    const char *p = strstr(buf, "SigBlk:");
    unsigned long long mask;
    if (!p || sscanf(p + 7, "%llx", &mask) != 1) return true;
    return (mask >> (CT_HANG_SIGNAL - 1)) & 1;
}

CT_NO_INSTRUMENT uint32_t ct_hang_capture_problem(uint64_t tid) {
    // Without libunwind a signal would bring back nothing more (still loading: the loader waits
    // for the loader's lock, perhaps held by the hung thread itself).
    uint32_t unwind = atomic_load_explicit(&C.unwind, memory_order_acquire);
    if (unwind != UNWIND_LOADED) return unwind == UNWIND_FAILED ? CT_HANG_UNAVAILABLE : CT_HANG_PARTIAL;
    struct sigaction cur;
    if (sigaction(CT_HANG_SIGNAL, NULL, &cur) != 0 || !handler_is_ours(&cur)) return CT_HANG_SIGNAL_OWNED;
    if (signal_blocked(tid)) return CT_HANG_SIGNAL_OWNED;
    return 0;
}

CT_NO_INSTRUMENT bool ct_hang_capture_ask(int pid, uint64_t tid, const struct ct_syscall_state *s,
                                          enum ct_hang_resume resume) {
    C.seen = *s;
    C.resume = resume;
    atomic_store_explicit(&C.ask, ASK_SENT, memory_order_release);
    if (ct_syscall(SYS_tgkill, pid, (pid_t)tid, CT_HANG_SIGNAL) == 0) return true;
    atomic_store_explicit(&C.ask, ASK_IDLE, memory_order_relaxed);
    return false;
}

CT_NO_INSTRUMENT int ct_hang_capture_poll(struct ct_hang_stack *out) {
    if (atomic_load_explicit(&C.ask, memory_order_acquire) != ASK_DONE) return 0;
    *out = C.stack;
    atomic_store_explicit(&C.ask, ASK_IDLE, memory_order_relaxed);
    return 1;
}

CT_NO_INSTRUMENT bool ct_hang_capture_abandon(void) {
    uint32_t sent = ASK_SENT;
    return atomic_compare_exchange_strong_explicit(&C.ask, &sent, ASK_IDLE, memory_order_acq_rel, memory_order_acquire);
}

// ---- In the main thread's handler: async-signal-safe from here on ---------------------------------

// The main thread's innermost open call, read on the main thread itself (its stack is consistent
// at every instruction: ct_hooks.c).
CT_NO_INSTRUMENT static void note_hung_call(struct ct_hang_stack *st) {
    struct ct_thread *t = &ct_self;
    uint64_t d = t->depth;
    if (t->state != CT_THREAD_ACTIVE || d == 0) return;
    if (d > t->cap) d = t->cap;
    const struct ct_frame *f = &t->frames[d - 1];
    st->fn = f->fn;
    st->start = f->start;
    st->depth = d - 1;
}

// The open calls the native stack cannot show: a function built with sleds that left by a tail
// call is gone from the machine stack (its tail callee returns straight to its caller), yet still
// open in the runtime's (ct_sled_hooks.c): the frame left waiting for its tail callee, and each
// frame a tail callee joined. Innermost first, with their return slots.
struct ghost {
    uintptr_t fn, slot;
};
#define CT_HANG_GHOSTS 16

CT_NO_INSTRUMENT static int tail_left_calls(struct ghost *out) {
    const struct ct_thread *t = &ct_self;
    uint64_t d = t->depth > t->cap ? t->cap : t->depth;
    int n = 0;
    for (uint64_t i = d; i > 0 && n < CT_HANG_GHOSTS; i--) {
        const struct ct_frame *f = &t->frames[i - 1];
        bool left = t->tail_depth == i ||
                    (i < d && t->frames[i].slot == f->slot && t->frames[i].hook_ra == CT_FRAME_TAIL_JOINED);
        if (left) out[n++] = (struct ghost){ f->fn, f->slot };
    }
    return n;
}

// Each such call goes in where it would be: just before the first native frame that is its caller
// (whose stack pointer lies above the call's return slot), its function's address standing for it.
CT_NO_INSTRUMENT static void unwind(struct ct_hang_stack *st, void *context) {
    unw_cursor_t cursor;
    if (C.init_local2(&cursor, (unw_context_t *)context, UNW_INIT_SIGNAL_FRAME) != 0) return;
    struct ghost ghosts[CT_HANG_GHOSTS];
    int pending = tail_left_calls(ghosts), next = 0;
    bool exact = true;  // the interrupted pc, and a pc under a signal frame, are not return addresses
    do {
        unw_word_t ip = 0, sp = 0;
        if (C.get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
        if (C.get_reg(&cursor, UNW_REG_SP, &sp) == 0) {
            while (next < pending && ghosts[next].slot < sp && st->n < CT_HANG_MAX_PCS) st->pcs[st->n++] = ghosts[next++].fn;
            if (st->n == CT_HANG_MAX_PCS) break;
        }
        st->pcs[st->n++] = exact ? ip : ip - 1;
        exact = C.is_signal_frame(&cursor) > 0;
    } while (st->n < CT_HANG_MAX_PCS && C.step(&cursor) > 0);
}

// Is the interrupted context the very wait the watchdog saw, cut short by this signal (EINTR)?
CT_NO_INSTRUMENT static bool interrupted_seen_wait(void *context, const struct ct_syscall_state *seen) {
#if defined(__x86_64__)
    const greg_t *g = ((ucontext_t *)context)->uc_mcontext.gregs;
    if (g[REG_RAX] != -EINTR || (uint64_t)g[REG_RIP] != seen->pc || (uint64_t)g[REG_RSP] != seen->sp) return false;
    const int regs[6] = { REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8, REG_R9 };
    for (int i = 0; i < 6; i++) {
        if ((uint64_t)g[regs[i]] != seen->args[i]) return false;
    }
    return true;
#else
    (void)context, (void)seen;
    return false;
#endif
}

// Resumes that wait as it would have gone on without the signal.
CT_NO_INSTRUMENT static void resume_wait(void *context, const struct ct_syscall_state *seen, enum ct_hang_resume resume) {
#if defined(__x86_64__)
    greg_t *g = ((ucontext_t *)context)->uc_mcontext.gregs;
    if (resume == CT_RESUME_REISSUE) {
        // Back onto the 2-byte syscall instruction, with its number: it runs again on return. The
        // kernel keeps every other register of a syscall but rcx and r11, which it sets anyway.
        g[REG_RIP] -= 2;
        g[REG_RAX] = seen->nr;
        return;
    }
    // The restart block holds the interrupted wait's deadline: go on to it from here. The
    // program's own signals can still interrupt it, with the result they would have had.
    long r = ct_syscall(SYS_restart_syscall);
    g[REG_RAX] = r == -1 ? -errno : r;
#else
    (void)context, (void)seen, (void)resume;
#endif
}

CT_NO_INSTRUMENT static void on_capture_signal(int sig, siginfo_t *info, void *context) {
    int saved_errno = errno;
    // A thread that restricted itself (ct_restrict.h) may make no system call: an ask still in
    // flight goes unanswered (the watchdog gives up on it).
    if (ct_self.state == CT_THREAD_RESTRICTED) return;
    if (info->si_code != SI_TKILL || info->si_pid != getpid()) {
        // Not the watchdog's: what the signal would have done without us (its default, terminate),
        // once the handler returns (it is blocked until then).
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig);
        errno = saved_errno;
        return;
    }
    uint32_t sent = ASK_SENT;
    if (!atomic_compare_exchange_strong_explicit(&C.ask, &sent, ASK_RUNNING, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        errno = saved_errno;    // a late copy of an ask the watchdog gave up on
        return;
    }
    struct ct_syscall_state seen = C.seen;
    enum ct_hang_resume resume = C.resume;
    struct ct_hang_stack *st = &C.stack;
    st->tick = ct_now();
    st->fn = st->start = st->depth = 0;
    st->flags = 0;
    st->n = 0;
    note_hung_call(st);
    unwind(st, context);
    // The wait is resumed after the answer: the watchdog writes the record meanwhile.
    bool resumes = (resume == CT_RESUME_RESTART_BLOCK || resume == CT_RESUME_REISSUE) &&
                   interrupted_seen_wait(context, &seen);
    if (resumes) st->flags |= CT_HANG_REC_RESUMED;
    atomic_store_explicit(&C.ask, ASK_DONE, memory_order_release);
    if (resumes) resume_wait(context, &seen, resume);
    errno = saved_errno;
}
