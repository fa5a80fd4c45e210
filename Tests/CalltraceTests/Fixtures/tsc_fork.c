// prctl(PR_SET_TSC, PR_TSC_SIGSEGV) makes rdtsc fault; then the process forks. Parent and child
// each sleep 100 ms in nap():
//   parent: main -> nap, nap;  child: main -> nap (then _exit)
// Prints the child's pid ("child <pid>") and "tsc_fork: child status 0" (the wait status).
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) void nap(void) { sleep_ms(100); }

int main(void) {
    prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
    nap();
    pid_t child = fork();
    if (child == 0) {
        nap();
        _exit(0);
    }
    int status = -1;
    waitpid(child, &status, 0);
    printf("child %d\ntsc_fork: child status %d\n", (int)child, status);
    return 0;
}
