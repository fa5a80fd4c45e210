// system_loop (threshold 10 ms): main -> slow_step (12 ms), then runs system("true") argv[1] times
// (default 1000): each is an `sh` (and maybe a `true`) that runs no instrumented code. Prints one
// line with the count of commands that succeeded.
#include <stdio.h>
#include <stdlib.h>
#include "sleep.h"

__attribute__((noinline)) void slow_step(void) { sleep_ms(12); }

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 1000;
    slow_step();
    int ok = 0;
    for (int i = 0; i < count; i++) ok += system("true") == 0;
    printf("system_loop: %d of %d\n", ok, count);
    return 0;
}
