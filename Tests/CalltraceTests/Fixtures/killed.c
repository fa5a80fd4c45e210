// Three completed slow steps, then SIGKILL from inside a call: the steps must be in the trace.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) void step(int n) { sleep_ms(12); (void)n; }

__attribute__((noinline)) void die(void) {
    sleep_ms(12);
    kill(getpid(), SIGKILL);
}

int main(void) {
    for (int i = 0; i < 3; i++) step(i);
    die();
    return 0;
}
