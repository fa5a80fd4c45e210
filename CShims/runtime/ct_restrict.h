// Programs that restrict themselves (docs/design.md "Programs that restrict themselves"): seccomp
// strict mode, seccomp filters and prctl(PR_SET_TSC, PR_TSC_SIGSEGV). Called by the wrappers of
// prctl and syscall just before the program's call, while the thread may still do anything: the
// runtime decides what it can go on doing on the thread afterwards, does now whatever it will not
// be allowed to do later (the thread's open calls written, its stack and signal stack given back,
// a RESTRICTED record), and leaves the rest of the thread's life to the hooks' one state test.
#ifndef CT_RESTRICT_H
#define CT_RESTRICT_H

#include "ct_base.h"

// prctl(option, a2, a3, ...): PR_SET_SECCOMP and PR_SET_TSC matter.
void ct_restrict_before_prctl(int option, unsigned long a2, unsigned long a3);
// The seccomp system call: SECCOMP_SET_MODE_STRICT and SECCOMP_SET_MODE_FILTER matter.
void ct_restrict_before_seccomp(unsigned long op, unsigned long flags, const void *args);
// The calling thread restricted itself: its exit paths make no system call of ours.
bool ct_restrict_is_self(void);

#endif
