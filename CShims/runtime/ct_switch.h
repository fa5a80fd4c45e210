// Stack switches: swapcontext and setcontext (wrapped, ct_wrappers.c) take a thread to a coroutine's
// stack (makecontext) and back, and the stack rules (ct_stack.h) follow: while a coroutine runs, the
// thread is `away` (ct_thread.h), its stack bounds are the coroutine's, and the frames of its own
// context, beneath `away_floor`, are left alone. docs/design.md, "Coroutines".
#ifndef CT_SWITCH_H
#define CT_SWITCH_H

#include "ct_thread.h"

#include <ucontext.h>

// The context a swapcontext call leaves, kept on the wrapper's frame: when that call returns, this
// context runs again, whoever switched to it.
struct ct_switch_from {
    uint32_t away;
    uintptr_t lo, hi;
};

// swapcontext or setcontext from `caller_sp` to `ucp`: the thread goes to the coroutine whose stack
// `ucp` names (its frames and the thread's own kept apart from now on), or back to its own context
// (done once it runs there: ct_switch_resumed, ct_switch_home_again), or the switch is a jump within
// one stack (a context getcontext saved), noted as a longjmp is. *from: the context left.
void ct_switch_leave(uintptr_t caller_sp, const ucontext_t *ucp, struct ct_switch_from *from);

// The swapcontext call that left `from` returns: that context runs again. If the runtime still
// thinks another one runs (the switch here was one it did not see: a coroutine that returned, to its
// uc_link), it follows.
void ct_switch_resumed(const struct ct_switch_from *from);

// Away, an event on the thread's own stack, outside the coroutine's stack: true (and the thread is
// back home, the coroutine's frames closed) when it is the thread's own context that runs again,
// resumed by a switch the runtime did not see (a coroutine's uc_link to a context getcontext saved):
// `sp`, the stack pointer of the event's caller, lies at or above where that context left. A signal
// handler that runs in a switch's last instructions, still on the stack left, is beneath it.
bool ct_switch_home_again(struct ct_thread *t, uintptr_t sp);

// The same for an enter hook, which knows the function's own stack pointer and return address
// (`site`), not its caller's: the return slot is searched for on the thread's own stack first.
bool ct_switch_home_again_hook(struct ct_thread *t, uintptr_t callee_sp, uintptr_t site);

// Is the event at `sp` one to ask ct_switch_home_again about? Inline: the hooks' slow paths ask.
CT_NO_INSTRUMENT static inline bool ct_switch_maybe_home(const struct ct_thread *t, uintptr_t sp) {
    return CT_UNLIKELY(t->away) && sp >= t->home_lo && sp < t->home_hi;
}

#endif
