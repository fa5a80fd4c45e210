// A fork child that records a burst as soon as its trace opens (threshold 10 ms): main ->
// descend(N) ... descend(1), whose innermost sleeps 12 ms and forks. The child inherits N open
// calls that have all lasted the threshold, runs one instrumented call (its trace opens) and
// exits: its N calls are recorded as unfinished at once, far more than the blocks a trace at a
// threshold opens with (the rest come later, docs/design.md "Start-up"). The parent waits for it.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) void child_note(void) { printf("child %d\n", getpid()); }

__attribute__((noinline)) int descend(int n) {
    if (n > 1) {
        int r = descend(n - 1);
        __asm__ volatile("" : "+r"(r)); // a real recursion with clang too (no accumulator loop)
        return r + 1;
    }
    sleep_ms(12);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child_note();
        exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    int r = descend(n);
    printf("parent %d\n", getpid());
    return r == n - 1 ? 0 : 1;
}
