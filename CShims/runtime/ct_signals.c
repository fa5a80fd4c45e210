// After the handler: a fault (SIGSEGV, SIGBUS, SIGILL or SIGFPE with si_code > 0) simply happens
// again when the handler returns, with SIG_DFL in place, so the exit status, siginfo and core dump
// are the program's own; anything else (a signal sent by kill() or raise(), abort() among them, an
// int3 trap or a seccomp SIGSYS, after which the CPU has moved past the instruction) is raised again
// and delivered when the handler returns. The handler runs on an alternate stack (SA_ONSTACK; the
// runtime gives recording threads one), so a stack overflow is recorded too.
#include "ct_signals.h"
#include "ct_clock.h"
#include "ct_header.h"
#include "ct_runtime.h"
#include "ct_calls.h"
#include "ct_drain.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

static const int ct_fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };

CT_NO_INSTRUMENT static void on_fatal_signal(int sig, siginfo_t *info, void *context) {
    (void)context;
    int saved_errno = errno;
    struct ct_file_header *h = ct_header_get();
    // Not in a vfork child, whose memory is its parent's: the parent's trace is not its to flag.
    if (h && ct_self.state != CT_THREAD_VFORKED && getpid() == ct_rt.pid) {
        h->signal = (uint64_t)sig;
        atomic_fetch_or_explicit(&h->flags, CT_FILE_CRASHED, memory_order_release);
        uint64_t now = ct_now();
        ct_calls_close_open(&ct_self, now);
        ct_calls_close_main_from_elsewhere(now);
        // What the drain thread had not written yet (marks since its last pass) goes in too; a
        // drain thread held up by a lock this thread holds costs the crash a second at most.
        ct_drain_stop_at_crash(1000000000ull);
    }
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    bool fault = info->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE);
    if (!fault) raise(sig); // pending (the signal is blocked in its handler) until we return
    errno = saved_errno;
}

CT_NO_INSTRUMENT void ct_signals_give_way(void) {
    for (size_t i = 0; i < sizeof ct_fatal_signals / sizeof ct_fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(ct_fatal_signals[i], NULL, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) || old.sa_sigaction != on_fatal_signal) continue;
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigemptyset(&dfl.sa_mask);
        sigaction(ct_fatal_signals[i], &dfl, NULL);
    }
}

// Only where the program has no handler yet (a library constructor may have set one); a handler
// the program installs later simply replaces ours.
CT_NO_INSTRUMENT void ct_signals_install(void) {
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
