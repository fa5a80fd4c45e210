// signal_group (threshold 10 ms): main -> busy_step (12 ms), then signals its whole process group
// with the signal named by argv[1] (a number, default SIGTERM) and waits for it to arrive. The
// signal keeps its default action here, so the program dies of it, as it would untraced; anything
// else in the group (such as `calltrace record`) gets it too. Prints one line first.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) void busy_step(void) { sleep_ms(12); }

__attribute__((noinline)) void signal_group(int sig) {
    kill(0, sig);
    for (;;) pause();
}

int main(int argc, char **argv) {
    int sig = argc > 1 ? atoi(argv[1]) : SIGTERM;
    busy_step();
    printf("signalling group with %d\n", sig);
    fflush(stdout);
    signal_group(sig);
    return 0;
}
