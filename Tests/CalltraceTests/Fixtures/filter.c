// CALLTRACE_FILTER (FilterTests): main -> work, then other; work sleeps in slow_part (20 ms) and
// calls leaf 1000 times; other calls leaf once and sleeps 5 ms in nap. "hot N" then calls leaf N
// times from hot_loop and prints the loop's time per call on stderr (leaf_ns). stdout: a checksum.
#include "sleep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i) { sink += i * 3 + 1; }
__attribute__((noinline)) void slow_part(void) { sleep_ms(20); }
__attribute__((noinline)) void nap(void) { sleep_ms(5); }

__attribute__((noinline)) void work(void) {
    slow_part();
    for (unsigned long i = 0; i < 1000; i++) leaf(i);
}

__attribute__((noinline)) void other(void) {
    leaf(7);
    nap();
}

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) void hot_loop(unsigned long n) {
    unsigned long long t0 = now_ns();
    for (unsigned long i = 0; i < n; i++) leaf(i);
    fprintf(stderr, "leaf_ns %.2f\n", (double)(now_ns() - t0) / (double)n);
}

int main(int argc, char **argv) {
    work();
    other();
    if (argc == 3 && strcmp(argv[1], "hot") == 0) {
        unsigned long n = strtoul(argv[2], NULL, 10);
        hot_loop(n / 4); // muting, if it is on, has its chance here
        hot_loop(n);
    }
    printf("checksum %lu\n", sink);
    return 0;
}
