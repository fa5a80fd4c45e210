// The libc functions the runtime wraps. The runtime is linked before libc (or preloaded), so these
// definitions win; each calls the real one found with dlsym(RTLD_NEXT), resolved at start-up so
// that no wrapper needs the loader later (a fork child must not: another thread of the parent may
// have held the loader's locks).
#include "ct_clock.h"
#include "ct_drain.h"
#include "ct_feature.h"
#include "ct_header.h"
#include "ct_meta.h"
#include "ct_patch.h"
#include "ct_calls.h"
#include "ct_runtime.h"
#include "ct_restrict.h"
#include "ct_start.h"
#include "ct_switch.h"
#include "ct_syscall.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/prctl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
typedef void (*jump_fn)(struct __jmp_buf_tag *, int);
typedef int (*unwind_fn)(void *);
typedef void (*resume_fn)(void *);

static struct {
    main_fn main;
    int (*dlclose)(void *);
    jump_fn longjmp, _longjmp, siglongjmp, __longjmp_chk;
    unwind_fn _Unwind_RaiseException, _Unwind_Resume_or_Rethrow;
    resume_fn _Unwind_Resume;
    int (*swapcontext)(ucontext_t *, const ucontext_t *);
    int (*setcontext)(const ucontext_t *);
    void (*pthread_exit)(void *);
    int (*unshare)(int);
    int (*setns)(int, int);
    int (*prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
    int (*sigaltstack)(const stack_t *, stack_t *);
    void (*exit)(int);
    void (*quick_exit)(int);
    void (*_exit)(int);
    void (*_Exit)(int);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execv)(const char *, char *const[]);
    int (*execvp)(const char *, char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*execveat)(int, const char *, char *const[], char *const[], int);
} real;

#define CT_RESOLVE(name) (real.name ? real.name : (real.name = (__typeof__(real.name))dlsym(RTLD_NEXT, #name)))

__attribute__((constructor(101))) CT_NO_INSTRUMENT static void resolve_all(void) {
    CT_RESOLVE(dlclose);
    CT_RESOLVE(longjmp);
    CT_RESOLVE(_longjmp);
    CT_RESOLVE(siglongjmp);
    CT_RESOLVE(__longjmp_chk);
    CT_RESOLVE(_Unwind_RaiseException);
    CT_RESOLVE(_Unwind_Resume_or_Rethrow);
    CT_RESOLVE(_Unwind_Resume);
    CT_RESOLVE(swapcontext);
    CT_RESOLVE(setcontext);
    CT_RESOLVE(pthread_exit);
    CT_RESOLVE(unshare);
    CT_RESOLVE(setns);
    CT_RESOLVE(prctl);
    CT_RESOLVE(sigaltstack);
    CT_RESOLVE(exit);
    CT_RESOLVE(quick_exit);
    CT_RESOLVE(_exit);
    CT_RESOLVE(_Exit);
    CT_RESOLVE(execve);
    CT_RESOLVE(execv);
    CT_RESOLVE(execvp);
    CT_RESOLVE(execvpe);
    CT_RESOLVE(fexecve);
    CT_RESOLVE(execveat);
}

// __libc_start_main: to learn where main is and when it is entered.
CT_NO_INSTRUMENT static int main_trampoline(int argc, char **argv, char **envp) {
    uint64_t now = ct_now();
    atomic_store_explicit(&ct_rt.main_addr, (uint64_t)(uintptr_t)real.main, memory_order_relaxed);
    atomic_store_explicit(&ct_rt.main_tick, now, memory_order_relaxed);
    struct ct_file_header *h = ct_header_get();
    if (h) {
        h->main_addr = (uint64_t)(uintptr_t)real.main;
        h->main_tick = now;
    }
    int status = real.main(argc, argv, envp);
    ct_start_exit_if_handler_lost();
    return status;
}

CT_EXPORT CT_NO_INSTRUMENT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                                                 void (*fini)(void), void (*rtld_fini)(void), void *stack_end) {
    start_main_fn start = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    real.main = main;
    return start(main_trampoline, argc, argv, init, fini, rtld_fini, stack_end);
}

// dlclose: write the modules down before one goes away, so its functions still get names.
// Its return also shows that the loader's locks work in this process (see ct_meta_forget).
CT_EXPORT CT_NO_INSTRUMENT int dlclose(void *handle) {
    ct_meta_scan_modules();
    ct_patch_hold_code();   // not while the drain thread is reading or patching code
    int r = CT_RESOLVE(dlclose)(handle);
    ct_patch_release_code();
    ct_meta_loader_works();
    ct_meta_scan_modules();
    return r;
}

// longjmp and friends, C++ exceptions: each notes the moment it leaves frames behind, so that
// those frames are charged up to it rather than up to whatever hook notices them later.
#define CT_WRAP_JUMP(name)                                                                       \
    CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void name(struct __jmp_buf_tag *env, int val) { \
        ct_calls_note_jump(CT_CALLER_SP());                                                     \
        CT_RESOLVE(name)(env, val);                                                              \
        __builtin_unreachable();                                                                 \
    }
CT_WRAP_JUMP(longjmp)
CT_WRAP_JUMP(_longjmp)
CT_WRAP_JUMP(siglongjmp)
CT_WRAP_JUMP(__longjmp_chk)

// The unwinder's entry points (libgcc_s): a throw starts unwinding, a rethrow restarts it, and
// _Unwind_Resume continues it at the end of every cleanup (destructors) on the way up.
#define CT_WRAP_UNWIND(name)                                                                     \
    CT_EXPORT CT_NO_INSTRUMENT int name(void *exception) {                                       \
        ct_calls_note_jump(CT_CALLER_SP());                                                     \
        return CT_RESOLVE(name)(exception);                                                      \
    }
CT_WRAP_UNWIND(_Unwind_RaiseException)
CT_WRAP_UNWIND(_Unwind_Resume_or_Rethrow)

CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void _Unwind_Resume(void *exception) {
    ct_calls_note_jump(CT_CALLER_SP());
    CT_RESOLVE(_Unwind_Resume)(exception);
    __builtin_unreachable();
}

// swapcontext and setcontext take the thread to another stack (a coroutine's) or back: the stack
// rules follow (ct_switch.c). A swapcontext call returns when its context runs again, however that
// came about; a setcontext call only if it failed.
CT_EXPORT CT_NO_INSTRUMENT int swapcontext(ucontext_t *oucp, const ucontext_t *ucp) {
    struct ct_switch_from from;
    ct_switch_leave(CT_CALLER_SP(), ucp, &from);
    int r = CT_RESOLVE(swapcontext)(oucp, ucp);
    ct_switch_resumed(&from);
    return r;
}

CT_EXPORT CT_NO_INSTRUMENT int setcontext(const ucontext_t *ucp) {
    struct ct_switch_from from;
    ct_switch_leave(CT_CALLER_SP(), ucp, &from);
    int r = CT_RESOLVE(setcontext)(ucp);
    ct_switch_resumed(&from);
    return r;
}

// pthread_exit on the main thread while other threads run: the process must end when they do, as
// untraced, so the runtime's own thread goes now (ct_start.c).
CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void pthread_exit(void *value) {
    ct_start_main_thread_exits();
    CT_RESOLVE(pthread_exit)(value);
    __builtin_unreachable();
}

// unshare(CLONE_NEWUSER) and setns() into a user namespace need a single-threaded process: the
// drain thread steps aside for the call and comes back after it.
#define CT_NEEDS_ONE_THREAD (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

CT_EXPORT CT_NO_INSTRUMENT int unshare(int flags) {
    bool alone = (flags & CT_NEEDS_ONE_THREAD) != 0;
    if (alone) ct_drain_pause();
    int r = CT_RESOLVE(unshare)(flags);
    int e = errno;
    if (alone) ct_drain_resume();
    errno = e;
    return r;
}

CT_EXPORT CT_NO_INSTRUMENT int setns(int fd, int nstype) {
    bool alone = nstype == 0 || (nstype & CLONE_NEWUSER);
    if (alone) ct_drain_pause();
    int r = CT_RESOLVE(setns)(fd, nstype);
    int e = errno;
    if (alone) ct_drain_resume();
    errno = e;
    return r;
}

// prctl(PR_SET_TSC, PR_TSC_SIGSEGV) and PR_SET_SECCOMP restrict the calling thread: the runtime
// settles what it can go on doing there first (ct_restrict.h).
CT_EXPORT CT_NO_INSTRUMENT int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4,
                                     unsigned long a5) {
    ct_restrict_before_prctl(option, a2, a3);
    return CT_RESOLVE(prctl)(option, a2, a3, a4, a5);
}

// glibc's syscall(), which libseccomp and programs use for seccomp (glibc has no wrapper for it)
// and prctl: the same, then the system call itself (resolving glibc's would call the loader). The
// runtime's own raw calls go to ct_syscall, never here.
CT_EXPORT CT_NO_INSTRUMENT long syscall(long number, ...) {
    va_list ap;
    va_start(ap, number);
    long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
    long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
    va_end(ap);
    if (CT_UNLIKELY(number == SYS_prctl)) ct_restrict_before_prctl((int)a1, (unsigned long)a2, (unsigned long)a3);
    else if (CT_UNLIKELY(number == SYS_seccomp)) ct_restrict_before_seccomp((unsigned long)a1, (unsigned long)a2, (const void *)a3);
    return ct_syscall(number, a1, a2, a3, a4, a5, a6);
}

// The alternate signal stack the runtime gave a thread (ct_thread.c) is not the program's: a
// query sees none, as it would untraced.
CT_EXPORT CT_NO_INSTRUMENT int sigaltstack(const stack_t *ss, stack_t *old) {
    int r = CT_RESOLVE(sigaltstack)(ss, old);
    if (r == 0 && old && !(old->ss_flags & SS_DISABLE) && ct_thread_is_our_altstack(old->ss_sp)) {
        old->ss_sp = NULL;
        old->ss_size = 0;
        old->ss_flags = SS_DISABLE;
    }
    return r;
}

// exit(): only for the case where a vfork child's exit() emptied the exit handler list (ct_start.c).
CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void exit(int status) {
    ct_start_exit_if_handler_lost();
    CT_RESOLVE(exit)(status);
    __builtin_unreachable();
}

// quick_exit(): only for the case where a vfork child's quick_exit emptied the at_quick_exit list
// (ct_start.c); otherwise our handler there closes the trace after the program's have run.
CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void quick_exit(int status) {
    ct_start_quick_exit_if_handler_lost();
    CT_RESOLVE(quick_exit)(status); // resolved at start, unless called before the runtime's constructor
    __builtin_unreachable();
}

// _exit and _Exit (one function in glibc, two names): the process ends without exit handlers, but
// its trace is closed (ct_trace_exit_quickly). glibc's own calls to _exit (from exit, quick_exit, in
// a failed posix_spawn child) are internal and not seen here (quick_exit runs our at_quick_exit
// handler instead: ct_start.c).
// Resolved at start (resolve_all): dlsym is no call for a signal handler or a vfork child.
CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void _exit(int status) {
    ct_start_quick_exit();
    if (real._exit) real._exit(status);
    for (;;) ct_syscall(SYS_exit_group, status);
}

CT_EXPORT CT_NO_INSTRUMENT __attribute__((noreturn)) void _Exit(int status) {
    ct_start_quick_exit();
    if (real._Exit) real._Exit(status);
    for (;;) ct_syscall(SYS_exit_group, status);
}

// The exec family: the image ends, and with it what the runtime had not written yet; the features
// write what they can first (the marks' queue: ct_marks.c). glibc's own calls between them
// (execvp to execve, system, posix_spawn) are internal and not seen here, so each is wrapped.
// The l-forms gather their arguments and go through the v-forms.
CT_EXPORT CT_NO_INSTRUMENT int execve(const char *path, char *const argv[], char *const envp[]) {
    ct_features_before_exec();
    return CT_RESOLVE(execve)(path, argv, envp);
}

CT_EXPORT CT_NO_INSTRUMENT int execv(const char *path, char *const argv[]) {
    ct_features_before_exec();
    return CT_RESOLVE(execv)(path, argv);
}

CT_EXPORT CT_NO_INSTRUMENT int execvp(const char *file, char *const argv[]) {
    ct_features_before_exec();
    return CT_RESOLVE(execvp)(file, argv);
}

CT_EXPORT CT_NO_INSTRUMENT int execvpe(const char *file, char *const argv[], char *const envp[]) {
    ct_features_before_exec();
    return CT_RESOLVE(execvpe)(file, argv, envp);
}

CT_EXPORT CT_NO_INSTRUMENT int fexecve(int fd, char *const argv[], char *const envp[]) {
    ct_features_before_exec();
    return CT_RESOLVE(fexecve)(fd, argv, envp);
}

CT_EXPORT CT_NO_INSTRUMENT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                                        int flags) {
    ct_features_before_exec();
    if (!CT_RESOLVE(execveat)) {  // a libc without the wrapper (glibc before 2.34)
        errno = ENOSYS;
        return -1;
    }
    return real.execveat(dirfd, path, argv, envp, flags);
}

// The arguments after `first` up to the NULL, into `argv` (with `first` and the NULL); with
// `envp`, the pointer after the NULL goes there (execle).
#define CT_GATHER_ARGS(first, argv, envp_out)                                              \
    size_t count = 1;                                                                      \
    va_list ap;                                                                            \
    va_start(ap, first);                                                                   \
    while (va_arg(ap, const char *)) count++;                                              \
    va_end(ap);                                                                            \
    const char *argv[count + 1];                                                           \
    argv[0] = first;                                                                       \
    va_start(ap, first);                                                                   \
    for (size_t i = 1; i <= count; i++) argv[i] = va_arg(ap, const char *);                \
    envp_out;                                                                              \
    va_end(ap)

CT_EXPORT CT_NO_INSTRUMENT int execl(const char *path, const char *arg, ...) {
    CT_GATHER_ARGS(arg, argv, (void)0);
    return execv(path, (char *const *)argv);
}

CT_EXPORT CT_NO_INSTRUMENT int execlp(const char *file, const char *arg, ...) {
    CT_GATHER_ARGS(arg, argv, (void)0);
    return execvp(file, (char *const *)argv);
}

CT_EXPORT CT_NO_INSTRUMENT int execle(const char *path, const char *arg, ...) {
    char *const *envp;
    CT_GATHER_ARGS(arg, argv, envp = va_arg(ap, char *const *));
    return execve(path, (char *const *)argv, envp);
}
