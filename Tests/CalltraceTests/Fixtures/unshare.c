// unshare(CLONE_NEWUSER) needs a single-threaded process; prctl(PR_SET_TSC, PR_TSC_SIGSEGV) makes
// rdtsc fault. argv[1] "unshare" or "tsc" (threshold 10 ms):
//   main -> before_step (12 ms), the call, after_step (15 ms), after_step_2 (12 ms)
// Prints what the call returned.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include "sleep.h"

__attribute__((noinline)) void before_step(void) { sleep_ms(12); }

__attribute__((noinline)) void after_step(void) { sleep_ms(15); }

__attribute__((noinline)) void after_step_2(void) { sleep_ms(12); }

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "unshare";
    before_step();
    int r = -1;
    if (strcmp(mode, "unshare") == 0) r = unshare(CLONE_NEWUSER);
#ifdef PR_SET_TSC
    if (strcmp(mode, "tsc") == 0) r = prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
#endif
    printf("%s: %s\n", mode, r == 0 ? "ok" : strerror(errno));
    fflush(stdout);
    after_step();
    after_step_2();
    printf("%s: done\n", mode);
    return 0;
}
