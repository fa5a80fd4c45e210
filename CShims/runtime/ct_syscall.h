// The runtime's own system calls. Never through `syscall`: the runtime wraps that one for the
// program (ct_wrappers.c: a program restricts itself with it), and the symbol is exported, so a
// call to it from here would run the wrapper and tie the clock, the ring and every other low file
// to the top of the runtime. glibc's own would need the loader to resolve it, and these calls are
// made from hooks, signal handlers and a vfork child.
#ifndef CT_SYSCALL_H
#define CT_SYSCALL_H

#include "ct_base.h"
#include <sys/syscall.h>

// As syscall(2): the system call `number` with up to six arguments (integers or pointers); its
// result, or -1 with errno set.
long ct_syscall(long number, ...);

#endif
