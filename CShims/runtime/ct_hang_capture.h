// Capturing the main thread's native stack for the hang watchdog (ct_hang.c): a signal makes the
// main thread unwind itself with libunwind, in a handler that leaves the program's view unchanged.
// ct_hang_capture.c says how (and where it cannot: then no signal is sent).
#ifndef CT_HANG_CAPTURE_H
#define CT_HANG_CAPTURE_H

#include "ct_format.h"

// The capture signal: a realtime signal away from both ends of the range (programs take theirs
// from SIGRTMIN up for timers; some profilers take SIGRTMAX). Used only while the program has no
// handler for it.
#define CT_HANG_SIGNAL (SIGRTMAX - 4)

// Where the main thread is, from /proc/self/task/TID/syscall: running, or blocked in syscall `nr`
// (with its arguments, stack pointer and the pc after the syscall instruction).
struct ct_syscall_state {
    bool in_syscall;
    long nr;
    uint64_t args[6];
    uint64_t sp, pc;
};

// What a capture signal would do to the main thread's wait, and so whether one is sent.
enum ct_hang_resume {
    CT_RESUME_NONE,          // nothing to resume: running, or a wait the kernel restarts (SA_RESTART)
    CT_RESUME_RESTART_BLOCK, // a timed sleep: the handler resumes it with restart_syscall(2)
    CT_RESUME_REISSUE,       // a wait with no or an absolute timeout: the handler makes it run again
    CT_RESUME_IMPOSSIBLE,    // a signal would cut the wait short (EINTR): no signal is sent
};

// What the handler found: the hung call (innermost open frame) and the stack, innermost first.
// Every pc is an address to look up as it is: the first is where the thread was, the others lie
// inside the call instruction of each caller (a return address minus one).
struct ct_hang_stack {
    uint64_t tick;
    uint64_t fn, start, depth;
    uint32_t flags;          // CT_HANG_REC_*
    uint32_t n;
    uint64_t pcs[CT_HANG_MAX_PCS];
};

// Installs the handler where the signal is free. Returns the CT_HANG_* flags that apply
// (SIGNAL_OWNED).
uint32_t ct_hang_capture_setup(void);
// Loads libunwind on a thread of its own, once per process image (a hang is near; the drain
// thread's); ct_hang_capture_preparing() while that thread is at it.
void ct_hang_capture_prepare(void);
bool ct_hang_capture_preparing(void);
// Reads where thread `tid` is; false when /proc cannot tell.
bool ct_hang_read_syscall(uint64_t tid, struct ct_syscall_state *s);
enum ct_hang_resume ct_hang_resume_for(const struct ct_syscall_state *s);
// Checks that the signal is still ours and that thread `tid` does not block it: 0, or
// CT_HANG_SIGNAL_OWNED (the program handles, ignores or blocks it now), CT_HANG_UNAVAILABLE (no
// libunwind) or CT_HANG_PARTIAL (libunwind is still loading).
uint32_t ct_hang_capture_problem(uint64_t tid);
// Sends the capture signal to the main thread (`pid`, `tid`). False when it could not be sent.
bool ct_hang_capture_ask(int pid, uint64_t tid, const struct ct_syscall_state *s, enum ct_hang_resume resume);
// After an ask: 1 and the stack once the handler is done, 0 while it is not.
int ct_hang_capture_poll(struct ct_hang_stack *out);
// Gives up on an ask that got no answer: a late signal is then ignored. False when the handler is
// running right now (poll again).
bool ct_hang_capture_abandon(void);

#endif
