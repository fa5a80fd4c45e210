// Overhead compensation: root calls with millions of tiny instrumented descendants, timed by the
// program itself (main is not instrumented), so a test can set the costs the trace reports against
// what the calls cost untraced. Built with -DUNTRACED, the functions carry no hooks at all.
//   overhead N       many_tiny(N), then sleepy_many(N) (a 30 ms sleep, then many_tiny(N))
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "sleep.h"

#ifdef UNTRACED
#define HOOKED __attribute__((no_instrument_function, noinline))
#else
#define HOOKED __attribute__((noinline))
#endif

static volatile unsigned long sink;

HOOKED void tiny(unsigned long i) { sink += i * 2654435761u; }
HOOKED void many_tiny(long n) { for (long i = 0; i < n; i++) tiny((unsigned long)i); }
HOOKED void sleepy_many(long n) { sleep_ms(30); many_tiny(n); }

__attribute__((no_instrument_function)) static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((no_instrument_function)) int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    double t0 = now_ms();
    many_tiny(n);
    double t1 = now_ms();
    sleepy_many(n);
    double t2 = now_ms();
    printf("many_tiny %.3f\nsleepy_many %.3f\n", t1 - t0, t2 - t1);
    return 0;
}
