// A thread's first call, in the process or in a fork child: the hooks' and the sleds' slow paths
// (ct_hooks.c, ct_sled_slow.c), and a thread about to install a seccomp filter (ct_restrict.c),
// which would forbid the trace's opening afterwards. Among the entry points: it starts the runtime
// if no constructor has yet, and opens the trace, so that nothing beneath them (the stack's rules,
// ct_stack.c) calls up into start-up or the trace's life cycle.
#ifndef CT_FIRST_CALL_H
#define CT_FIRST_CALL_H

#include "ct_thread.h"

// A hook or sled on a thread that is not ACTIVE: attaches a NEW thread (on entry only: an exit has
// no frame to pop) or resumes a FORKED one, opening the trace on the way. True when it goes on.
bool ct_first_call(struct ct_thread *t, bool entering);

#endif
