// For the security tests (threshold 10 ms by default): main -> slow_step (12 ms) and 100 calls of
// quick(), recorded only under a lower threshold. Prints its real and effective user and group ids.
#include <stdio.h>
#include <unistd.h>
#include "sleep.h"

__attribute__((noinline)) int quick(int x) {
    __asm__ volatile("");
    return x + 1;
}

__attribute__((noinline)) void slow_step(void) { sleep_ms(12); }

int main(void) {
    int sum = 0;
    for (int i = 0; i < 100; i++) sum += quick(i);
    slow_step();
    printf("secure: uid %d euid %d gid %d egid %d sum %d\n", (int)getuid(), (int)geteuid(), (int)getgid(),
           (int)getegid(), sum);
    return 0;
}
